//! Names of dynamic-mode native tools: `{toolbox}__{server}_{tool}` (docs/reference.md §6),
//! made safe for every common host: `^[A-Za-z0-9_-]{1,64}$` (Claude Desktop's
//! rule, the strictest in use; MCP 2025-11-25, server/tools, "Tool Names",
//! allows more), and short enough to stay under 64 after the host's own
//! prefix. Claude Code calls a tool `mcp__<server key>__<tool>` and does not
//! shorten it, so with the key `workbench` 16 characters are taken: the
//! default budget is 48 (`dynamicNameMaxLength` in the config changes it).
//!
//! A name that is already safe and within the budget is used as it is.
//! Otherwise every other character becomes `_`, and the name gets a hash
//! suffix of its original text; to fit the budget the toolbox and server part
//! is cut first, so the start of the tool's own name stays readable. The same input always gives the same name;
//! distinct inputs get distinct names (`unique_names` settles the astronomically
//! rare hash collision deterministically). Calls are routed by a lookup table,
//! never by taking a name apart. No IO here.

use std::collections::HashSet;

use crate::config::{NATIVE_NAME_MAX_LEN as MAX_LEN, NATIVE_NAME_MIN_LEN as MIN_LEN};
use crate::fnv1a;
/// `_` plus 8 hex digits.
const SUFFIX_LEN: usize = 9;

/// The safe native name of one downstream tool, at most `max_len`
/// characters (`MIN_LEN..=MAX_LEN`; values outside are clamped).
pub(crate) fn native_name(toolbox: &str, server: &str, tool: &str, max_len: usize) -> String {
    let max_len = max_len.clamp(MIN_LEN, MAX_LEN);
    let raw = format!("{toolbox}__{server}_{tool}");
    if raw.len() <= max_len && raw.bytes().all(safe) {
        return raw;
    }
    with_suffix(toolbox, server, tool, fnv1a(raw.as_bytes()), max_len)
}

/// Names for every `(toolbox, server, tool)`, in order; a clash (only possible
/// through a hash collision) is settled by rehashing the later entry.
pub(crate) fn unique_names<'a>(
    tools: impl Iterator<Item = (&'a str, &'a str, &'a str)>,
    max_len: usize,
) -> Vec<String> {
    let max_len = max_len.clamp(MIN_LEN, MAX_LEN);
    let mut taken = HashSet::new();
    tools
        .map(|(toolbox, server, tool)| {
            let mut name = native_name(toolbox, server, tool, max_len);
            let raw = format!("{toolbox}__{server}_{tool}");
            let mut salt = 0u64;
            while !taken.insert(name.clone()) {
                salt += 1;
                name = with_suffix(
                    toolbox,
                    server,
                    tool,
                    fnv1a(format!("{salt}:{raw}").as_bytes()),
                    max_len,
                );
            }
            name
        })
        .collect()
}

