//! One downstream MCP server: a child process, its threads, and the requests in
//! flight to it (contract §7).
//!
//! Threads per child, all named `[toolbox/server] ...`:
//! - the *reader* spawns the child (so the parent-death signal is tied to a thread
//!   that lives as long as the child), then reads its stdout. It answers the
//!   child's requests, delivers responses to waiting callers over crossbeam
//!   channels, and writes responses to forwarded tool calls straight to the host
//!   through the `Outbox` (no extra thread hand-off on the hot path);
//! - the *stderr drain* reads stderr continuously, logs it and keeps its tail;
//! - the *timer* enforces the deadlines of forwarded calls; it sleeps until the
//!   earliest deadline and is only woken when an earlier one appears.
//!
//! Requests are correlated by the ids this side allocates (1, 2, 3, ...), so the
//! host's ids never reach the child.
//!
//! This file holds the connection and the calls made on it; `reader.rs`,
//! `stderr.rs` and `timer.rs` hold the code of the three threads.

mod reader;
mod stderr;
mod timer;

use crate::jsonrpc::{self, ErrorObject, RequestId};
use crate::mcp::{
    self, method, InitializeResult, ListToolsResult, TextResult, ToolEntry, ToolHead,
};
use crate::outbox::Outbox;
use crate::{framing, process, trace};
use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::{self, BufRead, BufReader, Read};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// How long a stopping child gets after stdin is closed, and again after SIGTERM.
pub const STOP_GRACE: Duration = Duration::from_secs(2);
/// Stderr lines kept for error messages.
const TAIL_LINES: usize = 10;
/// Longest stderr line kept (the rest of the line is dropped).
const TAIL_LINE_BYTES: usize = 400;
const SMALL_STACK: usize = 128 * 1024;
const READER_STACK: usize = 512 * 1024;

/// Everything needed to start one server, with environment references resolved.
#[derive(Debug, Clone)]
pub struct Spec {
    pub toolbox: String,
    pub server: String,
    pub program: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: Option<String>,
    /// The command as written in the config (unexpanded, so safe to show).
    pub command_display: String,
    pub startup_timeout: Duration,
    pub call_timeout: Duration,
}

/// Why a request to a child produced no result.
#[derive(Debug, Clone)]
pub enum Failure {
    /// The child answered with a JSON-RPC error.
    Rpc(ErrorObject),
    /// No answer before the deadline.
    Timeout,
    /// The child is gone (or was stopped); the text says how.
    Down(String),
}

/// A `tools/call` forwarded for the host: its answer goes straight upstream.
struct Call {
    upstream_id: RequestId,
    tool: String,
    deadline: Instant,
    /// The host's progress token; the child gets this call's own id instead.
    progress_token: Option<Value>,
}

/// The `tools/call` params sent to a child.
#[derive(serde::Serialize)]
struct CallParams<'a> {
    name: &'a str,
    arguments: &'a RawValue,
    #[serde(rename = "_meta", skip_serializing_if = "Map::is_empty")]
    meta: Map<String, Value>,
}

enum Pending {
    Wait(Sender<Result<Box<RawValue>, Failure>>),
    Call(Call),
    /// A request whose answer nobody needs (`logging/setLevel`).
    Discard,
}

#[derive(Default)]
struct Shared {
    next_id: i64,
    pending: HashMap<i64, Pending>,
    /// The deadline the timer thread is sleeping towards, if any.
    armed: Option<Instant>,
    /// Set once the child is gone or being stopped: why.
    down: Option<String>,
}

/// A running (or crashed) child MCP server.
pub struct Downstream {
    spec: Spec,
    label: String,
    pid: u32,
    outbox: Arc<Outbox>,
    stdin: Mutex<Option<ChildStdin>>,
    shared: Mutex<Shared>,
    timer_wake: Condvar,
    tail: Mutex<VecDeque<String>>,
    /// Disconnects when the stderr drain ends.
    stderr_done: Receiver<()>,
    child: Mutex<Option<Child>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    tools_changed: std::sync::atomic::AtomicBool,
    /// Whether the child declared the `logging` capability.
    logging: std::sync::atomic::AtomicBool,
    /// Told (without blocking) when the child says its tools changed.
    changes: Option<Sender<()>>,
}

