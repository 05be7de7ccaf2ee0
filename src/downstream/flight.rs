//! The requests in flight to one server behind the one lock that its handle
//! (any thread: registers, cancels, retires) and its pump (answers, expiries)
//! share, with the deadline the pump sleeps towards. Each method is one
//! short hold of the lock; nothing here writes, sends or waits: the caller
//! does, once the lock is released. The table itself is `pending.rs`.

use super::outcome::Idle;
use super::pending::{Call, Entry, Pending, Waiter};
use crate::lock;
use crate::protocol::jsonrpc::RequestId;
use crate::wire::outbox::Outbox;
use crate::wire::SessionId;
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Default)]
pub(super) struct Flight(Mutex<Table>);

#[derive(Default)]
struct Table {
    pending: Pending,
    /// The deadline the pump sleeps towards, if any.
    armed: Option<Instant>,
}

/// What a registration did: the child's id for the entry, and whether the
/// pump must be woken (the entry's deadline is earlier than the one armed).
pub(super) struct Registered {
    pub id: i64,
    pub wake: bool,
}

impl Flight {
    /// Registers `entry`, due at `deadline` if it has one; refused with the
    /// reason once the table is closed or retiring.
    pub(super) fn register(
        &self,
        entry: Entry,
        deadline: Option<Instant>,
    ) -> Result<Registered, String> {
        let mut table = lock(&self.0);
        let id = table.pending.register(entry)?;
        let wake = match deadline {
            Some(at) if table.armed.is_none_or(|armed| at < armed) => {
                table.armed = Some(at);
                true
            }
            _ => false,
        };
        Ok(Registered { id, wake })
    }

    /// Takes entry `id` (answered by the child); with whether that drained a
    /// retiring table (then the server stops).
    pub(super) fn complete(&self, id: i64) -> (Option<Entry>, bool) {
        let mut table = lock(&self.0);
        (table.pending.complete(id), table.pending.take_drained())
    }

    /// Takes entry `id` back from its registrar, who answers it (or leaves
    /// it unanswered); `None` when someone else took it first.
    pub(super) fn take_back(&self, id: i64) -> Option<Entry> {
        lock(&self.0).pending.complete(id)
    }

    /// The child id of `session`'s call `upstream`, now forgotten; with
    /// whether that drained a retiring table.
    pub(super) fn cancel(&self, upstream: &RequestId, session: SessionId) -> (Option<i64>, bool) {
        let mut table = lock(&self.0);
        (
            table.pending.cancel(upstream, session),
            table.pending.take_drained(),
        )
    }

    /// Takes every call of `session`; with whether that drained a retiring
    /// table.
    pub(super) fn take_calls_of(&self, session: SessionId) -> (Vec<(i64, Call)>, bool) {
        let mut table = lock(&self.0);
        (
            table.pending.take_calls_of(session),
            table.pending.take_drained(),
        )
    }

    /// Progress for call `id`: its deadline restarts; the host's token and
    /// session, if the host gave one.
    pub(super) fn progress(&self, id: i64) -> Option<(Value, Arc<Outbox>)> {
        lock(&self.0).pending.progress(id, Instant::now())
    }

    /// The deadline the pump sleeps towards, recorded so that a registration
    /// wakes it only for an earlier one. With nothing in flight it is
    /// `quiet` away: a call made meanwhile ends no sooner, so calls never
    /// need to wake the pump. `None` once the table is closed.
    pub(super) fn arm(&self, now: Instant, quiet: Duration) -> Option<Instant> {
        let mut table = lock(&self.0);
        if table.pending.closed().is_some() {
            table.armed = None;
        } else if table.armed.is_none_or(|at| at <= now) {
            // Kept while it is ahead: answers and progress only move the
            // earliest deadline later, and an earlier entry lowers it itself.
            // Waking at a deadline that moved is harmless (this recomputes
            // it), and saves a walk over the calls in flight at every turn.
            let next = table.pending.next_deadline();
            table.armed = Some(next.unwrap_or(now + quiet));
        }
        table.armed
    }

    /// Takes the calls and waiting requests past their deadline at `now`;
    /// with whether that drained a retiring table.
    pub(super) fn take_expired(&self, now: Instant) -> (Vec<(i64, Call)>, Vec<Waiter>, bool) {
        let mut table = lock(&self.0);
        let calls = table.pending.take_expired(now);
        let waits = table.pending.take_expired_waits(now);
        (calls, waits, table.pending.take_drained())
    }

    /// Closes the table with `why` and takes every entry, each to be answered
    /// once by the caller; `None` when it was closed already.
    pub(super) fn close(&self, why: &str) -> Option<Vec<Entry>> {
        let mut table = lock(&self.0);
        if table.pending.closed().is_some() {
            return None;
        }
        Some(table.pending.fail_all(why))
    }

    /// Whether the table is closed (the server is gone or being stopped).
    pub(super) fn is_closed(&self) -> bool {
        lock(&self.0).pending.closed().is_some()
    }

    /// Why new entries are refused (closed or retiring), if they are.
    pub(super) fn refusing(&self) -> Option<String> {
        lock(&self.0).pending.refusing().map(str::to_string)
    }

    /// Since when no call has been in flight, while calls are taken.
    pub(super) fn idle_since(&self) -> Idle {
        let table = lock(&self.0);
        if table.pending.refusing().is_some() {
            return Idle::NotServing;
        }
        table.pending.quiet_since().map_or(Idle::Busy, Idle::Since)
    }

    /// Retires the table with `why` if no call has been in flight for
    /// `timeout`, atomically with the check; whether it did. Whoever retires
    /// it this way stops the server (the drain is taken here).
    pub(super) fn retire_if_idle(&self, timeout: Duration, why: &str) -> bool {
        let mut table = lock(&self.0);
        let idle = table.pending.refusing().is_none()
            && table
                .pending
                .quiet_since()
                .is_some_and(|since| since.elapsed() >= timeout);
        if idle {
            table.pending.retire(why);
            table.pending.take_drained();
        }
        idle
    }

    /// Refuses new entries from now on; whether nothing is left in flight
    /// (then the server stops).
    pub(super) fn retire(&self, why: &str) -> bool {
        let mut table = lock(&self.0);
        table.pending.retire(why);
        table.pending.take_drained()
    }

    /// The earliest deadline in flight (the unit tests, which run on Unix).
    #[cfg(all(test, unix))]
    pub(super) fn next_deadline(&self) -> Option<Instant> {
        lock(&self.0).pending.next_deadline()
    }
}
