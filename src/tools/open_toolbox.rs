//! The `open_toolbox` meta-tool as the host sees it: its definition, the
//! checking of its arguments, and its answer, made by the session from what
//! its copies of the toolbox found (`fleet::facts::Opened`): one copy, or the
//! two of a toolbox whose servers are partly shared (§8), their servers put
//! back in config order, in the form this host reads (`open_result`).
//!
//! The result is built as compact JSON. Downstream tool definitions are
//! spliced in as the bytes the server sent, with `toolbox_name` and
//! `source_server` added, so key order and numbers stay exactly as the server
//! wrote them. No IO here: the fleet's `lifecycle` does the opening.

use super::args::{self, expected, finish, too_long, unknown_keys, MAX_TOOL_NAME};
use super::open_result::{self, Form};
use super::outcome::{not_configured, Outcome};
use crate::config::ToolboxConfig;
use crate::fleet::facts::{NotOpened, OpenFound};
use crate::fleet::toolbox::{OpenToolbox, ServerState, Toolboxes};
use crate::protocol::jsonrpc::Members;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

pub(crate) const NAME: &str = "open_toolbox";

/// The `tools/list` entry (without the host hints, which `tools_list` adds),
/// naming `toolboxes`; `outputSchema` only for versions that know
/// `structuredContent`.
pub(super) fn definition(toolboxes: &[&ToolboxConfig], structured: bool) -> Value {
    let listed: Vec<String> = toolboxes
        .iter()
        .map(|t| format!("{} ({})", t.name, t.description))
        .collect();
    let mut open = json!({
        "name": NAME,
        "description": format!(
            "Open a toolbox: start its MCP servers and list their tools (name, description, \
             inputSchema, toolbox_name, source_server). Then call use_tool to run one. \
             If the tools come without inputSchema, call it again with \"tools\" naming \
             the ones you need. To reach one tool without opening a whole toolbox, use \
             find_tools. Toolboxes: {}.",
            if listed.is_empty() {
                "none configured yet".to_string()
            } else {
                listed.join("; ")
            }
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "toolbox_name": args::toolbox_name_schema(toolboxes, "Name of the toolbox to open"),
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
    open
}

/// The arguments of `open_toolbox`: `toolbox_name`, and optionally `tools`,
/// the names of the tools whose full definitions to return.
pub(crate) fn arguments(args: &Members) -> Result<(String, Option<Vec<String>>), String> {
    check(&args::outline(args, &["tools"]))
}

fn check(args: &Map<String, Value>) -> Result<(String, Option<Vec<String>>), String> {
    let mut problems = Vec::new();
    let name = args::toolbox_name(args, &mut problems);
    let tools = match args.get("tools") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) if items.is_empty() => {
            problems.push("tools: Array must contain at least 1 element(s)".to_string());
            None
        }
        Some(Value::Array(items)) => {
            let mut names = Vec::new();
            for (i, item) in items.iter().enumerate() {
                match item {
                    Value::String(s) if s.chars().count() <= MAX_TOOL_NAME => names.push(s.clone()),
                    Value::String(_) => {
                        problems.push(format!("tools[{i}]: {}", too_long(MAX_TOOL_NAME)))
                    }
                    other => problems.push(format!("tools[{i}]: {}", expected("string", other))),
                }
            }
            Some(names)
        }
        Some(other) => {
            problems.push(format!("tools: {}", expected("array", other)));
            None
        }
    };
    unknown_keys(args, &["toolbox_name", "tools"], "", &mut problems);
    finish(problems, name.map(|name| (name, tools)))
}

/// The answer to `open_toolbox` from what the toolbox's copies `found`
/// (`base`, the toolbox as configured, is what it describes when there were
/// two; else the one copy's definition). `form` and `requested` shape it
/// for the host (see `open_result`); `toolboxes` name the configured ones
/// for a toolbox that is not.
pub(crate) fn answer(
    base: Option<&ToolboxConfig>,
    found: Vec<OpenFound>,
    (form, requested): (Form, Option<&[String]>),
    toolboxes: &Toolboxes,
    name: &str,
) -> Outcome {
    let mut opened = Vec::new();
    let mut refused = Vec::new();
    for part in found {
        match part {
            Ok(part) => opened.push(part),
            Err(NotOpened::NotConfigured) => refused.push(not_configured(toolboxes, name)),
            Err(NotOpened::Refused(why)) => refused.push(why),
        }
    }
    if !refused.is_empty() {
        return Outcome::error(refused.join("\n"));
    }
    let Some(base) = base.or(opened.first().map(|o| &*o.config)) else {
        return Outcome::error("internal error: no copy was opened".to_string());
    };
    let state_of = |name: &str| {
        opened.iter().find_map(|part| {
            let i = part.config.servers.iter().position(|s| s.name == name)?;
            Some(part.open.servers[i].clone())
        })
    };
    let open = OpenToolbox {
        servers: base
            .servers
            .iter()
            .map(|s| state_of(&s.name).unwrap_or(ServerState::Disabled))
            .collect(),
    };
    let notes = opened
        .iter()
        .flat_map(|o| &o.restarted)
        .map(|(server, why)| format!("Server '{server}' had stopped ({why}) and was restarted"))
        .collect();
    let described = describe(base, &open, notes);
    if opened.iter().all(|o| o.failed) {
        return Outcome::error(described.errors.join("\n"));
    }
    Outcome {
        text: open_result::reshape(described.json, form, requested),
        is_error: false,
        json: true,
    }
}

struct Description {
    /// The compact JSON text of the result object.
    json: String,
    errors: Vec<String>,
}

/// The open result object: `{"toolbox","description","servers_connected","tools","_errors"?,"_warnings"?}`.
fn describe(config: &ToolboxConfig, open: &OpenToolbox, mut warnings: Vec<String>) -> Description {
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
    Description {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::args::map;

    #[test]
    fn open_toolbox_takes_optional_tool_names() {
        assert_eq!(
            check(&map(json!({"toolbox_name":"dev"}))).unwrap(),
            ("dev".to_string(), None)
        );
        assert_eq!(
            check(&map(json!({"toolbox_name":"dev","tools":["a","b"]}))).unwrap(),
            (
                "dev".to_string(),
                Some(vec!["a".to_string(), "b".to_string()])
            )
        );
        assert_eq!(
            check(&map(json!({"toolbox_name":"dev","tools":"a"}))).unwrap_err(),
            "Invalid parameters: tools: Expected array, received string"
        );
        assert_eq!(
            check(&map(json!({"tools":[1],"x":0}))).unwrap_err(),
            "Invalid parameters: toolbox_name: Required; tools[0]: Expected string, received number; \
             Unrecognized key: 'x'"
        );
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
