//! The catalog's file (docs/reference.md §9): one per config in the user's
//! cache folder (`sys::user_dir`), named by a hash of the config's
//! canonical path; reading it (a corrupt or foreign file is reported and
//! ignored) and writing it atomically (`sys::write_atomically`: a crash
//! mid-write leaves the old catalog whole).
//!
//! It holds toolbox and server names, definition keys (hashes), tools and
//! times, and what search learned from use (`learned`: stemmed query words
//! and tool names); no command, argument, result or environment value.

use super::learned::Learned;
use super::Listing;
use crate::pins::sha256;
use crate::sys::{private_dir, write_atomically};
use serde::{Deserialize, Serialize};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

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
}
