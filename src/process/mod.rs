//! Everything that differs between operating systems, behind one interface:
//! starting a server's process tree, stopping it, killing it, noticing its
//! exit; the shutdown signals and SIGUSR1 (Unix) or console events (Windows);
//! how a program name becomes a program and which variables a child inherits;
//! what identifies a file (for the config watch).
//! The rest of the workbench does not know which system it runs on.
//!
//! A server runs as a *tree*: the process we start and everything it starts
//! (an `npx` or `cmd /c` wrapper's node, a shell's pipeline). On Unix the tree
//! is a process group, and a forked watchdog kills every group when the
//! workbench dies however it dies (`unix`, `watchdog`). On Linux the
//! workbench is also the subreaper of those trees, so what leaves a group
//! (`setsid`, a double fork) is killed with its tree or at shutdown, and by
//! the watchdog if the workbench dies (`reaper`); macOS cannot do that. On
//! Windows it is a Job Object with kill-on-close, which the system kills when
//! the workbench's handles close, however it dies (`windows`): nothing can
//! leave a job (breakaway is not allowed).
//!
//! The stop sequence is MCP's for stdio (basic/transports §stdio, 2025-06-18):
//! close stdin (the caller does), wait, ask the tree to stop where the system
//! has a way to ask (SIGTERM on Unix), wait, kill the tree.
//!
//! These modules hold all the workbench's `unsafe` code.

#[cfg(target_os = "linux")]
mod reaper;
#[cfg(unix)]
mod unix;
#[cfg(unix)]
mod watchdog;
#[cfg(windows)]
mod win32;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
use unix as sys;
#[cfg(windows)]
use windows as sys;

pub use sys::{
    block_shutdown_signals, command, file_identity, install_interrupt, interrupt, on_reload_signal,
    on_shutdown_signal, start_watchdog, use_nonblocking_writes, wait_writable, Tree, ALLOWED_ENV,
    HOME,
};

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    /// Already reaped elsewhere; the status is gone.
    Unknown,
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(c) => write!(f, "exit status {c}"),
            Exit::Signal(s) => write!(f, "killed by signal {s}"),
            Exit::Unknown => write!(f, "exited"),
        }
    }
}

/// Set by a second shutdown trigger: stop sequences skip their grace waits
/// and go straight to the kill (they never skip the kill itself).
static HURRY: AtomicBool = AtomicBool::new(false);

/// Makes every running and future stop sequence skip its grace periods.
pub fn hurry() {
    HURRY.store(true, Ordering::SeqCst);
}

impl Tree {
    /// Waits up to `limit` for the tree's first process to exit, without
    /// reaping it. Returns early (`None`) once `hurry` was called.
    pub fn wait_exit(&self, limit: Duration) -> Option<Exit> {
        let deadline = Instant::now() + limit;
        let mut pause = Duration::from_millis(1);
        loop {
            if let Some(exit) = self.exited() {
                return Some(exit);
            }
            let now = Instant::now();
            if now >= deadline || HURRY.load(Ordering::SeqCst) {
                return None;
            }
            thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(Duration::from_millis(20));
        }
    }

    /// The stop sequence: note the tree's helpers that left it (Linux, below),
    /// `close_stdin`, wait `grace`, ask the tree to stop and wait `grace`
    /// again (where the system has a way to ask), kill the tree, then kill it
    /// again to sweep members that outlived the first process, and kill the
    /// helpers noted. That process is left for the caller to reap.
    pub fn stop(&self, grace: Duration, close_stdin: impl FnOnce()) -> Exit {
        // Noted before stdin closes: once the first process exits, they are
        // no longer below it.
        let helpers = Helpers::of(self);
        close_stdin();
        let exit = self
            .wait_exit(grace)
            .or_else(|| self.ask_to_stop().then(|| self.wait_exit(grace)).flatten())
            .unwrap_or_else(|| {
                self.kill();
                // A kill cannot be refused: only a process stuck in the kernel
                // takes long, so this wait is not cut short by `hurry`.
                let deadline = Instant::now() + Duration::from_secs(5);
                loop {
                    match self.exited() {
                        Some(exit) => break exit,
                        None if Instant::now() >= deadline => break Exit::Unknown,
                        None => thread::sleep(Duration::from_millis(2)),
                    }
                }
            });
        self.kill();
        helpers.kill();
        exit
    }
}

#[cfg(target_os = "linux")]
use reaper::Helpers;

/// Elsewhere helpers cannot leave a tree (Windows: the Job Object holds every
/// descendant) or cannot be found (macOS: no subreaper, see the README).
#[cfg(not(target_os = "linux"))]
struct Helpers;

#[cfg(not(target_os = "linux"))]
impl Helpers {
    fn of(_: &Tree) -> Helpers {
        Helpers
    }

    fn kill(&self) {}
}

/// At shutdown, once every server was stopped: kills and reaps what the
/// servers left outside their trees and the workbench adopted (Linux; a
/// no-op elsewhere).
pub fn kill_orphans() {
    #[cfg(target_os = "linux")]
    reaper::kill_orphans();
}
