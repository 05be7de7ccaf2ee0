//! The forms of the `open_toolbox` result, for hosts that cannot hold a long one.
//!
//! The full form (the default) lists every tool object as the server sent it.
//! Some hosts keep only part of a long tool result: Codex CLI keeps about
//! 12,000 characters (the start and the end) and drops the middle. For those,
//! the compact form lists each tool's name, server and description, with long
//! descriptions shortened so that the whole result fits `WINDOW`; the model
//! then asks for the full definitions it needs with `open_toolbox`'s optional
//! `tools` argument, which returns only those (within the window, in the
//! compact form). The form is chosen per session from the host's
//! `clientInfo.name` at `initialize`, or forced by `openToolboxResult`.
//!
//! Both reshape the full result text that the open handler built; the default
//! path (full form, no `tools`) passes it through untouched. No IO here.

use crate::config::OpenToolboxResult;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;

/// The characters of a tool result Codex CLI keeps (its default
/// `output_token_limit` of the tool, as measured; the middle of a longer
/// result is dropped).
pub(crate) const WINDOW: usize = 12_000;

/// Hosts that get the compact form under `"openToolboxResult": "auto"`:
/// the `clientInfo.name` they send at `initialize`. Codex CLI's is set in
/// its MCP connection manager (`codex-rs/core`).
const COMPACT_HOSTS: [&str; 1] = ["codex-mcp-client"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    Full,
    Compact,
}

/// The form for a session whose host named itself `client_name`.
pub(crate) fn form_for(setting: OpenToolboxResult, client_name: Option<&str>) -> Form {
    match setting {
        OpenToolboxResult::Full => Form::Full,
        OpenToolboxResult::Compact => Form::Compact,
        OpenToolboxResult::Auto if client_name.is_some_and(|n| COMPACT_HOSTS.contains(&n)) => {
            Form::Compact
        }
        OpenToolboxResult::Auto => Form::Full,
    }
}

/// The full result object as the open handler writes it.
#[derive(Deserialize)]
struct FullResult<'a> {
    #[serde(borrow)]
    toolbox: &'a RawValue,
    #[serde(borrow)]
    description: &'a RawValue,
    #[serde(borrow)]
    servers_connected: &'a RawValue,
    #[serde(borrow)]
    tools: Vec<&'a RawValue>,
    #[serde(rename = "_errors", default, borrow)]
    errors: Option<&'a RawValue>,
    #[serde(rename = "_warnings", default)]
    warnings: Vec<String>,
}

/// What the compact form reads of one tool.
#[derive(Deserialize)]
struct ToolSummary<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(default, borrow)]
    source_server: Cow<'a, str>,
    #[serde(default, borrow)]
    description: Option<Cow<'a, str>>,
}

/// The result text in `form`, with only the definitions of `requested` when
/// given. `full` is the open handler's result (a JSON object); it is returned
/// as it is for the full form without `requested`, and whenever it cannot be
/// read (which would be a bug, and the full text is still a valid answer).
pub(crate) fn reshape(full: String, form: Form, requested: Option<&[String]>) -> String {
    if form == Form::Full && requested.is_none() {
        return full;
    }
    let Ok(result) = serde_json::from_str::<FullResult>(&full) else {
        log::warn!("cannot read the open_toolbox result to reshape it; sending it in full");
        return full;
    };
    let text = match requested {
        Some(names) => selected(&result, form, names),
        None => compact(&result),
    };
    debug_assert!(serde_json::from_str::<&RawValue>(&text).is_ok(), "{text}");
    text
}

/// `{"toolbox","description","servers_connected"` (no closing brace).
fn head(result: &FullResult) -> String {
    format!(
        "{{\"toolbox\":{},\"description\":{},\"servers_connected\":{}",
        result.toolbox.get(),
        result.description.get(),
        result.servers_connected.get()
    )
}

/// `,"_errors":[..],"_warnings":[..]}`, each only when not empty.
fn tail(result: &FullResult, warnings: &[String]) -> String {
    let mut out = String::new();
    if let Some(errors) = result.errors {
        out.push_str(&format!(",\"_errors\":{}", errors.get()));
    }
    if !warnings.is_empty() {
        out.push_str(&format!(",\"_warnings\":{}", Value::from(warnings)));
    }
    out.push('}');
    out
}

const COMPACT_NOTE: &str = "Tools are listed without their inputSchema, and long descriptions \
    are shortened (ending in ...), so that this result fits the host's limit. Before calling a \
    tool with use_tool, call open_toolbox again with the same toolbox_name and \"tools\": \
    [\"<name>\", ...] to get the full definitions of the tools you need. In use_tool, \
    tool.toolbox is this toolbox, tool.server the tool's source_server.";

