//! What `tools` and `call` know before anything is called: the configured
//! toolboxes and the tool catalog (docs/reference.md §9), seen as
//! `find_tools` sees them (`find_tools::Scope`: `toolFilters`, pins and
//! `toolOverrides` applied by the one function every view goes through),
//! and a `TOOLBOX/SERVER/TOOL` name checked against them, an unknown part
//! with "did you mean" (`config::suggest`).
//!
//! Reads the catalog and pins files; starts nothing, calls nothing.

use crate::catalog::{Catalog, CatalogTool};
use crate::config::{suggest, Config};
use crate::fleet::toolbox::{Registry, Toolboxes};
use crate::pins::store::Pins;
use crate::tools::find_tools::{self, Scope};
use std::path::Path;
use std::sync::Arc;

/// The config's toolboxes and its catalog, as `find_tools` searches them.
pub(crate) struct Known {
    catalog: Catalog,
    toolboxes: Arc<Toolboxes>,
    pins: Option<Pins>,
}

/// One tool a model may see.
pub(crate) struct Tool {
    pub toolbox: String,
    pub server: String,
    pub tool: CatalogTool,
}

/// What a name given to `call` or `tools` is.
pub(crate) enum Named {
    /// A tool of the catalog.
    Listed(Tool),
    /// A configured, enabled server whose catalog entry lacks the tool: the
    /// session says whether it exists (held by a pin, filtered, or never
    /// listed); `known` are the server's tools the catalog has.
    Unlisted {
        toolbox: String,
        server: String,
        tool: String,
        known: Vec<String>,
    },
}

impl Known {
    /// The toolboxes of `config` (file `path`) and its catalog as stored.
    pub(crate) fn load(config: &Config, path: &Path) -> Known {
        let catalog = Catalog::default();
        catalog.attach(path);
        Known {
            catalog,
            toolboxes: Registry::new(config).current(),
            pins: config.pin_tools.then(|| Pins::open(path)).flatten(),
        }
    }

    /// Whether tools are pinned (`pinTools`): a tool missing from the
    /// catalog's view may then be one held back, which only the session
    /// can say.
    pub(crate) fn pinned(&self) -> bool {
        self.pins.is_some()
    }

    fn scope(&self) -> Scope<'_> {
        Scope {
            toolboxes: &self.toolboxes,
            env: None,
            pins: self.pins.as_ref(),
        }
    }

    /// Every visible tool, in config order, and the toolboxes with a server
    /// never listed.
    pub(crate) fn every_tool(&self) -> (Vec<Tool>, Vec<String>) {
        let built = find_tools::index(&self.catalog, &self.scope());
        let tools = built
            .entries()
            .iter()
            .map(|entry| Tool {
                toolbox: entry.toolbox.name.clone(),
                server: entry.server_name().to_string(),
                tool: entry.tool.clone(),
            })
            .collect();
        let unindexed = built.not_indexed.iter().map(|t| t.name.clone()).collect();
        (tools, unindexed)
    }

    /// `find_tools`'s answer to `query` (compact JSON).
    pub(crate) fn search(&self, query: &str, limit: usize) -> String {
        find_tools::search_text(&self.catalog, &self.scope(), query, limit)
    }

    /// `name`, `TOOLBOX/SERVER/TOOL`, checked against the config and the
    /// catalog; the usage error says what is wrong, with "did you mean".
    pub(crate) fn resolve(&self, name: &str) -> Result<Named, String> {
        let mut parts = name.splitn(3, '/');
        let (Some(toolbox), Some(server), Some(tool)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(format!(
                "'{name}' is not TOOLBOX/SERVER/TOOL (`mcp-workbench tools` lists them)"
            ));
        };
        if toolbox.is_empty() || server.is_empty() || tool.is_empty() {
            return Err(format!(
                "'{name}' is not TOOLBOX/SERVER/TOOL (`mcp-workbench tools` lists them)"
            ));
        }
        let names = self.toolboxes.names();
        let Some(config) = self.toolboxes.find(toolbox).map(|t| &t.config) else {
            return Err(unknown(&format!("toolbox '{toolbox}'"), toolbox, &names));
        };
        let servers: Vec<&str> = config
            .servers
            .iter()
            .filter(|s| !s.disabled)
            .map(|s| s.name.as_str())
            .collect();
        if !servers.contains(&server) {
            let what = format!("server '{server}' in toolbox '{toolbox}'");
            return Err(unknown(&what, server, &servers));
        }
        let (tools, _) = self.every_tool();
        let mut known = Vec::new();
        for entry in tools {
            if entry.toolbox == toolbox && entry.server == server {
                if entry.tool.name == tool {
                    return Ok(Named::Listed(entry));
                }
                known.push(entry.tool.name);
            }
        }
        Ok(Named::Unlisted {
            toolbox: toolbox.to_string(),
            server: server.to_string(),
            tool: tool.to_string(),
            known,
        })
    }
}

/// "unknown `what`", with the closest of `names` or, none close, all of them.
pub(crate) fn unknown(what: &str, word: &str, names: &[&str]) -> String {
    match suggest::closest(word, names) {
        Some(close) => format!("unknown {what}; did you mean '{close}'?"),
        None if names.is_empty() => format!("unknown {what}"),
        None => format!("unknown {what} (known: {})", names.join(", ")),
    }
}
