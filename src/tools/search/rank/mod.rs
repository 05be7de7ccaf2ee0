//! The relevance model behind `find_tools` (docs/reference.md §5): BM25F
//! over a tool's fields, with words stemmed (`words`) and a table of concepts
//! (`concepts`) that lets a question meet a tool in other words.
//!
//! No IO, no clock: a pure function of the documents and the query. Ties
//! keep the documents' order (the config's), so results are deterministic.
//!
//! Each document has fields of different weight: the tool's name (split
//! into words), its title, its description, its parameters (names and
//! descriptions), and the context (toolbox and server names and
//! descriptions), which is weakest. A field's term frequency is normalised
//! by its length (BM25's `b`), the weighted sum saturates once (`k1`), and
//! each query term counts by its inverse document frequency. A concept token
//! counts `Weights::concept` of a word; the weights are fitted on the
//! retrieval benchmark's tuning queries (`scripts/retrieval-bench --fit`).

mod concepts;
mod forms;
mod lexicon;
mod servers;
mod words;

pub use servers::{server_document, Ranker};

use std::collections::HashMap;

/// The fields of a tool, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Name = 0,
    Title = 1,
    Description = 2,
    Parameters = 3,
    Context = 4,
}

const FIELDS: usize = 5;

/// The ranker's free numbers. `Weights::FITTED` is what `find_tools` uses;
/// the retrieval benchmark fits them (`--fit`) on its tuning queries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    /// Weight of a match in each field.
    pub field: [f64; FIELDS],
    /// BM25's length normalisation per field.
    pub b: [f64; FIELDS],
    /// BM25's saturation.
    pub k1: f64,
    /// What a concept match counts for, against a word match.
    pub concept: f64,
    /// What a light verb of a query (`show`, `get`) counts for: people put
    /// them in front of what they want, and tool names start with them.
    pub light: f64,
    /// What a lexicon match (a synonym or a word of the family, `lexicon`)
    /// counts for, against a word match.
    pub lexicon: f64,
    /// What the score of a tool's server (`Ranker`) adds to the tool's own.
    pub server: f64,
    /// What a tool whose name's verb is one of the query's words (or their
    /// concepts or lexicon words) gains, in units of the index's largest
    /// idf (`Index::max_idf`); a tool whose verb removes, when the query
    /// asks no such thing, loses as much.
    pub verb: f64,
    /// What a word of a query word's definitions, or a word that a query
    /// word defines (`lexicon::defined`), counts for.
    pub definition: f64,
}

impl Weights {
    pub const FITTED: Weights = Weights {
        field: [6.29, 9.94, 1.46, 0.0396, 0.721],
        b: [0.15, 0.3, 0.85, 0.0736, 0.723],
        k1: 1.22,
        concept: 2.38,
        light: 0.025,
        lexicon: 0.089,
        server: 0.155,
        verb: 0.0435,
        definition: 0.23,
    };
}

/// The text of one document, field by field.
#[derive(Debug, Default, Clone)]
pub struct Document {
    pub fields: Vec<(Field, String)>,
}

impl Document {
    pub fn with(mut self, field: Field, text: &str) -> Document {
        if !text.is_empty() {
            self.fields.push((field, text.to_string()));
        }
        self
    }
}

