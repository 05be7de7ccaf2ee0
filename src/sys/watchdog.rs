//! The watchdog: a tiny process, forked at launch, that kills every server's
//! process group once the workbench is gone, however it died (SIGKILL, a crash,
//! an abort, an `exit` in the middle of a stop).
//!
//! Linux's `PR_SET_PDEATHSIG` reaches only a direct child, and macOS has no
//! parent-death signal at all: what an `sh -c` or `npx` wrapper started would
//! survive, reparented to init (launchd). The workbench holds the
//! write end of a pipe whose read end only the watchdog holds, and writes one
//! fixed-size record per change: `+pgid` right after a spawn, `-pgid` just
//! before the group's leader is reaped (until then the leader is a zombie, so
//! its pid, the group id, cannot be reused). When the pipe reports EOF, the
//! kernel has closed the last write end: the workbench is gone. The watchdog
//! then sends SIGKILL to every group still registered and exits.
//!
//! On Linux the workbench also registers the processes of its servers' trees
//! that left every server's group (`reaper`): for those ids the watchdog kills
//! the process and the group it may lead.
//!
//! The watchdog can be lost too (`kill -9`, the OOM killer). It holds the only
//! write end of a second pipe, `alive`, and never writes to it; the
//! workbench's `watchdog` thread waits on the read end, so EOF there means the
//! watchdog is gone, at once. The thread reaps it, logs a warning, forks a new
//! one and hands it every live group: the workbench keeps its own list of
//! them (`Watch`). Forking after threads exist is sound because the child
//! makes only async-signal-safe calls; the pipes are created under the spawn
//! lock (`leaders`) and made close-on-exec before any server is spawned.
//!
//! The child side runs between `fork` and `_exit` and makes only
//! async-signal-safe calls (signal, sigprocmask, setsid, chdir, dup2, close,
//! read, kill, _exit) on a fixed table on its stack: no allocation, no lock, so
//! it is sound even if a thread existed at the fork. It holds no other file
//! descriptor than its two pipe ends (a host waits for EOF on the pipes it gave the workbench), runs in
//! `/` in a session of its own, and ignores every signal but SIGKILL (and
//! SIGSTOP, which cannot be caught), so a Ctrl-C, a signal to the workbench's
//! process group or a `kill -USR1 $(pidof mcp-workbench)` meant for a reload
//! does not end it before it has done its job. It never writes anything anywhere.

use super::leaders::leaders;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

/// One record: an operation byte (`+` or `-`) and the group id, native endian.
/// Far below `PIPE_BUF`, so concurrent writes never interleave.
const RECORD: usize = 5;
/// Groups the watchdog can hold at once; more live children than this are
/// covered only by Linux's parent-death signal.
const CAPACITY: usize = 4096;

/// Where closing descriptors one by one stops, when `close_range` is missing.
const CLOSE_LIMIT: libc::c_int = 1 << 16;

/// Above the highest signal number (64 on Linux, 31 on macOS).
const SIGNAL_LIMIT: libc::c_int = 65;

/// How often the `watchdog` thread runs its tick (Linux: the `reaper`'s look
/// for helpers and orphans).
const SCAN_EVERY: Duration = Duration::from_secs(1);

/// The workbench's end of one watchdog: the write end of its record pipe and
/// its pid.
struct Link {
    pipe: File,
    pid: libc::pid_t,
}

/// The workbench's side: the current watchdog, and every id registered with
/// it, so that a new watchdog can be handed all of them.
struct Watch {
    link: Option<Link>,
    /// The servers' process groups (`watch`, `forget`).
    groups: Vec<libc::pid_t>,
    /// Processes of the servers' trees outside every server's group
    /// (`set_helpers`, Linux).
    helpers: Vec<libc::pid_t>,
}

static WATCH: Mutex<Watch> = Mutex::new(Watch {
    link: None,
    groups: Vec::new(),
    helpers: Vec::new(),
});

fn watch_state() -> MutexGuard<'static, Watch> {
    WATCH.lock().unwrap_or_else(|p| p.into_inner())
}

/// Forks the watchdog and starts the `watchdog` thread, which notices its
/// loss at once and forks a new one, and runs `tick` every `SCAN_EVERY`
/// (Linux: the `reaper`'s scan). Call it once, before any thread exists.
pub(super) fn start(tick: Option<fn()>) -> io::Result<()> {
    let alive = {
        let _spawns = leaders();
        let mut watch = watch_state();
        let (link, alive) = fork_watchdog()?;
        log::debug!("watchdog started (pid {})", link.pid);
        watch.link = Some(link);
        alive
    };
    let spawned = thread::Builder::new()
        .name("watchdog".into())
        .stack_size(128 * 1024)
        .spawn(move || keep(alive, tick));
    if let Err(e) = spawned {
        log::warn!("cannot watch the watchdog ({e}): if it is killed, it is not replaced");
    }
    Ok(())
}

