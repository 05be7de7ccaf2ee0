//! The `use_tool` meta-tool as the host sees it: its definition, the checking
//! of its arguments (with an example of the right shape, built from the
//! caller's names, for a call that flattened them or gave `tool` as one
//! string), and the result size it tells the host.
//!
//! The call itself is forwarded on the hot path (`fleet::forward`), not here.
//! The usual valid call is read by `plain_call` in one typed pass, with no
//! tree and no copies; anything else is checked member by member by
//! `arguments`, on an outline (`args::outline`), for the messages. Both apply
//! the same rules.

use super::args::{self, expected, finish, unknown_keys, MAX_NAME, MAX_TOOL_NAME};
use crate::config::ToolboxConfig;
use crate::fleet::toolbox::ToolId;
use crate::protocol::jsonrpc::{self, Members};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::borrow::Cow;

pub(crate) const NAME: &str = "use_tool";

/// The `tools/list` entry (without the host hints, which `tools_list` adds).
pub(super) fn definition() -> Value {
    let name_field = |what: &str| json!({"type": "string", "minLength": 1, "description": what});
    json!({
        "name": NAME,
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
    })
}

/// The result size `use_tool` tells the host (`anthropic/maxResultSizeChars`):
/// the largest `maxResultChars` in effect for an enabled server, which is the
/// top level's unless a server sets its own; `None` when no server's results
/// are cut. The largest, not the top level's: every result the workbench cut
/// then fits under it, so the host sets none aside, even from a server whose
/// own cap is above the top level's (or that has the only cap). A smaller
/// cap is the workbench's to apply, and it does. A server without a cap
/// passes results whole, as before, and the host judges them by this size too.
pub(super) fn result_chars(toolboxes: &[&ToolboxConfig]) -> Option<usize> {
    toolboxes
        .iter()
        .flat_map(|t| &t.servers)
        .filter(|s| !s.disabled)
        .filter_map(|s| s.max_result_chars)
        .max()
}

/// A plain, valid `use_tool` call read in one typed pass, with no tree and no
/// copies: its identifier, and its nested `arguments` as the host's bytes (`{}`
/// when absent). `None` for anything else, for which `arguments` gives the
/// messages (or accepts what this pass does not take, such as a repeated
/// key). Both apply the same rules.
pub(crate) fn plain_call(args: &RawValue) -> Option<(ToolId, &RawValue)> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Call<'a> {
        #[serde(borrow)]
        tool: &'a RawValue,
        #[serde(default, borrow, deserialize_with = "jsonrpc::present")]
        arguments: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Identifier<'a> {
        #[serde(borrow)]
        toolbox: Cow<'a, str>,
        #[serde(borrow)]
        server: Cow<'a, str>,
        #[serde(borrow)]
        tool: Cow<'a, str>,
    }
    // A derived struct would also take an array, field by field.
    let object = |raw: &RawValue| raw.get().starts_with('{');
    let call: Call = serde_json::from_str(args.get())
        .ok()
        .filter(|_| object(args))?;
    let arguments = match call.arguments {
        None => jsonrpc::empty_object(),
        Some(raw) if raw.get().starts_with('{') => raw,
        Some(_) => return None,
    };
    let Identifier {
        toolbox,
        server,
        tool,
    } = serde_json::from_str(call.tool.get())
        .ok()
        .filter(|_| object(call.tool))?;
    let valid = name_fits(&toolbox, MAX_NAME)
        && name_fits(&server, MAX_NAME)
        && name_fits(&tool, MAX_TOOL_NAME);
    valid.then(|| {
        let id = ToolId {
            toolbox: toolbox.into_owned(),
            server: server.into_owned(),
            tool: tool.into_owned(),
        };
        (id, arguments)
    })
}

/// A name that is neither blank nor longer than `max` characters.
fn name_fits(name: &str, max: usize) -> bool {
    !name.trim().is_empty() && name.chars().count() <= max
}

/// The identifier of a `use_tool` call, after checking its whole shape
/// (`arguments`, when present, must be an object; the caller forwards the
/// host's own bytes of it).
pub(crate) fn arguments(args: &Members) -> Result<ToolId, String> {
    check(&args::outline(args, &["tool"]))
}

