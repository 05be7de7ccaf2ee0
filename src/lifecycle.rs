//! The toolbox lifecycle: opening, closing, restarting servers that died or
//! fell asleep, putting idle servers to sleep, applying a reloaded config to
//! a toolbox, and (dynamic mode) listing a server's tools again. `Workbench`
//! is the state every thread that serves the host shares.
//!
//! Order and liveness:
//! - Each toolbox has a queue of lifecycle operations run by one worker thread
//!   at a time, so `open_toolbox X` then `close_toolbox X` run in the order the
//!   host sent them, and concurrent opens start each server once. A reload's
//!   change to a toolbox runs in that order too: at once when the queue is
//!   idle, else after the operations queued before it.
//! - Calls to a server that died, fell asleep or was reconfigured wait in that
//!   queue for one start of it, so a thousand calls to a dead server cost one
//!   thread, not a thousand; when no thread can be created, every queued call
//!   is answered with the error.
//! - A re-list runs with no lock held: an unanswered `tools/list` delays
//!   nothing but its own result.
//! - A request the host cancelled while it waited here gets no answer
//!   (basic/utilities/cancellation, 2025-06-18: the receiver SHOULD NOT respond).

use crate::config::{Config, Mode, ServerConfig, ToolFilter, ToolboxConfig};
use crate::downstream::{Downstream, Spec, Started};
use crate::dynamic::NativeTable;
use crate::fleet::main_loop::{self, Event, Watched};
use crate::forward::{self, ForwardedCall};
use crate::jsonrpc::{self, RequestId};
use crate::launch::{self, Launcher};
use crate::lock;
use crate::mcp::{self, method};
use crate::meta_tools::{self, Outcome};
use crate::open_result;
use crate::outbox::Outbox;
use crate::toolbox::{self, OpenToolbox, Registry, RunningServer, ServerState, Slot, Toolbox};
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::thread;
use std::time::{Duration, Instant};

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
    /// The host's `clientInfo.name`, once `initialize` was answered.
    pub client: OnceLock<Option<String>>,
    /// The meta-tools' `tools/list` entries, comma-separated, [without, with]
    /// `outputSchema`: built at start and again when the config is reloaded.
    meta_tools: Mutex<Arc<[String; 2]>>,
    /// Dynamic mode's native tools (empty in proxy mode).
    native: Mutex<Arc<NativeTable>>,
    /// Host requests waiting here (queued opens, closes and calls): `true`
    /// once the host cancelled one.
    waiting: Mutex<HashMap<RequestId, bool>>,
    /// The fleet loop's events (its timers: idle, re-list, config poll).
    events: crossbeam_channel::Sender<Event>,
}

/// A toolbox's queue of lifecycle operations.
#[derive(Default)]
pub struct Queue {
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
        server: String,
        calls: Vec<ForwardedCall>,
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

pub enum Reload {
    /// The toolbox's new definition.
    Reconfigure(Arc<ToolboxConfig>),
    /// The toolbox is no longer configured.
    Remove,
}

impl Workbench {
    /// The workbench, with its fleet loop; `changes`: the children's
    /// `list_changed` reports (dynamic mode), which the loop re-lists.
    pub fn new(
        config: &Config,
        launcher: Launcher,
        outbox: Arc<Outbox>,
        changes: Option<crossbeam_channel::Receiver<Arc<Downstream>>>,
    ) -> Arc<Self> {
        let configs: Vec<&ToolboxConfig> = config.toolboxes.iter().collect();
        Arc::new_cyclic(|wb| Workbench {
            registry: Registry::new(config),
            launcher,
            mode: config.mode,
            outbox,
            initialized: AtomicBool::new(false),
            version: OnceLock::new(),
            client: OnceLock::new(),
            meta_tools: Mutex::new(Arc::new(meta_tools_entries(&configs))),
            native: Mutex::new(Arc::default()),
            waiting: Mutex::new(HashMap::new()),
            events: main_loop::start(wb.clone(), changes),
        })
    }

    /// Sends `event` to the fleet loop.
    fn fleet_event(&self, event: Event) {
        let _ = self.events.send(event);
    }

    /// Applies config file `path` again whenever it changes, and at once on
    /// SIGUSR1; `applied` is the config running now.
    pub fn watch_config(&self, path: PathBuf, applied: Config) {
        self.fleet_event(Event::WatchConfig {
            path,
            applied,
            events: self.events.clone(),
        });
    }

