//! Unix (Linux, macOS): process groups, exit polls that leave the child
//! unreaped, and the shutdown and reload signals.
//!
//! Every child runs in its own process group, so signalling the group also
//! reaches what an `npx` or `sh -c` wrapper started. On Linux each child also
//! asks the kernel for SIGKILL when the thread that spawned it exits
//! (`PR_SET_PDEATHSIG`) and becomes the subreaper of its own tree
//! (`PR_SET_CHILD_SUBREAPER`, see `reaper`); macOS has no such thing, and
//! everywhere the `watchdog` kills every group when the workbench dies,
//! grandchildren included. SIGUSR2 is ignored for the whole run. Exit polls
//! use `waitid(.., WNOWAIT)`: the child stays a zombie
//! until its owner reaps it, so its pid, which is also its group id, cannot be
//! reused while we may still signal the group. Children start with an empty
//! signal mask and default dispositions, whatever the workbench blocks or
//! ignores. The leaders' pids are listed (`leaders`), so that the `reaper`
//! (Linux) never reaps a process std's `Child` owns.

use super::leaders::leaders;
use super::{watchdog, Exit};
use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::thread;

/// Variables passed to every child, as the official MCP SDKs do on Unix.
pub(crate) const ALLOWED_ENV: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// The variable that `~` in a config path stands for.
pub(crate) const HOME: &str = "HOME";

/// The command that runs `program`: a name without a slash is looked up in
/// the child's `PATH` by `exec`, as a shell would.
pub(crate) fn command(program: &str, _env: &std::collections::BTreeMap<String, String>) -> Command {
    Command::new(program)
}

/// The file `program` runs for a child with environment `env`, as `exec`
/// finds it: a name with a slash as it is, a bare name in the first folder
/// of `env`'s `PATH` that holds an executable file of that name; its links
/// resolved. `None`: not found.
pub(crate) fn program_path(
    program: &str,
    env: &std::collections::BTreeMap<String, String>,
) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let found = if program.contains('/') {
        Some(std::path::PathBuf::from(program))
    } else {
        let path = env.get("PATH")?;
        std::env::split_paths(path)
            .filter(|folder| !folder.as_os_str().is_empty())
            .map(|folder| folder.join(program))
            .find(|file| {
                std::fs::metadata(file)
                    .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            })
    };
    found.map(|file| std::fs::canonicalize(&file).unwrap_or(file))
}

/// The processes of one server: its process group, named by the pid of the
/// process we started (the group's leader).
pub(crate) struct Tree {
    pid: u32,
}

impl Tree {
    /// Spawns `cmd` in a process group of its own, registered with the
    /// watchdog. Call it from a thread that lives as long as the child: on
    /// Linux the parent-death signal follows the spawning thread.
    pub(crate) fn spawn(cmd: &mut Command) -> io::Result<(Child, Tree)> {
        configure(cmd);
        let child = {
            let mut leaders = leaders();
            #[allow(clippy::disallowed_methods)] // the one spawn, configured above
            let child = cmd.spawn()?;
            leaders.extend(libc::pid_t::try_from(child.id()));
            child
        };
        let pid = child.id();
        watchdog::watch(pid);
        Ok((child, Tree { pid }))
    }

    /// The exit of the first process if it has exited, without reaping it.
    pub(crate) fn exited(&self) -> Option<Exit> {
        // SAFETY: waitid writes into the zeroed siginfo we own; the accessors
        // read the fields waitid filled for CLD_* codes.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
            if libc::waitid(libc::P_PID, self.pid as libc::id_t, &mut info, flags) != 0 {
                return Some(Exit::Unknown); // ECHILD: reaped already
            }
            if info.si_pid() == 0 {
                return None; // still running
            }
            Some(exit_of(&info))
        }
    }

    /// The pid of the first process, for messages.
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// SIGTERM to the group: true, there is a way to ask.
    pub(crate) fn ask_to_stop(&self) -> bool {
        self.signal(libc::SIGTERM);
        true
    }

    /// SIGKILL to the group; on Linux first to the processes below its first
    /// process that left the group (`setsid`, a double fork: the first
    /// process is the subreaper of its tree), found in `/proc` while that
    /// process runs (once it has exited, what was below it belongs to the
    /// workbench, the subreaper above it, and nothing is below it: no walk).
    pub(crate) fn kill(&self) {
        #[cfg(target_os = "linux")]
        if self.exited().is_none() {
            super::reaper::Helpers::of(self.pid).kill();
        }
        self.signal(libc::SIGKILL);
    }

    /// Call just before the first process is reaped: until then it is a
    /// zombie and its pid, the group id, cannot be reused.
    pub(crate) fn release(&self) {
        watchdog::forget(self.pid);
    }

    /// Sends `signal` to the group; a group that is already gone is fine.
    fn signal(&self, signal: i32) {
        let Ok(pgid) = libc::pid_t::try_from(self.pid) else {
            return;
        };
        // SAFETY: killpg has no memory-safety preconditions.
        unsafe {
            libc::killpg(pgid, signal);
        }
    }
}

