//! Requests awaiting their one answer (ARCHITECTURE.md, rule 7), keyed by
//! the numbers this table gives them: 1, 2, 3, ..., never given twice, so a
//! late or repeated answer finds nothing. An entry leaves exactly once: it
//! is completed (answered), cancelled (the asker wants no answer), taken
//! because it ran out, or taken at a stop, when the table closes with a
//! reason and refuses every later registration, so nothing registered after
//! the stop waits for an answer that will never come.
//!
//! No IO, no threads, no lock, no clock: what an entry is (a host's request
//! waiting in the fleet, a request in flight to a server), what answering it
//! writes, and when it runs out are the caller's. A table that is never
//! closed has the reason type `Infallible`: its registrations cannot fail.
//! Entries come out in the order they were registered wherever several do.
//! The shape is lsp-server's `ReqQueue` (register, complete, cancel).

use std::collections::HashMap;
use std::convert::Infallible;

/// The number a table gives an entry; a downstream request's JSON-RPC id.
pub type Key = i64;

/// The requests awaiting their answer, and why the table closed, once it did.
pub struct Awaiting<T, R = Infallible> {
    /// The last key given (the first is 1).
    last: Key,
    entries: HashMap<Key, T>,
    closed: Option<R>,
}

impl<T, R> Default for Awaiting<T, R> {
    fn default() -> Awaiting<T, R> {
        Awaiting {
            last: 0,
            entries: HashMap::new(),
            closed: None,
        }
    }
}

impl<T, R: Clone> Awaiting<T, R> {
    /// Registers `entry` under a fresh key; refused, with why the table
    /// closed, once it did (the entry is dropped).
    pub fn register(&mut self, entry: T) -> Result<Key, R> {
        if let Some(why) = &self.closed {
            return Err(why.clone());
        }
        self.last += 1;
        self.entries.insert(self.last, entry);
        Ok(self.last)
    }
}

impl<T, R> Awaiting<T, R> {
    /// Takes the entry `key` names, to be answered: `None` if it already
    /// left (answered, cancelled, taken) or never was.
    pub fn complete(&mut self, key: Key) -> Option<T> {
        self.entries.remove(&key)
    }

    /// The entry `key` names while it waits, to be updated in place (a part
    /// of its answer came, its deadline moved); it stays.
    pub fn get_mut(&mut self, key: Key) -> Option<&mut T> {
        self.entries.get_mut(&key)
    }

    /// Takes the first-registered entry `pick` picks, which gets no answer
    /// from the table's owner (its asker withdrew it): with its key.
    pub fn cancel(&mut self, pick: impl Fn(&T) -> bool) -> Option<(Key, T)> {
        let key = self
            .entries
            .iter()
            .filter(|(_, entry)| pick(entry))
            .map(|(key, _)| *key)
            .min()?;
        self.entries.remove(&key).map(|entry| (key, entry))
    }

    /// Takes every entry `pick` picks (those that ran out, those of an asker
    /// that left), in the order they were registered, each to be answered
    /// once by the caller.
    pub fn take_where(&mut self, pick: impl Fn(&T) -> bool) -> Vec<(Key, T)> {
        let mut keys: Vec<Key> = self
            .entries
            .iter()
            .filter(|(_, entry)| pick(entry))
            .map(|(key, _)| *key)
            .collect();
        keys.sort_unstable();
        keys.into_iter()
            .filter_map(|key| self.entries.remove(&key).map(|entry| (key, entry)))
            .collect()
    }

    /// The stop: closes the table with `why` (the first reason stays) and
    /// takes every entry, in the order they were registered, each to be
    /// answered once by the caller. Later calls take nothing.
    pub fn close(&mut self, why: R) -> Vec<(Key, T)> {
        self.closed.get_or_insert(why);
        let mut all: Vec<(Key, T)> = self.entries.drain().collect();
        all.sort_unstable_by_key(|(key, _)| *key);
        all
    }

    /// Why the table closed, if it did.
    pub fn closed(&self) -> Option<&R> {
        self.closed.as_ref()
    }

