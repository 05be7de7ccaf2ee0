//! The stdio transport (MCP basic/transports, "stdio"): a child process,
//! its pipes and its exit. `child.rs` is the transport (both halves of the
//! seam); beside it, one job each: `owner.rs` (spawns, reaps, kills the
//! tree on drop), `input.rs` (the child's stdin, never blocking the
//! caller), `lines.rs` (stdout and stderr cut into lines), `missing.rs`
//! (where a start that found no program looked). The module list only.

pub(in crate::downstream) mod child;
mod input;
mod lines;
mod missing;
mod owner;
