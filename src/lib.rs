//! mcp-workbench: one stdio MCP server that groups downstream MCP servers into
//! toolboxes the model opens on demand. See ARCHITECTURE.md for the map.
//!
//! The crate is a library so that the binary, the fuzz targets and the tests can
//! share it; `main.rs` is only argument handling and exit codes.

pub mod batch;
pub mod check;
pub mod cli;
pub mod config;
pub mod downstream;
pub mod dynamic;
pub mod expand;
pub mod fleet;
pub mod forward;
pub mod framing;
pub mod jsonrpc;
pub mod launch;
pub mod mcp;
pub mod meta_tools;
pub mod naming;
pub mod open_result;
pub mod ordered_json;
pub mod outbox;
pub mod params;
pub mod process;
pub mod server;
pub mod session;
pub mod suggest;
pub mod toolbox;
pub mod trace;

/// Locks a mutex, ignoring poisoning: every critical section in this crate
/// leaves its data consistent, and a panic elsewhere must not cascade.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
