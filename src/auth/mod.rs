//! Signing in to remote servers (docs/reference.md §7.5): the MCP
//! authorization spec's discovery, the OAuth client, the authorization code
//! flow with PKCE, and the tokens kept for every session of the user.
//!
//! Hand-written on serde_json (docs/decisions.md, "Sign-in without an OAuth
//! crate"), one job per file, with the feature `remote`:
//! - what the network says, parsed (pure, reached by the fuzz target):
//!   `challenge` (`WWW-Authenticate`), `metadata` (RFC 9728 and RFC 8414
//!   documents, the well-known URLs), `token` (token responses, expiry);
//! - the requests: `http` (the HTTP seam), `discovery`, `register` (the
//!   configured client or dynamic registration), `endpoint` (the token
//!   endpoint's grants);
//! - one sign-in: `pkce`, `flow` (the authorization URL and
//!   the redirect's checks), `loopback` (the redirect's listener), `signin`
//!   (from discovery to stored tokens), `background` (a serving process's
//!   own sign-in);
//! - what is kept: `store` (token files and registrations), `lock` (one
//!   refresher per token file, across threads and processes);
//! - `access`: what a remote transport calls (`Access`, `SignInNeeded`);
//!   `login`: what the `login` and `logout` commands call.
//!
//! Imports nothing of `downstream`: the transports call `Access`.

#[cfg(feature = "remote")]
mod access;
#[cfg(feature = "remote")]
mod background;
#[cfg(feature = "remote")]
pub mod challenge;
#[cfg(feature = "remote")]
mod discovery;
// They start `python3` (the Windows tests run under Wine, without it).
#[cfg(all(test, feature = "remote", unix))]
mod e2e_tests;
#[cfg(feature = "remote")]
mod endpoint;
#[cfg(feature = "remote")]
mod flow;
#[cfg(feature = "remote")]
pub(crate) mod http;
#[cfg(feature = "remote")]
mod lock;
#[cfg(feature = "remote")]
pub(crate) mod login;
#[cfg(feature = "remote")]
mod loopback;
#[cfg(feature = "remote")]
pub mod metadata;
#[cfg(feature = "remote")]
mod pkce;
#[cfg(feature = "remote")]
mod register;
#[cfg(feature = "remote")]
mod sign_ins;
#[cfg(feature = "remote")]
mod signin;
#[cfg(feature = "remote")]
pub(crate) mod store;
#[cfg(all(test, feature = "remote"))]
pub(crate) mod tests;
#[cfg(feature = "remote")]
pub mod token;

#[cfg(feature = "remote")]
pub(crate) use access::{Access, SignInNeeded};
#[cfg(feature = "remote")]
pub(crate) use flow::Redirect;
#[cfg(feature = "remote")]
pub(crate) use sign_ins::SignIns;

/// The stdio-only build's stand-in for the sign-in's state: nothing.
#[cfg(not(feature = "remote"))]
#[derive(Clone, Default)]
pub(crate) struct SignIns(());

#[cfg(not(feature = "remote"))]
impl SignIns {
    /// As with the feature: for a process serving hosts.
    pub(crate) fn serving() -> SignIns {
        SignIns(())
    }
}

/// The OAuth client a remote server's `oauth` key configures, expanded.
/// Everything is optional: without a `client_id` the client registers
/// itself dynamically.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Client {
    pub client_id: Option<String>,
    /// A secret: never shown.
    pub client_secret: Option<String>,
    pub scopes: Vec<String>,
    /// The loopback port the sign-in's redirect comes back to; `None`: any
    /// free one.
    pub callback_port: Option<u16>,
}
