//! Which config a command uses, and where that path came from: `--config`,
//! else `$WORKBENCH_CONFIG`, else `./workbench-config.json` where it exists,
//! else the user's own (`sys::user_config`); and `~/` in a path given on
//! the command line. No IO: the environment and whether a file exists come
//! through lookups.

use crate::sys::{self, Os};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The config file of the working directory, used where it exists.
pub const DEFAULT_CONFIG: &str = "workbench-config.json";

/// Where the config path came from: messages about a missing file, the
/// start-up log line and `check` say so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigSource {
    Flag,
    /// `$WORKBENCH_CONFIG`.
    Environment,
    /// Neither was given, and `./workbench-config.json` exists.
    WorkingDir,
    /// Neither was given, and there is no `./workbench-config.json`: the
    /// user's own config (`sys::user_config`).
    User,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ConfigPath {
    pub path: PathBuf,
    pub source: ConfigSource,
}

impl ConfigPath {
    /// Where the path came from, for a person who did not name it (`None`
    /// for `--config`): the start-up log line and `check`'s first line.
    pub fn origin(&self) -> Option<&'static str> {
        match self.source {
            ConfigSource::Flag => None,
            ConfigSource::Environment => Some("the path in WORKBENCH_CONFIG"),
            ConfigSource::WorkingDir => Some(
                "./workbench-config.json of the working directory, which comes before your own config",
            ),
            ConfigSource::User => Some(
                "your own config: neither --config, WORKBENCH_CONFIG nor ./workbench-config.json names another",
            ),
        }
    }
}

/// The config a command uses: `flag` (`--config`, already expanded), else
/// `$WORKBENCH_CONFIG`, else `unnamed_config`.
pub(super) fn choose(
    flag: Option<PathBuf>,
    env: &dyn Fn(&str) -> Option<OsString>,
    exists: &dyn Fn(&Path) -> bool,
) -> Result<ConfigPath, String> {
    Ok(match flag {
        Some(path) => ConfigPath {
            path,
            source: ConfigSource::Flag,
        },
        None => match env("WORKBENCH_CONFIG") {
            Some(path) if !path.is_empty() => ConfigPath {
                path: expand_home(path, env).map_err(|e| format!("WORKBENCH_CONFIG: {e}"))?,
                source: ConfigSource::Environment,
            },
            _ => unnamed_config(Os::current(), env, exists)?,
        },
    })
}

/// The config when neither `--config` nor `$WORKBENCH_CONFIG` names one:
/// `./workbench-config.json` where it `exists`, else the user's own on `os`;
/// the error, when the user's folder is unknown, says what was tried.
fn unnamed_config(
    os: Os,
    env: &dyn Fn(&str) -> Option<OsString>,
    exists: &dyn Fn(&Path) -> bool,
) -> Result<ConfigPath, String> {
    let here = PathBuf::from(DEFAULT_CONFIG);
    if exists(&here) {
        return Ok(ConfigPath {
            path: here,
            source: ConfigSource::WorkingDir,
        });
    }
    match sys::user_config(os, env) {
        Ok(path) => Ok(ConfigPath {
            path,
            source: ConfigSource::User,
        }),
        Err(why) => Err(format!(
            "no config: neither --config nor WORKBENCH_CONFIG was given, there is no \
             ./{DEFAULT_CONFIG}, and your own config cannot be found ({why}); pass --config PATH"
        )),
    }
}

/// A path that starts with `~/` (or is `~`) is taken from the home folder
/// (`sys::HOME`): host configs pass arguments without a shell, so nothing
/// else expands it.
pub(super) fn expand_home(
    path: OsString,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Result<PathBuf, String> {
    let Some(text) = path.to_str() else {
        return Ok(PathBuf::from(path));
    };
    if let Some(problem) = crate::config::expand::unsupported_tilde(text) {
        return Err(problem);
    }
    let Some(rest) = crate::config::expand::home_relative(text) else {
        return Ok(PathBuf::from(path));
    };
    match env(crate::sys::HOME) {
        Some(home) if !home.is_empty() => {
            let mut out = home;
            out.push(rest);
            Ok(PathBuf::from(out))
        }
        _ => Err(format!(
            "'{text}' starts with '~' but {} is not set; write the absolute path",
            crate::sys::HOME
        )),
    }
}
