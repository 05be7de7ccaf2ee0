//! The pins file of one config, in the user's state folder:
//! `pins/<first 16 hex digits of SHA-256 of the config's canonical path>.json`,
//! user-only, written atomically (a private temporary file renamed over
//! it). Two processes share it (the serving workbench records what it held,
//! `pins approve` accepts it), so every change is a read-modify-write under
//! a lock file. `Pins` is what a serving fleet keeps: the file as last read,
//! and the stamp that tells it the file changed (the fleet loop looks once a
//! second, with the config poll).

use super::{definition_hash, fingerprint, server_key, PinFile, ServerPins};
use crate::config::ServerConfig;
use crate::lock;
use crate::pins::sha256;
use crate::protocol::mcp::ToolEntry;
use crate::sys::{self, Stamp, UserDir};
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How long a writer waits for the lock, and when a lock is left over from a
/// process that died holding it.
const LOCK_WAIT: Duration = Duration::from_secs(3);
const LOCK_STALE: Duration = Duration::from_secs(10);

/// The pins file of one config.
pub(crate) struct Store {
    pub path: PathBuf,
    config: String,
}

impl Store {
    /// The store of config file `config` (canonical), in the state folder the
    /// environment `env` names.
    pub(crate) fn for_config(
        config: &Path,
        env: &dyn Fn(&str) -> Option<OsString>,
    ) -> Result<Store, String> {
        let dir = sys::user_dir(UserDir::State, env)?.join("pins");
        let text = config.to_string_lossy();
        let name = &sha256::hex(text.as_bytes())[..16];
        Ok(Store {
            path: dir.join(format!("{name}.json")),
            config: text.into_owned(),
        })
    }

    /// The file; empty when there is none. A file that cannot be read as
    /// pins is an error (it is never overwritten silently).
    pub(crate) fn load(&self) -> Result<PinFile, String> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| format!("{}: not a pins file ({e})", self.path.display())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(self.empty()),
            Err(e) => Err(format!("cannot read {}: {e}", self.path.display())),
        }
    }

    fn empty(&self) -> PinFile {
        PinFile {
            version: 1,
            config: self.config.clone(),
            servers: Default::default(),
        }
    }

    /// Runs `f` on the file under the lock, and writes the file if `f`
    /// says it changed it. Returns what `f` returned, the file, and its
    /// stamp (taken under the lock, so no other writer comes between).
    pub(crate) fn update<R>(
        &self,
        f: impl FnOnce(&mut PinFile) -> (R, bool),
    ) -> Result<(R, PinFile, Option<Stamp>), String> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        sys::private_dir(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let _lock = FileLock::take(&self.path.with_extension("lock"))?;
        let mut file = self.load()?;
        let (out, changed) = f(&mut file);
        if changed {
            let mut bytes = serde_json::to_vec_pretty(&file).unwrap_or_default();
            bytes.push(b'\n');
            sys::write_atomically(&self.path, &bytes)
                .map_err(|e| format!("cannot write {}: {e}", self.path.display()))?;
        }
        Ok((out, file, self.stamp()))
    }

    /// What tells a changed file apart (`None`: there is none).
    pub(crate) fn stamp(&self) -> Option<Stamp> {
        Stamp::of(&self.path)
    }
}

/// A lock file, created exclusively and removed on drop.
struct FileLock(PathBuf);

impl FileLock {
    fn take(path: &Path) -> Result<FileLock, String> {
        let until = Instant::now() + LOCK_WAIT;
        loop {
            match sys::private_file(path) {
                Ok(_) => return Ok(FileLock(path.to_path_buf())),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    let stale = std::fs::metadata(path)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|m| m.elapsed().ok())
                        .is_some_and(|age| age > LOCK_STALE);
                    if stale {
                        let _ = std::fs::remove_file(path);
                        continue;
                    }
                    if Instant::now() >= until {
                        return Err(format!(
                            "{} is held by another process (remove it if none runs)",
                            path.display()
                        ));
                    }
                    thread::sleep(Duration::from_millis(20));
                }
                Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
            }
        }
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// What a serving fleet keeps of its pins file.
pub(crate) struct Pins {
    store: Store,
    /// The file as last read or written.
    current: Mutex<Arc<PinFile>>,
    seen: Mutex<Option<Stamp>>,
}

