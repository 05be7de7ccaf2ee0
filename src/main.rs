//! The `mcp-workbench` binary: parse arguments, set up logging, load the config,
//! run the chosen command. The only place that decides the exit code.

// The one place that hands stdout out: to the outbox when serving, to the
// report of `check`, to `--help` and `--version` (clippy.toml).
#![allow(clippy::print_stdout, clippy::disallowed_methods)]

use mcp_workbench::cli::{self, Command, ConfigPath, ConfigSource};
use mcp_workbench::commands::{check, index, learned, pins};
use mcp_workbench::config::relative_args;
use mcp_workbench::config::{self, ConfigError, Problem};
use mcp_workbench::host::server::Server;
use mcp_workbench::protocol::mcp;
use mcp_workbench::sys::Stamp;
use std::io::{self, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Before any thread exists, so that all of them inherit the mask; the
    // dispositions (SIGUSR2 ignored) hold from here on, opened toolbox or not.
    mcp_workbench::sys::block_shutdown_signals();
    let command = match cli::parse(std::env::args_os().skip(1), &|name| std::env::var_os(name)) {
        Ok(command) => command,
        Err(problem) => {
            eprintln!(
                "error: {problem}\n{}\nRun 'mcp-workbench --help' for more.",
                cli::USAGE_LINE
            );
            return ExitCode::from(2);
        }
    };
    let (config_path, default_level) = match &command {
        Command::Help => {
            print!("{}", cli::USAGE);
            return ExitCode::SUCCESS;
        }
        Command::Version => {
            println!("{} {}", mcp::NAME, mcp::VERSION);
            return ExitCode::SUCCESS;
        }
        Command::Serve { config, .. } => (config.clone(), "info"),
        // The report says what happened to each server, stderr tail included:
        // info lines and children's stderr would only clutter it.
        Command::Check { config, .. } => (config.clone(), "error"),
        Command::Status { config, json } => return status(&config.path, *json),
        Command::Fleet { config } => (config.clone(), "info"),
        // One line per server says what happened; warnings (a catalog that
        // cannot be written) still show.
        Command::Index { config } => (config.clone(), "warn"),
        Command::Pins { config, .. } => (config.clone(), "error"),
        Command::Learned { config, .. } => (config.clone(), "warn"),
    };
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(default_level))
        .target(env_logger::Target::Stderr)
        .init();
    let mut loaded = match load(&config_path) {
        Ok(loaded) => loaded,
        Err(error) => {
            match command {
                Command::Check { json: true, .. } => check::print_config_error(&error),
                _ => eprint!("{error}"),
            }
            return ExitCode::from(2);
        }
    };
    // A misspelt key changes what the config means (`toolFilter` exposes
    // every tool): a warning when serving, an error for the doctor.
    if let (Command::Check { json, .. }, Some(error)) =
        (&command, loaded.near_misses(&config_path.path))
    {
        match json {
            true => check::print_config_error(&error),
            false => eprint!("{error}"),
        }
        return ExitCode::from(2);
    }
    if let Command::Learned { clear, .. } = command {
        return learned::run(&config_path.path, clear, &mut io::stdout());
    }
    if let Command::Pins { action, .. } = &command {
        let env = |name: &str| std::env::var_os(name);
        let code = pins::run(&loaded.config, action, &env, &mut io::stdout(), &mut ask);
        return ExitCode::from(code);
    }
    // Arguments that look like paths but are taken from the working
    // directory the host picks: warned about with the config's own warnings.
    // Not for a shared fleet, whose servers run in the config's folder.
    let shared =
        matches!(command, Command::Serve { trace: None, .. }) && loaded.config.share_servers;
    let starts_servers_here = matches!(command, Command::Serve { .. } | Command::Check { .. });
    if let (true, false, Ok(file), Ok(cwd)) = (
        starts_servers_here,
        shared,
        std::path::absolute(&config_path.path),
        std::env::current_dir(),
    ) {
        let folder = file.parent().unwrap_or(&cwd);
        loaded.warnings.extend(relative_args::warnings(
            &loaded.config,
            folder,
            &cwd,
            &|p| p.exists(),
        ));
    }
    if let Command::Serve { .. } | Command::Fleet { .. } | Command::Index { .. } = command {
        for warning in &loaded.warnings {
            log::warn!("{}: {warning}", config_path.path.display());
        }
    }
    // A session of a shared fleet starts no server: the fleet does.
    if let (Command::Serve { trace: None, .. }, true) = (&command, loaded.config.share_servers) {
        match serve_shared(&config_path.path) {
            Some(code) => return code,
            None => log::warn!("serving this session alone, with servers of its own"),
        }
    }
    // Still before any thread exists, and before any file is opened.
    if let Err(e) = mcp_workbench::sys::start_watchdog() {
        log::warn!("cannot start the watchdog ({e}): if the workbench is killed, processes its servers started may survive it");
    }
    match command {
        Command::Fleet { .. } => fleet(&config_path.path, loaded.config, loaded.stamp),
        Command::Check { json, .. } => {
            let fleet = loaded
                .config
                .share_servers
                .then(|| mcp_workbench::share::fleet_note(&config_path.path));
            check::run(
                loaded.config,
                &loaded.warnings,
                fleet,
                json,
                &config_path.path,
                &mut io::stdout(),
            )
        }
        Command::Index { .. } => index::run(&loaded.config, &config_path.path, &mut io::stdout()),
        Command::Serve { trace, .. } => {
            if let Some(path) = trace {
                if let Err(e) = mcp_workbench::wire::trace::start(&path) {
                    eprintln!("error: cannot write the trace file {}: {e}", path.display());
                    return ExitCode::from(2);
                }
            }
            let server = Server::new(loaded.config, Box::new(io::stdout()));
            server.watch_signals();
            server.keep_catalog(&config_path.path);
            server.watch_config(config_path.path.clone(), loaded.stamp);
            // Reads of 64 KiB pass by stdin's own smaller buffer.
            match server.run(io::BufReader::with_capacity(1 << 16, io::stdin())) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    log::error!("cannot read stdin: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Command::Help
        | Command::Version
        | Command::Status { .. }
        | Command::Pins { .. }
        | Command::Learned { .. } => {
            unreachable!("handled above")
        }
    }
}

/// Serves the host through the config's shared fleet (docs/reference.md
/// §8); `None` when no fleet can be reached or started (said on stderr), and
/// the session is to be served alone.
fn serve_shared(path: &Path) -> Option<ExitCode> {
    let served = mcp_workbench::share::serve_session(path, io::stdin(), Box::new(io::stdout()));
    match served {
        Ok(()) => Some(ExitCode::SUCCESS),
        Err(e) => {
            log::error!("cannot use the shared fleet: {e}");
            None
        }
    }
}

/// `mcp-workbench fleet`: the shared fleet's own process.
fn fleet(path: &Path, config: config::Config, seen: Option<Stamp>) -> ExitCode {
    match mcp_workbench::share::run_fleet(path, config, seen) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            log::error!("the shared fleet cannot run: {e}");
            ExitCode::from(1)
        }
    }
}

