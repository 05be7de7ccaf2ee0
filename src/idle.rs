//! The idle timer (`idleTimeoutMs`): one thread for every server that has a
//! timeout. It sleeps until the earliest moment one of them can have gone
//! that long without a call in flight, and asks the toolbox queue of each
//! one that has to put it to sleep (`lifecycle::Op::Sleep`); the queue checks
//! again, atomically, so a call that came meanwhile keeps the server awake.
//!
//! Calls cost it nothing: it reads a server's quiet time
//! (`Downstream::idle_since`) only when it wakes, and it is woken early only
//! when a server joins its list. It takes no lock across IO and never waits
//! for a peer.

use crate::downstream::{Downstream, Idle};
use crate::lifecycle::{self, Op, Workbench};
use crate::lock;
use crate::toolbox::Slot;
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::thread;
use std::time::{Duration, Instant};

#[derive(Default)]
pub struct IdleWatch {
    state: Mutex<State>,
    wake: Condvar,
}

#[derive(Default)]
struct State {
    watched: Vec<Watched>,
    /// The thread was started.
    running: bool,
    /// The workbench is gone: the thread ends.
    ended: bool,
}

struct Watched {
    slot: Weak<Slot>,
    server: String,
    conn: Weak<Downstream>,
    timeout: Duration,
    /// When it joined the list: a server is idle from then at the earliest
    /// (its start-up is not idle time).
    since: Instant,
}

impl IdleWatch {
    /// Puts server `server` of toolbox `slot`, running as `conn`, to sleep
    /// once it has gone `timeout` without a call in flight. Starts the
    /// thread the first time.
    pub fn watch(
        self: &Arc<Self>,
        wb: &Arc<Workbench>,
        slot: &Arc<Slot>,
        server: &str,
        conn: &Arc<Downstream>,
        timeout: Duration,
    ) {
        let mut state = lock(&self.state);
        state.watched.push(Watched {
            slot: Arc::downgrade(slot),
            server: server.to_string(),
            conn: Arc::downgrade(conn),
            timeout,
            since: Instant::now(),
        });
        if !state.running {
            let (watch, wb) = (Arc::clone(self), Arc::downgrade(wb));
            let spawned = thread::Builder::new()
                .name("idle".into())
                .stack_size(64 * 1024)
                .spawn(move || watch.run(&wb));
            match spawned {
                Ok(_) => state.running = true,
                Err(e) => log::warn!("cannot start the idle timer: {e}; idle servers keep running"),
            }
        }
        self.wake.notify_one();
    }

    /// Ends the thread (the workbench is dropped).
    pub fn end(&self) {
        lock(&self.state).ended = true;
        self.wake.notify_one();
    }

    fn run(&self, wb: &Weak<Workbench>) {
        let mut state = lock(&self.state);
        loop {
            if state.ended {
                return;
            }
            let now = Instant::now();
            let mut next: Option<Instant> = None;
            let mut due = Vec::new();
            state.watched.retain(|w| {
                let Some(conn) = w.conn.upgrade() else {
                    return false;
                };
                let at = match conn.idle_since() {
                    Idle::NotServing => return false,
                    // The earliest it can be idle long enough: look again then.
                    Idle::Busy => now + w.timeout,
                    Idle::Since(quiet) => quiet.max(w.since) + w.timeout,
                };
                if at <= now {
                    due.push((w.slot.clone(), w.server.clone(), w.conn.clone(), w.timeout));
                    return false;
                }
                next = Some(next.map_or(at, |n| n.min(at)));
                true
            });
            if !due.is_empty() {
                drop(state);
                if let Some(wb) = wb.upgrade() {
                    for (slot, server, conn, timeout) in due {
                        if let Some(slot) = slot.upgrade() {
                            let op = Op::Sleep {
                                server,
                                conn,
                                timeout,
                            };
                            lifecycle::submit(&wb, &slot, op);
                        }
                    }
                }
                state = lock(&self.state);
                continue;
            }
            state = match next {
                None => self.wake.wait(state).unwrap_or_else(|p| p.into_inner()),
                Some(at) => {
                    self.wake
                        .wait_timeout(state, at.saturating_duration_since(now))
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
            };
        }
    }
}
