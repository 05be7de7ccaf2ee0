//! `mcp-workbench index` (docs/reference.md §2, §9): starts every enabled
//! server of every toolbox once, a few at a time, lists its tools into the
//! tool catalog, stops it, and prints one line per server: its tool count
//! or why it failed. Exit 0 when every server listed, 1 otherwise.
//!
//! `quietly` is the same listing for `call`, which lists a server the
//! catalog lacks before it checks the arguments against its tools.
//!
//! Prints on stdout and serves no host, like `check`. A shutdown signal stops
//! every server (the launcher's shutdown) and ends the run with the shell's
//! code for it (`interrupt`), printing and recording nothing more.

use super::interrupt::{local_launcher, local_servers};
use crate::catalog::Catalog;
use crate::config::Config;
use crate::fleet::launch::{self, Launcher};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

/// At most this many servers start at once.
const PARALLEL: usize = 8;

/// Indexes every server of `config` (file `path`) and prints a line for each.
pub(super) fn run(config: &Config, path: &Path, out: &mut impl Write) -> ExitCode {
    // As `check` does: on a signal every server stopped, then the shell's
    // code for it, with nothing printed or recorded after the signal.
    let (catalog, launcher, interrupt) = local_servers(path);
    let (healthy, lines) = list_all(config, &catalog, &launcher, &|| interrupt.came());
    // After a signal the watcher stops the servers; a second `shutdown` here
    // would count as a second trigger and cut their grace periods short.
    if let Some((_, code)) = interrupt.finish() {
        return code;
    }
    launcher.shutdown();
    let printed = lines.iter().try_for_each(|line| writeln!(out, "{line}"));
    if let Err(e) = printed {
        log::error!("cannot write the report: {e}");
    }
    if healthy {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Lists every server of `config` (file `path`) into its catalog as `run`
/// does, printing nothing and leaving the signals to the caller (`call`,
/// whose session of its own watches them).
pub(super) fn quietly(config: &Config, path: &Path) {
    let (catalog, launcher) = local_launcher(path);
    let _ = list_all(config, &catalog, &launcher, &|| false);
    launcher.shutdown();
}

/// Starts, lists and stops every enabled server of `config`, `PARALLEL` at
/// a time, until `stopped`; whether each listed, and a line for each.
fn list_all(
    config: &Config,
    catalog: &Catalog,
    launcher: &Launcher,
    stopped: &dyn Fn() -> bool,
) -> (bool, Vec<String>) {
    // Every enabled server, in config order, with its spec or its problem.
    let mut jobs = Vec::new();
    for toolbox in &config.toolboxes {
        for server in toolbox.servers.iter().filter(|s| !s.disabled) {
            let spec = launch::resolve(&toolbox.name, server, None).map_err(|e| e.join("; "));
            jobs.push((toolbox, server, spec));
        }
    }
    let mut healthy = true;
    let mut lines = Vec::new();
    let mut pending = jobs.into_iter().peekable();
    while pending.peek().is_some() {
        let batch: Vec<_> = pending.by_ref().take(PARALLEL).collect();
        let mut specs = Vec::new();
        for (_, _, spec) in &batch {
            if let Ok(spec) = spec {
                specs.push(spec.clone());
            }
        }
        let mut started = launcher.start_all(specs).into_iter();
        if stopped() {
            break;
        }
        let mut conns = Vec::new();
        let mut listed = Vec::new();
        for (toolbox, server, spec) in &batch {
            let result = match spec {
                Err(why) => Err(why.clone()),
                Ok(_) => started
                    .next()
                    .unwrap_or_else(|| Err("internal error: no start result".into())),
            };
            let line = match result {
                Ok(s) => {
                    conns.push(Arc::clone(&s.conn));
                    let n = s.tools.len();
                    listed.push((toolbox.name.as_str(), *server, s.tools, s.instructions));

                    format!("{n} tool{}", if n == 1 { "" } else { "s" })
                }
                Err(why) => {
                    healthy = false;
                    format!("failed: {why}")
                }
            };
            lines.push(format!("{}/{}: {line}", toolbox.name, server.name));
        }
        let records: Vec<_> = listed
            .iter()
            .map(|(toolbox, server, tools, instructions)| {
                (
                    *toolbox,
                    *server,
                    None,
                    tools.as_slice(),
                    Some(instructions.as_deref().unwrap_or_default()),
                )
            })
            .collect();
        catalog.record(&records);
        launch::stop_all(&conns, "");
    }
    (healthy, lines)
}
