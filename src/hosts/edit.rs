//! A host's own file with the workbench in it (`install`): an entry named
//! `workbench` that runs this binary with `--config` and the config's path,
//! added to the host's user-level server list (an entry already there is
//! updated and keeps the host's other settings for it), and with
//! `--replace`, the servers the workbench's config now holds taken out (the
//! same identity as the import's: same command, arguments and environment,
//! or same URL). The change is made in the text (`json_splice`; Codex's
//! TOML line by line): only the entries added, updated or taken out change,
//! every other byte stays, comments and trailing commas of JSONC too; the
//! edited text is read back and must say what the edit meant. Codex's
//! `[mcp_servers.workbench]` table is updated where it is, or appended. A
//! file that does not parse is refused. No IO.

use super::entry::Identity;
use super::files::{json_text, newline_of, Style};
use super::found::{child_path, path_of};
use super::host::Host;
use super::json_entry;
use super::json_splice::{self, Value};
use super::paths::Places;
use super::toml::{self, Document, Emit};
use super::vars::Context;
use super::{codex, jsonc};
use crate::config::ordered_json::Node;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The name of the workbench's entry in a host's list.
pub(crate) const ENTRY: &str = "workbench";

/// What runs the workbench: this binary and the config, absolute.
pub(crate) struct Launch {
    pub program: String,
    pub config: String,
}

impl Launch {
    fn args(&self) -> Vec<String> {
        vec!["--config".to_string(), self.config.clone()]
    }
}

/// What `install` takes out of the host: with `replace`, the user-level
/// servers the workbench's config holds; with `projects` too, the
/// per-project ones (Claude Code's `projects.<folder>.mcpServers`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Take {
    pub replace: bool,
    pub projects: bool,
}

/// The new text and what changed.
#[derive(Debug)]
pub(crate) struct Edited {
    pub text: String,
    /// The paths of the servers taken out (`--replace`).
    pub removed: Vec<String>,
    /// The servers left in the host: the workbench does not hold them.
    pub kept: Vec<String>,
    /// The user-level servers left that the workbench's config holds too
    /// (without `--replace`): the host starts them, and the workbench.
    pub doubled: Vec<String>,
    /// The same, per project (without `--include-projects`).
    pub doubled_in_projects: Vec<String>,
    /// There was a `workbench` entry already, now replaced.
    pub replaced_entry: bool,
}

/// `text` (`None`: no file yet) of `host`'s user-level file with the
/// workbench added; what `take` says, of the servers `held` (the identities
/// of the workbench config's servers), taken out.
pub(crate) fn edit(
    host: Host,
    text: Option<&str>,
    launch: &Launch,
    held: &HashSet<Identity>,
    take: Take,
    places: &Places,
) -> Result<Edited, String> {
    match host.list_key() {
        Some(key) => edit_json(host, key, text, launch, held, take, places),
        None => edit_toml(text.unwrap_or(""), launch, held, take),
    }
}

/// The host's servers by what the edit does with them: the lists of
/// `Edited`, the same for JSON and TOML.
#[derive(Default)]
struct Sorted {
    removed: Vec<String>,
    kept: Vec<String>,
    doubled: Vec<String>,
    doubled_in_projects: Vec<String>,
}

impl Sorted {
    /// Files the server at `path`, which the workbench's config `holds` or
    /// not, where `remove` says held ones go; whether it goes.
    fn sort(&mut self, path: String, holds: bool, remove: bool, in_project: bool) -> bool {
        match (holds, remove) {
            (true, true) => self.removed.push(path),
            (true, false) if in_project => self.doubled_in_projects.push(path),
            (true, false) => self.doubled.push(path),
            (false, _) => self.kept.push(path),
        }
        holds && remove
    }

    /// What the edit gives: the new `text` and these lists.
    fn edited(self, text: String, replaced_entry: bool) -> Edited {
        Edited {
            text,
            removed: self.removed,
            kept: self.kept,
            doubled: self.doubled,
            doubled_in_projects: self.doubled_in_projects,
            replaced_entry,
        }
    }
}

