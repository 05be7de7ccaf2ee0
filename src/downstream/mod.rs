//! One downstream MCP server: a child process, the one thread that watches
//! it, and the requests in flight to it (docs: ARCHITECTURE.md, "Threads").
//!
//! The parts, one file each:
//! - `owner.rs`, the process owner: spawns the child as a process tree of its
//!   own, reaps it, kills the tree on drop;
//! - `pending.rs`, the requests in flight, with no IO;
//! - `input.rs`, the child's stdin: non-blocking writes from any thread, and a
//!   bounded queue for what the pipe did not take;
//! - `lines.rs`, stdout and stderr cut into lines, with no IO;
//! - `pump.rs`, the child's one thread, named `[toolbox/server]`: it spawns
//!   the child, then waits on its stdout, stderr, stdin (when bytes are
//!   queued), its exit and a wake-up, all at once (`sys::Watch`), with the
//!   earliest call deadline as the timeout; it runs the stop sequence too;
//! - `incoming.rs`, what a stdout line means: a response (forwarded results go
//!   straight to the host from the child's thread), a ping, progress, a log
//!   message, a list change;
//! - `handshake.rs`, the opening: `initialize`, or the modern era's
//!   `server/discover` for a server that refuses it, then `tools/list`;
//! - `era.rs`, which era a server speaks and the modern era's `_meta`, with no IO.
//!
//! This file is the connection: the API the rest of the workbench calls, from
//! any thread, and the state it shares with the child's thread.

pub(crate) mod era;
mod handshake;
mod incoming;
mod input;
mod lines;
mod owner;
mod pending;
mod pump;
pub(crate) mod result_cap;

pub(crate) use input::WriteError;
pub(crate) use pump::STOP_GRACE;

use crate::lock;
use crate::protocol::framing;
use crate::protocol::jsonrpc::{self, ErrorObject, RequestId};
use crate::protocol::mcp::{method, TextResult, ToolEntry};
use crate::sys::{self, Stdin, Tree, Waker, Watch};
use crate::wire::outbox::Outbox;
use crate::wire::trace;
use crate::wire::SessionId;
use crossbeam_channel::{bounded, RecvTimeoutError, Sender};
use era::{Era, Modern};
use input::Input;
use owner::Owner;
use pending::{Call, Entry, Pending};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::thread::{self, JoinHandle, ThreadId};
use std::time::{Duration, Instant};

/// Stderr lines kept for error messages.
const TAIL_LINES: usize = 10;
/// Longest stderr line kept (the rest of the line is dropped).
const TAIL_LINE_BYTES: usize = 400;
/// The longest a stop waits for the child's thread to run the stop sequence.
pub(crate) const STOP_LIMIT: Duration = Duration::from_secs(2 * STOP_GRACE.as_secs() + 2);
/// The child's thread parses its stdout lines with serde_json, whose
/// recursion takes stack.
const THREAD_STACK: usize = 512 * 1024;

/// Everything needed to start one server, with environment references resolved.
#[derive(Debug, Clone)]
pub(crate) struct Spec {
    pub toolbox: String,
    pub server: String,
    pub program: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: Option<String>,
    /// The command as written in the config (unexpanded, so safe to show).
    pub command_display: String,
    /// `cwd` as written in the config, with its JSON path (safe to show).
    pub cwd_display: Option<String>,
    pub startup_timeout: Duration,
    pub call_timeout: Duration,
    /// The longest a call may run, however much progress it reports.
    pub max_call_timeout: Duration,
    /// `maxResultChars`: longer text results are cut (`result_cap`).
    pub max_result_chars: Option<usize>,
}

/// Why a request to a child produced no result.
#[derive(Debug, Clone)]
pub(crate) enum Failure {
    /// The child answered with a JSON-RPC error.
    Rpc(ErrorObject),
    /// No answer before the deadline.
    Timeout,
    /// The child is gone (or was stopped); the text says how.
    Down(String),
}

/// Whether a child is idle (`Downstream::idle_since`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Idle {
    /// A forwarded call is in flight.
    Busy,
    /// No call has been in flight since then.
    Since(Instant),
    /// It is gone, being stopped, or retiring.
    NotServing,
}

/// Why `forward_call` did not take a call.
#[derive(Debug)]
pub(crate) enum Refused {
    /// The child is gone or going: a restart may serve the call.
    Down(String),
    /// The child is alive but has not read what it was sent.
    Busy(String),
}

