//! The integration tests: one binary, a module per area, one shared harness
//! (`harness`). Every test runs the real binaries (`mcp-workbench` and the
//! scripted `mcp-fake-server`) as processes and tests what a host or a user
//! sees, never the crate's internals. libtest runs the tests of every area
//! side by side.
//!
//! `cargo test --test it AREA::` runs one area, e.g. `liveness::`;
//! `scripts/test-windows` runs `transcripts::` and `windows::` under Wine.

// A test tool, and a crate of its own: it spawns processes and writes stdout
// as it likes (clippy.toml), and `pub` in it means crate-wide.
#![allow(unreachable_pub, clippy::disallowed_methods, clippy::print_stdout)]
// Test tools: a failure is a panic with its reason, not an answer to handle.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

mod behaviour;
mod bridge;
mod catalog;
mod faults;
mod first_run;
mod hostile;
mod idle;
mod import;
mod liveness;
mod own_config;
mod reload;
#[cfg(feature = "remote")]
mod remote;
#[cfg(feature = "remote")]
mod remote_config;
mod repo;
#[cfg(target_os = "linux")]
mod script;
#[cfg(target_os = "linux")]
mod shared;
#[cfg(feature = "remote")]
mod signin;
#[cfg(all(feature = "remote", unix))]
mod signin_e2e;
mod transcripts;
mod trust;
#[cfg(target_os = "linux")]
mod watchdog;
#[cfg(windows)]
mod windows;
