//! The pump: one server's one thread, named `[toolbox/server]`, and the
//! loop it runs over a `Transport` (`transport/mod.rs`). Each turn waits once
//! (`Transport::wait`: output, room for queued input, the end, a wake-up, or
//! the earliest deadline in flight), hands what it read to its state
//! (`inbound.rs`), fails what ran out, and moves the stop sequence on.
//!
//! The stop sequence is MCP's for stdio (basic/transports §stdio, 2025-06-18)
//! run as phases of this loop, so a stop never needs a thread of its own:
//! close the input, wait `STOP_GRACE` for the end, ask the server to end
//! (SIGTERM on Unix), wait again, kill it. Whatever the phase, the end of the
//! transport ends the loop: what is left is killed, the process reaped, and
//! the thread ends, even if a helper still holds the pipes.
//! `sys::hurry` makes every grace period end at once (never the kill).

use super::handle::{Downstream, Link};
use super::inbound::Inbound;
use super::stop::STOP_GRACE;
use super::transport::spec::Spec;
use super::transport::{Flow, Opener, Outlet, Transport};
use crate::sys::{self, Exit};
use crate::wire::outbox::Outbox;
use crossbeam_channel::{bounded, Sender};
use std::io;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How long a killed process may take to go (only one stuck in the kernel takes long).
const KILL_WAIT: Duration = Duration::from_secs(5);
/// How long the end may follow the end of the messages and still be its cause.
const EOF_GRACE: Duration = Duration::from_millis(500);
/// The pump parses its stdout lines with serde_json, whose recursion takes stack.
const THREAD_STACK: usize = 512 * 1024;

/// Starts a pump's thread, which makes its transport with `open` (a child
/// is spawned by the thread that watches it), and the handle around the
/// transport's shared half; then the thread pumps until the transport ends.
pub(super) fn launch(
    spec: Spec,
    outbox: Arc<Outbox>,
    changes: Option<Sender<Arc<Downstream>>>,
    open: impl Opener,
) -> Result<Arc<Downstream>, String> {
    let (opened_tx, opened_rx) = bounded::<io::Result<Arc<dyn Outlet>>>(1);
    let (conn_tx, conn_rx) = bounded::<Arc<Downstream>>(1);
    let (done_tx, done_rx) = bounded::<()>(0);
    let trace = outbox.trace().cloned();
    let thread = thread::Builder::new()
        .name(format!("[{}/{}]", spec.toolbox, spec.server))
        .stack_size(THREAD_STACK)
        .spawn(move || {
            // Dropped last: the handle's `stop` sees the pump has ended.
            let _done = done_tx;
            let transport = match open.open() {
                Ok((transport, outlet)) => {
                    let _ = opened_tx.send(Ok(outlet));
                    transport
                }
                Err(e) => {
                    let _ = opened_tx.send(Err(e));
                    return;
                }
            };
            // Without a handle (it could not be made) the transport's drop
            // ends the server.
            if let Ok(conn) = conn_rx.recv() {
                Pump::new(transport, Inbound::new(conn, outbox, changes)).run();
            }
        })
        .map_err(|e| format!("cannot create a thread: {e}"))?;
    let outlet = match opened_rx.recv() {
        Ok(Ok(outlet)) => outlet,
        Ok(Err(e)) => {
            let _ = thread.join();
            return Err(format!("cannot start '{}': {e}", spec.command_display));
        }
        Err(_) => return Err("the spawning thread died".to_string()),
    };
    let link = Link {
        thread_id: thread.thread().id(),
        thread: Mutex::new(Some(thread)),
        done: done_rx,
    };
    let conn = Downstream::new(spec, outlet, Some(link), trace);
    let _ = conn_tx.send(Arc::clone(&conn));
    Ok(conn)
}

/// Where the stop sequence is.
#[derive(Clone, Copy)]
enum Phase {
    Serving,
    /// Input closed at this time.
    Closed(Instant),
    /// Asked to end at this time.
    Asked(Instant),
    /// Killed at this time.
    Killed(Instant),
}

