//! What the meta-tools share in reading their arguments: the messages of
//! docs/reference.md §5 (modelled on zod's), one `path: message` per problem,
//! joined by `; `, after `Invalid parameters: `; the `outline` the validators
//! read; the name limits; and the `toolbox_name` argument, schema and check,
//! of `open_toolbox` and `close_toolbox`. Each meta-tool's own arguments are
//! checked in its own file.
//!
//! The messages become `isError` results, which a model can read and act on,
//! rather than JSON-RPC errors, which many hosts hide.
//!
//! The validators see an `outline` of the arguments, never their whole tree:
//! `use_tool`'s nested `arguments` can be any size and depth, and only its type
//! matters here (the host's bytes of it are forwarded as they are).

use crate::config::ToolboxConfig;
use crate::protocol::jsonrpc::{self, Members};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

/// Toolbox and server names are at most 64 characters (docs/reference.md §3.1); longer
/// input cannot name anything, and is not echoed back.
pub(super) const MAX_NAME: usize = 64;
/// Tool names SHOULD be at most 128 characters (MCP 2025-11-25, server/tools, "Tool Names");
/// allow twice that from servers that ignore the advice.
pub(super) const MAX_TOOL_NAME: usize = 256;

/// What the validators look at in an object of arguments: every member, with
/// strings as they are and other values as type-only stand-ins (an empty object
/// or array, `0`, `false`, `null`); the members named in `open` are outlined
/// one level deeper (`use_tool`'s `tool` object, `open_toolbox`'s `tools` array).
pub(super) fn outline(args: &Members, open: &[&str]) -> Map<String, Value> {
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

/// The schema of a `toolbox_name` argument: one of the configured toolboxes.
/// No toolboxes yet (a config that starts empty and is filled while it
/// runs): no `enum`, since an empty one is refused by some validators.
pub(super) fn toolbox_name_schema(toolboxes: &[&ToolboxConfig], what: &str) -> Value {
    let mut schema = json!({"type": "string", "minLength": 1, "description": what});
    if !toolboxes.is_empty() {
        let names: Vec<&str> = toolboxes.iter().map(|t| t.name.as_str()).collect();
        schema["enum"] = json!(names);
    }
    schema
}

/// The `toolbox_name` argument: a name that is neither blank nor too long.
pub(super) fn toolbox_name(
    args: &Map<String, Value>,
    problems: &mut Vec<String>,
) -> Option<String> {
    let blank = "toolbox_name cannot be empty";
    text(
        args.get("toolbox_name"),
        "toolbox_name",
        blank,
        MAX_NAME,
        problems,
    )
}

/// A required string at `path` that is neither blank (`blank` is the
/// message then) nor longer than `max` characters.
pub(super) fn text(
    value: Option<&Value>,
    path: &str,
    blank: &str,
    max: usize,
    problems: &mut Vec<String>,
) -> Option<String> {
    match value {
        None => problems.push(format!("{path}: Required")),
        Some(Value::String(s)) if s.trim().is_empty() => problems.push(blank.to_string()),
        Some(Value::String(s)) if s.chars().count() > max => {
            problems.push(format!("{path}: {}", too_long(max)))
        }
        Some(Value::String(s)) => return Some(s.clone()),
        Some(other) => problems.push(format!("{path}: {}", expected("string", other))),
    }
    None
}

/// A problem for each key of `obj` not in `known`; `prefix` is the path of
/// `obj` (`""` at the top level).
pub(super) fn unknown_keys(
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

pub(super) fn too_long(max: usize) -> String {
    format!("String must contain at most {max} character(s)")
}

pub(super) fn expected(kind: &str, got: &Value) -> String {
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

/// The value, or every problem found in one message.
pub(super) fn finish<T>(problems: Vec<String>, value: Option<T>) -> Result<T, String> {
    match value {
        Some(v) if problems.is_empty() => Ok(v),
        _ => Err(format!("Invalid parameters: {}", problems.join("; "))),
    }
}

/// The arguments as a map, for the validators' tests.
#[cfg(test)]
pub(super) fn map(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
