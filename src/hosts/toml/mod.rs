//! The subset of TOML that Codex's `config.toml` is written in, read by hand:
//! tables (`[a.b]`, `[a."b c"]`), dotted and quoted keys, and values that are
//! strings (basic and literal, one line or several, with escapes), integers,
//! floats, booleans, arrays of those and inline tables; comments anywhere a
//! line may end; TOML 1.1's inline tables over several lines with a comma
//! after the last pair. What it does not understand (arrays of tables
//! `[[x]]`, dates and times) and what TOML forbids (a key or table defined
//! twice, an inline table extended by a header or a dotted key) is refused
//! with its line number, never guessed at: the toml-test suite's cases
//! within the subset are its test (`hosts::toml_suite`). Beside the values it records on which lines each table
//! and each key sits, so `install` can replace or remove one table and leave
//! every other byte of the file as it was. Also the one emitter the workbench
//! needs: a table of strings and arrays of strings.
//!
//! `parse` reads; the types, the key and string writers and the emitter
//! are here.
//!
//! Why not the `toml` crate: docs/decisions.md, "A TOML subset by hand".

mod parse;

pub(crate) use parse::parse;

use std::ops::Range;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    String(String),
    Integer(i64),
    Float(f64),
    Bool(bool),
    Array(Vec<Value>),
    Table(Table),
}

/// A table's entries, in the order of the file.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Table {
    pub entries: Vec<(String, Value)>,
}

impl Table {
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    fn slot(&mut self, key: &str) -> Option<&mut Value> {
        self.entries
            .iter_mut()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }
}

impl Value {
    /// A short name of the type, for messages.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Value::String(_) => "a string",
            Value::Integer(_) => "an integer",
            Value::Float(_) => "a float",
            Value::Bool(_) => "a boolean",
            Value::Array(_) => "an array",
            Value::Table(_) => "a table",
        }
    }
}

/// Where something was written: the lines (0-based, end exclusive) of a
/// `[table]` header and its keys, or of one `key = value`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Span {
    /// The full key path: a header's table, or a key's table and key.
    pub path: Vec<String>,
    /// A `[header]` (with the keys under it) rather than one key.
    pub header: bool,
    pub lines: Range<usize>,
}

/// A parsed file: its values and where each table and key sits.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Document {
    pub root: Table,
    pub spans: Vec<Span>,
}

/// What the parser refused, and on which line (1-based).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Error {
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// A key path as TOML writes it.
pub(crate) fn show_path(path: &[String]) -> String {
    path.iter().map(|p| key(p)).collect::<Vec<_>>().join(".")
}

pub(crate) fn key(text: &str) -> String {
    let bare = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        text.to_string()
    } else {
        basic_string(text)
    }
}

/// `text` as a TOML basic string, escaped.
pub(crate) fn basic_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// One entry of an emitted table: a string or an array of strings.
pub(crate) enum Emit<'a> {
    String(&'a str),
    Strings(&'a [String]),
}

/// `[path]` and its `key = value` lines, each line ending in `newline`.
pub(crate) fn emit_table(path: &[String], entries: &[(&str, Emit<'_>)], newline: &str) -> String {
    let mut out = format!("[{}]{newline}", show_path(path));
    for (name, value) in entries {
        let value = match value {
            Emit::String(text) => basic_string(text),
            Emit::Strings(items) => format!(
                "[{}]",
                items
                    .iter()
                    .map(|s| basic_string(s))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        out.push_str(&format!("{} = {value}{newline}", key(name)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table<'a>(doc: &'a Document, path: &[&str]) -> &'a Table {
        let mut t = &doc.root;
        for part in path {
            match t.get(part) {
                Some(Value::Table(inner)) => t = inner,
                other => panic!("{part}: {other:?}"),
            }
        }
        t
    }

    #[test]
    fn emits_a_table_that_reads_back() {
        let args = vec![
            "--config".to_string(),
            r#"C:\Users\me "x"\wb.json"#.to_string(),
        ];
        let text = emit_table(
            &["mcp_servers".into(), "work bench".into()],
            &[
                ("command", Emit::String("/opt/mcp-workbench")),
                ("args", Emit::Strings(&args)),
            ],
            "\n",
        );
        assert_eq!(
            text,
            "[mcp_servers.\"work bench\"]\ncommand = \"/opt/mcp-workbench\"\nargs = [\"--config\", \"C:\\\\Users\\\\me \\\"x\\\"\\\\wb.json\"]\n"
        );
        let doc = parse(&text).unwrap();
        let t = table(&doc, &["mcp_servers", "work bench"]);
        assert_eq!(
            t.get("args"),
            Some(&Value::Array(args.into_iter().map(Value::String).collect()))
        );
    }
}
