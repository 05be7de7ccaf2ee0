//! Words for ranking: text cut into lowercase words (`snake_case`,
//! `camelCase`, `kebab-case` and `HTTPServer` split), common English words
//! dropped, and a light suffix stemmer so that `files`, `listing` and
//! `created` meet `file`, `list` and `create`; a web address said as the
//! word `url`, and a name of known shape followed by its kind (`logo.png file`,
//! `#random channel`, `4f2a9c1 commit`).
//!
//! No IO. The stemmer is deliberately small: it only has to map the forms a
//! tool's description and a person's question use onto one key, the same way
//! on both sides; it never has to produce a real word.

/// Words that carry no meaning for finding a tool: the function words of
/// general English stop lists (pronouns, auxiliaries, determiners,
/// conjunctions, question words, fillers such as `please` and `like`),
/// without the ones that say something in a tool's world (`all`, `every`,
/// `first`, `last`, `new`, `now`, `not`, `up`, `down`, `over`, `back`).
const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "again",
    "already",
    "also",
    "am",
    "an",
    "and",
    "anything",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "being",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "during",
    "each",
    "else",
    "ever",
    "everything",
    "few",
    "for",
    "from",
    "further",
    "give",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "hey",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "kind",
    "let",
    "lets",
    "like",
    "likes",
    "may",
    "me",
    "might",
    "must",
    "my",
    "myself",
    "need",
    "nor",
    "of",
    "ok",
    "okay",
    "on",
    "once",
    "only",
    "or",
    "our",
    "ours",
    "ourselves",
    "own",
    "please",
    "really",
    "same",
    "shall",
    "she",
    "should",
    "so",
    "some",
    "somebody",
    "someone",
    "something",
    "sort",
    "still",
    "such",
    "than",
    "thanks",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "tool",
    "tools",
    "use",
    "using",
    "very",
    "want",
    "wanted",
    "wants",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "would",
    "yet",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// The words of `text`, lowercase, in order, stop words included (see
/// `is_stop_word`). Letters and digits make words; everything else
/// separates them, and so do case changes (`readFile`, `HTTPServer`).
pub(crate) fn split(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    for run in text.split(|c: char| !c.is_alphanumeric()) {
        let chars: Vec<char> = run.chars().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (before, here) = (chars[i - 1], chars[i]);
            let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            let boundary = (before.is_lowercase() && here.is_uppercase())
                || (before.is_uppercase() && here.is_uppercase() && next_lower);
            if boundary {
                words.push(chars[start..i].iter().collect::<String>().to_lowercase());
                start = i;
            }
        }
        if start < chars.len() {
            words.push(chars[start..].iter().collect::<String>().to_lowercase());
        }
    }
    words
}

/// `text` with each web address (`https://example.com/post`) said as the
/// word `url`: what it is, not the words of its host and path, which say
/// nothing of the tool wanted (`post` is not a request to post).
pub(crate) fn without_addresses(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("://") {
        return std::borrow::Cow::Borrowed(text);
    }
    let words: Vec<&str> = text
        .split(' ')
        .map(|word| {
            let scheme = word.find("://").map(|at| &word[..at]);
            match scheme {
                Some(s) if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphabetic()) => "url",
                _ => word,
            }
        })
        .collect();
    std::borrow::Cow::Owned(words.join(" "))
}

/// `text` with a word saying what kind of thing each name of a known shape
/// is, which its own words do not: `file` after a file name (`logo.png`,
/// `docs/index.md`: a name, a dot and an extension of one to four letters),
/// `channel` after a channel's name (`#random`: `#` and a word),
/// `coordinates` after a pair of decimal numbers (`48.85, 2.29`), and
/// `commit` after a commit's hash (`4f2a9c1`: 7 to 40 hexadecimal digits,
/// letters and numbers both).
pub(crate) fn with_kinds(text: &str) -> std::borrow::Cow<'_, str> {
    let words: Vec<&str> = text.split(' ').collect();
    let kinds: Vec<Option<&str>> = (0..words.len())
        .map(|i| kind_of(words[i], i.checked_sub(1).map(|j| words[j])))
        .collect();
    if kinds.iter().all(Option::is_none) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for (i, (word, kind)) in words.iter().zip(&kinds).enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(word);
        if let Some(kind) = kind {
            out.push(' ');
            out.push_str(kind);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The kind `with_kinds` adds after `word`, which follows `before`.
fn kind_of(word: &str, before: Option<&str>) -> Option<&'static str> {
    let word = word.trim_end_matches(|c: char| !c.is_alphanumeric());
    let decimal = |w: &str| {
        let w = w.strip_prefix('-').unwrap_or(w);
        w.split_once('.').is_some_and(|(a, b)| {
            !a.is_empty()
                && !b.is_empty()
                && a.bytes().all(|c| c.is_ascii_digit())
                && b.bytes().all(|c| c.is_ascii_digit())
        })
    };
    let hex = |w: &str| {
        (7..=40).contains(&w.len())
            && w.bytes()
                .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
            && w.bytes().any(|c| c.is_ascii_digit())
            && w.bytes().any(|c| c.is_ascii_alphabetic())
    };
    if hex(word) {
        return Some("commit");
    }
    if let Some(name) = word.strip_prefix('#') {
        let letters = name.starts_with(|c: char| c.is_alphabetic());
        return letters.then_some("channel");
    }
    if decimal(word) {
        let pair = before
            .and_then(|b| b.strip_suffix(','))
            .is_some_and(decimal);
        return pair.then_some("coordinates");
    }
    let (name, extension) = word.rsplit_once('.')?;
    let file = !word.contains("://")
        && name.ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '-')
        && (1..=4).contains(&extension.len())
        && extension.chars().all(|c| c.is_ascii_alphabetic());
    file.then_some("file")
}

