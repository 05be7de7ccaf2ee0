//! Reads the hosts' files and maps every server entry in them: the JSON
//! hosts' `mcpServers` (VS Code's `servers`, with its `inputs`), Claude
//! Code's per-project lists in `~/.claude.json`, Codex's `[mcp_servers.*]`.
//! A file that is missing is noted (unless the user named it), one that
//! cannot be read or does not parse is recorded with why (its line where
//! there is one) and the rest goes on: the caller decides what it costs. A server in a project runs in that
//! project's folder, as its host runs it. The workbench's own entry is left
//! out (importing it would make it start itself).

use super::found::{child_path, FileRead, Found, Harvest, Origin, Outcome, Skipped};
use super::host::Host;
use super::json_entry::{self, Mapped};
use super::paths::{Places, Scope};
use super::vars::Context;
use super::{codex, entry::Transport, jsonc, toml};
use crate::config::ordered_json::Node;
use std::path::{Path, PathBuf};

/// Reads every file of `hosts` into `harvest`.
pub(crate) fn hosts(places: &Places, hosts: &[Host], harvest: &mut Harvest) {
    for &host in hosts {
        for (file, scope) in places.files(host) {
            read(places, host, &file, &scope, harvest);
        }
    }
}

/// Reads one file named on the command line: its host is told by its name
/// and shape (`guess`). One that cannot be read, even a missing one, is
/// recorded as failed: the user named it.
pub(crate) fn named_file(places: &Places, file: &Path, harvest: &mut Harvest) {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) => {
            return harvest.files.push(FileRead {
                host: guess(file, ""),
                file: file.to_path_buf(),
                outcome: Outcome::Failed(format!("cannot read it: {e}")),
            })
        }
    };
    let host = guess(file, &text);
    let scope = named_scope(places, host, file);
    read_text(places, host, file, &scope, &text, false, harvest);
}

/// Whose file a named file is: a project's when it is one of the project
/// files `import` reads in the working directory (`.mcp.json`,
/// `.cursor/mcp.json` but the user's own, `.vscode/mcp.json`), of the
/// project in the folder that holds it.
fn named_scope(places: &Places, host: Host, file: &Path) -> Scope {
    let file = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    let parent = file.parent();
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let folder = parent.and_then(Path::file_name).and_then(|n| n.to_str());
    let project = match (host, name, folder) {
        (Host::ClaudeCode, ".mcp.json", _) => parent,
        (Host::Cursor, "mcp.json", Some(".cursor")) if file != places.user_file(host) => {
            parent.and_then(Path::parent)
        }
        (Host::VsCode, "mcp.json", Some(".vscode")) => parent.and_then(Path::parent),
        _ => None,
    };
    match project {
        Some(folder) => Scope::Project(folder.to_path_buf()),
        None => Scope::User,
    }
}

/// Which host wrote `file`: Codex for TOML, else by the file's name, else by
/// its keys (`servers`: VS Code; `projects`: Claude Code); the generic
/// `mcpServers` shape is read as Claude Code reads it.
fn guess(file: &Path, text: &str) -> Host {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let in_folder = |folder: &str| {
        file.parent()
            .and_then(Path::file_name)
            .is_some_and(|f| f == folder)
    };
    match name.as_str() {
        n if n.ends_with(".toml") => Host::Codex,
        "claude_desktop_config.json" => Host::ClaudeDesktop,
        "mcp_config.json" => Host::Windsurf,
        "settings.json" if in_folder(".gemini") => Host::Gemini,
        "mcp.json" if in_folder(".cursor") => Host::Cursor,
        _ => {
            let (json, _) = jsonc::strip(text);
            match serde_json::from_str::<Node>(&json) {
                Ok(node) if node.get("servers").is_some() => Host::VsCode,
                _ => Host::ClaudeCode,
            }
        }
    }
}

fn read(places: &Places, host: Host, file: &Path, scope: &Scope, harvest: &mut Harvest) {
    match std::fs::read_to_string(file) {
        Ok(text) => {
            let project_file = matches!(scope, Scope::Project(_));
            read_text(places, host, file, scope, &text, project_file, harvest)
        }
        Err(e) => {
            let outcome = match e.kind() {
                std::io::ErrorKind::NotFound => Outcome::Missing,
                _ => Outcome::Failed(format!("cannot read it: {e}")),
            };
            harvest.files.push(FileRead {
                host,
                file: file.to_path_buf(),
                outcome,
            });
        }
    }
}

/// One list of servers: its path in the file and the project it belongs to.
struct List<'a> {
    path: String,
    project: Option<PathBuf>,
    servers: Vec<(&'a str, Entry<'a>)>,
}

