//! What a command line asks for: the command and its settings, as `parse`
//! gives it to `commands::run`. Types only: no parsing, no IO.

use super::config::ConfigPath;
use crate::hosts::Host;
use std::path::PathBuf;

#[derive(Debug, PartialEq)]
pub enum Command {
    Serve {
        config: ConfigPath,
        trace: Option<PathBuf>,
    },
    Check {
        config: ConfigPath,
        json: bool,
    },
    Index {
        config: ConfigPath,
    },
    Status {
        config: ConfigPath,
        json: bool,
    },
    /// The shared fleet's own process, which a serving workbench starts
    /// (docs/reference.md §8); not for people to run.
    Fleet {
        config: ConfigPath,
    },
    Pins {
        config: ConfigPath,
        action: PinsAction,
    },
    /// What `find_tools` learned from use: list it, or `clear` it.
    Learned {
        config: ConfigPath,
        clear: bool,
    },
    /// Sign in to remote server `target` (`TOOLBOX/SERVER`).
    Login {
        config: ConfigPath,
        target: String,
        no_browser: bool,
    },
    /// Forget the tokens of remote server `target` (`TOOLBOX/SERVER`).
    Logout {
        config: ConfigPath,
        target: String,
    },
    /// Bring the hosts' servers into toolboxes (docs/reference.md §12).
    Import {
        config: ConfigPath,
        /// `--from`: what to read; empty: every host's files.
        from: Vec<ImportFrom>,
        /// `--write`: merge into the config; else print what would be written.
        write: bool,
        /// Start the servers to list their tools for the descriptions
        /// (not with `--no-start`).
        start: bool,
    },
    /// Put the workbench into a host's config.
    Install {
        config: ConfigPath,
        host: Host,
        /// `--replace`: also take out the servers the config now holds.
        replace: bool,
        /// `--undo`: reverse the install.
        undo: bool,
        /// `--include-projects`: `--replace` takes per-project entries out too.
        include_projects: bool,
    },
    /// Every tool, a search (`query`), or one tool (`query` is
    /// `TOOLBOX/SERVER/TOOL`): docs/reference.md §13.
    Tools {
        config: ConfigPath,
        query: Option<String>,
        json: bool,
        limit: Option<usize>,
    },
    /// Call one tool, or with `--batch` the JSON Lines of stdin:
    /// docs/reference.md §13.
    Call {
        config: ConfigPath,
        call: CallArgs,
    },
    Help,
    Version,
}

/// What `call` was asked.
#[derive(Debug, PartialEq)]
pub struct CallArgs {
    /// `TOOLBOX/SERVER/TOOL` (none with `batch`).
    pub target: Option<String>,
    /// The ARGS words after it.
    pub args: Vec<String>,
    pub json: bool,
    pub batch: bool,
    /// `--timeout MS`: this call's `callTimeoutMs`.
    pub timeout: Option<u64>,
    pub trace: Option<PathBuf>,
}

/// What `import --from` names: a host's files, or one file.
#[derive(Debug, Clone, PartialEq)]
pub enum ImportFrom {
    Host(Host),
    File(PathBuf),
}

/// What `pins` does.
#[derive(Debug, PartialEq)]
pub enum PinsAction {
    List,
    /// What waits for approval, in `TOOLBOX[/SERVER[/TOOL]]` or everywhere.
    Diff(Option<String>),
    /// `TOOLBOX[/SERVER[/TOOL]]`; `yes`: without asking (`--yes`).
    Approve {
        scope: String,
        yes: bool,
    },
}
