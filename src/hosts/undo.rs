//! `install --undo` as a reverse edit of the host's file as it is now
//! (docs/reference.md §12): the `workbench` entry the install wrote is taken
//! out (or, when the file had one of its own before, that one is put back),
//! and the servers the install's `--replace` took out (those in the backup,
//! missing now, and held by the workbench's config) are put back from the
//! backup, where they were. Everything else the host or the user wrote since
//! stays. What cannot be reversed safely is left as it is and named: a
//! `workbench` entry that is not what the install writes (edited since, or
//! running another config), a server of the same name added since, a list
//! that is gone. Without changes in between, install then undo gives the
//! file back byte for byte. JSON here (`json_splice`); Codex's TOML in
//! `undo_toml`; what both decide alike, and what they report, in `undone`.
//! No IO.

use super::edit::{self, read_json, Launch, Take, ENTRY};
use super::entry::Identity;
use super::found::{child_path, path_of};
use super::host::Host;
use super::json_entry;
use super::json_splice::{self, Value};
use super::paths::Places;
use super::undo_toml;
use super::undone::{held_by, missing};
use super::vars::Context;
use crate::config::ordered_json::Node;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

pub(crate) use super::undone::{Entry, Undone};

/// `text`, the host's file now, with the install that `backup` was taken
/// before reversed; `held`: the identities of the workbench config's
/// servers (`None`: it cannot be read, and every server missing now is put
/// back).
pub(crate) fn undo(
    host: Host,
    text: &str,
    backup: &str,
    launch: &Launch,
    held: Option<&HashSet<Identity>>,
    places: &Places,
) -> Result<Undone, String> {
    // What the install writes from the backup: the entry it left.
    let installed = edit::edit(
        host,
        Some(backup),
        launch,
        &HashSet::new(),
        Take::default(),
        places,
    )
    .map_err(|e| format!("its backup cannot be read: {e}"))?;
    match host.list_key() {
        Some(key) => undo_json(host, key, text, backup, &installed.text, held, places),
        None => undo_toml::undo(text, backup, &installed.text, held),
    }
}

/// The JSON host's file with the install reversed: the workbench's entry,
/// then the servers of each list, then a list the install created.
fn undo_json(
    host: Host,
    key: &str,
    text: &str,
    backup: &str,
    installed: &str,
    held: Option<&HashSet<Identity>>,
    places: &Places,
) -> Result<Undone, String> {
    let now = read_json(text)?;
    let before = read_json(backup).map_err(|e| format!("its backup: {e}"))?;
    let expected = read_json(installed)?;
    let entry_of = |root: &Node| root.get(key).and_then(|l| l.get(ENTRY)).cloned();
    let entry = Entry::judge(
        entry_of(&now).as_ref(),
        entry_of(&before).as_ref(),
        entry_of(&expected).as_ref(),
    );
    let mut out = reverse_entry(text, backup, key, &entry)?;
    let mut lists = ListsBack {
        host,
        backup,
        before: &before,
        held,
        home: &places.home,
        put_back: Vec::new(),
        left: Vec::new(),
    };
    for (path, project) in server_lists(host, key, &before) {
        out = lists.put_back(out, &path, project.as_deref())?;
    }
    let out = drop_created_list(out, key, &entry, &before)?;
    read_json(&out).map_err(|e| format!("internal error: the reversed text: {e}"))?;
    Ok(Undone {
        text: out,
        entry,
        put_back: lists.put_back,
        left: lists.left,
    })
}

/// `text` with the workbench's entry as `entry` says: the backup's own put
/// back (`Restored`), or taken out (`Removed`); else as it is.
fn reverse_entry(text: &str, backup: &str, key: &str, entry: &Entry) -> Result<String, String> {
    match entry {
        Entry::Restored => {
            let (value, indent) = json_splice::member_source(backup, &[key], ENTRY)?
                .ok_or("internal error: the backup's entry vanished")?;
            json_splice::set(
                text,
                &[key],
                ENTRY,
                Value::Raw {
                    text: &value,
                    indent: &indent,
                },
            )
        }
        Entry::Removed => json_splice::remove(text, &[key], ENTRY),
        Entry::Missing | Entry::Changed => Ok(text.to_string()),
    }
}

