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
//! The child side runs between `fork` and `_exit` and makes only
//! async-signal-safe calls (signal, sigprocmask, setsid, chdir, dup2, close,
//! read, kill, _exit) on a fixed table on its stack: no allocation, no lock, so
//! it is sound even if a thread existed at the fork. It holds no other file
//! descriptor (a host waits for EOF on the pipes it gave the workbench), runs in
//! `/` in a session of its own, and ignores every signal but SIGKILL (and
//! SIGSTOP, which cannot be caught), so a Ctrl-C, a signal to the workbench's
//! process group or a `kill -USR1 $(pidof mcp-workbench)` meant for a reload
//! does not end it before it has done its job. It never writes anything anywhere.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::FromRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// One record: an operation byte (`+` or `-`) and the group id, native endian.
/// Far below `PIPE_BUF`, so concurrent writes never interleave.
const RECORD: usize = 5;
/// Groups the watchdog can hold at once; more live children than this are
/// covered only by Linux's parent-death signal.
const CAPACITY: usize = 4096;

/// Above the highest signal number (64 on Linux, 31 on macOS).
const SIGNAL_LIMIT: libc::c_int = 65;

/// Where closing descriptors one by one stops, when `close_range` is missing.
const CLOSE_LIMIT: libc::c_int = 1 << 16;

/// The workbench's end: the write end of the pipe and the watchdog's pid.
struct Link {
    pipe: File,
    pid: libc::pid_t,
}

static LINK: OnceLock<Link> = OnceLock::new();
/// Set once a write failed: the watchdog is gone, and has been reaped.
static LOST: AtomicBool = AtomicBool::new(false);

/// Forks the watchdog. Call it once, before any thread exists, so that no
/// child spawned meanwhile can inherit the pipe before it is close-on-exec.
pub fn start() -> io::Result<()> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe writes two fds into the array we own; fcntl and close act
    // on those fds only.
    let (read, write) = unsafe {
        if libc::pipe(fds.as_mut_ptr()) != 0 {
            return Err(io::Error::last_os_error());
        }
        // Above stdio (a host may have closed one, and a pipe end must never
        // stand in for stdout) and close-on-exec (no server may hold it).
        let read = libc::fcntl(fds[0], libc::F_DUPFD_CLOEXEC, 3);
        let write = libc::fcntl(fds[1], libc::F_DUPFD_CLOEXEC, 3);
        libc::close(fds[0]);
        libc::close(fds[1]);
        if read < 0 || write < 0 {
            let error = io::Error::last_os_error();
            for fd in [read, write] {
                if fd >= 0 {
                    libc::close(fd);
                }
            }
            return Err(error);
        }
        (read, write)
    };
    // SAFETY: the child runs only `serve`, which makes async-signal-safe calls
    // and never returns; the parent keeps the write end, owned by the File.
    match unsafe { libc::fork() } {
        -1 => {
            let error = io::Error::last_os_error();
            unsafe {
                libc::close(read);
                libc::close(write);
            }
            Err(error)
        }
        0 => unsafe { serve(read) },
        pid => {
            unsafe {
                libc::close(read);
            }
            let pipe = unsafe { File::from_raw_fd(write) };
            if LINK.set(Link { pipe, pid }).is_err() {
                log::warn!("the watchdog was started twice");
            }
            log::debug!("watchdog started (pid {pid})");
            Ok(())
        }
    }
}

/// Tells the watchdog about the process group `pgid`; call it right after the
/// spawn of the group's leader.
pub fn watch(pgid: u32) {
    send(b'+', pgid);
}

/// Tells the watchdog to forget `pgid`; call it just before the leader is
/// reaped, while its pid (the group id) cannot be reused yet.
pub fn forget(pgid: u32) {
    send(b'-', pgid);
}

fn send(op: u8, pgid: u32) {
    let Some(link) = LINK.get() else {
        return; // no watchdog: `start` failed and said so
    };
    let Some(record) = encode(op, pgid) else {
        return;
    };
    if LOST.load(Ordering::Relaxed) {
        return;
    }
    if let Err(e) = (&link.pipe).write_all(&record) {
        if !LOST.swap(true, Ordering::Relaxed) {
            log::warn!("the watchdog is gone ({e}); a killed workbench may leave grandchildren");
            // SAFETY: waitpid on our own child's pid, without blocking.
            unsafe {
                libc::waitpid(link.pid, std::ptr::null_mut(), libc::WNOHANG);
            }
        }
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
/// Only in the child of `fork`, with `read` the pipe's read end.
unsafe fn serve(read: libc::c_int) -> ! {
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
    // The read end becomes fd 0, the host's stdin is let go, and so is every
    // other descriptor: stdout, stderr, the write end, whatever was inherited.
    if libc::dup2(read, 0) < 0 {
        libc::_exit(1);
    }
    close_from(1);

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
    for &pgid in groups.ids() {
        libc::kill(-pgid, libc::SIGKILL);
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
