//! `Agent`: the network's state for one process's users of it, the way
//! ureq's agent holds its own: the TLS client config (made at the first
//! `https` connection, never before, so a workbench without remote servers
//! pays nothing for it) and the keep-alive pool of whole requests (`fetch`).
//! Cheap to clone (one `Arc`); whoever starts a command makes one and
//! carries it, and a test makes a fresh one. No statics.

use super::error::NetError;
use super::pool::Pool;
use super::tls::Tls;
use std::sync::{Arc, OnceLock};

/// The network's state: clones share it.
#[derive(Clone, Default)]
pub(crate) struct Agent(Arc<State>);

#[derive(Default)]
struct State {
    /// Made at first use, with `SSL_CERT_FILE`'s certificates as they were then.
    tls: OnceLock<Result<Tls, String>>,
    /// `fetch`'s idle connections (a transport keeps a pool of its own).
    pool: Pool,
}

impl Agent {
    /// The TLS client config, made on the first call.
    pub(crate) fn tls(&self) -> Result<Tls, NetError> {
        self.0
            .tls
            .get_or_init(Tls::system)
            .clone()
            .map_err(NetError::Tls)
    }

    /// The idle connections of `fetch` through this agent.
    pub(crate) fn pool(&self) -> &Pool {
        &self.0.pool
    }
}
