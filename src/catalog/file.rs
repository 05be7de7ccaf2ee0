//! The catalog's file (docs/reference.md §9): one per config in the user's
//! cache folder (`sys::user_dir`), named by a hash of the config's
//! canonical path; reading it (a corrupt or foreign file is reported and
//! ignored) and writing it atomically (`sys::write_atomically`: a crash
//! mid-write leaves the old catalog whole).
//!
//! The writes of the folder's catalogs take turns across the user's
//! processes (`lock`: a `sys::FileLock` on `catalog.lock` in the folder),
//! held from reading a catalog to writing it back (and pruning), so that a
//! workbench never writes over what another wrote after it read the file.
//!
//! It holds toolbox and server names, definition keys (hashes), tools, the
//! servers' `instructions` and times, and what search learned from use (`learned`: stemmed query words
//! and tool names); no command, argument, result or environment value.
//!
//! Old files are pruned (`prune`), once per process, when it first writes
//! its catalog: the other catalog files of the folder go when the config
//! they belong to no longer exists (moved, renamed or deleted: its catalog
//! can never be read again, since files are named by the config's path), or
//! when nothing wrote them for `KEEP` (90 days, the age at which a listing
//! is dropped anyway). Only files named as catalogs are touched; within a
//! file, a listing not renewed for `KEEP` is dropped when it is written.

use super::learned::Learned;
use super::Listing;
use crate::pins::sha256;
use crate::sys::{private_dir, write_atomically, FileLock};
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// What the file says it is; any other value is a foreign file.
const FORMAT: &str = "mcp-workbench-catalog/1";

#[derive(Deserialize)]
struct Document {
    format: String,
    /// The canonical path of the config this catalog belongs to.
    config: String,
    servers: Vec<Listing>,
    /// Absent from files written before search learned from use.
    #[serde(default)]
    learned: Learned,
}

/// How long a write waits for another process's write of the folder's
/// catalogs (a read, a merge and one atomic write: milliseconds, unless the
/// disk is stuck) before it gives up (the catalog stays in memory).
pub(crate) const LOCK_WAIT: Duration = Duration::from_secs(10);

/// The lock of the catalog files beside `path` (every config's, and
/// `prune`'s), between the user's processes, waiting at most `wait` for
/// another holder; held until dropped. The folder is created if missing.
pub(crate) fn lock(path: &Path, wait: Duration) -> io::Result<FileLock> {
    let dir = path.parent().unwrap_or(Path::new("."));
    private_dir(dir)?;
    FileLock::take(&dir.join("catalog.lock"), wait)
}

/// The catalog file of config `config` (its canonical path) in cache folder `dir`.
pub(crate) fn path_in(dir: &Path, config: &str) -> PathBuf {
    let hash = sha256::hex(config.as_bytes());
    dir.join(format!("catalog-{}.json", &hash[..16]))
}

/// The listings in `path`, which must belong to `config`. A missing file is
/// an empty catalog; a file that cannot be read, is not a catalog or belongs
/// to another config is an error saying so (the caller warns and rebuilds).
pub(crate) fn read(path: &Path, config: &str) -> Result<(Vec<Listing>, Learned), String> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Default::default()),
        Err(e) => return Err(format!("cannot read it: {e}")),
    };
    let document: Document =
        serde_json::from_str(&text).map_err(|e| format!("it is not a catalog: {e}"))?;
    if document.format != FORMAT {
        return Err(format!(
            "its format is '{}', not '{FORMAT}'",
            document.format
        ));
    }
    if document.config != config {
        return Err(format!("it belongs to config {}", document.config));
    }
    Ok((document.servers, document.learned))
}

/// Writes `servers` and `learned` as the catalog of `config` to `path`,
/// atomically, in a folder only the user can enter.
pub(crate) fn write(
    path: &Path,
    config: &str,
    servers: &[&Listing],
    learned: &Learned,
) -> io::Result<()> {
    #[derive(Serialize)]
    struct Out<'a> {
        format: &'a str,
        config: &'a str,
        servers: &'a [&'a Listing],
        learned: &'a Learned,
    }
    private_dir(path.parent().unwrap_or(Path::new(".")))?;
    let text = serde_json::to_vec(&Out {
        format: FORMAT,
        config,
        servers,
        learned,
    })?;
    write_atomically(path, &text)
}

/// The catalog files in `dir` other than `own` whose config no longer
/// exists, or that nothing wrote since `now - keep`, removed; how many went.
/// A file that cannot be read or removed is left as it is.
pub(crate) fn prune(dir: &Path, own: &Path, keep: Duration, now: SystemTime) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        if path == own || !is_catalog_name(&entry.file_name().to_string_lossy()) {
            continue;
        }
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|at| now.duration_since(at).is_ok_and(|age| age > keep));
        let orphan = config_of(&path).is_some_and(|config| !Path::new(&config).exists());
        if (stale || orphan) && fs::remove_file(&path).is_ok() {
            let why = match orphan {
                true => "its config no longer exists".to_string(),
                false => format!("not written for {} days", keep.as_secs() / 86_400),
            };
            log::debug!("removed the tool catalog {} ({why})", path.display());
            removed += 1;
        }
    }
    removed
}

