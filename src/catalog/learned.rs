//! What `find_tools` learned from use (docs/reference.md §5.3, §9): when a
//! search did not show the tool the model then called, the search's words
//! are remembered with that tool, and a later search with similar words
//! lifts it. Kept per config in the catalog's file, bounded, listed and
//! cleared by `mcp-workbench learned`.
//!
//! No IO. It must never hold a call's arguments or result: an association
//! is the query's stemmed words that the catalog's vocabulary knows (names,
//! values and other words no tool uses are left out), the tool's toolbox,
//! server and name, and when. A query with no such word teaches nothing.

use serde::{Deserialize, Serialize};

/// At most this many associations per config; the oldest goes first.
pub(crate) const MAX_LEARNED: usize = 256;

/// How alike a query's words and a learned set must be (Jaccard) to lift.
const SIMILAR: f64 = 0.5;

/// One association: these words meant this tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Association {
    /// Stemmed, sorted, without repeats.
    pub words: Vec<String>,
    pub toolbox: String,
    pub server: String,
    pub tool: String,
    /// Milliseconds since the Unix epoch.
    pub at: u64,
}

/// Every association of one config, and when they were last cleared.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Learned {
    /// `mcp-workbench learned clear` ran then: nothing older is kept, even
    /// from another process's memory.
    #[serde(rename = "clearedAt", default)]
    pub cleared_at: u64,
    #[serde(default)]
    pub entries: Vec<Association>,
}

impl Learned {
    /// Remembers that `words` meant `tool`; the latest meaning of the same
    /// words wins. Nothing when `words` is empty.
    pub(crate) fn record(&mut self, association: Association) {
        if association.words.is_empty() {
            return;
        }
        self.entries.retain(|a| a.words != association.words);
        self.entries.push(association);
        self.bound();
    }

    /// Puts in what another process wrote: the later clear holds, and per
    /// set of words the newer association.
    pub(crate) fn merge(&mut self, theirs: Learned) {
        self.cleared_at = self.cleared_at.max(theirs.cleared_at);
        for association in theirs.entries {
            match self
                .entries
                .iter_mut()
                .find(|a| a.words == association.words)
            {
                Some(ours) if ours.at >= association.at => {}
                Some(ours) => *ours = association,
                None => self.entries.push(association),
            }
        }
        let cleared = self.cleared_at;
        self.entries.retain(|a| a.at > cleared);
        self.entries.sort_by_key(|a| a.at);
        self.bound();
    }

    /// Forgets everything, now and in every process that merges this.
    pub(crate) fn clear(&mut self, now: u64) {
        self.cleared_at = now;
        self.entries.clear();
    }

    fn bound(&mut self) {
        if self.entries.len() > MAX_LEARNED {
            self.entries.sort_by_key(|a| a.at);
            let extra = self.entries.len() - MAX_LEARNED;
            self.entries.drain(..extra);
        }
    }

    /// The associations similar to `words` (stemmed, sorted, known words of
    /// a query), most similar first, then newest.
    pub(crate) fn matching(&self, words: &[String]) -> Vec<&Association> {
        if words.is_empty() {
            return Vec::new();
        }
        let mut found: Vec<(f64, &Association)> = self
            .entries
            .iter()
            .filter_map(|a| {
                let shared = a.words.iter().filter(|w| words.contains(w)).count();
                let union = a.words.len() + words.len() - shared;
                let similarity = shared as f64 / union.max(1) as f64;
                (shared > 0 && similarity >= SIMILAR).then_some((similarity, a))
            })
            .collect();
        found.sort_by(|x, y| y.0.total_cmp(&x.0).then(y.1.at.cmp(&x.1.at)));
        found.into_iter().map(|(_, a)| a).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn learned(words: &[&str], tool: &str, at: u64) -> Association {
        Association {
            words: words.iter().map(|w| w.to_string()).collect(),
            toolbox: "t".into(),
            server: "s".into(),
            tool: tool.into(),
            at,
        }
    }

    #[test]
    fn similar_words_find_what_they_meant_and_the_latest_meaning_wins() {
        let mut all = Learned::default();
        all.record(learned(&["rememb"], "add_observations", 1));
        all.record(learned(&["colleagu", "rememb"], "create_entities", 2));
        all.record(learned(&[], "nothing", 3));
        assert_eq!(all.entries.len(), 2, "no words, nothing learned");
        let words = |w: &[&str]| w.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        let tools = |found: Vec<&Association>| {
            found
                .into_iter()
                .map(|a| a.tool.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            tools(all.matching(&words(&["rememb"]))),
            ["add_observations", "create_entities"]
        );
        assert!(all
            .matching(&words(&["weather", "forecast", "rain"]))
            .is_empty());
        all.record(learned(&["rememb"], "create_entities", 4));
        assert_eq!(all.entries.len(), 2);
        assert_eq!(
            tools(all.matching(&words(&["rememb"])))[0],
            "create_entities"
        );
    }

    #[test]
    fn it_is_bounded_and_a_clear_holds_across_a_merge() {
        let mut all = Learned::default();
        for i in 0..(MAX_LEARNED as u64 + 10) {
            all.record(learned(&[&format!("w{i}")], "x", i));
        }
        assert_eq!(all.entries.len(), MAX_LEARNED);
        assert_eq!(all.entries[0].at, 10, "the oldest went first");
        let before_clear = all.clone();
        let mut cleared = Learned::default();
        cleared.clear(1_000);
        cleared.merge(before_clear);
        assert!(cleared.entries.is_empty());
        cleared.record(learned(&["new"], "y", 2_000));
        let mut other = Learned::default();
        other.record(learned(&["old"], "z", 5));
        other.merge(cleared);
        assert_eq!(other.cleared_at, 1_000);
        assert_eq!(other.entries.len(), 1);
        assert_eq!(other.entries[0].tool, "y");
    }
}
