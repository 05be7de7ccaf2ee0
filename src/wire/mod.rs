//! What goes to a host session, from any thread: the one writer of its lines
//! (`outbox`), the `--trace` file (`trace`), and the id the fleet and the
//! children know the session by (`SessionId`).

pub(crate) mod outbox;
pub mod trace;

use std::sync::atomic::{AtomicU64, Ordering};

/// A host session of this process: what the fleet, its workers and the
/// children's requests in flight know it by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct SessionId(u64);

impl SessionId {
    /// A session id never used before in this process.
    pub(crate) fn next() -> SessionId {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        SessionId(NEXT.fetch_add(1, Ordering::Relaxed))
    }

    /// The number, for logs and `"shareServers": false` variants.
    pub(crate) fn get(self) -> u64 {
        self.0
    }
}
