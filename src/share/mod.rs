//! One fleet of servers for every host session of a config
//! (`"shareServers": true`, docs/reference.md §8).
//!
//! Each host still starts `mcp-workbench --config PATH`; that process is the
//! session's `front`, a relay of MCP lines. The first front starts the
//! `daemon` (the same binary, `mcp-workbench fleet`, detached), which runs
//! every session on one `Fleet`: holds, variants per expanded environment
//! and each session's own ids, progress and tools are the fleet's and the
//! session's business, as in a workbench of its own. `endpoint` says where
//! they meet; `wire` what they say before MCP flows; `status` reports.
//!
//! The connections are `sys::local`'s: Unix sockets, or named pipes on
//! Windows.

pub(crate) mod daemon;
mod endpoint;
pub(crate) mod front;
pub(crate) mod status;
mod wire;

use crate::config::Config;
use crate::sys::Stamp;
use crate::wire::outbox::Outbox;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

/// Serves one host session through the shared fleet of the config at
/// `path`, starting the fleet if none runs. An error before the session
/// begins (the fleet cannot be reached or started) leaves the host to be
/// served alone; after that, the session outlives fleets.
pub fn serve_session(
    path: &Path,
    input: impl io::Read,
    output: Box<dyn Write + Send>,
) -> io::Result<()> {
    let host = Arc::new(Outbox::new(output));
    let mut front = front::Front::new(path, host)?;
    front.attach()?;
    crate::sys::on_shutdown_signal("signals", |_| std::process::exit(0));
    front.run(input)
}

/// Runs the shared fleet of the config at `path` (`mcp-workbench fleet`):
/// `config`, read after its stamp `seen` was taken (`config::Loaded`);
/// its remote servers sign in and talk through `sign_ins`.
pub(crate) fn run_fleet(
    path: &Path,
    config: Config,
    seen: Option<Stamp>,
    sign_ins: crate::auth::SignIns,
) -> io::Result<()> {
    daemon::run(path.to_path_buf(), config, seen, sign_ins)
}

/// What `check` says of the config's shared fleet: whether one runs, and
/// how many sessions share it.
pub fn fleet_note(path: &Path) -> String {
    match status::query(path) {
        Ok(s) => format!(
            "a fleet runs for this config (pid {}), shared by {} session(s); `mcp-workbench status` shows them",
            s.pid,
            s.sessions.len()
        ),
        Err(_) => "none runs for this config now; the first host session starts one".into(),
    }
}

/// `mcp-workbench status`: the report, or why there is none.
pub fn status(path: &Path, json: bool) -> Result<String, String> {
    status::query(path)
        .map(|s| status::render(&s, json))
        .map_err(|e| e.to_string())
}