/// The `watchdog` thread: waits for the end of the watchdog's `alive` pipe
/// (it holds the only write end, and never writes: readable means it is
/// gone), then reaps it and forks a new one. Between, `tick` every
/// `SCAN_EVERY`.
fn keep(mut alive: File, tick: Option<fn()>) {
    let timeout = match tick {
        Some(_) => SCAN_EVERY.as_millis() as libc::c_int,
        None => -1,
    };
    loop {
        let mut pollfd = libc::pollfd {
            fd: alive.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll reads and writes the one pollfd record we own.
        let ready = unsafe { libc::poll(&mut pollfd, 1, timeout) };
        if ready > 0 {
            let mut byte = [0u8; 1];
            if matches!((&alive).read(&mut byte), Ok(0) | Err(_)) {
                alive = replace();
            }
            continue;
        }
        if let (0, Some(tick)) = (ready, tick) {
            tick();
        }
    }
}

/// Reaps the lost watchdog and forks a new one, handed every registered id;
/// the new one's `alive` pipe. Retries every second while forks fail.
fn replace() -> File {
    let mut lost = None;
    let mut failures = 0;
    loop {
        {
            let _spawns = leaders();
            let mut watch = watch_state();
            if let Some(old) = watch.link.take() {
                // SAFETY: waitpid on our own child, which has exited (its
                // descriptors are closed): the wait is short.
                unsafe {
                    libc::waitpid(old.pid, std::ptr::null_mut(), 0);
                }
                lost = Some(old.pid);
            }
            match fork_watchdog() {
                Ok((link, alive)) => {
                    let records: Vec<u8> = (watch.groups.iter().chain(&watch.helpers))
                        .filter_map(|&id| encode(b'+', id as u32))
                        .flatten()
                        .collect();
                    // Within the pipe's buffer (4096 records of 5 bytes), and
                    // the watchdog reads as we write.
                    if let Err(e) = (&link.pipe).write_all(&records) {
                        log::warn!("cannot hand the groups to the new watchdog: {e}");
                    }
                    log::warn!(
                        "the watchdog (pid {}) was lost; watchdog started (pid {}), watching {} groups",
                        lost.unwrap_or(0),
                        link.pid,
                        watch.groups.len() + watch.helpers.len()
                    );
                    watch.link = Some(link);
                    return alive;
                }
                Err(e) if failures == 0 => {
                    log::warn!("the watchdog was lost and cannot be started again ({e}); trying every second");
                }
                Err(_) => {}
            }
        }
        failures += 1;
        thread::sleep(Duration::from_secs(1));
    }
}

/// Creates the two pipes and forks a watchdog; its link and the read end of
/// its `alive` pipe. Call it holding the spawn lock (`leaders`).
fn fork_watchdog() -> io::Result<(Link, File)> {
    let (records_read, records_write) = pipe()?;
    let (alive_read, alive_write) = match pipe() {
        Ok(ends) => ends,
        Err(e) => {
            close(&[records_read, records_write]);
            return Err(e);
        }
    };
    // SAFETY: the child runs only `serve`, which makes async-signal-safe calls
    // and never returns; the parent keeps its two ends, owned by Files.
    match unsafe { libc::fork() } {
        -1 => {
            let error = io::Error::last_os_error();
            close(&[records_read, records_write, alive_read, alive_write]);
            Err(error)
        }
        // SAFETY: in the child of the fork, with the watchdog's two ends.
        0 => unsafe { serve(records_read, alive_write) },
        pid => {
            close(&[records_read, alive_write]);
            // SAFETY: the two descriptors are ours alone from here on.
            let (pipe, alive) = unsafe {
                (
                    File::from_raw_fd(records_write),
                    File::from_raw_fd(alive_read),
                )
            };
            Ok((Link { pipe, pid }, alive))
        }
    }
}

/// A pipe whose ends sit above stdio (a host may have closed one, and a pipe
/// end must never stand in for stdout) and are close-on-exec (no server may
/// hold one); (read, write).
fn pipe() -> io::Result<(libc::c_int, libc::c_int)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe writes two fds into the array we own; fcntl and close act
    // on those fds only.
    unsafe {
        if libc::pipe(fds.as_mut_ptr()) != 0 {
            return Err(io::Error::last_os_error());
        }
        let read = libc::fcntl(fds[0], libc::F_DUPFD_CLOEXEC, 3);
        let write = libc::fcntl(fds[1], libc::F_DUPFD_CLOEXEC, 3);
        let error = io::Error::last_os_error();
        close(&fds);
        if read < 0 || write < 0 {
            close(&[read, write]);
            return Err(error);
        }
        Ok((read, write))
    }
}

