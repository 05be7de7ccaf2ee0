//! What `mcp-workbench login` and `logout` do below the terminal
//! (docs/reference.md §2, §7.5): `Terminal::begin` asks the server for its
//! challenge (a 2xx means it needs no sign-in) and starts a sign-in;
//! the command brings the browser to `Login::url`, waits for the redirect
//! (`Login::wait`) or a pasted one (`Login::pasted`), and `Login::finish`
//! stores the tokens. `Terminal::logout` deletes what is stored for a
//! server. The command does the talking.

use super::discovery::{self, Probe};
use super::flow::Redirect;
use super::http::{self, Http};
use super::lock;
use super::metadata;
use super::signin::{self, Begun};
use super::store::{self, Store};
use super::Client;
use crate::net::Url;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// The HTTP client and the store a terminal command uses.
pub(crate) struct Terminal {
    http: Arc<dyn Http>,
    store: Store,
}

/// A sign-in waiting for the person.
pub(crate) struct Login {
    begun: Begun,
    http: Arc<dyn Http>,
    store: Store,
}

/// What a finished sign-in says.
pub(crate) struct Signed {
    pub issuer: String,
    /// Seconds the access token lasts, when the server said.
    pub expires_in: Option<u64>,
    pub refreshable: bool,
    pub scope: Option<String>,
}

impl Terminal {
    /// The process's HTTP client, and the store in the user's state folder.
    pub(crate) fn system() -> Result<Terminal, String> {
        Ok(Terminal {
            http: http::system(),
            store: Store::open(&|name| std::env::var_os(name))
                .map_err(|e| format!("there is no folder to keep tokens in ({e})"))?,
        })
    }

    #[cfg(test)]
    pub(crate) fn with(http: Arc<dyn Http>, store: Store) -> Terminal {
        Terminal { http, store }
    }

    /// Where tokens are kept.
    pub(crate) fn folder(&self) -> PathBuf {
        self.store.tokens_dir()
    }

    /// Starts signing in to `server` with `client`; `None` when the server
    /// answers without asking for one.
    pub(crate) fn begin(&self, server: &Url, client: &Client) -> Result<Option<Login>, String> {
        metadata::secure(server)?;
        let challenge = match discovery::probe(&*self.http, server)? {
            Probe::Open => return Ok(None),
            Probe::Unauthorized(challenge) => challenge,
            // Some servers refuse a bare request otherwise: discovery's
            // well-known URLs still say whether and where to sign in.
            Probe::Other(_) => None,
        };
        let begun = signin::begin(&*self.http, &self.store, server, client, challenge.as_ref())?;
        Ok(Some(Login {
            begun,
            http: Arc::clone(&self.http),
            store: self.store.clone(),
        }))
    }

    /// Deletes every sign-in stored for `server` with `client`; the
    /// authorization servers they were from.
    pub(crate) fn logout(&self, server: &Url, client: &Client) -> Result<Vec<String>, String> {
        let mut issuers = Vec::new();
        for (path, tokens) in self.store.find(server, client.client_id.as_deref()) {
            let _held = lock::take(&path)?;
            if self.store.delete(&path)? {
                issuers.push(tokens.issuer);
            }
        }
        Ok(issuers)
    }
}

impl Login {
    /// The page that starts the sign-in.
    pub(crate) fn url(&self) -> String {
        self.begun.url.to_string()
    }

    /// The loopback port the redirect comes to.
    pub(crate) fn port(&self) -> u16 {
        self.begun.loopback.port()
    }

    /// Waits for the browser's redirect; the code.
    pub(crate) fn wait(&self, until: Instant, stop: &AtomicBool) -> Result<String, String> {
        self.begun.wait(until, stop)
    }

    /// Reads a pasted redirect URL or code.
    pub(crate) fn pasted(&self, line: &str) -> Redirect {
        self.begun.pasted(line)
    }

    /// Exchanges `code` and stores the tokens.
    pub(crate) fn finish(&self, code: &str) -> Result<Signed, String> {
        let (_, tokens) = self.begun.finish(&*self.http, &self.store, code)?;
        Ok(Signed {
            issuer: tokens.issuer,
            expires_in: tokens.expires_at.map(|at| at.saturating_sub(store::now())),
            refreshable: tokens.refresh_token.is_some(),
            scope: tokens.scope,
        })
    }
}