/// The workbench's entry as `host` writes its entries.
fn json_entry_of(host: Host, launch: &Launch) -> Node {
    let s = |t: &str| Node::String(t.to_string());
    let value = |key: &str| match key {
        "type" => s("stdio"),
        "command" => s(&launch.program),
        "args" => Node::Array(launch.args().iter().map(|a| s(a)).collect()),
        _ => Node::Object(Vec::new()),
    };
    let keys = host.keys().writes.iter();
    Node::Object(keys.map(|k| (k.to_string(), value(k))).collect())
}

/// The JSON host's file edited: its tree first (projects' lists, then the
/// user-level list `key` with the workbench's entry), then the same change
/// made in its text.
fn edit_json(
    host: Host,
    key: &str,
    text: Option<&str>,
    launch: &Launch,
    held: &HashSet<Identity>,
    take: Take,
    places: &Places,
) -> Result<Edited, String> {
    // No file yet, or an empty one: the host's list is all there will be.
    let text = text.filter(|t| !t.trim().is_empty());
    let mut root = json_root(text)?;
    let mut sorter = JsonSorter {
        host,
        held,
        take,
        home: &places.home,
        sorted: Sorted::default(),
        cuts: Vec::new(),
    };
    if host.has_project_lists() {
        sorter.take_out_of_projects(&mut root);
    }
    let had_list = add_list(&mut root, key)?;
    let list = list_mut(&mut root, key)?;
    sorter.take_out(list, &[key.to_string()], None);
    let replaced_entry = put_entry(list, json_entry_of(host, launch));
    let new_entry = list
        .iter()
        .find(|(k, _)| k == ENTRY)
        .map(|(_, node)| node.clone())
        .unwrap_or(Node::Null);
    let placed = match (had_list, replaced_entry) {
        (false, _) => Placed::NewList,
        (true, true) => Placed::Updated,
        (true, false) => Placed::Added,
    };
    let expected = Node::Object(root);
    let Some(text) = text else {
        let text = json_text(&expected, &Style::default());
        return Ok(sorter.sorted.edited(text, replaced_entry));
    };
    // The same change made in the text, every other byte kept.
    let out = cut_out(text, &sorter.cuts)?;
    let out = splice_entry(&out, key, placed, &new_entry)?;
    if read_json(&out).ok().as_ref() != Some(&expected) {
        return Err(internal("the edited text does not read as the edit".into()));
    }
    Ok(sorter.sorted.edited(out, replaced_entry))
}

/// The members of a JSON file's top-level object (none for no file).
fn json_root(text: Option<&str>) -> Result<Vec<(String, Node)>, String> {
    match text.map(read_json).transpose()? {
        None => Ok(Vec::new()),
        Some(Node::Object(entries)) => Ok(entries),
        Some(other) => Err(format!("it is {}, not a JSON object", other.kind())),
    }
}

/// What sorts a JSON host's servers out of its tree, keeping where each one
/// taken out sat for the same cut in the text.
struct JsonSorter<'a> {
    host: Host,
    held: &'a HashSet<Identity>,
    take: Take,
    home: &'a Path,
    sorted: Sorted,
    /// Where each server taken out sits: its list's path and its name.
    cuts: Vec<(Vec<String>, String)>,
}

