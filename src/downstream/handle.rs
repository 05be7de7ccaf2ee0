//! `Downstream`, the handle other threads hold to one server: forward a
//! call, cancel it, withdraw a session, set the log level, retire, stop,
//! and read what the pump and the handshake published. It owns no state the
//! pump writes: it shares the requests in flight with the pump (`flight.rs`,
//! the one lock), writes through the transport's `Outlet` without blocking,
//! and reads what was published once (the opening, the last stderr lines at
//! the end) or as a flag (tools changed, when they last did, a stop asked for).

use super::call;
use super::era::{Era, Modern};
use super::flight::{Flight, Registered};
use super::outcome::{Failure, Idle, Refused, Reply, Why};
use super::pending::{Call, Entry, Waiter};
use super::stop::STOP_LIMIT;
use super::transport::spec::Spec;
use super::transport::{Outlet, WriteError};
use crate::lock;
use crate::protocol::framing;
use crate::protocol::jsonrpc::{self, RequestId};
use crate::protocol::mcp::{self, method, TextResult};
use crate::wire::outbox::Outbox;
use crate::wire::trace::{Dir, Trace};
use crate::wire::SessionId;
use crossbeam_channel::{bounded, Receiver, RecvTimeoutError};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{self, JoinHandle, ThreadId};
use std::time::{Duration, Instant};

/// How long past its deadline a request waits for the pump to say it ran
/// out (with the child's last stderr lines) before it gives up by itself: a
/// pump held up writing to a host that does not read cannot say it.
const LATE: Duration = Duration::from_millis(500);

/// What the opening found, published once by the thread that ran it.
pub(super) struct Opened {
    /// The era and version agreed on.
    pub era: Era,
    /// Set when the child speaks the modern era (2026-07-28): every request
    /// then carries the era's `_meta`.
    pub modern: Option<Modern>,
    /// Whether the child declared the `logging` capability.
    pub logging: bool,
    /// The `instructions` of its opening result, if it gave any.
    pub instructions: Option<String>,
}

/// A server's pump thread, as the handle sees it.
pub(super) struct Link {
    /// Until someone joins it.
    pub thread: Mutex<Option<JoinHandle<()>>>,
    pub thread_id: ThreadId,
    /// Disconnected when the pump has ended (nothing is ever sent).
    pub done: Receiver<()>,
}

/// A running (or crashed) downstream MCP server: the handle.
pub(crate) struct Downstream {
    spec: Spec,
    label: String,
    /// The transport's shared half: writes, wake-ups, its end.
    outlet: Arc<dyn Outlet>,
    /// The requests in flight, shared with the pump.
    pub(super) flight: Flight,
    /// The pump's thread (`None` in the unit tests, which drive the pump's
    /// state by hand).
    link: Option<Link>,
    /// A stop was asked for: the pump runs the sequence.
    stopping: AtomicBool,
    opened: OnceLock<Opened>,
    /// The host's log level for a modern child's requests (the modern era
    /// has no `logging/setLevel`): 0 for none, else 1 + its index in
    /// `mcp::LOG_LEVELS`.
    log_level: AtomicU8,
    /// The child said its tools changed since the last listing (the pump
    /// sets it, a listing clears it).
    tools_changed: AtomicBool,
    /// When the child last said its tools changed, in nanoseconds since `born`.
    last_change: AtomicU64,
    born: Instant,
    /// The child's last stderr lines, published by the pump as it ends.
    last_words: OnceLock<String>,
    /// The `--trace` file, if any (its outbox's).
    trace: Option<Arc<Trace>>,
}

impl Downstream {
    /// The handle around a transport's shared half; what it sends the
    /// child goes to `trace` too.
    pub(super) fn new(
        spec: Spec,
        outlet: Arc<dyn Outlet>,
        link: Option<Link>,
        trace: Option<Arc<Trace>>,
    ) -> Arc<Downstream> {
        Arc::new(Downstream {
            trace,
            label: format!("{}/{}", spec.toolbox, spec.server),
            outlet,
            flight: Flight::default(),
            link,
            stopping: AtomicBool::new(false),
            opened: OnceLock::new(),
            log_level: AtomicU8::new(0),
            tools_changed: AtomicBool::new(false),
            last_change: AtomicU64::new(0),
            born: Instant::now(),
            last_words: OnceLock::new(),
            spec,
        })
    }