enum Entry<'a> {
    Json(&'a Node),
    Toml(&'a toml::Table),
    /// Not an object or table: what it is.
    Bad(&'static str),
}

fn read_text(
    places: &Places,
    host: Host,
    file: &Path,
    scope: &Scope,
    text: &str,
    project_file: bool,
    harvest: &mut Harvest,
) {
    let project = match scope {
        Scope::Project(folder) => Some(folder.clone()),
        Scope::User => None,
    };
    let mut record = |outcome| {
        harvest.files.push(FileRead {
            host,
            file: file.to_path_buf(),
            outcome,
        })
    };
    let (json_root, toml_root);
    let mut inputs = Vec::new();
    let lists: Vec<List<'_>> = if host == Host::Codex {
        toml_root = match toml::parse(text) {
            Ok(doc) => doc.root,
            Err(e) => {
                return record(Outcome::Failed(format!(
                    "not TOML the workbench can read: {e}"
                )))
            }
        };
        let servers = match toml_root.get("mcp_servers") {
            Some(toml::Value::Table(t)) => t
                .entries
                .iter()
                .map(|(name, v)| {
                    let entry = match v {
                        toml::Value::Table(t) => Entry::Toml(t),
                        other => Entry::Bad(other.kind()),
                    };
                    (name.as_str(), entry)
                })
                .collect(),
            _ => Vec::new(),
        };
        vec![List {
            path: "mcp_servers".into(),
            project,
            servers,
        }]
    } else {
        let (json, _) = jsonc::strip(text);
        json_root = match serde_json::from_str::<Node>(&json) {
            Ok(node @ Node::Object(_)) => node,
            Ok(other) => {
                return record(Outcome::Failed(format!(
                    "expected a JSON object, found {}",
                    other.kind()
                )))
            }
            Err(e) => {
                return record(Outcome::Failed(format!(
                    "not valid JSON: line {} column {}",
                    e.line(),
                    e.column()
                )))
            }
        };
        if host == Host::VsCode {
            inputs = vs_code_inputs(&json_root);
        }
        json_lists(host, &json_root, project)
    };
    record(Outcome::Read(lists.iter().map(|l| l.servers.len()).sum()));
    for list in lists {
        for (name, entry) in list.servers {
            let origin = Origin {
                host,
                file: file.to_path_buf(),
                path: child_path(&list.path, name),
                project: list.project.clone(),
                project_file,
            };
            let cx = Context {
                home: &places.home,
                project: list.project.as_deref(),
                inputs: &inputs,
                separator: std::path::MAIN_SEPARATOR,
            };
            let mapped = match entry {
                Entry::Json(node) => json_entry::map(host, node, &cx),
                Entry::Toml(table) => codex::map(table),
                Entry::Bad(kind) => Err(format!("expected an object, found {kind}")),
            };
            match mapped {
                Ok(mapped) if is_workbench(&mapped) => harvest.skipped.push(Skipped {
                    origin,
                    why: "this is the workbench itself".into(),
                }),
                Ok(mut mapped) => {
                    settle_in(&mut mapped, list.project.as_deref());
                    harvest.found.push(Found {
                        name: name.to_string(),
                        origin,
                        mapped,
                    })
                }
                Err(why) => harvest.skipped.push(Skipped { origin, why }),
            }
        }
    }
}

/// The server lists of a JSON host's file.
fn json_lists(host: Host, root: &Node, project: Option<PathBuf>) -> Vec<List<'_>> {
    let key = host.list_key().unwrap_or("mcpServers");
    fn list(node: Option<&Node>, path: String, project: Option<PathBuf>) -> Option<List<'_>> {
        node.and_then(Node::entries).map(|entries| List {
            path,
            project,
            servers: entries
                .iter()
                .map(|(name, v)| {
                    let entry = match v {
                        Node::Object(_) => Entry::Json(v),
                        other => Entry::Bad(other.kind()),
                    };
                    (name.as_str(), entry)
                })
                .collect(),
        })
    }
    let mut lists: Vec<List<'_>> = list(root.get(key), key.to_string(), project)
        .into_iter()
        .collect();
    if host == Host::ClaudeCode {
        for (folder, settings) in root
            .get("projects")
            .and_then(Node::entries)
            .unwrap_or_default()
        {
            let path = child_path(&child_path("projects", folder), "mcpServers");
            lists.extend(list(
                settings.get("mcpServers"),
                path,
                Some(PathBuf::from(folder)),
            ));
        }
    }
    lists
}

/// VS Code's `inputs`: each id with its description.
fn vs_code_inputs(root: &Node) -> Vec<(String, String)> {
    let Some(Node::Array(items)) = root.get("inputs") else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| {
            let id = item.get("id")?.as_str()?;
            let description = item.get("description").and_then(Node::as_str).unwrap_or("");
            Some((id.to_string(), description.to_string()))
        })
        .collect()
}

/// Whether the entry runs the workbench.
fn is_workbench(mapped: &Mapped) -> bool {
    let Transport::Stdio { command, .. } = &mapped.entry.transport else {
        return false;
    };
    let name = command.rsplit(['/', '\\']).next().unwrap_or(command);
    matches!(name, "mcp-workbench" | "mcp-workbench.exe")
}

/// A server of a project runs in the project's folder, as its host runs
/// it: a relative command is taken from there, and so is the working
/// directory when the entry names none.
fn settle_in(mapped: &mut Mapped, project: Option<&Path>) {
    let (Some(folder), Transport::Stdio { command, cwd, .. }) =
        (project, &mut mapped.entry.transport)
    else {
        return;
    };
    let has_separator = command.contains(['/', '\\']);
    if has_separator
        && Path::new(command.as_str()).is_relative()
        && !command.starts_with(['~', '$'])
    {
        *command = super::vars::escape(&folder.join(&*command).to_string_lossy());
    }
    if cwd.is_none() {
        *cwd = Some(super::vars::escape(&folder.to_string_lossy()));
    }
}
