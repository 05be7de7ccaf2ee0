//! The meta-tools the host sees (contract §5): their definitions, the
//! `instructions` text, and the `open_toolbox` / `close_toolbox` handlers.
//! `use_tool` is forwarded on the hot path by `server`.
//!
//! Results are built as compact JSON. Downstream tool definitions are spliced in
//! as the bytes the server sent, with `toolbox_name` and `source_server` added,
//! so key order and numbers stay exactly as the server wrote them.

use crate::config::{Mode, ToolFilter, ToolboxConfig};
use crate::downstream::{Downstream, Started};
use crate::dynamic::NativeTable;
use crate::jsonrpc;
use crate::launch::{self, Launcher};
use crate::mcp::method;
use crate::mcp::TextResult;
use crate::outbox::Outbox;
use crate::toolbox::{OpenToolbox, Registry, RunningServer, ServerState};
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
    /// The same object as `text`, for `structuredContent` (2025-06-18+).
    pub structured: Option<Box<RawValue>>,
}

impl Outcome {
    pub fn error(text: String) -> Outcome {
        Outcome {
            text,
            is_error: true,
            structured: None,
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
        base.with_structured(self.structured.as_deref().filter(|_| structured_allowed))
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
    let mut keep: Vec<Option<&RunningServer>> = Vec::new();
    let mut specs = Vec::new();
    let mut env_errors = Vec::new();
    let mut dead: Vec<Arc<Downstream>> = Vec::new();
    let mut notes = Vec::new();
    let mut delay = Duration::ZERO;
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
                    delay = delay.max(slot.restart_delay(&server.name));
                    dead.push(Arc::clone(&r.conn));
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
    launch::stop_all(&dead, "");
    std::thread::sleep(delay);
    for spec in &specs {
        slot.note_start(&spec.server);
    }
    let restarted = previous.is_some() && !specs.is_empty();
    let mut started = wb.launcher.start_all(specs).into_iter();

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
        text: outcome.json.get().to_string(),
        is_error: false,
        structured: Some(outcome.json),
    }
}

fn started_state(result: Result<Started, String>, filter: &ToolFilter) -> ServerState {
    match result {
        Ok(s) => ServerState::Running(RunningServer::new(s.conn, s.tools, filter)),
        Err(why) => ServerState::Failed(why),
    }
}

/// Starts again a server of an open toolbox that died, for a `use_tool` call
/// (after the backoff, if it keeps dying). Returns its new connection.
pub fn restart_server(
    wb: &Workbench,
    toolbox: &str,
    server: &str,
) -> Result<Arc<Downstream>, String> {
    let slot = wb
        .registry
        .find(toolbox)
        .ok_or_else(|| format!("Toolbox '{toolbox}' not found"))?;
    let _lifecycle = slot.lifecycle.lock().unwrap_or_else(|p| p.into_inner());
    let not_open = || {
        format!("Toolbox '{toolbox}' is not open; call open_toolbox with toolbox_name '{toolbox}' first")
    };
    let previous = slot.snapshot().ok_or_else(not_open)?;
    let index = slot
        .config
        .servers
        .iter()
        .position(|s| s.name == server)
        .ok_or_else(|| format!("Server '{server}' not found in toolbox '{toolbox}'"))?;
    let config = &slot.config.servers[index];
    let old = match &previous.servers[index] {
        ServerState::Running(r) if r.conn.is_up() => return Ok(Arc::clone(&r.conn)),
        ServerState::Running(r) => Arc::clone(&r.conn),
        _ => {
            return Err(format!(
                "Server '{server}' in toolbox '{toolbox}' is not running"
            ))
        }
    };
    let why = old.down_reason().unwrap_or_default();
    let spec = launch::resolve(toolbox, config).map_err(|errors| errors.join("; "))?;
    launch::stop_all(&[old], "");
    std::thread::sleep(slot.restart_delay(server));
    slot.note_start(server);
    let result = wb
        .launcher
        .start_all(vec![spec])
        .pop()
        .unwrap_or_else(|| Err("no start result".into()));
    let state = started_state(result, &config.tool_filter);
    let mut open = (*previous).clone();
    open.servers[index] = state.clone();
    slot.set_open(Some(Arc::new(open)));
    wb.tools_changed();
    match state {
        ServerState::Running(r) => {
            log::warn!("[{toolbox}/{server}] had stopped ({why}); restarted for a call");
            Ok(r.conn)
        }
        ServerState::Failed(e) => Err(format!(
            "Server '{server}' in toolbox '{toolbox}' had stopped ({why}) and could not be restarted: {e}"
        )),
        ServerState::Disabled => Err(format!("Server '{server}' in toolbox '{toolbox}' is disabled")),
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
fn relist(running: &RunningServer, filter: &ToolFilter, timeout: Duration) -> ServerState {
    let conn = &running.conn;
    if conn.tools_changed() {
        match conn.list_tools(Instant::now() + timeout) {
            Ok(tools) => {
                return ServerState::Running(RunningServer::new(Arc::clone(conn), tools, filter))
            }
            Err(e) => log::warn!(
                "cannot list tools again: {}",
                conn.describe(&e, "listing tools")
            ),
        }
    }
    ServerState::Running(running.clone())
}

struct OpenDescription {
    json: Box<RawValue>,
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
        json: RawValue::from_string(text).expect("the open result is valid JSON"),
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
