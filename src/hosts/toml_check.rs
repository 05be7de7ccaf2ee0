//! What the TOML subset (`toml`) and Codex's edits on it (`edit`, `undo`)
//! promise, checked on any text: the one check the toml-test suite's test
//! (`toml_suite`) and the fuzz target (`.fuzz/`, `toml`) run. A refusal is
//! always allowed; what parses must be edited exactly: every line that holds
//! a key is in that key's span, the install's output parses again with every
//! other value as it was, installing again changes nothing, and the undo
//! gives back the very bytes. Returns what broke; never panics, no IO.

use super::edit::{self, Launch, Take, ENTRY};
use super::host::Host;
use super::paths::{Os, Places};
use super::toml::{self, Document, Value};
use super::undo;
use std::collections::HashSet;
use std::ffi::OsString;
use std::path::PathBuf;

/// The first property `text` breaks, if any.
pub(crate) fn check(text: &str) -> Result<(), String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let doc = match toml::parse(text) {
        Ok(doc) => doc,
        Err(e) if e.line >= 1 && e.line <= lines.len() + 1 => return Ok(()),
        Err(e) => return Err(format!("refused on a line the text does not have: {e}")),
    };
    spans(&doc, &lines)?;
    let launch = Launch {
        program: "/opt/mcp-workbench".to_string(),
        config: "/home/u/workbench config.json".to_string(),
    };
    let env = |name: &str| (name == "HOME").then(|| OsString::from("/home/u"));
    let places = Places::new(Os::Linux, &env, PathBuf::from("/home/u"))?;
    let install = |text: &str| {
        edit::edit(
            Host::Codex,
            Some(text),
            &launch,
            &HashSet::new(),
            Take::default(),
            &places,
        )
    };
    let installed = match install(text) {
        Ok(edited) => edited.text,
        Err(e) if e.contains("internal error") => return Err(format!("install: {e}")),
        // Refused with its reason (an inline `mcp_servers`, say): nothing written.
        Err(_) => return Ok(()),
    };
    let after = toml::parse(&installed).map_err(|e| format!("the install's output: {e}"))?;
    same_besides_entry(&doc, &after)?;
    let again = install(&installed).map_err(|e| format!("installing again: {e}"))?;
    if again.text != installed {
        return Err(format!(
            "installing again changed the file:\n{installed:?}\n{:?}",
            again.text
        ));
    }
    let back = undo::undo(Host::Codex, &installed, text, &launch, None, &places)
        .map_err(|e| format!("undo: {e}"))?;
    if back.text != text {
        return Err(format!(
            "the undo did not give the bytes back:\n{text:?}\n{:?}",
            back.text
        ));
    }
    Ok(())
}

/// Every key's lines are within the text, after the previous key's, and
/// within its header's; a line outside every key and header is blank or a
/// comment, so taking a span's lines out takes out what it holds and
/// nothing else.
fn spans(doc: &Document, lines: &[&str]) -> Result<(), String> {
    let mut covered = vec![false; lines.len()];
    let mut next = 0;
    for span in &doc.spans {
        let (start, end) = (span.lines.start, span.lines.end);
        if start >= end || end > lines.len() {
            return Err(format!("span {span:?} is not within the text's lines"));
        }
        if span.header {
            covered[start] = true;
            continue;
        }
        if start < next {
            return Err(format!("span {span:?} overlaps the key before it"));
        }
        next = end;
        // The header in force: the last one above the key.
        let header = doc
            .spans
            .iter()
            .filter(|h| h.header && h.lines.start < start)
            .max_by_key(|h| h.lines.start);
        if header.is_some_and(|h| !span.path.starts_with(&h.path) || end > h.lines.end) {
            return Err(format!("span {span:?} is not within its table's"));
        }
        for line in &mut covered[start..end] {
            *line = true;
        }
    }
    for (i, line) in lines.iter().enumerate() {
        let bare = line.trim_start_matches([' ', '\t']);
        let blank = bare.is_empty() || bare.starts_with(['#', '\n', '\r']);
        if !covered[i] && !blank {
            return Err(format!("line {} is in no span: {line:?}", i + 1));
        }
    }
    Ok(())
}

/// The values of `before` and `after` are the same, but the workbench's
/// entry.
fn same_besides_entry(before: &Document, after: &Document) -> Result<(), String> {
    let without = |doc: &Document| {
        let mut root = doc.root.clone();
        let mut emptied = false;
        for (key, value) in &mut root.entries {
            if let (true, Value::Table(servers)) = (key == "mcp_servers", value) {
                servers.entries.retain(|(name, _)| name != ENTRY);
                emptied = servers.entries.is_empty();
            }
        }
        if emptied {
            root.entries.retain(|(key, _)| key != "mcp_servers");
        }
        // Debug, so that a NaN equals itself.
        format!("{root:?}")
    };
    if without(before) != without(after) {
        return Err("the install changed a value besides its own entry".to_string());
    }
    Ok(())
}
