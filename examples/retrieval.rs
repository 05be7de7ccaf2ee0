//! The retrieval benchmark of `find_tools` (run by `scripts/retrieval-bench`):
//! the tools of real servers (`testdata/retrieval/catalog.json`, grouped into
//! toolboxes by `toolboxes.json`) searched with a query set, each query
//! marked with the tools that answer it: `queries.json` (v1, the set the
//! ranker was first tuned on), `queries-v2.json` (v2, written in a model's
//! words before any ranking was run on it) or `queries-v3.json` (v3, written
//! blind from the catalog alone by a session that saw neither the ranker
//! nor the other sets), each split into a tuning half and a test half. Only
//! the tuning halves are for changing the ranker; a test half is run for the
//! report (`--split test`). `--data livemcpbench` runs
//! a second set no one here wrote, derived from LiveMCPBench's published
//! tasks and tools (`scripts/retrieval-livemcpbench`), all of it untuned.
//!
//! Prints recall@1, recall@5 and MRR for the workbench's ranker (`rank`, fed
//! exactly as `find_tools` feeds it) and for a plain BM25 over name and
//! description (the baseline), for queries in the tools' own words and for
//! paraphrases; the mean size of a default `find_tools` result; then the
//! time to build and search a catalog of about 1,000 tools. Not a test:
//! nothing here passes or fails.

// A measuring tool: it reports on stdout (clippy.toml).
#![allow(clippy::print_stdout)]
// A benchmark: a failure is a panic with its reason, not an answer to handle.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_workbench::tools::search::rank::{self, Ranker};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

struct Tool {
    id: String,
    name: String,
    description: String,
    document: rank::Document,
    /// Its server's index in `Tools::servers`, and its toolbox.
    server: usize,
    toolbox: String,
    /// Its `find_tools` entry (toolbox, server, tool, description,
    /// inputSchema, score): what a full result shows of it.
    shown: String,
}

/// The catalog's tools and its servers' documents, as `find_tools` builds
/// them.
struct Tools {
    tools: Vec<Tool>,
    servers: Vec<rank::Document>,
}

impl Tools {
    fn ranker(&self) -> Ranker {
        let documents: Vec<rank::Document> =
            self.tools.iter().map(|t| t.document.clone()).collect();
        let server_of = self.tools.iter().map(|t| t.server).collect();
        Ranker::new(&documents, server_of, &self.servers)
    }
}

fn load(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("JSON")
}

/// The tools of the catalog, as `find_tools` would index them.
fn tools(root: &Path, copies: usize) -> Tools {
    let catalog = load(&root.join("catalog.json"));
    let toolboxes = load(&root.join("toolboxes.json"));
    let mut toolbox_of = HashMap::new();
    for (name, toolbox) in toolboxes.as_object().expect("toolboxes") {
        for server in toolbox["servers"].as_array().expect("servers") {
            let description = toolbox["description"].as_str().unwrap_or_default();
            toolbox_of.insert(
                server.as_str().unwrap_or_default().to_string(),
                (name.clone(), description.to_string()),
            );
        }
    }
    let mut out = Vec::new();
    let mut servers = Vec::new();
    for copy in 0..copies {
        for server in catalog["servers"].as_array().expect("servers") {
            let server_name = server["name"].as_str().unwrap_or_default();
            let (toolbox, toolbox_description) = &toolbox_of[server_name];
            let shown_server = if copy == 0 {
                server_name.to_string()
            } else {
                format!("{server_name}{copy}")
            };
            let listed = server["tools"].as_array().expect("tools");
            let alike = rank::server_words(listed.iter().map(|t| {
                (
                    t["name"].as_str().unwrap_or_default(),
                    t["description"].as_str().unwrap_or_default(),
                )
            }));
            servers.push(rank::server_document(
                &[shown_server.as_str(), toolbox.as_str()],
                &[
                    toolbox_description.as_str(),
                    server["instructions"].as_str().unwrap_or_default(),
                ],
                listed.iter().map(|t| {
                    (
                        t["name"].as_str().unwrap_or_default(),
                        t["description"].as_str().unwrap_or_default(),
                    )
                }),
            ));
            for tool in listed {
                let name = tool["name"].as_str().unwrap_or_default();
                let description = tool["description"].as_str().unwrap_or_default();
                let schema = tool
                    .get("inputSchema")
                    .map(Value::to_string)
                    .unwrap_or_default();
                let context = [
                    toolbox.as_str(),
                    toolbox_description.as_str(),
                    shown_server.as_str(),
                ];
                out.push(Tool {
                    id: format!("{shown_server}/{name}"),
                    name: name.to_string(),
                    description: description.to_string(),
                    document: rank::tool_document(
                        name,
                        tool["title"].as_str(),
                        Some(description),
                        &schema,
                        &context,
                        &alike,
                    ),
                    server: servers.len() - 1,
                    toolbox: toolbox.clone(),
                    shown: serde_json::json!({
                        "toolbox": toolbox,
                        "server": shown_server,
                        "tool": name,
                        "description": description,
                        "inputSchema": tool.get("inputSchema").cloned().unwrap_or_default(),
                        "score": 12.345,
                    })
                    .to_string(),
                });
            }
        }
    }
    Tools {
        tools: out,
        servers,
    }
}