/// The document of one tool: its name, title and description, the names,
/// descriptions and allowed values (`enum`) of its parameters (the
/// `properties` of `input_schema`, JSON text), and `context` (toolbox and
/// server names and descriptions). `server` (see `ServerWords`) is what
/// every tool of its server says alike: it says which server, not what the
/// tool does, so it counts as context.
pub fn tool_document(
    name: &str,
    title: Option<&str>,
    description: Option<&str>,
    input_schema: &str,
    context: &[&str],
    server: &ServerWords,
) -> Document {
    let mut parameters = String::new();
    if let Ok(schema) = serde_json::from_str::<serde_json::Value>(input_schema) {
        if let Some(properties) = schema.get("properties").and_then(|p| p.as_object()) {
            for (key, property) in properties {
                parameters.push_str(key);
                parameters.push(' ');
                if let Some(text) = property.get("description").and_then(|d| d.as_str()) {
                    parameters.push_str(text);
                    parameters.push(' ');
                }
                let values = property
                    .get("enum")
                    .or_else(|| property.get("items").and_then(|i| i.get("enum")));
                for value in values.and_then(|v| v.as_array()).into_iter().flatten() {
                    if let Some(text) = value.as_str() {
                        parameters.push_str(text);
                        parameters.push(' ');
                    }
                }
            }
        }
    }
    let mut shown_name = name.to_string();
    let mut context = context.join(" ");
    if let Some(prefix) = &server.namespace {
        let parts = words::split(name);
        if parts.len() > 1 && &parts[0] == prefix {
            shown_name = parts[1..].join(" ");
            context.push(' ');
            context.push_str(prefix);
        }
    }
    let description = description.unwrap_or_default();
    let description = match server.boilerplate.is_empty() {
        true => description.to_string(),
        false => words::split(description)
            .into_iter()
            .filter(|w| !server.boilerplate.contains(w))
            .collect::<Vec<_>>()
            .join(" "),
    };
    Document::default()
        .with(Field::Name, &shown_name)
        .with(Field::Title, title.unwrap_or_default())
        .with(Field::Description, &description)
        .with(Field::Parameters, &parameters)
        .with(Field::Context, &context)
}

/// What every tool of one server says alike, which tells the server, not
/// the tool: `namespace`, the first word of at least four in five of its
/// tools' names (`browser_`, `slack_`, `API-`), and `boilerplate`, the words
/// in at least four in five of its tools' descriptions (`Notion | ...
/// Error Responses: 400: Bad request`). Only for servers of three tools or
/// more.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ServerWords {
    pub namespace: Option<String>,
    pub boilerplate: Vec<String>,
}

/// The `ServerWords` of a server whose tools have these names and
/// descriptions.
pub fn server_words<'a>(tools: impl IntoIterator<Item = (&'a str, &'a str)>) -> ServerWords {
    let mut firsts: Vec<String> = Vec::new();
    let mut described: Vec<String> = Vec::new();
    let mut total = 0usize;
    for (name, description) in tools {
        total += 1;
        if let Some(first) = words::split(name).into_iter().next() {
            firsts.push(first);
        }
        let mut seen = words::split(description);
        seen.sort_unstable();
        seen.dedup();
        described.extend(seen);
    }
    if total < 3 {
        return ServerWords::default();
    }
    let common = |mut all: Vec<String>| -> Vec<String> {
        all.sort_unstable();
        all.chunk_by(|a, b| a == b)
            .filter(|group| group.len() * 5 >= total * 4)
            .map(|group| group[0].clone())
            .collect()
    };
    ServerWords {
        namespace: common(firsts).into_iter().next(),
        boilerplate: common(described),
    }
}

/// A term: a stemmed word, or a concept (`Concept`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Term {
    Word(String),
    Concept(u16),
}

/// The terms of `text`: its stemmed words (stop words dropped), then the
/// concepts of its words and of its two-word phrases.
fn terms(text: &str) -> Vec<Term> {
    let stems: Vec<(String, bool)> =
        words::split(&words::with_kinds(&words::without_addresses(text)))
            .into_iter()
            .filter(|w| w.chars().count() > 1 || w.chars().all(|c| c.is_ascii_digit()))
            .map(|w| (words::stem(&w), words::is_stop_word(&w)))
            .collect();
    let mut out = Vec::new();
    for (i, (stem, stop)) in stems.iter().enumerate() {
        if let Some((next, _)) = stems.get(i + 1) {
            out.extend(
                concepts::of_phrase(stem, next)
                    .iter()
                    .map(|&c| Term::Concept(c)),
            );
        }
        if *stop {
            continue;
        }
        out.extend(concepts::of_word(stem).iter().map(|&c| Term::Concept(c)));
        out.push(Term::Word(stem.clone()));
    }
    out
}

