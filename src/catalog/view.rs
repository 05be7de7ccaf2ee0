//! The `find_tools` search (docs/reference.md §5) over every configured
//! toolbox: what `visible::visible` lets the model see of each server's
//! listing in the catalog (`toolFilters`, pins, `toolOverrides`: the one
//! function every view of a server's tools goes through), ranked by `rank`.
//!
//! No IO. The search index is built from the configured toolboxes, the
//! catalog's listings and the pins, and kept until one of them changes, so a
//! search costs a few lookups, not a rebuild.

use super::{key, Catalog, CatalogTool};
use crate::config::ToolboxConfig;
use crate::expand::Vars;
use crate::jsonrpc::Members;
use crate::lock;
use crate::meta_tools::Outcome;
use crate::params;
use crate::pins::store::Pins;
use crate::pins::PinFile;
use crate::rank::{self, Index};
use crate::toolbox::Toolboxes;
use crate::visible::visible;
use serde::Serialize;
use serde_json::value::RawValue;
use std::sync::Arc;

/// `find_tools`'s `limit` when the call gives none, and its bounds.
pub(crate) const DEFAULT_LIMIT: usize = 8;
pub(crate) const MAX_LIMIT: usize = 50;

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
    /// Toolboxes with an enabled server that was never listed.
    not_indexed: Vec<Arc<ToolboxConfig>>,
}

/// One searchable tool, as the model may see it.
struct Entry {
    toolbox: Arc<ToolboxConfig>,
    server: usize,
    tool: CatalogTool,
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
                let namespace = rank::namespace(seen.tools.iter().map(|t| t.name.as_str()));
                for entry in &seen.tools {
                    let tool = CatalogTool::of(entry);
                    documents.push(rank::tool_document(
                        &tool.name,
                        tool.title.as_deref(),
                        tool.description.as_deref(),
                        tool.input_schema.get(),
                        &context,
                        namespace.as_deref(),
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
        Built {
            generation: snapshot.generation,
            configs,
            env: scope.env.cloned(),
            pins: scope.pins.map(Pins::file),
            index: Index::new(&documents),
            entries,
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
    #[serde(skip_serializing_if = "Vec::is_empty")]
    not_indexed: Vec<NotIndexed<'a>>,
}

/// The `find_tools` meta-tool: validates `args`, then searches. Quick (the
/// index is cached), so the session answers it on its own thread.
pub(crate) fn find_tools(catalog: &Catalog, scope: &Scope<'_>, args: &Members) -> Outcome {
    let outline = params::outline(args, &[]);
    match params::find_tools(&outline, args.get("limit"), DEFAULT_LIMIT, MAX_LIMIT) {
        Ok((query, limit)) => Outcome {
            text: find(catalog, scope, &query, limit),
            is_error: false,
            json: true,
        },
        Err(text) => Outcome::error(text),
    }
}

/// The `find_tools` result object (compact JSON): the best `limit` tools for
/// `query` across every configured toolbox, and the toolboxes not indexed.
pub(crate) fn find(catalog: &Catalog, scope: &Scope<'_>, query: &str, limit: usize) -> String {
    let built = {
        let mut cached = lock(&catalog.built);
        match cached.as_ref().filter(|b| b.current(catalog, scope)) {
            Some(built) => Arc::clone(built),
            None => {
                let built = Arc::new(Built::new(catalog, scope));
                *cached = Some(Arc::clone(&built));
                built
            }
        }
    };
    let tools = built
        .index
        .search(query, limit)
        .into_iter()
        .map(|hit| {
            let entry = &built.entries[hit.doc];
            let tool = &entry.tool;
            Found {
                toolbox: &entry.toolbox.name,
                server: &entry.toolbox.servers[entry.server].name,
                tool: &tool.name,
                description: tool.description.as_deref().unwrap_or_default(),
                input_schema: &tool.input_schema,
                score: (hit.score * 1000.0).round() / 1000.0,
            }
        })
        .collect();
    let not_indexed = built
        .not_indexed
        .iter()
        .map(|t| NotIndexed {
            toolbox: &t.name,
            description: &t.description,
        })
        .collect();
    let answer = Answer {
        query,
        tools,
        not_indexed,
    };
    serde_json::to_string(&answer).expect("the answer serialises")
}