/// The `tools/call` params sent to a child; `M` is the `_meta`: the host's
/// map (legacy), or `era::CallMeta` (modern).
#[derive(serde::Serialize)]
struct CallParams<'a, M = Cow<'a, Map<String, Value>>> {
    name: &'a str,
    arguments: &'a RawValue,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<M>,
}

/// Where the child is in its life, as the other threads see it.
#[derive(Debug, Clone, Copy)]
enum Life {
    Serving,
    /// A stop was asked for; the child's thread runs the sequence.
    Stopping,
    /// The child's thread has ended: the process is reaped.
    Stopped,
}

struct Shared {
    pending: Pending,
    /// The deadline the child's thread sleeps towards, if any.
    armed: Option<Instant>,
    life: Life,
}

/// A running (or crashed) child MCP server.
pub(crate) struct Downstream {
    spec: Spec,
    label: String,
    /// The child's processes and thread (`None` in the unit tests, which feed
    /// the connection's events by hand).
    link: Option<Link>,
    outbox: Arc<Outbox>,
    input: Input,
    shared: Mutex<Shared>,
    /// Told when `life` becomes `Stopped`.
    stopped: Condvar,
    /// Ends the child's thread's wait early: a stop, an earlier deadline.
    waker: Waker,
    tail: Mutex<VecDeque<String>>,
    tools_changed: AtomicBool,
    /// When the child last said its tools changed.
    last_change: Mutex<Instant>,
    /// Whether the child declared the `logging` capability.
    logging: AtomicBool,
    /// Set once the child turned out to speak the modern era (2026-07-28):
    /// every request then carries the era's `_meta`. Unset: legacy.
    modern: OnceLock<Modern>,
    /// The era and version agreed on, once the handshake is done.
    era: OnceLock<Era>,
    /// The host's log level, which a modern child gets in each request's
    /// `_meta` (the modern era has no `logging/setLevel`).
    modern_log_level: Mutex<Option<String>>,
    /// Told (without blocking) when the child says its tools changed.
    changes: Option<Sender<Arc<Downstream>>>,
    /// This connection, for the change reports (set once at spawn).
    me: Weak<Downstream>,
}

/// A connection's child: its processes and the thread that watches them.
struct Link {
    /// Shared with the owner, so that a stop can kill the processes even
    /// while the child's thread is held up writing to the host.
    tree: Arc<Tree>,
    /// Until someone joins it.
    thread: Mutex<Option<JoinHandle<()>>>,
    thread_id: ThreadId,
}

/// A started server: its connection and its tools (all pages, unfiltered).
pub(crate) struct Started {
    pub conn: Arc<Downstream>,
    pub tools: Vec<ToolEntry>,
    /// From spawn to the end of the tool listing.
    pub startup: Duration,
    /// The era the server speaks, and the revision agreed on.
    pub era: Era,
}

impl Downstream {
    /// Spawns the child, performs the MCP handshake and lists its tools, all
    /// within `startup_timeout`. On failure the child is stopped in the
    /// background: the caller gets the answer at the deadline, not after the
    /// stop sequence. `admit` sees the connection right after the spawn;
    /// returning false stops it again (the workbench is shutting down).
    /// `known` is the era this server definition was found to speak earlier
    /// in the run, if it was: the opening goes straight to it.
    pub(crate) fn start(
        spec: Spec,
        outbox: Arc<Outbox>,
        changes: Option<Sender<Arc<Downstream>>>,
        known: Option<&Era>,
        admit: impl FnOnce(&Arc<Downstream>) -> bool,
    ) -> Result<Started, String> {
        let began = Instant::now();
        let deadline = began + spec.startup_timeout;
        let conn = Downstream::spawn(spec, outbox, changes)?;
        if !admit(&conn) {
            conn.stop("");
            return Err("the workbench is shutting down".to_string());
        }
        match conn.handshake(known, deadline) {
            Ok((era, tools)) => Ok(Started {
                era: conn.era.get_or_init(|| era).clone(),
                conn,
                tools,
                startup: began.elapsed(),
            }),
            Err(failure) => {
                let reason = conn.describe(&failure, "starting");
                conn.stop_in_background();
                Err(reason)
            }
        }
    }

