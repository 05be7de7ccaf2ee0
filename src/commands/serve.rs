//! `mcp-workbench [--trace FILE]`: serves MCP over stdio, the default
//! command. It logs one start-up line (version, config, toolbox count), and
//! tells a person who started it in a terminal what it waits for. Through the config's shared fleet when it has one (a session
//! that cannot reach or start one is served alone, said on stderr), else by
//! a `host::server::Server` of its own, which gets stdout. Exit 0 when the
//! host closed stdin, 1 when stdin cannot be read, 2 when the trace file
//! cannot be written. Serving, it signs in to remote servers in the
//! background (`auth::SignIns::serving`).

use super::prepare::{self, Ready};
use crate::cli::ConfigPath;
use crate::host::inbox::HostInput;
use crate::host::server::Server;
use crate::protocol::mcp;
use crate::wire::outbox::Outbox;
use crate::wire::trace::Trace;
use std::io::{self, IsTerminal};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// What a person who ran the workbench in a terminal reads: it waits for a
/// host, and how to try it instead.
const WAITING: &str = "mcp-workbench speaks MCP (JSON-RPC, one message per line) on stdin and \
    stdout and is waiting for an MCP host to talk to it; to try it from a terminal, run \
    `mcp-workbench check` (with --config PATH) instead; press Ctrl-C to quit";

/// The one start-up line a host's log shows: the version, the config (and
/// where its path came from, unless `--config` named it) and how many
/// toolboxes it has.
fn started(config: &ConfigPath, toolboxes: usize, shared: bool) {
    log::info!("{}", start_up_line(config, toolboxes, shared));
}

fn start_up_line(config: &ConfigPath, toolboxes: usize, shared: bool) -> String {
    let path = &config.path;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let origin = config
        .origin()
        .map_or(String::new(), |origin| format!(", {origin}"));
    let plural = if toolboxes == 1 { "" } else { "es" };
    let how = if shared {
        ", served through its shared fleet"
    } else {
        ""
    };
    format!(
        "{} {} serving {} ({toolboxes} toolbox{plural}){how}{origin}",
        mcp::NAME,
        mcp::VERSION,
        absolute.display()
    )
}

/// Serves the host on `stdin` and `stdout` with the config `config`.
pub(super) fn run(
    config: &ConfigPath,
    ready: Ready,
    trace: Option<PathBuf>,
    stdin: io::Stdin,
    stdout: io::Stdout,
) -> ExitCode {
    let Ready { loaded, shared } = ready;
    let path = config.path.as_path();
    started(config, loaded.config.toolboxes.len(), shared);
    if stdin.is_terminal() {
        // A person ran it in a terminal: say what it waits for (stderr, not the log).
        eprintln!("{WAITING}");
    }
    let mut stdout = stdout;
    if shared {
        match crate::share::serve_session(path, &stdin, Box::new(stdout)) {
            Ok(()) => return ExitCode::SUCCESS,
            Err(e) => {
                log::error!("cannot use the shared fleet: {e}");
                log::warn!("serving this session alone, with servers of its own");
                prepare::watchdog();
            }
        }
        // The same stdout again: the session failed before it wrote to it.
        #[allow(clippy::disallowed_methods)]
        {
            stdout = io::stdout();
        }
    }
    let trace = match trace.map(|path| (Trace::start(&path), path)) {
        None => None,
        Some((Ok(trace), _)) => Some(Arc::new(trace)),
        Some((Err(e), path)) => {
            eprintln!("error: cannot write the trace file {}: {e}", path.display());
            return ExitCode::from(2);
        }
    };
    let outbox = Arc::new(Outbox::traced(Box::new(stdout), trace));
    // A remote server that needs a sign-in starts it in the browser.
    let sign_ins = crate::auth::SignIns::serving();
    let input = HostInput::stdin(stdin);
    let server = match Server::new(loaded.config, outbox, input, sign_ins) {
        Ok(server) => server,
        Err(e) => {
            log::error!("cannot serve: {e}");
            return ExitCode::from(1);
        }
    };
    server.watch_signals();
    server.keep_catalog(path);
    server.watch_config(path.to_path_buf(), loaded.stamp);
    match server.run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            log::error!("cannot read stdin: {e}");
            ExitCode::from(1)
        }
    }
}