fn check(args: &Map<String, Value>) -> Result<ToolId, String> {
    let mut problems = Vec::new();
    let id = match args.get("tool") {
        None => {
            problems.push("tool: Required".to_string());
            None
        }
        Some(Value::Object(tool)) => {
            let toolbox = field(tool, "toolbox", "Toolbox", MAX_NAME, &mut problems);
            let server = field(tool, "server", "Server", MAX_NAME, &mut problems);
            let name = field(tool, "tool", "Tool", MAX_TOOL_NAME, &mut problems);
            unknown_keys(
                tool,
                &["toolbox", "server", "tool"],
                "tool: ",
                &mut problems,
            );
            match (toolbox, server, name) {
                (Some(toolbox), Some(server), Some(tool)) => Some(ToolId {
                    toolbox,
                    server,
                    tool,
                }),
                _ => None,
            }
        }
        Some(other) => {
            problems.push(format!("tool: {}", expected("object", other)));
            None
        }
    };
    if let Some(other) = args.get("arguments").filter(|a| !a.is_object()) {
        problems.push(format!("arguments: {}", expected("object", other)));
    }
    unknown_keys(args, &["tool", "arguments"], "", &mut problems);
    let result = finish(problems, id);
    match result {
        Err(text) if is_flattened(args) => Err(format!("{text}. {}", flattened_hint(args))),
        Err(text) => match args.get("tool") {
            Some(Value::String(given)) => Err(format!("{text}. {}", string_hint(given))),
            _ => Err(text),
        },
        ok => ok,
    }
}

/// One name of the `tool` object.
fn field(
    obj: &Map<String, Value>,
    key: &str,
    what: &str,
    max: usize,
    problems: &mut Vec<String>,
) -> Option<String> {
    let blank = format!("tool.{key}: {what} name cannot be empty");
    args::text(obj.get(key), &format!("tool.{key}"), &blank, max, problems)
}

/// Keys that show the identifier was written at the top level (the flattened
/// `{toolbox, server, tool}` form, or the old `toolbox_name` / `tool_name` one).
const FLAT_KEYS: [&str; 4] = ["toolbox", "server", "toolbox_name", "server_name"];

fn is_flattened(args: &Map<String, Value>) -> bool {
    FLAT_KEYS.iter().any(|k| args.contains_key(*k))
}

/// The right shape for a `tool` given as one string (`"notes/memory/read_graph"`,
/// `"memory/read_graph"`, `"read_graph"`), filled with the names it holds:
/// the last part is the tool (a tool name may hold `/` itself, after the
/// toolbox and the server), the one before it the server, the first of
/// three the toolbox.
fn string_hint(given: &str) -> String {
    let usable = |name: &str, max: usize| !name.trim().is_empty() && name.chars().count() <= max;
    let (toolbox, server, tool) = match given.splitn(3, '/').collect::<Vec<_>>()[..] {
        [toolbox, server, tool] => (Some(toolbox), Some(server), tool),
        [server, tool] => (None, Some(server), tool),
        _ => (None, None, given),
    };
    let name = |part: Option<&str>, max: usize, placeholder: &str| {
        Value::from(part.filter(|p| usable(p, max)).unwrap_or(placeholder))
    };
    let example = format!(
        r#"{{"tool":{{"toolbox":{},"server":{},"tool":{}}},"arguments":{{}}}}"#,
        name(toolbox, MAX_NAME, "<toolbox>"),
        name(server, MAX_NAME, "<server>"),
        name(Some(tool), MAX_TOOL_NAME, "<tool>"),
    );
    let missing = if !toolbox.is_some_and(|t| usable(t, MAX_NAME)) {
        " (find_tools gives all three names of a tool)"
    } else {
        ""
    };
    format!(
        "\"tool\" takes an object of three names, not one string, and the tool's input goes \
         under \"arguments\", for example: {example}{missing}"
    )
}

