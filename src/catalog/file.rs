//! The catalog's file (docs/reference.md §9): where it lives on each system,
//! reading it (a corrupt or foreign file is reported and ignored), and
//! writing it atomically (a new file renamed over the old one, so a crash
//! mid-write leaves the old catalog whole).
//!
//! One file per config, named by a hash of the config's canonical path. It
//! holds toolbox and server names, definition keys (hashes), tools and times;
//! no command, argument or environment value.

use super::Listing;
use crate::sha256;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// What the file says it is; any other value is a foreign file.
const FORMAT: &str = "mcp-workbench-catalog/1";

#[derive(Serialize, Deserialize)]
struct Document {
    format: String,
    /// The canonical path of the config this catalog belongs to.
    config: String,
    servers: Vec<Listing>,
}

/// The user's cache folder for the workbench on this system, from the
/// environment (`lookup`): `$XDG_CACHE_HOME/mcp-workbench`, else
/// `~/.cache/mcp-workbench`; macOS `~/Library/Caches/mcp-workbench`;
/// Windows `%LOCALAPPDATA%\mcp-workbench\cache`. `None` when the variables it
/// needs are unset.
pub(crate) fn cache_dir(lookup: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |name: &str| lookup(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if cfg!(windows) {
        return set("LOCALAPPDATA").map(|d| d.join("mcp-workbench").join("cache"));
    }
    if cfg!(target_os = "macos") {
        return set("HOME").map(|h| h.join("Library/Caches/mcp-workbench"));
    }
    match set("XDG_CACHE_HOME").filter(|p| p.is_absolute()) {
        Some(dir) => Some(dir.join("mcp-workbench")),
        None => set("HOME").map(|h| h.join(".cache/mcp-workbench")),
    }
}

/// The catalog file of config `config` (its canonical path) in `dir`.
pub(crate) fn path_in(dir: &Path, config: &str) -> PathBuf {
    let hash = sha256::hex(config.as_bytes());
    dir.join(format!("catalog-{}.json", &hash[..16]))
}

/// The listings in `path`, which must belong to `config`. A missing file is
/// an empty catalog; a file that cannot be read, is not a catalog or belongs
/// to another config is an error saying so (the caller warns and rebuilds).
pub(crate) fn read(path: &Path, config: &str) -> Result<Vec<Listing>, String> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot read it: {e}")),
    };
    let text = String::from_utf8(bytes).map_err(|_| "it is not UTF-8".to_string())?;
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
    Ok(document.servers)
}

/// Writes `servers` as the catalog of `config` to `path`, atomically: into a
/// new file next to it (user-only permissions), flushed, then renamed over it.
pub(crate) fn write(path: &Path, config: &str, servers: &[&Listing]) -> io::Result<()> {
    #[derive(Serialize)]
    struct Out<'a> {
        format: &'a str,
        config: &'a str,
        servers: &'a [&'a Listing],
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    create_private_dir(dir)?;
    let text = serde_json::to_vec(&Out {
        format: FORMAT,
        config,
        servers,
    })?;
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("catalog");
    let temporary = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut file = private_file(&temporary)?;
        file.write_all(&text)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&temporary, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)
}

#[cfg(unix)]
fn private_file(path: &Path) -> io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
}

#[cfg(not(unix))]
fn private_file(path: &Path) -> io::Result<fs::File> {
    fs::File::create(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_folder_follows_the_system_conventions() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        let all = env(&[
            ("XDG_CACHE_HOME", "/xdg"),
            ("HOME", "/home/u"),
            ("LOCALAPPDATA", "C:\\Users\\u\\AppData\\Local"),
        ]);
        let dir = cache_dir(&all).unwrap();
        if cfg!(windows) {
            assert!(dir.ends_with("mcp-workbench/cache"));
        } else if cfg!(target_os = "macos") {
            assert_eq!(dir, Path::new("/home/u/Library/Caches/mcp-workbench"));
        } else {
            assert_eq!(dir, Path::new("/xdg/mcp-workbench"));
            let home = env(&[("XDG_CACHE_HOME", "relative"), ("HOME", "/home/u")]);
            assert_eq!(
                cache_dir(&home).unwrap(),
                Path::new("/home/u/.cache/mcp-workbench")
            );
            assert_eq!(cache_dir(&env(&[("HOME", "")])), None);
        }
    }

    #[test]
    fn a_file_is_one_configs_and_round_trips() {
        let dir =
            std::env::temp_dir().join(format!("mcp-workbench-catalog-file-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let path = path_in(&dir, "/a/config.json");
        assert_ne!(path, path_in(&dir, "/b/config.json"));
        assert!(
            read(&path, "/a/config.json").unwrap().is_empty(),
            "missing: empty"
        );
        let listing = Listing {
            key: "k".into(),
            toolbox: "t".into(),
            server: "s".into(),
            listed_at: 5,
            tools: Vec::new(),
        };
        write(&path, "/a/config.json", &[&listing]).unwrap();
        let back = read(&path, "/a/config.json").unwrap();
        assert_eq!(
            (back.len(), back[0].key.as_str(), back[0].listed_at),
            (1, "k", 5)
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
}
