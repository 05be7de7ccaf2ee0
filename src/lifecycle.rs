//! The toolbox lifecycle: opening, closing, restarting servers that died, and
//! (dynamic mode) listing a server's tools again. `Workbench` is the state every
//! thread that serves the host shares.
//!
//! Order and liveness:
//! - Each toolbox has a queue of lifecycle operations run by one worker thread
//!   at a time, so `open_toolbox X` then `close_toolbox X` run in the order the
//!   host sent them, and concurrent opens start each server once.
//! - Calls to a server that died wait in that queue for one restart of it, so
//!   a thousand calls to a dead server cost one thread, not a thousand; when no
//!   thread can be created, every queued call is answered with the error.
//! - A re-list runs with no lock held: an unanswered `tools/list` delays
//!   nothing but its own result.
//! - A request the host cancelled while it waited here gets no answer
//!   (basic/utilities/cancellation, 2025-06-18: the receiver SHOULD NOT respond).

use crate::config::{Mode, ServerConfig, ToolFilter};
use crate::downstream::{Downstream, Spec, Started};
use crate::dynamic::NativeTable;
use crate::forward::{self, ForwardedCall};
use crate::jsonrpc::{self, RequestId};
use crate::launch::{self, Launcher};
use crate::lock;
use crate::mcp::{self, method};
use crate::meta_tools::{self, Outcome};
use crate::open_result;
use crate::outbox::Outbox;
use crate::toolbox::{self, OpenToolbox, Registry, RunningServer, ServerState, Slot};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::Instant;

/// The state shared by every thread that serves the host.
pub struct Workbench {
    pub registry: Registry,
    pub launcher: Launcher,
    pub mode: Mode,
    pub outbox: Arc<Outbox>,
    /// The host sent `notifications/initialized`: list_changed may be sent.
    pub initialized: AtomicBool,
    /// The negotiated protocol version, once `initialize` was answered.
    pub version: OnceLock<&'static str>,
    /// Dynamic mode's native tools (empty in proxy mode).
    native: Mutex<Arc<NativeTable>>,
    /// One lifecycle queue per toolbox, in registry order.
    queues: Vec<Mutex<Queue>>,
    /// Host requests waiting here (queued opens, closes and calls): `true`
    /// once the host cancelled one.
    waiting: Mutex<HashMap<RequestId, bool>>,
}

#[derive(Default)]
struct Queue {
    ops: VecDeque<Op>,
    /// A worker thread is running this queue.
    busy: bool,
}

/// A lifecycle operation on one toolbox.
pub enum Op {
    /// `form`: the host's form of the result; `requested`: the tools whose
    /// full definitions the call asked for, if any (see `open_result`).
    Open {
        id: RequestId,
        form: open_result::Form,
        requested: Option<Vec<String>>,
    },
    Close(RequestId),
    /// Start server `server` again, then forward `calls` to it.
    Restart {
        server: usize,
        calls: Vec<ForwardedCall>,
    },
}

impl Workbench {
    pub fn new(registry: Registry, launcher: Launcher, mode: Mode, outbox: Arc<Outbox>) -> Self {
        let queues = registry.slots().iter().map(|_| Mutex::default()).collect();
        Workbench {
            registry,
            launcher,
            mode,
            outbox,
            initialized: AtomicBool::new(false),
            version: OnceLock::new(),
            native: Mutex::new(Arc::default()),
            queues,
            waiting: Mutex::new(HashMap::new()),
        }
    }

    pub fn native(&self) -> Arc<NativeTable> {
        Arc::clone(&lock(&self.native))
    }

    /// Whether results may carry `structuredContent` in this session (before
    /// `initialize`, the latest version is assumed).
    pub fn structured(&self) -> bool {
        mcp::has_structured_content(self.version.get().copied().unwrap_or(mcp::LATEST_VERSION))
    }

    /// Sends a meta-tool outcome as the `CallToolResult` of request `id`.
    pub fn send_outcome(&self, id: &RequestId, outcome: &Outcome) {
        let result = outcome.result(self.structured());
        self.outbox.send(&jsonrpc::result_line(id, &result));
    }

    /// The host cancelled `id`: if it waits here, it will get no answer.
    pub fn cancel(&self, id: &RequestId) -> bool {
        match lock(&self.waiting).get_mut(id) {
            Some(cancelled) => {
                *cancelled = true;
                true
            }
            None => false,
        }
    }

