//! The requests in flight to one server, keyed by the ids the workbench gives
//! them (1, 2, 3, ...: the keys of `protocol::awaiting`, whose table this
//! wraps), so the host's ids never reach a server; what each entry is, its
//! deadline, and what this connection adds to the table: retiring, and
//! counting the forwarded calls.
//!
//! No IO and no threads here (`flight.rs` puts it behind the one lock the
//! handle and the pump share): the handle registers, cancels and retires
//! entries, the pump completes them and takes the expired ones; what to write
//! or send for each is the caller's business. Once the table is closed (the child is
//! gone or being stopped) it refuses new entries, so nothing registered after
//! `fail_all` can be left without an answer. A retiring table (the server
//! falls asleep, or its definition changed) refuses new entries too, but the
//! ones in flight are still answered. The table also knows since when no
//! forwarded call has been in flight: the idle timer's measure.

use crate::protocol::awaiting::Awaiting;
use crate::protocol::jsonrpc::RequestId;
use crate::wire::outbox::Outbox;
use crate::wire::SessionId;
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::outcome::{Failure, Reply};

/// What waits for a child's answer.
pub(super) enum Entry {
    /// A caller blocked on a channel (handshake, `tools/list`).
    Wait(Waiter),
    /// A `tools/call` forwarded for the host: its answer goes straight upstream.
    Call(Call),
    /// A request whose answer nobody needs (`logging/setLevel`).
    Discard,
}

/// A caller blocked on a request until its deadline, which the pump keeps:
/// it answers a request that ran out with the child's last stderr lines.
pub(super) struct Waiter {
    pub tx: crossbeam_channel::Sender<Result<Reply, Failure>>,
    pub deadline: Instant,
}

/// A forwarded call's bookkeeping.
pub(super) struct Call {
    pub upstream_id: RequestId,
    /// The session that sent it.
    pub session: SessionId,
    /// Where its answer and progress go.
    pub reply: Arc<Outbox>,
    pub tool: String,
    /// This call's `callTimeoutMs` and `maxCallTimeoutMs`: the server's,
    /// or the time limit the call was forwarded with.
    pub timeout: Duration,
    pub max: Duration,
    /// Restarted by each progress notification (by `timeout`), never past `cap`.
    pub deadline: Instant,
    /// The call's start plus `maxCallTimeoutMs`: progress cannot defer it.
    pub cap: Instant,
    /// The host's progress token; the child gets this call's own id instead.
    pub progress_token: Option<Value>,
}

impl Call {
    pub(super) fn new(
        upstream_id: RequestId,
        (session, reply): (SessionId, Arc<Outbox>),
        tool: &str,
        progress_token: Option<Value>,
        timeout: Duration,
        max: Duration,
    ) -> Call {
        let now = Instant::now();
        let max = max.max(timeout);
        let cap = now + max;
        Call {
            upstream_id,
            session,
            reply,
            tool: tool.to_string(),
            timeout,
            max,
            deadline: (now + timeout).min(cap),
            cap,
            progress_token,
        }
    }

    /// Whether the call ran into its cap rather than a quiet period.
    pub(super) fn hit_cap(&self) -> bool {
        self.deadline >= self.cap
    }
}

pub(super) struct Pending {
    /// The entries, keyed by their child ids; closed with why.
    table: Awaiting<Entry, String>,
    /// Why the table refuses new entries while the ones in flight finish.
    retiring: Option<String>,
    /// Whoever retired the table was told that nothing is left in flight.
    drained: bool,
    /// Forwarded calls in flight.
    calls: usize,
    /// When the last forwarded call left the table (or the table was made).
    quiet_since: Instant,
}

impl Default for Pending {
    fn default() -> Pending {
        Pending {
            table: Awaiting::default(),
            retiring: None,
            drained: false,
            calls: 0,
            quiet_since: Instant::now(),
        }
    }
}

impl Pending {
    /// Registers `entry` under a new id; refused with the reason once closed
    /// or retiring.
    pub(super) fn register(&mut self, entry: Entry) -> Result<i64, String> {
        if let Some(why) = self.refusing() {
            return Err(why.to_string());
        }
        let call = matches!(entry, Entry::Call(_));
        let id = self.table.register(entry)?;
        self.calls += usize::from(call);
        Ok(id)
    }

    /// Takes the entry answered by the child's response `id`.
    pub(super) fn complete(&mut self, id: i64) -> Option<Entry> {
        let entry = self.table.complete(id)?;
        self.left(&entry);
        Some(entry)
    }

    /// Counts an entry that left the table.
    fn left(&mut self, entry: &Entry) {
        if let Entry::Call(_) = entry {
            self.calls -= 1;
            if self.calls == 0 {
                self.quiet_since = Instant::now();
            }
        }
    }