    fn spawn(
        spec: Spec,
        outbox: Arc<Outbox>,
        changes: Option<Sender<Arc<Downstream>>>,
    ) -> Result<Arc<Downstream>, String> {
        let mut cmd = sys::command(&spec.program, &spec.env);
        cmd.args(&spec.args)
            .env_clear()
            .envs(&spec.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(cwd) = &spec.cwd {
            cmd.current_dir(cwd);
        }
        let (spawned_tx, spawned_rx) = bounded::<io::Result<(Stdin, Waker, Arc<Tree>)>>(1);
        let (conn_tx, conn_rx) = bounded::<Arc<Downstream>>(1);
        let thread = thread::Builder::new()
            .name(format!("[{}/{}]", spec.toolbox, spec.server))
            .stack_size(THREAD_STACK)
            .spawn(move || {
                // Spawned here so that PR_SET_PDEATHSIG follows this thread's life.
                let (owner, watch) = match Downstream::spawn_child(cmd) {
                    Ok((owner, watch, stdin, waker)) => {
                        let tree = Arc::clone(owner.tree());
                        let _ = spawned_tx.send(Ok((stdin, waker, tree)));
                        (owner, watch)
                    }
                    Err(e) => {
                        let _ = spawned_tx.send(Err(e));
                        return;
                    }
                };
                // Without a connection (it could not be made) the owner's
                // drop kills the child.
                if let Ok(conn) = conn_rx.recv() {
                    conn.run(owner, watch);
                }
            })
            .map_err(|e| format!("cannot create a thread: {e}"))?;
        let (stdin, waker, tree) = match spawned_rx.recv() {
            Ok(Ok(spawned)) => spawned,
            Ok(Err(e)) => {
                let _ = thread.join();
                return Err(format!("cannot start '{}': {e}", spec.command_display));
            }
            Err(_) => return Err("the spawning thread died".to_string()),
        };
        let link = Link {
            tree,
            thread_id: thread.thread().id(),
            thread: Mutex::new(Some(thread)),
        };
        let conn = Downstream::connect(spec, outbox, changes, stdin, waker, Some(link));
        let _ = conn_tx.send(Arc::clone(&conn));
        log::info!(
            "[{}] started '{}' (pid {})",
            conn.label,
            conn.spec.command_display,
            conn.pid()
        );
        Ok(conn)
    }

    /// The connection around a child's stdin and its thread's waker.
    fn connect(
        spec: Spec,
        outbox: Arc<Outbox>,
        changes: Option<Sender<Arc<Downstream>>>,
        stdin: Stdin,
        waker: Waker,
        link: Option<Link>,
    ) -> Arc<Downstream> {
        Arc::new_cyclic(|me| Downstream {
            label: format!("{}/{}", spec.toolbox, spec.server),
            link,
            outbox,
            input: Input::new(stdin, waker.clone()),
            shared: Mutex::new(Shared {
                pending: Pending::default(),
                armed: None,
                life: Life::Serving,
            }),
            stopped: Condvar::new(),
            waker,
            tail: Mutex::new(VecDeque::new()),
            tools_changed: AtomicBool::new(false),
            last_change: Mutex::new(Instant::now()),
            logging: AtomicBool::new(false),
            modern: OnceLock::new(),
            era: OnceLock::new(),
            modern_log_level: Mutex::new(None),
            changes,
            me: me.clone(),
            spec,
        })
    }

    /// The pid of the child's first process (0 without a child).
    pub(crate) fn pid(&self) -> u32 {
        self.link.as_ref().map_or(0, |link| link.tree.pid())
    }

    /// Spawns the child and sets up the watch on its pipes (on the child's
    /// thread).
    fn spawn_child(cmd: std::process::Command) -> io::Result<(Owner, Watch, Stdin, Waker)> {
        let owner::Spawned {
            owner,
            stdin,
            stdout,
            stderr,
        } = Owner::spawn(cmd)?;
        let (watch, waker) = Watch::new(owner.tree().pid(), stdout, stderr)?;
        Ok((owner, watch, Stdin::new(stdin)?, waker))
    }

    /// The era the child speaks, once its handshake is done (for `status`).
    pub(crate) fn era(&self) -> Option<&Era> {
        self.era.get()
    }

    /// The host's log level for a modern child's requests.
    fn modern_log_level(&self) -> Option<String> {
        lock(&self.modern_log_level).clone()
    }

    /// When the child last said its tools changed.
    pub(crate) fn last_change(&self) -> Instant {
        *lock(&self.last_change)
    }

    /// Whether the child said its tool list changed since the last listing.
    pub(crate) fn tools_changed(&self) -> bool {
        self.tools_changed.load(Ordering::Relaxed)
    }

    /// Sends a request and waits for its result until `deadline`.
    fn request(
        &self,
        method: &str,
        params: &Value,
        deadline: Instant,
    ) -> Result<Box<RawValue>, Failure> {
        let (tx, rx) = bounded(1);
        let id = lock(&self.shared)
            .pending
            .register(Entry::Wait(tx))
            .map_err(Failure::Down)?;
        let line = jsonrpc::request_line(&RequestId::Int(id), method, params);
        match self.write(line) {
            // A child that died says how (exit status, stderr) when its
            // thread sees the exit, which fails this request: wait.
            Ok(()) | Err(WriteError::Io(_)) => {}
            Err(e) => {
                lock(&self.shared).pending.complete(id);
                return Err(Failure::Down(e.to_string()));
            }
        }
        match rx.recv_deadline(deadline) {
            Ok(reply) => reply,
            Err(RecvTimeoutError::Timeout) => {
                lock(&self.shared).pending.complete(id);
                Err(Failure::Timeout)
            }
            Err(RecvTimeoutError::Disconnected) => Err(Failure::Down("stopped".into())),
        }
    }

    fn notify(&self, method: &str) {
        let line = jsonrpc::notification_line::<Value>(method, None);
        if let Err(e) = self.write(line) {
            log::debug!("[{}] cannot send {method}: {e}", self.label);
        }
    }

    /// Forwards a host's `tools/call`; the answer reaches the host from the
    /// child's thread (its result, its deadline, its end) or from `stop`. `meta` is the host's `_meta`
    /// without its progress token; `progress_token` is that token, if any.
    /// When the call is refused, nothing was sent and nobody else answers it.
    pub(crate) fn forward_call(
        &self,
        upstream_id: RequestId,
        (session, reply): (SessionId, &Arc<Outbox>),
        tool: &str,
        arguments: &RawValue,
        meta: &Map<String, Value>,
        progress_token: Option<&Value>,
    ) -> Result<(), Refused> {
        let has_token = progress_token.is_some();
        let call = Call::new(
            upstream_id,
            (session, Arc::clone(reply)),
            tool,
            progress_token.cloned(),
            self.spec.call_timeout,
            self.spec.max_call_timeout,
        );
        let deadline = call.deadline;
        let id = {
            let mut shared = lock(&self.shared);
            let id = shared
                .pending
                .register(Entry::Call(call))
                .map_err(Refused::Down)?;
            if shared.armed.is_none_or(|armed| deadline < armed) {
                shared.armed = Some(deadline);
                self.waker.wake();
            }
            id
        };
        let line = if let Some(modern) = self.modern.get() {
            let log_level = lock(&self.modern_log_level);
            let params = CallParams {
                name: tool,
                arguments,
                meta: Some(era::CallMeta {
                    host: meta,
                    progress_token: has_token.then_some(id),
                    modern,
                    log_level: log_level.as_deref(),
                }),
            };
            jsonrpc::request_line(&RequestId::Int(id), method::TOOLS_CALL, &params)
        } else {
            let meta = if has_token {
                let mut meta = meta.clone();
                meta.insert("progressToken".into(), Value::from(id));
                Some(Cow::Owned(meta))
            } else {
                (!meta.is_empty()).then_some(Cow::Borrowed(meta))
            };
            let params = CallParams {
                name: tool,
                arguments,
                meta,
            };
            jsonrpc::request_line(&RequestId::Int(id), method::TOOLS_CALL, &params)
        };
        let Err(e) = self.write(line) else {
            return Ok(());
        };
        // The child may have died (or been stopped) meanwhile, and whoever
        // noticed has answered this call already: refuse only if we still own it.
        if lock(&self.shared).pending.complete(id).is_none() {
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
        if !self.logging.load(Ordering::Relaxed) {
            return;
        }
        if self.modern.get().is_some() {
            *lock(&self.modern_log_level) = Some(level.to_string());
            return;
        }
        let Ok(id) = lock(&self.shared).pending.register(Entry::Discard) else {
            return;
        };
        let params = json!({ "level": level });
        let _ = self.write(jsonrpc::request_line(
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
        let (id, drained) = {
            let mut shared = lock(&self.shared);
            (
                shared.pending.cancel(upstream_id, session),
                shared.pending.take_drained(),
            )
        };
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
        let (calls, drained) = {
            let mut shared = lock(&self.shared);
            (
                shared.pending.take_calls_of(session),
                shared.pending.take_drained(),
            )
        };
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

    fn tell_cancelled(&self, id: i64, reason: Option<&str>) {
        let mut params = json!({ "requestId": id });
        if let Some(reason) = reason {
            params["reason"] = json!(reason);
        }
        let _ = self.write(jsonrpc::notification_line(method::CANCELLED, Some(&params)));
    }

    /// Whether the child is still serving: not gone, not retiring, and still
    /// taking input.
    pub(crate) fn is_up(&self) -> bool {
        lock(&self.shared).pending.refusing().is_none() && !self.input.is_broken()
    }

    /// Why the child is not serving, if it is not.
    pub(crate) fn down_reason(&self) -> Option<String> {
        lock(&self.shared).pending.refusing().map(str::to_string)
    }

    /// Whether the child is gone or being stopped (not merely retiring).
    fn is_closed(&self) -> bool {
        lock(&self.shared).pending.closed().is_some()
    }

    /// Since when no call has been in flight, while the child serves calls.
    pub(crate) fn idle_since(&self) -> Idle {
        let shared = lock(&self.shared);
        if shared.pending.refusing().is_some() {
            return Idle::NotServing;
        }
        shared.pending.quiet_since().map_or(Idle::Busy, Idle::Since)
    }

    /// Falls asleep if no call has been in flight for `timeout`: from then on
    /// the child refuses requests (calls wait for a new start), and the caller
    /// stops it. False, and nothing changes, if it is not idle that long.
    pub(crate) fn retire_if_idle(&self, timeout: Duration) -> bool {
        let mut shared = lock(&self.shared);
        let idle = shared.pending.refusing().is_none()
            && shared
                .pending
                .quiet_since()
                .is_some_and(|since| since.elapsed() >= timeout);
        if idle {
            shared.pending.retire("asleep");
            shared.pending.take_drained(); // the caller stops it
        }
        idle
    }

    /// No longer serves new requests (they wait for a new start): the child
    /// answers the calls in flight, then stops, in the background.
    pub(crate) fn retire(&self, why: &str) {
        let drained = {
            let mut shared = lock(&self.shared);
            shared.pending.retire(why);
            shared.pending.take_drained()
        };
        if drained {
            self.stop_drained();
        }
    }

    /// A retiring child answered its last call: stop it, in the background.
    fn stop_drained(&self) {
        log::info!(
            "[{}] stopping: {}",
            self.label,
            self.down_reason().unwrap_or_default()
        );
        self.stop_in_background();
    }

    fn write(&self, line: Vec<u8>) -> Result<(), WriteError> {
        if log::log_enabled!(log::Level::Debug) {
            log::debug!("[{}] <- {}", self.label, framing::preview(&line));
        }
        if trace::enabled() {
            trace::record(trace::Dir::WorkbenchToChild, Some(&self.label), &line);
        }
        self.input.write(line)
    }

    /// The child died or closed its stdout: fail what is in flight, once, with
    /// `why` and its last stderr lines. A stop in progress has done it already.
    fn went_down(&self, why: String) {
        if self.is_closed() {
            return;
        }
        let tail = self.tail_text();
        let (server, toolbox) = (&self.spec.server, &self.spec.toolbox);
        let closed = self.fail_in_flight(&why, |tool| {
            format!("Server '{server}' in toolbox '{toolbox}' failed while running tool '{tool}': {why}{tail}")
        });
        if closed {
            log::warn!("[{}] {why}", self.label);
        }
    }

    /// Closes the pending table with `why` and answers everything in flight
    /// once: a forwarded call with `text(its tool)` as its `isError` text.
    /// False when the table was closed already.
    fn fail_in_flight(&self, why: &str, text: impl Fn(&str) -> String) -> bool {
        let entries = {
            let mut shared = lock(&self.shared);
            if shared.pending.closed().is_some() {
                return false;
            }
            shared.pending.fail_all(why)
        };
        for entry in entries {
            let text = match &entry {
                Entry::Call(call) => text(&call.tool),
                Entry::Wait(_) | Entry::Discard => String::new(),
            };
            self.fail(entry, Failure::Down(why.to_string()), &text);
        }
        true
    }

    /// Stops the child: fails what is in flight with `in_flight` as the
    /// message (or a generic one when empty), then the child's thread runs the
    /// stop sequence. Safe to call more than once and from several threads:
    /// each returns once the child is gone (on the child's own thread it only
    /// asks). A child's thread held up writing to a host that does not read
    /// cannot run the sequence: after `STOP_LIMIT` the tree is killed from here.
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
        let mut shared = lock(&self.shared);
        while !matches!(shared.life, Life::Stopped) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                drop(shared);
                log::warn!(
                    "[{}] its thread is held up (writing to the host?): killing its processes from here",
                    self.label
                );
                link.tree.kill();
                return;
            }
            shared = self
                .stopped
                .wait_timeout(shared, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        drop(shared);
        if let Some(thread) = lock(&link.thread).take() {
            let _ = thread.join();
        }
    }

    /// Starts the stop without waiting for it: a failed start answers at its
    /// deadline, not after the stop sequence.
    pub(crate) fn stop_in_background(&self) {
        self.ask_to_stop("");
    }

    /// Fails what is in flight, and asks the child's thread to stop the child.
    pub(crate) fn ask_to_stop(&self, in_flight: &str) {
        // A process that ended by itself crashed, whoever noticed first (a
        // write that met a closed pipe makes the caller restart it at once,
        // maybe before the child's thread has seen the exit).
        if let Some(exit) = self.link.as_ref().and_then(|link| link.tree.exited()) {
            self.went_down(format!("the server process ended ({exit})"));
        }
        let (server, toolbox) = (&self.spec.server, &self.spec.toolbox);
        self.fail_in_flight("stopped", |tool| match in_flight {
            "" => format!(
                "Server '{server}' in toolbox '{toolbox}' was stopped while tool '{tool}' was running"
            ),
            text => text.replace("{tool}", tool),
        });
        {
            let mut shared = lock(&self.shared);
            if let Life::Serving = shared.life {
                shared.life = Life::Stopping;
            }
        }
        self.waker.wake();
    }

    /// Completes one pending entry with `failure`; for forwarded calls `text` is
    /// the `isError` text the host receives.
    fn fail(&self, entry: Entry, failure: Failure, text: &str) {
        match entry {
            Entry::Wait(tx) => {
                let _ = tx.send(Err(failure));
            }
            Entry::Discard => {}
            Entry::Call(call) => {
                let result = TextResult::error(text);
                call.reply
                    .send(&jsonrpc::result_line(&call.upstream_id, &result));
            }
        }
    }

    /// A sentence describing a failed request, with the stderr tail if the
    /// child is gone.
    pub(crate) fn describe(&self, failure: &Failure, doing: &str) -> String {
        match failure {
            Failure::Rpc(e) => format!("error {} while {doing}: {}", e.code, e.text()),
            Failure::Timeout => format!(
                "no answer within {} ms while {doing}{}",
                self.spec.startup_timeout.as_millis(),
                self.tail_text()
            ),
            Failure::Down(why) => format!("{why}{}", self.tail_text()),
        }
    }

    fn tail_text(&self) -> String {
        let tail = lock(&self.tail);
        if tail.is_empty() {
            return String::new();
        }
        let mut text = String::from("\nLast stderr lines:");
        for line in tail.iter() {
            text.push_str("\n  ");
            text.push_str(line);
        }
        text
    }
}

/// Limits how many lines of a child's stderr or stdout noise are logged: a
/// child that floods must not slow the workbench down through its own logs.
struct LogBudget {
    what: &'static str,
    window: Instant,
    logged: u32,
    dropped: u64,
}

impl LogBudget {
    const PER_SECOND: u32 = 200;

    fn new(what: &'static str) -> LogBudget {
        LogBudget {
            what,
            window: Instant::now(),
            logged: 0,
            dropped: 0,
        }
    }

    /// Whether the next line may be logged; reports what was dropped.
    fn allow(&mut self, label: &str) -> bool {
        if self.window.elapsed() >= Duration::from_secs(1) {
            if self.dropped > 0 {
                log::warn!(
                    "[{label}] {} {} lines were not logged (flood)",
                    self.dropped,
                    self.what
                );
            }
            *self = LogBudget::new(self.what);
        }
        self.logged += 1;
        if self.logged > Self::PER_SECOND {
            self.dropped += 1;
        }
        self.logged <= Self::PER_SECOND
    }
}

impl std::fmt::Debug for Downstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Downstream({}, pid {})", self.label, self.pid())
    }
}

// The child's stdin is a plain pipe here. Tests, though not under
// `cfg(test)` alone, which is all clippy takes for tests.
#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
