//! The only module with `unsafe` (with its `watchdog` submodule): process
//! groups, the parent-death signal, exit-status polls that leave the child
//! unreaped, and the shutdown signals.
//!
//! Every child runs in its own process group, so signalling the group also
//! reaches what an `npx` or `sh -c` wrapper started. Each child asks the kernel
//! for SIGKILL when the thread that spawned it exits (`PR_SET_PDEATHSIG`), which
//! also covers the workbench being killed with SIGKILL. Exit polls use
//! `waitid(.., WNOWAIT)`: the child stays a zombie until its owner reaps it, so
//! its pid, which is also its group id, cannot be reused while we may still
//! signal the group. Children start with an empty signal mask and default
//! dispositions, whatever the workbench blocks or ignores. The `watchdog`
//! kills every group when the workbench dies, grandchildren included.

pub mod watchdog;

use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::Command;
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

/// The signals whose disposition the workbench changes (std ignores SIGPIPE)
/// or that it blocks in every thread (the shutdown signals).
const RESET_SIGNALS: [i32; 4] = [libc::SIGHUP, libc::SIGINT, libc::SIGTERM, libc::SIGPIPE];

/// Puts the child in a new process group, gives it an empty signal mask and
/// default dispositions (the workbench blocks the shutdown signals in every
/// thread, and a blocked mask survives exec), and arranges SIGKILL on the death
/// of the spawning thread. Spawn from a thread that lives as long as the child.
pub fn configure(cmd: &mut Command) {
    cmd.process_group(0);
    // SAFETY: getpid and sigemptyset run before fork on locals we own; the
    // closure runs between fork and exec and only calls the async-signal-safe
    // sigprocmask, signal, prctl, getppid and _exit.
    let parent = unsafe { libc::getpid() };
    let empty = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        set
    };
    unsafe {
        cmd.pre_exec(move || {
            if libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error());
            }
            for signal in RESET_SIGNALS {
                if libc::signal(signal, libc::SIG_DFL) == libc::SIG_ERR {
                    return Err(io::Error::last_os_error());
                }
            }
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

/// SIGKILLs the process group `pgid`.
pub fn kill_group(pgid: u32) {
    signal_group(pgid, libc::SIGKILL);
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

/// Blocks until `pid` exits, without reaping it (the exit watcher's wait).
pub fn wait_exit_blocking(pid: u32) -> Exit {
    loop {
        // SAFETY: as in `exited`; without WNOHANG waitid blocks until a change.
        let (rc, info) = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let flags = libc::WEXITED | libc::WNOWAIT;
            let rc = libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags);
            (rc, info)
        };
        if rc != 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Exit::Unknown; // ECHILD: reaped already
        }
        // SAFETY: waitid filled a CLD_* record.
        let status = unsafe { info.si_status() };
        return match info.si_code {
            libc::CLD_EXITED => Exit::Code(status),
            _ => Exit::Signal(status),
        };
    }
}

/// Set by a second shutdown trigger: stop sequences skip their grace waits
/// and go straight to SIGKILL (they never skip the kill itself).
static HURRY: AtomicBool = AtomicBool::new(false);

/// Makes every running and future stop sequence skip its grace periods.
pub fn hurry() {
    HURRY.store(true, Ordering::SeqCst);
}

/// Waits up to `limit` for `pid` to exit, polling without reaping. Returns
/// early (`None`) once `hurry` was called.
pub fn wait_exit(pid: u32, limit: Duration) -> Option<Exit> {
    let deadline = Instant::now() + limit;
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(exit) = exited(pid) {
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
            // SIGKILL cannot be ignored: only a process stuck in the kernel
            // takes long, so this wait is not cut short by `hurry`.
            let deadline = Instant::now() + Duration::from_secs(5);
            loop {
                match exited(pid) {
                    Some(exit) => break exit,
                    None if Instant::now() >= deadline => break Exit::Unknown,
                    None => thread::sleep(Duration::from_millis(2)),
                }
            }
        });
    signal_group(pid, libc::SIGKILL);
    exit
}

/// The signals that mean "shut down": SIGTERM, SIGINT, SIGHUP.
const SHUTDOWN_SIGNALS: [i32; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

/// Blocks the shutdown signals in the calling thread. Call it first thing in
/// `main`, before any thread exists, so that every thread inherits the mask and
/// the signals wait for `on_shutdown_signal` (children get an empty mask
/// from `configure`).
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

/// Starts a thread named `name` that waits for one of the blocked shutdown
/// signals, logs it and runs `on_signal` with its number. `None` (logged)
/// when the thread cannot be created.
pub fn on_shutdown_signal(
    name: &str,
    on_signal: impl FnOnce(i32) + Send + 'static,
) -> Option<thread::JoinHandle<()>> {
    thread::Builder::new()
        .name(name.into())
        .stack_size(64 * 1024)
        .spawn(move || {
            let signal = wait_for_shutdown_signal();
            log::info!("received signal {signal}");
            on_signal(signal);
        })
        .inspect_err(|e| log::warn!("cannot watch for signals: {e}"))
        .ok()
}

/// Waits for one of the blocked shutdown signals.
fn wait_for_shutdown_signal() -> i32 {
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

/// Puts `fd` in non-blocking mode (our end of a child's pipe: the child's end
/// is a separate open file and keeps blocking).
pub fn set_nonblocking(fd: &impl AsRawFd) -> io::Result<()> {
    let fd = fd.as_raw_fd();
    // SAFETY: fcntl on a descriptor the caller owns; no memory is passed.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The signal that interrupts a thread blocked in `read` or `poll` on a
/// child's pipe (`interrupt`). Its handler does nothing; what matters is that
/// it is installed without `SA_RESTART`, so the call fails with `EINTR`.
const INTERRUPT: i32 = libc::SIGUSR2;

extern "C" fn on_interrupt(_: libc::c_int) {}

/// Installs the `INTERRUPT` handler (once per process). Children start with
/// default dispositions: exec resets handled signals.
pub fn install_interrupt() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        // SAFETY: a zeroed sigaction with an empty mask and a handler that
        // touches nothing is valid; sigaction copies it.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_interrupt as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut action.sa_mask);
            action.sa_flags = 0; // no SA_RESTART
            libc::sigaction(INTERRUPT, &action, std::ptr::null_mut());
        }
    });
}

/// Makes `thread`'s blocking system call, if any, return `EINTR`. A thread
/// not yet in one is unaffected, so callers repeat until the thread ends.
pub fn interrupt(thread: &std::thread::JoinHandle<()>) {
    use std::os::unix::thread::JoinHandleExt;
    // SAFETY: the handle is not joined, so the pthread_t is still valid.
    unsafe {
        #[allow(clippy::unnecessary_cast)]
        // `RawPthread` is an integer on musl, where `pthread_t` is a pointer
        libc::pthread_kill(thread.as_pthread_t() as libc::pthread_t, INTERRUPT);
    }
}

/// Blocks until `fd` can be written. `EINTR` (from `interrupt`) is returned
/// to the caller, which decides whether to give up.
pub fn wait_writable(fd: &impl AsRawFd) -> io::Result<()> {
    let mut pollfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: poll reads and writes the one pollfd record we own.
    if unsafe { libc::poll(&mut pollfd, 1, -1) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
