//! The child's one thread: a loop over `sys::Watch::wait`, which turns
//! what the child and the workbench did into the connection's events: a stdout
//! line (`incoming.rs`), stderr bytes, room in stdin, the exit of the process,
//! a call's deadline, a stop request (a wake-up).
//!
//! The stop sequence is MCP's for stdio (basic/transports §stdio, 2025-06-18)
//! run as phases of this loop, so a stop never needs a thread of its own:
//! close stdin, wait `STOP_GRACE` for the exit, ask the tree to stop (SIGTERM
//! on Unix), wait again, kill the tree. Whatever the phase, the exit of the
//! process ends the loop: the rest of the tree is killed, the process reaped,
//! and the thread ends, even if a helper still holds the pipes.
//! `sys::hurry` makes every grace period end at once (never the kill).

use super::lines::{LineBuffer, StderrLines};
use super::owner::Owner;
use super::*;
use crate::sys::{self, Exit, Stream, Watch};

/// How long a stopping child gets after stdin is closed, and again after it
/// was asked to stop.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(2);
/// How long a killed process may take to go (only one stuck in the kernel takes long).
const KILL_WAIT: Duration = Duration::from_secs(5);
/// How long the exit may follow the end of stdout and still be its cause.
const EOF_GRACE: Duration = Duration::from_millis(500);
/// The most reads of stdout in one turn (stderr, stdin and deadlines get a
/// turn in between).
const STREAK: usize = 8;
/// How long the last output is read once the process exited (a helper that
/// holds the pipes may write forever).
const LAST_WORDS: Duration = Duration::from_millis(200);

/// Where the stop sequence is.
#[derive(Clone, Copy)]
enum Phase {
    Serving,
    /// Stdin closed at this time.
    Closed(Instant),
    /// Asked to stop at this time.
    Asked(Instant),
    /// Killed at this time.
    Killed(Instant),
}

impl Phase {
    /// When the phase ends, if the process has not exited by then.
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

/// The loop's own state: what it has read and where the stop is.
struct Pump {
    owner: Owner,
    watch: Watch,
    stdout: LineBuffer,
    stderr: StderrLines,
    noise: LogBudget,
    stderr_budget: LogBudget,
    phase: Phase,
    /// Stdout ended while the process runs: past this, the end is the news.
    eof_at: Option<Instant>,
}

impl Downstream {
    /// Runs the child until it is gone, then records how it ended.
    pub(super) fn run(&self, owner: Owner, watch: Watch) {
        let mut pump = Pump {
            owner,
            watch,
            stdout: LineBuffer::default(),
            stderr: StderrLines::new(TAIL_LINE_BYTES),
            noise: LogBudget::new("stdout"),
            stderr_budget: LogBudget::new("stderr"),
            phase: Phase::Serving,
            eof_at: None,
        };
        let exit = loop {
            if let Some(exit) = self.turn(&mut pump) {
                break exit;
            }
        };
        let asked = {
            let mut shared = lock(&self.shared);
            let asked = matches!(shared.life, Life::Stopping);
            shared.life = Life::Stopped;
            asked
        };
        self.stopped.notify_all();
        if asked {
            log::info!("[{}] stopped ({exit})", self.label);
        }
    }

    /// One wait and what it found; how the process ended, once it did.
    fn turn(&self, pump: &mut Pump) -> Option<Exit> {
        let now = Instant::now();
        // One lock per turn: the main thread takes it for every call.
        let (armed, stop) = self.arm(now);
        if matches!(pump.phase, Phase::Serving) && stop {
            pump.owner.note_helpers();
            self.input.close();
            pump.phase = Phase::Closed(now);
        }
        let stdin = self.input.waiting();
        let deadline = [armed, pump.phase.deadline(), pump.eof_at]
            .into_iter()
            .flatten()
            .min();
        let timeout = deadline.map(|at| at.saturating_duration_since(now));
        let ready = match pump.watch.wait(stdin.as_deref(), timeout) {
            Ok(ready) => ready,
            Err(e) => {
                log::warn!("[{}] cannot wait for the child: {e}", self.label);
                self.went_down(format!("the workbench cannot watch it: {e}"));
                return Some(pump.owner.finish());
            }
        };
        drop(stdin);
        if ready.stdout {
            self.read_stdout(pump);
        }
        if ready.stderr {
            self.read_stderr(pump);
        }
        if ready.stdin {
            self.input.flush();
        }
        if ready.exited || (pump.watch.polls_exit() && pump.owner.tree().exited().is_some()) {
            self.read_last_words(pump);
            // Told before the reap: until then the status is there for anyone.
            if let Some(exit) = pump.owner.tree().exited() {
                self.went_down(format!("the server process ended ({exit})"));
            }
            return Some(pump.owner.finish());
        }
        let now = Instant::now();
        if pump.eof_at.is_some_and(|at| now >= at) {
            pump.eof_at = None;
            self.went_down("the server closed its stdout".into());
        }
        if armed.is_some_and(|at| now >= at) {
            self.expire_calls(now);
        }
        self.next_phase(pump, now)
    }

    /// Moves the stop sequence on when its phase ran out; the exit when the
    /// process cannot even be killed.
    fn next_phase(&self, pump: &mut Pump, now: Instant) -> Option<Exit> {
        if pump.phase.deadline().is_none_or(|at| now < at) {
            return None;
        }
        let tree = pump.owner.tree();
        pump.phase = match pump.phase {
            Phase::Closed(_) if tree.ask_to_stop() => Phase::Asked(now),
            Phase::Closed(_) | Phase::Asked(_) => {
                tree.kill();
                Phase::Killed(now)
            }
            Phase::Killed(_) => {
                log::warn!("[{}] the killed process does not end", self.label);
                return Some(pump.owner.finish());
            }
            Phase::Serving => Phase::Serving,
        };
        None
    }