impl Drop for Tree {
    /// The `Child` has reaped the first process by now (or never will): its
    /// pid is no longer a leader's.
    fn drop(&mut self) {
        let mut leaders = leaders();
        if let Some(i) = leaders.iter().position(|&p| p as u32 == self.pid) {
            leaders.swap_remove(i);
        }
        #[cfg(target_os = "linux")]
        super::reaper::leader_gone();
    }
}

/// The exit that `waitid` reported in `info`.
///
/// # Safety
/// `info` was filled by a successful `waitid` for a CLD_* change.
unsafe fn exit_of(info: &libc::siginfo_t) -> Exit {
    let status = info.si_status();
    match info.si_code {
        libc::CLD_EXITED => Exit::Code(status),
        _ => Exit::Signal(status),
    }
}

/// A file's identity: its device and inode (a file renamed over a path is
/// another file).
pub(crate) fn file_identity(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

/// On Linux makes the workbench the subreaper of its servers' trees (what a
/// server's helper leaves behind is adopted by the workbench, not by init:
/// `reaper`), then forks the watchdog (`watchdog::start`). Call it once,
/// before any thread exists.
pub fn start_watchdog() -> io::Result<()> {
    #[cfg(target_os = "linux")]
    if let Err(e) = super::reaper::become_subreaper() {
        log::warn!("cannot adopt what servers leave behind ({e}): a helper that leaves its server's process group may survive the workbench");
    }
    #[cfg(target_os = "linux")]
    let tick = Some(super::reaper::scan as fn());
    #[cfg(not(target_os = "linux"))]
    let tick = None;
    watchdog::start(tick)
}

/// The signals whose disposition the workbench changes (std ignores SIGPIPE,
/// `block_shutdown_signals` ignores SIGUSR2) or that it blocks in every thread
/// (the shutdown signals, and SIGUSR1).
const RESET_SIGNALS: [i32; 6] = [
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGPIPE,
    libc::SIGUSR1,
    libc::SIGUSR2,
];

/// Puts the child in a new process group, gives it an empty signal mask and
/// default dispositions (the workbench blocks the shutdown signals in every
/// thread, and a blocked mask survives exec), and on Linux makes it the
/// subreaper of its tree and arranges SIGKILL on the death of the spawning
/// thread.
fn configure(cmd: &mut Command) {
    cmd.process_group(0);
    let empty = signal_set(&[]);
    // SAFETY: getpid runs before fork; the closure runs between fork and exec
    // and only calls the async-signal-safe sigprocmask, signal, prctl, getppid
    // and _exit.
    #[cfg(target_os = "linux")]
    let parent = unsafe { libc::getpid() };
    // SAFETY: as above: only async-signal-safe calls between fork and exec.
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
            #[cfg(target_os = "linux")]
            {
                // The child is the subreaper of its own tree (kept across
                // exec): an orphan in it, say a helper whose parent exited
                // after a double fork, stays below it, where a stop finds it
                // (`reaper::Helpers`). A failure (a kernel before 3.4, where
                // the workbench could not be one either) only loses that.
                libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0);
                let kill = libc::SIGKILL as libc::c_ulong;
                if libc::prctl(libc::PR_SET_PDEATHSIG, kill, 0, 0, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
                // The parent may have died before prctl took effect.
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
            }
            Ok(())
        });
    }
}

/// The signals that mean "shut down": SIGTERM, SIGINT, SIGHUP.
const SHUTDOWN_SIGNALS: [i32; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

/// The signal that means "load the config again".
const RELOAD_SIGNAL: i32 = libc::SIGUSR1;

/// The set of `signals`.
fn signal_set(signals: &[i32]) -> libc::sigset_t {
    // SAFETY: the set is a local we initialise with sigemptyset before use.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for &signal in signals {
            libc::sigaddset(&mut set, signal);
        }
        set
    }
}

