//! Servers first, then tools (the MCP-Zero design): a query is about some
//! server before it is about one of its tools, so servers are ranked as
//! documents of their own (their names, descriptions, `instructions`, and
//! every word of their tools), and a tool's score is its own plus
//! `Weights::server` of its server's, plus or minus a little
//! (`Weights::verb`) by a second signal: the query's verb against the tool
//! name's verb (`Index::verb_signal`: a tool that deletes comes after the
//! others unless the query asks to delete). Ties that are left are broken
//! by the same signal.
//!
//! No IO, no clock: a pure function of the documents and the query.

use super::{Document, Field, Hit, Index, QueryTerms, Verbs, Weights};

/// The document of one server: `names` (its own and its toolbox's),
/// `descriptions` (its toolbox's description, its `instructions`), and
/// `tools`, each tool's name and description, which weigh as context.
pub fn server_document<'a>(
    names: &[&str],
    descriptions: &[&str],
    tools: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Document {
    let mut words = String::new();
    for (name, description) in tools {
        words.push_str(name);
        words.push(' ');
        words.push_str(description);
        words.push(' ');
    }
    Document::default()
        .with(Field::Name, &names.join(" "))
        .with(Field::Description, &descriptions.join(" "))
        .with(Field::Context, &words)
}

/// Tools and their servers, searched together.
pub struct Ranker {
    tools: Index,
    servers: Index,
    /// Per tool, its server's document.
    server_of: Vec<usize>,
}

/// Scores closer than this (relatively) are a tie.
const TIE: f64 = 1e-9;

/// The best tool is a clear winner when no other scores within this share
/// of its score.
const CLEAR: f64 = 0.1;

/// Fewest tools of one server, all within `CLEAR` of the best, that make
/// the best results undecided (`Ranker::undecided`).
const UNDECIDED: usize = 3;

impl Ranker {
    /// `tools` with, per tool, the index of its server in `servers`.
    pub fn new(tools: &[Document], server_of: Vec<usize>, servers: &[Document]) -> Ranker {
        Ranker {
            tools: Index::new(tools),
            servers: Index::new(servers),
            server_of,
        }
    }

    /// The tools' own index (without their servers).
    pub fn tools(&self) -> &Index {
        &self.tools
    }

    /// When `hits` (a search's, best first) begin with `UNDECIDED` or more
    /// tools of one server that all score within `CLEAR` of the first, and
    /// no other server's tool does: how many. The search has no clear
    /// winner, and the server's own listing says more than its schemas.
    pub fn undecided(&self, hits: &[Hit]) -> Option<usize> {
        let first = hits.first()?;
        let server = self.server_of.get(first.doc)?;
        let band = hits
            .iter()
            .take_while(|h| h.score >= first.score * (1.0 - CLEAR))
            .count();
        let same = hits[..band]
            .iter()
            .all(|h| self.server_of.get(h.doc) == Some(server));
        (band >= UNDECIDED && same).then_some(band)
    }

    /// The best `limit` tools for `query`, best first.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        self.search_with(query, limit, &Weights::FITTED)
    }

    /// `search` with other weights (the benchmark's fitting). Tools that
    /// match no term by their own text are not returned, whatever their
    /// server's score. Equal scores are ordered by a second signal (the tool
    /// name's verb against the query's, `Index::verb_signal`), then by
    /// document.
    pub fn search_with(&self, query: &str, limit: usize, w: &Weights) -> Vec<Hit> {
        let terms = QueryTerms::of(query, w);
        let own = self.tools.scores_of(&terms, w);
        let server = match w.server > 0.0 {
            true => self.servers.scores_of(&terms, w),
            false => Vec::new(),
        };
        let verbs = Verbs::of(query);
        let scale = self.tools.max_idf();
        let mut hits: Vec<Hit> = own
            .iter()
            .enumerate()
            .filter(|(_, own)| **own > 0.0)
            .map(|(doc, own)| {
                let lift = self
                    .server_of
                    .get(doc)
                    .and_then(|&s| server.get(s))
                    .copied()
                    .unwrap_or(0.0);
                let verb = f64::from(self.tools.verb_signal(doc, &verbs));
                Hit {
                    doc,
                    score: own + w.server * lift + w.verb * scale * verb,
                    own: *own,
                }
            })
            .collect();
        hits.sort_unstable_by(|a, b| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc)));
        let mut start = 0;
        while start < hits.len().min(limit) {
            let first = hits[start].score;
            let end = start
                + hits[start..]
                    .iter()
                    .take_while(|h| first - h.score <= TIE * first.abs())
                    .count();
            if end - start > 1 {
                hits[start..end].sort_by_key(|h| (-self.tools.verb_signal(h.doc, &verbs), h.doc));
            }
            start = end;
        }
        hits.truncate(limit);
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str) -> Document {
        Document::default()
            .with(Field::Name, name)
            .with(Field::Description, description)
            .with(Field::Context, "memory knowledge graph")
    }

    #[test]
    fn a_server_the_query_is_about_lifts_its_tools() {
        let tools = [
            tool("write_file", "Write a file"),
            tool("create_entities", "Create entities"),
        ];
        let servers = [
            server_document(&["filesystem"], &["Files"], [("write_file", "")]),
            server_document(
                &["memory"],
                &["Remembers facts about people"],
                [("create_entities", "")],
            ),
        ];
        let ranker = Ranker::new(&tools, vec![0, 1], &servers);
        let hits = ranker.search("remember a fact about a person", 2);
        assert_eq!(hits[0].doc, 1);
    }

    #[test]
    fn in_a_tie_a_tool_that_deletes_comes_after_one_that_does_not() {
        let tools = [
            Document::default()
                .with(Field::Name, "delete_entities")
                .with(Field::Context, "memory"),
            Document::default()
                .with(Field::Name, "create_entities")
                .with(Field::Context, "memory"),
        ];
        let servers = [server_document(&["memory"], &[], [])];
        let ranker = Ranker::new(&tools, vec![0, 0], &servers);
        let hits = ranker.search("memory about Alice", 2);
        assert_eq!(hits[0].own, hits[1].own, "equal by their own text");
        assert_eq!((hits[0].doc, hits[1].doc), (1, 0));
        let without = Weights {
            verb: 0.0,
            ..Weights::FITTED
        };
        let hits = ranker.search_with("memory about Alice", 2, &without);
        assert_eq!(hits[0].score, hits[1].score, "a tie, then");
        assert_eq!((hits[0].doc, hits[1].doc), (1, 0));
        let hits = ranker.search("erase from memory", 2);
        assert_eq!(hits[0].doc, 0, "asked to delete");
    }
}
