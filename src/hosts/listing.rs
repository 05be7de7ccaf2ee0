//! Starts the imported stdio servers once, as `check` and `index` do, to
//! read their `instructions` and tool names for the toolboxes'
//! descriptions, then stops them. Each gets its own `startupTimeoutMs`,
//! never less than the config's default (a package runner on a cold cache
//! downloads first), and up to `PARALLEL` start at once: a worker takes the
//! next server as soon as its last one answered or ran out of time, so the
//! whole listing takes about the longest limit for each `PARALLEL` servers
//! that do not answer. A server that is disabled, remote, from a project's
//! own file, or that cannot start gets no listing, and a note that says why
//! (for one that ran out of time: what to do). Nothing is written: not the
//! catalog, not the pins.

use super::describe::Listing;
use crate::config;
use crate::config::ordered_json::Node;
use crate::downstream::Downstream;
use crate::fleet::launch::{self, Launcher};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

/// At most this many servers start at once.
pub(crate) const PARALLEL: usize = 8;

/// One server to list: its name (a valid one: its toolbox's) and its entry
/// as the workbench's config writes it, or why it is not started.
pub(crate) struct Job<'a> {
    pub name: &'a str,
    pub entry: Node,
    pub skip: Option<String>,
}

/// The listing of each job, or why there is none, in the order of `jobs`;
/// relative paths in the entries are taken from `folder` (the workbench
/// config's). `interrupted` is asked before each start.
pub(crate) fn list(
    jobs: &[Job<'_>],
    folder: &Path,
    launcher: &Arc<Launcher>,
    interrupted: &(dyn Fn() -> bool + Sync),
) -> Vec<Result<Listing, String>> {
    let results: Mutex<Vec<Option<Result<Listing, String>>>> =
        Mutex::new(jobs.iter().map(|job| job.skip.clone().map(Err)).collect());
    let to_start: Vec<usize> = (0..jobs.len())
        .filter(|&i| jobs[i].skip.is_none())
        .collect();
    let next = AtomicUsize::new(0);
    let running: Mutex<Vec<Arc<Downstream>>> = Mutex::new(Vec::new());
    let work = || {
        while let Some(&at) = to_start.get(next.fetch_add(1, Ordering::SeqCst)) {
            let result = if interrupted() {
                Err("interrupted".to_string())
            } else {
                list_one(&jobs[at], folder, launcher, &running)
            };
            lock(&results)[at] = Some(result);
        }
    };
    thread::scope(|scope| {
        for n in 0..PARALLEL.min(to_start.len()) {
            let spawned = thread::Builder::new()
                .name(format!("list {n}"))
                .spawn_scoped(scope, work);
            if spawned.is_err() {
                break;
            }
        }
    });
    // What no worker took (none could be created) runs here.
    work();
    launch::stop_all(&lock(&running), "");
    let results = results.into_inner().unwrap_or_else(PoisonError::into_inner);
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("internal error: not listed".to_string())))
        .collect()
}

/// Starts one job's server, lists it and starts its stop (`running` keeps
/// it, for the caller to wait on).
fn list_one(
    job: &Job<'_>,
    folder: &Path,
    launcher: &Launcher,
    running: &Mutex<Vec<Arc<Downstream>>>,
) -> Result<Listing, String> {
    let spec = spec(job, folder)?;
    let limit = spec.startup_timeout;
    let began = Instant::now();
    match launcher.start_all(vec![spec]).pop() {
        Some(Ok(started)) => {
            started.conn.stop_in_background();
            lock(running).push(started.conn);
            Ok(Listing {
                instructions: started.instructions,
                tools: started.tools.into_iter().map(|t| t.name).collect(),
            })
        }
        Some(Err(_)) if began.elapsed() >= limit => Err(unanswered(limit)),
        Some(Err(why)) => Err(first_line(&why)),
        None => Err("internal error: no start result".to_string()),
    }
}

/// The start spec of a job's entry, read as the config would read it, with
/// its start-up limit (`limit`).
fn spec(job: &Job<'_>, folder: &Path) -> Result<crate::downstream::Spec, String> {
    let root = Node::Object(vec![(
        "toolboxes".into(),
        Node::Object(vec![(
            job.name.to_string(),
            Node::Object(vec![
                ("description".into(), Node::String("imported".into())),
                (
                    "mcpServers".into(),
                    Node::Object(vec![(job.name.to_string(), job.entry.clone())]),
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
    spec.startup_timeout = limit(spec.startup_timeout);
    Ok(spec)
}

/// How long a server with `startupTimeoutMs` `configured` is waited for:
/// that, but never less than the config's default.
fn limit(configured: Duration) -> Duration {
    configured.max(config::DEFAULT_STARTUP_TIMEOUT)
}

/// Why a server that ran out of time at `limit` has no listing, and what to
/// do about it.
fn unanswered(limit: Duration) -> String {
    format!(
        "no answer within {} s (a package runner such as npx or uvx may still be downloading it): \
         run `import` again, or raise its \"startupTimeoutMs\"; once it answers, \
         `import --write` fills in this description",
        limit.as_secs_f64()
    )
}

/// A start failure's first line (the stderr tail that follows may hold
/// anything the server printed).
fn first_line(why: &str) -> String {
    let line = why.lines().next().unwrap_or(why);
    let cut: String = line.chars().take(300).collect();
    cut
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_gets_its_own_limit_but_not_less_than_the_default() {
        assert_eq!(limit(Duration::from_secs(5)), Duration::from_secs(30));
        assert_eq!(limit(Duration::from_secs(90)), Duration::from_secs(90));
        assert_eq!(
            unanswered(Duration::from_millis(30_500)),
            "no answer within 30.5 s (a package runner such as npx or uvx may still be downloading it): \
             run `import` again, or raise its \"startupTimeoutMs\"; once it answers, \
             `import --write` fills in this description"
        );
    }
}
