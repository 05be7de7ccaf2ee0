//! What the host sees of the meta-tools: their definitions, the
//! `instructions` text, and the results of `open_toolbox` and `close_toolbox`
//! (which the fleet's `lifecycle` runs; `use_tool` is forwarded on the hot path by `forward`).
//!
//! Results are built as compact JSON. Downstream tool definitions are spliced in
//! as the bytes the server sent, with `toolbox_name` and `source_server` added,
//! so key order and numbers stay exactly as the server wrote them.

use crate::config::ToolboxConfig;
use crate::fleet::toolbox::{OpenToolbox, ServerState, Toolbox, Toolboxes};
use crate::protocol::mcp::{self, TextResult};
use serde_json::value::RawValue;
use serde_json::{json, Value};

pub(crate) const OPEN_TOOLBOX: &str = "open_toolbox";
pub(crate) const USE_TOOL: &str = "use_tool";
pub(crate) const CLOSE_TOOLBOX: &str = "close_toolbox";
pub(crate) const FIND_TOOLS: &str = "find_tools";

/// A finished meta-tool call: the `CallToolResult` to send.
pub(crate) struct Outcome {
    pub text: String,
    pub is_error: bool,
    /// `text` is a JSON object, also sent as `structuredContent` (2025-06-18+).
    pub json: bool,
}

impl Outcome {
    pub(crate) fn error(text: String) -> Outcome {
        Outcome {
            text,
            is_error: true,
            json: false,
        }
    }

    pub(crate) fn ok(text: String) -> Outcome {
        Outcome {
            is_error: false,
            ..Outcome::error(text)
        }
    }

    /// The `CallToolResult`; `structuredContent` only when the version has it.
    pub(crate) fn result(&self, structured_allowed: bool) -> TextResult<'_> {
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

/// The `tools/list` result: the four meta-tools, naming `toolboxes`.
/// `outputSchema` only for versions that know `structuredContent`. Each
/// carries the host hints (docs/reference.md §12): always loaded, and on
/// `use_tool` the result size of `use_tool_result_chars`.
pub(crate) fn tools_list(toolboxes: &[&ToolboxConfig], structured: bool) -> Value {
    let use_tool_chars = use_tool_result_chars(toolboxes);
    let names: Vec<&str> = toolboxes.iter().map(|t| t.name.as_str()).collect();
    let toolboxes: Vec<String> = toolboxes
        .iter()
        .map(|t| format!("{} ({})", t.name, t.description))
        .collect();
    // No toolboxes yet (a config that starts empty and is filled while it
    // runs): no `enum`, since an empty one is refused by some validators.
    let toolbox_name = |what: &str| {
        let mut schema = json!({"type": "string", "minLength": 1, "description": what});
        if !names.is_empty() {
            schema["enum"] = json!(names);
        }
        schema
    };
    let mut open = json!({
        "name": OPEN_TOOLBOX,
        "description": format!(
            "Open a toolbox: start its MCP servers and list their tools (name, description, \
             inputSchema, toolbox_name, source_server). Then call use_tool to run one. \
             If the tools come without inputSchema, call it again with \"tools\" naming \
             the ones you need. To reach one tool without opening a whole toolbox, use \
             find_tools. Toolboxes: {}.",
            if toolboxes.is_empty() {
                "none configured yet".to_string()
            } else {
                toolboxes.join("; ")
            }
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "toolbox_name": toolbox_name("Name of the toolbox to open"),
                "tools": {
                    "type": "array",
                    "items": {"type": "string"},
                    "minItems": 1,
                    "description": "Optional: return only these tools, with their full \
                        definitions (for hosts that get a shortened list)",
                },
            },
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
                "_note": {"type": "string"},
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
        "description": "Call a tool of any configured toolbox. Identify it exactly as \
            find_tools or open_toolbox gave it: tool.toolbox is its toolbox (toolbox_name), \
            tool.server its server (source_server), tool.tool its name. The toolbox need not \
            be open: a server that is not running starts on first use. Pass the tool's input \
            in arguments.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "tool": {
                    "type": "object",
                    "properties": {
                        "toolbox": name_field("The toolbox of the tool (toolbox_name)"),
                        "server": name_field("The server of the tool (source_server)"),
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
    let mut find = json!({
        "name": FIND_TOOLS,
        "description": "Search the tools of every toolbox, open or not, for what you want to \
            do, in your own words (for example \"take a screenshot of a web page\"). Use it \
            when the tool you need is not in an open toolbox, or you do not know which toolbox \
            holds it. Each match comes with toolbox, server, tool, description and inputSchema: \
            call it with use_tool right away, no open_toolbox needed. Starts no server. \
            Toolboxes whose tools are not known yet are listed in not_indexed: open them by \
            their description.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1,
                    "description": "What you want to do, in a few words"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50,
                    "description": "How many tools to return (default 8)"},
            },
            "required": ["query"],
            "additionalProperties": false,
        },
    });
    if structured {
        find["outputSchema"] = json!({
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "tools": {"type": "array", "items": {"type": "object"}},
                "not_indexed": {"type": "array", "items": {"type": "object"}},
            },
            "required": ["query", "tools"],
        });
    }
    let mut tools = [open, use_tool, find, close];
    for tool in &mut tools {
        let chars = use_tool_chars.filter(|_| tool["name"] == USE_TOOL);
        tool["_meta"] = Value::Object(mcp::host_hints(chars));
    }
    json!({ "tools": tools })
}

