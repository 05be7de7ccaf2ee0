//! The `find_tools` meta-tool (docs/reference.md §5): its definition, the
//! checking of its arguments, and the search over every configured
//! toolbox: what `visible::visible` lets the model see of each server's
//! listing in the catalog (`toolFilters`, pins, `toolOverrides`: the one
//! function every view of a server's tools goes through), ranked by `rank`.
//!
//! The order: a tool the query names exactly first, then tools the catalog
//! learned these words meant (`learned`), then the rest by score. When the
//! best score is weak, the answer says so and names the toolboxes whose
//! descriptions match, so the model opens one instead of guessing.
//!
//! No IO. The search index is built from the configured toolboxes, the
//! catalog's listings and the pins, and kept until one of them changes, so a
//! search costs a few lookups, not a rebuild.

use crate::catalog::learned::Association;
use crate::catalog::rank::{self, Index};
use crate::catalog::{key, now_ms, Catalog, CatalogTool};
use crate::config::expand::Vars;
use crate::config::ToolboxConfig;
use crate::fleet::toolbox::Toolboxes;
use crate::fleet::visible::visible;
use crate::pins::store::Pins;
use crate::pins::PinFile;
use crate::protocol::jsonrpc::Members;
use crate::tools::args::{self, expected, finish, too_long, unknown_keys};
use crate::tools::outcome::Outcome;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

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

/// A best score under this many times the index's largest idf
/// (`Index::max_idf`, the scale of its scores) is a weak match: the answer
/// adds a `note` and the toolboxes whose descriptions match. Set from the
/// retrieval benchmark's tuning queries (`scripts/retrieval-bench`): below
/// it, the first result was wrong for 7 of 10 (v2's tuning half) and 6 of 7
/// (v1).
pub(crate) const WEAK: f64 = 1.75;

/// What a search is made over: the configured toolboxes, the environment
/// their definitions expand with (a shared fleet's session's; `None`: the
/// workbench's own), and the pins (with `pinTools`).
pub(crate) struct Scope<'a> {
    pub toolboxes: &'a Toolboxes,
    pub env: Option<&'a Arc<Vars>>,
    pub pins: Option<&'a Pins>,
}

/// A search index over the visible tools of every configured toolbox.
pub(crate) struct Built {
    generation: u64,
    /// The toolbox definitions it was built from (compared by pointer).
    configs: Vec<Arc<ToolboxConfig>>,
    env: Option<Arc<Vars>>,
    /// The pins it was judged by (compared by pointer; held, so not reused).
    pins: Option<Arc<PinFile>>,
    index: Index,
    entries: Vec<Entry>,
    /// `id` of each entry → its index.
    by_id: HashMap<String, usize>,
    /// `rank::name_key` of each tool's name → the entries so named.
    by_name: HashMap<String, Vec<usize>>,
    /// The configured toolboxes as documents (name, description, servers),
    /// for the note of a weak search.
    toolbox_index: Index,
    /// Toolboxes with an enabled server that was never listed.
    not_indexed: Vec<Arc<ToolboxConfig>>,
}

/// One searchable tool, as the model may see it.
struct Entry {
    toolbox: Arc<ToolboxConfig>,
    server: usize,
    tool: CatalogTool,
}

impl Entry {
    fn server_name(&self) -> &str {
        &self.toolbox.servers[self.server].name
    }
}

/// One key for a tool's toolbox, server and name.
fn id(toolbox: &str, server: &str, tool: &str) -> String {
    format!("{toolbox}\0{server}\0{tool}")
}

fn same<T>(a: Option<&Arc<T>>, b: Option<&Arc<T>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        _ => false,
    }
}

