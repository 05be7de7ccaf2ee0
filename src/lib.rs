//! mcp-workbench: one stdio MCP server that groups downstream MCP servers into
//! toolboxes the model opens on demand. See ARCHITECTURE.md for the map.
//!
//! The crate is a library so that the binary, the fuzz targets and the tests can
//! share it; `main.rs` is only argument handling and exit codes.

pub mod auth;
pub mod catalog;
pub mod cli;
pub mod commands;
pub mod config;
pub(crate) mod downstream;
pub(crate) mod fleet;
pub mod host;
pub mod hosts;
pub mod net;
pub(crate) mod pins;
pub mod protocol;
pub(crate) mod script;
pub mod share;
pub mod sys;
pub mod tools;
pub mod wire;

/// Locks a mutex, ignoring poisoning: every critical section in this crate
/// leaves its data consistent, and a panic elsewhere must not cascade.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// FNV-1a, 64 bits: small, stable across versions and platforms (what a native tool name's suffix
/// and a shared fleet's endpoint are made of).
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}
