//! Talking HTTP to remote MCP servers and their authorization servers
//! (docs/reference.md §11): URLs (`url`). No MCP here, and nothing above
//! this layer opens a socket.

pub mod url;

pub use url::Url;