/// The words of a query that say what it wants: stemmed, without stop
/// words and light verbs, sorted, without repeats (what search learns by).
pub fn key_words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = words::split(text)
        .into_iter()
        .filter(|w| w.chars().count() > 1 && !words::is_stop_word(w))
        .map(|w| words::stem(&w))
        .filter(|w| !words::is_light_verb(w))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// A name as its words (`read_file`, `readFile` and `read file` alike):
/// how a query that names a tool exactly is recognised.
pub fn name_key(text: &str) -> String {
    words::split(text).join(" ")
}

/// A searchable set of documents, built once and searched many times.
pub struct Index {
    docs: usize,
    /// Per field, the mean length of the documents that have it.
    mean_length: [f64; FIELDS],
    /// Per document and field: its length in terms.
    lengths: Vec<[u32; FIELDS]>,
    /// Term → (document, per field: occurrences).
    postings: HashMap<Term, Vec<(u32, [u16; FIELDS])>>,
    /// Per document, the stem of its name's first word (a tool's verb,
    /// `create` of `create_entities`): a tie's second signal.
    heads: Vec<Option<String>>,
}

/// A document found by a search: its index, its score, and what it scored
/// by its own text (`score` less its server's lift, `Ranker`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub doc: usize,
    pub score: f64,
    pub own: f64,
}

impl Index {
    pub fn new(documents: &[Document]) -> Index {
        let mut lengths = Vec::with_capacity(documents.len());
        let heads = documents
            .iter()
            .map(|d| {
                let name = d.fields.iter().find(|(f, _)| *f == Field::Name)?;
                words::split(&name.1).first().map(|w| words::stem(w))
            })
            .collect();
        let mut postings: HashMap<Term, Vec<(u32, [u16; FIELDS])>> = HashMap::new();
        let (mut total, mut having) = ([0f64; FIELDS], [0f64; FIELDS]);
        for (doc, document) in documents.iter().enumerate() {
            let doc = u32::try_from(doc).unwrap_or(u32::MAX);
            let mut counts: HashMap<Term, [u16; FIELDS]> = HashMap::new();
            let mut length = [0u32; FIELDS];
            for (field, text) in &document.fields {
                let f = *field as usize;
                for term in terms(text) {
                    let slot = &mut counts.entry(term).or_default()[f];
                    *slot = slot.saturating_add(1);
                    length[f] += 1;
                }
            }
            for f in 0..FIELDS {
                if length[f] > 0 {
                    total[f] += f64::from(length[f]);
                    having[f] += 1.0;
                }
            }
            lengths.push(length);
            // Each term's postings stay in document order whatever order
            // the terms come in.
            for (term, tf) in counts {
                postings.entry(term).or_default().push((doc, tf));
            }
        }
        let mut mean_length = [1.0; FIELDS];
        for f in 0..FIELDS {
            if having[f] > 0.0 {
                mean_length[f] = (total[f] / having[f]).max(1.0);
            }
        }
        Index {
            docs: documents.len(),
            mean_length,
            lengths,
            postings,
            heads,
        }
    }

    pub fn len(&self) -> usize {
        self.docs
    }

    /// The largest inverse document frequency a term can have here (a term
    /// of one document): the scale of this index's scores, which grow with
    /// the number of documents.
    pub fn max_idf(&self) -> f64 {
        let n = self.docs as f64;
        (1.0 + (n - 0.5) / 1.5).ln().max(f64::MIN_POSITIVE)
    }

    /// Whether stemmed word `stem` means something here: some document
    /// has it, or it names a concept.
    pub fn knows(&self, stem: &str) -> bool {
        !concepts::of_word(stem).is_empty() || self.postings.contains_key(&Term::Word(stem.into()))
    }

    pub fn is_empty(&self) -> bool {
        self.docs == 0
    }

