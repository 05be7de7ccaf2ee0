//! The toolboxes' lifecycle queues and their servers' restart history, keyed
//! by toolbox (`Slot::id`): what runs next on a toolbox's worker, whether a
//! worker runs, and how long a server that keeps dying waits before its next
//! start.
//!
//! No IO and no threads here: `lifecycle` starts the workers and runs the
//! operations. The registry knows nothing of these queues.

use super::facts::Asked;
use super::forward::ForwardedCall;
use crate::config::ToolboxConfig;
use crate::downstream::Downstream;
use crate::fleet::toolbox::Slot;
use crate::lock;
use crate::protocol::awaiting::Key;
use crate::wire::SessionId;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// A lifecycle operation on one toolbox copy.
pub(crate) enum Op {
    /// Opens the copy for the session of `asked`, whose request went to
    /// its copies of the toolbox; this is copy `part` (`Fact::Opened`).
    Open { asked: Asked, part: usize },
    /// Releases `session`'s hold, and closes the copy if no other session
    /// holds it. `answer`: the session's request and this copy's part in it
    /// (`Fact::Closed`); none when the session left.
    Close {
        session: SessionId,
        answer: Option<(Key, usize)>,
    },
    /// Start server `server` again, then hand `calls` (each with its
    /// session's number for it) back to their sessions (`Fact::Restarted`).
    Restart {
        server: String,
        calls: Vec<(Key, ForwardedCall)>,
    },
    /// The idle timer: put server `server` to sleep if `conn` still runs it
    /// and has had no call in flight for `timeout`.
    Sleep {
        server: String,
        conn: Weak<Downstream>,
        timeout: Duration,
    },
    /// A reloaded config changed or removed this toolbox.
    Reload(Reload),
}

pub(crate) enum Reload {
    /// The toolbox's new definition.
    Reconfigure(Arc<ToolboxConfig>),
    /// The toolbox is no longer configured.
    Remove,
}

impl Op {
    /// The host requests that wait for this operation.
    pub(crate) fn asked(&self) -> Vec<Asked> {
        match self {
            Op::Open { asked, .. } => vec![*asked],
            Op::Close {
                session,
                answer: Some((seq, _)),
            } => vec![Asked {
                session: *session,
                seq: *seq,
            }],
            Op::Restart { calls, .. } => calls.iter().map(waiting_call).collect(),
            Op::Close { answer: None, .. } | Op::Sleep { .. } | Op::Reload(_) => Vec::new(),
        }
    }

    /// Drops what waits for the requests `withdrawn` picks: whether
    /// anything of this operation is left to run.
    fn withdraw(&mut self, withdrawn: impl Fn(Asked) -> bool) -> bool {
        match self {
            Op::Restart { calls, .. } => {
                calls.retain(|call| !withdrawn(waiting_call(call)));
                !calls.is_empty()
            }
            op => !op.asked().into_iter().any(withdrawn),
        }
    }
}

/// A call waiting for a restart, as its session knows it.
fn waiting_call((seq, call): &(Key, ForwardedCall)) -> Asked {
    Asked {
        session: call.session,
        seq: *seq,
    }
}

/// Every toolbox's queue and restart history.
#[derive(Default)]
pub(crate) struct Queues {
    toolboxes: Mutex<HashMap<u64, Life>>,
}

/// One toolbox's lifecycle state.
#[derive(Default)]
struct Life {
    ops: VecDeque<Op>,
    /// A worker is running this queue.
    busy: bool,
    restarts: HashMap<String, Restarts>,
}

/// Restart history of one server, for the backoff of a server that keeps dying.
#[derive(Default, Clone, Copy)]
struct Restarts {
    last_start: Option<Instant>,
    quick_deaths: u32,
}

/// A server that dies within this time of its start counts as dying quickly.
const QUICK_DEATH: Duration = Duration::from_secs(10);
const BACKOFF_FIRST: Duration = Duration::from_millis(250);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

