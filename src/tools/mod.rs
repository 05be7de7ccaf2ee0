//! The meta-tools: the four tools the host always sees, one file each (its
//! definition for `tools/list`, the checking of its arguments, and its
//! answer), and dynamic mode's native tools (`dynamic`, `naming`). This
//! file assembles what the host sees of the four together: the `tools/list`
//! result and the `instructions` of `initialize`.
//!
//! `use_tool` is only checked here: the call is forwarded on the hot path
//! (`fleet::forward`). `open_toolbox` and `close_toolbox` are run by the
//! fleet's `lifecycle`, and answered from what it found. What they share
//! sits in `args` (reading arguments, with zod-like messages) and `outcome`
//! (the finished call); what a tool definition costs a model's context, in
//! `cost`. How `find_tools` ranks tools (the relevance model,
//! its index, the order of an answer, what it learns from use) sits in
//! `search`, public for the retrieval benchmark (`examples/retrieval.rs`). No IO in this folder.

mod args;
pub(crate) mod close_toolbox;
pub mod cost;
pub(crate) mod dynamic;
pub(crate) mod find_tools;
pub(crate) mod naming;
pub(crate) mod open_result;
pub(crate) mod open_toolbox;
mod outcome;
pub mod search;
pub(crate) mod use_tool;

pub(crate) use close_toolbox::NAME as CLOSE_TOOLBOX;
pub(crate) use find_tools::NAME as FIND_TOOLS;
pub(crate) use open_toolbox::NAME as OPEN_TOOLBOX;
pub(crate) use outcome::{not_configured, Outcome};
pub(crate) use use_tool::NAME as USE_TOOL;

use crate::config::ToolboxConfig;
use crate::protocol::jsonrpc::Members;
use crate::protocol::mcp;
use serde_json::{json, Value};

/// Every meta-tool's argument check on `args`, the results dropped: what
/// the fuzz target (`.fuzz/`) runs on every object it finds in its input.
#[doc(hidden)]
pub fn check_arguments(args: &Members) {
    let _ = use_tool::arguments(args);
    let _ = open_toolbox::arguments(args);
    let _ = close_toolbox::arguments(args);
    let _ = find_tools::arguments(args);
}

/// The `tools/list` result: the four meta-tools, naming `toolboxes`.
/// `outputSchema` only for versions that know `structuredContent`. Each
/// carries the host hints (docs/reference.md §12): always loaded, and on
/// `use_tool` the result size of `use_tool::result_chars`.
pub(crate) fn tools_list(toolboxes: &[&ToolboxConfig], structured: bool) -> Value {
    let use_tool_chars = use_tool::result_chars(toolboxes);
    let mut tools = [
        open_toolbox::definition(toolboxes, structured),
        use_tool::definition(),
        find_tools::definition(structured),
        close_toolbox::definition(toolboxes),
    ];
    for tool in &mut tools {
        let chars = use_tool_chars.filter(|_| tool["name"] == USE_TOOL);
        tool["_meta"] = Value::Object(mcp::host_hints(chars));
    }
    json!({ "tools": tools })
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
}
