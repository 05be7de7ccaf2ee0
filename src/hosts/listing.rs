//! Starts the imported stdio servers once, as `check` and `index` do (a few
//! at a time, each within a short start-up limit), to read their
//! `instructions` and tool names for the toolboxes' descriptions, then
//! stops them. A server that is disabled, remote, from a project's own file,
//! or that cannot start gets no listing, and a note that says why. Nothing
//! is written: not the catalog, not the pins.

use super::describe::Listing;
use super::entry::Entry;
use crate::config;
use crate::config::ordered_json::Node;
use crate::fleet::launch::{self, Launcher};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The longest a server may take to start and list its tools here.
pub(crate) const START_LIMIT: Duration = Duration::from_secs(10);
/// At most this many servers start at once.
const PARALLEL: usize = 8;

/// One server to list: its name (a valid one: its toolbox's) and entry,
/// or why it is not started.
pub(crate) struct Job<'a> {
    pub name: &'a str,
    pub entry: &'a Entry,
    pub skip: Option<String>,
}

/// The listing of each job, or why there is none, in the order of `jobs`;
/// relative paths in the entries are taken from `folder` (the workbench
/// config's). `interrupted` is asked between batches.
pub(crate) fn list(
    jobs: &[Job<'_>],
    folder: &Path,
    launcher: &Arc<Launcher>,
    interrupted: &dyn Fn() -> bool,
) -> Vec<Result<Listing, String>> {
    let mut results: Vec<Result<Listing, String>> = Vec::with_capacity(jobs.len());
    for batch in jobs.chunks(PARALLEL) {
        if interrupted() {
            results.extend(batch.iter().map(|_| Err("interrupted".to_string())));
            continue;
        }
        let mut specs = Vec::new();
        let mut slots = Vec::new();
        for job in batch {
            let spec = match &job.skip {
                Some(why) => Err(why.clone()),
                None => spec(job, folder),
            };
            slots.push(spec.as_ref().err().cloned());
            if let Ok(spec) = spec {
                specs.push(spec);
            }
        }
        let mut started = launcher.start_all(specs).into_iter();
        let mut conns = Vec::new();
        for slot in slots {
            results.push(match slot {
                Some(why) => Err(why),
                None => match started.next() {
                    Some(Ok(s)) => {
                        conns.push(Arc::clone(&s.conn));
                        Ok(Listing {
                            instructions: s.instructions,
                            tools: s.tools.into_iter().map(|t| t.name).collect(),
                        })
                    }
                    Some(Err(why)) => Err(first_line(&why)),
                    None => Err("internal error: no start result".to_string()),
                },
            });
        }
        launch::stop_all(&conns, "");
    }
    results
}

/// The start spec of a job's entry, read as the config would read it.
fn spec(job: &Job<'_>, folder: &Path) -> Result<crate::downstream::Spec, String> {
    let root = Node::Object(vec![(
        "toolboxes".into(),
        Node::Object(vec![(
            job.name.to_string(),
            Node::Object(vec![
                ("description".into(), Node::String("imported".into())),
                (
                    "mcpServers".into(),
                    Node::Object(vec![(job.name.to_string(), job.entry.node())]),
                ),
            ]),
        )]),
    )]);
    let bytes = serde_json::to_vec(&root).map_err(|e| e.to_string())?;
    let loaded = config::parse(&bytes, Path::new("import"), folder).map_err(|e| {
        e.problems
            .first()
            .map_or_else(|| "it does not load".to_string(), |p| p.message.clone())
    })?;
    let server = loaded
        .config
        .toolboxes
        .first()
        .and_then(|t| t.servers.first())
        .ok_or("it does not load")?;
    let mut spec = launch::resolve(job.name, server, None).map_err(|e| e.join("; "))?;
    spec.startup_timeout = spec.startup_timeout.min(START_LIMIT);
    Ok(spec)
}

/// A start failure's first line (the stderr tail that follows may hold
/// anything the server printed).
fn first_line(why: &str) -> String {
    let line = why.lines().next().unwrap_or(why);
    let cut: String = line.chars().take(300).collect();
    cut
}