/// A started server: its connection and its tools (all pages, unfiltered).
pub struct Started {
    pub conn: Arc<Downstream>,
    pub tools: Vec<ToolEntry>,
    /// From spawn to the end of the tool listing.
    pub startup: Duration,
}

impl Downstream {
    /// Spawns the child, performs the MCP handshake and lists its tools, all
    /// within `startup_timeout`. On failure nothing is left running.
    /// `admit` sees the connection right after the spawn; returning false stops
    /// it again (the workbench is shutting down).
    pub fn start(
        spec: Spec,
        outbox: Arc<Outbox>,
        changes: Option<Sender<()>>,
        admit: impl FnOnce(&Arc<Downstream>) -> bool,
    ) -> Result<Started, String> {
        let began = Instant::now();
        let deadline = began + spec.startup_timeout;
        let conn = Downstream::spawn(spec, outbox, changes)?;
        if !admit(&conn) {
            conn.stop("");
            return Err("the workbench is shutting down".to_string());
        }
        match conn.handshake(deadline) {
            Ok(tools) => Ok(Started {
                conn,
                tools,
                startup: began.elapsed(),
            }),
            Err(failure) => {
                let reason = conn.describe(&failure, "starting");
                conn.stop("");
                Err(reason)
            }
        }
    }

    fn spawn(
        spec: Spec,
        outbox: Arc<Outbox>,
        changes: Option<Sender<()>>,
    ) -> Result<Arc<Downstream>, String> {
        let label = format!("{}/{}", spec.toolbox, spec.server);
        let mut cmd = Command::new(&spec.program);
        cmd.args(&spec.args)
            .env_clear()
            .envs(&spec.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(cwd) = &spec.cwd {
            cmd.current_dir(cwd);
        }
        process::configure(&mut cmd);

        let (child_tx, child_rx) = bounded::<io::Result<Child>>(1);
        let (conn_tx, conn_rx) = bounded::<(Arc<Downstream>, ChildStdout)>(1);
        let reader = thread::Builder::new()
            .name(format!("[{label}] reader"))
            .stack_size(READER_STACK)
            .spawn(move || {
                // Spawned here so that PR_SET_PDEATHSIG follows this thread's life.
                let _ = child_tx.send(cmd.spawn());
                if let Ok((conn, stdout)) = conn_rx.recv() {
                    conn.read_stdout(stdout);
                }
            })
            .map_err(|e| format!("cannot create a thread: {e}"))?;
        let mut child = match child_rx.recv() {
            Ok(Ok(child)) => child,
            Ok(Err(e)) => {
                drop(conn_tx); // lets the reader thread end
                let _ = reader.join();
                return Err(format!("cannot start '{}': {e}", spec.command_display));
            }
            Err(_) => return Err("the spawning thread died".to_string()),
        };
        let pid = child.id();
        let (stdin, stdout, stderr) =
            match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
                (Some(i), Some(o), Some(e)) => (i, o, e),
                _ => unreachable!("all three pipes were requested"),
            };
        let (done_tx, stderr_done) = bounded::<()>(0);
        let conn = Arc::new(Downstream {
            label: label.clone(),
            pid,
            outbox,
            stdin: Mutex::new(Some(stdin)),
            shared: Mutex::new(Shared {
                next_id: 1,
                ..Shared::default()
            }),
            timer_wake: Condvar::new(),
            tail: Mutex::new(VecDeque::new()),
            stderr_done,
            child: Mutex::new(Some(child)),
            threads: Mutex::new(Vec::new()),
            tools_changed: Default::default(),
            logging: Default::default(),
            changes,
            spec,
        });
        let mut threads = vec![reader];
        let drain = Arc::clone(&conn);
        let timer = Arc::clone(&conn);
        let spawned = thread::Builder::new()
            .name(format!("[{label}] stderr"))
            .stack_size(SMALL_STACK)
            .spawn(move || {
                drain.drain_stderr(stderr);
                drop(done_tx);
            })
            .and_then(|h| {
                threads.push(h);
                thread::Builder::new()
                    .name(format!("[{label}] timer"))
                    .stack_size(SMALL_STACK)
                    .spawn(move || timer.run_timer())
            });
        match spawned {
            Ok(h) => threads.push(h),
            Err(e) => {
                conn.stop("");
                return Err(format!("cannot create a thread: {e}"));
            }
        }
        *lock(&conn.threads) = threads;
        let _ = conn_tx.send((Arc::clone(&conn), stdout));
        log::info!(
            "[{label}] started '{}' (pid {pid})",
            conn.spec.command_display
        );
        Ok(conn)
    }