impl Pins {
    /// The pins of config file `config`, from the process's environment;
    /// `None` (logged) when there is no state folder.
    pub(crate) fn open(config: &Path) -> Option<Pins> {
        let store = match Store::for_config(config, &|name| std::env::var_os(name)) {
            Ok(store) => store,
            Err(e) => {
                log::error!("pinTools: no state folder ({e}); tools are not pinned");
                return None;
            }
        };
        // Before the read: an approval written after it is a change.
        let seen = store.stamp();
        let file = store.load().unwrap_or_else(|e| {
            log::error!("pinTools: {e}; it is left as it is, and nothing is pinned until it is fixed or removed");
            store.empty()
        });
        Some(Pins {
            seen: Mutex::new(seen),
            current: Mutex::new(Arc::new(file)),
            store,
        })
    }

    /// Records a listing of `server` of toolbox `toolbox` (see
    /// `PinFile::record`); the server's pins to judge it by. When the file
    /// cannot be written, the pins as last read judge it (logged).
    pub(crate) fn listed(
        &self,
        toolbox: &str,
        server: &ServerConfig,
        tools: &[ToolEntry],
    ) -> Arc<ServerPins> {
        let key = server_key(toolbox, &server.name);
        let prints: Vec<_> = tools.iter().map(|t| fingerprint(&t.name, &t.raw)).collect();
        let definition = definition_hash(server);
        match self
            .store
            .update(|file| file.record(&key, &definition, &prints))
        {
            Ok((pins, file, stamp)) => {
                *lock(&self.current) = Arc::new(file);
                *lock(&self.seen) = stamp;
                Arc::new(pins)
            }
            Err(e) => {
                log::error!("pinTools: {e}");
                let known = lock(&self.current).servers.get(&key).cloned();
                Arc::new(known.unwrap_or_default())
            }
        }
    }

    /// The file as last read or written: a new one whenever the pins change
    /// (the catalog's search index is rebuilt then).
    pub(crate) fn file(&self) -> Arc<PinFile> {
        Arc::clone(&lock(&self.current))
    }

    /// The pins of server `server` of `toolbox` as last read.
    pub(crate) fn server(&self, toolbox: &str, server: &str) -> Option<Arc<ServerPins>> {
        let key = server_key(toolbox, server);
        lock(&self.current).servers.get(&key).cloned().map(Arc::new)
    }

    /// Whether the file changed since it was last read or written (one
    /// `stat`: what the fleet loop looks at every second).
    pub(crate) fn stamp_changed(&self) -> bool {
        *lock(&self.seen) != self.store.stamp()
    }

    /// Reads the file again if it changed since it was last read or written
    /// (an approval); whether it did.
    pub(crate) fn refresh(&self) -> bool {
        let stamp = self.store.stamp();
        {
            let mut seen = lock(&self.seen);
            if *seen == stamp {
                return false;
            }
            *seen = stamp;
        }
        match self.store.load() {
            Ok(file) => {
                let mut current = lock(&self.current);
                let changed = **current != file;
                *current = Arc::new(file);
                changed
            }
            Err(e) => {
                log::error!("pinTools: {e}; the pins read before stay");
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_per_config_and_survives_a_reload() {
        let dir = std::env::temp_dir().join(format!("pins-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let state = dir.clone().into_os_string();
        let env = move |name: &str| {
            (name == "XDG_STATE_HOME" || name == "LOCALAPPDATA").then(|| state.clone())
        };
        let a = Store::for_config(Path::new("/c/a.json"), &env).unwrap();
        let b = Store::for_config(Path::new("/c/b.json"), &env).unwrap();
        assert_ne!(a.path, b.path);
        assert!(a.stamp().is_none());
        assert_eq!(a.load().unwrap().servers.len(), 0);
        let print = fingerprint(
            "x",
            &serde_json::value::RawValue::from_string(r#"{"name":"x"}"#.into()).unwrap(),
        );
        let (_, file, _) = a
            .update(|f| f.record("t/s", "d", std::slice::from_ref(&print)))
            .unwrap();
        assert_eq!(a.load().unwrap(), file);
        assert_eq!(file.config, "/c/a.json");
        assert!(a.stamp().is_some());
        assert!(!a.path.with_extension("lock").exists(), "the lock is gone");
        // A file that is not pins is an error, never overwritten.
        std::fs::write(&a.path, "not json").unwrap();
        assert!(a.load().unwrap_err().contains("not a pins file"));
        assert!(a.update(|_| ((), true)).is_err());
        assert_eq!(std::fs::read(&a.path).unwrap(), b"not json");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