/// Plain BM25 over name and description: lowercase words split at anything
/// that is not a letter or digit, no stemming, no stop words, no concepts.
struct Baseline {
    docs: Vec<Vec<String>>,
    df: HashMap<String, usize>,
    mean: f64,
}

fn plain_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

impl Baseline {
    fn new(tools: &[Tool]) -> Baseline {
        let docs: Vec<Vec<String>> = tools
            .iter()
            .map(|t| plain_words(&format!("{} {}", t.name, t.description)))
            .collect();
        let mut df = HashMap::new();
        for doc in &docs {
            let mut seen: Vec<&String> = doc.iter().collect();
            seen.sort();
            seen.dedup();
            for w in seen {
                *df.entry(w.clone()).or_insert(0) += 1;
            }
        }
        let mean = docs.iter().map(Vec::len).sum::<usize>() as f64 / docs.len().max(1) as f64;
        Baseline { docs, df, mean }
    }

    fn search(&self, query: &str) -> Vec<usize> {
        let (k1, b, n) = (1.2, 0.75, self.docs.len() as f64);
        let mut terms = plain_words(query);
        terms.sort();
        terms.dedup();
        let mut scored: Vec<(usize, f64)> = self
            .docs
            .iter()
            .enumerate()
            .map(|(i, doc)| {
                let score = terms
                    .iter()
                    .map(|t| {
                        let tf = doc.iter().filter(|w| *w == t).count() as f64;
                        let df = *self.df.get(t).unwrap_or(&0) as f64;
                        if tf == 0.0 {
                            return 0.0;
                        }
                        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                        idf * tf * (k1 + 1.0)
                            / (tf + k1 * (1.0 - b + b * doc.len() as f64 / self.mean))
                    })
                    .sum::<f64>();
                (i, score)
            })
            .filter(|(_, s)| *s > 0.0)
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.into_iter().map(|(i, _)| i).collect()
    }
}

#[derive(Default)]
struct Score {
    n: usize,
    at1: usize,
    at5: usize,
    rr: f64,
}

impl Score {
    fn add(&mut self, ranked: &[String], relevant: &[String]) {
        self.n += 1;
        if let Some(rank) = ranked.iter().take(50).position(|id| relevant.contains(id)) {
            self.at1 += usize::from(rank == 0);
            self.at5 += usize::from(rank < 5);
            self.rr += 1.0 / (rank as f64 + 1.0);
        }
    }

    fn show(&self) -> String {
        let n = self.n.max(1) as f64;
        format!(
            "{:>3} queries  recall@1 {:.2}  recall@5 {:.2}  MRR {:.2}",
            self.n,
            self.at1 as f64 / n,
            self.at5 as f64 / n,
            self.rr / n
        )
    }
}

/// What to run: which query file, which split, and whether to list misses.
struct Options {
    queries: String,
    split: String,
    verbose: bool,
    fit: bool,
    /// Ranks and answers as before servers, the lexicon and brief answers.
    before: bool,
    /// Where to write each query's ranked tools, a JSON line each
    /// (`--dump FILE`: for analysis outside, `scripts/retrieval.d/word-vectors.py`).
    dump: Option<std::path::PathBuf>,
    /// The folder of testdata/retrieval/ holding the catalog and queries
    /// (`--data livemcpbench`: the set derived from LiveMCPBench), or "".
    data: String,
}