/// Every tool's name, server and (possibly shortened) description, within `WINDOW`.
fn compact(result: &FullResult) -> String {
    let tools: Vec<ToolSummary> = result
        .tools
        .iter()
        .filter_map(|raw| serde_json::from_str(raw.get()).ok())
        .collect();
    let descriptions: Vec<String> = tools
        .iter()
        .map(|t| collapse_whitespace(t.description.as_deref().unwrap_or("")))
        .collect();
    let entry = |tool: &ToolSummary, description: &str| {
        let mut out = format!(
            "{{\"name\":{},\"source_server\":{}",
            Value::from(tool.name.as_ref()),
            Value::from(tool.source_server.as_ref())
        );
        if !description.is_empty() {
            out.push_str(&format!(",\"description\":{}", Value::from(description)));
        }
        out.push('}');
        out
    };
    let build = |limit: usize| {
        let entries: Vec<String> = tools
            .iter()
            .zip(&descriptions)
            .map(|(tool, description)| entry(tool, &shorten(description, limit)))
            .collect();
        format!(
            "{},\"_note\":{},\"tools\":[{}]{}",
            head(result),
            Value::from(COMPACT_NOTE),
            entries.join(","),
            tail(result, &result.warnings)
        )
    };
    // The longest description limit (in characters) that fits the window.
    let longest = descriptions
        .iter()
        .map(|d| d.chars().count())
        .max()
        .unwrap_or(0);
    let full = build(longest);
    if full.chars().count() <= WINDOW {
        return full;
    }
    let (mut low, mut high) = (0, longest);
    while low < high {
        let mid = (low + high).div_ceil(2);
        if build(mid).chars().count() <= WINDOW {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    build(low)
}

/// The full definitions of the tools named in `names` (all servers' tools of
/// that name), in the toolbox's order. In the compact form they stop at the
/// window (the first always comes), and the rest are named in `_warnings`.
fn selected(result: &FullResult, form: Form, names: &[String]) -> String {
    let mut warnings = result.warnings.clone();
    let mut found = vec![false; names.len()];
    let mut matching = Vec::new();
    for raw in &result.tools {
        let Ok(tool) = serde_json::from_str::<ToolSummary>(raw.get()) else {
            continue;
        };
        if let Some(i) = names.iter().position(|n| *n == tool.name) {
            found[i] = true;
            matching.push((tool.name.into_owned(), raw.get()));
        }
    }
    let unknown: Vec<&str> = names
        .iter()
        .zip(&found)
        .filter(|(_, found)| !**found)
        .map(|(n, _)| n.as_str())
        .collect();
    if !unknown.is_empty() {
        warnings.push(format!(
            "No tool of this toolbox is named: {}",
            unknown.join(", ")
        ));
    }
    let head = head(result);
    let build = |kept: &[&str], left_out: &[String]| {
        let mut warnings = warnings.clone();
        if !left_out.is_empty() {
            warnings.push(format!(
                "Left out to fit the host's limit of about {WINDOW} characters; ask for them \
                 in another call: {}",
                left_out.join(", ")
            ));
        }
        format!(
            "{head},\"tools\":[{}]{}",
            kept.join(","),
            tail(result, &warnings)
        )
    };
    let mut kept: Vec<&str> = matching.iter().map(|(_, raw)| *raw).collect();
    let mut left_out: Vec<String> = Vec::new();
    let mut text = build(&kept, &left_out);
    // The compact form drops definitions from the end until the result fits
    // (one always stays: a single definition over the window is still sent).
    while form == Form::Compact && kept.len() > 1 && text.chars().count() > WINDOW {
        kept.pop();
        left_out.insert(0, matching[kept.len()].0.clone());
        text = build(&kept, &left_out);
    }
    text
}

/// Runs of whitespace (line breaks included) become one space.
fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` cut to at most `limit` characters, `...` included: after the last
/// sentence that ends in the second half, else at a word boundary.
fn shorten(text: &str, limit: usize) -> Cow<'_, str> {
    if text.chars().count() <= limit {
        return Cow::Borrowed(text);
    }
    if limit < 8 {
        return Cow::Borrowed("");
    }
    let end = text
        .char_indices()
        .nth(limit - 3)
        .map_or(text.len(), |(i, _)| i);
    let cut = &text[..end];
    let sentence = cut
        .rmatch_indices(". ")
        .next()
        .map(|(i, _)| i + 1)
        .filter(|&i| i >= cut.len() / 2);
    let word = cut.rfind(' ').filter(|&i| i >= cut.len() / 2);
    Cow::Owned(match (sentence, word) {
        (Some(i), _) => format!("{} ...", &cut[..i]),
        (None, Some(i)) => format!("{}...", cut[..i].trim_end_matches([',', ';', ':'])),
        (None, None) => format!("{cut}..."),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A full result of `n` tools over two servers, each with a description
    /// of `words` words and a sizeable schema.
    fn full_result(n: usize, words: usize) -> String {
        let tools: Vec<String> = (0..n)
            .map(|i| {
                let description = (0..words)
                    .map(|w| format!("word{w}"))
                    .collect::<Vec<_>>()
                    .join(" ");
                let schema = serde_json::json!({"type": "object", "properties": {
                    "path": {"type": "string", "description": "x".repeat(300)}}});
                format!(
                    r#"{{"name":"tool_{i}","description":"First sentence of {i}. {description}","inputSchema":{schema},"toolbox_name":"dev","source_server":"s{}"}}"#,
                    i % 2
                )
            })
            .collect();
        format!(
            r#"{{"toolbox":"dev","description":"Dev","servers_connected":2,"tools":[{}],"_warnings":["w"]}}"#,
            tools.join(",")
        )
    }

    #[test]
    fn the_form_follows_the_host_and_the_setting() {
        assert_eq!(
            form_for(OpenToolboxResult::Auto, Some("codex-mcp-client")),
            Form::Compact
        );
        assert_eq!(
            form_for(OpenToolboxResult::Auto, Some("claude-code")),
            Form::Full
        );
        assert_eq!(form_for(OpenToolboxResult::Auto, None), Form::Full);
        assert_eq!(
            form_for(OpenToolboxResult::Full, Some("codex-mcp-client")),
            Form::Full
        );
        assert_eq!(
            form_for(OpenToolboxResult::Compact, Some("claude-code")),
            Form::Compact
        );
        assert_eq!(
            OpenToolboxResult::parse("compact"),
            Some(OpenToolboxResult::Compact)
        );
        assert_eq!(OpenToolboxResult::parse("short"), None);
    }

    #[test]
    fn the_full_form_passes_through() {
        let full = full_result(3, 10);
        assert_eq!(reshape(full.clone(), Form::Full, None), full);
    }

    #[test]
    fn compact_lists_every_tool_within_the_window() {
        let full = full_result(25, 150);
        assert!(full.len() > 2 * WINDOW);
        let text = reshape(full, Form::Compact, None);
        assert!(text.chars().count() <= WINDOW, "{}", text.len());
        let value: Value = serde_json::from_str(&text).unwrap();
        let tools = value["tools"].as_array().unwrap();
        assert_eq!(tools.len(), 25);
        for (i, tool) in tools.iter().enumerate() {
            assert_eq!(tool["name"], format!("tool_{i}"));
            assert_eq!(tool["source_server"], format!("s{}", i % 2));
            let description = tool["description"].as_str().unwrap();
            assert!(
                description.starts_with(&format!("First sentence of {i}. word0")),
                "{description}"
            );
            assert!(description.ends_with("..."), "{description}");
            assert!(tool.get("inputSchema").is_none());
        }
        assert_eq!(value["toolbox"], "dev");
        assert_eq!(value["_warnings"][0], "w");
        assert!(value["_note"].as_str().unwrap().contains("\"tools\""));
        // Short descriptions are kept whole.
        let text = reshape(full_result(3, 5), Form::Compact, None);
        assert!(
            text.contains(r#""description":"First sentence of 2. word0 word1 word2 word3 word4"}"#)
        );
    }

    #[test]
    fn requested_definitions_come_whole_and_stop_at_the_window_when_compact() {
        let full = full_result(25, 150);
        let names: Vec<String> = ["tool_3", "nope", "tool_1"].map(String::from).to_vec();
        let text = reshape(full.clone(), Form::Compact, Some(&names));
        let value: Value = serde_json::from_str(&text).unwrap();
        let tools = value["tools"].as_array().unwrap();
        let got: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(got, ["tool_1", "tool_3"], "toolbox order");
        assert!(tools[0]["inputSchema"]["properties"]["path"].is_object());
        assert_eq!(tools[0]["toolbox_name"], "dev");
        assert_eq!(
            value["_warnings"][1],
            "No tool of this toolbox is named: nope"
        );
        // All 25: the compact form stops at the window and says which were left out.
        let all: Vec<String> = (0..25).map(|i| format!("tool_{i}")).collect();
        let text = reshape(full.clone(), Form::Compact, Some(&all));
        assert!(text.chars().count() <= WINDOW, "{}", text.len());
        let value: Value = serde_json::from_str(&text).unwrap();
        let kept = value["tools"].as_array().unwrap().len();
        assert!((1..25).contains(&kept), "{kept}");
        let note = value["_warnings"][1].as_str().unwrap();
        assert!(note.starts_with("Left out to fit"), "{note}");
        assert!(note.ends_with("tool_24"), "{note}");
        // The full form has no window.
        let text = reshape(full, Form::Full, Some(&all));
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["tools"].as_array().unwrap().len(), 25);
    }

    #[test]
    fn shortening_prefers_sentences_then_words() {
        assert_eq!(shorten("short", 10), "short");
        assert_eq!(
            shorten("One two three. Four five six seven", 24),
            "One two three. ..."
        );
        assert_eq!(shorten("alpha beta gamma delta", 15), "alpha beta...");
        assert_eq!(shorten("abcdefghijklmnop", 10), "abcdefg...");
        assert_eq!(shorten("été été été été", 9), "été...");
        assert_eq!(collapse_whitespace(" a\n\n b\tc "), "a b c");
    }
}