/// `catalog-` and 16 hex digits, `.json`: the name `path_in` gives.
fn is_catalog_name(name: &str) -> bool {
    name.strip_prefix("catalog-")
        .and_then(|rest| rest.strip_suffix(".json"))
        .is_some_and(|hash| hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The config a catalog file belongs to, read from its head (`write` puts
/// it second, after `format`); `None` when it cannot be read there.
fn config_of(path: &Path) -> Option<String> {
    let mut head = Vec::new();
    fs::File::open(path)
        .ok()?
        .take(HEAD)
        .read_to_end(&mut head)
        .ok()?;
    let text = String::from_utf8_lossy(&head);
    let format = format!("{{\"format\":\"{FORMAT}\",\"config\":");
    let rest = text.strip_prefix(&format)?;
    serde_json::Deserializer::from_str(rest)
        .into_iter::<String>()
        .next()?
        .ok()
}

/// How much of a catalog file `config_of` reads: its format and config.
const HEAD: u64 = 8 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_one_configs_and_round_trips() {
        let dir =
            std::env::temp_dir().join(format!("mcp-workbench-catalog-file-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let path = path_in(&dir, "/a/config.json");
        assert_ne!(path, path_in(&dir, "/b/config.json"));
        assert!(
            read(&path, "/a/config.json").unwrap().0.is_empty(),
            "missing: empty"
        );
        let listing = Listing {
            key: "k".into(),
            toolbox: "t".into(),
            server: "s".into(),
            listed_at: 5,
            tools: vec![serde_json::value::RawValue::from_string(
                r#"{"name":"n","inputSchema":{"z":1.50}}"#.into(),
            )
            .unwrap()],
            instructions: Some("Files.".into()),
        };
        let mut learned = Learned::default();
        learned.record(super::super::learned::Association {
            words: vec!["rememb".into()],
            toolbox: "t".into(),
            server: "s".into(),
            tool: "n".into(),
            at: 7,
        });
        write(&path, "/a/config.json", &[&listing], &learned).unwrap();
        let (back, learned_back) = read(&path, "/a/config.json").unwrap();
        assert_eq!(learned_back, learned);
        assert_eq!(
            (back.len(), back[0].key.as_str(), back[0].listed_at),
            (1, "k", 5)
        );
        assert_eq!(
            back[0].tools[0].get(),
            r#"{"name":"n","inputSchema":{"z":1.50}}"#,
            "the server's bytes"
        );
        let foreign = read(&path, "/b/config.json").unwrap_err();
        assert!(
            foreign.contains("belongs to config /a/config.json"),
            "{foreign}"
        );
        fs::write(&path, "{\"format\": 1").unwrap();
        assert!(read(&path, "/a/config.json")
            .unwrap_err()
            .starts_with("it is not a catalog"));
        let leftovers: Vec<_> = fs::read_dir(&dir).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_write_prunes_the_catalogs_of_configs_gone_and_of_long_ago() {
        let dir = std::env::temp_dir().join(format!(
            "mcp-workbench-catalog-prune-{}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let config = |name: &str| dir.join(name).display().to_string();
        fs::write(dir.join("here.json"), "{}").unwrap();
        fs::write(dir.join("old.json"), "{}").unwrap();
        let learned = Learned::default();
        let catalog = |name: &str| {
            let path = path_in(&dir, &config(name));
            write(&path, &config(name), &[], &learned).unwrap();
            path
        };
        let own = catalog("mine.json");
        let here = catalog("here.json");
        let gone = catalog("gone.json");
        let old = catalog("old.json");
        let ninety_days = Duration::from_secs(90 * 24 * 3600);
        let now = SystemTime::now();
        fs::File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(now - ninety_days - Duration::from_secs(3600))
            .unwrap();
        // Not catalogs by name: never touched, whatever their content or age.
        fs::write(dir.join("catalog-notes.json"), "x").unwrap();
        fs::create_dir_all(dir.join("results")).unwrap();
        assert_eq!(prune(&dir, &own, ninety_days, now), 2);
        assert!(
            own.exists(),
            "its own file stays, though its config is not there"
        );
        assert!(here.exists(), "a config that exists keeps its catalog");
        assert!(!gone.exists(), "the config is gone");
        assert!(!old.exists(), "not written for over 90 days");
        assert!(dir.join("catalog-notes.json").exists());
        assert!(dir.join("results").exists());
        assert_eq!(config_of(&here), Some(config("here.json")));
        fs::remove_dir_all(&dir).unwrap();
    }
}
