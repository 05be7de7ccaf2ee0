//! Strict validation of the meta-tools' arguments, with the messages of
//! docs/reference.md §5 (modelled on zod's): one `path: message` per problem, joined by `; `,
//! after `Invalid parameters: `. These become `isError` results, which a model
//! can read and act on, rather than JSON-RPC errors, which many hosts hide.
//!
//! The validators see an `outline` of the arguments, never their whole tree:
//! `use_tool`'s nested `arguments` can be any size and depth, and only its type
//! matters here (the host's bytes of it are forwarded as they are). The usual
//! valid `use_tool` call takes a faster typed read, `plain_use_tool`, with the
//! same rules.

use crate::fleet::toolbox::ToolId;
use crate::protocol::jsonrpc::{self, Members};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// What the validators look at in an object of arguments: every member, with
/// strings as they are and other values as type-only stand-ins (an empty object
/// or array, `0`, `false`, `null`); the members named in `open` are outlined
/// one level deeper (`use_tool`'s `tool` object, `open_toolbox`'s `tools` array).
pub(crate) fn outline(args: &Members, open: &[&str]) -> Map<String, Value> {
    args.iter()
        .map(|(key, raw)| {
            let value = match raw.get().as_bytes().first() {
                Some(b'{') if open.contains(&key) => match Members::read(raw) {
                    Ok(inner) => Value::Object(outline(&inner, &[])),
                    Err(_) => stand_in(raw),
                },
                Some(b'[') if open.contains(&key) => {
                    match serde_json::from_str::<Vec<&RawValue>>(raw.get()) {
                        Ok(items) => items.into_iter().map(stand_in).collect(),
                        Err(_) => stand_in(raw),
                    }
                }
                _ => stand_in(raw),
            };
            (key.to_string(), value)
        })
        .collect()
}

fn stand_in(raw: &RawValue) -> Value {
    match raw.get().as_bytes().first() {
        Some(b'"') => Value::String(jsonrpc::string(raw).unwrap_or_default()),
        Some(b'{') => Value::Object(Map::new()),
        Some(b'[') => Value::Array(Vec::new()),
        Some(b't' | b'f') => Value::Bool(false),
        Some(b'n') | None => Value::Null,
        Some(_) => Value::from(0),
    }
}

/// The `toolbox_name` of `close_toolbox`.
pub(crate) fn toolbox_name(args: &Map<String, Value>) -> Result<String, String> {
    let mut problems = Vec::new();
    let name = toolbox_name_field(args, &mut problems);
    unknown_keys(args, &["toolbox_name"], "", &mut problems);
    finish(problems, name)
}

/// The arguments of `open_toolbox`: `toolbox_name`, and optionally `tools`,
/// the names of the tools whose full definitions to return.
pub(crate) fn open_toolbox(
    args: &Map<String, Value>,
) -> Result<(String, Option<Vec<String>>), String> {
    let mut problems = Vec::new();
    let name = toolbox_name_field(args, &mut problems);
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

/// The arguments of `find_tools`: `query`, and `limit` (1 to `max_limit`,
/// `default_limit` when absent). `limit` is its raw JSON value: the outline
/// keeps no numbers.
pub(crate) fn find_tools(
    args: &Map<String, Value>,
    limit: Option<&RawValue>,
    default_limit: usize,
    max_limit: usize,
) -> Result<(String, usize), String> {
    let mut problems = Vec::new();
    let query = match args.get("query") {
        None => {
            problems.push("query: Required".to_string());
            None
        }
        Some(Value::String(s)) if s.trim().is_empty() => {
            problems.push("query cannot be empty".to_string());
            None
        }
        Some(Value::String(s)) if s.chars().count() > MAX_QUERY => {
            problems.push(format!("query: {}", too_long(MAX_QUERY)));
            None
        }
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            problems.push(format!("query: {}", expected("string", other)));
            None
        }
    };
    let limit = match limit.map(|raw| serde_json::from_str::<Value>(raw.get())) {
        None | Some(Ok(Value::Null)) => default_limit,
        Some(Ok(Value::Number(n))) => match n.as_u64() {
            Some(n) if (1..=max_limit as u64).contains(&n) => n as usize,
            _ => {
                problems.push(format!(
                    "limit: Expected an integer from 1 to {max_limit}, received {n}"
                ));
                default_limit
            }
        },
        Some(Ok(other)) => {
            problems.push(format!("limit: {}", expected("number", &other)));
            default_limit
        }
        Some(Err(_)) => {
            problems.push("limit: Expected number".to_string());
            default_limit
        }
    };
    unknown_keys(args, &["query", "limit"], "", &mut problems);
    finish(problems, query.map(|query| (query, limit)))
}