fn options() -> Options {
    let mut options = Options {
        queries: "queries-v2.json".into(),
        split: "tune".into(),
        verbose: false,
        fit: false,
        before: false,
        dump: None,
        data: String::new(),
    };
    let mut split = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-v" => options.verbose = true,
            "--fit" => options.fit = true,
            "--before" => options.before = true,
            "--queries" => {
                options.queries = match args.next().as_deref() {
                    Some("v1") => "queries.json".into(),
                    Some("v2") => "queries-v2.json".into(),
                    Some("v3") => "queries-v3.json".into(),
                    Some(other) => other.into(),
                    None => panic!("--queries needs v1, v2, v3 or a file of testdata/retrieval"),
                }
            }
            "--split" => split = Some(args.next().expect("--split needs tune, test or all")),
            "--dump" => options.dump = Some(args.next().expect("--dump needs a file").into()),
            "--data" => {
                options.data = args.next().expect("--data needs a folder of testdata/retrieval");
                options.queries = "queries.json".into();
            }
            other => panic!(
                "unknown argument {other:?}: [-v] [--fit] [--before] [--dump FILE] [--data DIR] [--queries v1|v2|v3|FILE] [--split tune|test|all]"
            ),
        }
    }
    // Another set is never tuned on: all of it is its test half.
    options.split = split.unwrap_or(match options.data.is_empty() {
        true => "tune".into(),
        false => "test".into(),
    });
    options
}

/// The queries and the tools that answer them, as tool indexes.
type Judged = Vec<(String, Vec<usize>)>;

fn judged(tools: &[Tool], queries: &[&Value]) -> Judged {
    queries
        .iter()
        .map(|q| {
            let relevant: Vec<usize> = q["relevant"]
                .as_array()
                .expect("relevant")
                .iter()
                .filter_map(|r| tools.iter().position(|t| Some(t.id.as_str()) == r.as_str()))
                .collect();
            (
                q["query"].as_str().unwrap_or_default().to_string(),
                relevant,
            )
        })
        .collect()
}

/// The size of the default `find_tools` result for `hits` (the first 8),
/// rendered as `find_tools` renders it: full entries with a note when the
/// best score is weak, or, when the best are one server's tools with no
/// clear winner (`Ranker::undecided`), those tools in brief (the first line
/// of the description, at most 160 characters) with a note. Leaves out
/// the toolboxes a weak result lists (a few dozen bytes).
fn result_size(
    query: &str,
    tools: &[Tool],
    index: &Ranker,
    hits: &[rank::Hit],
    brief: bool,
) -> usize {
    const NOTE: usize = 212;
    let hits = &hits[..hits.len().min(8)];
    let best = hits.iter().map(|h| h.own).fold(0.0, f64::max);
    let weak = best < 1.75 * index.tools().max_idf();
    let undecided = index.undecided(hits).filter(|_| brief);
    let entries: Vec<String> = match undecided {
        Some(n) => hits[..n]
            .iter()
            .map(|h| {
                let tool = &tools[h.doc];
                let (server, _) = tool.id.split_once('/').unwrap_or_default();
                let line = tool
                    .description
                    .trim_start()
                    .lines()
                    .next()
                    .unwrap_or_default();
                let line: String = line.chars().take(160).collect();
                serde_json::json!({"toolbox": tool.toolbox, "server": server,
                    "tool": tool.name, "description": line})
                .to_string()
            })
            .collect(),
        None => hits.iter().map(|h| tools[h.doc].shown.clone()).collect(),
    };
    let note = weak || undecided.is_some();
    serde_json::json!({"query": query}).to_string().len()
        + 10
        + entries.iter().map(|e| e.len() + 1).sum::<usize>()
        + if note { NOTE } else { 0 }
}

/// MRR (with recall@5 as a small tie-breaker) of `weights` on `queries`.
fn objective(index: &Ranker, queries: &Judged, weights: &rank::Weights) -> f64 {
    let mut total = 0.0;
    for (query, relevant) in queries {
        let hits = index.search_with(query, 50, weights);
        if let Some(rank) = hits.iter().position(|h| relevant.contains(&h.doc)) {
            total += 1.0 / (rank as f64 + 1.0) + if rank < 5 { 0.1 } else { 0.0 };
        }
    }
    total / queries.len().max(1) as f64
}

