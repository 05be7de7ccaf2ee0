//! The meta-tools the host sees (contract §5): their definitions, the
//! `instructions` text, and the `open_toolbox` / `close_toolbox` handlers.
//! `use_tool` is forwarded on the hot path by `server`.
//!
//! Results are built as compact JSON. Downstream tool definitions are spliced in
//! as the bytes the server sent, with `toolbox_name` and `source_server` added,
//! so key order and numbers stay exactly as the server wrote them.

use crate::config::{Mode, ToolFilter, ToolboxConfig};
use crate::downstream::{Downstream, Spec, Started};
use crate::dynamic::NativeTable;
use crate::jsonrpc;
use crate::launch::{self, Launcher};
use crate::mcp::method;
use crate::mcp::TextResult;
use crate::outbox::Outbox;
use crate::toolbox::{self, OpenToolbox, Registry, RunningServer, ServerState, Slot};
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub const OPEN_TOOLBOX: &str = "open_toolbox";
pub const USE_TOOL: &str = "use_tool";
pub const CLOSE_TOOLBOX: &str = "close_toolbox";

/// The state shared by every thread that serves the host.
pub struct Workbench {
    pub registry: Registry,
    pub launcher: Launcher,
    pub mode: Mode,
    pub outbox: Arc<Outbox>,
    /// The host sent `notifications/initialized`: list_changed may be sent.
    pub initialized: AtomicBool,
    /// Dynamic mode's native tools (empty in proxy mode).
    native: Mutex<Arc<NativeTable>>,
}

impl Workbench {
    pub fn new(registry: Registry, launcher: Launcher, mode: Mode, outbox: Arc<Outbox>) -> Self {
        Workbench {
            registry,
            launcher,
            mode,
            outbox,
            initialized: AtomicBool::new(false),
            native: Mutex::new(Arc::default()),
        }
    }