/// The server lists the install may have taken servers out of: the
/// user-level list `key`, and each project's in the backup (with its
/// folder).
fn server_lists(host: Host, key: &str, before: &Node) -> Vec<(Vec<String>, Option<PathBuf>)> {
    let mut lists = vec![(vec![key.to_string()], None)];
    if host.has_project_lists() {
        for (folder, _) in before
            .get("projects")
            .and_then(Node::entries)
            .unwrap_or_default()
        {
            let path = vec!["projects".into(), folder.clone(), "mcpServers".into()];
            lists.push((path, Some(PathBuf::from(folder))));
        }
    }
    lists
}

/// What puts the backup's servers back, list by list, and what it did.
struct ListsBack<'a> {
    host: Host,
    backup: &'a str,
    before: &'a Node,
    held: Option<&'a HashSet<Identity>>,
    home: &'a Path,
    /// The paths of the servers put back.
    put_back: Vec<String>,
    /// Servers not put back: the path and why.
    left: Vec<(String, String)>,
}

impl ListsBack<'_> {
    /// `out` with the servers missing from its list at `path` (in
    /// `project`'s file or the user's) put back where they were; when the
    /// list itself is gone, they are named in `left`.
    fn put_back(
        &mut self,
        mut out: String,
        path: &[String],
        project: Option<&Path>,
    ) -> Result<String, String> {
        let at: Vec<&str> = path.iter().map(String::as_str).collect();
        let shown = path_of(&at);
        let cx = Context::of_file(self.home, project);
        let old = list_at(self.before, &at);
        let (host, held) = (self.host, self.held);
        let may_go_back = |node: &Node| held_by(held, json_entry::identity(host, node, &cx));
        let here = list_at(&read_json(&out)?, &at);
        let shown_child = |name: &str| child_path(&shown, name);
        let missing = missing(&old, &here, may_go_back, shown_child, &mut self.left);
        if missing.is_empty() {
            return Ok(out);
        }
        if json_splice::member_source(&out, &at[..at.len() - 1], at[at.len() - 1])?.is_none() {
            for (name, _) in missing {
                self.left.push((
                    child_path(&shown, name),
                    format!("{shown} is no longer in the file"),
                ));
            }
            return Ok(out);
        }
        for (name, _) in missing {
            out = put_back_one(&out, self.backup, &at, name, &old)?;
            self.put_back.push(child_path(&shown, name));
        }
        Ok(out)
    }
}

/// `out` without the list `key` when the install created it (the backup
/// had none) and it is empty again now that the entry went.
fn drop_created_list(
    out: String,
    key: &str,
    entry: &Entry,
    before: &Node,
) -> Result<String, String> {
    if *entry == Entry::Removed
        && before.get(key).is_none()
        && list_at(&read_json(&out)?, &[key]).is_empty()
    {
        return json_splice::remove(&out, &[], key);
    }
    Ok(out)
}

/// The members of the object at `path` of `root` (none when it is missing).
fn list_at(root: &Node, path: &[&str]) -> Vec<(String, Node)> {
    let mut node = root;
    for part in path {
        match node.get(part) {
            Some(inner) => node = inner,
            None => return Vec::new(),
        }
    }
    node.entries().map(<[_]>::to_vec).unwrap_or_default()
}