/// Fits the ranker's weights by coordinate ascent on the tuning queries
/// (all of v1 and the tuning halves of v2 and v3, never a test half), and
/// prints them.
fn fit(root: &Path, tools: &[Tool], index: &Ranker) {
    let v1 = load(&root.join("queries.json"));
    let v2 = load(&root.join("queries-v2.json"));
    let v3 = load(&root.join("queries-v3.json"));
    let tuning: Vec<&Value> = v1
        .as_array()
        .expect("queries")
        .iter()
        .chain(
            [&v2, &v3]
                .into_iter()
                .flat_map(|set| set.as_array().expect("queries"))
                .filter(|q| q["split"] == "tune"),
        )
        .collect();
    let queries = judged(tools, &tuning);
    let mut best = rank::Weights::FITTED;
    let mut score = objective(index, &queries, &best);
    println!(
        "fitting on {} tuning queries; now {score:.4}",
        queries.len()
    );
    for _round in 0..20 {
        let mut improved = false;
        for coordinate in 0..17 {
            for factor in [0.5, 0.7, 0.85, 1.2, 1.4, 2.0] {
                let mut w = best;
                let value = match coordinate {
                    0..=4 => &mut w.field[coordinate],
                    5..=9 => &mut w.b[coordinate - 5],
                    10 => &mut w.k1,
                    11 => &mut w.concept,
                    12 => &mut w.light,
                    13 => &mut w.lexicon,
                    14 => &mut w.server,
                    15 => &mut w.verb,
                    _ => &mut w.definition,
                };
                // A weight at 0 (a signal left out) is tried from small values.
                *value = match *value == 0.0 {
                    true => factor * factor * 0.1,
                    false => *value * factor,
                };
                if (5..=9).contains(&coordinate) {
                    *value = value.clamp(0.0, 1.0);
                }
                let s = objective(index, &queries, &w);
                if s > score + 1e-9 {
                    (best, score, improved) = (w, s, true);
                }
            }
        }
        if !improved {
            break;
        }
    }
    println!("fitted: {score:.4}\n{best:#?}");
}

/// Writes `query` and its ranked tools (id and score) to `file`, a JSON line.
fn dump(file: &mut std::fs::File, query: &Value, hits: &[rank::Hit], tools: &[Tool]) {
    use std::io::Write;
    let ranked: Vec<(&str, f64)> = hits
        .iter()
        .map(|h| (tools[h.doc].id.as_str(), h.score))
        .collect();
    let line = serde_json::json!({
        "query": query["query"],
        "split": query.get("split"),
        "relevant": query["relevant"],
        "hits": ranked,
    });
    writeln!(file, "{line}").expect("dump");
}

