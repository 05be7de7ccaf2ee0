//! The only module with `unsafe`: process groups, the parent-death signal, and
//! exit-status polls that leave the child unreaped.
//!
//! Every child runs in its own process group, so signalling the group also
//! reaches what an `npx` or `sh -c` wrapper started. Each child asks the kernel
//! for SIGKILL when the thread that spawned it exits (`PR_SET_PDEATHSIG`), which
//! also covers the workbench being killed with SIGKILL. Exit polls use
//! `waitid(.., WNOWAIT)`: the child stays a zombie until its owner reaps it, so
//! its pid, which is also its group id, cannot be reused while we may still
//! signal the group.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::Command;
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

/// Puts the child in a new process group and arranges SIGKILL on the death of
/// the spawning thread. Spawn from a thread that lives as long as the child.
pub fn configure(cmd: &mut Command) {
    cmd.process_group(0);
    // SAFETY: getpid before fork is async-signal-safe plumbing; the closure runs
    // between fork and exec and only calls the async-signal-safe prctl, getppid
    // and _exit.
    let parent = unsafe { libc::getpid() };
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died before prctl took effect.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// Sends `signal` to the process group `pgid`; a group that is already gone is fine.
pub fn signal_group(pgid: u32, signal: i32) {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return;
    };
    // SAFETY: killpg has no memory-safety preconditions.
    unsafe {
        libc::killpg(pgid, signal);
    }
}

/// The exit of `pid` if it has exited, without reaping it.
pub fn exited(pid: u32) -> Option<Exit> {
    // SAFETY: waitid writes into the zeroed siginfo we own; the accessors read
    // the fields waitid filled for CLD_* codes.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
        if libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags) != 0 {
            return Some(Exit::Unknown); // ECHILD: reaped already
        }
        if info.si_pid() == 0 {
            return None; // still running
        }
        let status = info.si_status();
        Some(match info.si_code {
            libc::CLD_EXITED => Exit::Code(status),
            _ => Exit::Signal(status),
        })
    }
}

/// Waits up to `limit` for `pid` to exit, polling without reaping.
pub fn wait_exit(pid: u32, limit: Duration) -> Option<Exit> {
    let deadline = Instant::now() + limit;
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(exit) = exited(pid) {
            return Some(exit);
        }
        let now = Instant::now();
        if now >= deadline {
            return None;
        }
        thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// The MCP stdio shutdown after stdin was closed: wait `grace`, SIGTERM the
/// group, wait `grace`, SIGKILL the group, then SIGKILL the group again to sweep
/// members that outlived the leader. The leader is left for the caller to reap.
pub fn stop_group(pid: u32, grace: Duration) -> Exit {
    let exit = wait_exit(pid, grace)
        .or_else(|| {
            signal_group(pid, libc::SIGTERM);
            wait_exit(pid, grace)
        })
        .unwrap_or_else(|| {
            signal_group(pid, libc::SIGKILL);
            wait_exit(pid, Duration::from_secs(5)).unwrap_or(Exit::Unknown)
        });
    signal_group(pid, libc::SIGKILL);
    exit
}

/// The signals that mean "shut down": SIGTERM, SIGINT, SIGHUP.
const SHUTDOWN_SIGNALS: [i32; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

/// Blocks the shutdown signals in the calling thread. Call it first thing in
/// `main`, before any thread exists, so that every thread inherits the mask and
/// the signals wait for `wait_for_shutdown_signal` (children get a clean mask:
/// std resets it between fork and exec).
pub fn block_shutdown_signals() {
    // SAFETY: the set is a local we initialise with sigemptyset before use.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in SHUTDOWN_SIGNALS {
            libc::sigaddset(&mut set, signal);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Waits (in a dedicated thread) for one of the blocked shutdown signals.
pub fn wait_for_shutdown_signal() -> i32 {
    // SAFETY: as above; sigwait writes the signal number into a local.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in SHUTDOWN_SIGNALS {
            libc::sigaddset(&mut set, signal);
        }
        let mut signal = 0;
        while libc::sigwait(&set, &mut signal) != 0 {}
        signal
    }
}
