//! The `mcp-workbench` binary: parse arguments, set up logging, run the
//! chosen command (`commands::run`, the one dispatch) and exit with its code.
//!
//! The exit code is decided here, from what the command returns, with these
//! exceptions, each a shutdown signal's thread that exits once every server
//! is stopped, because the main thread is blocked reading the host's stdin
//! (or waiting on its sessions) and cannot be woken to return:
//! - serving alone (`host::server::Server::watch_signals`): exit 0;
//! - a session of a shared fleet (`share::serve_session`): exit 0;
//! - the shared fleet's process on a signal (`share::daemon`): exit 0.

// The one place that names stdout: it is handed to the command to run
// (clippy.toml).
#![allow(clippy::disallowed_methods)]

use mcp_workbench::cli;
use mcp_workbench::commands::{self, Console, Needs};
use std::io;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Before any thread exists, so that all of them inherit the mask; the
    // dispositions (SIGUSR2 ignored) hold from here on, opened toolbox or not.
    mcp_workbench::sys::block_shutdown_signals();
    let command = match cli::parse(
        std::env::args_os().skip(1),
        &|name| std::env::var_os(name),
        &|path| path.exists(),
    ) {
        Ok(command) => command,
        Err(problem) => {
            eprintln!(
                "error: {problem}\n{}\nRun 'mcp-workbench --help' for more.",
                cli::usage_line()
            );
            return ExitCode::from(2);
        }
    };
    if let Some(level) = Needs::of(&command).log {
        env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(level))
            .target(env_logger::Target::Stderr)
            .init();
    }
    let console = Console {
        stdin: io::stdin(),
        stdout: io::stdout(),
    };
    commands::run(command, console)
}