impl JsonSorter<'_> {
    /// Sorts the servers of each project's list (Claude Code's
    /// `projects.<folder>.mcpServers`).
    fn take_out_of_projects(&mut self, root: &mut [(String, Node)]) {
        let Some((_, Node::Object(projects))) = root.iter_mut().find(|(k, _)| k == "projects")
        else {
            return;
        };
        for (folder, settings) in projects.iter_mut() {
            let Node::Object(settings) = settings else {
                continue;
            };
            if let Some((_, Node::Object(list))) =
                settings.iter_mut().find(|(k, _)| k == "mcpServers")
            {
                let at = ["projects".to_string(), folder.clone(), "mcpServers".into()];
                self.take_out(list, &at, Some(&PathBuf::from(&*folder)));
            }
        }
    }

    /// Sorts the servers of `list` (at `at`, in `project`'s file or the
    /// user's), taking out of it those that go.
    fn take_out(&mut self, list: &mut Vec<(String, Node)>, at: &[String], project: Option<&Path>) {
        let remove = self.take.replace && (project.is_none() || self.take.projects);
        let cx = Context::of_file(self.home, project);
        let shown = path_of(at);
        let (host, held) = (self.host, self.held);
        let (sorted, cuts) = (&mut self.sorted, &mut self.cuts);
        list.retain(|(name, node)| {
            if name == ENTRY {
                return true;
            }
            let identity = json_entry::identity(host, node, &cx);
            let holds = identity.is_some_and(|i| held.contains(&i));
            let goes = sorted.sort(child_path(&shown, name), holds, remove, project.is_some());
            if goes {
                cuts.push((at.to_vec(), name.clone()));
            }
            !goes
        });
    }
}

/// Adds an empty server list `key` to `root` when it has none; whether it
/// had one. A `key` that is not an object is refused.
fn add_list(root: &mut Vec<(String, Node)>, key: &str) -> Result<bool, String> {
    let had_list = match root.iter().find(|(k, _)| k == key) {
        Some((_, Node::Object(_))) => true,
        Some((_, other)) => {
            return Err(format!("its \"{key}\" is {}, not an object", other.kind()))
        }
        None => false,
    };
    if !had_list {
        root.push((key.to_string(), Node::Object(Vec::new())));
    }
    Ok(had_list)
}

/// The server list `key` of `root`.
fn list_mut<'a>(
    root: &'a mut [(String, Node)],
    key: &str,
) -> Result<&'a mut Vec<(String, Node)>, String> {
    match root.iter_mut().find(|(k, _)| k == key) {
        Some((_, Node::Object(list))) => Ok(list),
        _ => Err("internal error: the server list vanished".into()),
    }
}

/// Puts `entry` in `list` as the workbench's: an entry there already is
/// updated (`update`), else it is added last; whether one was there.
fn put_entry(list: &mut Vec<(String, Node)>, entry: Node) -> bool {
    match list.iter_mut().find(|(k, _)| k == ENTRY) {
        Some((_, old)) => {
            update(old, entry);
            true
        }
        None => {
            list.push((ENTRY.to_string(), entry));
            false
        }
    }
}

/// Where the workbench's entry went in the tree.
#[derive(Clone, Copy)]
enum Placed {
    /// In a server list the file did not have.
    NewList,
    /// In place of the entry that was there.
    Updated,
    /// After the last server of the list.
    Added,
}

/// `text` without the servers at `cuts`.
fn cut_out(text: &str, cuts: &[(Vec<String>, String)]) -> Result<String, String> {
    let mut out = text.to_string();
    for (at, name) in cuts {
        let at: Vec<&str> = at.iter().map(String::as_str).collect();
        out = json_splice::remove(&out, &at, name).map_err(internal)?;
    }
    Ok(out)
}

/// `text` with the workbench's entry `entry` where the tree's edit `placed`
/// it in the list `key`.
fn splice_entry(text: &str, key: &str, placed: Placed, entry: &Node) -> Result<String, String> {
    match placed {
        Placed::NewList => {
            let list = Node::Object(vec![(ENTRY.to_string(), entry.clone())]);
            json_splice::append(text, &[], key, Value::Node(&list))
        }
        Placed::Updated => json_splice::set(text, &[key], ENTRY, Value::Node(entry)),
        Placed::Added => json_splice::append(text, &[key], ENTRY, Value::Node(entry)),
    }
    .map_err(internal)
}

