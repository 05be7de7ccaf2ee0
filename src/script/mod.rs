//! Tools from scripts (docs/reference.md §13): what `mcp-workbench tools`
//! and `mcp-workbench call` share. A script's call is not a second
//! implementation of `use_tool`: `client` is an MCP client of one host
//! session (the config's shared fleet's, or a `host::server::Server` of its
//! own on a thread), and sends it `use_tool`, so filters, overrides, pins,
//! timeouts, result caps, the environment allow-list and `--trace` are the
//! session's own. What is decided here is only what must be known before
//! anything is called: the tool's name (`lookup`, against the config and the
//! catalog, with "did you mean") and its arguments (`args`); and how a
//! result or a tool reads as text (`render`).
//!
//! Nothing here starts a server, but through a session.

pub(crate) mod args;
pub(crate) mod client;
pub(crate) mod lookup;
pub(crate) mod render;
