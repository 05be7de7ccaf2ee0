//! Idle keep-alive connections, by origin: a request takes one that is still
//! open (the server may have closed it while it sat idle) or makes a new
//! one, and gives it back once its response was read whole and the server
//! keeps it open. A transport has a pool of its own, so that stopping a
//! server closes its connections; an `Agent` keeps one for its `fetch`.

use super::conn::Conn;
use crate::lock;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a connection may sit idle before it is closed.
const IDLE_LIMIT: Duration = Duration::from_secs(30);
/// A connection idle for less is taken without asking the system whether
/// the server closed it (three system calls): that a server closes one so
/// soon is rare, and a request that then finds it closed before any answer
/// is sent again on a new one (`client.rs`).
const FRESH: Duration = Duration::from_secs(1);
/// The most idle connections kept per origin.
const PER_ORIGIN: usize = 8;

#[derive(Default)]
pub(crate) struct Pool {
    idle: Mutex<Vec<(Conn, Instant)>>,
}

impl Pool {
    /// An idle connection filed under `key` that the server has not closed.
    pub(crate) fn take(&self, key: &str) -> Option<Conn> {
        loop {
            let (mut conn, since) = {
                let mut idle = lock(&self.idle);
                let now = Instant::now();
                idle.retain(|(_, since)| now.duration_since(*since) < IDLE_LIMIT);
                let at = idle.iter().rposition(|(c, _)| c.key == key)?;
                idle.remove(at)
            };
            // Checked outside the lock: it takes system calls.
            if since.elapsed() < FRESH || !conn.is_stale() {
                return Some(conn);
            }
        }
    }

    /// Keeps `conn` for the next request to its origin.
    pub(crate) fn put(&self, conn: Conn) {
        let mut idle = lock(&self.idle);
        if idle.iter().filter(|(c, _)| c.key == conn.key).count() >= PER_ORIGIN {
            return;
        }
        idle.push((conn, Instant::now()));
    }

    /// Closes every idle connection.
    pub(crate) fn clear(&self) {
        lock(&self.idle).clear();
    }
}