    /// Forgets the forwarded call that `session` knows as `upstream`;
    /// its child id.
    pub(super) fn cancel(&mut self, upstream: &RequestId, session: SessionId) -> Option<i64> {
        let (id, entry) = self.table.cancel(|e| match e {
            Entry::Call(call) => call.upstream_id == *upstream && call.session == session,
            _ => false,
        })?;
        self.left(&entry);
        Some(id)
    }

    /// Takes every forwarded call of `session`, with its child id.
    pub(super) fn take_calls_of(&mut self, session: SessionId) -> Vec<(i64, Call)> {
        self.take_calls(|call| call.session == session)
    }

    /// A progress notification for call `id`: restarts its deadline (never
    /// past its cap) and returns the host's token, if the host gave one, with
    /// the session it goes to.
    pub(super) fn progress(&mut self, id: i64, now: Instant) -> Option<(Value, Arc<Outbox>)> {
        match self.table.get_mut(id) {
            Some(Entry::Call(call)) => {
                call.deadline = (now + call.timeout).min(call.cap);
                let token = call.progress_token.clone()?;
                Some((token, Arc::clone(&call.reply)))
            }
            _ => None,
        }
    }

    /// Removes and returns the calls whose deadline is at or before `now`.
    pub(super) fn take_expired(&mut self, now: Instant) -> Vec<(i64, Call)> {
        self.take_calls(|call| call.deadline <= now)
    }

    /// Removes and returns the waiting requests whose deadline is at or
    /// before `now`.
    pub(super) fn take_expired_waits(&mut self, now: Instant) -> Vec<Waiter> {
        let taken = self
            .table
            .take_where(|e| matches!(e, Entry::Wait(wait) if wait.deadline <= now));
        taken
            .into_iter()
            .filter_map(|(_, e)| match e {
                Entry::Wait(wait) => Some(wait),
                _ => None,
            })
            .collect()
    }

    /// Removes and returns the forwarded calls `chosen` picks, with their ids.
    fn take_calls(&mut self, chosen: impl Fn(&Call) -> bool) -> Vec<(i64, Call)> {
        let taken = self
            .table
            .take_where(|e| matches!(e, Entry::Call(call) if chosen(call)));
        let calls: Vec<(i64, Call)> = taken
            .into_iter()
            .filter_map(|(id, e)| match e {
                Entry::Call(call) => Some((id, call)),
                _ => None,
            })
            .collect();
        if !calls.is_empty() {
            self.calls -= calls.len();
            if self.calls == 0 {
                self.quiet_since = Instant::now();
            }
        }
        calls
    }

    /// The earliest deadline of a forwarded call or a waiting request.
    pub(super) fn next_deadline(&self) -> Option<Instant> {
        self.table
            .values()
            .filter_map(|e| match e {
                Entry::Call(call) => Some(call.deadline),
                Entry::Wait(wait) => Some(wait.deadline),
                Entry::Discard => None,
            })
            .min()
    }

    /// Closes the table with `why` (the first reason wins) and returns every
    /// entry, each to be answered once by the caller. Later calls return nothing.
    pub(super) fn fail_all(&mut self, why: &str) -> Vec<Entry> {
        if self.calls > 0 {
            self.calls = 0;
            self.quiet_since = Instant::now();
        }
        let all = self.table.close(why.to_string());
        all.into_iter().map(|(_, e)| e).collect()
    }

    /// Why the table is closed, if it is.
    pub(super) fn closed(&self) -> Option<&str> {
        self.table.closed().map(String::as_str)
    }

    /// Why the table refuses new entries (closed or retiring), if it does.
    pub(super) fn refusing(&self) -> Option<&str> {
        self.closed().or(self.retiring.as_deref())
    }

    /// Refuses new entries from now on, with `why`; the ones in flight stay.
    pub(super) fn retire(&mut self, why: &str) {
        self.retiring.get_or_insert_with(|| why.to_string());
    }

    /// Since when no forwarded call has been in flight; `None` while one is.
    pub(super) fn quiet_since(&self) -> Option<Instant> {
        (self.calls == 0).then_some(self.quiet_since)
    }

