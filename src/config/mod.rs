//! Reads and validates the workbench config (docs/reference.md, "Config file").
//!
//! Validation walks the whole document and collects every problem with its JSON
//! path, so a user fixes all of them in one round. Unknown keys are warnings, not
//! errors (Claude Desktop configs carry extra keys), reported with or without
//! errors, with a suggestion when a known key is close. Environment references
//! are parsed here but resolved only when a toolbox is opened (see `expand`);
//! `cwd` and `command` are anchored to the config file's folder.
//! Only `load` does IO (it reads the one file); `parse` is pure and never logs
//! expanded values.
//!
//! The files, from the bottom up: `model` (the types), `problems` (what can be
//! wrong), `loaded` (what a read returns), `checker` (one value's checks),
//! `servers`, `remote` (a remote server's keys) and `validate` (the walk over
//! the document); this file reads the file and names the API the rest of the
//! crate uses.

mod checker;
pub(crate) mod expand;
mod loaded;
mod model;
pub(crate) mod ordered_json;
mod problems;
pub mod relative_args;
mod remote;
mod servers;
pub(crate) mod suggest;
mod validate;

pub(crate) use checker::child_path;
pub use checker::valid_name;
pub use loaded::Loaded;
#[cfg(test)]
pub(crate) use model::NATIVE_NAME_DEFAULT_LEN;
pub use model::{
    Config, Mode, OAuthConfig, OpenToolboxResult, RemoteConfig, RemoteKind, ServerConfig,
    ToolFilter, ToolOverride, ToolboxConfig, DEFAULT_CALL_TIMEOUT, DEFAULT_SHARE_LINGER,
    DEFAULT_STARTUP_TIMEOUT, MAX_CALL_TIMEOUT_FACTOR, MIN_RESULT_CHARS,
};
pub(crate) use model::{NATIVE_NAME_MAX_LEN, NATIVE_NAME_MIN_LEN};
pub use problems::{ConfigError, Problem};
pub(crate) use remote::{header_value, HEADER_VALUE_RULE};
#[cfg(test)]
pub(crate) use validate::one_server_toolbox;
pub use validate::parse;

use crate::sys::Stamp;
use std::path::Path;

/// Reads and validates the config file at `file`. Relative paths in it are
/// taken from the file's folder.
pub fn load(file: &Path) -> Result<Loaded, ConfigError> {
    let fail = |message: String| ConfigError {
        file: file.to_path_buf(),
        problems: vec![Problem {
            path: String::new(),
            message,
            near_miss: None,
        }],
        warnings: Vec::new(),
    };
    let stamp = Stamp::of(file);
    let bytes = std::fs::read(file).map_err(|e| fail(format!("cannot read the file: {e}")))?;
    let absolute = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    let folder = absolute.parent().unwrap_or(Path::new("/"));
    let mut loaded = parse(&bytes, file, folder)?;
    loaded.config.file = Some(std::fs::canonicalize(file).unwrap_or(absolute.clone()));
    loaded.stamp = stamp;
    Ok(loaded)
}
