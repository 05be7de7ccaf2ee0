//! How `tools` and `call` read to a person or a shell (docs/reference.md
//! §13): a `CallToolResult` as its text items, a line each; a tool as one
//! line, or as its whole definition (each argument with its type,
//! `required` or the default, its description, nested objects indented,
//! then an example `call` line).
//!
//! No IO: strings in, strings out.

use super::lookup::Tool;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::fmt::Write;

/// What a `CallToolResult` says: its text items, each followed by a
/// newline (its `structuredContent` as one line of JSON when it has no
/// text), and whether it is an error.
pub(crate) fn result_text(result: &RawValue) -> (String, bool) {
    let Ok(Value::Object(result)) = serde_json::from_str::<Value>(result.get()) else {
        return (format!("{}\n", result.get()), false);
    };
    let is_error = result.get("isError") == Some(&Value::Bool(true));
    let mut out = String::new();
    if let Some(Value::Array(items)) = result.get("content") {
        for item in items {
            if let Some(Value::String(text)) = item.get("text") {
                out.push_str(text);
                out.push('\n');
            }
        }
    }
    if out.is_empty() {
        if let Some(structured) = result.get("structuredContent") {
            out = format!("{structured}\n");
        }
    }
    (out, is_error)
}

/// The first sentence of `description` (its first line, to the first
/// ". "), for a tool's one line.
pub(crate) fn first_sentence(description: &str) -> &str {
    let line = description.trim().lines().next().unwrap_or_default().trim();
    match line.find(". ") {
        Some(at) => &line[..=at],
        None => line,
    }
}

/// `TOOLBOX/SERVER/TOOL  first sentence`.
pub(crate) fn line(tool: &Tool) -> String {
    let name = format!("{}/{}/{}", tool.toolbox, tool.server, tool.tool.name);
    match first_sentence(tool.tool.description.as_deref().unwrap_or_default()) {
        "" => name,
        sentence => format!("{name}  {sentence}"),
    }
}

/// The tool's definition as JSON (`tools T/S/N --json`).
pub(crate) fn definition_json(tool: &Tool) -> String {
    let mut out = format!(
        "{{\"toolbox\":{},\"server\":{},\"tool\":{}",
        Value::from(tool.toolbox.as_str()),
        Value::from(tool.server.as_str()),
        Value::from(tool.tool.name.as_str())
    );
    if let Some(title) = &tool.tool.title {
        let _ = write!(out, ",\"title\":{}", Value::from(title.as_str()));
    }
    let description = tool.tool.description.as_deref().unwrap_or_default();
    let _ = write!(
        out,
        ",\"description\":{},\"inputSchema\":{}}}",
        Value::from(description),
        tool.tool.input_schema.get()
    );
    out
}

