//! The toolboxes an earlier `import --write` wrote whose server could not
//! be listed then (it did not answer in time, or `--no-start`): a later
//! import lists them again and fills in their descriptions. Such a toolbox
//! is recognised, with no record kept anywhere, by what is in the config:
//! it holds that one server, and its description is, to the byte, the text
//! import writes for that server unlisted, computed again from the host's
//! entry (with and without the project sentence, which earlier versions did
//! not write). Any edit the user made to the description, or a server they
//! added to the toolbox, makes it theirs: it is left alone. A server the
//! host renamed, or a description text from another version of import,
//! is not recognised either, which leaves a description as it is rather
//! than overwriting one by mistake. No IO.

use super::describe;
use super::found::Harvest;
use super::plan::{self, Plan};
use crate::config::ordered_json::Node;
use std::path::PathBuf;

/// A held server whose toolbox's description import wrote without a
/// listing.
#[derive(Debug, PartialEq)]
pub(crate) struct Refill {
    /// Its index in `Plan::already`.
    pub held: usize,
    /// The server's entry as the config has it (what the workbench runs),
    /// its `startupTimeoutMs` the host's when that is longer: raised in
    /// either place, it is waited for.
    pub entry: Node,
    /// The projects it is enabled for (`plan::projects`).
    pub projects: Vec<PathBuf>,
}

/// The toolboxes of `existing` (the workbench's config) to describe again;
/// `show` writes a project's folder as descriptions name it.
pub(crate) fn refills(
    harvest: &Harvest,
    plan: &Plan,
    existing: &Node,
    show: &dyn Fn(&PathBuf) -> String,
) -> Vec<Refill> {
    let mut out = Vec::new();
    for (index, held) in plan.already.iter().enumerate() {
        let Some(toolbox) = existing.get("toolboxes").and_then(|t| t.get(&held.toolbox)) else {
            continue;
        };
        let servers = toolbox
            .get("mcpServers")
            .and_then(Node::entries)
            .unwrap_or_default();
        let [(name, entry)] = servers else {
            continue;
        };
        if *name != held.server {
            continue;
        }
        let Some(written) = toolbox.get("description").and_then(Node::as_str) else {
            continue;
        };
        let found = &harvest.found[held.found];
        let projects = plan::projects(std::iter::once(&found.origin).chain(&held.also));
        let shown: Vec<String> = projects.iter().map(show).collect();
        let unlisted = |projects: &[String]| {
            describe::description(
                &found.name,
                &found.mapped.entry,
                found.mapped.description.as_deref(),
                projects,
                None,
            )
        };
        if written == unlisted(&shown) || written == unlisted(&[]) {
            out.push(Refill {
                held: index,
                entry: with_limit(entry, found.mapped.entry.startup_timeout_ms),
                projects,
            });
        }
    }
    out
}

/// `entry` with `startupTimeoutMs` `host_ms` when that is longer than its
/// own.
fn with_limit(entry: &Node, host_ms: Option<u64>) -> Node {
    let own = match entry.get("startupTimeoutMs") {
        Some(Node::Number(n)) => n.as_u64(),
        _ => None,
    };
    match (entry, host_ms) {
        (Node::Object(keys), Some(ms)) if own.is_none_or(|own| own < ms) => {
            let mut keys: Vec<(String, Node)> = keys
                .iter()
                .filter(|(k, _)| k != "startupTimeoutMs")
                .cloned()
                .collect();
            keys.push(("startupTimeoutMs".into(), Node::Number(ms.into())));
            Node::Object(keys)
        }
        _ => entry.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosts::entry::Entry;
    use crate::hosts::found::{Found, Origin};
    use crate::hosts::host::Host;
    use crate::hosts::json_entry::Mapped;

    fn found(name: &str, command: &str, project: Option<&str>) -> Found {
        Found {
            name: name.into(),
            origin: Origin {
                host: Host::ClaudeCode,
                file: PathBuf::from("f"),
                path: format!("mcpServers.{name}"),
                project: project.map(PathBuf::from),
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
    fn only_what_import_wrote_unlisted() {
        let harvest = Harvest {
            found: vec![
                found("a", "a-server", None),
                found("b", "b-server", None),
                found("c", "c-server", Some("/code/app")),
                found("d", "d-server", Some("/code/app")),
                found("e", "e-server", None),
                found("f", "f-server", None),
            ],
            ..Harvest::default()
        };
        let existing: Node = serde_json::from_str(
            r#"{"toolboxes": {
                "a": {"description": "The a MCP server (a-server).", "mcpServers": {"a": {"command": "a-server"}}},
                "b": {"description": "The b MCP server (b-server). Mine.", "mcpServers": {"b": {"command": "b-server"}}},
                "c": {"description": "The c MCP server (c-server). For the project in /code/app only.", "mcpServers": {"c": {"command": "c-server", "startupTimeoutMs": 90000}}},
                "d": {"description": "The d MCP server (d-server).", "mcpServers": {"d": {"command": "d-server"}}},
                "e": {"description": "The e MCP server (e-server).", "mcpServers": {"e": {"command": "e-server"}, "x": {"command": "x"}}},
                "mine": {"description": "The f MCP server (f-server).", "mcpServers": {"f": {"command": "f-server"}}}
            }}"#,
        )
        .unwrap();
        let plan = plan::plan(&harvest, &existing);
        assert_eq!(plan.already.len(), 6);
        let show = |p: &PathBuf| p.display().to_string();
        let refills = refills(&harvest, &plan, &existing, &show);
        let toolboxes: Vec<(&str, String)> = refills
            .iter()
            .map(|r| {
                (
                    plan.already[r.held].toolbox.as_str(),
                    serde_json::to_string(&r.entry).unwrap(),
                )
            })
            .collect();
        assert_eq!(
            toolboxes,
            [
                ("a", r#"{"command":"a-server"}"#.to_string()),
                (
                    "c",
                    r#"{"command":"c-server","startupTimeoutMs":90000}"#.to_string()
                ),
                // Written before descriptions named the project.
                ("d", r#"{"command":"d-server"}"#.to_string()),
                // Not "b" (edited) nor "e" (a server added); "mine" was
                // renamed, its description untouched.
                ("mine", r#"{"command":"f-server"}"#.to_string()),
            ]
        );
        assert_eq!(refills[1].projects, [PathBuf::from("/code/app")]);
        let entry: Node =
            serde_json::from_str(r#"{"command":"x","startupTimeoutMs":40000}"#).unwrap();
        let shown = |n: &Node| serde_json::to_string(n).unwrap();
        assert_eq!(shown(&with_limit(&entry, Some(20000))), shown(&entry));
        assert_eq!(shown(&with_limit(&entry, None)), shown(&entry));
        assert_eq!(
            shown(&with_limit(&entry, Some(60000))),
            r#"{"command":"x","startupTimeoutMs":60000}"#
        );
    }
}