fn toolbox_name_field(args: &Map<String, Value>, problems: &mut Vec<String>) -> Option<String> {
    match args.get("toolbox_name") {
        None => {
            problems.push("toolbox_name: Required".to_string());
            None
        }
        Some(Value::String(s)) if s.trim().is_empty() => {
            problems.push("toolbox_name cannot be empty".to_string());
            None
        }
        Some(Value::String(s)) if s.chars().count() > MAX_NAME => {
            problems.push(format!("toolbox_name: {}", too_long(MAX_NAME)));
            None
        }
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            problems.push(format!("toolbox_name: {}", expected("string", other)));
            None
        }
    }
}

/// A plain, valid `use_tool` call read in one typed pass, with no tree and no
/// copies: its identifier, and its nested `arguments` as the host's bytes (`{}`
/// when absent). `None` for anything else, for which `use_tool` on the call's
/// `outline` gives the messages (or accepts what this pass does not take, such
/// as a repeated key). Both apply the same rules.
pub(crate) fn plain_use_tool(args: &RawValue) -> Option<(ToolId, &RawValue)> {
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
pub(crate) fn use_tool(args: &Map<String, Value>) -> Result<ToolId, String> {
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
        other => other,
    }
}

/// Keys that show the identifier was written at the top level (the flattened
/// `{toolbox, server, tool}` form, or the old `toolbox_name` / `tool_name` one).
const FLAT_KEYS: [&str; 4] = ["toolbox", "server", "toolbox_name", "server_name"];