/// The result size `use_tool` tells the host (`anthropic/maxResultSizeChars`):
/// the largest `maxResultChars` in effect for an enabled server, which is the
/// top level's unless a server sets its own; `None` when no server's results
/// are cut. The largest, not the top level's: every result the workbench cut
/// then fits under it, so the host sets none aside, even from a server whose
/// own cap is above the top level's (or that has the only cap). A smaller
/// cap is the workbench's to apply, and it does. A server without a cap
/// passes results whole, as before, and the host judges them by this size too.
fn use_tool_result_chars(toolboxes: &[&ToolboxConfig]) -> Option<usize> {
    toolboxes
        .iter()
        .flat_map(|t| &t.servers)
        .filter(|s| !s.disabled)
        .filter_map(|s| s.max_result_chars)
        .max()
}

/// The `instructions` of the `initialize` result: what the workbench is, every
/// toolbox, and an example call whose shape is exactly what `use_tool` accepts.
pub(crate) fn instructions(toolboxes: &[&ToolboxConfig]) -> String {
    let mut text = String::from(
        "This server is a workbench of MCP toolboxes. A toolbox groups MCP servers.\n\
         1. find_tools searches the tools of every toolbox, open or not, for what you want \
         to do: use it when the tool you need is not in an open toolbox, or you do not know \
         which toolbox holds it.\n\
         2. use_tool calls a tool by its toolbox, server and tool name, as find_tools or \
         open_toolbox gave them; in a toolbox that is not open it starts just that server.\n\
         3. open_toolbox starts all of a toolbox's servers and lists their tools.\n\
         4. close_toolbox stops the toolbox's servers when you are done.\n\nToolboxes:\n",
    );
    if toolboxes.is_empty() {
        text.push_str("- none yet: the config has no toolboxes (they can be added while the workbench runs)\n");
    }
    for toolbox in toolboxes {
        let n = toolbox.servers.len();
        let disabled = toolbox.servers.iter().filter(|s| s.disabled).count();
        let disabled = if disabled > 0 {
            format!(", {disabled} disabled")
        } else {
            String::new()
        };
        text.push_str(&format!(
            "- {} ({n} server{}{disabled}): {}\n",
            toolbox.name,
            if n == 1 { "" } else { "s" },
            toolbox.description
        ));
    }
    let example = toolboxes.iter().find_map(|t| {
        let server = t.servers.iter().find(|srv| !srv.disabled)?;
        Some((&t.name, &server.name))
    });
    if let Some((toolbox, server)) = example {
        let (toolbox, server) = (json!(toolbox), json!(server));
        text.push_str(&format!(
            "\nExample: find_tools {{\"query\":\"<what you want to do>\"}}\n\
             then use_tool {{\"tool\":{{\"toolbox\":{toolbox},\"server\":{server},\
             \"tool\":\"<name from find_tools>\"}},\"arguments\":{{}}}}\n\
             (with a real tool name and its arguments)"
        ));
    }
    text
}

pub(crate) struct OpenDescription {
    /// The compact JSON text of the result object.
    pub json: String,
    pub errors: Vec<String>,
}

