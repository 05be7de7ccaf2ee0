//! The `find_tools` meta-tool (docs/reference.md §5): its definition, the
//! checking of its arguments, and its answer: the result object, rendered
//! from what the search found (`search`) over the session's index
//! (`search::index`, built again only when what it was built from changed).
//! What the search keeps to learn from the next call is `search::learn`'s;
//! the session reaches it, and the index, through the names re-exported here.
//!
//! No IO.

use crate::catalog::Catalog;
use crate::protocol::jsonrpc::Members;
use crate::tools::args::{self, expected, finish, unknown_keys};
use crate::tools::outcome::Outcome;
use crate::tools::search;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::sync::Arc;

pub(crate) use crate::tools::search::index::{Built, Scope};
pub(crate) use crate::tools::search::learn::{learn, Searched};

pub(crate) const NAME: &str = "find_tools";

/// `find_tools`'s `limit` when the call gives none, and its bounds (the
/// schema tells them, the validation applies them).
const DEFAULT_LIMIT: usize = 8;
const MAX_LIMIT: usize = 50;

/// The longest `find_tools` query, in characters.
const MAX_QUERY: usize = 1000;

/// The `tools/list` entry (without the host hints, which `tools_list` adds);
/// `outputSchema` only for versions that know `structuredContent`.
pub(super) fn definition(structured: bool) -> Value {
    let mut find = json!({
        "name": NAME,
        "description": "Search the tools of every toolbox, open or not, for what you want to \
            do, in your own words (for example \"take a screenshot of a web page\"). Use it \
            when the tool you need is not in an open toolbox, or you do not know which toolbox \
            holds it. Each match comes with toolbox, server, tool, description and inputSchema: \
            call it with use_tool right away, no open_toolbox needed. Starts no server. \
            Toolboxes whose tools are not known yet are listed in not_indexed: open them by \
            their description.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1,
                    "description": "What you want to do, in a few words"},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                    "description": format!("How many tools to return (default {DEFAULT_LIMIT})")},
            },
            "required": ["query"],
            "additionalProperties": false,
        },
    });
    if structured {
        find["outputSchema"] = json!({
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "tools": {"type": "array", "items": {"type": "object"}},
                "not_indexed": {"type": "array", "items": {"type": "object"}},
            },
            "required": ["query", "tools"],
        });
    }
    find
}

/// The arguments of `find_tools`: `query`, and `limit` (1 to `MAX_LIMIT`,
/// `DEFAULT_LIMIT` when absent).
pub(crate) fn arguments(args: &Members) -> Result<(String, usize), String> {
    check(&args::outline(args, &[]), args.get("limit"))
}

/// `limit` is its raw JSON value: the outline keeps no numbers.
fn check(args: &Map<String, Value>, limit: Option<&RawValue>) -> Result<(String, usize), String> {
    let mut problems = Vec::new();
    let blank = "query cannot be empty";
    let query = args::text(args.get("query"), "query", blank, MAX_QUERY, &mut problems);
    let limit = match limit.map(|raw| serde_json::from_str::<Value>(raw.get())) {
        None | Some(Ok(Value::Null)) => DEFAULT_LIMIT,
        Some(Ok(Value::Number(n))) => match n.as_u64() {
            Some(n) if (1..=MAX_LIMIT as u64).contains(&n) => n as usize,
            _ => {
                problems.push(format!(
                    "limit: Expected an integer from 1 to {MAX_LIMIT}, received {n}"
                ));
                DEFAULT_LIMIT
            }
        },
        Some(Ok(other)) => {
            problems.push(format!("limit: {}", expected("number", &other)));
            DEFAULT_LIMIT
        }
        Some(Err(_)) => {
            problems.push("limit: Expected number".to_string());
            DEFAULT_LIMIT
        }
    };
    unknown_keys(args, &["query", "limit"], "", &mut problems);
    finish(problems, query.map(|query| (query, limit)))
}

#[derive(Serialize)]
struct Found<'a> {
    toolbox: &'a str,
    server: &'a str,
    tool: &'a str,
    description: &'a str,
    #[serde(rename = "inputSchema")]
    input_schema: &'a RawValue,
    score: f64,
    /// Lifted by what the catalog learned from use.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    learned: bool,
}

/// A tool of an undecided search (`search::Ranked::undecided`): its
/// description's first line, no schema.
#[derive(Serialize)]
struct Brief<'a> {
    toolbox: &'a str,
    server: &'a str,
    tool: &'a str,
    description: &'a str,
}

/// What a tool's entry shows: all of it, or in brief.
#[derive(Serialize)]
#[serde(untagged)]
enum Shown<'a> {
    Full(Found<'a>),
    Brief(Brief<'a>),
}

/// The first line of `text`, at most `BRIEF` characters.
fn first_line(text: &str) -> &str {
    let line = text.trim_start().lines().next().unwrap_or_default();
    match line.char_indices().nth(BRIEF) {
        Some((at, _)) => &line[..at],
        None => line,
    }
}

/// The longest description of a tool in brief, in characters.
const BRIEF: usize = 160;

#[derive(Serialize)]
struct NotIndexed<'a> {
    toolbox: &'a str,
    description: &'a str,
}

