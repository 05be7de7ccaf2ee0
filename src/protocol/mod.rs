//! The protocol, with no IO: JSON-RPC 2.0 values and lines (`jsonrpc`), the
//! newline framing (`framing`), the MCP vocabulary (`mcp`), the
//! 2025-03-26 batches (`batch`), and the table of requests awaiting their
//! one answer (`awaiting`).

pub mod awaiting;
pub mod batch;
pub mod framing;
pub mod jsonrpc;
pub mod mcp;
