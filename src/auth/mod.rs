//! Signing in to remote servers (docs/reference.md §11): the MCP
//! authorization spec's discovery, the OAuth client, the authorization code
//! flow with PKCE, and the tokens kept for every session of the user.

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