    /// The best `limit` documents for `query`, best first; equal scores in
    /// document order. Documents that match no term are not returned.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        self.search_with(query, limit, &Weights::FITTED)
    }

    /// `search` with other weights (the benchmark's fitting).
    pub fn search_with(&self, query: &str, limit: usize, w: &Weights) -> Vec<Hit> {
        let mut hits: Vec<Hit> = self
            .scores(query, w)
            .into_iter()
            .enumerate()
            .filter(|(_, s)| *s > 0.0)
            .map(|(doc, score)| Hit {
                doc,
                score,
                own: score,
            })
            .collect();
        // A total order (score, then document): unstable sorting is deterministic.
        hits.sort_unstable_by(|a, b| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc)));
        hits.truncate(limit);
        hits
    }

    /// Every document's score for `query` (0: no match).
    fn scores(&self, query: &str, w: &Weights) -> Vec<f64> {
        self.scores_of(&QueryTerms::of(query, w), w)
    }

    /// Every document's score for a query's terms (0: no match).
    pub(crate) fn scores_of(&self, query: &QueryTerms, w: &Weights) -> Vec<f64> {
        let mut scores = vec![0f64; self.docs];
        for (group, weight) in &query.0 {
            self.add(group, *weight, w, &mut scores);
        }
        scores
    }

    /// Adds to `scores` what the terms of `group`, taken as one term (their
    /// occurrences summed: a word and its synonyms), count for.
    fn add(&self, group: &[Term], weight: f64, w: &Weights, scores: &mut [f64]) {
        let merged: Vec<(u32, [u16; FIELDS])> = match group {
            [one] => match self.postings.get(one) {
                Some(list) => list.clone(),
                None => return,
            },
            many => {
                let mut by_doc: HashMap<u32, [u16; FIELDS]> = HashMap::new();
                for list in many.iter().filter_map(|t| self.postings.get(t)) {
                    for (doc, tf) in list {
                        let slot = by_doc.entry(*doc).or_default();
                        for f in 0..FIELDS {
                            slot[f] = slot[f].saturating_add(tf[f]);
                        }
                    }
                }
                by_doc.into_iter().collect()
            }
        };
        if merged.is_empty() {
            return;
        }
        let n = self.docs as f64;
        let df = merged.len() as f64;
        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        for (doc, tf) in merged {
            let length = &self.lengths[doc as usize];
            let mut weighted = 0.0;
            for f in 0..FIELDS {
                if tf[f] > 0 {
                    let norm = 1.0 - w.b[f] + w.b[f] * f64::from(length[f]) / self.mean_length[f];
                    weighted += w.field[f] * f64::from(tf[f]) / norm;
                }
            }
            scores[doc as usize] += weight * idf * weighted * (w.k1 + 1.0) / (w.k1 + weighted);
        }
    }

    /// What the verb of document `doc`'s name says of `query`: 1 when it
    /// is one of the query's words, their concepts or their lexicon words;
    /// -1 when it removes (`delete`, `drop`: the concept of `forget`) and
    /// the query says no such thing, so that a tool that destroys comes
    /// after one that does not; else 0.
    pub(crate) fn verb_signal(&self, doc: usize, query: &Verbs) -> i8 {
        let Some(Some(head)) = self.heads.get(doc) else {
            return 0;
        };
        let concepts = concepts::of_word(head);
        if query.words.contains(head) || concepts.iter().any(|c| query.concepts.contains(c)) {
            return 1;
        }
        match !query.removes && removes(head) {
            true => -1,
            false => 0,
        }
    }
}

/// Whether stemmed word `word` says to remove (the concept of `delete`).
fn removes(word: &str) -> bool {
    let removal = concepts::of_word(&words::stem("delete"));
    concepts::of_word(word).iter().any(|c| removal.contains(c))
}

