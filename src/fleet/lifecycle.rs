//! The toolbox lifecycle, run on each toolbox's worker: opening, closing,
//! restarting servers that died or fell asleep, putting idle servers to
//! sleep, applying a reloaded config to a toolbox, and (dynamic mode)
//! listing a server's tools again.
//!
//! Order and liveness:
//! - Each toolbox has a queue of lifecycle operations (`queues`) run by one
//!   worker thread at a time, so `open_toolbox X` then `close_toolbox X` run
//!   in the order the host sent them, and concurrent opens start each server
//!   once. A reload's change to a toolbox runs in that order too: at once
//!   when the queue is idle, else after the operations queued before it.
//! - Calls to a server that died, fell asleep or was reconfigured wait in that
//!   queue for one start of it, so a thousand calls to a dead server cost one
//!   thread, not a thousand; when no thread can be created, every queued call
//!   is answered with the error.
//! - A re-list runs with no lock held: an unanswered `tools/list` delays
//!   nothing but its own result.
//! - A request the host cancelled while it waited here gets no answer
//!   (basic/utilities/cancellation, 2025-06-18: the receiver SHOULD NOT respond).
//!
//! Sessions hear of what happens here only as facts (`Fact`), on their own
//! channels: nothing here renders an answer or waits for a session.

use super::event::{Event, Watched};
use super::facts::{Closed, Fact, NotOpened, OpenFound, Opened};
use super::forward::ForwardedCall;
use super::launch;
use super::queues::{Op, Reload};
use super::toolbox::{self, OpenToolbox, RunningServer, ServerState, Slot, Toolbox};
use super::Fleet;
use crate::config::expand::Vars;
use crate::config::ServerConfig;
use crate::downstream::{self, Downstream, Spec, Started};
use crate::protocol::awaiting::Key;
use crate::wire::SessionId;
use std::collections::BTreeMap;
use std::sync::{Arc, Weak};
use std::thread;
use std::time::{Duration, Instant};

/// Queues `op` for toolbox `slot`, starting a worker for the queue if none
/// runs. A restart joins a restart of the same server that has not begun yet.
pub(crate) fn submit(fleet: &Arc<Fleet>, slot: &Arc<Slot>, op: Op) {
    if !fleet.queues.push(slot, op) {
        return;
    }
    let (worker, queued) = (Arc::clone(fleet), Arc::clone(slot));
    if let Err(e) = thread::Builder::new()
        .name(format!("toolbox {}", slot.name))
        .spawn(move || run_queue(&worker, &queued))
    {
        log::error!("cannot create a worker thread: {e}");
        let why = format!("The workbench cannot create a thread ({e}); try again later");
        for op in fleet.queues.abandon(slot) {
            for asked in op.asked() {
                let why = why.clone();
                fleet.tell(
                    asked.session,
                    Fact::Failed {
                        seq: asked.seq,
                        why,
                    },
                );
            }
        }
    }
}

/// Applies a reload's change to toolbox `slot`: at once when its queue is
/// idle (holding the queue, so no operation starts meanwhile; the caller
/// then tells the host once for the whole reload), else after the operations
/// queued before it (then the host hears of it by itself).
#[allow(
    clippy::expect_used,
    reason = "the reload's change is taken once: the closure runs once"
)]
pub(crate) fn reload(fleet: &Arc<Fleet>, slot: &Arc<Slot>, change: Reload) {
    let mut change = Some(change);
    let applied = fleet.queues.if_idle(
        slot,
        || apply_reload(fleet, slot, change.take().expect("applied once")),
        || fleet.registry.toolbox(slot).is_none(),
    );
    if let (false, Some(change)) = (applied, change) {
        submit(fleet, slot, Op::Reload(change));
    }
}

