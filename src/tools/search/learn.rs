//! Learning from use (docs/reference.md §5.3): what a `find_tools` search
//! keeps (`Searched`) until the session's next tool call, and that call
//! teaching the catalog what the search's words meant (`learn`) when it
//! reaches a tool the search did not show.
//!
//! No IO: the catalog learns in memory; the caller has it written.

use crate::catalog::learned::Association;
use crate::catalog::{now_ms, Catalog};
use crate::tools::search::index::{id, Built};

/// What a search showed, kept by the session until its next tool call:
/// if that call reaches a tool the search did not show, the search's words
/// are learned for that tool (`learn`).
pub(crate) struct Searched {
    /// The query's key words the catalog knows (`rank::key_words`, known to
    /// the index): what would be learned. Never empty.
    words: Vec<String>,
    /// `id` of every tool shown.
    shown: Vec<String>,
    /// When (milliseconds since the Unix epoch).
    at: u64,
}

/// How long after a search a call still tells what the search meant.
const LEARN_WINDOW_MS: u64 = 5 * 60 * 1000;

/// What to keep of a search that found `words` (the query's key words the
/// index knows) and showed the tools `shown` (toolbox, server, tool), now;
/// nothing when it has no words to learn.
pub(crate) fn searched<'a>(
    words: Vec<String>,
    shown: impl Iterator<Item = (&'a str, &'a str, &'a str)>,
) -> Option<Searched> {
    (!words.is_empty()).then(|| Searched {
        shown: shown
            .map(|(toolbox, server, tool)| id(toolbox, server, tool))
            .collect(),
        words,
        at: now_ms(),
    })
}

/// The session's next tool call after a search (`searched`): when it
/// reaches a tool the search did not show, within `LEARN_WINDOW_MS`, the
/// catalog learns that the search's words meant it. Whether anything was
/// learned (the caller then has the catalog written, off its thread).
/// `index`: the session's index, which knows the tools the catalog has.
pub(crate) fn learn(
    catalog: &Catalog,
    index: Option<&Built>,
    searched: &Searched,
    toolbox: &str,
    server: &str,
    tool: &str,
) -> bool {
    let now = now_ms();
    let key = id(toolbox, server, tool);
    if searched.shown.contains(&key) || now.saturating_sub(searched.at) > LEARN_WINDOW_MS {
        return false;
    }
    // Only a tool the catalog has: a call to a name that does not exist
    // teaches nothing.
    let known = index.is_some_and(|built| built.by_id.contains_key(&key));
    if !known {
        return false;
    }
    catalog.learn(Association {
        words: searched.words.clone(),
        toolbox: toolbox.into(),
        server: server.into(),
        tool: tool.into(),
        at: now,
    });
    true
}
