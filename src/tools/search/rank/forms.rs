//! The irregular forms of common English words (`biggest`: big, `said`: say,
//! `children`: child), which no suffix rule of `words::stem` undoes: the
//! stemmer looks a word up here first, so a query's `biggest` meets a
//! tool's `big` and the lexicon's relations of `big`.
//!
//! The table (`forms.txt`) is generated from WordNet 3.0's exception lists
//! by `scripts/lexicon`, cut to forms of the lexicon's common words, and
//! never edited by hand; its license is `LICENSE-WordNet`, beside it. It is
//! embedded and parsed once, on first use, behind a `OnceLock`, as the
//! lexicon is. No IO.

use std::collections::HashMap;
use std::sync::OnceLock;

/// One line per form: the form, a space, its base.
const TABLE: &str = include_str!("forms.txt");

/// The base of irregular form `word` (lowercase), if it is one.
pub(crate) fn base(word: &str) -> Option<&'static str> {
    static PARSED: OnceLock<HashMap<&'static str, &'static str>> = OnceLock::new();
    PARSED
        .get_or_init(|| TABLE.lines().filter_map(|l| l.split_once(' ')).collect())
        .get(word)
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn irregular_forms_have_their_base() {
        assert_eq!(base("biggest"), Some("big"));
        assert_eq!(base("said"), Some("say"));
        assert_eq!(base("children"), Some("child"));
        assert_eq!(base("files"), None, "regular forms are the stemmer's");
        assert_eq!(base("found"), Some("find"));
        assert_eq!(
            base("data"),
            None,
            "a form common in its own right keeps its meaning"
        );
    }

    #[test]
    fn the_table_is_pairs_of_lowercase_words() {
        for line in TABLE.lines() {
            let (form, to) = line.split_once(' ').expect(line);
            assert!(form.bytes().all(|b| b.is_ascii_lowercase()), "{line}");
            assert!(to.bytes().all(|b| b.is_ascii_lowercase()), "{line}");
            assert!(base(to).is_none(), "a base is no form: {line}");
        }
    }
}