/// Queues `call` (request `seq` of its session), which its server could not
/// take (it died, sleeps or was reconfigured), for one start of that
/// server, in its toolbox's queue.
pub(crate) fn restart_for(fleet: &Arc<Fleet>, seq: Key, mut call: ForwardedCall) {
    let all = fleet.registry.current();
    let slot = match all.find_variant(&call.tool_id.toolbox, call.variant) {
        Some(toolbox) => Arc::clone(&toolbox.slot),
        None => {
            let started = Err(format!("Toolbox '{}' not found", call.tool_id.toolbox));
            let session = call.session;
            let calls = vec![(seq, call)];
            return fleet.tell(session, Fact::Restarted { calls, started });
        }
    };
    call.restarts += 1;
    let op = Op::Restart {
        server: call.tool_id.server.clone(),
        calls: vec![(seq, call)],
    };
    submit(fleet, &slot, op);
}

fn run_queue(fleet: &Arc<Fleet>, slot: &Arc<Slot>) {
    let gone = || fleet.registry.toolbox(slot).is_none();
    while let Some(op) = fleet.queues.pop(slot, gone) {
        match op {
            // A session that withdrew its request while this ran gets the
            // fact all the same: the session decides it is not answered.
            Op::Open { asked, part } => {
                let found = open_toolbox(fleet, slot, asked.session);
                let (seq, session) = (asked.seq, asked.session);
                fleet.tell(session, Fact::Opened { seq, part, found });
            }
            Op::Close { session, answer } => {
                let closed = close_toolbox(fleet, slot, session);
                if let Some((seq, part)) = answer {
                    fleet.tell(session, Fact::Closed { seq, part, closed });
                }
            }
            Op::Restart { server, calls } => restart_then_hand_back(fleet, slot, &server, calls),
            Op::Sleep {
                server,
                conn,
                timeout,
            } => sleep(fleet, slot, &server, &conn, timeout),
            Op::Reload(change) => {
                apply_reload(fleet, slot, change);
                fleet.tools_changed();
            }
        }
    }
}

/// Toolbox `slot`, unless a reload removed it.
fn configured(fleet: &Fleet, slot: &Slot) -> Option<Toolbox> {
    fleet.registry.toolbox(slot).filter(|t| !t.removed)
}

/// `open_toolbox`: starts the toolbox's servers that are not running (in
/// parallel), and lists the tools of all of them. Asleep servers stay
/// asleep: their last listing answers.
/// The toolbox is held for `session` (§8).
fn open_toolbox(fleet: &Arc<Fleet>, slot: &Arc<Slot>, session: SessionId) -> OpenFound {
    let Some(toolbox) = configured(fleet, slot) else {
        return Err(NotOpened::NotConfigured);
    };
    let config = &*toolbox.config;
    let name = &config.name;
    let previous = toolbox.open;
    let env = toolbox.env.as_deref();

    // Keep healthy and sleeping servers; (re)start the rest. A server whose
    // variables do not resolve fails alone: the others open.
    let mut plans = Vec::new();
    let mut specs = Vec::new();
    let mut dead: Vec<(&str, Arc<Downstream>)> = Vec::new();
    let mut restarted = Vec::new();
    for (i, server) in config.servers.iter().enumerate() {
        let plan = match previous.as_ref().map(|p| &p.servers[i]) {
            Some(ServerState::Running(r)) if r.conn.is_up() => {
                Plan::Keep(ServerState::Running(Arc::clone(r)))
            }
            Some(asleep @ ServerState::Asleep(_)) => Plan::Keep(asleep.clone()),
            other => {
                if let Some(ServerState::Running(r)) = other {
                    let why = r.conn.down_reason().unwrap_or_default();
                    restarted.push((server.name.clone(), why));
                    dead.push((&server.name, Arc::clone(&r.conn)));
                }
                if server.disabled {
                    Plan::Keep(ServerState::Disabled)
                } else {
                    match launch::resolve(name, server, env) {
                        Ok(spec) => {
                            specs.push(spec);
                            Plan::Start
                        }
                        Err(errors) => Plan::Unresolved(errors.join("; ")),
                    }
                }
            }
        };
        plans.push(plan);
    }
    let reopened = previous.is_some() && !specs.is_empty();
    let started_any = !specs.is_empty();
    let mut started = start_servers(fleet, slot, dead, specs).into_iter();

    let mut states = Vec::new();
    for (server, plan) in config.servers.iter().zip(plans) {
        let state = match plan {
            Plan::Keep(ServerState::Running(running)) => {
                relisted(fleet, (name, env), &running, server)
            }
            Plan::Keep(kept) => kept,
            Plan::Unresolved(why) => started_state(fleet, (name, env), server, Err(why)),
            Plan::Start => match started.next() {
                Some(result) => {
                    let state = started_state(fleet, (name, env), server, result);
                    watch_idle(fleet, slot, server, &state);
                    state
                }
                None => ServerState::Failed("internal error: no start result".into()),
            },
        };
        states.push(state);
    }
    if started_any {
        fleet.catalog.save();
    }
    let open = OpenToolbox { servers: states };
    let enabled = config.servers.iter().filter(|s| !s.disabled).count();
    let connected = open.connected();
    let failed = enabled > 0 && connected == 0;
    if failed {
        fleet.registry.set_open(slot, None);
        log::warn!("toolbox '{name}' failed to open: no server started");
    } else {
        fleet.registry.install(slot, open.clone());
        if !hold(fleet, slot, &[session]) {
            return Err(NotOpened::Refused(format!(
                "Toolbox '{name}' was closed: its session left"
            )));
        }
        fleet.tools_changed();
        log::info!(
            "toolbox '{name}' {} ({connected} of {enabled} servers running or asleep)",
            if reopened { "reopened" } else { "open" }
        );
    }
    Ok(Opened {
        config: Arc::clone(&toolbox.config),
        open,
        restarted,
        failed,
    })
}

