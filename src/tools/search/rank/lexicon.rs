//! A general English lexicon: for a common word, its synonyms and its word
//! family (`remember`: recall, recollect, remembrance; `person`: individual,
//! someone), so a query meets a tool written in other words that no
//! concept of `concepts` and no tool description links; and, a weaker kin,
//! the words of its definitions and the words it helps define (`high`:
//! elevation; `big`: size). A lexicon match counts for less than a direct
//! match (`Weights::lexicon`, `Weights::definition`).
//!
//! The tables (`lexicon.txt`, `definitions.txt`) are generated from WordNet
//! 3.0 by `scripts/lexicon`, cut to the words WordNet's own sense-tagged
//! corpus counts as common, and never edited by hand; the license is
//! `LICENSE-WordNet`, beside them. They are embedded in the binary and
//! parsed once, on first use, into immutable tables behind `OnceLock`s (the
//! ranker is a pure function with no owner to carry them).
//!
//! No IO. Words are stemmed when the table is parsed, the way every other
//! word is.

use super::words::{is_stop_word, stem};
use std::collections::HashMap;
use std::sync::OnceLock;

/// One line per word: the word, then its related words, most frequent
/// first.
const TABLE: &str = include_str!("lexicon.txt");

/// One line per word: the word, then the words of its definitions.
const DEFINITIONS: &str = include_str!("definitions.txt");

/// Each line's first word and each other word of the line, stemmed, stop
/// words and a word equal to the first left out, in order.
fn pairs(table: &'static str) -> impl Iterator<Item = (String, String)> {
    table.lines().flat_map(|line| {
        let mut words = line.split(' ').filter(|w| !is_stop_word(w)).map(stem);
        let key = words.next().unwrap_or_default();
        words
            .filter(|other| *other != key)
            .map(|other| (key.clone(), other))
            .collect::<Vec<_>>()
    })
}

/// Stemmed word → the stems of its related words (not itself).
fn table() -> &'static HashMap<String, Vec<String>> {
    static PARSED: OnceLock<HashMap<String, Vec<String>>> = OnceLock::new();
    PARSED.get_or_init(|| {
        let mut out: HashMap<String, Vec<String>> = HashMap::new();
        for (key, other) in pairs(TABLE) {
            let entry = out.entry(key).or_default();
            if !entry.contains(&other) {
                entry.push(other);
            }
        }
        out
    })
}

/// Stemmed word → the stems of the words of its definitions and of the
/// words whose definitions use it, sorted.
fn definitions() -> &'static HashMap<String, Vec<String>> {
    static PARSED: OnceLock<HashMap<String, Vec<String>>> = OnceLock::new();
    PARSED.get_or_init(|| {
        let mut out: HashMap<String, Vec<String>> = HashMap::new();
        for (key, other) in pairs(DEFINITIONS) {
            out.entry(key.clone()).or_default().push(other.clone());
            out.entry(other).or_default().push(key);
        }
        for words in out.values_mut() {
            words.sort_unstable();
            words.dedup();
        }
        out
    })
}

/// The stems of the words of stemmed word `word`'s definitions (`high`:
/// elevation, level) and of the words whose definitions use it (`level`:
/// altitude, high).
pub(crate) fn defined(word: &str) -> &'static [String] {
    definitions().get(word).map_or(&[], Vec::as_slice)
}

/// The stems related to stemmed word `word`, most frequent first.
pub(crate) fn related(word: &str) -> &'static [String] {
    table().get(word).map_or(&[], Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synonyms_and_families_of_common_words() {
        let has = |a: &str, b: &str| related(&stem(a)).contains(&stem(b));
        assert!(has("remember", "recall"));
        assert!(has("person", "individual"));
        assert!(has("memory", "memorize"));
        assert!(has("recall", "remember"), "relations go both ways");
        assert!(related("zzzz").is_empty());
    }

    #[test]
    fn a_word_leads_to_the_words_of_its_definitions_and_back() {
        let has = |a: &str, b: &str| defined(&stem(a)).contains(&stem(b));
        assert!(has("high", "elevation"), "high: having great elevation");
        assert!(has("elevation", "high"), "and back");
        assert!(has("big", "size"), "big: above average in size");
        assert!(defined("zzzz").is_empty());
    }

    #[test]
    fn the_table_is_lowercase_words() {
        for line in TABLE.lines() {
            assert!(line.split(' ').count() >= 2, "{line}");
            assert!(
                line.bytes().all(|b| b == b' ' || b.is_ascii_lowercase()),
                "{line}"
            );
        }
    }
}
