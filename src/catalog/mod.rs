//! The tool catalog (docs/reference.md §9): every listing the workbench got
//! (open, re-list, wake, `check`, `index`), per server definition, kept in
//! memory and in a file in the user's cache folder, so that `find_tools`
//! searches toolboxes that were never opened in this session, without
//! starting a server.
//!
//! The catalog belongs to the fleet: one per process, shared by every
//! session the process serves. Listings are stored as the server sent them
//! (every tool object, before `toolFilters`); what the model may see of them
//! is decided when a search runs, by `visible::visible`, the one function
//! every view of a server's tools goes through (filters, pins, overrides).
//!
//! It also keeps what search learned from use (`learned`): query words and
//! the tool they meant, never a call's arguments or result.
//!
//! Locks: `listings` and `learned` are held only to read or change them in
//! memory; `file` orders this process's writes (on toolbox workers and the
//! `catalog write` thread, never on the main thread), and `file::lock` the
//! writes of every process of the user: a write holds it from reading the
//! file, merging what another process wrote there, to writing it back, so
//! two workbenches of one config lose nothing of each other's.
//!
//! A write may still be under way when the process ends: the fleet's
//! shutdown waits for it (`settle`, at most `SETTLE`), so what a session
//! learned just before its host left reaches the file.

mod file;
pub(crate) mod key;
pub(crate) mod learned;

use crate::config::expand::Vars;
use crate::config::ServerConfig;
use crate::lock;
use crate::protocol::mcp::{text_of, ToolEntry, ToolFields, ToolHead};
use crate::sys::{user_dir, UserDir};
use learned::{Association, Learned};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Listings older than this are dropped when the file is written.
const KEEP: Duration = Duration::from_secs(90 * 24 * 3600);

/// How long an ending process waits for the catalog's writes (`settle`):
/// one write takes milliseconds; a disk stuck longer does not hold the exit.
pub(crate) const SETTLE: Duration = Duration::from_secs(2);

/// What `find_tools` reads of a tool the model may see.
#[derive(Debug, Clone)]
pub(crate) struct CatalogTool {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub input_schema: Box<RawValue>,
}

#[allow(clippy::expect_used, reason = "valid JSON")]
fn empty_schema() -> Box<RawValue> {
    RawValue::from_string("{\"type\":\"object\"}".into()).expect("valid JSON")
}

impl CatalogTool {
    /// What a search reads of `entry`; a field of an unexpected type is
    /// left out, the others kept.
    pub(crate) fn of(entry: &ToolEntry) -> CatalogTool {
        let fields = ToolFields::read(&entry.raw).unwrap_or_default();
        CatalogTool {
            name: entry.name.clone(),
            title: fields.title.and_then(text_of),
            description: fields.description.and_then(text_of),
            input_schema: fields
                .input_schema
                .filter(|schema| schema.get().starts_with('{'))
                .map_or_else(empty_schema, RawValue::to_owned),
        }
    }
}

/// One server definition's tools, as last listed.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Listing {
    /// `key::of` the definition.
    pub key: String,
    /// Where it was last listed (for people reading the file).
    pub toolbox: String,
    pub server: String,
    /// Milliseconds since the Unix epoch.
    #[serde(rename = "listedAt")]
    pub listed_at: u64,
    /// Each tool object as the server sent it, in its order.
    pub tools: Vec<Box<RawValue>>,
    /// The `instructions` of the server's initialize result, if it gave
    /// any: what the server is for, in its own words (`find_tools` ranks
    /// servers by them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

impl Listing {
    /// The tools as the rest of the workbench holds a listing (the name
    /// read, the object kept); a tool without a name is left out.
    pub(crate) fn entries(&self) -> Vec<ToolEntry> {
        self.tools
            .iter()
            .filter_map(|raw| {
                let head: ToolHead = serde_json::from_str(raw.get()).ok()?;
                Some(ToolEntry {
                    name: head.name,
                    raw: raw.clone(),
                })
            })
            .collect()
    }
}

/// What one server listed: its toolbox's name, its definition, the
/// environment its `${VAR}`s expanded with (`None`: the workbench's own),
/// its tools as it sent them, and the `instructions` of its initialize
/// result (`Some("")`: none; `None`: not seen, as on a re-list, so what was
/// recorded is kept).
pub(crate) type Listed<'a> = (
    &'a str,
    &'a ServerConfig,
    Option<&'a Vars>,
    &'a [ToolEntry],
    Option<&'a str>,
);