impl Phase {
    /// When the phase ends, if the transport has not ended by then.
    fn deadline(self) -> Option<Instant> {
        let grace = if sys::hurried() {
            Duration::ZERO
        } else {
            STOP_GRACE
        };
        match self {
            Phase::Serving => None,
            Phase::Closed(at) | Phase::Asked(at) => Some(at + grace),
            Phase::Killed(at) => Some(at + KILL_WAIT),
        }
    }
}

/// The loop's own state, owned by its thread: the transport, what it read
/// and what it keeps (`Inbound`), and where the stop is.
struct Pump<T> {
    transport: T,
    inbound: Inbound,
    phase: Phase,
    /// The messages ended while the transport runs: past this, the end is the news.
    eof_at: Option<Instant>,
}

impl<T: Transport> Pump<T> {
    fn new(transport: T, inbound: Inbound) -> Pump<T> {
        Pump {
            transport,
            inbound,
            phase: Phase::Serving,
            eof_at: None,
        }
    }

    /// Runs until the transport has ended, then publishes how.
    fn run(mut self) {
        let exit = loop {
            if let Some(exit) = self.turn() {
                break exit;
            }
        };
        self.inbound.finished(&exit);
    }

    /// One wait and what it found; how the transport ended, once it did.
    fn turn(&mut self) -> Option<Exit> {
        let now = Instant::now();
        let conn = self.inbound.conn();
        // One lock per turn: the callers take it for every call.
        let armed = conn.flight.arm(now, conn.spec().call_timeout);
        if matches!(self.phase, Phase::Serving) && conn.stop_asked() {
            self.transport.close_input();
            self.phase = Phase::Closed(now);
        }
        let deadline = [armed, self.phase.deadline(), self.eof_at]
            .into_iter()
            .flatten()
            .min();
        let timeout = deadline.map(|at| at.saturating_duration_since(now));
        let ready = match self.transport.wait(timeout) {
            Ok(ready) => ready,
            Err(e) => {
                log::warn!("[{}] cannot wait for the child: {e}", conn.label());
                self.inbound
                    .went_down(format!("the workbench cannot watch it: {e}"));
                return Some(self.transport.finish());
            }
        };
        let flow = self.transport.read(&ready, &mut self.inbound);
        let conn = self.inbound.conn();
        if flow == Flow::Closed && matches!(self.phase, Phase::Serving) && !conn.flight.is_closed()
        {
            self.eof_at = Some(Instant::now() + EOF_GRACE);
        }
        if ready.ended {
            self.transport.read_last_words(&mut self.inbound);
            // Told before the reap: until then the status is there for anyone.
            if let Some(why) = self.transport.end_reason() {
                self.inbound.went_down(why);
            }
            return Some(self.transport.finish());
        }
        let now = Instant::now();
        if self.eof_at.is_some_and(|at| now >= at) {
            self.eof_at = None;
            self.inbound
                .went_down("the server closed its stdout".into());
        }
        if armed.is_some_and(|at| now >= at) {
            self.inbound.expire(now);
        }
        self.next_phase(now)
    }

    /// Moves the stop sequence on when its phase ran out; the end when the
    /// process cannot even be killed.
    fn next_phase(&mut self, now: Instant) -> Option<Exit> {
        if self.phase.deadline().is_none_or(|at| now < at) {
            return None;
        }
        self.phase = match self.phase {
            Phase::Closed(_) if self.transport.ask_to_end() => Phase::Asked(now),
            Phase::Closed(_) | Phase::Asked(_) => {
                self.transport.kill();
                Phase::Killed(now)
            }
            Phase::Killed(_) => {
                log::warn!(
                    "[{}] the killed process does not end",
                    self.inbound.conn().label()
                );
                return Some(self.transport.finish());
            }
            Phase::Serving => Phase::Serving,
        };
        None
    }
}