/// What a query's words say of a tool name's verb (`Index::verb_signal`).
pub(crate) struct Verbs {
    /// The query's stems (stop words left out, light verbs kept) and their
    /// lexicon words.
    words: Vec<String>,
    /// The concepts of the query's stems.
    concepts: Vec<u16>,
    /// Some word of the query removes.
    removes: bool,
}

impl Verbs {
    pub(crate) fn of(query: &str) -> Verbs {
        let stems: Vec<String> = words::split(query)
            .into_iter()
            .filter(|w| w.chars().count() > 1 && !words::is_stop_word(w))
            .map(|w| words::stem(&w))
            .collect();
        let mut out = Verbs {
            words: Vec::new(),
            concepts: Vec::new(),
            removes: stems.iter().any(|s| removes(s)),
        };
        for stem in &stems {
            out.concepts.extend_from_slice(concepts::of_word(stem));
            out.words.extend(lexicon::related(stem).iter().cloned());
        }
        out.words.extend(stems);
        out
    }
}

/// The weighted term groups of a query, made once for every index it
/// searches: each of its terms alone (a light verb and a concept weigh what
/// `w` says), then, per word, the words the lexicon relates to it that the
/// query does not hold, as one group of `w.lexicon`, and the words of its
/// definitions and the words it defines, as one group of `w.definition`.
pub(crate) struct QueryTerms(Vec<(Vec<Term>, f64)>);

impl QueryTerms {
    pub(crate) fn of(query: &str, w: &Weights) -> QueryTerms {
        QueryTerms(query_terms(query, w))
    }
}

