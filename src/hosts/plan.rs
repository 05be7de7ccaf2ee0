//! What `import` makes of what it found: each distinct server once (the
//! same command, arguments and environment, or the same URL, found in
//! several hosts or already in the workbench's config, counts once), in a
//! toolbox of its own named after it, with names made valid and clashes
//! suffixed (`github-2`), each change noted. No IO.

use super::entry::{identity_of, Identity};
use super::found::{Harvest, Origin};
use crate::config::ordered_json::Node;
use crate::config::valid_name;
use std::collections::HashMap;

/// One server to import.
#[derive(Debug)]
pub(crate) struct Planned {
    /// Its toolbox's name, and its own inside it (the same).
    pub toolbox: String,
    /// Its index in `Harvest::found`.
    pub found: usize,
    /// Where else the same server was found.
    pub also: Vec<Origin>,
}

/// The plan.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub servers: Vec<Planned>,
    /// Servers the workbench's config already holds: the index found, and
    /// where in the config it is.
    pub already: Vec<(usize, String)>,
    /// Renames, and why.
    pub notes: Vec<String>,
}

/// Longest name kept before a suffix.
const NAME_MAX: usize = 60;

/// Plans `harvest` against `existing`, the workbench's config as written
/// (`Node::Null` when there is none).
pub(crate) fn plan(harvest: &Harvest, existing: &Node) -> Plan {
    let mut held: HashMap<Identity, String> = HashMap::new();
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
                    .or_insert_with(|| format!("toolboxes.{toolbox}.mcpServers.{server}"));
            }
        }
    }
    let mut plan = Plan::default();
    let mut planned: HashMap<Identity, usize> = HashMap::new();
    for (index, found) in harvest.found.iter().enumerate() {
        let identity = found.mapped.entry.identity();
        if let Some(place) = held.get(&identity) {
            plan.already.push((index, place.clone()));
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
        });
    }
    plan
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
    use std::path::PathBuf;

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
            plan.already,
            [(5, "toolboxes.dev.mcpServers.h".to_string())]
        );
        assert_eq!(
            plan.notes,
            [
                "'github' from vscode is imported as 'github-2': another server imported has that name",
                "'my server.v2' is named 'my-server-v2': names are 1 to 64 letters, digits, '_' and '-', without '__'",
                "'dev' from codex is imported as 'dev-2': the workbench's config has a toolbox of that name",
            ]
        );
        assert_eq!(valid("a__b"), "a_b");
        assert_eq!(valid(""), "server");
    }
}