/// A host's JSON text (comments and trailing commas allowed) as a tree.
pub(crate) fn read_json(text: &str) -> Result<Node, String> {
    let (json, _) = jsonc::strip(text);
    serde_json::from_str::<Node>(&json).map_err(|e| {
        format!(
            "it is not valid JSON (line {} column {})",
            e.line(),
            e.column()
        )
    })
}

fn internal(why: String) -> String {
    format!("internal error: {why}; nothing was written")
}

/// The keys that say how a host starts a server: an entry of the
/// workbench's own loses those it does not use, and keeps the rest (a
/// host's settings for it: an `env`, timeouts, tool limits).
const TRANSPORT_KEYS: &[&str] = &[
    "type",
    "command",
    "args",
    "url",
    "httpUrl",
    "serverUrl",
    "headers",
    "bearer_token_env_var",
    "http_headers",
    "env_http_headers",
];

/// The workbench's existing entry `old` made to run as `new` says: `new`'s
/// keys replace theirs where they are (an `env` already there is kept), the
/// other transport keys go, the rest stays.
fn update(old: &mut Node, new: Node) {
    let (Node::Object(keys), Node::Object(new)) = (&mut *old, new.clone()) else {
        *old = new;
        return;
    };
    keys.retain(|(k, _)| !TRANSPORT_KEYS.contains(&k.as_str()) || new.iter().any(|(n, _)| n == k));
    for (key, value) in new {
        match keys.iter_mut().find(|(k, _)| *k == key) {
            Some(_) if key == "env" => {}
            Some((_, slot)) => *slot = value,
            None => keys.push((key, value)),
        }
    }
}

/// Codex's `config.toml` edited line by line: the servers that go taken
/// out, the workbench's table updated where it is or appended.
fn edit_toml(
    text: &str,
    launch: &Launch,
    held: &HashSet<Identity>,
    take: Take,
) -> Result<Edited, String> {
    let doc = codex_document(text)?;
    let mut sorted = Sorted::default();
    let mut drop_names = Vec::new();
    for (name, value) in codex_servers(&doc)? {
        if name == ENTRY {
            continue;
        }
        let holds = codex::identity(&value).is_some_and(|i| held.contains(&i));
        if sorted.sort(child_path("mcp_servers", &name), holds, take.replace, false) {
            drop_names.push(name);
        }
    }
    let newline = newline_of(text);
    let table = toml::emit_table(
        &workbench_path(),
        &[
            ("command", Emit::String(&launch.program)),
            ("args", Emit::Strings(&launch.args())),
        ],
        newline,
    );
    let (out, replaced_entry, in_place) = cut_lines(text, &doc, &table, &drop_names);
    let out = if in_place {
        keep_unended(out, text, newline)
    } else {
        append_table(out, &table, newline)
    };
    check_codex(&out)?;
    Ok(sorted.edited(out, replaced_entry))
}

/// Codex's file parsed, refused when its `mcp_servers` is an inline table
/// (which the workbench's table cannot be added to).
fn codex_document(text: &str) -> Result<Document, String> {
    let doc =
        toml::parse(text).map_err(|e| format!("it is not TOML the workbench can edit: {e}"))?;
    let servers_path = ["mcp_servers".to_string()];
    if doc
        .spans
        .iter()
        .any(|s| !s.header && s.path.len() == 1 && s.path == servers_path)
    {
        return Err("its mcp_servers is an inline table; add the workbench's [mcp_servers.workbench] table by hand".into());
    }
    Ok(doc)
}

/// The servers' tables of Codex's file, in its order.
fn codex_servers(doc: &Document) -> Result<Vec<(String, toml::Value)>, String> {
    match doc.root.get("mcp_servers") {
        Some(toml::Value::Table(t)) => Ok(t.entries.clone()),
        Some(other) => Err(format!("its mcp_servers is {}, not a table", other.kind())),
        None => Ok(Vec::new()),
    }
}

