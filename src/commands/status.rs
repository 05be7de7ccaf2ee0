//! `mcp-workbench status [--json]`: the report of the config's shared fleet
//! (`share::status`, docs/reference.md §8) on stdout; exit 1, with one line
//! on stderr, when no fleet runs. Loads no config and starts nothing.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Prints the report of the fleet of config file `path`.
pub(super) fn run(path: &Path, json: bool, out: &mut impl Write) -> ExitCode {
    match crate::share::status(path, json) {
        Ok(text) => match write!(out, "{text}") {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::from(1),
        },
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(1)
        }
    }
}