    /// The entries waiting, in no order.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.entries.values()
    }

    /// How many entries wait.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_fresh_and_an_entry_completes_once() {
        let mut t: Awaiting<&str> = Awaiting::default();
        let Ok(a) = t.register("a");
        let Ok(b) = t.register("b");
        assert_eq!((a, b), (1, 2), "numbered from 1");
        assert_eq!(t.complete(b), Some("b"));
        assert_eq!(t.complete(b), None, "a second answer finds nothing");
        let Ok(c) = t.register("c");
        assert_eq!(c, 3, "a key is never given twice");
        assert_eq!(t.complete(99), None, "nor is an unknown one answered");
        assert_eq!(t.len(), 2);
    }

    #[test]
    fn an_entry_updated_in_place_stays_until_completed() {
        let mut t: Awaiting<Vec<u8>> = Awaiting::default();
        let Ok(k) = t.register(Vec::new());
        if let Some(parts) = t.get_mut(k) {
            parts.push(1);
        }
        assert_eq!(t.len(), 1);
        assert_eq!(t.complete(k), Some(vec![1]));
        assert!(t.get_mut(k).is_none());
        assert!(t.is_empty());
    }

    #[test]
    fn cancel_takes_the_first_registered_match_only() {
        let mut t: Awaiting<&str> = Awaiting::default();
        for entry in ["x", "y", "x"] {
            let Ok(_) = t.register(entry);
        }
        assert_eq!(t.cancel(|e| *e == "z"), None);
        assert_eq!(t.cancel(|e| *e == "x"), Some((1, "x")));
        assert_eq!(t.complete(1), None, "a cancelled entry gets no answer");
        assert_eq!(t.cancel(|e| *e == "x"), Some((3, "x")));
        assert_eq!(t.values().collect::<Vec<_>>(), [&"y"]);
    }

    #[test]
    fn take_where_takes_in_registration_order() {
        let mut t: Awaiting<u32> = Awaiting::default();
        for n in 0..50 {
            let Ok(_) = t.register(n);
        }
        let even: Vec<Key> = t.take_where(|n| n % 2 == 0).iter().map(|e| e.0).collect();
        assert_eq!(even, (1..=50).step_by(2).collect::<Vec<Key>>());
        assert!(t.take_where(|n| n % 2 == 0).is_empty(), "taken once");
        assert_eq!(t.len(), 25);
    }

    #[test]
    fn a_closed_table_refuses_and_gives_everything_once() {
        let mut t: Awaiting<u32, String> = Awaiting::default();
        t.register(1).unwrap();
        t.register(2).unwrap();
        t.register(3).unwrap();
        t.complete(2);
        let all: Vec<(Key, u32)> = t.close("crashed".into());
        assert_eq!(all, [(1, 1), (3, 3)]);
        assert!(
            t.close("stopped".into()).is_empty(),
            "later stops take nothing"
        );
        assert_eq!(t.closed().map(String::as_str), Some("crashed"));
        assert_eq!(t.register(4), Err("crashed".to_string()));
        assert!(t.is_empty(), "nothing registered after the stop");
    }

    /// Rule 7 over many mixed runs: each registered request comes out of the
    /// table exactly once (answered, cancelled, taken or at the stop), a
    /// refused one never enters, and after the stop nothing is left.
    #[test]
    fn every_request_leaves_exactly_once() {
        // A small deterministic generator: the same runs every time.
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _run in 0..200 {
            let mut t: Awaiting<Key, &str> = Awaiting::default();
            let mut registered: Vec<Key> = Vec::new();
            let mut left: Vec<Key> = Vec::new();
            let steps = 1 + next(60);
            for step in 0..steps {
                match next(6) {
                    0 | 1 => match t.register(0) {
                        Ok(key) => {
                            registered.push(key);
                            if let Some(entry) = t.get_mut(key) {
                                *entry = key;
                            }
                        }
                        Err(why) => assert_eq!(why, "stop"),
                    },
                    2 => {
                        let key = 1 + next(registered.len() as u64 + 2) as Key;
                        left.extend(t.complete(key));
                    }
                    3 => {
                        let odd = step % 2 == 1;
                        left.extend(t.cancel(|k| (k % 2 == 1) == odd).map(|e| e.1));
                    }
                    4 => left.extend(t.take_where(|k| k % 3 == 0).into_iter().map(|e| e.1)),
                    _ if next(4) == 0 => left.extend(t.close("stop").into_iter().map(|e| e.1)),
                    _ => {}
                }
            }
            left.extend(t.close("stop").into_iter().map(|e| e.1));
            left.sort_unstable();
            assert_eq!(left, registered, "each exactly once");
            assert!(t.is_empty());
        }
    }
}
