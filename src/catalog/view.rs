//! What the model sees of the catalog: `visible_tools`, the one place that
//! decides which of a server's listed tools a toolbox shows (`toolFilters`
//! today; pins and `toolOverrides` belong here too), and the `find_tools`
//! search over every configured toolbox (docs/reference.md §5).
//!
//! No IO. The search index is built from the configured toolboxes and the
//! catalog's listings, and kept until either changes, so a search costs a
//! few lookups, not a rebuild.

use super::{key, Catalog, CatalogTool, Listing};
use crate::config::{ServerConfig, ToolFilter, ToolboxConfig};
use crate::expand::Vars;
use crate::jsonrpc::Members;
use crate::lock;
use crate::meta_tools::Outcome;
use crate::params;
use crate::rank::{self, Index};
use crate::toolbox::Toolboxes;
use serde::Serialize;
use serde_json::value::RawValue;
use std::sync::Arc;

/// `find_tools`'s `limit` when the call gives none, and its bounds.
pub(crate) const DEFAULT_LIMIT: usize = 8;
pub(crate) const MAX_LIMIT: usize = 50;

/// The tools of `listing` that server `server` shows the model, in the
/// server's order: `toolFilters` applied.
pub(crate) fn visible_tools<'a>(
    server: &ServerConfig,
    listing: &'a Listing,
) -> impl Iterator<Item = &'a CatalogTool> + 'a {
    let filter = server.tool_filter.clone();
    listing.tools.iter().filter(move |tool| match &filter {
        ToolFilter::All => true,
        ToolFilter::Only(names) => names.contains(&tool.name),
    })
}

/// A search index over the visible tools of every configured toolbox.
pub(crate) struct Built {
    generation: u64,
    /// The toolbox definitions it was built from (compared by pointer).
    configs: Vec<Arc<ToolboxConfig>>,
    /// The environment the definitions were expanded with (a shared fleet's
    /// session's; `None`: the workbench's own).
    env: Option<Arc<Vars>>,
    index: Index,
    entries: Vec<Entry>,
    /// Toolboxes with an enabled server that was never listed.
    not_indexed: Vec<Arc<ToolboxConfig>>,
}

/// One searchable tool.
struct Entry {
    toolbox: Arc<ToolboxConfig>,
    server: usize,
    listing: Arc<Listing>,
    tool: usize,
}

impl Built {
    fn new(catalog: &Catalog, toolboxes: &Toolboxes, env: Option<&Arc<Vars>>) -> Built {
        let snapshot = catalog.snapshot();
        let configs: Vec<Arc<ToolboxConfig>> =
            toolboxes.iter().map(|t| Arc::clone(&t.config)).collect();
        let mut entries = Vec::new();
        let mut documents = Vec::new();
        let mut not_indexed = Vec::new();
        for toolbox in &configs {
            let mut missing = false;
            for (s, server) in toolbox.servers.iter().enumerate() {
                if server.disabled {
                    continue;
                }
                let listing = key::expanded(server, env.map(|e| &**e))
                    .and_then(|k| snapshot.listings.get(&k).cloned());
                let Some(listing) = listing else {
                    missing = true;
                    continue;
                };
                let context = [
                    toolbox.name.as_str(),
                    toolbox.description.as_str(),
                    server.name.as_str(),
                ];
                for tool in visible_tools(server, &listing) {
                    let index = listing
                        .tools
                        .iter()
                        .position(|t| std::ptr::eq(t, tool))
                        .unwrap_or_default();
                    documents.push(rank::tool_document(
                        &tool.name,
                        tool.title.as_deref(),
                        tool.description.as_deref(),
                        tool.input_schema.get(),
                        &context,
                    ));
                    entries.push(Entry {
                        toolbox: Arc::clone(toolbox),
                        server: s,
                        listing: Arc::clone(&listing),
                        tool: index,
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
            env: env.cloned(),
            index: Index::new(&documents),
            entries,
            not_indexed,
        }
    }

    fn current(&self, catalog: &Catalog, toolboxes: &Toolboxes, env: Option<&Arc<Vars>>) -> bool {
        let same_env = match (&self.env, env) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        same_env
            && self.generation == catalog.snapshot().generation
            && self.configs.len() == toolboxes.iter().count()
            && self
                .configs
                .iter()
                .zip(toolboxes.iter())
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
/// index is cached), so the session answers it on its own thread. `env`: a
/// shared fleet's session's environment, which its definitions expand with.
pub(crate) fn find_tools(
    catalog: &Catalog,
    toolboxes: &Toolboxes,
    args: &Members,
    env: Option<&Arc<Vars>>,
) -> Outcome {
    let outline = params::outline(args, &[]);
    match params::find_tools(&outline, args.get("limit"), DEFAULT_LIMIT, MAX_LIMIT) {
        Ok((query, limit)) => Outcome {
            text: find(catalog, toolboxes, env, &query, limit),
            is_error: false,
            json: true,
        },
        Err(text) => Outcome::error(text),
    }
}

/// The `find_tools` result object (compact JSON): the best `limit` tools for
/// `query` across every configured toolbox, and the toolboxes not indexed.
pub(crate) fn find(
    catalog: &Catalog,
    toolboxes: &Toolboxes,
    env: Option<&Arc<Vars>>,
    query: &str,
    limit: usize,
) -> String {
    let built = {
        let mut cached = lock(&catalog.built);
        match cached
            .as_ref()
            .filter(|b| b.current(catalog, toolboxes, env))
        {
            Some(built) => Arc::clone(built),
            None => {
                let built = Arc::new(Built::new(catalog, toolboxes, env));
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
            let tool = &entry.listing.tools[entry.tool];
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
