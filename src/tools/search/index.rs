//! The search index of `find_tools`: every visible tool of every configured
//! toolbox as a ranked document, built from the catalog's listings through
//! `visible::visible` (`toolFilters`, pins, `toolOverrides`: the one
//! function every view of a server's tools goes through), and the
//! toolboxes themselves as documents for the note of a weak search.
//!
//! An index is kept until what it was built from changes (the configured
//! toolboxes, their environment, the pins, the catalog's generation):
//! `current` decides, so a search costs a few lookups, not a rebuild.
//! No IO; no ranking of its own (that is `rank`), no answer.

use super::rank::{self, Index, Ranker};
use crate::catalog::{key, Catalog, CatalogTool};
use crate::config::expand::Vars;
use crate::config::ToolboxConfig;
use crate::fleet::toolbox::Toolboxes;
use crate::fleet::visible::visible;
use crate::pins::store::Pins;
use crate::pins::PinFile;
use std::collections::HashMap;
use std::sync::Arc;

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
    pub(super) index: Ranker,
    pub(super) entries: Vec<Entry>,
    /// `id` of each entry → its index.
    pub(super) by_id: HashMap<String, usize>,
    /// `rank::name_key` of each tool's name → the entries so named.
    pub(super) by_name: HashMap<String, Vec<usize>>,
    /// The configured toolboxes as documents (name, description, servers),
    /// for the note of a weak search.
    toolbox_index: Index,
    /// Toolboxes with an enabled server that was never listed.
    pub(crate) not_indexed: Vec<Arc<ToolboxConfig>>,
}

/// One searchable tool, as the model may see it.
pub(crate) struct Entry {
    pub(crate) toolbox: Arc<ToolboxConfig>,
    server: usize,
    pub(crate) tool: CatalogTool,
}

impl Entry {
    pub(crate) fn server_name(&self) -> &str {
        &self.toolbox.servers[self.server].name
    }
}

/// One key for a tool's toolbox, server and name.
pub(super) fn id(toolbox: &str, server: &str, tool: &str) -> String {
    format!("{toolbox}\0{server}\0{tool}")
}

fn same<T>(a: Option<&Arc<T>>, b: Option<&Arc<T>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        _ => false,
    }
}

/// The index for `scope`: the session's last (`cached`) while it is
/// current, else one built afresh and kept there.
pub(crate) fn current(
    catalog: &Catalog,
    scope: &Scope<'_>,
    cached: &mut Option<Arc<Built>>,
) -> Arc<Built> {
    match cached.as_ref().filter(|b| b.current(catalog, scope)) {
        Some(built) => Arc::clone(built),
        None => {
            let built = Arc::new(Built::new(catalog, scope));
            *cached = Some(Arc::clone(&built));
            built
        }
    }
}

impl Built {
    /// Every tool of the index, in config order (`tools`' list).
    pub(crate) fn entries(&self) -> &[Entry] {
        &self.entries
    }

    fn new(catalog: &Catalog, scope: &Scope<'_>) -> Built {
        let snapshot = catalog.snapshot();
        let configs: Vec<Arc<ToolboxConfig>> = scope
            .toolboxes
            .iter()
            .map(|t| Arc::clone(&t.config))
            .collect();
        let mut entries = Vec::new();
        let mut documents = Vec::new();
        let mut server_of = Vec::new();
        let mut servers = Vec::new();
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
                servers.push(rank::server_document(
                    &[server.name.as_str(), toolbox.name.as_str()],
                    &[
                        toolbox.description.as_str(),
                        listing.instructions.as_deref().unwrap_or_default(),
                    ],
                    tools.iter().map(|t| {
                        (
                            t.name.as_str(),
                            t.description.as_deref().unwrap_or_default(),
                        )
                    }),
                ));
                for tool in tools {
                    server_of.push(servers.len() - 1);
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
            index: Ranker::new(&documents, server_of, &servers),
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

    /// The configured toolboxes whose descriptions match `query`, best first.
    pub(crate) fn toolboxes_matching(&self, query: &str) -> Vec<&ToolboxConfig> {
        self.toolbox_index
            .search(query, self.configs.len())
            .into_iter()
            .map(|hit| &*self.configs[hit.doc])
            .collect()
    }
}
