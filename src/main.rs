//! The `mcp-workbench` binary: parse arguments, set up logging, load the config,
//! run the chosen command. The only place that decides the exit code.

use mcp_workbench::cli::{self, Command};
use mcp_workbench::{check, config, mcp, server::Server};
use std::io;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Before any thread exists, so that all of them inherit the mask.
    mcp_workbench::process::block_shutdown_signals();
    let command = match cli::parse(std::env::args_os().skip(1)) {
        Ok(command) => command,
        Err(problem) => {
            eprintln!("error: {problem}\n\n{}", cli::USAGE);
            return ExitCode::from(2);
        }
    };
    let config_path = match command {
        Command::Help => {
            print!("{}", cli::USAGE);
            return ExitCode::SUCCESS;
        }
        Command::Version => {
            println!("{} {}", mcp::NAME, mcp::VERSION);
            return ExitCode::SUCCESS;
        }
        Command::Serve { ref config, .. } | Command::Check { ref config, .. } => config.clone(),
    };
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info"))
        .target(env_logger::Target::Stderr)
        .init();
    let loaded = match config::load(&config_path) {
        Ok(loaded) => loaded,
        Err(error) => {
            eprint!("{error}");
            return ExitCode::from(2);
        }
    };
    for warning in &loaded.warnings {
        log::warn!("{warning}");
    }
    // Still before any thread exists, and before any file is opened.
    if let Err(e) = mcp_workbench::process::watchdog::start() {
        log::warn!("cannot start the watchdog ({e}): if the workbench is killed, processes its servers started may survive it");
    }
    match command {
        Command::Check { json, .. } => check::run(loaded.config, json, &mut io::stdout()),
        Command::Serve { trace, .. } => {
            if let Some(path) = trace {
                if let Err(e) = mcp_workbench::trace::start(&path) {
                    eprintln!("error: cannot write the trace file {}: {e}", path.display());
                    return ExitCode::from(2);
                }
            }
            let server = Server::new(loaded.config, Box::new(io::stdout()));
            server.watch_signals();
            match server.run(io::stdin().lock()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    log::error!("cannot read stdin: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Command::Help | Command::Version => unreachable!("handled above"),
    }
}
