//! Every command of `mcp-workbench`, and the one dispatch over them: `run`
//! takes the parsed `cli::Command`, does the set-up the command needs
//! (`Needs`, the one table of how commands differ) and runs its entry, one
//! arm per command, each in a file of its own here. Returns the exit code;
//! `main` only parses, sets up logging and exits with it.
//! `import` and `install` read and write the hosts' configs (`hosts/`);
//! `tools` and `call` reach the tools from scripts (`script/`).
//!
//! A command writes its output to the `Console`'s stdout, which `main`
//! hands over: through a `printer::Printer` (a reader that went away ends
//! the output quietly), except serving, which gives it to the outbox;
//! nothing else may write it.

mod call;
mod call_batch;
mod check;
mod fleet;
mod import;
mod index;
mod install;
mod interrupt;
mod learned;
#[cfg(feature = "remote")]
mod login;
mod pins;
mod prepare;
mod printer;
mod serve;
mod status;
mod tools;

use crate::cli::{self, Command};
use crate::protocol::mcp;
use printer::Printer;
use std::io::{self, Write};
use std::process::ExitCode;

/// The process's standard streams, which `main` hands to the command it runs.
pub struct Console {
    pub stdin: io::Stdin,
    pub stdout: io::Stdout,
}

/// What a command asks of the set-up before it runs: the one place that
/// says how commands differ (`prepare` acts on it).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Needs {
    /// The default log filter, which `RUST_LOG` overrides; `None`: no logger.
    pub log: Option<&'static str>,
    /// A config that cannot be used is printed as `check --json` prints it,
    /// as JSON on stdout; else as text on stderr.
    json_errors: bool,
    /// A misspelt key (a near miss of a known one) is an error, not a
    /// warning: it changes what the config means (`toolFilter` exposes every
    /// tool).
    strict: bool,
    /// Starts servers in this process: arguments that look like paths, but
    /// are taken from the working directory the host picks, are warned about
    /// with the config's own warnings.
    starts_servers: bool,
    /// Logs the config's warnings on stderr (`check` reports them itself).
    logs_warnings: bool,
    /// Starts the watchdog (`sys::start_watchdog`) before any thread exists.
    watchdog: bool,
    /// Serves the host through the config's shared fleet when it has one
    /// (`"shareServers": true`); such a session starts no server here.
    may_share: bool,
}

impl Needs {
    /// What `command` needs.
    pub fn of(command: &Command) -> Needs {
        let nothing = Needs::default();
        match command {
            Command::Help | Command::Version | Command::Status { .. } => nothing,
            Command::Serve { trace, .. } => Needs {
                log: Some("info"),
                starts_servers: true,
                logs_warnings: true,
                watchdog: true,
                may_share: trace.is_none(),
                ..nothing
            },
            // The report says what happened to each server, stderr tail
            // included: info lines and children's stderr would only clutter it.
            Command::Check { json, .. } => Needs {
                log: Some("error"),
                json_errors: *json,
                strict: true,
                starts_servers: true,
                watchdog: true,
                ..nothing
            },
            Command::Fleet { .. } => Needs {
                log: Some("info"),
                logs_warnings: true,
                watchdog: true,
                ..nothing
            },
            // One line per server says what happened; warnings (a catalog
            // that cannot be written) still show.
            Command::Index { .. } => Needs {
                log: Some("warn"),
                logs_warnings: true,
                watchdog: true,
                ..nothing
            },
            Command::Pins { .. } => Needs {
                log: Some("error"),
                ..nothing
            },
            Command::Learned { .. } | Command::Install { .. } => Needs {
                log: Some("warn"),
                ..nothing
            },
            // What the person reads is the command's own output; warnings
            // (a token file that does not read) still show.
            Command::Login { .. } | Command::Logout { .. } => Needs {
                log: Some("warn"),
                ..nothing
            },
            // `tools` lists a toolbox the catalog lacks by starting its
            // servers, as `index` does; `call` calls through a session, the
            // shared fleet's when the config shares one (not with --trace).
            Command::Tools { .. } => Needs {
                log: Some("warn"),
                watchdog: true,
                ..nothing
            },
            Command::Call { call, .. } => Needs {
                log: Some("warn"),
                starts_servers: true,
                watchdog: true,
                may_share: call.trace.is_none(),
                ..nothing
            },
            // Starts servers to describe them (not with --no-start); the
            // report says what happened to each.
            Command::Import { start, .. } => Needs {
                log: Some("error"),
                watchdog: *start,
                ..nothing
            },
        }
    }
}

