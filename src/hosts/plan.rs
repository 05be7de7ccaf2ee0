//! What `import` makes of what it found: each distinct server once (the
//! same command, arguments and environment, or the same URL, found in
//! several hosts or already in the workbench's config, counts once), in a
//! toolbox of its own named after it, with names made valid and clashes
//! suffixed (`github-2`), each change noted; and the projects a server is
//! enabled for when its hosts enable it for some projects only. No IO.

use super::entry::{identity_of, Identity};
use super::found::{Harvest, Origin};
use crate::config::ordered_json::Node;
use crate::config::valid_name;
use std::collections::HashMap;
use std::path::PathBuf;

/// One server to import.
#[derive(Debug)]
pub(crate) struct Planned {
    /// Its toolbox's name, and its own inside it (the same).
    pub toolbox: String,
    /// Its index in `Harvest::found`.
    pub found: usize,
    /// Where else the same server was found.
    pub also: Vec<Origin>,
    /// The folders of the projects its hosts enable it for, when that is
    /// for some projects only (`projects`).
    pub projects: Vec<PathBuf>,
}

/// A server the workbench's config already holds.
#[derive(Debug, PartialEq)]
pub(crate) struct Held {
    /// Its first index in `Harvest::found`.
    pub found: usize,
    /// Where else the same server was found.
    pub also: Vec<Origin>,
    /// Where it is in the config.
    pub toolbox: String,
    pub server: String,
}

impl Held {
    /// Its JSON path in the config.
    pub(crate) fn place(&self) -> String {
        format!("toolboxes.{}.mcpServers.{}", self.toolbox, self.server)
    }
}

/// The plan.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub servers: Vec<Planned>,
    /// Servers the workbench's config already holds, each once.
    pub already: Vec<Held>,
    /// Renames, and why.
    pub notes: Vec<String>,
}

/// Longest name kept before a suffix.
const NAME_MAX: usize = 60;

/// Plans `harvest` against `existing`, the workbench's config as written
/// (`Node::Null` when there is none).
pub(crate) fn plan(harvest: &Harvest, existing: &Node) -> Plan {
    let mut held: HashMap<Identity, (String, String)> = HashMap::new();
    let mut taken: Vec<String> = Vec::new();
    let toolboxes = existing
        .get("toolboxes")
        .and_then(Node::entries)
        .unwrap_or_default();
    for (toolbox, body) in toolboxes {
        taken.push(toolbox.clone());
        let servers = body
            .get("mcpServers")
            .and_then(Node::entries)
            .unwrap_or_default();
        for (server, entry) in servers {
            if let Some(identity) = identity_of(entry) {
                held.entry(identity)
                    .or_insert_with(|| (toolbox.clone(), server.clone()));
            }
        }
    }
    let mut plan = Plan::default();
    let mut planned: HashMap<Identity, usize> = HashMap::new();
    let mut kept: HashMap<Identity, usize> = HashMap::new();
    for (index, found) in harvest.found.iter().enumerate() {
        let identity = found.mapped.entry.identity();
        if let Some((toolbox, server)) = held.get(&identity) {
            match kept.get(&identity) {
                Some(&at) => plan.already[at].also.push(found.origin.clone()),
                None => {
                    kept.insert(identity, plan.already.len());
                    plan.already.push(Held {
                        found: index,
                        also: Vec::new(),
                        toolbox: toolbox.clone(),
                        server: server.clone(),
                    });
                }
            }
            continue;
        }
        if let Some(&at) = planned.get(&identity) {
            plan.servers[at].also.push(found.origin.clone());
            continue;
        }
        let base = valid(&found.name);
        if base != found.name {
            plan.notes.push(format!(
                "'{}' is named '{base}': names are 1 to 64 letters, digits, '_' and '-', without '__'",
                found.name
            ));
        }
        let mut name = base.clone();
        let mut n = 2;
        while taken.contains(&name) {
            name = format!("{base}-{n}");
            n += 1;
        }
        if name != base {
            let whose = if toolboxes.iter().any(|(t, _)| *t == base) {
                "the workbench's config has a toolbox of that name"
            } else {
                "another server imported has that name"
            };
            plan.notes.push(format!(
                "'{base}' from {} is imported as '{name}': {whose}",
                found.origin.host.name()
            ));
        }
        taken.push(name.clone());
        planned.insert(identity, plan.servers.len());
        plan.servers.push(Planned {
            toolbox: name,
            found: index,
            also: Vec::new(),
            projects: Vec::new(),
        });
    }
    for planned in &mut plan.servers {
        let origin = &harvest.found[planned.found].origin;
        planned.projects = projects(std::iter::once(origin).chain(&planned.also));
    }
    plan
}

