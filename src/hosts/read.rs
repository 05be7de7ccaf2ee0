//! Reads the hosts' files and maps every server entry in them: the JSON
//! hosts' `mcpServers` (VS Code's `servers`, with its `inputs`), Claude
//! Code's per-project lists in `~/.claude.json`, Codex's `[mcp_servers.*]`.
//! A file that is missing is noted (unless the user named it), one that
//! cannot be read or does not parse is recorded with why (its line where
//! there is one) and the rest goes on: the caller decides what it costs. A server in a project runs in that
//! project's folder, as its host runs it. The workbench's own entry is left
//! out (importing it would make it start itself).

use super::found::{child_path, FileRead, Found, Harvest, Origin, Outcome, Skipped};
use super::host::{Format, Host};
use super::json_entry::{self, Mapped};
use super::paths::{Places, Scope};
use super::vars::Context;
use super::{codex, entry::Transport, jsonc, toml};
use crate::config::ordered_json::Node;
use std::path::{Path, PathBuf};

/// Reads every file of `hosts` into `harvest`.
pub(crate) fn hosts(places: &Places, hosts: &[Host], harvest: &mut Harvest) {
    for &host in hosts {
        for (file, scope) in host.files(places) {
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
    match host.project_of(places, &file) {
        Some(folder) => Scope::Project(folder),
        None => Scope::User,
    }
}

/// Which host wrote `file`: by its name, else by its keys (`Host::guess`).
fn guess(file: &Path, text: &str) -> Host {
    let top = std::cell::OnceCell::new();
    let has_key = |key: &str| {
        top.get_or_init(|| {
            let (json, _) = jsonc::strip(text);
            serde_json::from_str::<Node>(&json).ok()
        })
        .as_ref()
        .is_some_and(|node| node.get(key).is_some())
    };
    Host::guess(file, &has_key)
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

/// A host file's tree, in its format.
enum Root {
    Json(Node),
    Toml(toml::Table),
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
    let root = match parse(host, text) {
        Ok(root) => root,
        Err(why) => return record(Outcome::Failed(why)),
    };
    let lists = match &root {
        Root::Toml(root) => toml_lists(root, project),
        Root::Json(root) => json_lists(host, root, project),
    };
    let inputs = match (&root, host.row().format) {
        (Root::Json(root), Format::Json { inputs: true, .. }) => vs_code_inputs(root),
        _ => Vec::new(),
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
            take(host, name, entry, origin, &cx, harvest);
        }
    }
}

/// The tree of a host's file; the error says why it cannot be read.
fn parse(host: Host, text: &str) -> Result<Root, String> {
    if host.row().format == Format::Toml {
        return toml::parse(text)
            .map(|doc| Root::Toml(doc.root))
            .map_err(|e| format!("not TOML the workbench can read: {e}"));
    }
    let (json, _) = jsonc::strip(text);
    match serde_json::from_str::<Node>(&json) {
        Ok(node @ Node::Object(_)) => Ok(Root::Json(node)),
        Ok(other) => Err(format!("expected a JSON object, found {}", other.kind())),
        Err(e) => Err(format!(
            "not valid JSON: line {} column {}",
            e.line(),
            e.column()
        )),
    }
}

/// One server entry mapped into `harvest`: found, or skipped with why
/// (the workbench's own entry too).
fn take(
    host: Host,
    name: &str,
    entry: Entry<'_>,
    origin: Origin,
    cx: &Context<'_>,
    harvest: &mut Harvest,
) {
    let mapped = match entry {
        Entry::Json(node) => json_entry::map(host, node, cx),
        Entry::Toml(table) => codex::map(table),
        Entry::Bad(kind) => Err(format!("expected an object, found {kind}")),
    };
    match mapped {
        Ok(mapped) if is_workbench(&mapped) => harvest.skipped.push(Skipped {
            origin,
            why: "this is the workbench itself".into(),
        }),
        Ok(mut mapped) => {
            settle_in(&mut mapped, cx.project);
            harvest.found.push(Found {
                name: name.to_string(),
                origin,
                mapped,
            })
        }
        Err(why) => harvest.skipped.push(Skipped { origin, why }),
    }
}

/// The server list of Codex's file: its `[mcp_servers.*]` tables.
fn toml_lists(root: &toml::Table, project: Option<PathBuf>) -> Vec<List<'_>> {
    let servers = match root.get("mcp_servers") {
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
    if host.has_project_lists() {
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
