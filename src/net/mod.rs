//! Talking HTTP to remote MCP servers and their authorization servers
//! (docs/reference.md §11). No MCP here, and nothing above this layer opens
//! a socket. Without the `remote` feature only `url` and `text` are built.
//!
//! One job per file: `agent` (the network's state: the TLS config and
//! `fetch`'s pool, one owner carried by its users, no statics), `url` (URLs), `http` (HTTP/1.1 framing over bytes),
//! `sse` (the event-stream parser), `proxy` (the route: a proxy from the
//! environment, or none), `connect` (DNS, addresses, tunnels, the TLS
//! handshake), `tls` (the client config and what a refused certificate
//! says), `der` (a certificate's names), `conn` (one connection and the
//! `Cut` that shuts it down from another thread), `pool` (idle keep-alive
//! connections), `client` (one exchange, its body read whole or as a
//! stream), `redirect` (same-origin redirects), `fetch` (one whole request
//! for the sign-in), `error` (why a request failed), `base64`, `text`
//! (what may be shown of a text the network sent), `page` (what is shown of
//! an error's body: an HTML page by its title).

pub(crate) mod text;
pub mod url;

pub use url::Url;

#[cfg(feature = "remote")]
mod agent;
#[cfg(feature = "remote")]
pub(crate) mod base64;
#[cfg(feature = "remote")]
pub(crate) mod client;
#[cfg(feature = "remote")]
pub(crate) mod conn;
#[cfg(feature = "remote")]
mod connect;
#[cfg(feature = "remote")]
mod der;
#[cfg(feature = "remote")]
pub(crate) mod error;
#[cfg(feature = "remote")]
mod exchange;
#[cfg(feature = "remote")]
mod fetch;
#[cfg(feature = "remote")]
pub mod http;
#[cfg(feature = "remote")]
pub(crate) mod page;
#[cfg(feature = "remote")]
pub(crate) mod pool;
#[cfg(feature = "remote")]
mod proxy;
#[cfg(feature = "remote")]
pub(crate) mod redirect;
#[cfg(feature = "remote")]
pub mod sse;
#[cfg(all(test, feature = "remote"))]
pub(crate) mod test_server;
#[cfg(feature = "remote")]
pub(crate) mod tls;

#[cfg(feature = "remote")]
pub(crate) use agent::Agent;
#[cfg(feature = "remote")]
pub(crate) use fetch::fetch;
#[cfg(feature = "remote")]
pub use fetch::Response;
