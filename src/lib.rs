//! mcp-workbench: one stdio MCP server that groups downstream MCP servers into
//! toolboxes the model opens on demand. See ARCHITECTURE.md for the map.
//!
//! The crate is a library so that the binary, the fuzz targets and the tests can
//! share it; `main.rs` is only argument handling and exit codes.

pub(crate) mod batch;
pub(crate) mod catalog;
pub mod check;
pub mod cli;
pub mod config;
pub(crate) mod downstream;
pub(crate) mod dynamic;
pub(crate) mod expand;
pub(crate) mod fleet;
pub(crate) mod forward;
pub mod framing;
pub mod index;
pub mod jsonrpc;
pub(crate) mod launch;
pub mod learned_command;
pub mod mcp;
pub(crate) mod meta_tools;
pub(crate) mod naming;
pub(crate) mod open_result;
pub(crate) mod ordered_json;
pub(crate) mod outbox;
pub mod params;
pub(crate) mod pins;
pub mod pins_command;
pub mod process;
pub mod rank;
pub mod relative_args;
pub(crate) mod result_cap;
pub mod server;
pub(crate) mod session;
pub(crate) mod sha256;
pub mod share;
pub(crate) mod suggest;
pub(crate) mod toolbox;
pub mod trace;
pub(crate) mod visible;

/// Locks a mutex, ignoring poisoning: every critical section in this crate
/// leaves its data consistent, and a panic elsewhere must not cascade.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
