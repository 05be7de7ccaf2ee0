//! `install --undo` on Codex's `config.toml`, line by line (`undo` says
//! what is reversed): the `[mcp_servers.workbench]` tables the install
//! wrote go (with the blank line the install put before them at the end of
//! the file), the backup's own are put back where they were, and the
//! servers taken out come back from the backup before the table that
//! followed them there, or at the end. Every other line stays. No IO.

use super::codex;
use super::edit::ENTRY;
use super::entry::Identity;
use super::toml::{self, Document, Span, Value};
use super::undo::{Entry, Undone};
use std::collections::{BTreeMap, HashSet};

/// The servers' tables of `doc`, in the file's order.
fn servers(doc: &Document) -> Vec<(String, Value)> {
    match doc.root.get("mcp_servers") {
        Some(Value::Table(t)) => t.entries.clone(),
        _ => Vec::new(),
    }
}

fn under(span: &Span, name: &str) -> bool {
    span.path.len() >= 2 && span.path[0] == "mcp_servers" && span.path[1] == name
}

/// The lines of `lines` that the tables and keys of server `name` take,
/// a table with the blank lines after it, in order.
fn lines_of(doc: &Document, lines: &[&str], name: &str) -> Vec<usize> {
    let mut taken = Vec::new();
    for span in doc.spans.iter().filter(|s| under(s, name)) {
        let mut end = span.lines.end;
        if span.header {
            while lines.get(end).is_some_and(|l| l.trim().is_empty()) {
                end += 1;
            }
        }
        taken.extend(span.lines.start..end);
    }
    taken.sort_unstable();
    taken.dedup();
    taken
}

fn parse(text: &str, what: &str) -> Result<Document, String> {
    toml::parse(text).map_err(|e| format!("{what} is not TOML the workbench can edit: {e}"))
}

/// `text` (Codex's file now) with the install reversed; `installed` is
/// what the install writes from `backup`.
pub(crate) fn undo(
    text: &str,
    backup: &str,
    installed: &str,
    held: Option<&HashSet<Identity>>,
) -> Result<Undone, String> {
    let now = parse(text, "it")?;
    let before = parse(backup, "its backup")?;
    let expected = parse(installed, "the installed text")?;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let old_lines: Vec<&str> = backup.split_inclusive('\n').collect();
    let find = |list: &[(String, Value)], name: &str| {
        list.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
    };
    let (here, old) = (servers(&now), servers(&before));
    // Lines taken out, and lines put before a line (or at the end).
    let mut gone = vec![false; lines.len()];
    let mut before_line: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    let wb = lines_of(&now, &lines, ENTRY);
    let entry = match (find(&here, ENTRY), find(&old, ENTRY)) {
        (None, _) => Entry::Missing,
        (Some(current), _) if Some(&current) != find(&servers(&expected), ENTRY).as_ref() => {
            Entry::Changed
        }
        (Some(_), own) => {
            for &i in &wb {
                gone[i] = true;
            }
            let restored =
                own.is_some_and(|own| Some(&own) != find(&servers(&expected), ENTRY).as_ref());
            if restored {
                let first = wb.first().copied().unwrap_or(lines.len());
                let back = lines_of(&before, &old_lines, ENTRY)
                    .into_iter()
                    .map(|i| old_lines[i].to_string());
                before_line.entry(first).or_default().extend(back);
                Entry::Restored
            } else {
                // At the end of the file: the blank line the install put
                // before it goes too (one, where the backup ended without).
                let last = wb.last().copied().unwrap_or(0);
                let first = wb.first().copied().unwrap_or(0);
                if lines[last + 1..].iter().all(|l| l.trim().is_empty())
                    && first > 0
                    && lines[first - 1].trim().is_empty()
                    && blank_put_before(backup, &before)
                {
                    gone[first - 1] = true;
                }
                Entry::Removed
            }
        }
    };
    let mut put_back = Vec::new();
    let mut left = Vec::new();
    let mut tail: Vec<String> = Vec::new();
    for (name, value) in &old {
        if name == ENTRY {
            continue;
        }
        let identity = match value {
            Value::Table(t) => codex::map(t).ok().map(|m| m.entry.identity()),
            _ => None,
        };
        if !held.is_none_or(|held| identity.is_some_and(|i| held.contains(&i))) {
            continue;
        }
        let path = super::found::child_path("mcp_servers", name);
        match find(&here, name) {
            Some(same) if &same == value => continue,
            Some(_) => {
                left.push((path, "a server of that name was added since".into()));
                continue;
            }
            None => {}
        }
        let taken = lines_of(&before, &old_lines, name);
        for block in blocks(&taken) {
            let text: Vec<String> = block.clone().map(|i| old_lines[i].to_string()).collect();
            match anchor(&before, &old_lines, &now, &lines, block.end, name) {
                Some(at) => before_line.entry(at).or_default().extend(text),
                None => tail.extend(text),
            }
        }
        put_back.push(path);
    }
    let mut out = String::new();
    let push = |out: &mut String, line: &str| {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push_str(newline_of(text));
        }
        out.push_str(line);
    };
    for (i, line) in lines.iter().enumerate() {
        for inserted in before_line.get(&i).into_iter().flatten() {
            push(&mut out, inserted);
        }
        if !gone[i] {
            push(&mut out, line);
        }
    }
    for inserted in before_line.range(lines.len()..).flat_map(|(_, l)| l) {
        push(&mut out, inserted);
    }
    if let Some(first) = tail.first() {
        let header = first.trim_start().starts_with('[');
        let blank = out.is_empty() || out.ends_with(&format!("{0}{0}", newline_of(text)));
        if header && !blank {
            let ended = out.ends_with('\n');
            push(&mut out, if ended { newline_of(text) } else { "" });
        }
        for line in &tail {
            push(&mut out, line);
        }
    }
    if !text.is_empty() && !text.ends_with('\n') {
        if let Some(cut) = out.strip_suffix(newline_of(text)) {
            out = cut.to_string();
        }
    }
    parse(&out, "internal error: the reversed text")?;
    Ok(Undone {
        text: out,
        entry,
        put_back,
        left,
    })
}

