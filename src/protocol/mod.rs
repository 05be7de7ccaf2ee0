//! The protocol, with no IO: JSON-RPC 2.0 values and lines (`jsonrpc`), the
//! newline framing (`framing`), the MCP vocabulary (`mcp`) and the
//! 2025-03-26 batches (`batch`).

pub mod batch;
pub mod framing;
pub mod jsonrpc;
pub mod mcp;
