//! A compact table of the concepts tools deal in, each with the words people
//! and tool authors use for it: a person asks for a "folder", the tool says
//! "directory"; "picture" against "screenshot", "remember" against "memory".
//! Both a query and a tool's text map their words to concept tokens, so the
//! two meet even when they share no word. A concept match counts for less
//! than a word match (`rank`).
//!
//! No IO. Words are written as people write them; they are stemmed when the
//! table is first used, the way every other word is. Two-word phrases (`web
//! page`) are matched on adjacent words.

use super::words::stem;
use std::collections::HashMap;
use std::sync::OnceLock;

/// One group per concept. A word may be in several groups.
const GROUPS: &[&[&str]] = &[
    &["folder", "directory", "dir", "subdirectory", "subfolder"],
    &["file", "document", "path"],
    &[
        "picture",
        "image",
        "photo",
        "screenshot",
        "snapshot",
        "png",
        "jpeg",
        "jpg",
        "screen",
    ],
    &[
        "remember",
        "memory",
        "memorize",
        "recall",
        "knowledge",
        "note",
    ],
    &[
        "forget", "delete", "remove", "erase", "drop", "purge", "discard", "clear", "unset",
    ],
    &[
        "web page", "webpage", "url", "website", "page", "site", "link", "http", "internet",
        "online", "web",
    ],
    &["browse", "navigate", "visit", "go to", "open"],
    &["download", "fetch", "retrieve", "grab", "pull"],
    &[
        "search", "find", "look up", "lookup", "locate", "query", "seek", "grep",
    ],
    &[
        "read", "view", "show", "display", "print", "cat", "content", "contents",
    ],
    &["write", "save", "store", "persist", "put", "overwrite"],
    &[
        "create",
        "make",
        "new",
        "add",
        "generate",
        "initialize",
        "init",
        "start",
    ],
    &[
        "edit", "modify", "change", "update", "patch", "replace", "alter", "amend",
    ],
    &["list", "enumerate", "ls", "all", "every", "index"],
    &["move", "rename", "mv", "relocate"],
    &["copy", "duplicate", "clone", "cp"],
    &[
        "run", "execute", "exec", "launch", "invoke", "command", "shell", "terminal", "script",
    ],
    &["issue", "ticket", "bug", "problem"],
    &[
        "pull request",
        "pr",
        "merge request",
        "mr",
        "review",
        "approve",
        "approval",
    ],
    &["commit", "changeset", "revision", "history", "log"],
    &["repository", "repo", "project", "codebase"],
    &["branch", "checkout", "switch"],
    &["message", "chat", "post", "send", "reply", "dm", "channel"],
    &["email", "mail", "inbox"],
    &["calendar", "event", "meeting", "appointment", "schedule"],
    &["time", "clock", "hour", "date", "now", "current", "today"],
    &["timezone", "time zone", "tz", "convert"],
    &["weather", "forecast", "temperature"],
    &[
        "database", "db", "sql", "table", "row", "record", "postgres", "sqlite",
    ],
    &["click", "press", "tap", "button"],
    &["type", "enter", "fill", "input", "keyboard", "key", "form"],
    &["hover", "mouse", "drag", "drop", "pointer"],
    &["wait", "pause", "sleep", "delay"],
    &["tab", "window"],
    &["browser", "playwright", "puppeteer", "chrome"],
    &[
        "console", "log", "output", "stdout", "stderr", "error", "devtools",
    ],
    &["entity", "node", "object", "item", "thing"],
    &[
        "relation",
        "relationship",
        "edge",
        "connection",
        "link",
        "connect",
    ],
    &["observation", "fact", "detail", "note", "attribute"],
    &[
        "think",
        "thought",
        "reason",
        "reasoning",
        "plan",
        "step",
        "reflect",
        "analyze",
    ],
    &[
        "math",
        "calculate",
        "compute",
        "sum",
        "add",
        "arithmetic",
        "number",
        "plus",
        "total",
    ],
    &[
        "size",
        "metadata",
        "info",
        "information",
        "stat",
        "stats",
        "properties",
        "detail",
        "attribute",
    ],
    &["tree", "hierarchy", "structure", "recursive", "nested"],
    &["diff", "difference", "compare", "changes"],
    &["close", "quit", "exit", "shut", "end", "stop", "kill"],
    &[
        "map",
        "location",
        "place",
        "address",
        "geocode",
        "coordinates",
        "latitude",
        "longitude",
    ],
    &[
        "direction",
        "route",
        "distance",
        "travel",
        "navigation",
        "far",
        "how far",
        "drive",
        "trip",
    ],
    &["altitude", "elevation", "height above"],
    &["version control", "git", "vcs", "commit", "repository"],
    &["upload", "push", "publish"],
    &[
        "user", "account", "profile", "person", "people", "member", "owner",
    ],
    &[
        "summary",
        "summarize",
        "overview",
        "describe",
        "description",
    ],
    &[
        "documentation",
        "docs",
        "doc",
        "manual",
        "reference",
        "library",
        "api",
    ],
    &["resize", "viewport", "dimension", "width", "height"],
    &["upload", "attach", "attachment"],
    &["select", "choose", "option", "dropdown", "pick"],
    &["evaluate", "javascript", "js", "script", "code"],
    &["network", "request", "response", "traffic"],
    &["pdf", "print"],
    &["comment", "annotate", "remark"],
    &["label", "tag", "category"],
    &["star", "favorite", "bookmark"],
    &["fork", "copy"],
    &["status", "state", "health", "check"],
    &[
        "environment",
        "env",
        "variable",
        "config",
        "configuration",
        "setting",
    ],
    &["sample", "sampling", "llm", "model", "completion"],
    &["echo", "repeat", "back"],
    &["long", "slow", "progress"],
    &["stage", "add", "staging", "unstage", "reset"],
    &["allowed", "permission", "access", "permitted"],
    &["head", "first", "beginning", "top"],
    &["tail", "last", "end", "bottom"],
    &["notion", "wiki", "workspace"],
    &["block", "paragraph", "section"],
    &["property", "field", "column"],
    &["team", "group", "organization", "org"],
];

