//! `install --undo` on Codex's `config.toml`, line by line (`undo` says
//! what is reversed): the `[mcp_servers.workbench]` tables the install
//! wrote go (with the blank line the install put before them at the end of
//! the file), the backup's own are put back where they were, and the
//! servers taken out come back from the backup before the table that
//! followed them there, or at the end. Every other line stays. No IO.

use super::codex;
use super::edit::ENTRY;
use super::entry::Identity;
use super::files::newline_of;
use super::found::child_path;
use super::toml::{self, Document, Span, Value};
use super::undone::{held_by, missing, Entry, Undone};
use std::collections::{BTreeMap, HashSet};

/// The servers' tables of `doc`, in the file's order.
fn servers(doc: &Document) -> Vec<(String, Value)> {
    match doc.root.get("mcp_servers") {
        Some(Value::Table(t)) => t.entries.clone(),
        _ => Vec::new(),
    }
}

/// The table of server `name` in `list`.
fn find(list: &[(String, Value)], name: &str) -> Option<Value> {
    list.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
}

/// The lines of `lines` that the tables and keys of server `name` take,
/// a table with the blank lines after it, in order.
fn lines_of(doc: &Document, lines: &[&str], name: &str) -> Vec<usize> {
    let mut taken = Vec::new();
    for span in doc.spans.iter().filter(|s| codex::under(&s.path, name)) {
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

/// A TOML text parsed, and its lines (each with its line end).
struct File<'a> {
    doc: Document,
    lines: Vec<&'a str>,
}

impl<'a> File<'a> {
    /// `text` parsed; the error names it as `what`.
    fn parse(text: &'a str, what: &str) -> Result<File<'a>, String> {
        Ok(File {
            doc: parse(text, what)?,
            lines: text.split_inclusive('\n').collect(),
        })
    }

    /// The lines of server `name`'s tables and keys (`lines_of`).
    fn lines_of(&self, name: &str) -> Vec<usize> {
        lines_of(&self.doc, &self.lines, name)
    }
}

/// `text` (Codex's file now) with the install reversed; `installed` is
/// what the install writes from `backup`.
pub(crate) fn undo(
    text: &str,
    backup: &str,
    installed: &str,
    held: Option<&HashSet<Identity>>,
) -> Result<Undone, String> {
    let now = File::parse(text, "it")?;
    let before = File::parse(backup, "its backup")?;
    let expected = parse(installed, "the installed text")?;
    let entry = Entry::judge(
        find(&servers(&now.doc), ENTRY).as_ref(),
        find(&servers(&before.doc), ENTRY).as_ref(),
        find(&servers(&expected), ENTRY).as_ref(),
    );
    let mut edit = LineEdit::new(now.lines.len());
    edit.reverse_entry(&entry, &now, &before, backup);
    let mut left = Vec::new();
    let put_back = edit.put_back_servers(&now, &before, held, &mut left);
    let out = edit.apply(&now.lines, text);
    parse(&out, "internal error: the reversed text")?;
    Ok(Undone {
        text: out,
        entry,
        put_back,
        left,
    })
}

/// The reversal as a change of the file's lines: those taken out, those
/// put before a line (or at the end), and those appended after a blank
/// line.
struct LineEdit {
    gone: Vec<bool>,
    before_line: BTreeMap<usize, Vec<String>>,
    tail: Vec<String>,
}

impl LineEdit {
    /// No change yet to a file of `count` lines.
    fn new(count: usize) -> LineEdit {
        LineEdit {
            gone: vec![false; count],
            before_line: BTreeMap::new(),
            tail: Vec::new(),
        }
    }

    /// Takes the workbench's tables out of `now` as `entry` says, putting
    /// the backup's own back in their place (`Restored`); when the install
    /// had appended them, the blank line it put before them goes too.
    fn reverse_entry(&mut self, entry: &Entry, now: &File<'_>, before: &File<'_>, backup: &str) {
        if !matches!(entry, Entry::Removed | Entry::Restored) {
            return;
        }
        let lines = &now.lines;
        let wb = now.lines_of(ENTRY);
        for &i in &wb {
            self.gone[i] = true;
        }
        if *entry == Entry::Restored {
            let first = wb.first().copied().unwrap_or(lines.len());
            let back = before
                .lines_of(ENTRY)
                .into_iter()
                .map(|i| before.lines[i].to_string());
            self.before_line.entry(first).or_default().extend(back);
            return;
        }
        // At the end of the file: the blank line the install put before it
        // goes too (one, where the backup ended without).
        let last = wb.last().copied().unwrap_or(0);
        let first = wb.first().copied().unwrap_or(0);
        if lines[last + 1..].iter().all(|l| l.trim().is_empty())
            && first > 0
            && lines[first - 1].trim().is_empty()
            && blank_put_before(backup, &before.doc)
        {
            self.gone[first - 1] = true;
        }
    }

    /// Puts back the backup's servers missing from `now` that `held`
    /// allows, each block of their lines before what followed it in the
    /// backup, else at the end; their paths. Those that cannot be go to
    /// `left`.
    fn put_back_servers(
        &mut self,
        now: &File<'_>,
        before: &File<'_>,
        held: Option<&HashSet<Identity>>,
        left: &mut Vec<(String, String)>,
    ) -> Vec<String> {
        let (here, old) = (servers(&now.doc), servers(&before.doc));
        let may_go_back = |value: &Value| held_by(held, codex::identity(value));
        let shown = |name: &str| child_path("mcp_servers", name);
        let mut put_back = Vec::new();
        for (name, _) in missing(&old, &here, may_go_back, shown, left) {
            for block in blocks(&before.lines_of(name)) {
                let text: Vec<String> =
                    block.clone().map(|i| before.lines[i].to_string()).collect();
                match anchor(before, now, block.end, name) {
                    Some(at) => self.before_line.entry(at).or_default().extend(text),
                    None => self.tail.extend(text),
                }
            }
            put_back.push(shown(name));
        }
        put_back
    }

    /// `lines` (of `text`) with the change made, in `text`'s line ends; a
    /// `text` without a final newline stays without one.
    fn apply(self, lines: &[&str], text: &str) -> String {
        let newline = newline_of(text);
        let mut out = String::new();
        for (i, line) in lines.iter().enumerate() {
            for inserted in self.before_line.get(&i).into_iter().flatten() {
                push_line(&mut out, inserted, newline);
            }
            if !self.gone[i] {
                push_line(&mut out, line, newline);
            }
        }
        for inserted in self.before_line.range(lines.len()..).flat_map(|(_, l)| l) {
            push_line(&mut out, inserted, newline);
        }
        if let Some(first) = self.tail.first() {
            let header = first.trim_start().starts_with('[');
            let blank = out.is_empty() || out.ends_with(&format!("{0}{0}", newline));
            if header && !blank {
                let ended = out.ends_with('\n');
                push_line(&mut out, if ended { newline } else { "" }, newline);
            }
            for line in &self.tail {
                push_line(&mut out, line, newline);
            }
        }
        if !text.is_empty() && !text.ends_with('\n') {
            if let Some(cut) = out.strip_suffix(newline) {
                out = cut.to_string();
            }
        }
        out
    }
}

/// Adds `line` to `out`, ending the line before it with `newline` when it
/// was unended.
fn push_line(out: &mut String, line: &str, newline: &str) {
    if !out.is_empty() && !out.ends_with('\n') {
        out.push_str(newline);
    }
    out.push_str(line);
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
fn anchor(before: &File<'_>, now: &File<'_>, end: usize, name: &str) -> Option<usize> {
    let mut later: Vec<&Span> = before
        .doc
        .spans
        .iter()
        .filter(|s| s.lines.start >= end && !codex::under(&s.path, name))
        .collect();
    later.sort_by_key(|s| s.lines.start);
    for span in later {
        let Some(there) = now
            .doc
            .spans
            .iter()
            .find(|s| s.path == span.path && s.header == span.header)
        else {
            continue;
        };
        let at = there.lines.start;
        let k = span.lines.start - end;
        let same = at >= k && before.lines[end..span.lines.start] == now.lines[at - k..at];
        return Some(if same { at - k } else { at });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosts::fixtures;

    const BEFORE: &str = "model = \"o3\" # mine\n\n[mcp_servers.a]\ncommand = \"moved\"\n\n# about b\n[mcp_servers.b]\ncommand = \"stays\"\n\n[mcp_servers.c]\ncommand = \"also\"\n";
    const INSTALLED: &str = "model = \"o3\" # mine\n\n# about b\n[mcp_servers.b]\ncommand = \"stays\"\n\n[mcp_servers.workbench]\ncommand = \"wb\"\nargs = [\"--config\", \"c\"]\n";

    fn held() -> HashSet<Identity> {
        fixtures::held(&["moved", "also"])
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
