//! `mcp-workbench fleet`: the shared fleet's own process (`share::run_fleet`,
//! docs/reference.md §8), which a serving workbench starts detached; not for
//! people to run. Exit 0 when it ends by its linger, 1 when it cannot run.

use super::prepare::Ready;
use std::path::Path;
use std::process::ExitCode;

/// Runs the fleet of config file `path`.
pub(super) fn run(path: &Path, ready: Ready) -> ExitCode {
    let Ready { loaded, .. } = ready;
    // Its sessions' remote servers sign in through the browser, once for all.
    let sign_ins = crate::auth::SignIns::serving();
    match crate::share::run_fleet(path, loaded.config, loaded.stamp, sign_ins) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            log::error!("the shared fleet cannot run: {e}");
            ExitCode::from(1)
        }
    }
}