    /// `id` is done waiting here: whether it should be answered (not cancelled).
    fn finish(&self, id: &RequestId) -> bool {
        lock(&self.waiting).remove(id) == Some(false)
    }

    /// After an open, close or re-list: in dynamic mode, rebuild the native
    /// tools and, if they changed and the host is initialized, send one
    /// `notifications/tools/list_changed`.
    pub fn tools_changed(&self) {
        if self.mode != Mode::Dynamic {
            return;
        }
        let table = NativeTable::build(&self.registry);
        let changed = {
            let mut current = lock(&self.native);
            let changed = current.listing() != table.listing();
            *current = Arc::new(table);
            changed
        };
        if changed && self.initialized.load(Ordering::SeqCst) {
            let line = jsonrpc::notification_line::<()>(method::TOOLS_LIST_CHANGED, None);
            self.outbox.send(&line);
        }
    }
}

/// Queues `op` for toolbox `toolbox` (its registry index), starting a worker
/// for the queue if none runs. A restart joins a restart of the same server
/// that has not begun yet.
pub fn submit(wb: &Arc<Workbench>, toolbox: usize, op: Op) {
    for id in op.request_ids() {
        lock(&wb.waiting).insert(id.clone(), false);
    }
    let mut queue = lock(&wb.queues[toolbox]);
    match op {
        Op::Restart { server, calls } => {
            let waiting = queue.ops.iter_mut().find_map(|op| match op {
                Op::Restart { server: s, calls } if *s == server => Some(calls),
                _ => None,
            });
            match waiting {
                Some(waiting) => waiting.extend(calls),
                None => queue.ops.push_back(Op::Restart { server, calls }),
            }
        }
        op => queue.ops.push_back(op),
    }
    if queue.busy {
        return;
    }
    queue.busy = true;
    drop(queue);
    let worker = Arc::clone(wb);
    let name = format!("toolbox {}", wb.registry.slots()[toolbox].config.name);
    if let Err(e) = thread::Builder::new()
        .name(name)
        .spawn(move || run_queue(&worker, toolbox))
    {
        log::error!("cannot create a worker thread: {e}");
        let ops: Vec<Op> = {
            let mut queue = lock(&wb.queues[toolbox]);
            queue.busy = false;
            queue.ops.drain(..).collect()
        };
        let text = format!("The workbench cannot create a thread ({e}); try again later");
        for op in ops {
            for id in op.request_ids() {
                if wb.finish(id) {
                    wb.send_outcome(id, &Outcome::error(text.clone()));
                }
            }
        }
    }
}

impl Op {
    fn request_ids(&self) -> Vec<&RequestId> {
        match self {
            Op::Open { id, .. } | Op::Close(id) => vec![id],
            Op::Restart { calls, .. } => calls.iter().map(|c| &c.id).collect(),
        }
    }
}

fn run_queue(wb: &Arc<Workbench>, toolbox: usize) {
    loop {
        let op = {
            let mut queue = lock(&wb.queues[toolbox]);
            match queue.ops.pop_front() {
                Some(op) => op,
                None => {
                    queue.busy = false;
                    return;
                }
            }
        };
        match op {
            Op::Open {
                id,
                form,
                requested,
            } if wb.finish(&id) => {
                let mut outcome = open_toolbox(wb, toolbox);
                if outcome.json && !outcome.is_error {
                    outcome.text = open_result::reshape(outcome.text, form, requested.as_deref());
                }
                wb.send_outcome(&id, &outcome);
            }
            Op::Close(id) if wb.finish(&id) => {
                let outcome = close_toolbox(wb, toolbox);
                wb.send_outcome(&id, &outcome);
            }
            Op::Open { .. } | Op::Close(_) => {} // cancelled while queued
            Op::Restart { server, calls } => restart_then_forward(wb, toolbox, server, calls),
        }
    }
}