/// Verbs that say little of what a person wants (stemmed): a query's
/// `show me`, `get the`, `make a` weigh less than its nouns.
const LIGHT_VERBS: &[&str] = &[
    "do", "get", "giv", "go", "help", "keep", "mak", "see", "show", "tak", "tell",
];

pub(crate) fn is_light_verb(stem: &str) -> bool {
    LIGHT_VERBS.contains(&stem)
}

pub(crate) fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

fn has_vowel(text: &str) -> bool {
    text.chars().any(|c| "aeiouy".contains(c))
}

/// The stem of a lowercase word: an irregular form's base (`forms`), then
/// plural `s`, `-ing`, `-ed`, `-tion` / `-sion` and a final `e` removed,
/// with a doubled final consonant undone.
pub(crate) fn stem(word: &str) -> String {
    let word = super::forms::base(word).unwrap_or(word);
    if word.chars().count() <= 3 || !word.is_ascii() {
        return word.to_string();
    }
    let mut w = word.to_string();
    if let Some(base) = w.strip_suffix("ies").filter(|b| b.len() >= 2) {
        w = format!("{base}y");
    } else if w.ends_with("sses") {
        w.truncate(w.len() - 2);
    } else if w.ends_with('s') && !(w.ends_with("ss") || w.ends_with("us") || w.ends_with("is")) {
        w.pop();
    }
    for suffix in ["ing", "ed"] {
        if let Some(base) = w.strip_suffix(suffix) {
            if base.len() >= 3 && has_vowel(base) {
                let mut base = base.to_string();
                let bytes = base.as_bytes();
                let n = bytes.len();
                if bytes[n - 1] == bytes[n - 2] && !b"lsz".contains(&bytes[n - 1]) {
                    base.pop();
                }
                w = base;
            }
            break;
        }
    }
    if let Some(base) = w.strip_suffix("ion") {
        if base.len() >= 4 && (base.ends_with('t') || base.ends_with('s')) {
            w = base.to_string();
        }
    }
    if w.len() >= 4 && w.ends_with('e') {
        w.pop();
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_into_words() {
        assert_eq!(split("read_file"), ["read", "file"]);
        assert_eq!(split("getUserProfile"), ["get", "user", "profile"]);
        assert_eq!(
            split("browser-take-screenshot"),
            ["browser", "take", "screenshot"]
        );
        assert_eq!(split("HTTPServer v2"), ["http", "server", "v2"]);
        assert_eq!(split("List: the (files)!"), ["list", "the", "files"]);
        assert!(split("  --  ").is_empty());
    }

    #[test]
    fn a_web_address_is_the_word_url() {
        assert_eq!(
            without_addresses("pull down https://example.com/post now"),
            "pull down url now"
        );
        assert_eq!(without_addresses("a plain text"), "a plain text");
    }

    #[test]
    fn a_name_of_known_shape_says_its_kind() {
        assert_eq!(with_kinds("look at logo.png"), "look at logo.png file");
        assert_eq!(
            with_kinds("edit docs/index.md, then main.rs?"),
            "edit docs/index.md, file then main.rs? file"
        );
        assert_eq!(with_kinds("at 48.85, 2.29"), "at 48.85, 2.29 coordinates");
        assert_eq!(
            with_kinds("at -33.9, 151.2."),
            "at -33.9, 151.2. coordinates"
        );
        assert_eq!(with_kinds("version 1.5 of 2.0"), "version 1.5 of 2.0");
        assert_eq!(with_kinds("said in #random"), "said in #random channel");
        assert_eq!(with_kinds("close issue #42"), "close issue #42");
        assert_eq!(
            with_kinds("what did 4f2a9c1 do"),
            "what did 4f2a9c1 commit do"
        );
        assert_eq!(with_kinds("a decade 1234567"), "a decade 1234567");
        assert_eq!(
            with_kinds("page 9c3d7e1f-2222-4abc"),
            "page 9c3d7e1f-2222-4abc"
        );
        assert_eq!(with_kinds("the end. Next"), "the end. Next");
        assert_eq!(with_kinds("a plain text"), "a plain text");
    }

    #[test]
    fn stop_words_are_sorted_and_found() {
        let mut sorted = STOP_WORDS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, STOP_WORDS, "binary_search needs the list sorted");
        assert!(is_stop_word("the"));
        assert!(!is_stop_word("file"));
    }

    #[test]
    fn forms_of_a_word_share_a_stem() {
        for group in [
            &["file", "files"][..],
            &["list", "lists", "listing", "listed"],
            &["create", "creates", "created", "creating", "creation"],
            &["delete", "deleted", "deletion", "deletes"],
            &["directory", "directories"],
            &["query", "queries"],
            &["run", "running", "runs"],
            &["write", "writing", "writes"],
            &["navigate", "navigation", "navigating"],
        ] {
            let stems: Vec<String> = group.iter().map(|w| stem(w)).collect();
            assert!(
                stems.iter().all(|s| s == &stems[0]),
                "{group:?} gave {stems:?}"
            );
        }
        assert_eq!(stem("string"), "string");
        assert_eq!(stem("class"), "class");
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("git"), "git");
    }
}
