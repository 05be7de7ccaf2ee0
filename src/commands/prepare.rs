//! The set-up of every command that uses a config, as its `Needs` ask:
//! load the config (a missing file is reported with where its path came
//! from and, none named, every path tried), turn near misses into errors for `check`, warn of arguments taken
//! from the working directory, log the config's warnings, start the
//! watchdog. A config that cannot be used ends the command with exit 2.
//!
//! Runs no command and starts no server.

use super::Needs;
use crate::cli::{ConfigPath, ConfigSource, DEFAULT_CONFIG};
use crate::config::{self, relative_args, ConfigError, Loaded, Problem};
use std::io::Write;
use std::process::ExitCode;

/// A config loaded for a command, and how it is to be served.
pub(super) struct Ready {
    pub(super) loaded: Loaded,
    /// The host is served through the config's shared fleet, so no server
    /// starts here (`Needs::may_share` and `"shareServers": true`).
    pub(super) shared: bool,
}

/// Sets up a command that needs `needs` with the config at `config`; the
/// exit code when the config cannot be used (said on `out` or stderr).
pub(super) fn run(
    config: &ConfigPath,
    needs: Needs,
    out: &mut impl Write,
) -> Result<Ready, ExitCode> {
    let report = |error: &ConfigError, out: &mut dyn Write| {
        match needs.json_errors {
            true => super::check::print_config_error(error, out),
            false => eprint!("{error}"),
        }
        ExitCode::from(2)
    };
    let mut loaded = load(config).map_err(|error| report(&error, out))?;
    let path = &config.path;
    if needs.strict {
        if let Some(error) = loaded.near_misses(path) {
            return Err(report(&error, out));
        }
    }
    // Not for a shared fleet, whose servers run in the config's folder.
    let shared = needs.may_share && loaded.config.share_servers;
    if let (true, false, Ok(file), Ok(cwd)) = (
        needs.starts_servers,
        shared,
        std::path::absolute(path),
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
    if needs.logs_warnings {
        for warning in &loaded.warnings {
            log::warn!("{}: {warning}", path.display());
        }
    }
    // A session of a shared fleet starts no server: the fleet does (and a
    // session served alone after all starts the watchdog then).
    if needs.watchdog && !shared {
        watchdog();
    }
    Ok(Ready { loaded, shared })
}

/// Starts the watchdog, which ends the servers' processes if the workbench
/// is killed: still before any thread exists, and before any file is opened.
pub(super) fn watchdog() {
    if let Err(e) = crate::sys::start_watchdog() {
        log::warn!("cannot start the watchdog ({e}): if the workbench is killed, processes its servers started may survive it");
    }
}

/// Loads the config; a missing file is reported with its absolute path and
/// where that path came from (`--config`, `$WORKBENCH_CONFIG` or, neither
/// given, the paths tried: `./workbench-config.json`, then the user's own).
fn load(config: &ConfigPath) -> Result<Loaded, ConfigError> {
    if !config.path.exists() {
        let absolute = std::path::absolute(&config.path).unwrap_or(config.path.clone());
        return Err(ConfigError {
            file: absolute,
            problems: vec![Problem {
                path: String::new(),
                message: missing(config),
                near_miss: None,
            }],
            warnings: Vec::new(),
        });
    }
    config::load(&config.path)
}

/// What is said of a config file that does not exist: why this path, and
/// what to do.
fn missing(config: &ConfigPath) -> String {
    let named = "; pass --config PATH to name your config file";
    match config.source {
        ConfigSource::Flag if config.path.is_relative() => {
            "the file does not exist (it is the path given with --config, taken from the working directory)".to_string()
        }
        ConfigSource::Flag => "the file does not exist (it is the path given with --config)".to_string(),
        ConfigSource::Environment => {
            format!("the file does not exist (it is the path in WORKBENCH_CONFIG){named}")
        }
        ConfigSource::WorkingDir => format!(
            "the file does not exist (it is ./{DEFAULT_CONFIG}, which was there a moment ago){named}"
        ),
        ConfigSource::User => {
            let here = std::path::absolute(DEFAULT_CONFIG)
                .unwrap_or_else(|_| DEFAULT_CONFIG.into());
            format!(
                "the file does not exist (it is your own config, used because neither --config \
                 nor WORKBENCH_CONFIG was given and {} does not exist either); run \
                 `mcp-workbench import --write` to create it from your hosts' servers{named}",
                here.display()
            )
        }
    }
}