#[derive(Serialize)]
struct Answer<'a> {
    query: &'a str,
    tools: Vec<Shown<'a>>,
    /// A weak best match: what the model should do instead of guessing.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'a str>,
    /// With `note`: the toolboxes whose descriptions match the query.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    toolboxes: Vec<NotIndexed<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    not_indexed: Vec<NotIndexed<'a>>,
}

const UNDECIDED_NOTE: &str = "These tools of one server fit about equally well; here in \
     brief. To call one, open its toolbox (open_toolbox) for their inputSchemas, or search \
     again with the action you want in other words.";

const WEAK_NOTE: &str = "No tool matches these words well. Rather than calling a guess, \
     open a toolbox that fits (open_toolbox; toolboxes: those whose descriptions match) \
     and pick from its tools, or search again in other words.";

/// The `find_tools` meta-tool: validates `args`, then searches. Quick (the
/// index is cached), so the session answers it on its own thread.
/// `index` is the session's last index, built again when what it was built
/// from changed.
pub(crate) fn find_tools(
    catalog: &Catalog,
    scope: &Scope<'_>,
    index: &mut Option<Arc<Built>>,
    args: &Members,
) -> (Outcome, Option<Searched>) {
    match arguments(args) {
        Ok((query, limit)) => {
            let (text, searched) = answer(catalog, scope, index, &query, limit);
            let outcome = Outcome {
                text,
                is_error: false,
                json: true,
            };
            (outcome, searched)
        }
        Err(text) => (Outcome::error(text), None),
    }
}

/// The index of `scope`, built afresh (`mcp-workbench tools`' list).
pub(crate) fn index(catalog: &Catalog, scope: &Scope<'_>) -> Arc<Built> {
    search::index::current(catalog, scope, &mut None)
}

/// `find_tools`'s answer to `query` (its result object, compact JSON), for
/// `mcp-workbench tools QUERY`: the same search and ranking, nothing learned.
pub(crate) fn search_text(
    catalog: &Catalog,
    scope: &Scope<'_>,
    query: &str,
    limit: usize,
) -> String {
    answer(catalog, scope, &mut None, query, limit.clamp(1, MAX_LIMIT)).0
}

/// The `find_tools` result object (compact JSON): the best `limit` tools for
/// `query` across every configured toolbox, and the toolboxes not indexed;
/// and what the session keeps of the search to learn from its next call.
#[allow(clippy::expect_used, reason = "the answer serialises")]
fn answer(
    catalog: &Catalog,
    scope: &Scope<'_>,
    cached: &mut Option<Arc<Built>>,
    query: &str,
    limit: usize,
) -> (String, Option<Searched>) {
    let built = search::index::current(catalog, scope, cached);
    let found = search::find(catalog, &built, query, limit);
    let tools: Vec<Shown<'_>> = found
        .tools
        .iter()
        .map(|m| {
            let tool = &m.entry.tool;
            let description = tool.description.as_deref().unwrap_or_default();
            match found.undecided {
                true => Shown::Brief(Brief {
                    toolbox: &m.entry.toolbox.name,
                    server: m.entry.server_name(),
                    tool: &tool.name,
                    description: first_line(description),
                }),
                false => Shown::Full(Found {
                    toolbox: &m.entry.toolbox.name,
                    server: m.entry.server_name(),
                    tool: &tool.name,
                    description,
                    input_schema: &tool.input_schema,
                    score: (m.score * 1000.0).round() / 1000.0,
                    learned: m.learned,
                }),
            }
        })
        .collect();
    let toolboxes = match found.weak {
        false => Vec::new(),
        true => built
            .toolboxes_matching(query)
            .into_iter()
            .map(|t| NotIndexed {
                toolbox: &t.name,
                description: &t.description,
            })
            .collect(),
    };
    let not_indexed = built
        .not_indexed
        .iter()
        .map(|t| NotIndexed {
            toolbox: &t.name,
            description: &t.description,
        })
        .collect();
    let searched = search::learn::searched(
        found.words,
        found.tools.iter().map(|m| {
            let entry = m.entry;
            (
                entry.toolbox.name.as_str(),
                entry.server_name(),
                entry.tool.name.as_str(),
            )
        }),
    );
    let answer = Answer {
        query,
        tools,
        note: match (found.undecided, found.weak) {
            (true, _) => Some(UNDECIDED_NOTE),
            (false, true) => Some(WEAK_NOTE),
            (false, false) => None,
        },
        toolboxes,
        not_indexed,
    };
    let text = serde_json::to_string(&answer).expect("the answer serialises");
    (text, searched)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::args::map;

    #[test]
    fn find_tools_messages() {
        let raw = |text: &str| RawValue::from_string(text.to_string()).unwrap();
        let find = |args: Value, limit: Option<&str>| {
            let limit = limit.map(raw);
            check(&map(args), limit.as_deref())
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
}