/// Waits for one of `signals`, which every thread blocks; its number.
fn wait_for(signals: &[i32]) -> i32 {
    let set = signal_set(signals);
    let mut signal = 0;
    // SAFETY: sigwait reads the set and writes the number into locals.
    while unsafe { libc::sigwait(&set, &mut signal) } != 0 {}
    signal
}

/// Fixes the workbench's signal dispositions for the whole run: blocks the
/// shutdown signals, and the reload signal, in the calling thread, and ignores
/// SIGUSR2, so that a stray one is harmless from the first instruction,
/// whether or not a child was ever spawned. Call it first thing in `main`, before any thread
/// exists, so that every thread inherits the mask and the signals wait for
/// `on_shutdown_signal` and `on_reload_signal` (children get an empty mask and
/// default dispositions from `configure`).
pub fn block_shutdown_signals() {
    let mut signals = SHUTDOWN_SIGNALS.to_vec();
    signals.push(RELOAD_SIGNAL);
    let set = signal_set(&signals);
    // SAFETY: pthread_sigmask reads the set we own; signal has no
    // memory-safety preconditions.
    unsafe {
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        libc::signal(libc::SIGUSR2, libc::SIG_IGN);
    }
}

/// Starts a thread named `name` that waits for one of the blocked shutdown
/// signals, logs it and runs `on_signal` with its number. `None` (logged)
/// when the thread cannot be created.
pub(crate) fn on_shutdown_signal(
    name: &str,
    on_signal: impl FnOnce(i32) + Send + 'static,
) -> Option<thread::JoinHandle<()>> {
    thread::Builder::new()
        .name(name.into())
        .stack_size(64 * 1024)
        .spawn(move || {
            let signal = wait_for(&SHUTDOWN_SIGNALS);
            log::info!("received signal {signal}");
            on_signal(signal);
        })
        .inspect_err(|e| log::warn!("cannot watch for signals: {e}"))
        .ok()
}

/// Starts a thread named `name` that runs `on_signal` each time SIGUSR1 (the
/// reload signal) comes: blocked in every thread, it waits in this thread's
/// sigwait alone (the shutdown watcher's set does not hold it). `None`
/// (logged) when the thread cannot be created.
pub(crate) fn on_reload_signal(
    name: &str,
    on_signal: impl Fn() + Send + 'static,
) -> Option<thread::JoinHandle<()>> {
    thread::Builder::new()
        .name(name.into())
        .stack_size(64 * 1024)
        .spawn(move || loop {
            wait_for(&[RELOAD_SIGNAL]);
            log::info!("received SIGUSR1: loading the config again");
            on_signal();
        })
        .inspect_err(|e| log::warn!("cannot watch for SIGUSR1: {e}"))
        .ok()
}

/// Spawns `cmd` detached from this process: a session and process group of
/// its own (so a host that kills our group, or closes our terminal, does not
/// reach it), no parent-death signal, an empty signal mask and default
/// dispositions. The shared fleet (docs/reference.md §8), not a server: it is
/// no leader, the watchdog does not know it, and it outlives us.
pub(crate) fn spawn_detached(cmd: &mut Command) -> io::Result<Child> {
    let empty = signal_set(&[]);
    // SAFETY: the closure runs between fork and exec and only calls the
    // async-signal-safe setsid, sigprocmask and signal.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() == -1 {
                return Err(io::Error::last_os_error());
            }
            if libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error());
            }
            for signal in RESET_SIGNALS {
                if libc::signal(signal, libc::SIG_DFL) == libc::SIG_ERR {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    #[allow(clippy::disallowed_methods)] // not a server: see above
    cmd.spawn()
}

/// The resident memory of process `pid` in KiB, if known (Linux: `/proc`;
/// macOS: `proc_pidinfo`).
pub(crate) fn rss_kb(pid: u32) -> Option<u64> {
    #[cfg(target_os = "macos")]
    {
        let pid = libc::c_int::try_from(pid).ok()?;
        // SAFETY: a zeroed proc_taskinfo is a valid value; proc_pidinfo
        // writes at most `size` bytes into it and returns how many.
        unsafe {
            let mut info: libc::proc_taskinfo = std::mem::zeroed();
            let size = std::mem::size_of::<libc::proc_taskinfo>() as libc::c_int;
            let got = libc::proc_pidinfo(
                pid,
                libc::PROC_PIDTASKINFO,
                0,
                (&mut info as *mut libc::proc_taskinfo).cast(),
                size,
            );
            (got == size).then_some(info.pti_resident_size / 1024)
        }
    }
    #[cfg(not(target_os = "macos"))]
    {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }
}