impl Built {
    fn new(catalog: &Catalog, scope: &Scope<'_>) -> Built {
        let snapshot = catalog.snapshot();
        let configs: Vec<Arc<ToolboxConfig>> = scope
            .toolboxes
            .iter()
            .map(|t| Arc::clone(&t.config))
            .collect();
        let mut entries = Vec::new();
        let mut documents = Vec::new();
        let mut not_indexed = Vec::new();
        for toolbox in &configs {
            let mut missing = false;
            for (s, server) in toolbox.servers.iter().enumerate() {
                if server.disabled {
                    continue;
                }
                let listing = key::expanded(server, scope.env.map(|e| &**e))
                    .and_then(|k| snapshot.listings.get(&k).cloned());
                let Some(listing) = listing else {
                    missing = true;
                    continue;
                };
                let pins = scope
                    .pins
                    .and_then(|p| p.server(&toolbox.name, &server.name));
                let seen = visible(listing.entries(), server, pins.as_deref());
                let context = [
                    toolbox.name.as_str(),
                    toolbox.description.as_str(),
                    server.name.as_str(),
                ];
                let tools: Vec<CatalogTool> = seen.tools.iter().map(CatalogTool::of).collect();
                let alike = rank::server_words(tools.iter().map(|t| {
                    (
                        t.name.as_str(),
                        t.description.as_deref().unwrap_or_default(),
                    )
                }));
                for tool in tools {
                    documents.push(rank::tool_document(
                        &tool.name,
                        tool.title.as_deref(),
                        tool.description.as_deref(),
                        tool.input_schema.get(),
                        &context,
                        &alike,
                    ));
                    entries.push(Entry {
                        toolbox: Arc::clone(toolbox),
                        server: s,
                        tool,
                    });
                }
            }
            if missing {
                not_indexed.push(Arc::clone(toolbox));
            }
        }
        let mut by_id = HashMap::new();
        let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, entry) in entries.iter().enumerate() {
            by_id.insert(
                id(&entry.toolbox.name, entry.server_name(), &entry.tool.name),
                i,
            );
            by_name
                .entry(rank::name_key(&entry.tool.name))
                .or_default()
                .push(i);
        }
        let toolbox_documents: Vec<rank::Document> = configs
            .iter()
            .map(|t| {
                let servers: Vec<&str> = t.servers.iter().map(|s| s.name.as_str()).collect();
                rank::Document::default()
                    .with(rank::Field::Name, &t.name)
                    .with(rank::Field::Description, &t.description)
                    .with(rank::Field::Context, &servers.join(" "))
            })
            .collect();
        Built {
            generation: snapshot.generation,
            env: scope.env.cloned(),
            pins: scope.pins.map(Pins::file),
            index: Index::new(&documents),
            toolbox_index: Index::new(&toolbox_documents),
            configs,
            entries,
            by_id,
            by_name,
            not_indexed,
        }
    }

    fn current(&self, catalog: &Catalog, scope: &Scope<'_>) -> bool {
        let pins = scope.pins.map(Pins::file);
        same(self.env.as_ref(), scope.env)
            && same(self.pins.as_ref(), pins.as_ref())
            && self.generation == catalog.snapshot().generation
            && self.configs.len() == scope.toolboxes.iter().count()
            && self
                .configs
                .iter()
                .zip(scope.toolboxes.iter())
                .all(|(a, b)| Arc::ptr_eq(a, &b.config))
    }
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

#[derive(Serialize)]
struct NotIndexed<'a> {
    toolbox: &'a str,
    description: &'a str,
}

#[derive(Serialize)]
struct Answer<'a> {
    query: &'a str,
    tools: Vec<Found<'a>>,
    /// A weak best match: what the model should do instead of guessing.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'a str>,
    /// With `note`: the toolboxes whose descriptions match the query.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    toolboxes: Vec<NotIndexed<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    not_indexed: Vec<NotIndexed<'a>>,
}

const WEAK_NOTE: &str = "No tool matches these words well. Rather than calling a guess, \
     open a toolbox that fits (open_toolbox; toolboxes: those whose descriptions match) \
     and pick from its tools, or search again in other words.";

/// What a search showed, kept by the session until its next tool call:
/// if that call reaches a tool the search did not show, the search's words
/// are learned for that tool (`learn`).
pub(crate) struct Searched {
    /// The query's key words the catalog knows (`rank::key_words`, known to
    /// the index): what would be learned. Never empty.
    words: Vec<String>,
    /// `id` of every tool shown.
    shown: Vec<String>,
    /// When (milliseconds since the Unix epoch).
    at: u64,
}

/// How long after a search a call still tells what the search meant.
const LEARN_WINDOW_MS: u64 = 5 * 60 * 1000;