/// `open_toolbox`: starts the toolbox's servers that are not running (in
/// parallel), and lists the tools of all of them.
fn open_toolbox(wb: &Workbench, toolbox: usize) -> Outcome {
    let slot = &wb.registry.slots()[toolbox];
    let config = &slot.config;
    let name = &config.name;
    let previous = slot.snapshot();

    // Keep healthy servers; (re)start the rest. Resolve all env first: an unset
    // variable fails the open and changes nothing.
    let mut keep: Vec<Option<&Arc<RunningServer>>> = Vec::new();
    let mut specs = Vec::new();
    let mut env_errors = Vec::new();
    let mut dead: Vec<(&str, Arc<Downstream>)> = Vec::new();
    let mut notes = Vec::new();
    for (i, server) in config.servers.iter().enumerate() {
        let running = previous.as_ref().and_then(|p| match &p.servers[i] {
            ServerState::Running(r) => Some(r),
            _ => None,
        });
        match running {
            Some(r) if r.conn.is_up() => keep.push(Some(r)),
            other => {
                keep.push(None);
                if let Some(r) = other {
                    let why = r.conn.down_reason().unwrap_or_default();
                    notes.push(format!(
                        "Server '{}' had stopped ({why}) and was restarted",
                        server.name
                    ));
                    dead.push((&server.name, Arc::clone(&r.conn)));
                }
                if !server.disabled {
                    match launch::resolve(name, server) {
                        Ok(spec) => specs.push(spec),
                        Err(errors) => env_errors.extend(errors),
                    }
                }
            }
        }
    }
    if !env_errors.is_empty() {
        return Outcome::error(format!(
            "Cannot open toolbox '{name}': {}",
            env_errors.join("; ")
        ));
    }
    let restarted = previous.is_some() && !specs.is_empty();
    let mut started = start_servers(wb, slot, dead, specs).into_iter();

    let mut states = Vec::new();
    for (server, kept) in config.servers.iter().zip(keep) {
        let state = match kept {
            Some(running) => relisted(running, server),
            None if server.disabled => ServerState::Disabled,
            None => match started.next() {
                Some(result) => started_state(result, &server.tool_filter),
                None => ServerState::Failed("internal error: no start result".into()),
            },
        };
        states.push(state);
    }
    let open = OpenToolbox { servers: states };
    let outcome = meta_tools::describe_open(config, &open, notes);
    let enabled = config.servers.iter().filter(|s| !s.disabled).count();
    let connected = meta_tools::count_running(&open);
    if enabled > 0 && connected == 0 {
        slot.set_open(None);
        log::warn!("toolbox '{name}' failed to open: no server started");
        return Outcome::error(outcome.errors.join("\n"));
    }
    slot.install(open);
    wb.tools_changed();
    log::info!(
        "toolbox '{name}' {} ({connected} of {enabled} servers running)",
        if restarted { "reopened" } else { "open" }
    );
    Outcome {
        text: outcome.json,
        is_error: false,
        json: true,
    }
}

fn started_state(result: Result<Started, String>, filter: &ToolFilter) -> ServerState {
    match result {
        Ok(s) => RunningServer::state(s.conn, s.tools, filter),
        Err(why) => ServerState::Failed(why),
    }
}

/// Starts `specs` for `slot`, after stopping `dead` (its servers that died)
/// and waiting out the longest restart backoff among them.
fn start_servers(
    wb: &Workbench,
    slot: &Slot,
    dead: Vec<(&str, Arc<Downstream>)>,
    specs: Vec<Spec>,
) -> Vec<Result<Started, String>> {
    let delay = dead
        .iter()
        .map(|(name, _)| slot.restart_delay(name))
        .max()
        .unwrap_or_default();
    let conns: Vec<Arc<Downstream>> = dead.into_iter().map(|(_, conn)| conn).collect();
    launch::stop_all(&conns, "");
    thread::sleep(delay);
    for spec in &specs {
        slot.note_start(&spec.server);
    }
    wb.launcher.start_all(specs)
}

/// Starts server `server` of toolbox `toolbox` again for the calls queued for
/// it, then forwards them; or answers each with the reason it cannot run.
fn restart_then_forward(
    wb: &Arc<Workbench>,
    toolbox: usize,
    server: usize,
    calls: Vec<ForwardedCall>,
) {
    let restarted = restart_server(wb, toolbox, server);
    for call in calls {
        if !wb.finish(&call.id) {
            continue; // cancelled while it waited
        }
        match &restarted {
            Ok(conn) => forward::after_restart(wb, (toolbox, server), call, conn),
            Err(text) => wb.send_outcome(&call.id, &Outcome::error(text.clone())),
        }
    }
}