/// Runs `command` on `console`; the exit code (cli::usage: 0 clean, 1
/// runtime failure, 2 usage or config error).
pub fn run(command: Command, console: Console) -> ExitCode {
    let needs = Needs::of(&command);
    let Console { stdin, stdout } = console;
    let printer = Printer::new(&stdout);
    let mut out = &printer;
    let code = match command {
        Command::Help => written(write!(out, "{}", cli::usage())),
        Command::Version => written(writeln!(out, "{} {}", mcp::NAME, mcp::VERSION)),
        Command::Status { config, json } => Ok(status::run(&config.path, json, &mut out)),
        Command::Check { config, json } => prepare::run(&config, needs, &mut out)
            .map(|ready| check::run(ready.loaded, json, &config, &mut out)),
        Command::Index { config } => prepare::run(&config, needs, &mut out)
            .map(|ready| index::run(&ready.loaded.config, &config.path, &mut out)),
        Command::Pins { config, action } => prepare::run(&config, needs, &mut out)
            .map(|ready| pins::main(&ready.loaded.config, &action, &stdin, &printer)),
        Command::Learned { config, clear } => prepare::run(&config, needs, &mut out)
            .map(|_| learned::run(&config.path, clear, &mut out)),
        Command::Fleet { config } => {
            prepare::run(&config, needs, &mut out).map(|ready| fleet::run(&config.path, ready))
        }
        #[cfg(feature = "remote")]
        Command::Login {
            config,
            target,
            no_browser,
        } => prepare::run(&config, needs, &mut out)
            .map(|ready| login::login(&ready.loaded.config, &target, no_browser, stdin, &mut out)),
        #[cfg(feature = "remote")]
        Command::Logout { config, target } => prepare::run(&config, needs, &mut out)
            .map(|ready| login::logout(&ready.loaded.config, &target, &mut out)),
        #[cfg(not(feature = "remote"))]
        Command::Login { .. } | Command::Logout { .. } => {
            eprintln!("error: this mcp-workbench was built without remote servers (the `remote` feature), so it has no sign-in");
            Err(ExitCode::from(2))
        }
        Command::Import {
            config,
            from,
            write,
            start,
        } => {
            if needs.watchdog {
                prepare::watchdog();
            }
            Ok(import::run(&config, &from, write, start, &mut out))
        }
        Command::Install {
            config,
            host,
            replace,
            undo,
            include_projects,
        } => Ok(install::run(
            &config,
            host,
            crate::hosts::edit::Take {
                replace,
                projects: include_projects,
            },
            undo,
            &mut out,
        )),
        Command::Tools {
            config,
            query,
            json,
            limit,
        } => prepare::run(&config, needs, &mut out).map(|ready| {
            let path = &config.path;
            tools::run(
                &ready.loaded.config,
                path,
                query.as_deref(),
                json,
                limit,
                &mut out,
            )
        }),
        Command::Call { config, call } => prepare::run(&config, needs, &mut out).map(|ready| {
            let (loaded, shared, path) = (ready.loaded.config, ready.shared, &config.path);
            if call.batch {
                let lines = io::BufReader::new(stdin);
                call_batch::run(loaded, path, shared, &call, lines, &mut out)
            } else {
                call::run(loaded, path, shared, call, stdin, &mut out)
            }
        }),
        Command::Serve { config, trace } => prepare::run(&config, needs, &mut out)
            .map(|ready| serve::run(&config, ready, trace, stdin, stdout)),
    };
    code.unwrap_or_else(|code| code)
}

/// Exit 0 when `printed` is, else 1.
fn written(printed: io::Result<()>) -> Result<ExitCode, ExitCode> {
    Ok(match printed {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(1),
    })
}
