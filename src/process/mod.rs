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
//! workbench dies however it dies (`unix`, `watchdog`). On Windows it is a Job
//! Object with kill-on-close, which the system kills when the workbench's
//! handles close, however it dies (`windows`).
//!
//! The stop sequence is MCP's for stdio (basic/transports §stdio, 2025-06-18):
//! close stdin (the caller does), wait, ask the tree to stop where the system
//! has a way to ask (SIGTERM on Unix), wait, kill the tree.
//!
//! These modules hold all the workbench's `unsafe` code.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
mod unix_watch;
#[cfg(unix)]
mod watchdog;
#[cfg(windows)]
mod win32;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
mod windows_watch;

#[cfg(unix)]
use unix as sys;
#[cfg(unix)]
pub use unix_watch::{Stdin, Waker, Watch};
#[cfg(windows)]
use windows as sys;
#[cfg(windows)]
pub use windows_watch::{Stdin, Waker, Watch};

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

/// What `Watch::wait` found: each flag says the stream has data or ended,
/// stdin has room, or the process exited.
#[derive(Debug, Default, Clone, Copy)]
pub struct Ready {
    pub stdout: bool,
    pub stderr: bool,
    pub stdin: bool,
    pub exited: bool,
}

/// One of the two streams a child writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Set by a second shutdown trigger: stop sequences skip their grace waits
/// and go straight to the kill (they never skip the kill itself).
static HURRY: AtomicBool = AtomicBool::new(false);

/// Makes every running and future stop sequence skip its grace periods.
pub fn hurry() {
    HURRY.store(true, Ordering::SeqCst);
}

/// Whether stop sequences skip their grace periods (`hurry`).
pub fn hurried() -> bool {
    HURRY.load(Ordering::SeqCst)
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

    /// The stop sequence after stdin was closed: wait `grace`, ask the tree to
    /// stop and wait `grace` again (where the system has a way to ask), kill
    /// the tree, then kill it again to sweep members that outlived the first
    /// process. That process is left for the caller to reap.
    pub fn stop(&self, grace: Duration) -> Exit {
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
        exit
    }
}