fn is_flattened(args: &Map<String, Value>) -> bool {
    FLAT_KEYS.iter().any(|k| args.contains_key(*k))
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

fn field(
    obj: &Map<String, Value>,
    key: &str,
    what: &str,
    max: usize,
    problems: &mut Vec<String>,
) -> Option<String> {
    match obj.get(key) {
        None => problems.push(format!("tool.{key}: Required")),
        Some(Value::String(s)) if s.trim().is_empty() => {
            problems.push(format!("tool.{key}: {what} name cannot be empty"))
        }
        Some(Value::String(s)) if s.chars().count() > max => {
            problems.push(format!("tool.{key}: {}", too_long(max)))
        }
        Some(Value::String(s)) => return Some(s.clone()),
        Some(other) => problems.push(format!("tool.{key}: {}", expected("string", other))),
    }
    None
}

fn unknown_keys(
    obj: &Map<String, Value>,
    known: &[&str],
    prefix: &str,
    problems: &mut Vec<String>,
) {
    for key in obj.keys().filter(|k| !known.contains(&k.as_str())) {
        let hint = if prefix == "tool: " && key == "name" {
            " (the tool's name goes in 'tool')"
        } else {
            ""
        };
        problems.push(format!("{prefix}Unrecognized key: '{key}'{hint}"));
    }
}

/// Toolbox and server names are at most 64 characters (docs/reference.md §3.1); longer
/// input cannot name anything, and is not echoed back.
const MAX_NAME: usize = 64;
/// Tool names SHOULD be at most 128 characters (MCP 2025-11-25, server/tools, "Tool Names");
/// allow twice that from servers that ignore the advice.
const MAX_TOOL_NAME: usize = 256;

/// The longest `find_tools` query, in characters.
const MAX_QUERY: usize = 1000;

fn too_long(max: usize) -> String {
    format!("String must contain at most {max} character(s)")
}

fn expected(kind: &str, got: &Value) -> String {
    let received = match got {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    format!("Expected {kind}, received {received}")
}

fn finish<T>(problems: Vec<String>, value: Option<T>) -> Result<T, String> {
    match value {
        Some(v) if problems.is_empty() => Ok(v),
        _ => Err(format!("Invalid parameters: {}", problems.join("; "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn find_tools_messages() {
        let raw = |text: &str| RawValue::from_string(text.to_string()).unwrap();
        let find = |args: Value, limit: Option<&str>| {
            let limit = limit.map(raw);
            find_tools(&map(args), limit.as_deref(), 8, 50)
        };
        assert_eq!(
            find(json!({"query": "read a file"}), None),
            Ok(("read a file".to_string(), 8))
        );
        assert_eq!(
            find(json!({"query": "x", "limit": 0}), Some("50")),
            Ok(("x".into(), 50))
        );
        assert_eq!(
            find(json!({"query": "x"}), Some("null")),
            Ok(("x".into(), 8))
        );
        let cases = [
            (
                json!({"query": "  "}),
                None,
                "Invalid parameters: query cannot be empty",
            ),
            (json!({}), None, "Invalid parameters: query: Required"),
            (
                json!({"query": 1}),
                None,
                "Invalid parameters: query: Expected string, received number",
            ),
            (
                json!({"query": "x", "limit": 0}),
                Some("0"),
                "Invalid parameters: limit: Expected an integer from 1 to 50, received 0",
            ),
            (
                json!({"query": "x", "limit": 0}),
                Some("2.5"),
                "Invalid parameters: limit: Expected an integer from 1 to 50, received 2.5",
            ),
            (
                json!({"query": "x", "limit": ""}),
                Some("\"3\""),
                "Invalid parameters: limit: Expected number, received string",
            ),
            (
                json!({"query": "x", "top": 1}),
                None,
                "Invalid parameters: Unrecognized key: 'top'",
            ),
        ];
        for (args, limit, message) in cases {
            assert_eq!(find(args, limit), Err(message.to_string()));
        }
    }

    #[test]
    fn toolbox_name_messages() {
        assert_eq!(
            toolbox_name(&map(json!({"toolbox_name":"dev"}))).unwrap(),
            "dev"
        );
        let cases = [
            (json!({}), "Invalid parameters: toolbox_name: Required"),
            (
                json!({"toolbox_name":" "}),
                "Invalid parameters: toolbox_name cannot be empty",
            ),
            (
                json!({"toolbox_name":"a","extra_field":1}),
                "Invalid parameters: Unrecognized key: 'extra_field'",
            ),
            (
                json!({"toolbox_name":3}),
                "Invalid parameters: toolbox_name: Expected string, received number",
            ),
            (
                json!({"toolbox_name":"x".repeat(65)}),
                "Invalid parameters: toolbox_name: String must contain at most 64 character(s)",
            ),
        ];
        for (input, message) in cases {
            assert_eq!(toolbox_name(&map(input)).unwrap_err(), message);
        }
    }

    #[test]
    fn open_toolbox_takes_optional_tool_names() {
        assert_eq!(
            open_toolbox(&map(json!({"toolbox_name":"dev"}))).unwrap(),
            ("dev".to_string(), None)
        );
        assert_eq!(
            open_toolbox(&map(json!({"toolbox_name":"dev","tools":["a","b"]}))).unwrap(),
            (
                "dev".to_string(),
                Some(vec!["a".to_string(), "b".to_string()])
            )
        );
        assert_eq!(
            open_toolbox(&map(json!({"toolbox_name":"dev","tools":"a"}))).unwrap_err(),
            "Invalid parameters: tools: Expected array, received string"
        );
        assert_eq!(
            open_toolbox(&map(json!({"tools":[1],"x":0}))).unwrap_err(),
            "Invalid parameters: toolbox_name: Required; tools[0]: Expected string, received number; \
             Unrecognized key: 'x'"
        );
        assert_eq!(
            toolbox_name(&map(json!({"toolbox_name":"dev","tools":["a"]}))).unwrap_err(),
            "Invalid parameters: Unrecognized key: 'tools'"
        );
    }

    #[test]
    fn outlines_keep_strings_and_types_only() {
        let raw = RawValue::from_string(
            r#"{"tool":{"toolbox":"dev","x":{"deep":[1]},"n":1e400},"arguments":{"a":[1,2]},"b":[3],"tool":{"server":"s"}}"#
                .to_string(),
        )
        .unwrap();
        let args = Members::read(&raw).unwrap();
        assert_eq!(
            Value::Object(outline(&args, &["tool"])),
            json!({"tool": {"server": "s"}, "arguments": {}, "b": []}),
            "the last of a repeated key counts"
        );
        let raw = RawValue::from_string(
            r#"{"tool":{"toolbox":"dev","x":{"deep":[1]},"n":1e400,"t":true}}"#.to_string(),
        )
        .unwrap();
        assert_eq!(
            Value::Object(outline(&Members::read(&raw).unwrap(), &["tool"])),
            json!({"tool": {"toolbox": "dev", "x": {}, "n": 0, "t": false}})
        );
        assert_eq!(
            Value::Object(outline(&Members::read(&raw).unwrap(), &[])),
            json!({"tool": {}})
        );
        let raw = RawValue::from_string(r#"{"tools":["a",[1],{"b":2},3]}"#.to_string()).unwrap();
        assert_eq!(
            Value::Object(outline(&Members::read(&raw).unwrap(), &["tools"])),
            json!({"tools": ["a", [], {}, 0]})
        );
    }

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
            let full = use_tool(&outline(&args, &["tool"]));
            match plain_use_tool(&raw) {
                Some((id, arguments)) => {
                    let expected = args.get("arguments").unwrap_or(jsonrpc::empty_object());
                    assert_eq!(full.as_ref().ok(), Some(&id), "{case}");
                    assert_eq!(arguments.get(), expected.get(), "{case}");
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
        let ok = use_tool(&map(
            json!({"tool":{"toolbox":"a","server":"b","tool":"c"}}),
        ))
        .unwrap();
        assert_eq!(ok.tool, "c");
        let err = use_tool(&map(json!({
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
        assert_eq!(
            use_tool(&map(json!({"tool":"dev/fs/read"}))).unwrap_err(),
            "Invalid parameters: tool: Expected object, received string"
        );
    }

    #[test]
    fn the_flattened_form_gets_an_example_of_the_right_shape() {
        let err = use_tool(&map(json!({
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
        let err = use_tool(&map(json!({"toolbox_name": "dev", "tool_name": 3}))).unwrap_err();
        assert!(
            err.ends_with(
                r#"{"tool":{"toolbox":"dev","server":"<server>","tool":"<tool>"},"arguments":{}}"#
            ),
            "{err}"
        );
    }
}