    /// True once, when the table is retiring and no call is left in flight:
    /// then the connection can stop.
    pub(super) fn take_drained(&mut self) -> bool {
        let drained =
            self.retiring.is_some() && self.closed().is_none() && self.calls == 0 && !self.drained;
        self.drained |= drained;
        drained
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::SessionIds;

    fn session() -> (SessionId, Arc<Outbox>) {
        session_of(&SessionIds::default())
    }

    /// A session numbered by `ids`: two of one `ids` differ.
    fn session_of(ids: &SessionIds) -> (SessionId, Arc<Outbox>) {
        (ids.next(), Arc::new(Outbox::new(Box::new(std::io::sink()))))
    }

    fn call(upstream: i64, timeout_ms: u64, max_ms: u64) -> Entry {
        call_of(&session(), upstream, timeout_ms, max_ms)
    }

    fn call_of(
        (session, reply): &(SessionId, Arc<Outbox>),
        upstream: i64,
        timeout_ms: u64,
        max_ms: u64,
    ) -> Entry {
        Entry::Call(Call::new(
            RequestId::Int(upstream),
            (*session, Arc::clone(reply)),
            "t",
            Some(Value::from("tok")),
            Duration::from_millis(timeout_ms),
            Duration::from_millis(max_ms),
        ))
    }

    #[test]
    fn ids_are_fresh_and_entries_complete_once() {
        let mut p = Pending::default();
        let a = p.register(Entry::Discard).unwrap();
        let b = p.register(call(7, 1000, 1000)).unwrap();
        assert_ne!(a, b);
        assert!(matches!(p.complete(b), Some(Entry::Call(_))));
        assert!(p.complete(b).is_none(), "a second answer finds nothing");
        assert!(matches!(p.complete(a), Some(Entry::Discard)));
    }

    #[test]
    fn cancel_finds_a_call_by_the_sessions_id() {
        let ids = SessionIds::default();
        let (one, other) = (session_of(&ids), session_of(&ids));
        let mut p = Pending::default();
        let id = p.register(call_of(&one, 7, 1000, 1000)).unwrap();
        let others = p.register(call_of(&other, 7, 1000, 1000)).unwrap();
        assert_eq!(p.cancel(&RequestId::Int(8), one.0), None);
        assert_eq!(p.cancel(&RequestId::Int(7), one.0), Some(id));
        assert!(p.complete(id).is_none(), "a cancelled call gets no answer");
        let left: Vec<i64> = p.take_calls_of(other.0).iter().map(|(id, _)| *id).collect();
        assert_eq!(
            left,
            [others],
            "another session's call with the same id stays"
        );
    }

    #[test]
    fn expiry_and_the_cap_on_progress() {
        let mut p = Pending::default();
        let quick = p.register(call(1, 0, 0)).unwrap();
        let slow = p.register(call(2, 60_000, 60_000)).unwrap();
        let capped = p.register(call(3, 10, 20)).unwrap();
        // Progress restarts the deadline, but never past the cap.
        let later = Instant::now() + Duration::from_millis(15);
        assert_eq!(
            p.progress(capped, later).map(|(token, _)| token),
            Some(Value::from("tok"))
        );
        let expired = p.take_expired(Instant::now() + Duration::from_millis(50));
        let mut ids: Vec<i64> = expired.iter().map(|(id, _)| *id).collect();
        ids.sort();
        assert_eq!(ids, [quick, capped]);
        let capped_call = &expired.iter().find(|(id, _)| *id == capped).unwrap().1;
        assert!(capped_call.hit_cap());
        assert!(p.next_deadline().is_some());
        assert!(p.complete(slow).is_some());
        assert_eq!(p.next_deadline(), None);
    }

    #[test]
    fn the_quiet_time_starts_when_the_last_call_leaves() {
        let mut p = Pending::default();
        let made = p.quiet_since().unwrap();
        let wait = p.register(Entry::Discard).unwrap();
        assert_eq!(p.quiet_since(), Some(made), "only calls count");
        let a = p.register(call(1, 1000, 1000)).unwrap();
        p.register(call(2, 0, 0)).unwrap();
        assert_eq!(p.quiet_since(), None);
        p.complete(a);
        assert_eq!(p.quiet_since(), None, "one is still in flight");
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(
            p.take_expired(Instant::now() + Duration::from_millis(5))
                .len(),
            1
        );
        assert!(p.quiet_since().unwrap() > made);
        p.complete(wait);
        let reply = session();
        p.register(call_of(&reply, 3, 1000, 1000)).unwrap();
        assert!(p.cancel(&RequestId::Int(3), reply.0).is_some());
        assert!(p.quiet_since().is_some(), "a cancelled call leaves too");
    }

    #[test]
    fn a_retiring_table_refuses_new_entries_and_drains_once() {
        let mut p = Pending::default();
        let a = p.register(call(1, 1000, 1000)).unwrap();
        p.retire("replaced");
        p.retire("later");
        assert_eq!(p.register(Entry::Discard), Err("replaced".to_string()));
        assert_eq!(p.closed(), None, "still answering what is in flight");
        assert!(!p.take_drained());
        assert!(p.complete(a).is_some());
        assert!(p.take_drained());
        assert!(!p.take_drained(), "only once");
    }

    #[test]
    fn a_closed_table_refuses_and_fails_everything_once() {
        let mut p = Pending::default();
        p.register(call(1, 1000, 1000)).unwrap();
        p.register(Entry::Discard).unwrap();
        assert_eq!(p.fail_all("crashed").len(), 2);
        assert_eq!(p.fail_all("stopped").len(), 0);
        assert_eq!(p.closed(), Some("crashed"), "the first reason stays");
        assert_eq!(p.register(Entry::Discard), Err("crashed".to_string()));
    }
}