    fn handshake(&self, deadline: Instant) -> Result<Vec<ToolEntry>, Failure> {
        let params = json!({
            "protocolVersion": mcp::LATEST_VERSION,
            "capabilities": {},
            "clientInfo": {"name": mcp::NAME, "version": mcp::VERSION},
        });
        let raw = self.request(method::INITIALIZE, &params, deadline)?;
        let init: InitializeResult = serde_json::from_str(raw.get())
            .map_err(|e| Failure::Down(format!("sent an invalid initialize result: {e}")))?;
        if !mcp::SUPPORTED_VERSIONS.contains(&init.protocol_version.as_str()) {
            return Err(Failure::Down(format!(
                "answered with protocol version '{}', which the workbench does not support (supported: {})",
                init.protocol_version,
                mcp::SUPPORTED_VERSIONS.join(", ")
            )));
        }
        self.logging.store(
            init.capabilities.logging.is_some(),
            std::sync::atomic::Ordering::Relaxed,
        );
        self.notify(method::INITIALIZED);
        self.list_tools(deadline)
    }

    /// All pages of `tools/list`, following `nextCursor`.
    pub fn list_tools(&self, deadline: Instant) -> Result<Vec<ToolEntry>, Failure> {
        self.tools_changed
            .store(false, std::sync::atomic::Ordering::Relaxed);
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        loop {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let raw = self.request(method::TOOLS_LIST, &params, deadline)?;
            let page: ListToolsResult = serde_json::from_str(raw.get())
                .map_err(|e| Failure::Down(format!("sent an invalid tools/list result: {e}")))?;
            for tool in page.tools {
                match serde_json::from_str::<ToolHead>(tool.get()) {
                    Ok(head) => tools.push(ToolEntry {
                        name: head.name,
                        raw: tool,
                    }),
                    Err(e) => log::warn!("[{}] skipping a tool without a name: {e}", self.label),
                }
            }
            match page.next_cursor {
                Some(next) if !seen.insert(next.clone()) => {
                    return Err(Failure::Down(format!(
                        "repeated the tools/list cursor {next:?}"
                    )))
                }
                Some(next) => cursor = Some(next),
                None => return Ok(tools),
            }
        }
    }