/// Closes the valid descriptors among `fds`.
fn close(fds: &[libc::c_int]) {
    for &fd in fds.iter().filter(|&&fd| fd >= 0) {
        // SAFETY: the callers own these descriptors and drop them here.
        unsafe {
            libc::close(fd);
        }
    }
}

/// The current watchdog's pid, which the `reaper` must leave to `replace`.
#[cfg(target_os = "linux")]
pub(super) fn pid() -> Option<libc::pid_t> {
    watch_state().link.as_ref().map(|link| link.pid)
}

/// Tells the watchdog about the process group `pgid`; call it right after the
/// spawn of the group's leader.
pub(super) fn watch(pgid: u32) {
    let Ok(id) = libc::pid_t::try_from(pgid) else {
        return;
    };
    let mut watch = watch_state();
    watch.groups.push(id);
    send(&watch, b'+', id);
}

/// Tells the watchdog to forget `pgid`; call it just before the leader is
/// reaped, while its pid (the group id) cannot be reused yet.
pub(super) fn forget(pgid: u32) {
    let Ok(id) = libc::pid_t::try_from(pgid) else {
        return;
    };
    let mut watch = watch_state();
    if let Some(i) = watch.groups.iter().position(|&g| g == id) {
        watch.groups.swap_remove(i);
    }
    send(&watch, b'-', id);
}

/// Makes `helpers` the processes outside every server's group that the
/// watchdog kills (each one, and its group if it leads one); the `reaper`
/// calls it with what it found, and before it reaps one of them.
#[cfg(target_os = "linux")]
pub(super) fn set_helpers(helpers: &[libc::pid_t]) {
    let mut watch = watch_state();
    let old = std::mem::take(&mut watch.helpers);
    for &id in old.iter().filter(|id| !helpers.contains(id)) {
        send(&watch, b'-', id);
    }
    for &id in helpers.iter().filter(|id| !old.contains(id)) {
        log::debug!(
            "process {id} is outside its server's process group: registered with the watchdog"
        );
        send(&watch, b'+', id);
    }
    watch.helpers = helpers.to_vec();
}

/// Writes one record to the current watchdog. A failed write is left to the
/// `watchdog` thread, which notices the loss and hands a new watchdog every
/// registered id.
fn send(watch: &Watch, op: u8, id: libc::pid_t) {
    let (Some(link), Some(record)) = (&watch.link, encode(op, id as u32)) else {
        return; // no watchdog: `start` failed and said so, or `replace` is under way
    };
    if let Err(e) = (&link.pipe).write_all(&record) {
        log::debug!("cannot write to the watchdog: {e}");
    }
}

/// The record for `op` on `pgid`; `None` for ids no group can have (0 and 1
/// would make `kill(-pgid)` reach the watchdog's own group or every process).
fn encode(op: u8, pgid: u32) -> Option<[u8; RECORD]> {
    let pgid = libc::pid_t::try_from(pgid).ok().filter(|&p| p > 1)?;
    let mut record = [op; RECORD];
    record[1..].copy_from_slice(&pgid.to_ne_bytes());
    Some(record)
}

/// The watchdog's state: the registered groups and a record cut by a read.
struct Groups {
    ids: [libc::pid_t; CAPACITY],
    len: usize,
    partial: [u8; RECORD],
    partial_len: usize,
}

impl Groups {
    fn new() -> Groups {
        Groups {
            ids: [0; CAPACITY],
            len: 0,
            partial: [0; RECORD],
            partial_len: 0,
        }
    }

    /// Applies the records in `bytes`, which may start or end mid-record.
    fn feed(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.partial[self.partial_len] = byte;
            self.partial_len += 1;
            if self.partial_len == RECORD {
                self.partial_len = 0;
                let record = self.partial;
                self.apply(&record);
            }
        }
    }

    fn apply(&mut self, record: &[u8; RECORD]) {
        let mut id = [0; RECORD - 1];
        id.copy_from_slice(&record[1..]);
        let pgid = libc::pid_t::from_ne_bytes(id);
        if pgid <= 1 {
            return;
        }
        let found = self.ids[..self.len].iter().position(|&p| p == pgid);
        match (record[0], found) {
            (b'+', None) if self.len < CAPACITY => {
                self.ids[self.len] = pgid;
                self.len += 1;
            }
            (b'-', Some(i)) => {
                self.len -= 1;
                self.ids[i] = self.ids[self.len];
            }
            _ => {}
        }
    }

    fn ids(&self) -> &[libc::pid_t] {
        &self.ids[..self.len]
    }
}