/// The open result object: `{"toolbox","description","servers_connected","tools","_errors"?,"_warnings"?}`.
pub(crate) fn describe_open(
    config: &ToolboxConfig,
    open: &OpenToolbox,
    mut warnings: Vec<String>,
) -> OpenDescription {
    let mut tools = String::from("[");
    let mut errors = Vec::new();
    for (server, state) in config.servers.iter().zip(&open.servers) {
        if let ServerState::Asleep(_) = state {
            let ms = server.idle_timeout.unwrap_or_default().as_millis();
            warnings.push(format!(
                "Server '{}' is asleep (no call for idleTimeoutMs, {ms} ms): its tools are from \
                 its last listing, and the next call to it starts it again",
                server.name
            ));
        }
        match state {
            ServerState::Running(running) | ServerState::Asleep(running) => {
                for tool in &running.tools {
                    if tools.len() > 1 {
                        tools.push(',');
                    }
                    annotate_tool(&mut tools, tool.raw.get(), &config.name, &server.name);
                }
                warnings.extend(running.kept_back.warnings(&config.name, &server.name));
            }
            ServerState::Failed(why) => errors.push(format!(
                "Failed to connect to server '{}' in toolbox '{}': {why}",
                server.name, config.name
            )),
            // Only before an open, which starts it: never in its result.
            ServerState::Reconfigured(_) | ServerState::Disabled => {}
        }
    }
    tools.push(']');
    let mut text = format!(
        "{{\"toolbox\":{},\"description\":{},\"servers_connected\":{},\"tools\":{tools}",
        json!(config.name),
        json!(config.description),
        open.connected()
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

/// The error for a toolbox name the config does not have.
pub(crate) fn not_configured(toolboxes: &Toolboxes, name: &str) -> String {
    let names = toolboxes.names();
    if names.is_empty() {
        return format!(
            "Toolbox '{name}' not found in configuration. The configuration has no toolboxes yet"
        );
    }
    format!(
        "Toolbox '{name}' not found in configuration. Available toolboxes: {}",
        names.join(", ")
    )
}

/// The `close_toolbox` text when other sessions of a shared fleet still hold
/// the toolbox (§8): nothing stopped, and it stays open for them.
pub(crate) fn closed(toolbox: &str, stopped: usize, others: usize) -> String {
    let servers = format!(
        "Toolbox '{toolbox}' closed ({stopped} server{} stopped)",
        if stopped == 1 { "" } else { "s" }
    );
    match others {
        0 => servers,
        1 => format!("{servers}: 1 other session holds it, so it stays open for them"),
        n => format!("{servers}: {n} other sessions hold it, so it stays open for them"),
    }
}

/// Dynamic mode: the answer to a call of a native tool that is not in the
/// table, as an `isError` text for the model. Hosts keep the tool list they
/// last fetched (some never fetch it again), so a model calls the tools of a
/// toolbox closed since; the text names that toolbox, found by its name's
/// `{toolbox}__` prefix (a shortened name has none), and what to call.
/// `is_open`: whether this session has the toolbox open (in a shared fleet,
/// another session's open toolbox is closed for this one).
pub(crate) fn native_not_found(
    toolboxes: &Toolboxes,
    name: &str,
    is_open: &dyn Fn(&Toolbox) -> bool,
) -> String {
    let owner = toolboxes
        .iter()
        .filter(|t| {
            name.strip_prefix(t.config.name.as_str())
                .is_some_and(|rest| rest.starts_with("__"))
        })
        .max_by_key(|t| t.config.name.len());
    match owner {
        Some(t) if !is_open(t) => format!(
            "Tool '{name}' is not available: its toolbox '{toolbox}' is closed. Call \
             open_toolbox {{\"toolbox_name\": \"{toolbox}\"}} to open it, then call the tool \
             again (or through use_tool with its toolbox, server and tool).",
            toolbox = t.config.name
        ),
        Some(t) => format!(
            "Tool '{name}' is not a tool of the open toolbox '{toolbox}' (its servers no \
             longer list it). Call open_toolbox {{\"toolbox_name\": \"{toolbox}\"}} to see the \
             tools it has now.",
            toolbox = t.config.name
        ),
        None => {
            let open: Vec<&str> = toolboxes
                .iter()
                .filter(|t| is_open(t))
                .map(|t| t.config.name.as_str())
                .collect();
            let open = if open.is_empty() {
                "none".to_string()
            } else {
                open.join(", ")
            };
            format!(
                "Tool '{name}' is not available: no open toolbox has it (open toolboxes: \
                 {open}). Call open_toolbox with one of: {} to list its tools, then call one \
                 by the name it lists or through use_tool.",
                toolboxes.names().join(", ")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use std::path::Path;

    fn config(text: &str) -> Config {
        crate::config::parse(text.as_bytes(), Path::new("c.json"), Path::new("/c"))
            .unwrap()
            .config
    }

    /// Each meta-tool's `_meta`, by name, as `tools/list` gives them.
    fn hints(text: &str) -> Vec<(String, Value)> {
        let config = config(text);
        let toolboxes: Vec<&ToolboxConfig> = config.toolboxes.iter().collect();
        let list = tools_list(&toolboxes, true);
        let tools = list["tools"].as_array().unwrap();
        tools
            .iter()
            .map(|t| (t["name"].as_str().unwrap().to_string(), t["_meta"].clone()))
            .collect()
    }

    #[test]
    fn every_meta_tool_is_always_loaded() {
        let got =
            hints(r#"{"toolboxes":{"t":{"description":"d","mcpServers":{"s":{"command":"x"}}}}}"#);
        let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, [OPEN_TOOLBOX, USE_TOOL, FIND_TOOLS, CLOSE_TOOLBOX]);
        for (name, meta) in &got {
            // No maxResultChars: no result size for any of them.
            assert_eq!(meta, &json!({"anthropic/alwaysLoad": true}), "{name}");
        }
        // A config with no toolboxes yet lists them the same way.
        for (name, meta) in hints(r#"{"toolboxes":{}}"#) {
            assert_eq!(meta, json!({"anthropic/alwaysLoad": true}), "{name}");
        }
    }

    #[test]
    fn use_tool_tells_the_largest_result_cap_in_effect() {
        let use_tool_meta = |text: &str| {
            let got = hints(text);
            for (name, meta) in &got {
                if name != USE_TOOL {
                    assert_eq!(meta, &json!({"anthropic/alwaysLoad": true}), "{name}");
                }
            }
            got.into_iter().find(|(n, _)| n == USE_TOOL).unwrap().1
        };
        let size = |meta: Value| meta["anthropic/maxResultSizeChars"].clone();
        // The top level's, which every server takes.
        let meta = use_tool_meta(
            r#"{"maxResultChars":2000,"toolboxes":{"t":{"description":"d","mcpServers":{"s":{"command":"x"}}}}}"#,
        );
        assert_eq!(
            meta,
            json!({"anthropic/alwaysLoad": true, "anthropic/maxResultSizeChars": 2000})
        );
        // A server above the top level: its cap, so none of its cut results is set aside.
        let meta = use_tool_meta(
            r#"{"maxResultChars":2000,"toolboxes":{"t":{"description":"d","mcpServers":{
                "a":{"command":"x"},"b":{"command":"x","maxResultChars":9000}}},
                "u":{"description":"d","mcpServers":{"c":{"command":"x","maxResultChars":600}}}}}"#,
        );
        assert_eq!(size(meta), json!(9000));
        // Below the top level: the top level's still applies to the others.
        let meta = use_tool_meta(
            r#"{"maxResultChars":2000,"toolboxes":{"t":{"description":"d","mcpServers":{
                "a":{"command":"x"},"b":{"command":"x","maxResultChars":700}}}}}"#,
        );
        assert_eq!(size(meta), json!(2000));
        // No top level: the one server's that has one.
        let meta = use_tool_meta(
            r#"{"toolboxes":{"t":{"description":"d","mcpServers":{
                "a":{"command":"x"},"b":{"command":"x","maxResultChars":3000}}}}}"#,
        );
        assert_eq!(size(meta), json!(3000));
        // A disabled server is never called: its cap does not count.
        let meta = use_tool_meta(
            r#"{"maxResultChars":2000,"toolboxes":{"t":{"description":"d","mcpServers":{
                "a":{"command":"x"},"b":{"command":"x","maxResultChars":9000,"disabled":true}}}}}"#,
        );
        assert_eq!(size(meta), json!(2000));
        // Over Claude Code's limit: the limit.
        let meta = use_tool_meta(
            r#"{"maxResultChars":2000000,"toolboxes":{"t":{"description":"d","mcpServers":{"s":{"command":"x"}}}}}"#,
        );
        assert_eq!(size(meta), json!(500_000));
    }

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