/// `mcp-workbench status`: exit 1, with one line, when no fleet runs.
fn status(path: &Path, json: bool) -> ExitCode {
    let report = mcp_workbench::share::status(path, json);
    match report {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(1)
        }
    }
}

/// Loads the config; a missing file is reported with its absolute path and
/// where that path came from (`--config`, `$WORKBENCH_CONFIG` or the default),
/// whichever it was.
fn load(config: &ConfigPath) -> Result<config::Loaded, ConfigError> {
    let why = match config.source {
        ConfigSource::Flag if config.path.is_relative() => {
            "it is the path given with --config, taken from the working directory"
        }
        ConfigSource::Flag => "it is the path given with --config",
        ConfigSource::Environment => "it is the path in WORKBENCH_CONFIG",
        ConfigSource::Default => {
            "it is the default config path, used because neither --config nor WORKBENCH_CONFIG was given"
        }
    };
    if !config.path.exists() {
        let absolute = std::path::absolute(&config.path).unwrap_or(config.path.clone());
        let advice = match config.source {
            ConfigSource::Flag => "",
            _ => "; pass --config PATH to name your config file",
        };
        return Err(ConfigError {
            file: absolute,
            problems: vec![Problem {
                path: String::new(),
                message: format!("the file does not exist ({why}){advice}"),
                near_miss: None,
            }],
            warnings: Vec::new(),
        });
    }
    config::load(&config.path)
}

/// Asks a person on the terminal (`pins approve`); `None` when stdin is not
/// one (a model's shell tool, a script, a pipe): no one there to say yes.
fn ask(question: &str) -> Option<bool> {
    let stdin = io::stdin();
    if !stdin.is_terminal() {
        return None;
    }
    let mut stdout = io::stdout();
    let _ = write!(stdout, "{question}");
    let _ = stdout.flush();
    let mut answer = String::new();
    stdin.read_line(&mut answer).ok()?;
    Some(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}
