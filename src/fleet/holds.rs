//! Which sessions hold which toolbox copies open (docs/reference.md §8): a
//! copy closes when no session holds it. Kept by the fleet, asked by its
//! workers and by a session building its native tools. No IO, no threads.

use crate::lock;
use crate::wire::SessionId;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

/// Toolbox copies (`Slot::id`) and the sessions that hold each.
#[derive(Default)]
pub(crate) struct Holds(Mutex<HashMap<u64, HashSet<SessionId>>>);

impl Holds {
    /// Session `session` holds copy `slot` open.
    pub(crate) fn hold(&self, slot: u64, session: SessionId) {
        lock(&self.0).entry(slot).or_default().insert(session);
    }

    /// Releases `session`'s hold on `slot`: whether it held it.
    pub(crate) fn release(&self, slot: u64, session: SessionId) -> bool {
        let mut all = lock(&self.0);
        let Some(holders) = all.get_mut(&slot) else {
            return false;
        };
        let held = holders.remove(&session);
        if holders.is_empty() {
            all.remove(&slot);
        }
        held
    }

    /// How many sessions hold `slot`.
    pub(crate) fn holders(&self, slot: u64) -> usize {
        lock(&self.0).get(&slot).map_or(0, HashSet::len)
    }

    /// The sessions that hold `slot`.
    pub(crate) fn sessions(&self, slot: u64) -> Vec<SessionId> {
        let mut sessions: Vec<SessionId> = lock(&self.0)
            .get(&slot)
            .map(|s| s.iter().copied().collect())
            .unwrap_or_default();
        sessions.sort();
        sessions
    }

    /// The copies `session` holds.
    pub(crate) fn held_by(&self, session: SessionId) -> HashSet<u64> {
        lock(&self.0)
            .iter()
            .filter(|(_, holders)| holders.contains(&session))
            .map(|(slot, _)| *slot)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::SessionIds;

    #[test]
    fn a_copy_is_held_until_its_last_session_releases_it() {
        let holds = Holds::default();
        let ids = SessionIds::default();
        let (a, b) = (ids.next(), ids.next());
        holds.hold(1, a);
        holds.hold(1, b);
        holds.hold(2, a);
        assert_eq!(holds.holders(1), 2);
        assert_eq!(holds.held_by(a), HashSet::from([1, 2]));
        assert!(holds.release(1, a));
        assert!(!holds.release(1, a), "released once");
        assert_eq!(holds.sessions(1), [b]);
        assert!(holds.release(1, b));
        assert_eq!(holds.holders(1), 0);
        assert!(lock(&holds.0).get(&1).is_none(), "forgotten");
    }
}