    /// Reads stdout and handles every complete line; reads again, up to
    /// `STREAK` times, while reads bring several lines or fill the buffer,
    /// which saves a wait per read when calls are pipelined.
    fn read_stdout(&self, pump: &mut Pump) {
        for _ in 0..STREAK {
            let Pump { watch, stdout, .. } = pump;
            match stdout.fill(|room| watch.read(Stream::Stdout, room)) {
                Ok((0, _)) => {
                    if let Some(line) = pump.stdout.rest() {
                        self.on_line(line, &mut pump.noise);
                    }
                    pump.watch.close(Stream::Stdout);
                    if matches!(pump.phase, Phase::Serving) && !self.is_closed() {
                        pump.eof_at = Some(Instant::now() + EOF_GRACE);
                    }
                    return;
                }
                Ok((_, full)) => {
                    let mut lines = 0;
                    while let Some(line) = pump.stdout.next_line() {
                        self.on_line(line, &mut pump.noise);
                        lines += 1;
                    }
                    // One answer per read: calls one at a time, and the next
                    // answer is not there yet (a read would only say so).
                    // More: pipelined calls, whose next answers probably are.
                    if !full && lines < 2 {
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => return,
                Err(e) => {
                    log::warn!("[{}] cannot read stdout: {e}", self.label);
                    pump.watch.close(Stream::Stdout);
                    return;
                }
            }
        }
    }

    /// Reads stderr once: logs its lines within the flood budget and keeps
    /// the last ones for error messages.
    fn read_stderr(&self, pump: &mut Pump) {
        let mut buf = [0u8; 4 * 1024];
        let Pump {
            watch,
            stderr,
            stderr_budget,
            ..
        } = pump;
        match watch.read(Stream::Stderr, &mut buf) {
            Ok(0) => {
                stderr.finish(|line| self.keep_stderr_line(line, stderr_budget));
                watch.close(Stream::Stderr);
            }
            Ok(n) => stderr.feed(&buf[..n], |line| self.keep_stderr_line(line, stderr_budget)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => watch.close(Stream::Stderr),
        }
    }

    /// The process exited: what it wrote before is in the pipes (a result, its
    /// last stderr lines). Reads them until they are empty, for a moment at most.
    fn read_last_words(&self, pump: &mut Pump) {
        let until = Instant::now() + LAST_WORDS;
        while Instant::now() < until {
            let ready = pump.watch.wait(None, Some(Duration::ZERO));
            let Ok(ready) = ready else { return };
            if !ready.stdout && !ready.stderr {
                return;
            }
            if ready.stdout {
                self.read_stdout(pump);
            }
            if ready.stderr {
                self.read_stderr(pump);
            }
        }
    }

    pub(super) fn keep_stderr_line(&self, line: &[u8], budget: &mut LogBudget) {
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end();
        if text.is_empty() {
            return;
        }
        if budget.allow(&self.label) {
            log::info!("[{}] {text}", self.label);
        }
        let mut tail = lock(&self.tail);
        if tail.len() == TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(text.to_string());
    }

    /// The deadline the loop sleeps towards, recorded so that `forward_call`
    /// wakes it only for an earlier one. With no call in flight it is one
    /// `callTimeoutMs` away: a call made meanwhile ends no sooner, so calls
    /// never need to wake the loop. And whether a stop was asked for.
    pub(super) fn arm(&self, now: Instant) -> (Option<Instant>, bool) {
        let mut shared = lock(&self.shared);
        let stop = !matches!(shared.life, Life::Serving);
        if shared.pending.closed().is_some() {
            shared.armed = None;
        } else if shared.armed.is_none_or(|at| at <= now) {
            // Kept while it is ahead: answers and progress only move the
            // earliest deadline later, and an earlier call lowers it itself.
            // Waking at a deadline that moved is harmless (this recomputes
            // it), and saves a walk over the calls in flight at every turn.
            let next = shared.pending.next_deadline();
            shared.armed = Some(next.unwrap_or(now + self.spec.call_timeout));
        }
        (shared.armed, stop)
    }

    /// Fails the forwarded calls past their deadline.
    pub(super) fn expire_calls(&self, now: Instant) {
        let (expired, drained) = {
            let mut shared = lock(&self.shared);
            (
                shared.pending.take_expired(now),
                shared.pending.take_drained(),
            )
        };
        for (id, call) in expired {
            self.time_out(id, call);
        }
        if drained {
            self.stop_drained();
        }
    }

    /// A forwarded call passed its deadline: tell the child to stop working on
    /// it (MCP 2025-11-25, basic/utilities/cancellation) and answer the host.
    fn time_out(&self, id: i64, call: Call) {
        let (ms, key) = if call.hit_cap() {
            (self.spec.max_call_timeout.as_millis(), "maxCallTimeoutMs")
        } else {
            (self.spec.call_timeout.as_millis(), "callTimeoutMs")
        };
        let cancel = json!({"requestId": id, "reason": format!("timed out after {ms} ms")});
        let line = jsonrpc::notification_line(method::CANCELLED, Some(&cancel));
        let _ = self.write(line);
        let text = format!(
            "Tool '{}' in server '{}' (toolbox '{}') timed out after {ms} ms ({key})",
            call.tool, self.spec.server, self.spec.toolbox
        );
        self.fail(Entry::Call(call), Failure::Timeout, &text);
    }
}