fn main() {
    let options = options();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/retrieval")
        .join(&options.data);
    let catalog = tools(&root, 1);
    let index = catalog.ranker();
    let tools = &catalog.tools;
    if options.fit {
        fit(&root, tools, &index);
        return;
    }
    let queries = load(&root.join(&options.queries));
    // A query without a split (the first set) belongs to every split.
    let queries: Vec<&Value> = queries
        .as_array()
        .expect("queries")
        .iter()
        .filter(|q| {
            options.split == "all"
                || q.get("split")
                    .and_then(Value::as_str)
                    .is_none_or(|s| s == options.split)
        })
        .collect();
    let baseline = Baseline::new(tools);
    let mut dumped = options.dump.as_ref().map(|path| {
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    });
    let weights = match options.before {
        // The weights fitted before servers and the lexicon (commit d3f4818).
        true => rank::Weights {
            field: [5.2, 7.2, 0.85, 0.022, 1.45],
            b: [0.59, 0.3, 1.0, 0.54, 0.25],
            k1: 1.22,
            concept: 1.98,
            light: 0.025,
            lexicon: 0.0,
            server: 0.0,
            verb: 0.0,
            definition: 0.0,
        },
        false => rank::Weights::FITTED,
    };
    // The size of a default `find_tools` result (limit 8), in bytes.
    let mut sizes = Vec::new();
    let mut scores: HashMap<(&str, &str), Score> = HashMap::new();
    // The best score of each query, and whether the first result was right:
    // what `find_tools`'s weak-match threshold is set from.
    let mut best: Vec<(f64, bool)> = Vec::new();
    for query in &queries {
        let text = query["query"].as_str().unwrap_or_default();
        let kind = query["kind"].as_str().unwrap_or_default();
        let relevant: Vec<String> = query["relevant"]
            .as_array()
            .expect("relevant")
            .iter()
            .map(|r| r.as_str().unwrap_or_default().to_string())
            .collect();
        let hits = index.search_with(text, 50, &weights);
        if let Some(file) = &mut dumped {
            dump(file, query, &hits, tools);
        }
        let ours: Vec<String> = hits.iter().map(|h| tools[h.doc].id.clone()).collect();
        if options.verbose {
            if let Some(n) = index.undecided(&hits[..hits.len().min(8)]) {
                println!("brief [{n}] {text:?}: {:?}", &ours[..n]);
            }
        }
        sizes.push(result_size(text, tools, &index, &hits, !options.before));
        best.push((
            hits.iter().map(|h| h.own).fold(0.0, f64::max) / index.tools().max_idf(),
            ours.first().is_some_and(|id| relevant.contains(id)),
        ));
        let theirs: Vec<String> = baseline
            .search(text)
            .iter()
            .map(|&i| tools[i].id.clone())
            .collect();
        for (ranker, ranked) in [("find_tools", &ours), ("plain BM25", &theirs)] {
            scores
                .entry((ranker, kind))
                .or_default()
                .add(ranked, &relevant);
            scores
                .entry((ranker, "all"))
                .or_default()
                .add(ranked, &relevant);
        }
        if options.verbose && !ours.iter().take(1).any(|id| relevant.contains(id)) {
            let rank = ours.iter().position(|id| relevant.contains(id));
            println!(
                "miss@1 [{kind}] {text:?} (rank {}): want {relevant:?}, got {:?}",
                rank.map_or("none".into(), |r| (r + 1).to_string()),
                &ours[..ours.len().min(3)]
            );
        }
    }
    println!(
        "catalog: {} tools of {} real servers; {}, split {}: {} queries",
        tools.len(),
        catalog.servers.len(),
        options.queries,
        options.split,
        queries.len()
    );
    for ranker in ["find_tools", "plain BM25"] {
        for kind in ["own", "paraphrase", "task", "all"] {
            let label = match kind {
                "own" => "tools' own words",
                "paraphrase" => "paraphrases",
                "task" => "tasks (any tool)",
                _ => "all",
            };
            if let Some(score) = scores.get(&(ranker, kind)) {
                println!("{ranker:<11} {label:<17} {}", score.show());
            }
        }
    }

    println!(
        "default find_tools result: {:.0} bytes on average, {} at most",
        sizes.iter().sum::<usize>() as f64 / sizes.len().max(1) as f64,
        sizes.iter().max().copied().unwrap_or(0)
    );
    best.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut line = String::from("best score / max idf:");
    for cut in [1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0] {
        let under: Vec<&(f64, bool)> = best.iter().filter(|(s, _)| *s < cut).collect();
        let right = under.iter().filter(|(_, r)| *r).count();
        line.push_str(&format!("  <{cut}: {right} right of {}", under.len()));
    }
    println!("{line}");

    // About 1,000 tools: the catalog six times over, as six sets of servers.
    let big = self::tools(&root, 6);
    let started = Instant::now();
    let index = big.ranker();
    let build = started.elapsed();
    let rounds = 20;
    let started = Instant::now();
    let mut found = 0;
    for _ in 0..rounds {
        for query in &queries {
            found += index
                .search(query["query"].as_str().unwrap_or_default(), 8)
                .len();
        }
    }
    let per_search = started.elapsed() / (rounds * queries.len().max(1)) as u32;
    println!(
        "{} tools: index built in {:.2} ms, one search (limit 8) takes {:.1} us on average ({found} results)",
        big.tools.len(),
        build.as_secs_f64() * 1e3,
        per_search.as_secs_f64() * 1e6
    );
}
