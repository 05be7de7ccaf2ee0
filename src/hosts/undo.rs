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
//! `undo_toml`. No IO.

use super::edit::{self, read_json, Launch, Take, ENTRY};
use super::entry::Identity;
use super::found::child_path;
use super::host::Host;
use super::json_entry;
use super::json_splice::{self, Value};
use super::paths::Places;
use super::undo_toml;
use super::vars::Context;
use crate::config::ordered_json::Node;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// What became of the `workbench` entry.
#[derive(Debug, PartialEq)]
pub(crate) enum Entry {
    /// Taken out.
    Removed,
    /// The file's own entry from before the install is back.
    Restored,
    /// There is none.
    Missing,
    /// Left as it is: it is not what the install wrote.
    Changed,
}

/// The reversed text and what was and was not done.
#[derive(Debug)]
pub(crate) struct Undone {
    pub text: String,
    pub entry: Entry,
    /// The paths of the servers put back.
    pub put_back: Vec<String>,
    /// Servers not put back: the path and why.
    pub left: Vec<(String, String)>,
}

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
    let mut out = text.to_string();
    let entry = match (entry_of(&now), entry_of(&before)) {
        (None, _) => Entry::Missing,
        (Some(current), _) if Some(&current) != entry_of(&expected).as_ref() => Entry::Changed,
        (Some(_), Some(own)) if Some(&own) != entry_of(&expected).as_ref() => {
            let (value, indent) = json_splice::member_source(backup, &[key], ENTRY)?
                .ok_or("internal error: the backup's entry vanished")?;
            out = json_splice::set(
                &out,
                &[key],
                ENTRY,
                Value::Raw {
                    text: &value,
                    indent: &indent,
                },
            )?;
            Entry::Restored
        }
        (Some(_), _) => {
            out = json_splice::remove(&out, &[key], ENTRY)?;
            Entry::Removed
        }
    };
    let mut put_back = Vec::new();
    let mut left = Vec::new();
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
    for (path, project) in &lists {
        let at: Vec<&str> = path.iter().map(String::as_str).collect();
        let shown = at
            .iter()
            .fold(String::new(), |p, part| child_path(&p, part));
        let cx = Context {
            home: &places.home,
            project: project.as_deref().map(Path::new),
            inputs: &[],
            separator: std::path::MAIN_SEPARATOR,
        };
        let old = list_at(&before, &at);
        let held_here = |node: &Node| {
            let identity = json_entry::map(host, node, &cx)
                .ok()
                .map(|m| m.entry.identity());
            held.is_none_or(|held| identity.is_some_and(|i| held.contains(&i)))
        };
        let here = list_at(&read_json(&out)?, &at);
        let missing: Vec<&(String, Node)> = old
            .iter()
            .filter(|(name, node)| name != ENTRY && held_here(node))
            .filter(|(name, node)| match here.iter().find(|(n, _)| n == name) {
                Some((_, same)) if same == node => false,
                Some(_) => {
                    left.push((
                        child_path(&shown, name),
                        "a server of that name was added since".to_string(),
                    ));
                    false
                }
                None => true,
            })
            .collect();
        if missing.is_empty() {
            continue;
        }
        if json_splice::member_source(&out, &at[..at.len() - 1], at[at.len() - 1])?.is_none() {
            for (name, _) in missing {
                left.push((
                    child_path(&shown, name),
                    format!("{shown} is no longer in the file"),
                ));
            }
            continue;
        }
        for (name, _) in missing {
            out = put_back_one(&out, backup, &at, name, &old)?;
            put_back.push(child_path(&shown, name));
        }
    }
    // A list the install created and that is empty again goes too.
    if entry == Entry::Removed
        && before.get(key).is_none()
        && list_at(&read_json(&out)?, &[key]).is_empty()
    {
        out = json_splice::remove(&out, &[], key)?;
    }
    read_json(&out).map_err(|e| format!("internal error: the reversed text: {e}"))?;
    Ok(Undone {
        text: out,
        entry,
        put_back,
        left,
    })
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
    use crate::hosts::paths::Os;
    use std::ffi::OsString;

    fn places() -> Places {
        let env = |name: &str| (name == "HOME").then(|| OsString::from("/home/u"));
        Places::new(Os::Linux, &env, PathBuf::from("/p")).unwrap()
    }

    fn launch() -> Launch {
        Launch {
            program: "/opt/wb/mcp-workbench".into(),
            config: "/home/u/wb.json".into(),
        }
    }

    fn held(commands: &[&str]) -> HashSet<Identity> {
        commands
            .iter()
            .map(|c| Identity::Stdio {
                command: c.to_string(),
                args: Vec::new(),
                env: Vec::new(),
            })
            .collect()
    }

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