/// `sessions` hold toolbox `slot`, which they opened: whether any of them
/// is still served. When none is and no other session holds it, the toolbox
/// closes: nobody would be left to close it. The hold comes first, so a
/// session that leaves meanwhile finds it and closes it itself.
fn hold(fleet: &Fleet, slot: &Slot, sessions: &[SessionId]) -> bool {
    for &session in sessions {
        fleet.holds.hold(slot.id, session);
    }
    let mut served = false;
    for &session in sessions {
        if fleet.serves(session) {
            served = true;
        } else {
            fleet.holds.release(slot.id, session);
        }
    }
    if !served && fleet.holds.holders(slot.id) == 0 {
        if let Some(&session) = sessions.first() {
            log::info!(
                "toolbox '{}' closed: the session it started for left",
                slot.name
            );
            close_toolbox(fleet, slot, session);
        }
    }
    served
}

/// The state of a server that was started, its listing put in the catalog
/// (in memory: the caller saves it, once for all the servers it started).
fn started_state(
    fleet: &Fleet,
    (toolbox, env): (&str, Option<&Vars>),
    server: &ServerConfig,
    result: Result<Started, String>,
) -> ServerState {
    match result {
        Ok(s) => {
            fleet.catalog.remember(&[(
                toolbox,
                server,
                env,
                &s.tools,
                Some(s.instructions.as_deref().unwrap_or_default()),
            )]);
            let pins = fleet.pins_for(toolbox, server, &s.tools);
            let number = fleet.registry.next_listing();
            RunningServer::state(number, s.conn, s.tools, server, pins.as_deref())
        }
        Err(why) => {
            // The reason is the host's text (templates, never values).
            log::warn!("[{toolbox}/{}] failed to start: {why}", server.name);
            ServerState::Failed(why)
        }
    }
}

/// What an open does with one server of the toolbox.
enum Plan {
    /// Its state stays (running and up, asleep, disabled).
    Keep(ServerState),
    /// It starts: its spec is among those started, in order.
    Start,
    /// Its variables do not resolve (why, naming each with its JSON path).
    Unresolved(String),
}

/// A server that just started sleeps after `idleTimeoutMs` without a call.
fn watch_idle(fleet: &Arc<Fleet>, slot: &Arc<Slot>, server: &ServerConfig, state: &ServerState) {
    if let (Some(timeout), ServerState::Running(running)) = (server.idle_timeout, state) {
        watch(fleet, slot, &server.name, &running.conn, timeout);
    }
}