/// Starts again server `server` of toolbox `toolbox`, which died since the
/// toolbox was opened. Returns its connection (the running one, if another
/// operation restarted it meanwhile).
fn restart_server(
    wb: &Workbench,
    toolbox: usize,
    server: usize,
) -> Result<Arc<Downstream>, String> {
    let slot = &wb.registry.slots()[toolbox];
    let (toolbox, config) = (&slot.config.name, &slot.config.servers[server]);
    let name = &config.name;
    // The toolbox may have been closed, or the server restarted, meanwhile.
    let previous = slot.snapshot().ok_or_else(|| toolbox::not_open(toolbox))?;
    let old = match &previous.servers[server] {
        ServerState::Running(r) if r.conn.is_up() => return Ok(Arc::clone(&r.conn)),
        ServerState::Running(r) => Arc::clone(&r.conn),
        _ => {
            return Err(format!(
                "Server '{name}' in toolbox '{toolbox}' is not running"
            ))
        }
    };
    let why = old.down_reason().unwrap_or_default();
    let spec = launch::resolve(toolbox, config).map_err(|errors| errors.join("; "))?;
    let result = start_servers(wb, slot, vec![(name, old)], vec![spec])
        .pop()
        .unwrap_or_else(|| Err("no start result".into()));
    let state = started_state(result, &config.tool_filter);
    let mut open = (*previous).clone();
    open.servers[server] = state.clone();
    slot.install(open);
    wb.tools_changed();
    match state {
        ServerState::Running(r) => {
            log::warn!("[{toolbox}/{name}] had stopped ({why}); restarted for a call");
            Ok(Arc::clone(&r.conn))
        }
        ServerState::Failed(e) => Err(format!(
            "Server '{name}' in toolbox '{toolbox}' had stopped ({why}) and could not be restarted: {e}"
        )),
        ServerState::Disabled => Err(format!("Server '{name}' in toolbox '{toolbox}' is disabled")),
    }
}

/// `close_toolbox`: stops this toolbox's servers, and nothing else.
fn close_toolbox(wb: &Workbench, toolbox: usize) -> Outcome {
    let slot = &wb.registry.slots()[toolbox];
    let name = &slot.config.name;
    let Some(open) = slot.set_open(None) else {
        return Outcome::error(format!("Toolbox '{name}' is not open"));
    };
    wb.tools_changed();
    let conns = open.running_conns();
    launch::stop_all(
        &conns,
        &format!("Toolbox '{name}' was closed while tool '{{tool}}' was running"),
    );
    let n = conns.len();
    log::info!("toolbox '{name}' closed");
    Outcome::ok(format!(
        "Toolbox '{name}' closed ({n} server{} stopped)",
        if n == 1 { "" } else { "s" }
    ))
}

/// A kept server, listed again if it said its tools changed.
fn relisted(running: &Arc<RunningServer>, server: &ServerConfig) -> ServerState {
    let listed = running
        .conn
        .tools_changed()
        .then(|| list_again(&running.conn, server));
    listed
        .flatten()
        .unwrap_or_else(|| ServerState::Running(Arc::clone(running)))
}

/// `conn`'s tools listed again and filtered for `server`; `None` (logged)
/// when the listing fails.
fn list_again(conn: &Arc<Downstream>, server: &ServerConfig) -> Option<ServerState> {
    match conn.list_tools(Instant::now() + server.startup_timeout) {
        Ok(tools) => Some(RunningServer::state(
            Arc::clone(conn),
            tools,
            &server.tool_filter,
        )),
        Err(e) => {
            let why = conn.describe(&e, "listing tools");
            log::warn!("cannot list tools again: {why}");
            None
        }
    }
}

/// Dynamic mode: lists `conn`'s tools again (it said they changed) and puts
/// them in its toolbox, if it still serves one; then lets `tools_changed`
/// decide whether the host hears of it. Holds no lock while it waits.
pub fn relist(wb: &Workbench, conn: &Arc<Downstream>) {
    let Some((slot, index)) = wb.registry.find_conn(conn) else {
        return; // closed or restarted meanwhile
    };
    let Some(state) = list_again(conn, &slot.config.servers[index]) else {
        return;
    };
    let replaced = slot.update(|open| {
        let mut open = (**open?).clone();
        match &open.servers[index] {
            ServerState::Running(r) if Arc::ptr_eq(&r.conn, conn) => {}
            _ => return None,
        }
        open.servers[index] = state;
        Some(Arc::new(open))
    });
    if replaced {
        wb.tools_changed();
    }
}
