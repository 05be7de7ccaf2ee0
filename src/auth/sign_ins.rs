//! `SignIns`: the sign-in's state for the users of one process, carried
//! where the config is (the launcher, the transports, the `login` command)
//! instead of statics: the network it talks through (`net::Agent`), whether
//! sign-ins start in the background (a process serving hosts), the registry
//! of every server definition's credentials (`access`), and the in-process
//! lock table of the token files (`lock`). Cheap to clone (one `Arc`); a
//! test makes a fresh one. Nothing is made in it before a remote server or
//! a sign-in needs it (the agent's TLS config waits for its first `https`
//! connection, the registry's map for its first server).

use super::access::{Access, Means, Registry};
use super::http::{self, Http};
use super::lock::Locks;
use super::store::Store;
use super::Client;
use crate::net::{Agent, Url};
use std::sync::Arc;

/// The sign-in's state: clones share it.
#[derive(Clone, Default)]
pub(crate) struct SignIns(Arc<State>);

#[derive(Default)]
struct State {
    net: Agent,
    /// Sign-ins start in the background, in a browser (`background`).
    serving: bool,
    registry: Registry,
    locks: Locks,
}

impl SignIns {
    /// For a process serving hosts (`serve`, `fleet`): a sign-in a request
    /// needs starts in the background.
    pub(crate) fn serving() -> SignIns {
        SignIns(Arc::new(State {
            serving: true,
            ..State::default()
        }))
    }

    /// The network the sign-ins and the transports talk through.
    pub(crate) fn net(&self) -> &Agent {
        &self.0.net
    }

    /// The HTTP client of the sign-ins.
    pub(crate) fn http(&self) -> Arc<dyn Http> {
        http::through(&self.0.net)
    }

    /// The token store in the user's state folder.
    pub(crate) fn store(&self) -> Result<Store, String> {
        Store::open(&|name| std::env::var_os(name), self.0.locks.clone())
    }

    /// The credentials of the server at `resource` with client `client`, as
    /// server `server` of toolbox `toolbox` uses them: shared with every
    /// other copy of that definition made here.
    pub(crate) fn access(
        &self,
        resource: &Url,
        client: &Client,
        toolbox: &str,
        server: &str,
    ) -> Access {
        let means = || Means {
            http: self.http(),
            store: self.store(),
            open: Box::new(crate::sys::open_browser),
            serving: self.0.serving,
        };
        Access::new(&self.0.registry, means, (resource, client), toolbox, server)
    }

    /// `access` with what the tests give: their HTTP peer, store and
    /// browser, in a registry of this `SignIns`.
    #[cfg(test)]
    pub(super) fn access_with(&self, resource: &Url, client: &Client, means: Means) -> Access {
        Access::new(&self.0.registry, || means, (resource, client), "T", "S")
    }
}