impl Queues {
    /// Queues `op` for `slot`; a restart joins a restart of the same server
    /// that has not begun yet. True when no worker runs the queue: the caller
    /// starts one (the queue counts as busy from now on).
    pub(crate) fn push(&self, slot: &Slot, op: Op) -> bool {
        let mut all = lock(&self.toolboxes);
        let life = all.entry(slot.id).or_default();
        match op {
            Op::Restart { server, calls } => {
                let waiting = life.ops.iter_mut().find_map(|op| match op {
                    Op::Restart { server: s, calls } if *s == server => Some(calls),
                    _ => None,
                });
                match waiting {
                    Some(waiting) => waiting.extend(calls),
                    None => life.ops.push_back(Op::Restart { server, calls }),
                }
            }
            op => life.ops.push_back(op),
        }
        !std::mem::replace(&mut life.busy, true)
    }

    /// The next operation for the worker of `slot`; `None` when the queue is
    /// empty, and the worker ends. A toolbox that is `gone` (asked under the
    /// queue's lock, so no operation can slip in) is forgotten then.
    pub(crate) fn pop(&self, slot: &Slot, gone: impl FnOnce() -> bool) -> Option<Op> {
        let mut all = lock(&self.toolboxes);
        let life = all.entry(slot.id).or_default();
        if let Some(op) = life.ops.pop_front() {
            return Some(op);
        }
        life.busy = false;
        if gone() {
            all.remove(&slot.id);
        }
        None
    }

    /// No worker could be started for `slot`: its queued operations, which
    /// the caller answers.
    pub(crate) fn abandon(&self, slot: &Slot) -> Vec<Op> {
        let mut all = lock(&self.toolboxes);
        let life = all.entry(slot.id).or_default();
        life.busy = false;
        life.ops.drain(..).collect()
    }

    /// Runs `f` if no worker runs `slot`'s queue, holding the queue so that
    /// none starts meanwhile; a toolbox that is `gone` then is forgotten.
    /// False, and `f` does not run, when a worker runs.
    pub(crate) fn if_idle(
        &self,
        slot: &Slot,
        f: impl FnOnce(),
        gone: impl FnOnce() -> bool,
    ) -> bool {
        let mut all = lock(&self.toolboxes);
        if all.get(&slot.id).is_some_and(|life| life.busy) {
            return false;
        }
        f();
        if gone() {
            all.remove(&slot.id);
        }
        true
    }

    /// The host withdrew request `asked`: dropped from every queue it waits
    /// in (an operation that began runs to its end).
    pub(crate) fn withdraw(&self, asked: Asked) {
        self.drop_where(|a| a == asked);
    }

    /// `session` left: its queued requests are dropped (its holds are
    /// released by the closes the fleet queues for it).
    pub(crate) fn withdraw_session(&self, session: SessionId) {
        self.drop_where(|a| a.session == session);
    }

    fn drop_where(&self, withdrawn: impl Fn(Asked) -> bool) {
        for life in lock(&self.toolboxes).values_mut() {
            life.ops.retain_mut(|op| op.withdraw(&withdrawn));
        }
    }

    /// Records that `server` of `slot` is being started now.
    pub(crate) fn note_start(&self, slot: &Slot, server: &str) {
        let mut all = lock(&self.toolboxes);
        let life = all.entry(slot.id).or_default();
        life.restarts
            .entry(server.to_string())
            .or_default()
            .last_start = Some(Instant::now());
    }

