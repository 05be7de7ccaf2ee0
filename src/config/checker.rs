//! The `Checker` that collects problems and warnings while a config is
//! walked, and the checks of one value (an object's keys, a string, a
//! template, a boolean, a timeout, a size), each reported at its JSON path.
//! Knows no config key but its own rules; the walk over the document is in
//! `validate` and `servers`.

use super::expand::{self, Template};
use super::model::MIN_RESULT_CHARS;
use super::ordered_json::Node;
use super::problems::Problem;
use super::suggest;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// Upper bound for configured timeouts: one day.
const MAX_TIMEOUT_MS: u64 = 86_400_000;
/// The largest `maxResultChars`.
const MAX_RESULT_CHARS: u64 = 1 << 40;

/// A valid toolbox or server name: 1 to 64 of `[A-Za-z0-9_-]`, without `__`.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        && !name.contains("__")
}

/// The path of `key` below `parent`, quoting keys that are not plain names.
pub(crate) fn child_path(parent: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    match (parent.is_empty(), plain) {
        (true, true) => key.to_string(),
        (false, true) => format!("{parent}.{key}"),
        (_, false) => format!("{parent}[{key:?}]"),
    }
}

pub(super) const NAME_RULE: &str =
    "name must be 1 to 64 characters of A-Z, a-z, 0-9, '_' and '-', without '__'";

/// Top-level keys under which other hosts list servers: Claude Desktop, Cursor
/// and Claude Code use `mcpServers`, VS Code `servers`.
pub(super) const SERVER_LISTS: &[&str] = &["mcpServers", "servers"];

pub(super) fn show(node: &Node) -> String {
    match node {
        Node::String(s) => format!("{s:?}"),
        other => other.kind().to_string(),
    }
}

#[derive(Default)]
pub(super) struct Checker {
    /// The absolute folder of the config file.
    pub(super) folder: PathBuf,
    /// The top level's `idleTimeoutMs`: the default of every server.
    pub(super) idle_timeout: Option<Duration>,
    /// The top level's `maxResultChars`: the default of every server.
    pub(super) max_result_chars: Option<usize>,
    pub(super) errors: Vec<Problem>,
    pub(super) warnings: Vec<Problem>,
}

impl Checker {
    pub(super) fn error(&mut self, path: &str, message: impl fmt::Display) {
        self.errors.push(Problem {
            path: path.to_string(),
            message: message.to_string(),
            near_miss: None,
        });
    }

    pub(super) fn warning(&mut self, path: String, message: impl fmt::Display) {
        self.warnings.push(Problem {
            path,
            message: message.to_string(),
            near_miss: None,
        });
    }

    /// The entries of an object; reports duplicates, keys outside `known`, and a
    /// non-object value.
    pub(super) fn object<'a>(
        &mut self,
        node: &'a Node,
        path: &str,
        known: &[&str],
    ) -> Option<&'a [(String, Node)]> {
        let Node::Object(entries) = node else {
            self.error(path, format!("expected an object, found {}", node.kind()));
            return None;
        };
        for (i, (key, _)) in entries.iter().enumerate() {
            if entries[..i].iter().any(|(k, _)| k == key) {
                self.error(&child_path(path, key), "duplicate key");
            } else if !known.is_empty() && !known.contains(&key.as_str()) {
                let close = suggest::closest(key, known);
                let hint = if path.is_empty() && SERVER_LISTS.contains(&key.as_str()) {
                    "; servers belong in a toolbox: toolboxes.NAME.mcpServers".to_string()
                } else if let Some(close) = close {
                    format!("; did you mean '{close}'?")
                } else {
                    format!(" (known keys: {})", known.join(", "))
                };
                self.warning(child_path(path, key), format!("unknown key ignored{hint}"));
                if let Some(warning) = self.warnings.last_mut() {
                    warning.near_miss = close.map(str::to_string);
                }
            }
        }
        Some(entries)
    }

    pub(super) fn string(&mut self, node: &Node, path: &str) -> Option<String> {
        match node {
            Node::String(s) => Some(s.clone()),
            other => {
                self.error(path, format!("expected a string, found {}", other.kind()));
                None
            }
        }
    }

    pub(super) fn template(&mut self, node: &Node, path: &str) -> Option<Template> {
        let text = self.string(node, path)?;
        match Template::parse(&text) {
            Ok(t) => Some(t),
            Err(e) => {
                self.error(path, e);
                None
            }
        }
    }

    /// A template that holds a path: `~user` is refused (only `~` is expanded).
    pub(super) fn path_template(&mut self, node: &Node, path: &str) -> Option<Template> {
        let template = self.template(node, path)?;
        match expand::unsupported_tilde(template.source()) {
            Some(problem) => {
                self.error(path, problem);
                None
            }
            None => Some(template),
        }
    }

    pub(super) fn boolean(&mut self, node: &Node, path: &str) -> bool {
        match node {
            Node::Bool(b) => *b,
            other => {
                self.error(
                    path,
                    format!("expected true or false, found {}", other.kind()),
                );
                false
            }
        }
    }

    pub(super) fn timeout(&mut self, node: &Node, path: &str, default: Duration) -> Duration {
        match node {
            Node::Number(n)
                if n.as_u64()
                    .is_some_and(|ms| (1..=MAX_TIMEOUT_MS).contains(&ms)) =>
            {
                Duration::from_millis(n.as_u64().unwrap_or_default())
            }
            other => {
                self.error(
                    path,
                    format!(
                        "expected a whole number of milliseconds from 1 to {MAX_TIMEOUT_MS}, found {}",
                        match other {
                            Node::Number(n) => n.to_string(),
                            _ => other.kind().to_string(),
                        }
                    ),
                );
                default
            }
        }
    }

    /// `idleTimeoutMs`: 0 is never, like an absent key.
    pub(super) fn idle_timeout(&mut self, node: &Node, path: &str) -> Option<Duration> {
        match node {
            Node::Number(n) if n.as_u64().is_some_and(|ms| ms <= MAX_TIMEOUT_MS) => {
                Some(Duration::from_millis(n.as_u64().unwrap_or_default())).filter(|d| !d.is_zero())
            }
            other => {
                self.error(
                    path,
                    format!(
                        "expected a whole number of milliseconds from 0 (never) to {MAX_TIMEOUT_MS}, found {}",
                        match other {
                            Node::Number(n) => n.to_string(),
                            _ => other.kind().to_string(),
                        }
                    ),
                );
                None
            }
        }
    }

    /// `maxResultChars`: a whole number from `MIN_RESULT_CHARS`.
    pub(super) fn result_chars(&mut self, node: &Node, path: &str) -> Option<usize> {
        match node {
            Node::Number(n)
                if n.as_u64()
                    .is_some_and(|v| (MIN_RESULT_CHARS..=MAX_RESULT_CHARS).contains(&v)) =>
            {
                n.as_u64().and_then(|v| usize::try_from(v).ok())
            }
            other => {
                self.error(
                    path,
                    format!(
                        "expected a whole number of characters from {MIN_RESULT_CHARS}, found {}",
                        match other {
                            Node::Number(n) => n.to_string(),
                            _ => other.kind().to_string(),
                        }
                    ),
                );
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(valid_name("dev-1_a"));
        assert!(!valid_name(""));
        assert!(!valid_name("a__b"));
        assert!(!valid_name("a.b"));
        assert!(!valid_name(&"x".repeat(65)));
        assert_eq!(child_path("toolboxes", "a b"), "toolboxes[\"a b\"]");
    }
}