/// The watchdog process: detach, read records until EOF, kill, exit.
///
/// # Safety
/// Only in the child of `fork`, with `read` the record pipe's read end and
/// `alive` the write end of the pipe whose end tells the workbench it is gone.
unsafe fn serve(read: libc::c_int, alive: libc::c_int) -> ! {
    // Every signal that can be caught is ignored before the mask opens: a
    // `kill -USR1 $(pidof mcp-workbench)` meant for a reload reaches this
    // process too. Numbers that are no signal, or that cannot be ignored
    // (SIGKILL, SIGSTOP), fail harmlessly.
    for signal in 1..SIGNAL_LIMIT {
        libc::signal(signal, libc::SIG_IGN);
    }
    let mut empty: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut empty);
    libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
    libc::setsid();
    libc::chdir(c"/".as_ptr());
    // The read end becomes fd 0, the `alive` end fd 1 (never written), the
    // host's stdin and stdout are let go, and so is every other descriptor:
    // stderr, the write end, whatever was inherited.
    if libc::dup2(read, 0) < 0 || libc::dup2(alive, 1) < 0 {
        libc::_exit(1);
    }
    close_from(2);

    let mut groups = Groups::new();
    let mut buf = [0u8; 64 * RECORD];
    loop {
        let n = libc::read(0, buf.as_mut_ptr().cast(), buf.len());
        match usize::try_from(n) {
            Ok(0) => break,
            Ok(n) => groups.feed(&buf[..n]),
            Err(_) if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    // A server's group, or a helper outside every server's group (and its
    // own group, if it leads one).
    for &id in groups.ids() {
        libc::kill(-id, libc::SIGKILL);
        libc::kill(id, libc::SIGKILL);
    }
    libc::_exit(0)
}

/// Closes every descriptor from `first` up.
///
/// # Safety
/// Only where no code depends on those descriptors (the watchdog child).
unsafe fn close_from(first: libc::c_int) {
    #[cfg(target_os = "linux")]
    if libc::syscall(
        libc::SYS_close_range,
        first as libc::c_uint,
        libc::c_uint::MAX,
        0,
    ) == 0
    {
        return;
    }
    // Older kernels and other systems: every possible descriptor, one by one,
    // up to a cap (some systems allow a billion, which would take minutes).
    let max = libc::sysconf(libc::_SC_OPEN_MAX);
    let max = libc::c_int::try_from(max)
        .ok()
        .filter(|&m| m > 0)
        .map_or(1024, |m| m.min(CLOSE_LIMIT));
    for fd in first..max {
        libc::close(fd);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(ops: &[(u8, u32)]) -> Vec<u8> {
        ops.iter()
            .flat_map(|&(op, pgid)| encode(op, pgid).expect("a valid group"))
            .collect()
    }

    #[test]
    fn records_register_and_unregister_groups() {
        let mut groups = Groups::new();
        groups.feed(&records(&[
            (b'+', 100),
            (b'+', 200),
            (b'+', 300),
            (b'-', 100),
        ]));
        let mut ids = groups.ids().to_vec();
        ids.sort();
        assert_eq!(ids, [200, 300]);
        // Repeats and unknown groups change nothing.
        groups.feed(&records(&[(b'+', 200), (b'-', 999)]));
        assert_eq!(groups.ids().len(), 2);
    }

    #[test]
    fn records_cut_by_reads_are_put_back_together() {
        let bytes = records(&[(b'+', 70000), (b'+', 42), (b'-', 70000)]);
        for cut in 1..bytes.len() {
            let mut groups = Groups::new();
            for chunk in bytes.chunks(cut) {
                groups.feed(chunk);
            }
            assert_eq!(groups.ids(), [42], "reads of {cut} bytes");
        }
    }

    #[test]
    fn ids_that_would_reach_other_processes_are_refused() {
        assert!(encode(b'+', 0).is_none());
        assert!(encode(b'+', 1).is_none());
        assert!(encode(b'+', u32::MAX).is_none()); // -1 as a pid_t
        let mut groups = Groups::new();
        let mut forged = [b'+'; RECORD];
        forged[1..].copy_from_slice(&(-1 as libc::pid_t).to_ne_bytes());
        groups.feed(&forged);
        forged[1..].copy_from_slice(&1_i32.to_ne_bytes());
        groups.feed(&forged);
        assert!(groups.ids().is_empty());
    }

    #[test]
    fn the_table_keeps_its_capacity() {
        let mut groups = Groups::new();
        let all: Vec<(u8, u32)> = (2..CAPACITY as u32 + 12).map(|p| (b'+', p)).collect();
        groups.feed(&records(&all));
        assert_eq!(groups.ids().len(), CAPACITY);
        groups.feed(&records(&[(b'-', 2)]));
        assert_eq!(groups.ids().len(), CAPACITY - 1);
    }
}
