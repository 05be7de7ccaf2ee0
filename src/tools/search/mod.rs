//! How `find_tools` ranks tools (docs/reference.md §5), all of it in this
//! folder: the relevance model (`rank`: BM25F over words, concepts and a
//! lexicon, servers first), the index it runs over, built from what the
//! catalog holds as the model may see it (`index`), the order of an answer
//! (below), and what a search keeps to learn from the session's next call
//! (`learn`). The catalog holds the data (listings, what was learned) and
//! ranks nothing; `find_tools` renders the answer.
//!
//! The order: a tool the query names exactly first, then tools the catalog
//! learned these words meant (`learned`), then the rest by score. When the
//! best score is weak, and nothing was named or learned, the search says so,
//! and the answer names the toolboxes whose descriptions match, so the model
//! opens one instead of guessing. When the best tools are one server's
//! with no clear winner (`Ranker::undecided`), the search says that
//! instead, and the answer lists them in a line each with a pointer to
//! `open_toolbox`. No IO; no answer (that is `find_tools`).

pub(crate) mod index;
pub(crate) mod learn;
pub mod rank;

use crate::catalog::Catalog;
use crate::tools::search::index::{id, Built, Entry};

/// A best own score (a tool's by its own text, without its server's lift)
/// under this many times the index's largest idf (`Index::max_idf`, the
/// scale of its scores) is a weak match: the answer adds a `note` and the
/// toolboxes whose descriptions match. Set from the retrieval benchmark's
/// tuning queries (`scripts/retrieval-bench`): below it, the first result
/// was wrong for 5 of 9 (v2's tuning half) and 3 of 4 (v1); it was 7 of 10
/// and 6 of 7 before servers and the lexicon.
pub(crate) const WEAK: f64 = 1.75;

/// One tool a search found.
pub(crate) struct Match<'a> {
    pub entry: &'a Entry,
    pub score: f64,
    /// Lifted by what the catalog learned from use.
    pub learned: bool,
}

/// What a search found.
pub(crate) struct Ranked<'a> {
    /// The best tools, at most the search's `limit`, in order.
    pub tools: Vec<Match<'a>>,
    /// The best score is weak (`WEAK`), and no tool was named or learned.
    pub weak: bool,
    /// The query's key words the index knows: what would be learned.
    pub words: Vec<String>,
    /// The best tools are one server's with no clear winner
    /// (`Ranker::undecided`), and no tool was named or learned: `tools`
    /// holds just them.
    pub undecided: bool,
}

/// The best `limit` tools of `built` for `query`.
pub(crate) fn find<'a>(
    catalog: &Catalog,
    built: &'a Built,
    query: &str,
    limit: usize,
) -> Ranked<'a> {
    let mut words = rank::key_words(query);
    words.retain(|w| built.index.tools().knows(w));
    // Exact names first, then what was learned, then the rest by score.
    let exact: &[usize] = built
        .by_name
        .get(&rank::name_key(query))
        .map_or(&[], Vec::as_slice);
    let lifted: Vec<usize> = catalog
        .learned_for(&words)
        .iter()
        .filter_map(|a| {
            built
                .by_id
                .get(&id(&a.toolbox, &a.server, &a.tool))
                .copied()
        })
        .collect();
    let hits = built
        .index
        .search(query, limit + exact.len() + lifted.len());
    let score_of = |doc: usize| hits.iter().find(|h| h.doc == doc).map_or(0.0, |h| h.score);
    let mut order: Vec<(usize, f64, bool)> = Vec::with_capacity(limit);
    for &doc in exact {
        order.push((doc, score_of(doc), false));
    }
    for &doc in &lifted {
        if !order.iter().any(|(d, _, _)| *d == doc) {
            order.push((doc, score_of(doc), true));
        }
    }
    for hit in &hits {
        if !order.iter().any(|(d, _, _)| *d == hit.doc) {
            order.push((hit.doc, hit.score, false));
        }
    }
    order.truncate(limit);
    // How well the best tool matches by its own text: a server's lift says
    // which server, not that one of its tools does what was asked.
    let best = hits.iter().map(|h| h.own).fold(0.0, f64::max);
    let plain = exact.is_empty() && lifted.is_empty();
    let weak = plain && best < WEAK * built.index.tools().max_idf();
    let undecided = match plain {
        true => built.index.undecided(&hits[..hits.len().min(limit)]),
        false => None,
    };
    if let Some(n) = undecided {
        order.truncate(n);
    }
    let tools = order
        .iter()
        .map(|&(doc, score, learned)| Match {
            entry: &built.entries[doc],
            score,
            learned,
        })
        .collect();
    Ranked {
        tools,
        weak: weak && undecided.is_none(),
        words,
        undecided: undecided.is_some(),
    }
}