fn safe(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// The longest part of the tool's own name kept in a shortened name.
const TOOL_KEEP: usize = 32;

/// A shortened name of at most `max_len` (`MIN_LEN..=MAX_LEN`) characters.
fn with_suffix(toolbox: &str, server: &str, tool: &str, hash: u64, max_len: usize) -> String {
    let clean = |text: &str| -> String {
        text.chars()
            .map(|c| {
                if c.is_ascii() && safe(c as u8) {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    // At least two characters of the toolbox and server part stay.
    let keep = TOOL_KEEP.min(max_len - SUFFIX_LEN - 2);
    let tool: String = clean(tool).chars().take(keep).collect();
    let room = max_len - SUFFIX_LEN - tool.len();
    let mut head = clean(&format!("{toolbox}__{server}_"));
    if head.len() > room {
        head.truncate(room - 1);
        head.push('_');
    }
    format!("{head}{tool}_{:08x}", hash & 0xffff_ffff)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::NATIVE_NAME_DEFAULT_LEN;

    /// Whether `native_name` had to change the plain name.
    fn was_shortened(name: &str, toolbox: &str, server: &str, tool: &str) -> bool {
        name != format!("{toolbox}__{server}_{tool}")
    }

    fn valid(name: &str) -> bool {
        (1..=NATIVE_NAME_DEFAULT_LEN).contains(&name.len()) && name.bytes().all(safe)
    }

    #[test]
    fn safe_names_are_kept() {
        assert_eq!(
            native_name("dev", "fs", "read_file", NATIVE_NAME_DEFAULT_LEN),
            "dev__fs_read_file"
        );
        assert!(!was_shortened(
            "dev__fs_read_file",
            "dev",
            "fs",
            "read_file"
        ));
    }

    #[test]
    fn unsafe_and_long_names_are_made_safe_unique_and_stable() {
        let long = "a".repeat(80);
        let tools = [
            "read.file".to_string(),
            "read_file".to_string(),
            "read/file".to_string(),
            "read file".to_string(),
            "lire_fichier_é".to_string(),
            "lire_fichier_è".to_string(),
            format!("{long}_one"),
            format!("{long}_two"),
            format!("{long}.one"),
        ];
        let names = unique_names(
            tools.iter().map(|t| ("toolbox", "server", t.as_str())),
            NATIVE_NAME_DEFAULT_LEN,
        );
        for name in &names {
            assert!(valid(name), "{name:?}");
        }
        let distinct: HashSet<_> = names.iter().collect();
        assert_eq!(distinct.len(), names.len(), "{names:#?}");
        assert_eq!(names[1], "toolbox__server_read_file");
        let again = unique_names(
            tools.iter().map(|t| ("toolbox", "server", t.as_str())),
            NATIVE_NAME_DEFAULT_LEN,
        );
        assert_eq!(names, again);
        assert!(was_shortened(&names[0], "toolbox", "server", "read.file"));
        assert!(
            names[0].starts_with("toolbox__server_read_file_"),
            "{}",
            names[0]
        );
        let long_box = "b".repeat(60);
        let name = native_name(&long_box, "s", "query", NATIVE_NAME_DEFAULT_LEN);
        assert!(valid(&name) && name.contains("_query_"), "{name}");
    }

    #[test]
    fn hash_collisions_are_settled() {
        let names = unique_names(
            [("t", "s", "x.y"), ("t", "s", "x.y")].into_iter(),
            NATIVE_NAME_DEFAULT_LEN,
        );
        assert_ne!(names[0], names[1]);
        assert!(names.iter().all(|n| valid(n)));
    }

    #[test]
    fn names_leave_room_for_the_host_prefix() {
        // The example: 73 characters once Claude Code adds its prefix.
        let name = native_name(
            "analytics-warehouse-production-eu",
            "everything",
            "get-sum",
            NATIVE_NAME_DEFAULT_LEN,
        );
        assert!(valid(&name), "{name}");
        assert!(name.contains("_get-sum_"), "{name}");
        assert!(format!("mcp__workbench__{name}").len() <= MAX_LEN);
        // 59 characters, safe, but over the budget: shortened too.
        let tool = "t".repeat(59 - "dev__fs_".len());
        let name = native_name("dev", "fs", &tool, NATIVE_NAME_DEFAULT_LEN);
        assert!(name.len() <= NATIVE_NAME_DEFAULT_LEN && was_shortened(&name, "dev", "fs", &tool));
        // The whole 64 when configured so, and the smallest budget still works.
        assert_eq!(native_name("dev", "fs", &tool, MAX_LEN).len(), 59);
        for budget in [MIN_LEN, 30, MAX_LEN] {
            let long = "x".repeat(100);
            let name = native_name(&"b".repeat(60), &"s".repeat(60), &long, budget);
            assert!(
                name.len() <= budget && name.len() >= budget - 1,
                "{budget}: {name}"
            );
            assert!(name.bytes().all(safe), "{name}");
        }
    }
}