    pub fn native(&self) -> Arc<NativeTable> {
        Arc::clone(&self.native.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// After an open, close or re-list: in dynamic mode, rebuild the native
    /// tools and, if they changed and the host is initialized, send one
    /// `notifications/tools/list_changed` (contract §6).
    pub fn tools_changed(&self) {
        if self.mode != Mode::Dynamic {
            return;
        }
        let table = NativeTable::build(&self.registry);
        let changed = {
            let mut current = self.native.lock().unwrap_or_else(|p| p.into_inner());
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

/// A finished meta-tool call: the `CallToolResult` to send.
pub struct Outcome {
    pub text: String,
    pub is_error: bool,
    /// `text` is a JSON object, also sent as `structuredContent` (2025-06-18+).
    pub json: bool,
}

impl Outcome {
    pub fn error(text: String) -> Outcome {
        Outcome {
            text,
            is_error: true,
            json: false,
        }
    }

    fn ok(text: String) -> Outcome {
        Outcome {
            is_error: false,
            ..Outcome::error(text)
        }
    }

    /// The `CallToolResult`; `structuredContent` only when the version has it.
    pub fn result(&self, structured_allowed: bool) -> TextResult<'_> {
        let base = if self.is_error {
            TextResult::error(&self.text)
        } else {
            TextResult::ok(&self.text)
        };
        let structured = (self.json && structured_allowed)
            .then(|| serde_json::from_str::<&RawValue>(&self.text).ok())
            .flatten();
        base.with_structured(structured)
    }
}

/// The `tools/list` result: the three meta-tools. `outputSchema` only for
/// versions that know `structuredContent`.
pub fn tools_list(registry: &Registry, structured: bool) -> Value {
    let names = registry.names();
    let toolboxes: Vec<String> = registry
        .slots()
        .iter()
        .map(|s| format!("{} ({})", s.config.name, s.config.description))
        .collect();
    let toolbox_name =
        |what: &str| json!({"type": "string", "minLength": 1, "enum": names, "description": what});
    let mut open = json!({
        "name": OPEN_TOOLBOX,
        "description": format!(
            "Open a toolbox: start its MCP servers and list their tools (name, description, \
             inputSchema, toolbox_name, source_server). Then call use_tool to run one. \
             Toolboxes: {}.",
            toolboxes.join("; ")
        ),
        "inputSchema": {
            "type": "object",
            "properties": {"toolbox_name": toolbox_name("Name of the toolbox to open")},
            "required": ["toolbox_name"],
            "additionalProperties": false,
        },
    });
    if structured {
        open["outputSchema"] = json!({
            "type": "object",
            "properties": {
                "toolbox": {"type": "string"},
                "description": {"type": "string"},
                "servers_connected": {"type": "integer"},
                "tools": {"type": "array", "items": {"type": "object"}},
                "_errors": {"type": "array", "items": {"type": "string"}},
                "_warnings": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["toolbox", "description", "servers_connected", "tools"],
        });
    }
    let name_field = |what: &str| json!({"type": "string", "minLength": 1, "description": what});
    let use_tool = json!({
        "name": USE_TOOL,
        "description": "Call a tool of an open toolbox. Identify it exactly as open_toolbox \
            listed it: tool.toolbox is its toolbox_name, tool.server its source_server, \
            tool.tool its name. Pass the tool's input in arguments.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "tool": {
                    "type": "object",
                    "properties": {
                        "toolbox": name_field("The toolbox_name of the tool"),
                        "server": name_field("The source_server of the tool"),
                        "tool": name_field("The name of the tool"),
                    },
                    "required": ["toolbox", "server", "tool"],
                    "additionalProperties": false,
                },
                "arguments": {
                    "type": "object",
                    "description": "The tool's input, matching its inputSchema (default {})",
                },
            },
            "required": ["tool"],
            "additionalProperties": false,
        },
    });
    let close = json!({
        "name": CLOSE_TOOLBOX,
        "description": "Close an open toolbox and stop its servers. Other toolboxes keep running.",
        "inputSchema": {
            "type": "object",
            "properties": {"toolbox_name": toolbox_name("Name of the toolbox to close")},
            "required": ["toolbox_name"],
            "additionalProperties": false,
        },
    });
    json!({ "tools": [open, use_tool, close] })
}

/// The `instructions` of the `initialize` result: what the workbench is, every
/// toolbox, and an example call whose shape is exactly what `use_tool` accepts.
pub fn instructions(registry: &Registry) -> String {
    let mut text = String::from(
        "This server is a workbench of MCP toolboxes. A toolbox groups MCP servers; \
         its tools can be used once it is open.\n\
         1. open_toolbox starts a toolbox's servers and lists their tools.\n\
         2. use_tool calls one of them by its toolbox, server and tool name.\n\
         3. close_toolbox stops the toolbox's servers when you are done.\n\nToolboxes:\n",
    );
    for slot in registry.slots() {
        let n = slot.config.servers.len();
        let disabled = slot.config.servers.iter().filter(|s| s.disabled).count();
        let disabled = if disabled > 0 {
            format!(", {disabled} disabled")
        } else {
            String::new()
        };
        text.push_str(&format!(
            "- {} ({n} server{}{disabled}): {}\n",
            slot.config.name,
            if n == 1 { "" } else { "s" },
            slot.config.description
        ));
    }
    let example = registry.slots().iter().find_map(|s| {
        let server = s.config.servers.iter().find(|srv| !srv.disabled)?;
        Some((&s.config.name, &server.name))
    });
    if let Some((toolbox, server)) = example {
        let (toolbox, server) = (json!(toolbox), json!(server));
        text.push_str(&format!(
            "\nExample: open_toolbox {{\"toolbox_name\":{toolbox}}}\n\
             then use_tool {{\"tool\":{{\"toolbox\":{toolbox},\"server\":{server},\
             \"tool\":\"<name from open_toolbox>\"}},\"arguments\":{{}}}}\n\
             (with a real tool name and its arguments)"
        ));
    }
    text
}

/// `open_toolbox`: starts the toolbox's servers that are not running (in
/// parallel), and lists the tools of all of them.
pub fn open_toolbox(wb: &Workbench, name: &str) -> Outcome {
    let Some(slot) = wb.registry.find(name) else {
        return Outcome::error(not_configured(&wb.registry, name));
    };
    let _lifecycle = slot.lifecycle.lock().unwrap_or_else(|p| p.into_inner());
    let config = &slot.config;
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
                    match launch::resolve(&config.name, server) {
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
            Some(running) => relist(running, &server.tool_filter, server.startup_timeout),
            None if server.disabled => ServerState::Disabled,
            None => match started.next() {
                Some(result) => started_state(result, &server.tool_filter),
                None => ServerState::Failed("internal error: no start result".into()),
            },
        };
        states.push(state);
    }
    let open = OpenToolbox { servers: states };
    let outcome = describe_open(config, &open, notes);
    let enabled = config.servers.iter().filter(|s| !s.disabled).count();
    let connected = count_running(&open);
    if enabled > 0 && connected == 0 {
        slot.set_open(None);
        log::warn!("toolbox '{name}' failed to open: no server started");
        return Outcome::error(outcome.errors.join("\n"));
    }
    slot.set_open(Some(Arc::new(open)));
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
    std::thread::sleep(delay);
    for spec in &specs {
        slot.note_start(&spec.server);
    }
    wb.launcher.start_all(specs)
}

/// Starts again server `server` of toolbox `toolbox` (indices, as
/// `Route::Restart` gives them), which died since the toolbox was opened, for
/// a `use_tool` call. Returns its new connection.
pub fn restart_server(
    wb: &Workbench,
    toolbox: usize,
    server: usize,
) -> Result<Arc<Downstream>, String> {
    let slot = &wb.registry.slots()[toolbox];
    let _lifecycle = slot.lifecycle.lock().unwrap_or_else(|p| p.into_inner());
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
    slot.set_open(Some(Arc::new(open)));
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

/// Dynamic mode: re-lists the servers of open toolboxes that said their tools
/// changed, then lets `tools_changed` decide whether the host hears of it.
pub fn relist_changed(wb: &Workbench) {
    for slot in wb.registry.slots() {
        let _lifecycle = slot.lifecycle.lock().unwrap_or_else(|p| p.into_inner());
        let Some(open) = slot.snapshot() else {
            continue;
        };
        if !open.running_conns().iter().any(|c| c.tools_changed()) {
            continue;
        }
        let servers = slot
            .config
            .servers
            .iter()
            .zip(&open.servers)
            .map(|(server, state)| match state {
                ServerState::Running(r) => relist(r, &server.tool_filter, server.startup_timeout),
                other => other.clone(),
            })
            .collect();
        slot.set_open(Some(Arc::new(OpenToolbox { servers })));
    }
    wb.tools_changed();
}

/// A kept server, listed again if it said its tools changed.
fn relist(running: &Arc<RunningServer>, filter: &ToolFilter, timeout: Duration) -> ServerState {
    let conn = &running.conn;
    if conn.tools_changed() {
        match conn.list_tools(Instant::now() + timeout) {
            Ok(tools) => return RunningServer::state(Arc::clone(conn), tools, filter),
            Err(e) => log::warn!(
                "cannot list tools again: {}",
                conn.describe(&e, "listing tools")
            ),
        }
    }
    ServerState::Running(Arc::clone(running))
}

struct OpenDescription {
    /// The compact JSON text of the result object.
    json: String,
    errors: Vec<String>,
}

/// The open result object: `{"toolbox","description","servers_connected","tools","_errors"?,"_warnings"?}`.
fn describe_open(
    config: &ToolboxConfig,
    open: &OpenToolbox,
    mut warnings: Vec<String>,
) -> OpenDescription {
    let mut tools = String::from("[");
    let mut errors = Vec::new();
    for (server, state) in config.servers.iter().zip(&open.servers) {
        match state {
            ServerState::Running(running) => {
                for tool in &running.tools {
                    if tools.len() > 1 {
                        tools.push(',');
                    }
                    annotate_tool(&mut tools, tool.raw.get(), &config.name, &server.name);
                }
                for filter in &running.unknown_filters {
                    warnings.push(format!(
                        "toolFilters of server '{}' names '{filter}', which the server does not have",
                        server.name
                    ));
                }
            }
            ServerState::Failed(why) => errors.push(format!(
                "Failed to connect to server '{}' in toolbox '{}': {why}",
                server.name, config.name
            )),
            ServerState::Disabled => {}
        }
    }
    tools.push(']');
    let mut text = format!(
        "{{\"toolbox\":{},\"description\":{},\"servers_connected\":{},\"tools\":{tools}",
        json!(config.name),
        json!(config.description),
        count_running(open)
    );
    if !errors.is_empty() {
        text.push_str(&format!(",\"_errors\":{}", json!(errors)));
    }
    if !warnings.is_empty() {
        text.push_str(&format!(",\"_warnings\":{}", json!(warnings)));
    }
    text.push('}');
    OpenDescription {
        json: {
            debug_assert!(serde_json::from_str::<&RawValue>(&text).is_ok(), "{text}");
            text
        },
        errors,
    }
}

/// Appends a tool object with `toolbox_name` and `source_server` added at the end.
fn annotate_tool(out: &mut String, raw: &str, toolbox: &str, server: &str) {
    let body = raw.trim_end().strip_suffix('}').unwrap_or(raw).trim_end();
    out.push_str(body);
    if !body.trim_start().eq("{") {
        out.push(',');
    }
    out.push_str(&format!(
        "\"toolbox_name\":{},\"source_server\":{}}}",
        json!(toolbox),
        json!(server)
    ));
}

fn count_running(open: &OpenToolbox) -> usize {
    open.servers
        .iter()
        .filter(|s| matches!(s, ServerState::Running(_)))
        .count()
}

/// `close_toolbox`: stops this toolbox's servers, and nothing else.
pub fn close_toolbox(wb: &Workbench, name: &str) -> Outcome {
    let Some(slot) = wb.registry.find(name) else {
        return Outcome::error(not_configured(&wb.registry, name));
    };
    let _lifecycle = slot.lifecycle.lock().unwrap_or_else(|p| p.into_inner());
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

fn not_configured(registry: &Registry, name: &str) -> String {
    format!(
        "Toolbox '{name}' not found in configuration. Available toolboxes: {}",
        registry.names().join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotation_keeps_the_servers_bytes() {
        let mut out = String::new();
        annotate_tool(
            &mut out,
            r#"{"name":"b","inputSchema":{"z":1.50}}"#,
            "t",
            "s",
        );
        assert_eq!(
            out,
            r#"{"name":"b","inputSchema":{"z":1.50},"toolbox_name":"t","source_server":"s"}"#
        );
        let mut out = String::new();
        annotate_tool(&mut out, "{ }", "t", "s");
        assert_eq!(out, r#"{"toolbox_name":"t","source_server":"s"}"#);
    }
}