/// The projects a server found at `origins` is enabled for, each once, in
/// the order found: none when any host enables it for every project (a
/// user's own list).
pub(crate) fn projects<'a>(origins: impl IntoIterator<Item = &'a Origin>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for origin in origins {
        match &origin.project {
            None => return Vec::new(),
            Some(folder) if !out.contains(folder) => out.push(folder.clone()),
            Some(_) => {}
        }
    }
    out
}

/// `name` as a valid toolbox and server name: other characters become
/// `-`, `__` becomes `_`, cut to `NAME_MAX`.
fn valid(name: &str) -> String {
    if valid_name(name) && name.len() <= NAME_MAX {
        return name.to_string();
    }
    let mut out = String::new();
    for c in name.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            c
        } else {
            '-'
        };
        if !(c == '_' && out.ends_with('_')) {
            out.push(c);
        }
    }
    let out: String = out.chars().take(NAME_MAX).collect();
    if out.is_empty() {
        "server".to_string()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosts::entry::Entry;
    use crate::hosts::found::Found;
    use crate::hosts::host::Host;
    use crate::hosts::json_entry::Mapped;

    fn found(name: &str, host: Host, command: &str) -> Found {
        Found {
            name: name.into(),
            origin: Origin {
                host,
                file: PathBuf::from("f"),
                path: format!("mcpServers.{name}"),
                project: None,
                project_file: false,
            },
            mapped: Mapped {
                entry: Entry::stdio(command.into()),
                notes: Vec::new(),
                dropped: Vec::new(),
                description: None,
            },
        }
    }

    #[test]
    fn once_each_with_clashes_suffixed() {
        let harvest = Harvest {
            found: vec![
                found("github", Host::ClaudeDesktop, "gh-server"),
                found("github", Host::Cursor, "gh-server"),
                found("github", Host::VsCode, "other-gh"),
                found("my server.v2", Host::Gemini, "x"),
                found("dev", Host::Codex, "y"),
                found("held", Host::Codex, "already"),
                found("held-too", Host::Cursor, "already"),
            ],
            ..Harvest::default()
        };
        let existing: Node = serde_json::from_str(
            r#"{"toolboxes": {"dev": {"description": "d", "mcpServers": {"h": {"command": "already"}}}}}"#,
        )
        .unwrap();
        let plan = plan(&harvest, &existing);
        let names: Vec<(&str, usize, usize)> = plan
            .servers
            .iter()
            .map(|p| (p.toolbox.as_str(), p.found, p.also.len()))
            .collect();
        assert_eq!(
            names,
            [
                ("github", 0, 1),
                ("github-2", 2, 0),
                ("my-server-v2", 3, 0),
                ("dev-2", 4, 0)
            ]
        );
        assert_eq!(
            plan.already
                .iter()
                .map(|h| (h.found, h.place(), h.also.len()))
                .collect::<Vec<_>>(),
            [(5, "toolboxes.dev.mcpServers.h".to_string(), 1)]
        );
        assert_eq!(
            plan.notes,
            [
                "'github' from vscode is imported as 'github-2': another server imported has that name",
                "'my server.v2' is named 'my-server-v2': names are 1 to 64 letters, digits, '_' and '-', without '__'",
                "'dev' from codex is imported as 'dev-2': the workbench's config has a toolbox of that name",
            ]
        );
        assert!(plan.servers.iter().all(|p| p.projects.is_empty()));
        assert_eq!(valid("a__b"), "a_b");
        assert_eq!(valid(""), "server");
    }

    #[test]
    fn a_server_of_some_projects_only_names_them() {
        let in_project = |name: &str, host, command: &str, folder: &str| {
            let mut f = found(name, host, command);
            f.origin.project = Some(PathBuf::from(folder));
            f
        };
        let harvest = Harvest {
            found: vec![
                in_project("db", Host::ClaudeCode, "db-server", "/code/app"),
                in_project("db", Host::Cursor, "db-server", "/code/web"),
                in_project("db", Host::VsCode, "db-server", "/code/app"),
                in_project("lint", Host::ClaudeCode, "lint-server", "/code/app"),
                found("lint", Host::Cursor, "lint-server"),
                found("all", Host::ClaudeDesktop, "all-server"),
                in_project("all", Host::ClaudeCode, "all-server", "/code/app"),
            ],
            ..Harvest::default()
        };
        let plan = plan(&harvest, &Node::Null);
        let projects: Vec<(&str, Vec<PathBuf>)> = plan
            .servers
            .iter()
            .map(|p| (p.toolbox.as_str(), p.projects.clone()))
            .collect();
        let app = PathBuf::from("/code/app");
        let web = PathBuf::from("/code/web");
        assert_eq!(
            projects,
            [
                ("db", vec![app, web]),
                ("lint", Vec::new()),
                ("all", Vec::new())
            ]
        );
    }
}
