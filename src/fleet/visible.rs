//! What the model may see of a server's tools (docs/reference.md §3, §10):
//! the one function every view goes through — `open_toolbox`, dynamic
//! mode's native tools, `use_tool`'s lookup, and the catalog behind
//! `find_tools` — so a tool held back or renamed in one is so in all.
//!
//! In order: `toolFilters` keep the tools the config selects; pins hold back
//! a tool whose definition changed since it was approved, or that is new on
//! a pinned server (judged on the server's own definition); `toolOverrides`
//! replace the description or title of what remains. The rest of each
//! definition stays the server's bytes. No IO here.

use crate::config::suggest;
use crate::config::{ServerConfig, ToolFilter, ToolOverride};
use crate::pins::{self, Hold, ServerPins};
use crate::protocol::jsonrpc::Members;
use crate::protocol::mcp::ToolEntry;
use serde_json::json;
use serde_json::value::RawValue;

/// A server's tools as the model may see them, and what was kept from it.
#[derive(Debug, Default)]
pub(crate) struct Visible {
    /// In the server's order, overrides applied.
    pub tools: Vec<ToolEntry>,
    /// Tools held back until approved, in the server's order.
    pub held: Vec<(String, Hold)>,
    /// Tools of the server that `toolFilters` removed.
    pub filtered_out: Vec<String>,
    /// `toolFilters` entries that named no tool of the server.
    pub unknown_filters: Vec<UnknownFilter>,
    /// `toolOverrides` entries that named no tool of the server.
    pub unknown_overrides: Vec<String>,
}

/// The tools of `listing` (the server's own, all pages) that the model may
/// see, for `server` as configured and, with `pinTools`, its pins. Takes the
/// listing: without pins and overrides its entries move, uncopied.
pub(crate) fn visible(
    listing: Vec<ToolEntry>,
    server: &ServerConfig,
    pins: Option<&ServerPins>,
) -> Visible {
    let mut out = Visible::default();
    if let ToolFilter::Only(wanted) = &server.tool_filter {
        let names: Vec<&str> = listing.iter().map(|t| t.name.as_str()).collect();
        out.unknown_filters = wanted
            .iter()
            .filter(|w| !names.contains(&w.as_str()))
            .map(|w| UnknownFilter {
                name: w.clone(),
                closest: suggest::closest(w, &names).map(str::to_string),
            })
            .collect();
    }
    out.unknown_overrides = server
        .tool_overrides
        .iter()
        .filter(|(name, _)| !listing.iter().any(|t| t.name == *name))
        .map(|(name, _)| name.clone())
        .collect();
    for tool in listing {
        if let ToolFilter::Only(wanted) = &server.tool_filter {
            if !wanted.contains(&tool.name) {
                out.filtered_out.push(tool.name.clone());
                continue;
            }
        }
        if let Some(pins) = pins {
            if let Some(hold) = pins::judge(pins, &pins::fingerprint(&tool.name, &tool.raw)) {
                out.held.push((tool.name.clone(), hold));
                continue;
            }
        }
        let over = server
            .tool_overrides
            .iter()
            .find(|(name, _)| *name == tool.name);
        out.tools.push(match over {
            Some((_, over)) => ToolEntry {
                raw: overridden(&tool.raw, over),
                name: tool.name,
            },
            None => tool,
        });
    }
    out
}

/// A `toolFilters` entry that names no tool of the server, with the
/// server's tool it is most likely a typo of.
#[derive(Debug, PartialEq)]
pub(crate) struct UnknownFilter {
    pub name: String,
    pub closest: Option<String>,
}

impl std::fmt::Display for UnknownFilter {
    /// `'read_grpah', which the server does not have (did you mean 'read_graph'?)`
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "'{}', which the server does not have", self.name)?;
        if let Some(closest) = &self.closest {
            write!(f, " (did you mean '{closest}'?)")?;
        }
        Ok(())
    }
}

impl Visible {
    /// The open result's `_warnings` about this server of `toolbox`.
    pub(crate) fn warnings(&self, toolbox: &str, server: &str) -> Vec<String> {
        let mut out: Vec<String> = self
            .unknown_filters
            .iter()
            .map(|f| format!("toolFilters of server '{server}' names {f}"))
            .collect();
        out.extend(self.unknown_overrides.iter().map(|o| {
            format!(
                "toolOverrides of server '{server}' names '{o}', which the server does not have"
            )
        }));
        out.extend(
            self.held
                .iter()
                .map(|(tool, hold)| pins::warning(toolbox, server, tool, hold)),
        );
        out
    }
}

