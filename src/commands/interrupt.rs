//! The `signals` thread of a command that starts servers and then ends on its
//! own (`check`, `index`): on a shutdown signal (SIGTERM, SIGINT, SIGHUP; a
//! console event on Windows) it stops every server, which ends the
//! handshakes still running, and the command returns the shell's code for
//! that signal, 128 + its number (143, 130, 129), instead of a report.
//! The command, not this thread, ends the process. `local_servers` sets up
//! what such a command needs.

use crate::catalog::Catalog;
use crate::fleet::launch::Launcher;
use crate::sys;
use crate::wire::outbox::Outbox;
use std::io;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// What a command that starts the config's servers itself needs (`check`,
/// `index`): the tool catalog of config file `path`, which their listings
/// go into; a launcher whose children talk to no host (their forwarded
/// output has nowhere to go), with sign-ins that never start a browser;
/// and the watch for a shutdown signal.
pub(super) fn local_servers(path: &Path) -> (Catalog, Arc<Launcher>, Interrupt) {
    let (catalog, launcher) = local_launcher(path);
    let interrupt = Interrupt::watch(&launcher);
    (catalog, launcher, interrupt)
}

/// `local_servers` without the signal watch, for a caller that watches
/// signals itself (`call`, through its session).
pub(super) fn local_launcher(path: &Path) -> (Catalog, Arc<Launcher>) {
    let catalog = Catalog::default();
    catalog.attach(path);
    let launcher = Arc::new(Launcher::new(
        Arc::new(Outbox::new(Box::new(io::sink()))),
        None,
        crate::auth::SignIns::default(),
    ));
    (catalog, launcher)
}

pub(super) struct Interrupt {
    /// The signal received; 0 while none was.
    signal: Arc<AtomicI32>,
    watcher: Option<JoinHandle<()>>,
}

impl Interrupt {
    /// Watches for a shutdown signal, which stops every server of `launcher`.
    pub(super) fn watch(launcher: &Arc<Launcher>) -> Interrupt {
        let signal = Arc::new(AtomicI32::new(0));
        let (received, launcher) = (Arc::clone(&signal), Arc::clone(launcher));
        let watcher = sys::on_shutdown_signal("signals", move |number| {
            received.store(number, Ordering::SeqCst);
            launcher.shutdown();
        });
        Interrupt { signal, watcher }
    }

    /// Whether a signal came (a command checks between its steps).
    pub(super) fn came(&self) -> bool {
        self.signal.load(Ordering::SeqCst) != 0
    }

    /// If a signal came, waits until every server is stopped and returns its
    /// number and the exit code for it. A signal that comes later finds the
    /// command finishing.
    pub(super) fn finish(self) -> Option<(i32, ExitCode)> {
        let number = self.signal.load(Ordering::SeqCst);
        if number == 0 {
            return None; // the watcher stays blocked in sigwait until exit
        }
        if let Some(watcher) = self.watcher {
            if let Err(panic) = watcher.join() {
                std::panic::resume_unwind(panic);
            }
        }
        Some((
            number,
            ExitCode::from(u8::try_from(128 + number).unwrap_or(1)),
        ))
    }
}