/// The right shape, filled with the caller's own names where they are usable.
fn flattened_hint(args: &Map<String, Value>) -> String {
    let pick = |keys: &[&str], max: usize, placeholder: &str| {
        keys.iter()
            .find_map(|k| match args.get(*k) {
                Some(Value::String(s)) if !s.trim().is_empty() && s.chars().count() <= max => {
                    Some(s.clone())
                }
                _ => None,
            })
            .unwrap_or_else(|| placeholder.to_string())
    };
    let example = format!(
        r#"{{"tool":{{"toolbox":{},"server":{},"tool":{}}},"arguments":{{}}}}"#,
        Value::from(pick(&["toolbox", "toolbox_name"], MAX_NAME, "<toolbox>")),
        Value::from(pick(&["server", "server_name"], MAX_NAME, "<server>")),
        Value::from(pick(
            &["tool", "tool_name", "name"],
            MAX_TOOL_NAME,
            "<tool>"
        )),
    );
    format!(
        "The toolbox, server and tool names go together in one object under \"tool\", \
         and the tool's input under \"arguments\", for example: {example}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::args::map;

    #[test]
    fn the_plain_read_agrees_with_the_outline() {
        let long = "x".repeat(65);
        let cases = [
            r#"{"tool":{"toolbox":"a","server":"b","tool":"c"}}"#.to_string(),
            r#"{"tool":{"toolbox":"a","server":"b","tool":"c"},"arguments":{"x":[1]}}"#.into(),
            r#"{"arguments":{},"tool":{"tool":"c","server":"b","toolbox":"\u0061"}}"#.into(),
            r#"{"tool":{"toolbox":"a","server":"b","tool":"c"},"arguments":null}"#.into(),
            r#"{"tool":{"toolbox":"a","server":"b","tool":"c"},"arguments":[]}"#.into(),
            r#"{"tool":{"toolbox":" ","server":"b","tool":"c"}}"#.into(),
            format!(r#"{{"tool":{{"toolbox":"{long}","server":"b","tool":"c"}}}}"#),
            r#"{"tool":{"toolbox":"a","server":"b","name":"c"}}"#.into(),
            r#"{"tool":{"toolbox":"a","server":"b","tool":"c","x":1}}"#.into(),
            r#"{"tool":{"toolbox":"a","server":"b","tool":"c"},"extra":1}"#.into(),
            r#"{"tool":{"toolbox":"a","server":"b","tool":"c"},"tool":{"toolbox":"d","server":"b","tool":"c"}}"#.into(),
            r#"{"tool":{"toolbox":"a","server":2,"tool":"c"}}"#.into(),
            r#"{"tool":"a/b/c"}"#.into(),
            r#"{"tool":["a","b","c"]}"#.into(),
            r#"{"toolbox":"a","server":"b","tool":"c"}"#.into(),
            r#"{}"#.into(),
        ];
        for case in cases {
            let raw = RawValue::from_string(case.clone()).unwrap();
            let args = Members::read(&raw).unwrap();
            let full = arguments(&args);
            match plain_call(&raw) {
                Some((id, plain)) => {
                    let expected = args.get("arguments").unwrap_or(jsonrpc::empty_object());
                    assert_eq!(full.as_ref().ok(), Some(&id), "{case}");
                    assert_eq!(plain.get(), expected.get(), "{case}");
                }
                None => assert!(
                    full.is_err() || case.matches("\"tool\":{").count() > 1,
                    "{case}: only invalid calls and repeated keys leave the plain read"
                ),
            }
        }
    }

    #[test]
    fn use_tool_messages() {
        let ok = check(&map(
            json!({"tool":{"toolbox":"a","server":"b","tool":"c"}}),
        ))
        .unwrap();
        assert_eq!(ok.tool, "c");
        let err = check(&map(json!({
            "tool": {"toolbox":"dev","server":"","name":"x"},
            "arguments": [1],
            "extra": true
        })))
        .unwrap_err();
        assert_eq!(
            err,
            "Invalid parameters: tool.server: Server name cannot be empty; tool.tool: Required; \
             tool: Unrecognized key: 'name' (the tool's name goes in 'tool'); \
             arguments: Expected object, received array; Unrecognized key: 'extra'"
        );
    }

    #[test]
    fn a_tool_given_as_a_string_gets_the_object_form_built_from_it() {
        let err = |tool: &str| check(&map(json!({"tool": tool}))).unwrap_err();
        assert_eq!(
            err("notes/memory/read_graph"),
            "Invalid parameters: tool: Expected object, received string. \"tool\" takes an \
             object of three names, not one string, and the tool's input goes under \
             \"arguments\", for example: \
             {\"tool\":{\"toolbox\":\"notes\",\"server\":\"memory\",\"tool\":\"read_graph\"},\"arguments\":{}}"
        );
        assert!(
            err("read_graph").ends_with(
                r#"{"tool":{"toolbox":"<toolbox>","server":"<server>","tool":"read_graph"},"arguments":{}} (find_tools gives all three names of a tool)"#
            ),
            "{}",
            err("read_graph")
        );
        assert!(err("memory/read_graph").ends_with(
            r#"{"tool":{"toolbox":"<toolbox>","server":"memory","tool":"read_graph"},"arguments":{}} (find_tools gives all three names of a tool)"#
        ));
        assert!(err("a/b/c/d").contains(r#"{"toolbox":"a","server":"b","tool":"c/d"}"#));
        assert!(err("/ /x").contains(
            r#"{"toolbox":"<toolbox>","server":"<server>","tool":"x"},"arguments":{}} (find_tools"#
        ));
    }

    #[test]
    fn the_flattened_form_gets_an_example_of_the_right_shape() {
        let err = check(&map(json!({
            "toolbox": "dev", "server": "fs", "tool": "read_file", "arguments": {"path": "a"}
        })))
        .unwrap_err();
        assert_eq!(
            err,
            "Invalid parameters: tool: Expected object, received string; \
             Unrecognized key: 'server'; Unrecognized key: 'toolbox'. \
             The toolbox, server and tool names go together in one object under \"tool\", \
             and the tool's input under \"arguments\", for example: \
             {\"tool\":{\"toolbox\":\"dev\",\"server\":\"fs\",\"tool\":\"read_file\"},\"arguments\":{}}"
        );
        let err = check(&map(json!({"toolbox_name": "dev", "tool_name": 3}))).unwrap_err();
        assert!(
            err.ends_with(
                r#"{"tool":{"toolbox":"dev","server":"<server>","tool":"<tool>"},"arguments":{}}"#
            ),
            "{err}"
        );
    }
}