/// `mcp_servers.workbench`, the workbench's table.
fn workbench_path() -> Vec<String> {
    vec!["mcp_servers".to_string(), ENTRY.to_string()]
}

/// `text` without the lines of the servers `drop_names` and of the
/// workbench's transport keys; with a `[mcp_servers.workbench]` header, its
/// line becomes `table` (its header, command and args), and only the keys
/// (or subtables) that say how to start a server go: the rest (an `env`,
/// timeouts, `[mcp_servers.workbench.tools.*]`) is kept. Also whether the
/// workbench had an entry, and whether `table` went in where it was.
fn cut_lines(
    text: &str,
    doc: &Document,
    table: &str,
    drop_names: &[String],
) -> (String, bool, bool) {
    let table_path = workbench_path();
    let mut lines: Vec<Option<String>> = text
        .split_inclusive('\n')
        .map(|l| Some(l.to_string()))
        .collect();
    let has_table = doc.spans.iter().any(|s| s.header && s.path == table_path);
    let mut replaced_entry = false;
    let mut in_place = false;
    for span in &doc.spans {
        let ours = codex::under(&span.path, ENTRY);
        if ours && has_table && span.header && span.path == table_path {
            replaced_entry = true;
            in_place = true;
            lines[span.lines.start] = Some(table.to_string());
            continue;
        }
        let remove = match (ours, has_table) {
            (true, true) => span.path.len() == 3 && TRANSPORT_KEYS.contains(&span.path[2].as_str()),
            (true, false) => true,
            (false, _) => drop_names.iter().any(|n| codex::under(&span.path, n)),
        };
        if !remove {
            continue;
        }
        replaced_entry |= ours;
        let mut end = span.lines.end;
        if span.header && !ours {
            while lines
                .get(end)
                .is_some_and(|l| l.as_deref().is_some_and(|l| l.trim().is_empty()))
            {
                end += 1;
            }
        }
        for line in lines.iter_mut().take(end).skip(span.lines.start) {
            *line = None;
        }
    }
    let out = lines.into_iter().flatten().collect();
    (out, replaced_entry, in_place)
}

/// `out` with `table` appended after a blank line; a file without a final
/// newline keeps going without one.
fn append_table(mut out: String, table: &str, newline: &str) -> String {
    let unended = !out.is_empty() && !out.ends_with('\n');
    if unended {
        out.push_str(newline);
    }
    if !out.is_empty() && !out.ends_with(&format!("{newline}{newline}")) {
        out.push_str(newline);
    }
    out.push_str(table);
    if unended {
        out.truncate(out.len() - newline.len());
    }
    out
}

/// `out` without a final newline when `text` had none (the table at its end
/// was replaced where it is).
fn keep_unended(mut out: String, text: &str, newline: &str) -> String {
    if !text.ends_with('\n') {
        if let Some(cut) = out.strip_suffix(newline) {
            out.truncate(cut.len());
        }
    }
    out
}