/// Whether the install put a blank line before the table it appended to
/// `backup` (`edit`): when the backup had no table of its own, and did not
/// end with a blank line already.
fn blank_put_before(backup: &str, before: &Document) -> bool {
    let newline = newline_of(backup);
    let mut ended = backup.to_string();
    if !ended.is_empty() && !ended.ends_with('\n') {
        ended.push_str(newline);
    }
    let own = servers(before).iter().any(|(name, _)| name == ENTRY);
    !own && !ended.is_empty() && !ended.ends_with(&format!("{newline}{newline}"))
}

fn newline_of(text: &str) -> &'static str {
    if text.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    }
}

/// Runs of consecutive line numbers.
fn blocks(taken: &[usize]) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    for &i in taken {
        match out.last_mut() {
            Some(last) if last.end == i => last.end = i + 1,
            _ => out.push(i..i + 1),
        }
    }
    out
}

/// The line of `now` before which the backup's lines ending at `end` go:
/// the first table or key after them in the backup that is still in `now`
/// (above the comment lines that preceded it in both), if any.
fn anchor(
    before: &Document,
    old_lines: &[&str],
    now: &Document,
    lines: &[&str],
    end: usize,
    name: &str,
) -> Option<usize> {
    let mut later: Vec<&Span> = before
        .spans
        .iter()
        .filter(|s| s.lines.start >= end && !under(s, name))
        .collect();
    later.sort_by_key(|s| s.lines.start);
    for span in later {
        let Some(there) = now
            .spans
            .iter()
            .find(|s| s.path == span.path && s.header == span.header)
        else {
            continue;
        };
        let at = there.lines.start;
        let k = span.lines.start - end;
        let same = at >= k && old_lines[end..span.lines.start] == lines[at - k..at];
        return Some(if same { at - k } else { at });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "model = \"o3\" # mine\n\n[mcp_servers.a]\ncommand = \"moved\"\n\n# about b\n[mcp_servers.b]\ncommand = \"stays\"\n\n[mcp_servers.c]\ncommand = \"also\"\n";
    const INSTALLED: &str = "model = \"o3\" # mine\n\n# about b\n[mcp_servers.b]\ncommand = \"stays\"\n\n[mcp_servers.workbench]\ncommand = \"wb\"\nargs = [\"--config\", \"c\"]\n";

    fn held() -> HashSet<Identity> {
        ["moved", "also"]
            .iter()
            .map(|c| Identity::Stdio {
                command: c.to_string(),
                args: Vec::new(),
                env: Vec::new(),
            })
            .collect()
    }

    #[test]
    fn the_install_is_reversed_line_by_line() {
        let back = undo(INSTALLED, BEFORE, INSTALLED, Some(&held())).unwrap();
        assert_eq!(back.text, BEFORE);
        assert_eq!(back.entry, Entry::Removed);
        assert_eq!(back.put_back, ["mcp_servers.a", "mcp_servers.c"]);
        // Codex changed its model since, and the user added a server: kept.
        let since = INSTALLED.replace("\"o3\"", "\"o4\"").replace(
            "# about b",
            "[mcp_servers.d]\ncommand = \"mine\"\n\n# about b",
        );
        let back = undo(&since, BEFORE, INSTALLED, Some(&held())).unwrap();
        // (`a` goes back before what followed it, `b` with its comment.)
        assert_eq!(
            back.text,
            "model = \"o4\" # mine\n\n[mcp_servers.d]\ncommand = \"mine\"\n\n[mcp_servers.a]\ncommand = \"moved\"\n\n# about b\n[mcp_servers.b]\ncommand = \"stays\"\n\n[mcp_servers.c]\ncommand = \"also\"\n"
        );
        // An edited workbench table stays, and is said.
        let edited = INSTALLED.replace("command = \"wb\"", "command = \"other\"");
        let back = undo(&edited, BEFORE, INSTALLED, Some(&held())).unwrap();
        assert_eq!(back.entry, Entry::Changed);
        assert!(back
            .text
            .contains("[mcp_servers.workbench]\ncommand = \"other\""));
    }
}