/// Stemmed word → the concepts it belongs to; and stemmed two-word phrase
/// (`"web page"`) → its concepts.
struct Table {
    words: HashMap<String, Vec<u16>>,
    phrases: HashMap<(String, String), Vec<u16>>,
}

#[allow(clippy::expect_used, reason = "fewer than 65536 concepts")]
fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut words: HashMap<String, Vec<u16>> = HashMap::new();
        let mut phrases: HashMap<(String, String), Vec<u16>> = HashMap::new();
        for (concept, group) in GROUPS.iter().enumerate() {
            let concept = u16::try_from(concept).expect("fewer than 65536 concepts");
            for entry in *group {
                let parts: Vec<String> = entry.split(' ').map(stem).collect();
                let list = match parts.as_slice() {
                    [one] => words.entry(one.clone()).or_default(),
                    [a, b] => phrases.entry((a.clone(), b.clone())).or_default(),
                    _ => continue,
                };
                if !list.contains(&concept) {
                    list.push(concept);
                }
            }
        }
        Table { words, phrases }
    })
}

/// The concepts of stemmed word `word`; a number (`2`, `42`) means numbers.
pub(crate) fn of_word(word: &str) -> &'static [u16] {
    let word = if !word.is_empty() && word.bytes().all(|b| b.is_ascii_digit()) {
        "number"
    } else {
        word
    };
    table().words.get(word).map_or(&[], Vec::as_slice)
}

/// The concepts of the stemmed two-word phrase `first second`.
pub(crate) fn of_phrase(first: &str, second: &str) -> &'static [u16] {
    table()
        .phrases
        .get(&(first.to_string(), second.to_string()))
        .map_or(&[], Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_their_forms_meet_in_a_concept() {
        let shared = |a: &str, b: &str| {
            of_word(&stem(a))
                .iter()
                .any(|c| of_word(&stem(b)).contains(c))
        };
        assert!(shared("folder", "directories"));
        assert!(shared("picture", "screenshot"));
        assert!(shared("remember", "memory"));
        assert!(shared("forget", "deleting"));
        assert!(!shared("folder", "weather"));
        let page = of_phrase(&stem("web"), &stem("pages"));
        assert!(page.iter().any(|c| of_word("url").contains(c)));
    }

    #[test]
    fn every_entry_is_one_or_two_lowercase_words() {
        for group in GROUPS {
            for entry in *group {
                let n = entry.split(' ').count();
                assert!((1..=2).contains(&n), "{entry}");
                assert_eq!(entry.to_lowercase(), *entry);
            }
        }
    }
}