/// The edited Codex file read back: it must parse and hold the
/// workbench's table.
fn check_codex(out: &str) -> Result<(), String> {
    let check = toml::parse(out).map_err(|e| {
        format!("internal error: the edited file would not read ({e}); nothing was written")
    })?;
    let written = match check.root.get("mcp_servers") {
        Some(toml::Value::Table(t)) => t.get(ENTRY).is_some(),
        _ => false,
    };
    if !written {
        return Err(
            "internal error: the edited file lost the workbench's table; nothing was written"
                .into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosts::fixtures::{held, launch, places};

    const REPLACE: Take = Take {
        replace: true,
        projects: true,
    };

    #[test]
    fn json_keeps_keys_order_and_layout() {
        let text = "{\n    \"zeta\": 1,\n    \"mcpServers\": {\n        \"a\": {\"command\": \"moved\"},\n        \"b\": {\"command\": \"stays\"}\n    },\n    \"alpha\": true\n}";
        let edited = edit(
            Host::ClaudeDesktop,
            Some(text),
            &launch(),
            &held(&["moved"]),
            REPLACE,
            &places(),
        )
        .unwrap();
        assert_eq!(
            edited.text,
            "{\n    \"zeta\": 1,\n    \"mcpServers\": {\n        \"b\": {\"command\": \"stays\"},\n        \"workbench\": {\n            \"command\": \"/opt/wb/mcp-workbench\",\n            \"args\": [\n                \"--config\",\n                \"/home/u/wb.json\"\n            ]\n        }\n    },\n    \"alpha\": true\n}"
        );
        assert_eq!(edited.removed, ["mcpServers.a"]);
        assert_eq!(edited.kept, ["mcpServers.b"]);
        // Again: the entry is updated where it is, to the same.
        let again = edit(
            Host::ClaudeDesktop,
            Some(&edited.text),
            &launch(),
            &HashSet::new(),
            Take::default(),
            &places(),
        )
        .unwrap();
        assert!(again.replaced_entry);
        assert_eq!(again.text, edited.text);
        // An entry of the user's own keeps its settings, loses its URL.
        let mine = r#"{"mcpServers":{"workbench":{"url":"http://x","env":{"A":"1"},"command":"old","timeout":5}}}"#;
        let updated = edit(
            Host::Gemini,
            Some(mine),
            &launch(),
            &HashSet::new(),
            Take::default(),
            &places(),
        )
        .unwrap();
        let node: Node = serde_json::from_str(&updated.text).unwrap();
        assert_eq!(
            serde_json::to_string(node.get("mcpServers").unwrap()).unwrap(),
            r#"{"workbench":{"env":{"A":"1"},"command":"/opt/wb/mcp-workbench","timeout":5,"args":["--config","/home/u/wb.json"]}}"#
        );
    }

    #[test]
    fn each_json_host_writes_its_own_shape() {
        let vs = edit(
            Host::VsCode,
            None,
            &launch(),
            &HashSet::new(),
            Take::default(),
            &places(),
        )
        .unwrap();
        assert!(
            vs.text.starts_with(
                "{\n  \"servers\": {\n    \"workbench\": {\n      \"type\": \"stdio\","
            ),
            "{}",
            vs.text
        );
        let cc = edit(
            Host::ClaudeCode,
            Some(r#"{"projects":{"/p":{"mcpServers":{"x":{"command":"moved"}}}},"mcpServers":{}}"#),
            &launch(),
            &held(&["moved"]),
            REPLACE,
            &places(),
        )
        .unwrap();
        assert_eq!(cc.removed, [r#"projects["/p"].mcpServers.x"#]);
        // Without --include-projects, a project's entry stays, and is said.
        let user_level = Take {
            replace: true,
            projects: false,
        };
        let kept = edit(
            Host::ClaudeCode,
            Some(r#"{"projects":{"/p":{"mcpServers":{"x":{"command":"moved"}}}}}"#),
            &launch(),
            &held(&["moved"]),
            user_level,
            &places(),
        )
        .unwrap();
        assert!(kept.removed.is_empty());
        assert_eq!(kept.doubled_in_projects, [r#"projects["/p"].mcpServers.x"#]);
        assert!(
            kept.text.contains(r#"{"x":{"command":"moved"}}"#),
            "{}",
            kept.text
        );
        let node: Node = serde_json::from_str(&cc.text).unwrap();
        assert_eq!(
            serde_json::to_string(node.get("mcpServers").unwrap()).unwrap(),
            r#"{"workbench":{"type":"stdio","command":"/opt/wb/mcp-workbench","args":["--config","/home/u/wb.json"],"env":{}}}"#
        );
    }

    #[test]
    fn json_that_cannot_be_kept_is_refused() {
        let err = |text: &str| {
            edit(
                Host::Cursor,
                Some(text),
                &launch(),
                &HashSet::new(),
                Take::default(),
                &places(),
            )
            .unwrap_err()
        };
        assert_eq!(
            err("{\"mcpServers\": {"),
            "it is not valid JSON (line 1 column 16)"
        );
        assert_eq!(err("[]"), "it is an array, not a JSON object");
        assert_eq!(
            err("{\"mcpServers\": []}"),
            "its \"mcpServers\" is an array, not an object"
        );
    }

    #[test]
    fn every_byte_outside_the_edit_stays() {
        // Claude Code's file as it writes it, with CRLF and no final newline.
        let text = "{\r\n  \"numStartups\": 3,\r\n  \"history\": [{\"display\": \"hi\", \"pastedContents\": {}}],\r\n  \"mcpServers\": {\r\n    \"gone\": {\"command\": \"moved\", \"args\": []},\r\n    \"npx\": {\"type\": \"stdio\", \"command\": \"npx\", \"args\": [\"-y\", \"pkg\"], \"env\": {}}\r\n  },\r\n  \"projects\": {\"/p\": {\"allowedTools\": [], \"mcpServers\": {}}},\r\n  \"zeta\": 1\r\n}";
        let edited = edit(
            Host::ClaudeCode,
            Some(text),
            &launch(),
            &held(&["moved"]),
            REPLACE,
            &places(),
        )
        .unwrap();
        assert_eq!(
            edited.text,
            "{\r\n  \"numStartups\": 3,\r\n  \"history\": [{\"display\": \"hi\", \"pastedContents\": {}}],\r\n  \"mcpServers\": {\r\n    \"npx\": {\"type\": \"stdio\", \"command\": \"npx\", \"args\": [\"-y\", \"pkg\"], \"env\": {}},\r\n    \"workbench\": {\r\n      \"type\": \"stdio\",\r\n      \"command\": \"/opt/wb/mcp-workbench\",\r\n      \"args\": [\r\n        \"--config\",\r\n        \"/home/u/wb.json\"\r\n      ],\r\n      \"env\": {}\r\n    }\r\n  },\r\n  \"projects\": {\"/p\": {\"allowedTools\": [], \"mcpServers\": {}}},\r\n  \"zeta\": 1\r\n}"
        );
        // No server list yet: added at the top level, the same way.
        let bare = "{\n\t\"theme\": \"dark\",\n\t\"list\": [1, 2]\n}\n";
        let added = edit(
            Host::Cursor,
            Some(bare),
            &launch(),
            &HashSet::new(),
            Take::default(),
            &places(),
        )
        .unwrap();
        assert_eq!(
            added.text,
            "{\n\t\"theme\": \"dark\",\n\t\"list\": [1, 2],\n\t\"mcpServers\": {\n\t\t\"workbench\": {\n\t\t\t\"command\": \"/opt/wb/mcp-workbench\",\n\t\t\t\"args\": [\n\t\t\t\t\"--config\",\n\t\t\t\t\"/home/u/wb.json\"\n\t\t\t]\n\t\t}\n\t}\n}\n"
        );
        // JSONC (VS Code): comments and trailing commas stay.
        let vscode = "{\n  // my servers\n  \"servers\": {\n    \"a\": {\"command\": \"x\"}, // a\n  },\n}\n";
        let commented = edit(
            Host::VsCode,
            Some(vscode),
            &launch(),
            &HashSet::new(),
            Take::default(),
            &places(),
        )
        .unwrap();
        assert!(
            commented.text.starts_with("{\n  // my servers\n  \"servers\": {\n    \"a\": {\"command\": \"x\"}, // a\n    \"workbench\": {\n"),
            "{}",
            commented.text
        );
        assert!(
            commented.text.ends_with("]\n    },\n  },\n}\n"),
            "{}",
            commented.text
        );
        // Codex: CRLF and no final newline stay.
        let toml = "model = \"o3\"\r\n\r\n[mcp_servers.a]\r\ncommand = \"x\"";
        let codex = edit(
            Host::Codex,
            Some(toml),
            &launch(),
            &HashSet::new(),
            Take::default(),
            &places(),
        )
        .unwrap();
        assert_eq!(
            codex.text,
            "model = \"o3\"\r\n\r\n[mcp_servers.a]\r\ncommand = \"x\"\r\n\r\n[mcp_servers.workbench]\r\ncommand = \"/opt/wb/mcp-workbench\"\r\nargs = [\"--config\", \"/home/u/wb.json\"]"
        );
    }

    #[test]
    fn toml_keeps_every_other_line() {
        let text = "model = \"o3\" # mine\n\n[mcp_servers.a]\ncommand = \"moved\"\n\n# about b\n[mcp_servers.b]\ncommand = \"stays\"\n\n[mcp_servers.a.env]\nX = \"1\"\n";
        let edited = edit(
            Host::Codex,
            Some(text),
            &launch(),
            &held(&["moved"]),
            REPLACE,
            &places(),
        );
        // The env table makes `a` another server than the held one: kept.
        let edited = edited.unwrap();
        assert_eq!(edited.kept, ["mcp_servers.a", "mcp_servers.b"]);
        assert_eq!(
            edited.text,
            format!("{text}\n[mcp_servers.workbench]\ncommand = \"/opt/wb/mcp-workbench\"\nargs = [\"--config\", \"/home/u/wb.json\"]\n")
        );
        let mut held_a = held(&[]);
        held_a.insert(Identity::Stdio {
            command: "moved".into(),
            args: Vec::new(),
            env: vec![("X".into(), "1".into())],
        });
        let replaced = edit(
            Host::Codex,
            Some(&edited.text),
            &launch(),
            &held_a,
            REPLACE,
            &places(),
        )
        .unwrap();
        assert!(replaced.replaced_entry);
        assert_eq!(replaced.removed, ["mcp_servers.a"]);
        assert_eq!(
            replaced.text,
            "model = \"o3\" # mine\n\n# about b\n[mcp_servers.b]\ncommand = \"stays\"\n\n[mcp_servers.workbench]\ncommand = \"/opt/wb/mcp-workbench\"\nargs = [\"--config\", \"/home/u/wb.json\"]\n"
        );
        // The workbench's own table keeps what the user added to it.
        let tuned = "[mcp_servers.workbench] # mine\ncommand = \"/old/mcp-workbench\"\nargs = [\n  \"--config\",\n  \"/old.json\",\n]\nstartup_timeout_sec = 5\n\n[mcp_servers.workbench.tools.open_toolbox]\noutput_token_limit = 20000\n";
        let updated = edit(
            Host::Codex,
            Some(tuned),
            &launch(),
            &HashSet::new(),
            Take::default(),
            &places(),
        )
        .unwrap();
        assert!(updated.replaced_entry);
        assert_eq!(
            updated.text,
            "[mcp_servers.workbench]\ncommand = \"/opt/wb/mcp-workbench\"\nargs = [\"--config\", \"/home/u/wb.json\"]\nstartup_timeout_sec = 5\n\n[mcp_servers.workbench.tools.open_toolbox]\noutput_token_limit = 20000\n"
        );
        let new = edit(
            Host::Codex,
            None,
            &launch(),
            &HashSet::new(),
            Take::default(),
            &places(),
        )
        .unwrap();
        assert!(
            new.text.starts_with("[mcp_servers.workbench]\n"),
            "{}",
            new.text
        );
        let err = edit(
            Host::Codex,
            Some("a = 1\n[[x]]\n"),
            &launch(),
            &HashSet::new(),
            Take::default(),
            &places(),
        )
        .unwrap_err();
        assert!(err.contains("line 2: arrays of tables"), "{err}");
        let err = edit(
            Host::Codex,
            Some("mcp_servers = { a = { command = \"x\" } }\n"),
            &launch(),
            &HashSet::new(),
            Take::default(),
            &places(),
        )
        .unwrap_err();
        assert!(err.contains("inline table"), "{err}");
    }
}