fn query_terms(query: &str, w: &Weights) -> Vec<(Vec<Term>, f64)> {
    let mut out: Vec<(Vec<Term>, f64)> = Vec::new();
    let all = terms(query);
    for term in &all {
        let weight = match term {
            Term::Word(word) if words::is_light_verb(word) => w.light,
            Term::Word(_) => 1.0,
            Term::Concept(_) => w.concept,
        };
        match out.iter_mut().find(|(t, _)| t.len() == 1 && t[0] == *term) {
            Some((_, w)) => *w = w.max(weight),
            None => out.push((vec![term.clone()], weight)),
        }
    }
    if w.lexicon > 0.0 {
        for term in &all {
            let Term::Word(word) = term else { continue };
            if words::is_light_verb(word) {
                continue;
            }
            let group: Vec<Term> = lexicon::related(word)
                .iter()
                .map(|r| Term::Word(r.clone()))
                .filter(|t| !all.contains(t))
                .collect();
            let defined: Vec<Term> = match w.definition > 0.0 {
                true => lexicon::defined(word)
                    .iter()
                    .map(|r| Term::Word(r.clone()))
                    .filter(|t| !all.contains(t) && !group.contains(t))
                    .collect(),
                false => Vec::new(),
            };
            if !group.is_empty() {
                out.push((group, w.lexicon));
            }
            if !defined.is_empty() {
                out.push((defined, w.definition));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str) -> Document {
        Document::default()
            .with(Field::Name, name)
            .with(Field::Description, description)
    }

    fn names<'a>(docs: &'a [Document], hits: &[Hit]) -> Vec<&'a str> {
        hits.iter()
            .map(|h| docs[h.doc].fields[0].1.as_str())
            .collect()
    }

    fn corpus() -> Vec<Document> {
        vec![
            tool(
                "read_file",
                "Read the complete contents of a file from the file system.",
            ),
            tool(
                "list_directory",
                "Get a detailed listing of all files and directories in a specified path.",
            ),
            tool(
                "create_directory",
                "Create a new directory or ensure a directory exists.",
            ),
            tool(
                "browser_take_screenshot",
                "Take a screenshot of the current page.",
            ),
            tool("browser_navigate", "Navigate to a URL"),
            tool(
                "delete_entities",
                "Delete multiple entities and their associated relations from the knowledge graph",
            ),
            tool(
                "create_entities",
                "Create multiple new entities in the knowledge graph",
            ),
            tool(
                "get_current_time",
                "Get current time in a specific timezones",
            ),
        ]
    }

    #[test]
    fn the_tools_own_words_find_it_first() {
        let docs = corpus();
        let index = Index::new(&docs);
        assert_eq!(names(&docs, &index.search("read a file", 1)), ["read_file"]);
        assert_eq!(names(&docs, &index.search("readFile", 1)), ["read_file"]);
        assert_eq!(
            names(&docs, &index.search("current time", 1)),
            ["get_current_time"]
        );
    }

    #[test]
    fn other_words_meet_through_concepts_and_stems() {
        let docs = corpus();
        let index = Index::new(&docs);
        let first = |q: &str| names(&docs, &index.search(q, 1))[0];
        assert_eq!(first("make a new folder"), "create_directory");
        assert_eq!(
            first("capture a picture of the screen"),
            "browser_take_screenshot"
        );
        assert_eq!(first("visit a website"), "browser_navigate");
        assert_eq!(
            first("forget what you remember about Alice"),
            "delete_entities"
        );
    }

    #[test]
    fn ties_keep_document_order_and_nothing_matches_nothing() {
        let docs = vec![
            tool("tool_a", "matching words"),
            tool("tool_b", "matching words"),
        ];
        let index = Index::new(&docs);
        let hits = index.search("matching", 5);
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].score, hits[1].score);
        assert_eq!((hits[0].doc, hits[1].doc), (0, 1));
        assert!(index.search("qwerty", 5).is_empty());
        assert!(index.search("the of and", 5).is_empty());
        assert!(Index::new(&[]).search("x", 5).is_empty());
    }

    #[test]
    fn limit_cuts_and_scores_descend() {
        let docs = corpus();
        let index = Index::new(&docs);
        let hits = index.search("create directory file entities", 3);
        assert_eq!(hits.len(), 3);
        assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    }

    #[test]
    fn a_prefix_every_tool_of_a_server_shares_is_a_namespace() {
        let namespace =
            |names: [&'static str; 3]| server_words(names.into_iter().map(|n| (n, ""))).namespace;
        assert_eq!(
            namespace(["browser_click", "browser_type", "browser_navigate"]).as_deref(),
            Some("browser")
        );
        assert_eq!(namespace(["read_file", "write_file", "edit_file"]), None);
        let two = server_words([("git_add", ""), ("git_log", "")]);
        assert_eq!(two, ServerWords::default(), "too few to tell");
        let server = server_words([
            ("git_log", "Git: show the log"),
            ("git_add", "Git: add the file"),
            ("git_status", "Git: the status"),
        ]);
        assert_eq!(server.boilerplate, ["git", "the"]);
        let doc = tool_document(
            "git_log",
            None,
            Some("Git: show the log"),
            "{}",
            &["vcs"],
            &server,
        );
        assert_eq!(doc.fields[0], (Field::Name, "log".to_string()));
        assert_eq!(doc.fields[1], (Field::Description, "show log".to_string()));
        assert_eq!(doc.fields[2], (Field::Context, "vcs git".to_string()));
    }

    #[test]
    fn allowed_values_of_parameters_are_searched() {
        let schema = r#"{"type":"object","properties":{"action":{"type":"string","enum":["list","rename"]}}}"#;
        let docs = vec![
            tool_document(
                "tabs",
                None,
                Some("Manage tabs"),
                schema,
                &[],
                &ServerWords::default(),
            ),
            tool("other", "Something else"),
        ];
        let index = Index::new(&docs);
        assert_eq!(index.search("rename", 2)[0].doc, 0);
    }

    #[test]
    fn a_name_match_outweighs_a_context_match() {
        let docs = vec![
            Document::default()
                .with(Field::Name, "list_items")
                .with(Field::Context, "weather toolbox"),
            Document::default()
                .with(Field::Name, "get_weather")
                .with(Field::Context, "misc"),
        ];
        let index = Index::new(&docs);
        assert_eq!(index.search("weather", 2)[0].doc, 1);
    }
}
