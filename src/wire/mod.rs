//! What goes to a host session, from any thread: the one writer of its lines
//! (`outbox`), the `--trace` file (`trace`), and the id the fleet and the
//! children know the session by (`SessionId`), handed out by the fleet's
//! `SessionIds`.

pub(crate) mod outbox;
pub mod trace;

use std::sync::atomic::{AtomicU64, Ordering};

/// A host session of this process: what the fleet, its workers and the
/// children's requests in flight know it by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct SessionId(u64);

/// Hands out session ids, each once: one per fleet, which knows its
/// sessions by them (a test makes its own).
#[derive(Debug, Default)]
pub(crate) struct SessionIds(AtomicU64);

impl SessionIds {
    /// A session id this one never gave before (1, 2, ...).
    pub(crate) fn next(&self) -> SessionId {
        SessionId(self.0.fetch_add(1, Ordering::Relaxed) + 1)
    }
}

impl SessionId {
    /// The number, for logs and `"shareServers": false` variants.
    pub(crate) fn get(self) -> u64 {
        self.0
    }
}
