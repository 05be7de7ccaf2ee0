//! "Did you mean ...?" for config keys, command-line flags and names (a
//! toolbox, server or tool): the known word closest to a misspelt one, by
//! edit distance, and known words ordered by closeness. No IO.

/// The candidate closest to `word`, if it is close enough to be a likely typo:
/// at most one edit for short words, about one edit in three for longer ones.
/// Case, `_` and `-` are ignored: `mcp_servers` finds `mcpServers`.
pub(crate) fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let folded = fold(word);
    let limit = (folded.chars().count() / 3).max(1);
    candidates
        .iter()
        .map(|&c| (distance(&folded, &fold(c)), c))
        .filter(|&(d, c)| d <= limit && c != word)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// `candidates`, closest to `word` first (the same measure as `closest`);
/// equally close ones keep their order.
pub(crate) fn by_closeness<'a>(word: &str, candidates: &[&'a str]) -> Vec<&'a str> {
    let folded = fold(word);
    let mut ranked: Vec<(usize, &str)> = candidates
        .iter()
        .map(|&c| (distance(&folded, &fold(c)), c))
        .collect();
    ranked.sort_by_key(|&(d, _)| d);
    ranked.into_iter().map(|(_, c)| c).collect()
}

/// Lower case, without `_` and `-`: the differences a person does not see as typos.
fn fold(word: &str) -> String {
    word.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Edit distance (insertions, deletions, substitutions, and swaps of two
/// neighbours), over characters.
pub(crate) fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows of the classic table: two back (for swaps), one back, current.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut current = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let substitution = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(previous[j - 1] + substitution);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(before[j - 2] + 1);
            }
            current[j] = best;
        }
        before = std::mem::replace(&mut previous, current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(distance("", ""), 0);
        assert_eq!(distance("abc", ""), 3);
        assert_eq!(distance("", "ab"), 2);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("mcpServer", "mcpServers"), 1);
        assert_eq!(distance("comand", "command"), 1);
        assert_eq!(distance("cwd", "cdw"), 1, "a swap is one edit");
        assert_eq!(distance("über", "uber"), 1, "characters, not bytes");
    }

    #[test]
    fn suggestions() {
        let server = [
            "command",
            "args",
            "env",
            "cwd",
            "toolFilters",
            "startupTimeoutMs",
        ];
        assert_eq!(closest("comand", &server), Some("command"));
        assert_eq!(closest("toolFilter", &server), Some("toolFilters"));
        assert_eq!(closest("tool_filters", &server), Some("toolFilters"));
        assert_eq!(closest("startupTimeout", &server), Some("startupTimeoutMs"));
        assert_eq!(closest("ENV", &server), Some("env"));
        assert_eq!(
            closest("mcpServer", &["description", "mcpServers"]),
            Some("mcpServers")
        );
        assert_eq!(
            closest("mcp_servers", &["description", "mcpServers"]),
            Some("mcpServers")
        );
        assert_eq!(closest("timeout", &server), None);
        assert_eq!(
            by_closeness(
                "read_grpah",
                &["write", "search_nodes", "read_graph", "read"]
            ),
            ["read_graph", "read", "write", "search_nodes"]
        );
        assert_eq!(closest("xyz", &server), None);
        assert_eq!(
            closest("--confg", &["--config", "--trace", "--json"]),
            Some("--config")
        );
    }
}
