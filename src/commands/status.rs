//! `mcp-workbench status [--json]`: the report of the config's shared fleet
//! (`share::status`, docs/reference.md §8) on stdout; exit 1, with one line
//! on stderr, when no fleet runs: that the config does not share servers at
//! all (no `"shareServers": true`, so there is never a fleet to show) and how
//! to turn it on, or else that none runs now. Starts nothing; reads the
//! config only when no fleet answered.

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
            match not_shared(path) {
                Some(why) => eprintln!("{why}"),
                None => eprintln!("{e}"),
            }
            ExitCode::from(1)
        }
    }
}

/// Why the config at `path` has no fleet to show, if it shares no servers;
/// `None` when it does, or cannot be read (the fleet's absence says enough).
fn not_shared(path: &Path) -> Option<String> {
    let loaded = crate::config::load(path).ok()?;
    (!loaded.config.share_servers).then(|| {
        format!(
            "{} does not share servers (\"shareServers\" is not true): each host session runs \
             its own servers, so there is no fleet to show; to share one fleet among sessions, \
             set \"shareServers\": true at the top level of the config",
            path.display()
        )
    })
}
