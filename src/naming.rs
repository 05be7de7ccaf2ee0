//! Names of dynamic-mode native tools: `{toolbox}__{server}_{tool}` (seed 000),
//! made safe for every common host: `^[A-Za-z0-9_-]{1,64}$` (Claude Desktop's
//! rule, the strictest in use; mcp-protocol.md §11.6).
//!
//! A name that is already safe is used as it is. Otherwise every other
//! character becomes `_`, and the name gets a hash suffix of its original text;
//! to fit 64 characters the toolbox and server part is cut first, so the start
//! of the tool's own name stays readable. The same input always gives the same name;
//! distinct inputs get distinct names (`unique_names` settles the astronomically
//! rare hash collision deterministically). Calls are routed by a lookup table,
//! never by taking a name apart. No IO here.

use std::collections::HashSet;

pub const MAX_LEN: usize = 64;
/// `_` plus 8 hex digits.
const SUFFIX_LEN: usize = 9;

/// The safe native name of one downstream tool.
pub fn native_name(toolbox: &str, server: &str, tool: &str) -> String {
    let raw = format!("{toolbox}__{server}_{tool}");
    if raw.len() <= MAX_LEN && raw.bytes().all(safe) {
        return raw;
    }
    with_suffix(toolbox, server, tool, fnv1a(raw.as_bytes()))
}

/// Whether `native_name` had to change the plain name.
pub fn was_shortened(name: &str, toolbox: &str, server: &str, tool: &str) -> bool {
    name != format!("{toolbox}__{server}_{tool}")
}

/// Names for every `(toolbox, server, tool)`, in order; a clash (only possible
/// through a hash collision) is settled by rehashing the later entry.
pub fn unique_names<'a>(tools: impl Iterator<Item = (&'a str, &'a str, &'a str)>) -> Vec<String> {
    let mut taken = HashSet::new();
    tools
        .map(|(toolbox, server, tool)| {
            let mut name = native_name(toolbox, server, tool);
            let raw = format!("{toolbox}__{server}_{tool}");
            let mut salt = 0u64;
            while !taken.insert(name.clone()) {
                salt += 1;
                name = with_suffix(
                    toolbox,
                    server,
                    tool,
                    fnv1a(format!("{salt}:{raw}").as_bytes()),
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

fn with_suffix(toolbox: &str, server: &str, tool: &str, hash: u64) -> String {
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
    let tool: String = clean(tool).chars().take(TOOL_KEEP).collect();
    let room = MAX_LEN - SUFFIX_LEN - tool.len();
    let mut head = clean(&format!("{toolbox}__{server}_"));
    if head.len() > room {
        head.truncate(room - 1);
        head.push('_');
    }
    format!("{head}{tool}_{:08x}", hash & 0xffff_ffff)
}

/// FNV-1a, 64 bits: small, stable across versions and platforms.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(name: &str) -> bool {
        (1..=MAX_LEN).contains(&name.len()) && name.bytes().all(safe)
    }

    #[test]
    fn safe_names_are_kept() {
        assert_eq!(native_name("dev", "fs", "read_file"), "dev__fs_read_file");
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
        let names = unique_names(tools.iter().map(|t| ("toolbox", "server", t.as_str())));
        for name in &names {
            assert!(valid(name), "{name:?}");
        }
        let distinct: HashSet<_> = names.iter().collect();
        assert_eq!(distinct.len(), names.len(), "{names:#?}");
        assert_eq!(names[1], "toolbox__server_read_file");
        let again = unique_names(tools.iter().map(|t| ("toolbox", "server", t.as_str())));
        assert_eq!(names, again);
        assert!(was_shortened(&names[0], "toolbox", "server", "read.file"));
        assert!(
            names[0].starts_with("toolbox__server_read_file_"),
            "{}",
            names[0]
        );
        let long_box = "b".repeat(60);
        let name = native_name(&long_box, "s", "query");
        assert!(valid(&name) && name.contains("_query_"), "{name}");
    }

    #[test]
    fn hash_collisions_are_settled() {
        let names = unique_names([("t", "s", "x.y"), ("t", "s", "x.y")].into_iter());
        assert_ne!(names[0], names[1]);
        assert!(names.iter().all(|n| valid(n)));
    }
}
