//! Everything that differs between operating systems, behind one interface:
//! starting a server's process tree, stopping it, killing it, noticing its
//! exit; the shutdown signals and SIGUSR1 (Unix) or console events (Windows);
//! how a program name becomes a program and which variables a child inherits;
//! what identifies a file (for the config watch); the user's state and cache
//! folders and files only the user can read (`dirs`); the names of the
//! programs running (`programs`, for `install`'s restart hint); a lock
//! between processes (`file_lock`: the tool catalog's writes, the sign-in's
//! tokens); for signing in to remote servers (feature `remote`), random
//! bytes (`random`) and the web browser (`browser`).
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

#[cfg(feature = "remote")]
mod browser;
mod dirs;
mod file_lock;
#[cfg(unix)]
mod leaders;
#[cfg(unix)]
pub(crate) mod local_unix;
mod programs;
#[cfg(unix)]
pub(crate) use local_unix as local;
#[cfg(windows)]
pub(crate) mod local_windows;
#[cfg(windows)]
pub(crate) use local_windows as local;
#[cfg(feature = "remote")]
mod random;
#[cfg(target_os = "linux")]
mod reaper;
#[cfg(unix)]
mod unix;
#[cfg(unix)]
mod unix_watch;
#[cfg(test)]
mod watch_tests;
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
/// A remote server's pump wait: its waker, and on Unix its event stream's socket.
#[cfg(all(unix, feature = "remote"))]
pub(crate) use unix_watch::NetWait;
#[cfg(unix)]
pub(crate) use unix_watch::{InputWait, Stdin, Waker, Watch};
#[cfg(windows)]
use windows as sys;
#[cfg(all(windows, feature = "remote"))]
pub(crate) use windows_watch::NetWait;
#[cfg(windows)]
pub(crate) use windows_watch::{Stdin, Waker, Watch};

#[cfg(feature = "remote")]
pub(crate) use browser::open_browser;
pub(crate) use dirs::{
    private_dir, private_file, user_config, user_dir, write_atomically,
    write_atomically_keeping_mode, write_atomically_unless, Os, UserDir,
};
#[cfg(feature = "remote")]
pub(crate) use dirs::{read_private, secure_dir, Secured};
pub(crate) use file_lock::FileLock;
pub(crate) use programs::program_names;
#[cfg(feature = "remote")]
pub(crate) use random::random;
pub use sys::{block_shutdown_signals, start_watchdog};
pub(crate) use sys::{
    command, on_reload_signal, on_shutdown_signal, program_path, Tree, ALLOWED_ENV, HOME,
};
/// The shared fleet's needs (docs/reference.md §8).
pub(crate) use sys::{rss_kb, spawn_detached};

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    Code(i32),
    #[cfg_attr(windows, allow(dead_code))] // Unix only
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

impl From<std::process::ExitStatus> for Exit {
    fn from(status: std::process::ExitStatus) -> Exit {
        if let Some(code) = status.code() {
            return Exit::Code(code);
        }
        #[cfg(unix)]
        if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
            return Exit::Signal(signal);
        }
        Exit::Unknown
    }
}

/// What `Watch::wait` found: each flag says the stream has data or ended,
/// stdin has room, or the process exited.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Ready {
    pub stdout: bool,
    pub stderr: bool,
    pub stdin: bool,
    pub exited: bool,
}

/// One of the two streams a child writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    Stdout,
    Stderr,
}

/// What tells a file's new version from the one read: its identity (a file
/// renamed over it is another file; Unix only), size and modification time.
/// Taken before the file is read, a stamp is never newer than what was read,
/// so any change made after the read makes the next stamp differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    identity: Option<(u64, u64)>,
    len: u64,
    modified: Option<SystemTime>,
}

impl Stamp {
    /// The stamp of `path` now; `None` when it cannot be read.
    pub(crate) fn of(path: &Path) -> Option<Stamp> {
        let meta = std::fs::metadata(path).ok()?;
        Some(Stamp {
            identity: sys::file_identity(&meta),
            len: meta.len(),
            modified: meta.modified().ok(),
        })
    }
}

/// Set by a second shutdown trigger: stop sequences skip their grace waits
/// and go straight to the kill (they never skip the kill itself).
static HURRY: AtomicBool = AtomicBool::new(false);

/// Makes every running and future stop sequence skip its grace periods.
pub(crate) fn hurry() {
    HURRY.store(true, Ordering::SeqCst);
}

/// Whether stop sequences skip their grace periods (`hurry`).
pub(crate) fn hurried() -> bool {
    HURRY.load(Ordering::SeqCst)
}

#[cfg(target_os = "linux")]
pub(crate) use reaper::Helpers;

/// Elsewhere helpers cannot leave a tree (Windows: the Job Object holds every
/// descendant) or cannot be found (macOS: no subreaper, see docs/guide-behaviour.md).
#[cfg(not(target_os = "linux"))]
pub(crate) struct Helpers;

#[cfg(not(target_os = "linux"))]
impl Helpers {
    pub(crate) fn of(_leader: u32) -> Helpers {
        Helpers
    }

    pub(crate) fn kill(&self) {}
}

/// At shutdown, once every server was stopped: kills and reaps what the
/// servers left outside their trees and the workbench adopted (Linux; a
/// no-op elsewhere).
pub(crate) fn kill_orphans() {
    #[cfg(target_os = "linux")]
    reaper::kill_orphans();
}