/// Asks the fleet loop to put `conn` to sleep once it went `timeout`
/// without a call in flight.
fn watch(fleet: &Fleet, slot: &Arc<Slot>, server: &str, conn: &Arc<Downstream>, timeout: Duration) {
    fleet.event(Event::WatchIdle(Watched {
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
    fleet: &Fleet,
    slot: &Slot,
    dead: Vec<(&str, Arc<Downstream>)>,
    specs: Vec<Spec>,
) -> Vec<Result<Started, String>> {
    let delay = dead
        .iter()
        .map(|(name, _)| fleet.queues.restart_delay(slot, name))
        .max()
        .unwrap_or_default();
    let conns: Vec<Arc<Downstream>> = dead.into_iter().map(|(_, conn)| conn).collect();
    launch::stop_all(&conns, "");
    thread::sleep(delay);
    for spec in &specs {
        fleet.queues.note_start(slot, &spec.server);
    }
    fleet.launcher.start_all(specs)
}

/// Starts server `server` of toolbox `slot` again for the calls queued for
/// it, then hands them back to their sessions, which forward them (or
/// answer each with the reason it cannot run).
fn restart_then_hand_back(
    fleet: &Arc<Fleet>,
    slot: &Arc<Slot>,
    server: &str,
    calls: Vec<(Key, ForwardedCall)>,
) {
    let callers: Vec<SessionId> = calls.iter().map(|(_, call)| call.session).collect();
    let started = restart_server(fleet, slot, server, &callers).map(|_| ());
    let mut by_session: BTreeMap<SessionId, Vec<(Key, ForwardedCall)>> = BTreeMap::new();
    for (seq, call) in calls {
        by_session
            .entry(call.session)
            .or_default()
            .push((seq, call));
    }
    for (session, calls) in by_session {
        let started = started.clone();
        fleet.tell(session, Fact::Restarted { calls, started });
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
    fleet: &Arc<Fleet>,
    slot: &Arc<Slot>,
    server: &str,
    callers: &[SessionId],
) -> Result<Arc<RunningServer>, String> {
    let toolbox =
        configured(fleet, slot).ok_or_else(|| format!("Toolbox '{}' not found", slot.name))?;
    let name = &toolbox.config.name;
    // The toolbox may have been closed, or the server restarted, meanwhile.
    // A toolbox that is not open opens with this call, starting only this
    // server, and the callers' sessions hold it (docs/reference.md §5, `use_tool`).
    let opening = toolbox.open.is_none();
    let previous = toolbox
        .open
        .unwrap_or_else(|| Arc::new(OpenToolbox::unstarted(&toolbox.config)));
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
        ServerState::Reconfigured(Some(_)) => Cause::Woken("its configuration changed"),
        ServerState::Reconfigured(None) => Cause::Woken("it had not started yet"),
        ServerState::Failed(_) | ServerState::Disabled => {
            return Err(format!(
                "Server '{server}' in toolbox '{name}' is not running"
            ))
        }
    };
    let spec = launch::resolve(name, config, toolbox.env.as_deref())
        .map_err(|errors| errors.join("; "))?;
    let dead = match &cause {
        Cause::Died(_, conn) => vec![(server, Arc::clone(conn))],
        Cause::Woken(_) => Vec::new(),
    };
    let result = start_servers(fleet, slot, dead, vec![spec])
        .pop()
        .unwrap_or_else(|| Err("no start result".into()));
    let state = started_state(fleet, (name, toolbox.env.as_deref()), config, result);
    fleet.catalog.save();
    // A toolbox that a call would have opened stays closed if its server
    // failed to start: the next call tries again.
    if !(opening && matches!(state, ServerState::Failed(_))) {
        let mut open = (*previous).clone();
        open.servers[index] = state.clone();
        fleet.registry.install(slot, open);
        // Every caller's session left while the server started: the
        // toolbox is closed again (as an open that outlives its session).
        if opening && !hold(fleet, slot, callers) {
            return Err(format!("Toolbox '{name}' was closed: its session left"));
        }
        watch_idle(fleet, slot, config, &state);
        fleet.tools_changed();
    }
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

/// `close_toolbox` for `session`: releases its hold; stops this toolbox's
/// servers, and nothing else, unless other sessions of a shared fleet still
/// hold it (§8): then only this session's calls in flight to it end.
fn close_toolbox(fleet: &Fleet, slot: &Slot, session: SessionId) -> Closed {
    let Some(toolbox) = configured(fleet, slot) else {
        return Closed::NotConfigured;
    };
    let name = &slot.name;
    let held = fleet.holds.release(slot.id, session);
    let others = fleet.holds.holders(slot.id);
    if others > 0 {
        let (Some(open), true) = (toolbox.open, held) else {
            return Closed::NotOpen;
        };
        let in_flight = format!("Toolbox '{name}' was closed while tool '{{tool}}' was running");
        for conn in open.conns() {
            conn.withdraw(session, Some(&in_flight));
        }
        fleet.tell(session, Fact::ToolsChanged);
        log::info!("toolbox '{name}' released by a session; {others} still hold it");
        return Closed::Released(others);
    }
    let Some(open) = fleet.registry.set_open(slot, None) else {
        return Closed::NotOpen;
    };
    fleet.tools_changed();
    let n = open.running();
    launch::stop_all(
        &open.conns(),
        &format!("Toolbox '{name}' was closed while tool '{{tool}}' was running"),
    );
    log::info!("toolbox '{name}' closed");
    Closed::Stopped(n)
}

/// The idle timer found server `server` idle: if `conn` still runs it and
/// still has had no call in flight for `timeout`, it falls asleep (its
/// state keeps its listing, then it is stopped). A call that came meanwhile
/// keeps it awake, and the timer watches it again.
fn sleep(
    fleet: &Arc<Fleet>,
    slot: &Arc<Slot>,
    server: &str,
    conn: &Weak<Downstream>,
    timeout: Duration,
) {
    let Some(conn) = conn.upgrade() else {
        return;
    };
    if configured(fleet, slot).is_none() {
        return;
    }
    if !conn.retire_if_idle(timeout) {
        if conn.is_up() {
            watch(fleet, slot, server, &conn, timeout);
        }
        return;
    }
    // Calls that come from now on wait in this queue for its next start.
    let asleep = fleet
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
fn apply_reload(fleet: &Fleet, slot: &Slot, change: Reload) {
    let (retire, why) = match change {
        Reload::Reconfigure(config) => {
            let retire = fleet.registry.update(|all| {
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
            let open = fleet.registry.update(|all| all.drop_toolbox(slot));
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
fn relisted(
    fleet: &Fleet,
    toolbox: (&str, Option<&Vars>),
    running: &Arc<RunningServer>,
    server: &ServerConfig,
) -> ServerState {
    let listed = running
        .conn
        .tools_changed()
        .then(|| list_again(fleet, toolbox, &running.conn, server));
    listed
        .flatten()
        .unwrap_or_else(|| ServerState::Running(Arc::clone(running)))
}

/// `conn`'s tools listed again (into the catalog) and filtered for
/// `server`; `None` (logged) when the listing fails.
fn list_again(
    fleet: &Fleet,
    (toolbox, env): (&str, Option<&Vars>),
    conn: &Arc<Downstream>,
    server: &ServerConfig,
) -> Option<ServerState> {
    match downstream::list_tools(conn, Instant::now() + server.startup_timeout) {
        Ok(tools) => {
            fleet
                .catalog
                .record(&[(toolbox, server, env, &tools, None)]);
            let pins = fleet.pins_for(toolbox, server, &tools);
            Some(RunningServer::state(
                fleet.registry.next_listing(),
                Arc::clone(conn),
                tools,
                server,
                pins.as_deref(),
            ))
        }
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
pub(crate) fn relist(fleet: &Fleet, conn: &Arc<Downstream>) {
    let Some((slot, server)) = fleet.registry.find_conn(conn) else {
        return; // closed or restarted meanwhile
    };
    let env = fleet.registry.toolbox(&slot).and_then(|t| t.env);
    let Some(state) = list_again(fleet, (&slot.name, env.as_deref()), conn, &server) else {
        return;
    };
    if fleet.registry.replace_running(&slot, conn, |_| state) {
        fleet.tools_changed();
    }
}
