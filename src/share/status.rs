//! `mcp-workbench status`: asks the config's shared fleet for its sessions
//! and servers (docs/reference.md §8). No fleet: an error the caller turns
//! into exit 1.

use super::endpoint::Endpoint;
use super::front::exchange;
use super::wire::{Answer, Hello, Status};
use crate::protocol::mcp;
use std::io;
use std::path::Path;

/// The report of the fleet of the config at `config`, if one runs.
pub(crate) fn query(config: &Path) -> io::Result<Status> {
    let endpoint = Endpoint::of(config)?;
    let mut stream = endpoint.connect().map_err(|_| {
        io::Error::other(format!(
            "no shared fleet runs for {} (mcp-workbench {})",
            config.display(),
            mcp::VERSION
        ))
    })?;
    let hello = Hello {
        version: mcp::VERSION.into(),
        role: "status".into(),
        pid: std::process::id(),
        env: Default::default(),
    };
    match exchange(&mut stream, &hello)? {
        Answer::Status(status) => Ok(status),
        Answer::Refused { reason } => Err(io::Error::other(reason)),
        Answer::Welcome { .. } => Err(io::Error::other("the fleet answered out of turn")),
    }
}

/// The report as `status` prints it: one JSON object, or lines for people.
pub(crate) fn render(status: &Status, json: bool) -> String {
    if json {
        let mut text = serde_json::to_string(status).unwrap_or_default();
        text.push('\n');
        text
    } else {
        status.human()
    }
}
