//! What starting one server needs (`Spec`), with environment references
//! resolved: the command or the remote reach (`reach.rs`), and the limits.
//! Plain data: a transport's constructor reads it, and the pump keeps it
//! for its labels and limits; nothing here starts anything.

use super::reach::Remote;
use std::collections::BTreeMap;
use std::time::Duration;

/// Everything needed to start one server, with environment references resolved.
#[derive(Debug, Clone)]
pub(crate) struct Spec {
    pub toolbox: String,
    pub server: String,
    pub program: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: Option<String>,
    /// The command as written in the config (unexpanded, so safe to show).
    pub command_display: String,
    /// `cwd` as written in the config, with its JSON path (safe to show).
    pub cwd_display: Option<String>,
    /// What a start that finds no program may show of where it looked.
    pub lookup: Lookup,
    pub startup_timeout: Duration,
    pub call_timeout: Duration,
    /// The longest a call may run, however much progress it reports.
    pub max_call_timeout: Duration,
    /// `maxResultChars`: longer text results are cut (`result_cap`).
    pub max_result_chars: Option<usize>,
    /// A remote server's reach: `Some` for a `url` server, which has no
    /// program (`program`, `args`, `env` and `cwd` are then empty).
    pub remote: Option<Remote>,
}

/// What a failed start may say of where it looked for the program.
#[derive(Debug, Clone, Default)]
pub(crate) struct Lookup {
    /// The command holds a `${...}` reference: its expanded value (the
    /// program's path) is not shown.
    pub command_secret: bool,
    /// The JSON path of the server's `env.PATH` when it holds a `${...}`
    /// reference: the folders are counted, not shown.
    pub path_secret: Option<String>,
}
