//! What `mcp-workbench login` and `logout` do below the terminal
//! (docs/reference.md §2, §7.5): `Terminal::begin` asks the server for its
//! challenge (a 2xx means it needs no sign-in) and starts a sign-in;
//! the command brings the browser to `Login::url`, waits for the redirect
//! (`Login::wait`) or a pasted one (`Login::pasted`), and `Login::finish`
//! stores the tokens. `Terminal::logout` deletes what is stored for a
//! server. The command does the talking. `state` is what `check` says of
//! a server's sign-in.

use super::discovery::{self, Probe};
use super::flow::Redirect;
use super::http::Http;
use super::metadata;
use super::signin::{self, Begun};
use super::store::{self, Store, Tokens};
use super::{Client, SignIns};
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
    /// The HTTP client of `sign_ins`, and its store in the user's state folder.
    pub(crate) fn of(sign_ins: &SignIns) -> Result<Terminal, String> {
        Ok(Terminal {
            http: sign_ins.http(),
            store: sign_ins
                .store()
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
            let _held = self.store.lock(&path)?;
            if self.store.delete(&path)? {
                issuers.push(tokens.issuer);
            }
        }
        Ok(issuers)
    }
}

/// What `check` says of the sign-in of remote server `label` (`T/S`) at
/// `server` with `client`: from the tokens `sign_ins` stored, without a
/// request; `None` when none are (whether the server wants a sign-in shows
/// when it starts).
pub(crate) fn state(
    sign_ins: &SignIns,
    server: &Url,
    client: &Client,
    label: &str,
) -> Option<String> {
    let store = sign_ins.store().ok()?;
    let (_, tokens) = store
        .find(server, client.client_id.as_deref())
        .into_iter()
        .next()?;
    Some(describe(&tokens, store::now(), label))
}

/// The words of `state` for `tokens` at `now`.
fn describe(tokens: &Tokens, now: u64, label: &str) -> String {
    let at = &tokens.issuer;
    match (tokens.expires_at, tokens.refresh_token.is_some()) {
        (None, _) => format!("signed in at {at}"),
        (Some(expires), _) if expires > now => {
            let left = expires - now;
            let left = match left {
                s if s < 120 => format!("{s} s"),
                s if s < 2 * 3600 => format!("{} min", s / 60),
                s => format!("{} h", s / 3600),
            };
            format!("signed in at {at}, the access token expires in {left}")
        }
        (Some(_), true) => {
            format!(
                "signed in at {at}, the access token expired and is refreshed at the next request"
            )
        }
        (Some(_), false) => {
            format!("expired, and cannot be refreshed: run mcp-workbench login {label}")
        }
    }
}

impl Login {
    /// The page that starts the sign-in.
    pub(crate) fn url(&self) -> String {
        self.begun.url.as_sent()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_check_says_of_a_sign_in() {
        let tokens = super::super::store::tests::tokens("https://mcp.example.com/mcp", "c");
        let at = |t: &Tokens, now| describe(t, now, "t/s");
        assert_eq!(
            at(&tokens, 4_600 - 1_500),
            "signed in at https://as.example, the access token expires in 25 min"
        );
        assert_eq!(
            at(&tokens, 4_600),
            "signed in at https://as.example, the access token expired and is refreshed at the next request"
        );
        let once = Tokens {
            refresh_token: None,
            ..tokens.clone()
        };
        assert_eq!(
            at(&once, 5_000),
            "expired, and cannot be refreshed: run mcp-workbench login t/s"
        );
        let forever = Tokens {
            expires_at: None,
            ..tokens
        };
        assert_eq!(at(&forever, 9_999_999), "signed in at https://as.example");
    }
}