    /// How long to wait before starting `server` of `slot` again after it
    /// died: nothing the first time, then doubling from 250 ms up to 5 s
    /// while it keeps dying within 10 s of its start.
    pub(crate) fn restart_delay(&self, slot: &Slot, server: &str) -> Duration {
        let mut all = lock(&self.toolboxes);
        let life = all.entry(slot.id).or_default();
        let entry = life.restarts.entry(server.to_string()).or_default();
        let quick = entry.last_start.is_some_and(|t| t.elapsed() < QUICK_DEATH);
        entry.quick_deaths = if quick { entry.quick_deaths + 1 } else { 0 };
        match entry.quick_deaths {
            0 | 1 => Duration::ZERO,
            n => (BACKOFF_FIRST * 2u32.saturating_pow(n - 2)).min(BACKOFF_MAX),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::SessionIds;

    fn slot(id: u64) -> Slot {
        Slot {
            id,
            name: format!("t{id}"),
        }
    }

    /// The tests' sessions: `session(1)`, the one `close` uses, and others.
    fn session(n: u64) -> SessionId {
        let ids = SessionIds::default();
        (1..n).for_each(|_| {
            ids.next();
        });
        ids.next()
    }

    fn close(n: Key) -> Op {
        Op::Close {
            session: session(1),
            answer: Some((n, 0)),
        }
    }

    fn close_ids(ops: &[Op]) -> Vec<Key> {
        ops.iter().flat_map(Op::asked).map(|a| a.seq).collect()
    }

    #[test]
    fn one_worker_per_queue_in_order_and_forgotten_when_gone() {
        let queues = Queues::default();
        let (a, b) = (slot(1), slot(2));
        assert!(queues.push(&a, close(1)), "start a worker");
        assert!(!queues.push(&a, close(2)), "one runs");
        assert!(queues.push(&b, close(3)), "another toolbox");
        let first = queues.pop(&a, || unreachable!()).unwrap();
        assert_eq!(close_ids(&[first]), [1]);
        assert!(!queues.if_idle(&a, || unreachable!(), || false), "busy");
        let second = queues.pop(&a, || unreachable!()).unwrap();
        assert_eq!(close_ids(&[second]), [2]);
        assert!(queues.pop(&a, || false).is_none(), "done; still configured");
        let mut ran = false;
        assert!(queues.if_idle(&a, || ran = true, || true));
        assert!(ran);
        assert!(!lock(&queues.toolboxes).contains_key(&1), "gone: forgotten");
        let abandoned = queues.abandon(&b);
        assert_eq!(close_ids(&abandoned), [3]);
        assert!(queues.push(&b, close(4)), "no worker after abandon");
    }

    #[test]
    fn a_withdrawn_request_leaves_its_queue_and_others_stay() {
        let queues = Queues::default();
        let t = slot(1);
        queues.push(&t, close(1));
        queues.push(&t, close(2));
        let other = session(2);
        queues.push(
            &t,
            Op::Close {
                session: other,
                answer: Some((1, 0)),
            },
        );
        queues.withdraw(Asked {
            session: session(1),
            seq: 1,
        });
        let left: Vec<Asked> = std::iter::from_fn(|| queues.pop(&t, || false))
            .flat_map(|op| op.asked())
            .collect();
        let session = session(1);
        assert_eq!(
            left,
            [
                Asked { session, seq: 2 },
                Asked {
                    session: other,
                    seq: 1
                }
            ],
            "the same number of another session stays"
        );
        queues.push(&t, close(3));
        queues.withdraw_session(session);
        assert!(queues.pop(&t, || false).is_none(), "a session that left");
    }

    #[test]
    fn restarts_of_one_server_share_one_start() {
        let queues = Queues::default();
        let t = slot(1);
        let restart = |server: &str| Op::Restart {
            server: server.into(),
            calls: Vec::new(),
        };
        queues.push(&t, restart("s"));
        queues.push(&t, close(1));
        queues.push(&t, restart("s"));
        queues.push(&t, restart("other"));
        let ops: Vec<Op> = std::iter::from_fn(|| queues.pop(&t, || false)).collect();
        let shown: Vec<String> = ops
            .iter()
            .map(|op| match op {
                Op::Restart { server, .. } => format!("restart {server}"),
                Op::Close { .. } => "close".into(),
                _ => "other".into(),
            })
            .collect();
        assert_eq!(shown, ["restart s", "close", "restart other"]);
    }

    #[test]
    fn restart_backoff_grows_only_for_quick_deaths() {
        let queues = Queues::default();
        let t = slot(1);
        assert_eq!(
            queues.restart_delay(&t, "s"),
            Duration::ZERO,
            "never started"
        );
        queues.note_start(&t, "s");
        assert_eq!(
            queues.restart_delay(&t, "s"),
            Duration::ZERO,
            "first quick death"
        );
        let ms: Vec<u128> = (0..6)
            .map(|_| {
                queues.note_start(&t, "s");
                queues.restart_delay(&t, "s").as_millis()
            })
            .collect();
        assert_eq!(ms, [250, 500, 1000, 2000, 4000, 5000]);
        // A server that ran for a while starts over.
        lock(&queues.toolboxes)
            .get_mut(&1)
            .unwrap()
            .restarts
            .get_mut("s")
            .unwrap()
            .last_start = Some(Instant::now() - QUICK_DEATH - Duration::from_secs(1));
        assert_eq!(queues.restart_delay(&t, "s"), Duration::ZERO);
    }
}
