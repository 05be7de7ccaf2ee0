//! Where a config's shared fleet listens (docs/reference.md §8): a Unix
//! socket in a folder only the user can enter, named after the config's
//! canonical path and the workbench's version, so an upgraded binary starts
//! a fleet of its own while the old one drains. Next to it: the lock that
//! makes two sessions starting together start one fleet, and the fleet's log.

use crate::mcp;
use crate::process;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

/// The files of one config's fleet.
pub(crate) struct Endpoint {
    /// The socket.
    pub socket: PathBuf,
    /// Held while a fleet is started, or while one decides to end.
    lock: PathBuf,
    /// The fleet's stderr.
    pub log: PathBuf,
}

impl Endpoint {
    /// The endpoint of the config at `config` (canonical: a path and a
    /// symlink to it are one config), creating and checking its folder.
    pub(crate) fn of(config: &Path) -> io::Result<Endpoint> {
        let canonical = fs::canonicalize(config)?;
        let dir = folder()?;
        let name = format!(
            "fleet-{}-{:016x}",
            mcp::VERSION,
            fnv1a(canonical.to_string_lossy().as_bytes())
        );
        Ok(Endpoint {
            socket: dir.join(format!("{name}.sock")),
            lock: dir.join(format!("{name}.lock")),
            log: dir.join(format!("{name}.log")),
        })
    }

    /// A connection to the fleet, if one listens.
    pub(crate) fn connect(&self) -> io::Result<UnixStream> {
        UnixStream::connect(&self.socket)
    }

    /// Listens on the socket, in place of a stale one a crash left.
    pub(crate) fn bind(&self) -> io::Result<UnixListener> {
        match fs::remove_file(&self.socket) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        UnixListener::bind(&self.socket)
    }

    /// Removes the socket: no session finds this fleet any more.
    pub(crate) fn unlink(&self) {
        let _ = fs::remove_file(&self.socket);
    }

    /// Takes the start lock (blocking) until the returned file is dropped.
    pub(crate) fn lock(&self) -> io::Result<File> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&self.lock)?;
        file.lock()?;
        Ok(file)
    }
}

/// `$XDG_RUNTIME_DIR/mcp-workbench`, else `${TMPDIR:-/tmp}/mcp-workbench-<uid>`:
/// created 0700, refused when another user owns it or others may enter it.
fn folder() -> io::Result<PathBuf> {
    let uid = process::user_id();
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(runtime) => PathBuf::from(runtime).join("mcp-workbench"),
        None => std::env::temp_dir().join(format!("mcp-workbench-{uid}")),
    };
    match fs::DirBuilder::new().mode(0o700).create(&dir) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    let meta = fs::symlink_metadata(&dir)?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return Err(io::Error::other(format!(
            "{} is not a folder of this user's alone (it must be owned by uid {uid} with mode 0700, \
             found uid {} mode {:o}); remove it or fix its permissions",
            dir.display(),
            meta.uid(),
            meta.mode() & 0o7777
        )));
    }
    Ok(dir)
}

/// FNV-1a, 64 bits: a name that every build computes alike.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_stable_and_differ_by_config() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_ne!(fnv1a(b"/a/config.json"), fnv1a(b"/b/config.json"));
    }
}
