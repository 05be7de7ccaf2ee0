//! Dynamic mode (docs/reference.md §6): the tools of open toolboxes as native tools.
//!
//! `NativeTable` is built from the open toolboxes, in config order, each time
//! one opens, closes or re-lists. It maps every safe native name (see `naming`)
//! to its `{toolbox, server, tool}` and holds the `tools/list` entries, built
//! from the downstream definitions' own bytes: `inputSchema`, `outputSchema`,
//! `title` and `annotations` exactly as received. Each carries the host
//! hints (docs/reference.md §12): always loaded, since the model opened the
//! toolbox to use them, and its server's `maxResultChars` as the result size.
//! A call of a native name the table does not have (a toolbox closed since
//! the host listed it) is answered by `native_not_found`. No IO here.

use crate::fleet::toolbox::{ToolId, Toolbox, Toolboxes};
use crate::protocol::mcp::{self, text_of, ToolFields};
use crate::tools::naming;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::collections::HashMap;

/// The native tools of every open toolbox.
#[derive(Default)]
pub(crate) struct NativeTable {
    ids: Vec<ToolId>,
    index: HashMap<String, usize>,
    /// The `tools/list` entries, comma-separated.
    listing: String,
}

impl NativeTable {
    /// The tools of every open toolbox's servers, asleep ones included.
    /// The native tools of the open toolboxes `shown` selects (a session's:
    /// the ones it holds).
    pub(crate) fn build(toolboxes: &Toolboxes, shown: impl Fn(&Toolbox) -> bool) -> NativeTable {
        let mut entries = Vec::new();
        for toolbox in toolboxes.all().filter(|t| shown(t)) {
            let Some(open) = &toolbox.open else { continue };
            for (server, state) in toolbox.config.servers.iter().zip(&open.servers) {
                if let Some(running) = state.listing() {
                    for tool in &running.tools {
                        let id = ToolId {
                            toolbox: toolbox.config.name.clone(),
                            server: server.name.clone(),
                            tool: tool.name.clone(),
                        };
                        entries.push((id, &*tool.raw, server.max_result_chars));
                    }
                }
            }
        }
        let names = naming::unique_names(
            entries
                .iter()
                .map(|(id, _, _)| (id.toolbox.as_str(), id.server.as_str(), id.tool.as_str())),
            toolboxes.native_name_max,
        );
        let mut table = NativeTable::default();
        for ((id, raw, result_chars), name) in entries.into_iter().zip(names) {
            if !table.listing.is_empty() {
                table.listing.push(',');
            }
            native_entry(&mut table.listing, &name, &id, raw, result_chars);
            table.index.insert(name, table.ids.len());
            table.ids.push(id);
        }
        table
    }

    /// The identifier behind a native name.
    pub(crate) fn lookup(&self, name: &str) -> Option<&ToolId> {
        self.index.get(name).map(|&i| &self.ids[i])
    }

    /// The `tools/list` entries, comma-separated (empty when none).
    pub(crate) fn listing(&self) -> &str {
        &self.listing
    }
}

/// Appends one native tool definition; `result_chars` is its server's
/// `maxResultChars`.
fn native_entry(
    out: &mut String,
    name: &str,
    id: &ToolId,
    raw: &RawValue,
    result_chars: Option<usize>,
) {
    // The parts of the downstream `Tool` a native tool carries over.
    let parts = ToolFields::read(raw).unwrap_or_default();
    let description = format!(
        "[{}/{}] {}",
        id.toolbox,
        id.server,
        parts.description.and_then(text_of).unwrap_or_default()
    );
    out.push_str(&format!("{{\"name\":{}", json!(name)));
    if let Some(title) = parts.title {
        out.push_str(&format!(",\"title\":{}", title.get()));
    }
    out.push_str(&format!(
        ",\"description\":{}",
        json!(description.trim_end())
    ));
    let input = parts
        .input_schema
        .map_or(r#"{"type":"object"}"#, RawValue::get);
    out.push_str(&format!(",\"inputSchema\":{input}"));
    if let Some(output) = parts.output_schema {
        out.push_str(&format!(",\"outputSchema\":{}", output.get()));
    }
    if let Some(annotations) = parts.annotations {
        out.push_str(&format!(",\"annotations\":{}", annotations.get()));
    }
    let mut meta = mcp::host_hints(result_chars);
    meta.insert("toolbox_name".into(), json!(id.toolbox));
    meta.insert("source_server".into(), json!(id.server));
    meta.insert("original_name".into(), json!(id.tool));
    out.push_str(&format!(",\"_meta\":{}}}", Value::Object(meta)));
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

    #[test]
    fn entries_carry_the_downstream_bytes() {
        let raw = RawValue::from_string(
            r#"{"name":"q.x","title":"Query","description":"Run it","inputSchema":{"type":"object","properties":{"z":{"type":"number","minimum":1.50}}},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"execution":{}}"#.into(),
        )
        .unwrap();
        let id = ToolId {
            toolbox: "dev".into(),
            server: "db".into(),
            tool: "q.x".into(),
        };
        let mut out = String::new();
        native_entry(&mut out, "dev__db_q_x_0000abcd", &id, &raw, None);
        assert_eq!(
            out,
            r#"{"name":"dev__db_q_x_0000abcd","title":"Query","description":"[dev/db] Run it","inputSchema":{"type":"object","properties":{"z":{"type":"number","minimum":1.50}}},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"_meta":{"anthropic/alwaysLoad":true,"original_name":"q.x","source_server":"db","toolbox_name":"dev"}}"#
        );
    }

    #[test]
    fn entries_carry_the_host_hints_of_their_server() {
        let raw = RawValue::from_string(r#"{"name":"q","inputSchema":{"type":"object"}}"#.into())
            .unwrap();
        let id = ToolId {
            toolbox: "dev".into(),
            server: "db".into(),
            tool: "q".into(),
        };
        let meta = |chars| {
            let mut out = String::new();
            native_entry(&mut out, "dev__db_q", &id, &raw, chars);
            serde_json::from_str::<Value>(&out).unwrap()["_meta"].clone()
        };
        let base = json!({"anthropic/alwaysLoad": true, "original_name": "q",
            "source_server": "db", "toolbox_name": "dev"});
        assert_eq!(meta(None), base);
        let mut capped = base.clone();
        capped["anthropic/maxResultSizeChars"] = json!(4000);
        assert_eq!(meta(Some(4000)), capped);
        capped["anthropic/maxResultSizeChars"] = json!(500_000);
        assert_eq!(meta(Some(3_000_000)), capped, "Claude Code's limit");
    }
}
