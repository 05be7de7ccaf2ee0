//! What the tests of `install`'s edits and undo share: a Linux user's
//! places, the workbench's launch, and the identities a config holds.
//! Tests only.

use super::edit::Launch;
use super::entry::Identity;
use super::paths::{Os, Places};
use std::collections::HashSet;
use std::ffi::OsString;
use std::path::PathBuf;

/// A Linux user's places, home `/home/u`, in the project `/p`.
pub(crate) fn places() -> Places {
    let env = |name: &str| (name == "HOME").then(|| OsString::from("/home/u"));
    Places::new(Os::Linux, &env, PathBuf::from("/p")).expect("a home is given")
}

/// The workbench at `/opt/wb/mcp-workbench`, with `/home/u/wb.json`.
pub(crate) fn launch() -> Launch {
    Launch {
        program: "/opt/wb/mcp-workbench".into(),
        config: "/home/u/wb.json".into(),
    }
}

/// The stdio servers running `commands`, with no arguments or environment.
pub(crate) fn held(commands: &[&str]) -> HashSet<Identity> {
    commands
        .iter()
        .map(|c| Identity::Stdio {
            command: c.to_string(),
            args: Vec::new(),
            env: Vec::new(),
        })
        .collect()
}
