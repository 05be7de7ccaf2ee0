//! Where a config's shared fleet listens (docs/reference.md §8): an
//! endpoint (`sys::local`) in a folder only the user can enter, named after the config's
//! canonical path and the workbench's version, so an upgraded binary starts
//! a fleet of its own while the old one drains. Next to it: the lock that
//! makes two sessions starting together start one fleet, and the fleet's log.

use crate::fnv1a;
use crate::protocol::mcp;
use crate::sys::local::{self, Listener, Stream};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// The files of one config's fleet.
pub(crate) struct Endpoint {
    /// Where the fleet listens (a socket; a named pipe on Windows).
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
        let dir = local::private_folder()?;
        let name = format!(
            "fleet-{}-{:016x}",
            mcp::VERSION,
            fnv1a(canonical.to_string_lossy().as_bytes())
        );
        Ok(Endpoint {
            socket: local::endpoint(&dir, &name),
            lock: dir.join(format!("{name}.lock")),
            log: dir.join(format!("{name}.log")),
        })
    }

    /// A connection to the fleet, if one listens.
    pub(crate) fn connect(&self) -> io::Result<Stream> {
        Stream::connect(&self.socket)
    }

    /// Listens, in place of a stale endpoint a crash left.
    pub(crate) fn bind(&self) -> io::Result<Listener> {
        Listener::bind(&self.socket)
    }

    /// No session finds this fleet any more.
    pub(crate) fn unlink(&self) {
        local::remove(&self.socket);
    }

    /// Takes the start lock (blocking) until the returned file is dropped.
    pub(crate) fn lock(&self) -> io::Result<File> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&self.lock)?;
        file.lock()?;
        Ok(file)
    }
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