/// `raw` with `over`'s description and title in place of the server's (added
/// at the end when the server has none); every other member as it was, in
/// its place.
fn overridden(raw: &RawValue, over: &ToolOverride) -> Box<RawValue> {
    let Ok(members) = Members::read(raw) else {
        return raw.to_owned();
    };
    let mut text = String::from("{");
    let mut put = |key: &str, value: &str| {
        if text.len() > 1 {
            text.push(',');
        }
        text.push_str(&json!(key).to_string());
        text.push(':');
        text.push_str(value);
    };
    let replacement = |key: &str| match key {
        "description" => over.description.as_ref(),
        "title" => over.title.as_ref(),
        _ => None,
    };
    for (key, value) in members.iter() {
        match replacement(key) {
            Some(new) => put(key, &json!(new).to_string()),
            None => put(key, value.get()),
        }
    }
    for key in ["title", "description"] {
        if let Some(new) = replacement(key) {
            if members.get(key).is_none() {
                put(key, &json!(new).to_string());
            }
        }
    }
    text.push('}');
    RawValue::from_string(text).unwrap_or_else(|_| raw.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(json: &str) -> ToolEntry {
        let raw = RawValue::from_string(json.to_string()).unwrap();
        let name = serde_json::from_str::<serde_json::Value>(json).unwrap()["name"]
            .as_str()
            .unwrap()
            .to_string();
        ToolEntry { name, raw }
    }

    fn server(json: &str) -> ServerConfig {
        let text = format!(
            r#"{{"toolboxes": {{"t": {{"description": "d", "mcpServers": {{"s": {json}}}}}}}}}"#
        );
        let path = std::path::Path::new("c.json");
        crate::config::parse(text.as_bytes(), path, path)
            .unwrap()
            .config
            .toolboxes[0]
            .servers[0]
            .clone()
    }

    fn names(v: &Visible) -> Vec<&str> {
        v.tools.iter().map(|t| t.name.as_str()).collect()
    }

    #[test]
    fn without_keys_the_listing_passes_as_it_is() {
        let listing = vec![
            entry(r#"{"name":"a","inputSchema":{"z":1.50}}"#),
            entry(r#"{"name":"b"}"#),
        ];
        let v = visible(listing, &server(r#"{"command":"x"}"#), None);
        assert_eq!(names(&v), ["a", "b"]);
        assert_eq!(
            v.tools[0].raw.get(),
            r#"{"name":"a","inputSchema":{"z":1.50}}"#
        );
        assert!(v.warnings("t", "s").is_empty());
    }

    #[test]
    fn an_unknown_filter_suggests_the_closest_tool() {
        let listing = || {
            ["read_graph", "search_nodes", "open_nodes"]
                .map(|n| entry(&format!(r#"{{"name":"{n}"}}"#)))
                .to_vec()
        };
        let typo = server(r#"{"command":"x","toolFilters":["read_grpah","search_nodes"]}"#);
        let v = visible(listing(), &typo, None);
        assert_eq!(names(&v), ["search_nodes"]);
        assert_eq!(
            v.warnings("t", "s"),
            [
                "toolFilters of server 's' names 'read_grpah', which the server does not have \
              (did you mean 'read_graph'?)"
            ]
        );
        let far = server(r#"{"command":"x","toolFilters":["delete_everything"]}"#);
        let v = visible(listing(), &far, None);
        assert_eq!(
            v.unknown_filters[0].closest, None,
            "nothing close: no suggestion"
        );
    }

    #[test]
    fn filters_then_pins_then_overrides() {
        let listing = vec![
            entry(r#"{"name":"a","description":"changed","inputSchema":{"z":1.50}}"#),
            entry(r#"{"name":"b","description":"bad text","inputSchema":{}}"#),
            entry(r#"{"name":"c"}"#),
            entry(r#"{"name":"new"}"#),
        ];
        let config = server(
            r#"{"command":"x","toolFilters":["a","b","new","zz"],
                "toolOverrides":{"b":{"description":"good text","title":"B"},"a":{"title":"A"},"gone":{"title":"G"}}}"#,
        );
        let mut pins = pins::PinFile::default();
        let before: Vec<_> = [
            r#"{"name":"a","description":"first","inputSchema":{"z":1.5}}"#,
            r#"{"name":"b","description":"bad text","inputSchema":{}}"#,
            r#"{"name":"c"}"#,
        ]
        .iter()
        .map(|j| {
            let e = entry(j);
            pins::fingerprint(&e.name, &e.raw)
        })
        .collect();
        let (pins, _) = pins.record("t/s", "d", &before);
        let v = visible(listing.clone(), &config, Some(&pins));
        // The pin covers the server's own text: the override on 'a' does
        // not hide its changed description.
        assert_eq!(names(&v), ["b"]);
        assert_eq!(
            v.tools[0].raw.get(),
            r#"{"name":"b","description":"good text","inputSchema":{},"title":"B"}"#
        );
        assert_eq!(
            v.held,
            [
                ("a".to_string(), Hold::Changed(vec!["description"])),
                ("new".to_string(), Hold::New)
            ]
        );
        assert_eq!(v.filtered_out, ["c"]);
        assert_eq!(
            v.warnings("t", "s"),
            [
                "toolFilters of server 's' names 'zz', which the server does not have",
                "toolOverrides of server 's' names 'gone', which the server does not have",
                "Tool 'a' of server 's' is held back: its description changed since it was approved; ask the user to review the change and approve it (in a terminal: mcp-workbench pins approve t/s/a)",
                "Tool 'new' of server 's' is held back: it is new on a server whose tools are pinned; ask the user to review the change and approve it (in a terminal: mcp-workbench pins approve t/s/new)",
            ]
        );
        // Unpinned, 'a' shows with its override in place, the rest of it as sent.
        let v = visible(listing, &config, None);
        assert_eq!(
            v.tools[0].raw.get(),
            r#"{"name":"a","description":"changed","inputSchema":{"z":1.50},"title":"A"}"#
        );
    }
}
