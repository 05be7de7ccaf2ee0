//! The fleet loop's one timer heap: deadlines with a payload, the earliest
//! first, and among equal deadlines the one scheduled first.
//!
//! No IO and no clock here: the caller says what time it is, so the heap is
//! tested without sleeping. A timer is never cancelled: its payload says what
//! to look at when it fires, and the loop checks then whether it still
//! applies (a server that stopped, a burst that went on).

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::time::Instant;

/// Timers of payload `T`.
pub(crate) struct Timers<T> {
    heap: BinaryHeap<Reverse<Entry<T>>>,
    /// Increases with each timer: equal deadlines fire in scheduling order.
    seq: u64,
}

struct Entry<T> {
    at: Instant,
    seq: u64,
    timer: T,
}

// Ordered by deadline, then by scheduling order; the payload plays no part.
impl<T> Ord for Entry<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> PartialEq for Entry<T> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl<T> Eq for Entry<T> {}

impl<T> Default for Timers<T> {
    fn default() -> Self {
        Timers {
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }
}

impl<T> Timers<T> {
    /// `timer` fires at `at`.
    pub(crate) fn schedule(&mut self, at: Instant, timer: T) {
        self.seq += 1;
        self.heap.push(Reverse(Entry {
            at,
            seq: self.seq,
            timer,
        }));
    }

    /// The earliest deadline, if any timer is set.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse(entry)| entry.at)
    }

    /// The earliest timer whose deadline is at or before `now`.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<T> {
        if self.next_deadline()? > now {
            return None;
        }
        self.heap.pop().map(|Reverse(entry)| entry.timer)
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn fires_the_earliest_first_and_nothing_before_its_time() {
        let t0 = Instant::now();
        let mut timers = Timers::default();
        assert_eq!(timers.next_deadline(), None);
        assert_eq!(timers.pop_due(t0 + ms(1000)), None::<&str>);
        timers.schedule(t0 + ms(30), "c");
        timers.schedule(t0 + ms(10), "a");
        timers.schedule(t0 + ms(20), "b");
        assert_eq!(timers.len(), 3);
        assert_eq!(timers.next_deadline(), Some(t0 + ms(10)));
        assert_eq!(timers.pop_due(t0 + ms(9)), None);
        assert_eq!(timers.pop_due(t0 + ms(10)), Some("a"));
        assert_eq!(timers.pop_due(t0 + ms(15)), None);
        assert_eq!(timers.pop_due(t0 + ms(100)), Some("b"));
        assert_eq!(timers.pop_due(t0 + ms(100)), Some("c"));
        assert_eq!(timers.pop_due(t0 + ms(100)), None);
        assert!(timers.is_empty());
    }

    #[test]
    fn equal_deadlines_fire_in_scheduling_order() {
        let at = Instant::now();
        let mut timers = Timers::default();
        for i in 0..100 {
            timers.schedule(at, i);
        }
        let fired: Vec<i32> = std::iter::from_fn(|| timers.pop_due(at)).collect();
        assert_eq!(fired, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn a_timer_scheduled_in_the_past_is_due_at_once() {
        let now = Instant::now();
        let mut timers = Timers::default();
        timers.schedule(now + ms(50), 2);
        timers.schedule(now - ms(50), 1);
        assert_eq!(timers.next_deadline(), Some(now - ms(50)));
        assert_eq!(timers.pop_due(now), Some(1));
        assert_eq!(timers.pop_due(now), None);
    }

    #[test]
    fn payloads_need_no_order() {
        struct Opaque;
        let now = Instant::now();
        let mut timers = Timers::default();
        timers.schedule(now, Opaque);
        assert!(timers.pop_due(now).is_some());
    }
}
