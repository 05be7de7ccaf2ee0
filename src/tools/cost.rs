//! What a tool definition costs a model's context, one measure for `check`
//! and the demo (`examples/demo.rs`): the bytes of its JSON as serde_json
//! writes it (compact), without the host hints in `_meta` (docs/reference.md
//! §12: the host reads them, the model's context does not hold them) and
//! without the workbench's own `toolbox_name` and `source_server` (a server
//! listed directly would not carry them); tokens are bytes / 4, and a total
//! divides its sum once. No IO.

use serde_json::value::RawValue;
use serde_json::Value;

/// The members a definition's cost leaves out.
const NOT_COUNTED: [&str; 3] = ["_meta", "toolbox_name", "source_server"];

/// The bytes tool definition `tool` costs.
pub fn tool_bytes(tool: &Value) -> usize {
    match tool.as_object() {
        Some(members) if NOT_COUNTED.iter().any(|k| members.contains_key(*k)) => {
            let mut members = members.clone();
            for key in NOT_COUNTED {
                members.remove(key);
            }
            Value::Object(members).to_string().len()
        }
        _ => tool.to_string().len(),
    }
}

/// The bytes a definition as a server sent it costs (`tool_bytes` of it
/// parsed; its own length if it does not parse).
pub(crate) fn raw_tool_bytes(tool: &RawValue) -> usize {
    serde_json::from_str::<Value>(tool.get()).map_or(tool.get().len(), |v| tool_bytes(&v))
}

/// The tokens of `bytes` (the sum of a list's `tool_bytes`).
pub fn tokens(bytes: usize) -> usize {
    bytes / 4
}

/// The tokens of the definitions `tools`, counted together.
pub fn tools_tokens<'a>(tools: impl IntoIterator<Item = &'a Value>) -> usize {
    tokens(tools.into_iter().map(tool_bytes).sum())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hints_and_the_workbenchs_own_members_are_not_counted() {
        let plain = json!({"name": "read", "inputSchema": {"type": "object"}});
        let mut listed = plain.clone();
        listed["_meta"] = json!({"anthropic/alwaysLoad": true});
        listed["toolbox_name"] = json!("dev");
        listed["source_server"] = json!("files");
        assert_eq!(tool_bytes(&listed), plain.to_string().len());
        assert_eq!(tool_bytes(&plain), plain.to_string().len());
        // As a server sent it, with its own spacing: the same cost.
        let raw = RawValue::from_string(
            r#"{ "name": "read",  "inputSchema": {"type": "object"}, "_meta": {} }"#.into(),
        )
        .unwrap();
        assert_eq!(raw_tool_bytes(&raw), plain.to_string().len());
        // A total divides its sum once: 3 × 7 bytes is 5 tokens, not 3 × 1.
        let seven = json!("abcde");
        assert_eq!(tool_bytes(&seven), 7);
        assert_eq!(tools_tokens([&seven, &seven, &seven]), 5);
    }
}