/// Every listing by definition key.
pub(crate) type Listings = BTreeMap<String, Arc<Listing>>;

/// The catalog of one process.
#[derive(Default)]
pub(crate) struct Catalog {
    listings: Mutex<Snapshot>,
    /// The file and the config it belongs to, once attached.
    file: Mutex<Option<Attached>>,
    /// What search learned from use.
    learned: Mutex<Learned>,
    /// The writes under way or about to run (`writing`).
    writes: Arc<Writes>,
}

/// How many writes of the catalog are under way or about to run, and the
/// signal that one ended (what `settle` waits on).
#[derive(Default)]
struct Writes {
    count: Mutex<usize>,
    ended: Condvar,
}

/// One write of the catalog under way or about to run (on a thread of its
/// own, say): `Catalog::settle` waits until every one is dropped.
pub(crate) struct Writing(Arc<Writes>);

impl Drop for Writing {
    fn drop(&mut self) {
        let mut count = lock(&self.0.count);
        *count = count.saturating_sub(1);
        self.0.ended.notify_all();
    }
}

#[derive(Default, Clone)]
pub(crate) struct Snapshot {
    pub listings: Arc<Listings>,
    /// Increases at every change.
    pub generation: u64,
}

struct Attached {
    path: PathBuf,
    config: String,
    /// A failed write was reported; later ones are logged at debug level.
    warned: bool,
    /// The folder's old catalog files were pruned (`file::prune`, at the
    /// first write).
    pruned: bool,
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl Catalog {
    /// Keeps the catalog of config file `config` in the user's cache folder:
    /// reads what it holds now, and writes every later listing to it. Without
    /// a cache folder (no `HOME`), the catalog lives in memory only.
    pub(crate) fn attach(&self, config: &Path) {
        let dir = match user_dir(UserDir::Cache, &|name| std::env::var_os(name)) {
            Ok(dir) => dir,
            Err(why) => {
                log::info!("no cache folder ({why}): the tool catalog is kept in memory only");
                return;
            }
        };
        let canonical = std::fs::canonicalize(config)
            .or_else(|_| std::path::absolute(config))
            .unwrap_or_else(|_| config.to_path_buf());
        let config = canonical.display().to_string();
        let path = file::path_in(&dir, &config);
        match file::read(&path, &config) {
            Ok((listings, learned)) => {
                self.merge(listings);
                lock(&self.learned).merge(learned);
            }
            Err(why) => log::warn!(
                "ignoring the tool catalog {} ({why}); it is rebuilt from the next listings",
                path.display()
            ),
        }
        *lock(&self.file) = Some(Attached {
            path,
            config,
            warned: false,
            pruned: false,
        });
    }

    /// The listings now.
    pub(crate) fn snapshot(&self) -> Snapshot {
        lock(&self.listings).clone()
    }

    /// Puts `listings` in, where they are newer than what is there.
    fn merge(&self, listings: Vec<Listing>) {
        let mut current = lock(&self.listings);
        let mut changed = false;
        let map = Arc::make_mut(&mut current.listings);
        for listing in listings {
            let newer = map
                .get(&listing.key)
                .is_none_or(|have| have.listed_at < listing.listed_at);
            if newer {
                map.insert(listing.key.clone(), Arc::new(listing));
                changed = true;
            }
        }
        if changed {
            current.generation += 1;
        }
    }

    /// Remembers that a search's words meant a tool, in memory (`save`
    /// writes it); nothing for a search with no known word.
    pub(crate) fn learn(&self, association: Association) {
        lock(&self.learned).record(association);
    }

    /// The associations similar to a search's known words, most alike first.
    pub(crate) fn learned_for(&self, words: &[String]) -> Vec<Association> {
        lock(&self.learned)
            .matching(words)
            .into_iter()
            .cloned()
            .collect()
    }

    /// Everything learned (`mcp-workbench learned list`).
    pub(crate) fn learned(&self) -> Learned {
        lock(&self.learned).clone()
    }

    /// Forgets everything learned (`mcp-workbench learned clear`); a
    /// running workbench of the config forgets it at its next write.
    pub(crate) fn forget(&self) {
        lock(&self.learned).clear(now_ms());
    }

    /// Records what servers just listed (`remember`), then writes the file.
    pub(crate) fn record(&self, listed: &[Listed<'_>]) {
        if self.remember(listed) {
            self.save();
        }
    }

    /// Records what servers just listed, the tools as the server sent them,
    /// in memory only (`save` writes them); whether anything was recorded.
    pub(crate) fn remember(&self, listed: &[Listed<'_>]) -> bool {
        let at = now_ms();
        let listings: Vec<Listing> = listed
            .iter()
            .filter_map(|(toolbox, server, env, tools, instructions)| {
                Some(Listing {
                    key: key::expanded(server, *env)?,
                    toolbox: toolbox.to_string(),
                    server: server.name.clone(),
                    listed_at: at,
                    tools: tools.iter().map(|t| t.raw.clone()).collect(),
                    instructions: instructions.map(str::to_string),
                })
            })
            .collect();
        if listings.is_empty() {
            return false;
        }
        let mut current = lock(&self.listings);
        let map = Arc::make_mut(&mut current.listings);
        for mut listing in listings {
            match &listing.instructions {
                None => {
                    listing.instructions =
                        map.get(&listing.key).and_then(|l| l.instructions.clone())
                }
                Some(text) if text.is_empty() => listing.instructions = None,
                Some(_) => {}
            }
            map.insert(listing.key.clone(), Arc::new(listing));
        }
        current.generation += 1;
        true
    }

    /// Writes the catalog to its file, with what another process wrote
    /// there meanwhile; a failure is logged (the catalog stays in memory).
    pub(crate) fn save(&self) {
        let _writing = self.writing();
        let mut attached = lock(&self.file);
        let Some(file) = attached.as_mut() else {
            return;
        };
        match self.write_merged(file) {
            Ok(()) => log::debug!("tool catalog written: {}", file.path.display()),
            Err(e) if !file.warned => {
                file.warned = true;
                log::warn!(
                    "cannot write the tool catalog {} ({e}); it is kept in memory",
                    file.path.display()
                );
            }
            Err(e) => log::debug!("cannot write the tool catalog: {e}"),
        }
    }

    /// Under the lock of every process's writes (`file::lock`): reads what
    /// the file holds now into memory, writes the whole back, and prunes
    /// the folder's old catalogs after this process's first write.
    fn write_merged(&self, file: &mut Attached) -> std::io::Result<()> {
        let _held = file::lock(&file.path, file::LOCK_WAIT)?;
        if let Ok((theirs, learned)) = file::read(&file.path, &file.config) {
            self.merge(theirs);
            lock(&self.learned).merge(learned);
        }
        let learned = lock(&self.learned).clone();
        let oldest = now_ms().saturating_sub(u64::try_from(KEEP.as_millis()).unwrap_or(0));
        let snapshot = self.snapshot();
        let kept: Vec<&Listing> = snapshot
            .listings
            .values()
            .map(|l| &**l)
            .filter(|l| l.listed_at >= oldest)
            .collect();
        file::write(&file.path, &file.config, &kept, &learned)?;
        if !std::mem::replace(&mut file.pruned, true) {
            if let Some(dir) = file.path.parent() {
                file::prune(dir, &file.path, KEEP, SystemTime::now());
            }
        }
        Ok(())
    }

    /// Counts a write of the catalog that is about to run, until the
    /// returned `Writing` drops: the caller moves it to the thread that
    /// calls `save`, so that `settle` waits for that write too.
    pub(crate) fn writing(&self) -> Writing {
        *lock(&self.writes.count) += 1;
        Writing(Arc::clone(&self.writes))
    }

    /// Waits until no write of the catalog is under way or about to run, at
    /// most `limit` (before the process exits, which would cut a write on
    /// another thread short); whether none is left. Giving up is logged.
    pub(crate) fn settle(&self, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        let mut count = lock(&self.writes.count);
        while *count > 0 {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                log::warn!(
                    "the tool catalog was still being written after {} ms; exiting without it \
                     (what was learned or listed since its last write is lost)",
                    limit.as_millis()
                );
                return false;
            }
            count = self
                .writes
                .ended
                .wait_timeout(count, left)
                .map(|(count, _)| count)
                .unwrap_or_else(|p| p.into_inner().0);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    fn association(word: &str, at: u64) -> Association {
        Association {
            words: vec![word.into()],
            toolbox: "t".into(),
            server: "s".into(),
            tool: "x".into(),
            at,
        }
    }

    /// Two workbenches of one config, each reading the file and then
    /// writing it back: the second to write must have read what the first
    /// wrote, else what the first learned is gone.
    #[test]
    fn a_write_waits_for_another_processs_and_keeps_what_it_wrote() {
        let dir = std::env::temp_dir().join(format!(
            "mcp-workbench-catalog-turns-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let config = "/a/config.json";
        let path = file::path_in(&dir, config);
        let ours = Catalog::default();
        *lock(&ours.file) = Some(Attached {
            path: path.clone(),
            config: config.into(),
            warned: false,
            pruned: false,
        });
        ours.learn(association("our", 2));
        // Another process is mid-write: it took the lock and read the file.
        let held = file::lock(&path, Duration::from_secs(10)).unwrap();
        let (_, mut theirs) = file::read(&path, config).unwrap();
        let waited = std::thread::scope(|scope| {
            let (ended, end) = mpsc::channel();
            let ours = &ours;
            scope.spawn(move || {
                ours.save();
                let _ = ended.send(());
            });
            // Our write cannot end while they hold the lock (the bound only
            // shows what happens without one: ours ends at once).
            let waited = end.recv_timeout(Duration::from_millis(500)).is_err();
            theirs.record(association("their", 1));
            file::write(&path, config, &[], &theirs).unwrap();
            drop(held);
            waited
        }); // ours ended: the scope joined it
        let (_, learned) = file::read(&path, config).unwrap();
        let words: Vec<&str> = learned
            .entries
            .iter()
            .map(|a| a.words[0].as_str())
            .collect();
        assert_eq!(
            words,
            ["their", "our"],
            "what one of the two learned is lost"
        );
        assert!(waited, "our write did not wait for theirs");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_server_s_instructions_are_kept_until_a_start_says_otherwise() {
        let catalog = Catalog::default();
        let server = crate::config::one_server_toolbox(r#"{"command": "x"}"#)
            .servers
            .remove(0);
        let instructions = |catalog: &Catalog| {
            let snapshot = catalog.snapshot();
            let listing = snapshot.listings.values().next().unwrap();
            listing.instructions.clone()
        };
        catalog.remember(&[("t", &server, None, &[], Some("Remembers facts."))]);
        assert_eq!(instructions(&catalog).as_deref(), Some("Remembers facts."));
        catalog.remember(&[("t", &server, None, &[], None)]);
        assert_eq!(
            instructions(&catalog).as_deref(),
            Some("Remembers facts."),
            "a re-list does not see them: kept"
        );
        catalog.remember(&[("t", &server, None, &[], Some(""))]);
        assert_eq!(instructions(&catalog), None, "a start without any");
    }

    #[test]
    fn settle_waits_for_the_writes_under_way_within_its_limit() {
        let catalog = Catalog::default();
        assert!(catalog.settle(Duration::ZERO), "nothing to wait for");
        let writing = catalog.writing();
        assert!(!catalog.settle(Duration::from_millis(20)), "it gives up");
        std::thread::scope(|scope| {
            scope.spawn(move || drop(writing));
            assert!(catalog.settle(Duration::from_secs(20)));
        });
    }

    #[test]
    fn a_tool_with_odd_fields_keeps_its_name() {
        let entry = |raw: &str| ToolEntry {
            name: "n".into(),
            raw: RawValue::from_string(raw.into()).unwrap(),
        };
        let good = CatalogTool::of(&entry(
            r#"{"name":"n","description":"d","inputSchema":{"type":"object","x":1.50},"outputSchema":{}}"#,
        ));
        assert_eq!(good.description.as_deref(), Some("d"));
        assert_eq!(good.input_schema.get(), r#"{"type":"object","x":1.50}"#);
        let odd = CatalogTool::of(&entry(r#"{"name":"n","description":5,"title":"t"}"#));
        assert_eq!((odd.name.as_str(), odd.description), ("n", None));
        assert_eq!(odd.title.as_deref(), Some("t"));
        // What serde_json cannot read as values costs only that field's decoding.
        let strange = CatalogTool::of(&entry(
            r#"{"name":"n","description":"d\ud800","inputSchema":{"type":"object","maximum":1e400}}"#,
        ));
        assert_eq!(strange.description.as_deref(), Some("d\\ud800"));
        assert_eq!(
            strange.input_schema.get(),
            r#"{"type":"object","maximum":1e400}"#
        );
    }
}