/// The tool as a person reads it.
pub(crate) fn describe(tool: &Tool) -> String {
    let name = format!("{}/{}/{}", tool.toolbox, tool.server, tool.tool.name);
    let mut out = name.clone();
    if let Some(title) = &tool.tool.title {
        let _ = write!(out, " ({title})");
    }
    out.push('\n');
    if let Some(description) = tool.tool.description.as_deref().filter(|d| !d.is_empty()) {
        for line in description.trim().lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    let schema = serde_json::from_str::<Value>(tool.tool.input_schema.get()).unwrap_or_default();
    let mut arguments = String::new();
    properties(&schema, 1, &mut arguments);
    match arguments.is_empty() {
        true => out.push_str("\nArguments: none\n"),
        false => {
            out.push_str("\nArguments:\n");
            out.push_str(&arguments);
        }
    }
    let _ = writeln!(
        out,
        "\nExample:\n  mcp-workbench call {name}{}",
        example(&schema)
    );
    out
}

/// The properties of object schema `schema`, a line each, indented `depth`
/// steps; an object's (or an array of objects') own properties below it.
fn properties(schema: &Value, depth: usize, out: &mut String) {
    let Some(Value::Object(props)) = schema.get("properties") else {
        return;
    };
    let required = required_of(schema);
    let indent = "  ".repeat(depth);
    for (name, prop) in props {
        let mut facts = vec![type_of(prop)];
        if required.contains(&name.as_str()) {
            facts.push("required".to_string());
        } else if let Some(default) = prop.get("default") {
            facts.push(format!("default {default}"));
        } else {
            facts.push("optional".to_string());
        }
        if let Some(Value::Array(values)) = prop.get("enum") {
            let values: Vec<String> = values.iter().map(Value::to_string).collect();
            facts.push(format!("one of {}", values.join(", ")));
        }
        let description = prop
            .get("description")
            .and_then(Value::as_str)
            .map(|d| format!(": {}", d.trim().replace('\n', " ")))
            .unwrap_or_default();
        let _ = writeln!(out, "{indent}{name} ({}){description}", facts.join(", "));
        properties(prop, depth + 1, out);
        if let Some(items) = prop.get("items") {
            properties(items, depth + 1, out);
        }
    }
}

fn required_of(schema: &Value) -> Vec<&str> {
    match schema.get("required") {
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// A property's type as written: `string`, `array of integer`, `string or
/// null`; `any` when the schema does not say.
fn type_of(prop: &Value) -> String {
    let one = |t: &Value| -> String {
        match t {
            Value::String(t) if t == "array" => match prop.get("items").map(type_of) {
                Some(items) if items != "any" => format!("array of {items}"),
                _ => "array".to_string(),
            },
            Value::String(t) => t.clone(),
            _ => "any".to_string(),
        }
    };
    match prop.get("type") {
        Some(Value::Array(types)) => types.iter().map(one).collect::<Vec<_>>().join(" or "),
        Some(t) => one(t),
        None if prop.get("enum").is_some() => "enum".to_string(),
        None => "any".to_string(),
    }
}

/// The ARGS of an example call: the required properties, as `key=value`
/// words when each is a plain value, else as one JSON object.
fn example(schema: &Value) -> String {
    let props = match schema.get("properties") {
        Some(Value::Object(props)) => props.clone(),
        _ => Map::new(),
    };
    let mut plain = true;
    let mut members = Vec::new();
    for name in required_of(schema) {
        let prop = props.get(name).cloned().unwrap_or_default();
        let value = placeholder(&prop);
        plain &= !matches!(value, Value::Object(_) | Value::Array(_));
        members.push((name.to_string(), value));
    }
    if members.is_empty() {
        return String::new();
    }
    if plain {
        let words: Vec<String> = members
            .iter()
            .map(|(name, value)| match value {
                Value::String(text) => format!(" {name}={text}"),
                other => format!(" {name}={other}"),
            })
            .collect();
        return words.concat();
    }
    let object: Map<String, Value> = members.into_iter().collect();
    format!(" '{}'", Value::Object(object))
}

/// A value of `prop`'s type: its default, its first enum value, or one of
/// the type's own.
fn placeholder(prop: &Value) -> Value {
    if let Some(default) = prop.get("default") {
        return default.clone();
    }
    if let Some(Value::Array(values)) = prop.get("enum") {
        if let Some(first) = values.first() {
            return first.clone();
        }
    }
    let kind = match prop.get("type") {
        Some(Value::Array(types)) => types.first().and_then(Value::as_str).unwrap_or("string"),
        Some(Value::String(t)) => t.as_str(),
        _ => "string",
    };
    match kind {
        "integer" | "number" => Value::from(1),
        "boolean" => Value::Bool(true),
        "object" => Value::Object(Map::new()),
        "array" => Value::Array(Vec::new()),
        _ => Value::from("TEXT"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::CatalogTool;

    fn tool(schema: &str) -> Tool {
        Tool {
            toolbox: "t".into(),
            server: "s".into(),
            tool: CatalogTool {
                name: "search".into(),
                title: None,
                description: Some("Search issues. Returns at most 50.".into()),
                input_schema: RawValue::from_string(schema.into()).unwrap(),
            },
        }
    }

    #[test]
    fn a_result_reads_as_its_text_lines() {
        let raw = |t: &str| RawValue::from_string(t.into()).unwrap();
        let two = raw(
            r#"{"content":[{"type":"text","text":"a"},{"type":"image","data":""},{"type":"text","text":"b"}]}"#,
        );
        assert_eq!(result_text(&two), ("a\nb\n".into(), false));
        let structured = raw(r#"{"content":[],"structuredContent":{"n":1},"isError":true}"#);
        assert_eq!(result_text(&structured), ("{\"n\":1}\n".into(), true));
    }

    #[test]
    fn a_tool_reads_with_its_arguments_and_an_example() {
        let t = tool(
            r#"{"type":"object","required":["query","filter"],"properties":{
            "query":{"type":"string","description":"Words to find"},
            "limit":{"type":"integer","default":10},
            "filter":{"type":"object","required":["state"],"properties":{
                "state":{"type":"string","enum":["open","closed"]}}}}}"#,
        );
        assert_eq!(line(&t), "t/s/search  Search issues.");
        let text = describe(&t);
        assert!(
            text.contains("\n  query (string, required): Words to find\n"),
            "{text}"
        );
        assert!(text.contains("\n  limit (integer, default 10)\n"), "{text}");
        assert!(
            text.contains("\n    state (string, required, one of \"open\", \"closed\")\n"),
            "{text}"
        );
        assert!(
            text.contains(r#"mcp-workbench call t/s/search '{"filter":{},"query":"TEXT"}'"#),
            "{text}"
        );
        let plain =
            tool(r#"{"type":"object","required":["n"],"properties":{"n":{"type":"number"}}}"#);
        assert!(describe(&plain).contains("mcp-workbench call t/s/search n=1\n"));
    }
}