    pub(super) fn spec(&self) -> &Spec {
        &self.spec
    }

    /// `toolbox/server`, for logs and log messages.
    pub(super) fn label(&self) -> &str {
        &self.label
    }

    /// The pid of the child's first process (0 without a child).
    pub(crate) fn pid(&self) -> u32 {
        self.outlet.pid()
    }

    /// The era the child speaks, once its opening is done (for `status`).
    pub(crate) fn era(&self) -> Option<&Era> {
        self.opened.get().map(|opened| &opened.era)
    }

    /// Publishes what the opening found (once; later ones are ignored).
    pub(super) fn set_opened(&self, opened: Opened) {
        let _ = self.opened.set(opened);
    }

    /// The `instructions` the child gave when it opened, if any.
    pub(super) fn instructions(&self) -> Option<String> {
        self.opened
            .get()
            .and_then(|opened| opened.instructions.clone())
    }

    /// The modern era's state, when the child speaks it.
    pub(super) fn modern(&self) -> Option<&Modern> {
        self.opened.get().and_then(|opened| opened.modern.as_ref())
    }

    /// The host's log level, for a modern child's requests.
    pub(super) fn log_level(&self) -> Option<&'static str> {
        match self.log_level.load(Ordering::Relaxed) {
            0 => None,
            n => mcp::LOG_LEVELS.get(usize::from(n) - 1).copied(),
        }
    }

    /// When the child last said its tools changed.
    pub(crate) fn last_change(&self) -> Instant {
        self.born + Duration::from_nanos(self.last_change.load(Ordering::Relaxed))
    }

    /// Whether the child said its tool list changed since the last listing.
    pub(crate) fn tools_changed(&self) -> bool {
        self.tools_changed.load(Ordering::Relaxed)
    }

    /// The pump saw the child say its tools changed, at `now`: true for the
    /// first notice since the last listing.
    pub(super) fn note_tools_changed(&self, now: Instant) -> bool {
        let since = now.saturating_duration_since(self.born).as_nanos();
        self.last_change
            .store(u64::try_from(since).unwrap_or(u64::MAX), Ordering::Relaxed);
        !self.tools_changed.swap(true, Ordering::SeqCst)
    }

    /// A listing begins: changes from now on are news.
    pub(super) fn clear_tools_changed(&self) {
        self.tools_changed.store(false, Ordering::Relaxed);
    }

    /// Whether a stop was asked for (the pump reads it each turn).
    pub(super) fn stop_asked(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// The child's last stderr lines as the pump left them, once it ended.
    fn last_words(&self) -> String {
        self.last_words.get().cloned().unwrap_or_default()
    }

    /// The pump ends: what it kept of stderr, for failures told after.
    pub(super) fn publish_last_words(&self, tail: String) {
        let _ = self.last_words.set(tail);
    }

    /// Sends a request and waits for its answer until `deadline`, when the
    /// pump fails it (with the child's last stderr lines).
    pub(super) fn request(
        &self,
        method: &str,
        params: &Value,
        deadline: Instant,
    ) -> Result<Reply, Failure> {
        let (tx, rx) = bounded(1);
        let wait = Entry::Wait(Waiter { tx, deadline });
        let Registered { id, wake } = self
            .flight
            .register(wait, Some(deadline))
            .map_err(|why| Failure::down(why, self.last_words()))?;
        if wake {
            self.outlet.wake();
        }
        let line = jsonrpc::request_line(&RequestId::Int(id), method, params);
        match self.send(line) {
            // A child that died says how (exit status, stderr) when its
            // pump sees the exit, which fails this request: wait.
            Ok(()) | Err(WriteError::Io(_)) => {}
            Err(e) => {
                self.flight.take_back(id);
                return Err(Failure::down(e.to_string(), self.last_words()));
            }
        }
        let gave_up = match rx.recv_deadline(deadline + LATE) {
            Ok(answer) => return answer,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(Failure::down("stopped".into(), self.last_words()))
            }
            Err(RecvTimeoutError::Timeout) => self.flight.take_back(id).is_some(),
        };
        if !gave_up {
            // The pump took it meanwhile, and answers it now.
            if let Ok(answer) = rx.recv_timeout(LATE) {
                return answer;
            }
        }
        Err(Failure {
            why: Why::Timeout,
            tail: self.last_words(),
        })
    }

    /// Sends a notification, logging a failure.
    pub(super) fn notify(&self, method: &str) {
        let line = jsonrpc::notification_line::<Value>(method, None);
        if let Err(e) = self.send(line) {
            log::debug!("[{}] cannot send {method}: {e}", self.label);
        }
    }

    /// Forwards a host's `tools/call`; the answer reaches the host from the
    /// pump's thread (its result, its deadline, its end) or from `stop`.
    /// `meta` is the host's `_meta` without its progress token;
    /// `progress_token` is that token, if any; `time_limit`, when given,
    /// is this call's `callTimeoutMs` (and its `maxCallTimeoutMs` when
    /// longer than the server's). When the call is refused, nothing was
    /// sent and nobody else answers it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn forward_call(
        &self,
        upstream_id: RequestId,
        (session, reply): (SessionId, &Arc<Outbox>),
        tool: &str,
        arguments: &RawValue,
        meta: &Map<String, Value>,
        progress_token: Option<&Value>,
        time_limit: Option<Duration>,
    ) -> Result<(), Refused> {
        let has_token = progress_token.is_some();
        let entry = Call::new(
            upstream_id,
            (session, Arc::clone(reply)),
            tool,
            progress_token.cloned(),
            time_limit.unwrap_or(self.spec.call_timeout),
            self.spec.max_call_timeout,
        );
        let deadline = entry.deadline;
        let Registered { id, wake } = self
            .flight
            .register(Entry::Call(entry), Some(deadline))
            .map_err(Refused::Down)?;
        if wake {
            self.outlet.wake();
        }
        let call = call::Call {
            tool,
            arguments,
            meta,
            has_token,
        };
        let line = call::line(id, &call, self.modern(), self.log_level());
        let Err(e) = self.send(line) else {
            return Ok(());
        };
        // The child may have died (or been stopped) meanwhile, and whoever
        // noticed has answered this call already: refuse only if we still own it.
        if self.flight.take_back(id).is_none() {
            return Ok(());
        }
        Err(match e {
            WriteError::Full { .. } => Refused::Busy(e.to_string()),
            WriteError::Closed | WriteError::Io(_) => {
                Refused::Down(self.down_reason().unwrap_or_else(|| e.to_string()))
            }
        })
    }

    /// Passes the host's `logging/setLevel` on, if the child supports logging
    /// (a modern child gets it in each request's `_meta` from now on).
    pub(crate) fn set_log_level(&self, level: &str) {
        if !self.opened.get().is_some_and(|opened| opened.logging) {
            return;
        }
        if self.modern().is_some() {
            // The host's level is one of these (`server` checks it).
            if let Some(at) = mcp::LOG_LEVELS.iter().position(|l| *l == level) {
                let at = u8::try_from(at + 1).unwrap_or(0);
                self.log_level.store(at, Ordering::Relaxed);
            }
            return;
        }
        let Ok(Registered { id, .. }) = self.flight.register(Entry::Discard, None) else {
            return;
        };
        let params = json!({ "level": level });
        let _ = self.send(jsonrpc::request_line(
            &RequestId::Int(id),
            method::SET_LEVEL,
            &params,
        ));
    }

    /// `session` cancelled `upstream_id`: if it is in flight here, forget
    /// it (no answer goes upstream) and tell the child (MCP 2025-11-25,
    /// basic/utilities/cancellation).
    pub(crate) fn cancel(
        &self,
        upstream_id: &RequestId,
        session: SessionId,
        reason: Option<&str>,
    ) -> bool {
        let (id, drained) = self.flight.cancel(upstream_id, session);
        let Some(id) = id else {
            return false;
        };
        self.tell_cancelled(id, reason);
        if drained {
            self.stop_drained();
        }
        true
    }

    /// Ends every call `session` has in flight here: the child is told
    /// each is cancelled, and the session gets `answer` (`{tool}` replaced by
    /// the tool's name) as an `isError` result, or nothing when `answer` is
    /// `None` (the session is gone). For a shared fleet's sessions (§8).
    pub(crate) fn withdraw(&self, session: SessionId, answer: Option<&str>) {
        let (calls, drained) = self.flight.take_calls_of(session);
        for (id, call) in calls {
            self.tell_cancelled(id, Some("the session closed the toolbox or left"));
            if let Some(text) = answer {
                let text = text.replace("{tool}", &call.tool);
                let result = TextResult::error(&text);
                call.reply
                    .send(&jsonrpc::result_line(&call.upstream_id, &result));
            }
        }
        if drained {
            self.stop_drained();
        }
    }

    /// Tells the child that request `id` is cancelled.
    pub(super) fn tell_cancelled(&self, id: i64, reason: Option<&str>) {
        let mut params = json!({ "requestId": id });
        if let Some(reason) = reason {
            params["reason"] = json!(reason);
        }
        let _ = self.send(jsonrpc::notification_line(method::CANCELLED, Some(&params)));
    }

    /// Whether the child is still serving: not gone, not retiring, and still
    /// taking input.
    pub(crate) fn is_up(&self) -> bool {
        self.flight.refusing().is_none() && !self.outlet.is_broken()
    }

    /// Why the child is not serving, if it is not.
    pub(crate) fn down_reason(&self) -> Option<String> {
        self.flight.refusing()
    }

    /// Since when no call has been in flight, while the child serves calls.
    pub(crate) fn idle_since(&self) -> Idle {
        self.flight.idle_since()
    }

    /// Falls asleep if no call has been in flight for `timeout`: from then on
    /// the child refuses requests (calls wait for a new start), and the caller
    /// stops it. False, and nothing changes, if it is not idle that long.
    pub(crate) fn retire_if_idle(&self, timeout: Duration) -> bool {
        self.flight.retire_if_idle(timeout, "asleep")
    }

    /// No longer serves new requests (they wait for a new start): the child
    /// answers the calls in flight, then stops, in the background.
    pub(crate) fn retire(&self, why: &str) {
        if self.flight.retire(why) {
            self.stop_drained();
        }
    }

    /// A retiring child answered its last call: stop it, in the background.
    pub(super) fn stop_drained(&self) {
        log::info!(
            "[{}] stopping: {}",
            self.label,
            self.down_reason().unwrap_or_default()
        );
        self.stop_in_background();
    }

    /// Writes one line to the child without blocking (any thread).
    pub(super) fn send(&self, line: Vec<u8>) -> Result<(), WriteError> {
        if log::log_enabled!(log::Level::Debug) {
            log::debug!("[{}] <- {}", self.label, framing::preview(&line));
        }
        if let Some(trace) = &self.trace {
            trace.record(Dir::WorkbenchToChild, Some(&self.label), &line);
        }
        self.outlet.send(line)
    }

    /// Closes the table with `why` and answers everything in flight once: a
    /// forwarded call with `text(its tool)` as its `isError` text, a waiting
    /// request with `why` and `tail` (the child's last stderr lines). False
    /// when the table was closed already.
    pub(super) fn fail_in_flight(
        &self,
        why: &str,
        tail: &str,
        text: impl Fn(&str) -> String,
    ) -> bool {
        let Some(entries) = self.flight.close(why) else {
            return false;
        };
        for entry in entries {
            match entry {
                Entry::Wait(wait) => {
                    let _ = wait
                        .tx
                        .send(Err(Failure::down(why.to_string(), tail.to_string())));
                }
                Entry::Discard => {}
                Entry::Call(call) => {
                    let text = text(&call.tool);
                    let result = TextResult::error(&text);
                    call.reply
                        .send(&jsonrpc::result_line(&call.upstream_id, &result));
                }
            }
        }
        true
    }

    /// Stops the child: fails what is in flight with `in_flight` as the
    /// message (or a generic one when empty), then the pump runs the stop
    /// sequence. Safe to call more than once and from several threads: each
    /// returns once the child is gone (on the pump's own thread it only
    /// asks). A pump held up writing to a host that does not read cannot run
    /// the sequence: after `STOP_LIMIT` the tree is killed from here.
    pub(crate) fn stop(&self, in_flight: &str) {
        self.stop_by(in_flight, Instant::now() + STOP_LIMIT);
    }

    /// `stop`, killing the tree from here at `deadline` (`launch::stop_all`
    /// gives every child the same one).
    pub(crate) fn stop_by(&self, in_flight: &str, deadline: Instant) {
        self.ask_to_stop(in_flight);
        let Some(link) = &self.link else {
            return;
        };
        if thread::current().id() == link.thread_id {
            return;
        }
        if let Err(RecvTimeoutError::Timeout) = link.done.recv_deadline(deadline) {
            log::warn!(
                "[{}] its thread is held up (writing to the host?): killing its processes from here",
                self.label
            );
            self.outlet.kill();
            // Left to the pump when the process had ended by itself.
            self.fail_stopped(in_flight);
            return;
        }
        if let Some(thread) = lock(&link.thread).take() {
            let _ = thread.join();
        }
    }

    /// Starts the stop without waiting for it: a failed start answers at its
    /// deadline, not after the stop sequence.
    pub(crate) fn stop_in_background(&self) {
        self.ask_to_stop("");
    }

    /// Fails what is in flight, and asks the pump to stop the child.
    pub(crate) fn ask_to_stop(&self, in_flight: &str) {
        // A process that ended by itself crashed, whoever noticed first (a
        // write that met a closed pipe makes the caller restart it at once,
        // maybe before the pump has seen the exit): the pump says so, with
        // the last stderr lines it keeps, so the calls in flight are its to
        // answer.
        if self.outlet.ended().is_none() {
            self.fail_stopped(in_flight);
        }
        self.stopping.store(true, Ordering::SeqCst);
        self.outlet.wake();
    }

    /// Fails what is in flight as stopped: with `in_flight` (`{tool}`
    /// replaced), or a generic text when empty.
    fn fail_stopped(&self, in_flight: &str) {
        let (server, toolbox) = (&self.spec.server, &self.spec.toolbox);
        self.fail_in_flight("stopped", &self.last_words(), |tool| match in_flight {
            "" => format!(
                "Server '{server}' in toolbox '{toolbox}' was stopped while tool '{tool}' was running"
            ),
            text => text.replace("{tool}", tool),
        });
    }

    /// A sentence describing a failed request, with the child's last stderr
    /// lines when it timed out or is gone.
    pub(crate) fn describe(&self, failure: &Failure, doing: &str) -> String {
        match &failure.why {
            Why::Rpc(e) => format!("error {} while {doing}: {}", e.code, e.text()),
            Why::Timeout => format!(
                "no answer{} within {} ms while {doing}{}",
                // As written in the config: the expanded url may hold a secret.
                self.spec
                    .remote
                    .as_ref()
                    .map_or(String::new(), |r| format!(" from {}", r.url_display)),
                self.spec.startup_timeout.as_millis(),
                failure.tail
            ),
            Why::Down(why) => format!("{why}{}", failure.tail),
        }
    }
}

impl std::fmt::Debug for Downstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Downstream({}, pid {})", self.label, self.pid())
    }
}