/// `text` with the server `name` of the backup's list at `path` put back:
/// before the first server that followed it there and is still here, else
/// after the last.
fn put_back_one(
    text: &str,
    backup: &str,
    path: &[&str],
    name: &str,
    old: &[(String, Node)],
) -> Result<String, String> {
    let here = list_at(&read_json(text)?, path);
    let after = old
        .iter()
        .skip_while(|(n, _)| n != name)
        .skip(1)
        .find(|(n, _)| here.iter().any(|(h, _)| h == n));
    if let (Some((next, _)), Some(piece)) = (after, json_splice::chunk(backup, path, name)?) {
        return json_splice::insert_before(text, path, next, &piece);
    }
    let (value, indent) = json_splice::member_source(backup, path, name)?
        .ok_or("internal error: the backup's server vanished")?;
    json_splice::append(
        text,
        path,
        name,
        Value::Raw {
            text: &value,
            indent: &indent,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosts::fixtures::{held, launch, places};

    const BEFORE: &str = "{\n  \"numStartups\": 1,\n  \"mcpServers\": {\n    \"a\": {\"command\": \"moved\"},\n    \"b\": {\"command\": \"stays\"},\n    \"c\": {\"command\": \"also\"}\n  },\n  \"projects\": {\"/p\": {\"mcpServers\": {}}}\n}\n";

    fn installed() -> String {
        let held = held(&["moved", "also"]);
        edit::edit(
            Host::ClaudeCode,
            Some(BEFORE),
            &launch(),
            &held,
            Take {
                replace: true,
                projects: false,
            },
            &places(),
        )
        .unwrap()
        .text
    }

    #[test]
    fn undo_reverses_the_install_and_keeps_what_came_since() {
        let held = held(&["moved", "also"]);
        let installed = installed();
        // Nothing in between: the file as it was.
        let back = undo(
            Host::ClaudeCode,
            &installed,
            BEFORE,
            &launch(),
            Some(&held),
            &places(),
        )
        .unwrap();
        assert_eq!(back.text, BEFORE);
        assert_eq!(back.entry, Entry::Removed);
        assert_eq!(back.put_back, ["mcpServers.a", "mcpServers.c"]);
        // Claude Code wrote its file since: a key changed, one added, a
        // server added by the user; all stay.
        let since = installed
            .replace("\"numStartups\": 1", "\"numStartups\": 2")
            .replace(
                "\"projects\"",
                "\"tipsHistory\": {\"x\": 3},\n  \"projects\"",
            )
            .replace(
                "    \"b\": {\"command\": \"stays\"},",
                "    \"b\": {\"command\": \"stays\"},\n    \"new\": {\"command\": \"mine\"},",
            );
        let back = undo(
            Host::ClaudeCode,
            &since,
            BEFORE,
            &launch(),
            Some(&held),
            &places(),
        )
        .unwrap();
        assert_eq!(
            back.text,
            "{\n  \"numStartups\": 2,\n  \"mcpServers\": {\n    \"a\": {\"command\": \"moved\"},\n    \"b\": {\"command\": \"stays\"},\n    \"new\": {\"command\": \"mine\"},\n    \"c\": {\"command\": \"also\"}\n  },\n  \"tipsHistory\": {\"x\": 3},\n  \"projects\": {\"/p\": {\"mcpServers\": {}}}\n}\n"
        );
        assert!(back.left.is_empty(), "{:?}", back.left);
    }

    #[test]
    fn what_cannot_be_reversed_is_left_and_named() {
        let held = held(&["moved", "also"]);
        let since = installed()
            .replace("\"--config\"", "\"--verbose\", \"--config\"")
            .replace("\"b\": {", "\"a\": {\"command\": \"other\"},\n    \"b\": {");
        let back = undo(
            Host::ClaudeCode,
            &since,
            BEFORE,
            &launch(),
            Some(&held),
            &places(),
        )
        .unwrap();
        assert_eq!(back.entry, Entry::Changed);
        assert!(back.text.contains("\"--verbose\""), "{}", back.text);
        assert!(back.text.contains("\"other\""), "{}", back.text);
        assert_eq!(back.put_back, ["mcpServers.c"]);
        assert_eq!(
            back.left,
            [(
                "mcpServers.a".to_string(),
                "a server of that name was added since".to_string()
            )]
        );
        // A server the user took out since, that the config does not hold,
        // stays out; the list the install created goes with the entry.
        let back = undo(
            Host::Cursor,
            "{\"x\": 1, \"mcpServers\": {\"workbench\": {\"command\": \"/opt/wb/mcp-workbench\", \"args\": [\"--config\", \"/home/u/wb.json\"]}}}",
            "{\"x\": 1}",
            &launch(),
            Some(&held),
            &places(),
        )
        .unwrap();
        assert_eq!(back.text, "{\"x\": 1}");
    }
}