/// The session's next tool call after a search (`searched`): when it
/// reaches a tool the search did not show, within `LEARN_WINDOW_MS`, the
/// catalog learns that the search's words meant it. Whether anything was
/// learned (the caller then has the catalog written, off its thread).
/// `index`: the session's index, which knows the tools the catalog has.
pub(crate) fn learn(
    catalog: &Catalog,
    index: Option<&Built>,
    searched: &Searched,
    toolbox: &str,
    server: &str,
    tool: &str,
) -> bool {
    let now = now_ms();
    let key = id(toolbox, server, tool);
    if searched.shown.contains(&key) || now.saturating_sub(searched.at) > LEARN_WINDOW_MS {
        return false;
    }
    // Only a tool the catalog has: a call to a name that does not exist
    // teaches nothing.
    let known = index.is_some_and(|built| built.by_id.contains_key(&key));
    if !known {
        return false;
    }
    catalog.learn(Association {
        words: searched.words.clone(),
        toolbox: toolbox.into(),
        server: server.into(),
        tool: tool.into(),
        at: now,
    });
    true
}

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
            let (text, searched) = find(catalog, scope, index, &query, limit);
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

/// The `find_tools` result object (compact JSON): the best `limit` tools for
/// `query` across every configured toolbox, and the toolboxes not indexed;
/// and what the session keeps of the search to learn from its next call.
#[allow(clippy::expect_used, reason = "the answer serialises")]
pub(crate) fn find(
    catalog: &Catalog,
    scope: &Scope<'_>,
    cached: &mut Option<Arc<Built>>,
    query: &str,
    limit: usize,
) -> (String, Option<Searched>) {
    let built = match cached.as_ref().filter(|b| b.current(catalog, scope)) {
        Some(built) => Arc::clone(built),
        None => {
            let built = Arc::new(Built::new(catalog, scope));
            *cached = Some(Arc::clone(&built));
            built
        }
    };
    let mut words = rank::key_words(query);
    words.retain(|w| built.index.knows(w));
    // Exact names first, then what was learned, then the rest by score.
    let exact: &[usize] = built
        .by_name
        .get(&rank::name_key(query))
        .map_or(&[], Vec::as_slice);
    let lifted: Vec<usize> = catalog
        .learned_for(&words)
        .iter()
        .filter_map(|a| {
            built
                .by_id
                .get(&id(&a.toolbox, &a.server, &a.tool))
                .copied()
        })
        .collect();
    let hits = built
        .index
        .search(query, limit + exact.len() + lifted.len());
    let score_of = |doc: usize| hits.iter().find(|h| h.doc == doc).map_or(0.0, |h| h.score);
    let mut order: Vec<(usize, f64, bool)> = Vec::with_capacity(limit);
    for &doc in exact {
        order.push((doc, score_of(doc), false));
    }
    for &doc in &lifted {
        if !order.iter().any(|(d, _, _)| *d == doc) {
            order.push((doc, score_of(doc), true));
        }
    }
    for hit in &hits {
        if !order.iter().any(|(d, _, _)| *d == hit.doc) {
            order.push((hit.doc, hit.score, false));
        }
    }
    order.truncate(limit);
    let best = hits.first().map_or(0.0, |h| h.score);
    let weak = exact.is_empty() && lifted.is_empty() && best < WEAK * built.index.max_idf();
    let tools: Vec<Found<'_>> = order
        .iter()
        .map(|&(doc, score, learned)| {
            let entry = &built.entries[doc];
            let tool = &entry.tool;
            Found {
                toolbox: &entry.toolbox.name,
                server: entry.server_name(),
                tool: &tool.name,
                description: tool.description.as_deref().unwrap_or_default(),
                input_schema: &tool.input_schema,
                score: (score * 1000.0).round() / 1000.0,
                learned,
            }
        })
        .collect();
    let toolboxes = match weak {
        false => Vec::new(),
        true => built
            .toolbox_index
            .search(query, built.configs.len())
            .into_iter()
            .map(|hit| {
                let t = &built.configs[hit.doc];
                NotIndexed {
                    toolbox: &t.name,
                    description: &t.description,
                }
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
    let searched = (!words.is_empty()).then(|| Searched {
        shown: tools
            .iter()
            .map(|f| id(f.toolbox, f.server, f.tool))
            .collect(),
        words,
        at: now_ms(),
    });
    let answer = Answer {
        query,
        tools,
        note: weak.then_some(WEAK_NOTE),
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