    pub fn native(&self) -> Arc<NativeTable> {
        Arc::clone(&lock(&self.native))
    }

    /// The meta-tools' `tools/list` entries: [without, with] `outputSchema`.
    pub fn meta_tools(&self) -> Arc<[String; 2]> {
        Arc::clone(&lock(&self.meta_tools))
    }

    /// The form of `open_toolbox` results for this host.
    pub fn open_form(&self) -> open_result::Form {
        let client = self.client.get().and_then(Option::as_deref);
        open_result::form_for(self.registry.current().open_setting, client)
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

    /// Whether the host cancelled `id`, which waits here.
    fn cancelled(&self, id: &RequestId) -> bool {
        lock(&self.waiting).get(id) == Some(&true)
    }

    /// `id` is done waiting here: whether it should be answered (not cancelled).
    fn finish(&self, id: &RequestId) -> bool {
        lock(&self.waiting).remove(id) == Some(false)
    }

    /// After an open, close or re-list: in dynamic mode, rebuild the native
    /// tools and, if they changed and the host is initialized, send one
    /// `notifications/tools/list_changed`.
    pub fn tools_changed(&self) {
        if self.rebuild_native() {
            self.list_changed();
        }
    }

    /// After a reload: the meta-tools (toolbox names and descriptions) built
    /// from `toolboxes` and the native tools again; one
    /// `notifications/tools/list_changed` if either changed.
    pub fn config_changed(&self, toolboxes: &[&ToolboxConfig]) {
        let entries = Arc::new(meta_tools_entries(toolboxes));
        let meta = std::mem::replace(&mut *lock(&self.meta_tools), Arc::clone(&entries));
        let native = self.rebuild_native();
        if meta != entries || native {
            self.list_changed();
        }
    }

    /// Dynamic mode: builds the native tools again; whether they changed.
    fn rebuild_native(&self) -> bool {
        if self.mode != Mode::Dynamic {
            return false;
        }
        let table = NativeTable::build(&self.registry.current());
        let mut current = lock(&self.native);
        let changed = current.listing() != table.listing();
        *current = Arc::new(table);
        changed
    }

    /// Tells the host its tool list changed, once it is initialized.
    fn list_changed(&self) {
        if self.initialized.load(Ordering::SeqCst) {
            let line = jsonrpc::notification_line::<()>(method::TOOLS_LIST_CHANGED, None);
            self.outbox.send(&line);
        }
    }
}

/// The meta-tools' `tools/list` entries, comma-separated: [without, with]
/// `outputSchema`.
fn meta_tools_entries(toolboxes: &[&ToolboxConfig]) -> [String; 2] {
    [false, true].map(|structured| {
        let list = meta_tools::tools_list(toolboxes, structured);
        let text = list["tools"].to_string();
        text[1..text.len() - 1].to_string()
    })
}

/// Queues `op` for toolbox `slot`, starting a worker for the queue if none
/// runs. A restart joins a restart of the same server that has not begun yet.
pub fn submit(wb: &Arc<Workbench>, slot: &Arc<Slot>, op: Op) {
    for id in op.request_ids() {
        lock(&wb.waiting).insert(id.clone(), false);
    }
    let mut queue = lock(&slot.queue);
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
    let (worker, queued) = (Arc::clone(wb), Arc::clone(slot));
    if let Err(e) = thread::Builder::new()
        .name(format!("toolbox {}", slot.name))
        .spawn(move || run_queue(&worker, &queued))
    {
        log::error!("cannot create a worker thread: {e}");
        let ops: Vec<Op> = {
            let mut queue = lock(&slot.queue);
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

/// Applies a reload's change to toolbox `slot`: at once when its queue is
/// idle (holding the queue, so no operation starts meanwhile; the caller
/// then tells the host once for the whole reload), else after the operations
/// queued before it (then the host hears of it by itself).
pub fn reload(wb: &Arc<Workbench>, slot: &Arc<Slot>, change: Reload) {
    let queue = lock(&slot.queue);
    if !queue.busy {
        apply_reload(wb, slot, change);
        return;
    }
    drop(queue);
    submit(wb, slot, Op::Reload(change));
}

impl Op {
    fn request_ids(&self) -> Vec<&RequestId> {
        match self {
            Op::Open { id, .. } | Op::Close(id) => vec![id],
            Op::Restart { calls, .. } => calls.iter().map(|c| &c.id).collect(),
            Op::Sleep { .. } | Op::Reload(_) => Vec::new(),
        }
    }
}

fn run_queue(wb: &Arc<Workbench>, slot: &Arc<Slot>) {
    loop {
        let op = {
            let mut queue = lock(&slot.queue);
            match queue.ops.pop_front() {
                Some(op) => op,
                None => {
                    queue.busy = false;
                    return;
                }
            }
        };
        match op {
            // Cancelled while queued: nothing happens.
            Op::Open { id, .. } | Op::Close(id) if wb.cancelled(&id) => {
                wb.finish(&id);
            }
            // Cancelled while it runs: it runs to its end, unanswered.
            Op::Open {
                id,
                form,
                requested,
            } => {
                let mut outcome = open_toolbox(wb, slot);
                if outcome.json && !outcome.is_error {
                    outcome.text = open_result::reshape(outcome.text, form, requested.as_deref());
                }
                if wb.finish(&id) {
                    wb.send_outcome(&id, &outcome);
                }
            }
            Op::Close(id) => {
                let outcome = close_toolbox(wb, slot);
                if wb.finish(&id) {
                    wb.send_outcome(&id, &outcome);
                }
            }
            Op::Restart { server, calls } => restart_then_forward(wb, slot, &server, calls),
            Op::Sleep {
                server,
                conn,
                timeout,
            } => sleep(wb, slot, &server, &conn, timeout),
            Op::Reload(change) => {
                apply_reload(wb, slot, change);
                wb.tools_changed();
            }
        }
    }
}

/// Toolbox `slot`, unless a reload removed it.
fn configured(wb: &Workbench, slot: &Slot) -> Option<Toolbox> {
    wb.registry.toolbox(slot).filter(|t| !t.removed)
}

/// `open_toolbox`: starts the toolbox's servers that are not running (in
/// parallel), and lists the tools of all of them. Asleep servers stay
/// asleep: their last listing answers.
fn open_toolbox(wb: &Arc<Workbench>, slot: &Arc<Slot>) -> Outcome {
    let Some(toolbox) = configured(wb, slot) else {
        return Outcome::error(meta_tools::not_configured(
            &wb.registry.current(),
            &slot.name,
        ));
    };
    let config = &*toolbox.config;
    let name = &config.name;
    let previous = toolbox.open;

    // Keep healthy and sleeping servers; (re)start the rest. Resolve all env
    // first: an unset variable fails the open and changes nothing.
    let mut keep: Vec<Option<ServerState>> = Vec::new();
    let mut specs = Vec::new();
    let mut env_errors = Vec::new();
    let mut dead: Vec<(&str, Arc<Downstream>)> = Vec::new();
    let mut notes = Vec::new();
    for (i, server) in config.servers.iter().enumerate() {
        match previous.as_ref().map(|p| &p.servers[i]) {
            Some(ServerState::Running(r)) if r.conn.is_up() => {
                keep.push(Some(ServerState::Running(Arc::clone(r))))
            }
            Some(asleep @ ServerState::Asleep(_)) => keep.push(Some(asleep.clone())),
            other => {
                keep.push(None);
                if let Some(ServerState::Running(r)) = other {
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
            Some(ServerState::Running(running)) => relisted(&running, server),
            Some(kept) => kept,
            None if server.disabled => ServerState::Disabled,
            None => match started.next() {
                Some(result) => {
                    let state = started_state(result, &server.tool_filter);
                    watch_idle(wb, slot, server, &state);
                    state
                }
                None => ServerState::Failed("internal error: no start result".into()),
            },
        };
        states.push(state);
    }
    let open = OpenToolbox { servers: states };
    let outcome = meta_tools::describe_open(config, &open, notes);
    let enabled = config.servers.iter().filter(|s| !s.disabled).count();
    let connected = meta_tools::count_connected(&open);
    if enabled > 0 && connected == 0 {
        wb.registry.set_open(slot, None);
        log::warn!("toolbox '{name}' failed to open: no server started");
        return Outcome::error(outcome.errors.join("\n"));
    }
    wb.registry.install(slot, open);
    wb.tools_changed();
    log::info!(
        "toolbox '{name}' {} ({connected} of {enabled} servers running or asleep)",
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

/// A server that just started sleeps after `idleTimeoutMs` without a call.
fn watch_idle(wb: &Arc<Workbench>, slot: &Arc<Slot>, server: &ServerConfig, state: &ServerState) {
    if let (Some(timeout), ServerState::Running(running)) = (server.idle_timeout, state) {
        watch(wb, slot, &server.name, &running.conn, timeout);
    }
}

/// Asks the fleet loop to put `conn` to sleep once it went `timeout`
/// without a call in flight.
fn watch(
    wb: &Workbench,
    slot: &Arc<Slot>,
    server: &str,
    conn: &Arc<Downstream>,
    timeout: Duration,
) {
    wb.fleet_event(Event::WatchIdle(Watched {
        slot: Arc::downgrade(slot),
        server: server.to_string(),
        conn: Arc::downgrade(conn),
        timeout,
        since: Instant::now(),
    }));
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

/// Starts server `server` of toolbox `slot` again for the calls queued for
/// it, then forwards each one its new listing has; or answers each with the
/// reason it cannot run.
fn restart_then_forward(
    wb: &Arc<Workbench>,
    slot: &Arc<Slot>,
    server: &str,
    calls: Vec<ForwardedCall>,
) {
    let restarted = restart_server(wb, slot, server);
    for call in calls {
        if !wb.finish(&call.id) {
            continue; // cancelled while it waited
        }
        match &restarted {
            Ok(running) if !running.has_tool(&call.tool_id.tool) => {
                let text = running.missing_tool(&call.tool_id);
                wb.send_outcome(&call.id, &Outcome::error(text));
            }
            Ok(running) => forward::after_restart(wb, call, &running.conn),
            Err(text) => wb.send_outcome(&call.id, &Outcome::error(text.clone())),
        }
    }
}

/// Why a server is started for a call.
enum Cause {
    /// It died since the toolbox was opened: its reason, and the connection.
    Died(String, Arc<Downstream>),
    /// It was asleep, or its definition changed.
    Woken(&'static str),
}

/// Starts again server `server` of toolbox `slot`, which died, fell asleep or
/// was reconfigured since the toolbox was opened. Returns its state (the
/// running one, if another operation started it meanwhile).
fn restart_server(
    wb: &Arc<Workbench>,
    slot: &Arc<Slot>,
    server: &str,
) -> Result<Arc<RunningServer>, String> {
    let toolbox =
        configured(wb, slot).ok_or_else(|| format!("Toolbox '{}' not found", slot.name))?;
    let name = &toolbox.config.name;
    // The toolbox may have been closed, or the server restarted, meanwhile.
    let previous = toolbox.open.ok_or_else(|| toolbox::not_open(name))?;
    let index = toolbox
        .config
        .servers
        .iter()
        .position(|s| s.name == server)
        .ok_or_else(|| format!("Server '{server}' not found in toolbox '{name}'"))?;
    let config = &toolbox.config.servers[index];
    let cause = match &previous.servers[index] {
        ServerState::Running(r) if r.conn.is_up() => return Ok(Arc::clone(r)),
        ServerState::Running(r) => Cause::Died(
            r.conn.down_reason().unwrap_or_default(),
            Arc::clone(&r.conn),
        ),
        ServerState::Asleep(_) => Cause::Woken("it was asleep"),
        ServerState::Reconfigured(_) => Cause::Woken("its configuration changed"),
        ServerState::Failed(_) | ServerState::Disabled => {
            return Err(format!(
                "Server '{server}' in toolbox '{name}' is not running"
            ))
        }
    };
    let spec = launch::resolve(name, config).map_err(|errors| errors.join("; "))?;
    let dead = match &cause {
        Cause::Died(_, conn) => vec![(server, Arc::clone(conn))],
        Cause::Woken(_) => Vec::new(),
    };
    let result = start_servers(wb, slot, dead, vec![spec])
        .pop()
        .unwrap_or_else(|| Err("no start result".into()));
    let state = started_state(result, &config.tool_filter);
    let mut open = (*previous).clone();
    open.servers[index] = state.clone();
    wb.registry.install(slot, open);
    watch_idle(wb, slot, config, &state);
    wb.tools_changed();
    match (state, cause) {
        (ServerState::Running(r), Cause::Died(why, _)) => {
            log::warn!("[{name}/{server}] had stopped ({why}); restarted for a call");
            Ok(r)
        }
        (ServerState::Running(r), Cause::Woken(why)) => {
            log::info!("[{name}/{server}] started for a call ({why})");
            Ok(r)
        }
        (ServerState::Failed(e), Cause::Died(why, _)) => Err(format!(
            "Server '{server}' in toolbox '{name}' had stopped ({why}) and could not be restarted: {e}"
        )),
        // As for any start (an open's `_errors`).
        (ServerState::Failed(e), Cause::Woken(_)) => Err(format!(
            "Failed to connect to server '{server}' in toolbox '{name}': {e}"
        )),
        _ => Err(format!("Server '{server}' in toolbox '{name}' is disabled")),
    }
}

/// `close_toolbox`: stops this toolbox's servers, and nothing else.
fn close_toolbox(wb: &Workbench, slot: &Slot) -> Outcome {
    if configured(wb, slot).is_none() {
        let all = wb.registry.current();
        return Outcome::error(meta_tools::not_configured(&all, &slot.name));
    }
    let name = &slot.name;
    let Some(open) = wb.registry.set_open(slot, None) else {
        return Outcome::error(format!("Toolbox '{name}' is not open"));
    };
    wb.tools_changed();
    let n = open.running();
    launch::stop_all(
        &open.conns(),
        &format!("Toolbox '{name}' was closed while tool '{{tool}}' was running"),
    );
    log::info!("toolbox '{name}' closed");
    Outcome::ok(format!(
        "Toolbox '{name}' closed ({n} server{} stopped)",
        if n == 1 { "" } else { "s" }
    ))
}

/// The idle timer found server `server` idle: if `conn` still runs it and
/// still has had no call in flight for `timeout`, it falls asleep (its
/// state keeps its listing, then it is stopped). A call that came meanwhile
/// keeps it awake, and the timer watches it again.
fn sleep(
    wb: &Arc<Workbench>,
    slot: &Arc<Slot>,
    server: &str,
    conn: &Weak<Downstream>,
    timeout: Duration,
) {
    let Some(conn) = conn.upgrade() else {
        return;
    };
    if configured(wb, slot).is_none() {
        return;
    }
    if !conn.retire_if_idle(timeout) {
        if conn.is_up() {
            watch(wb, slot, server, &conn, timeout);
        }
        return;
    }
    // Calls that come from now on wait in this queue for its next start.
    let asleep = wb
        .registry
        .replace_running(slot, &conn, |r| ServerState::Asleep(Arc::clone(r)));
    conn.stop("");
    if asleep {
        log::info!(
            "[{}/{server}] asleep after {} ms without a call; the next call starts it again",
            slot.name,
            timeout.as_millis()
        );
    }
}

/// A reload's change to toolbox `slot` (see `reload`).
fn apply_reload(wb: &Workbench, slot: &Slot, change: Reload) {
    let (retire, why) = match change {
        Reload::Reconfigure(config) => {
            let retire = wb.registry.update(|all| {
                let Some(toolbox) = all.of_mut(slot) else {
                    return Vec::new();
                };
                let retire = match &toolbox.open {
                    Some(open) => {
                        let (open, retire) = toolbox::realign(&toolbox.config, &config, open);
                        toolbox.open = Some(Arc::new(open));
                        retire
                    }
                    None => Vec::new(),
                };
                toolbox.config = config;
                retire
            });
            (retire, "its configuration changed")
        }
        Reload::Remove => {
            let open = wb.registry.update(|all| all.drop_toolbox(slot));
            let conns = open.map(|open| open.conns()).unwrap_or_default();
            (conns, "its toolbox was removed from the configuration")
        }
    };
    // Each answers the calls it has in flight, then stops.
    for conn in retire {
        conn.retire(why);
    }
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
    let Some((slot, server)) = wb.registry.find_conn(conn) else {
        return; // closed or restarted meanwhile
    };
    let Some(state) = list_again(conn, &server) else {
        return;
    };
    if wb.registry.replace_running(&slot, conn, |_| state) {
        wb.tools_changed();
    }
}
