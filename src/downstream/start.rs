//! Starting a downstream server: its transport, picked from its `Spec`
//! (`transport/stdio/child.rs::spawn`, a process and its pipes; for a `url`,
//! `transport/http/streamable.rs::start` or `transport/http/sse.rs::start`,
//! a remote server's), then the opening (`handshake`), within its
//! `startupTimeoutMs`. Above the handle and the pump: it puts them to work.

use super::era::Era;
use super::handle::Downstream;
use super::handshake;
use super::pump;
#[cfg(feature = "remote")]
use super::transport::http;
use super::transport::spec::Spec;
use super::transport::stdio::child;
use crate::auth::SignIns;
use crate::protocol::mcp::ToolEntry;
use crate::wire::outbox::Outbox;
use crossbeam_channel::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Spawns the child, performs the MCP handshake and lists its tools, all
/// within `startup_timeout`. On failure the child is stopped in the
/// background: the caller gets the answer at the deadline, not after the
/// stop sequence. `admit` sees the connection right after the spawn;
/// returning false stops it again (the workbench is shutting down).
/// `known` is the era this server definition was found to speak earlier
/// in the run, if it was: the opening goes straight to it. A remote server
/// talks through `sign_ins`' network, with its credentials.
pub(crate) fn start(
    spec: Spec,
    outbox: Arc<Outbox>,
    changes: Option<Sender<Arc<Downstream>>>,
    known: Option<&Era>,
    sign_ins: &SignIns,
    admit: impl FnOnce(&Arc<Downstream>) -> bool,
) -> Result<Started, String> {
    let began = Instant::now();
    let deadline = began + spec.startup_timeout;
    let conn = transport(spec, outbox, changes, sign_ins)?;
    if !admit(&conn) {
        conn.stop("");
        return Err("the workbench is shutting down".to_string());
    }
    match handshake::open(&conn, known, deadline) {
        Ok((era, tools)) => Ok(Started {
            era,
            instructions: conn.instructions(),
            conn,
            tools,
            startup: began.elapsed(),
        }),
        Err(failure) => {
            let reason = conn.describe(&failure, "starting");
            conn.stop_in_background();
            Err(reason)
        }
    }
}

/// The server's transport, picked by its spec: a child for a command, or a
/// remote server's connection for a url. The one place a transport is chosen.
fn transport(
    spec: Spec,
    outbox: Arc<Outbox>,
    changes: Option<Sender<Arc<Downstream>>>,
    sign_ins: &SignIns,
) -> Result<Arc<Downstream>, String> {
    #[cfg(not(feature = "remote"))]
    let _ = sign_ins;
    #[cfg(feature = "remote")]
    if let Some(remote) = &spec.remote {
        let conn = match remote.kind {
            crate::config::RemoteKind::StreamableHttp => {
                let open = http::streamable::opener(&spec, sign_ins)?;
                pump::launch(spec, outbox, changes, open)?
            }
            crate::config::RemoteKind::Sse => {
                let open = http::sse::opener(&spec, sign_ins)?;
                pump::launch(spec, outbox, changes, open)?
            }
        };
        log::info!(
            "[{}] connecting to {}",
            conn.label(),
            conn.spec()
                .remote
                .as_ref()
                .map_or("", |r| r.url_display.as_str())
        );
        return Ok(conn);
    }
    #[cfg(not(feature = "remote"))]
    if spec.remote.is_some() {
        return Err(
            "this build of the workbench has no remote servers (it was built without the `remote` feature)"
                .to_string(),
        );
    }
    let open = child::opener(&spec);
    let conn = pump::launch(spec, outbox, changes, open)?;
    log::info!(
        "[{}] started '{}' (pid {})",
        conn.label(),
        conn.spec().command_display,
        conn.pid()
    );
    Ok(conn)
}

/// A started server: its connection and its tools (all pages, unfiltered).
pub(crate) struct Started {
    pub conn: Arc<Downstream>,
    pub tools: Vec<ToolEntry>,
    /// From spawn to the end of the tool listing.
    pub startup: Duration,
    /// The era the server speaks, and the revision agreed on.
    pub era: Era,
    /// The `instructions` of its opening result.
    pub instructions: Option<String>,
}