    /// Whether the child said its tool list changed since the last listing.
    pub fn tools_changed(&self) -> bool {
        self.tools_changed
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Sends a request and waits for its result until `deadline`.
    fn request(
        &self,
        method: &str,
        params: &Value,
        deadline: Instant,
    ) -> Result<Box<RawValue>, Failure> {
        let (tx, rx) = bounded(1);
        let id = {
            let mut shared = lock(&self.shared);
            if let Some(why) = &shared.down {
                return Err(Failure::Down(why.clone()));
            }
            let id = shared.next_id;
            shared.next_id += 1;
            shared.pending.insert(id, Pending::Wait(tx));
            id
        };
        let line = jsonrpc::request_line(&RequestId::Int(id), method, params);
        if let Err(e) = self.write(&line) {
            // A child that died says how (exit status, stderr) when the reader
            // sees its stdout close, which fails this request; so wait for that.
            log::debug!("[{}] cannot write {method}: {e}", self.label);
        }
        match rx.recv_deadline(deadline) {
            Ok(reply) => reply,
            Err(RecvTimeoutError::Timeout) => {
                lock(&self.shared).pending.remove(&id);
                Err(Failure::Timeout)
            }
            Err(RecvTimeoutError::Disconnected) => Err(Failure::Down("stopped".into())),
        }
    }

    fn notify(&self, method: &str) {
        let line = jsonrpc::notification_line::<Value>(method, None);
        if let Err(e) = self.write(&line) {
            log::debug!("[{}] cannot send {method}: {e}", self.label);
        }
    }

    /// Forwards a host's `tools/call`; the answer reaches the host from the
    /// reader thread (or the timer, or `stop`). `meta` is the host's `_meta`
    /// without its progress token; `progress_token` is that token, if any.
    pub fn forward_call(
        &self,
        upstream_id: RequestId,
        tool: &str,
        arguments: &RawValue,
        mut meta: Map<String, Value>,
        progress_token: Option<Value>,
    ) -> Result<(), String> {
        let deadline = Instant::now() + self.spec.call_timeout;
        let id = {
            let mut shared = lock(&self.shared);
            if let Some(why) = &shared.down {
                return Err(why.clone());
            }
            let id = shared.next_id;
            shared.next_id += 1;
            if progress_token.is_some() {
                meta.insert("progressToken".into(), Value::from(id));
            }
            shared.pending.insert(
                id,
                Pending::Call(Call {
                    upstream_id,
                    tool: tool.to_string(),
                    deadline,
                    progress_token,
                }),
            );
            if shared.armed.is_none_or(|armed| deadline < armed) {
                shared.armed = Some(deadline);
                self.timer_wake.notify_one();
            }
            id
        };
        let params = CallParams {
            name: tool,
            arguments,
            meta,
        };
        let line = jsonrpc::request_line(&RequestId::Int(id), method::TOOLS_CALL, &params);
        if let Err(e) = self.write(&line) {
            // The child may have died (or been stopped) meanwhile, and whoever
            // noticed has answered this call already: answer only if we still own it.
            if lock(&self.shared).pending.remove(&id).is_none() {
                return Ok(());
            }
            return Err(self
                .down_reason()
                .unwrap_or_else(|| format!("cannot write to its stdin: {e}")));
        }
        Ok(())
    }

    /// Passes the host's `logging/setLevel` on, if the child supports logging.
    pub fn set_log_level(&self, level: &str) {
        if !self.logging.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let id = {
            let mut shared = lock(&self.shared);
            if shared.down.is_some() {
                return;
            }
            let id = shared.next_id;
            shared.next_id += 1;
            shared.pending.insert(id, Pending::Discard);
            id
        };
        let params = json!({ "level": level });
        let _ = self.write(&jsonrpc::request_line(
            &RequestId::Int(id),
            method::SET_LEVEL,
            &params,
        ));
    }

    /// The host cancelled `upstream_id`: if it is in flight here, forget it (no
    /// answer goes upstream) and tell the child (basic/utilities/cancellation).
    pub fn cancel(&self, upstream_id: &RequestId, reason: Option<&str>) -> bool {
        let found = {
            let mut shared = lock(&self.shared);
            let id = shared.pending.iter().find_map(|(id, p)| match p {
                Pending::Call(call) if call.upstream_id == *upstream_id => Some(*id),
                _ => None,
            });
            id.inspect(|id| {
                shared.pending.remove(id);
            })
        };
        let Some(id) = found else {
            return false;
        };
        let mut params = json!({ "requestId": id });
        if let Some(reason) = reason {
            params["reason"] = json!(reason);
        }
        let _ = self.write(&jsonrpc::notification_line(
            method::CANCELLED,
            Some(&params),
        ));
        true
    }

    /// Whether the child is still serving.
    pub fn is_up(&self) -> bool {
        lock(&self.shared).down.is_none()
    }

    /// Why the child is not serving, if it is not.
    pub fn down_reason(&self) -> Option<String> {
        lock(&self.shared).down.clone()
    }

    fn write(&self, line: &[u8]) -> io::Result<()> {
        if log::log_enabled!(log::Level::Debug) {
            log::debug!("[{}] <- {}", self.label, framing::preview(line));
        }
        if trace::enabled() {
            trace::record(trace::Dir::WorkbenchToChild, Some(&self.label), line);
        }
        match lock(&self.stdin).as_mut() {
            Some(stdin) => framing::write_line(stdin, line),
            None => Err(io::ErrorKind::BrokenPipe.into()),
        }
    }

    /// Stops the child (contract §7): fail what is in flight with `in_flight`
    /// as the message (or a generic one when empty), close stdin, wait, SIGTERM
    /// the process group, wait, SIGKILL, reap. Safe to call more than once.
    pub fn stop(&self, in_flight: &str) {
        let pending = {
            let mut shared = lock(&self.shared);
            shared.down.get_or_insert_with(|| "stopped".to_string());
            self.timer_wake.notify_one();
            std::mem::take(&mut shared.pending)
        };
        for (_, p) in pending {
            let text = match &p {
                Pending::Call(call) if !in_flight.is_empty() => {
                    in_flight.replace("{tool}", &call.tool)
                }
                Pending::Call(call) => format!(
                    "Server '{}' in toolbox '{}' was stopped while tool '{}' was running",
                    self.spec.server, self.spec.toolbox, call.tool
                ),
                Pending::Wait(_) | Pending::Discard => String::new(),
            };
            self.fail(p, Failure::Down("stopped".into()), &text);
        }
        drop(lock(&self.stdin).take());
        let Some(mut child) = lock(&self.child).take() else {
            return;
        };
        let exit = process::stop_group(self.pid, STOP_GRACE);
        let _ = child.wait();
        log::info!("[{}] stopped ({exit})", self.label);
        let mut threads = std::mem::take(&mut *lock(&self.threads));
        let deadline = Instant::now() + Duration::from_millis(200);
        while threads.iter().any(|t| !t.is_finished()) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(2));
        }
        for t in threads.drain(..) {
            if t.is_finished() {
                if let Err(panic) = t.join() {
                    std::panic::resume_unwind(panic);
                }
            } else {
                // A grandchild that left the process group still holds a pipe.
                log::warn!(
                    "[{}] a pipe is still held open; leaving its reader behind",
                    self.label
                );
            }
        }
    }

    /// Completes one pending entry with `failure`; for forwarded calls `text` is
    /// the `isError` text the host receives.
    fn fail(&self, pending: Pending, failure: Failure, text: &str) {
        match pending {
            Pending::Wait(tx) => {
                let _ = tx.send(Err(failure));
            }
            Pending::Discard => {}
            Pending::Call(call) => {
                let result = TextResult::error(text);
                self.outbox
                    .send(&jsonrpc::result_line(&call.upstream_id, &result));
            }
        }
    }

    /// A sentence describing a failed request, with the stderr tail if the
    /// child is gone.
    pub fn describe(&self, failure: &Failure, doing: &str) -> String {
        match failure {
            Failure::Rpc(e) => format!("error {} while {doing}: {}", e.code, e.message),
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

impl Drop for Downstream {
    /// A last resort: every owner calls `stop`, which leaves no child to kill here.
    fn drop(&mut self) {
        if let Some(mut child) = lock(&self.child).take() {
            process::signal_group(self.pid, libc::SIGKILL);
            let _ = child.wait();
        }
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

/// Locks a mutex, ignoring poisoning: every critical section here leaves the
/// data consistent, and a panic elsewhere must not cascade.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl std::fmt::Debug for Downstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Downstream({}, pid {})", self.label, self.pid)
    }
}
