//! Linux: the workbench and each server's first process as subreapers, and
//! what the workbench does with what the servers leave behind.
//!
//! A server's helper can leave its process group (`setsid`, as daemons and
//! browser drivers do), where neither the group kill, the parent-death signal
//! nor the watchdog's group kill reaches it; a double fork also hands it to
//! whoever adopts orphans. With `PR_SET_CHILD_SUBREAPER` on each server's
//! first process (set before its exec, kept across it: `unix::configure`), an
//! orphan of a running server stays below that process; with it on the
//! workbench, what a first process leaves when it exits is adopted by the
//! workbench instead of init. And:
//!
//! - a tree's stop notes the processes below its first process that left the
//!   group (by pid and start time, from `/proc/*/stat` parent links; a
//!   double-forked helper is one) before stdin closes, while they are still
//!   below it, and kills them with the group; `Tree::kill` kills those it
//!   still finds below;
//! - the `watchdog` thread's scan (every second, while a server runs, it
//!   found something, or a leader was reaped since) reaps the orphans the
//!   workbench adopted once they die, and registers every live process of
//!   the servers' trees outside every server's group with the watchdog, which
//!   kills them if the workbench dies;
//! - at shutdown, `kill_orphans` kills and reaps every such process left.
//!
//! The cost: an orphan that dies while its server runs is a zombie child of
//! the server's first process until that process reaps it, which a shell does
//! and node, Python or Go do not (they wait for their own children only); it
//! holds a pid and about 10 KiB of kernel memory until the server stops.
//!
//! Guests are left alone: a program the workbench starts for the user, not
//! for a server (the web browser of a sign-in, `browser`), runs in a session
//! of its own, and no process of a guest's session is killed or registered
//! with the watchdog, even once the workbench adopted it; it is only reaped
//! when it dies. A browser opened from a host lives on after the workbench.
//!
//! It never reaps a server's first process, which std's `Child` owns: the
//! leaders are listed under the spawn lock (`leaders`) from before
//! their spawn returns until their `Tree` is dropped, and the scan holds that
//! lock. Nor the watchdog, which the `watchdog` thread reaps.

use super::leaders::leaders;
use super::watchdog;
use std::collections::HashMap;
use std::fs;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

/// Makes the workbench the subreaper of its descendants. Not inherited by
/// forks (the watchdog, servers).
pub(super) fn become_subreaper() -> io::Result<()> {
    // SAFETY: prctl with integer arguments; no memory is passed.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// One line of `/proc/PID/stat`: what the walk needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Proc {
    pid: libc::pid_t,
    ppid: libc::pid_t,
    pgid: libc::pid_t,
    session: libc::pid_t,
    zombie: bool,
    /// Clock ticks after boot: with the pid, the process's identity.
    start: u64,
}

/// Parses a `/proc/PID/stat` line (the command name, in parentheses, may
/// hold spaces and parentheses: the fields start after the last `)`).
fn parse(stat: &str) -> Option<Proc> {
    let (head, tail) = stat.rsplit_once(')')?;
    let pid = head.split_whitespace().next()?.parse().ok()?;
    let fields: Vec<&str> = tail.split_whitespace().collect();
    // Fields 3 (state), 4 (ppid), 5 (pgrp) and 22 (starttime), from 1.
    Some(Proc {
        pid,
        ppid: fields.get(1)?.parse().ok()?,
        pgid: fields.get(2)?.parse().ok()?,
        session: fields.get(3)?.parse().ok()?,
        zombie: *fields.first()? == "Z",
        start: fields.get(19)?.parse().ok()?,
    })
}

/// Every process, as `/proc` shows it now.
fn table() -> Vec<Proc> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .as_encoded_bytes()
                .iter()
                .all(u8::is_ascii_digit)
        })
        .filter_map(|e| fs::read_to_string(e.path().join("stat")).ok())
        .filter_map(|stat| parse(&stat))
        .collect()
}

/// The processes below `root` (not `root` itself), following parent links.
fn below(table: &[Proc], root: libc::pid_t) -> Vec<Proc> {
    let mut children: HashMap<libc::pid_t, Vec<&Proc>> = HashMap::new();
    for proc in table {
        children.entry(proc.ppid).or_default().push(proc);
    }
    let mut found = Vec::new();
    let mut next = vec![root];
    while let Some(pid) = next.pop() {
        for &child in children.get(&pid).map_or(&[][..], |c| &c[..]) {
            if child.pid != root && !found.iter().any(|p: &Proc| p.pid == child.pid) {
                found.push(*child);
                next.push(child.pid);
            }
        }
    }
    found
}

/// The processes below a tree's first process that left its group, by pid
/// and start time (so a pid reused meanwhile is not killed).
pub(crate) struct Helpers(Vec<(libc::pid_t, u64)>);

impl Helpers {
    /// Those below `leader`, the first process of a tree.
    pub(crate) fn of(leader: u32) -> Helpers {
        let Ok(leader) = libc::pid_t::try_from(leader) else {
            return Helpers(Vec::new());
        };
        let table = table();
        Helpers(
            below(&table, leader)
                .into_iter()
                .filter(|p| p.pgid != leader && !p.zombie)
                .map(|p| (p.pid, p.start))
                .collect(),
        )
    }

    /// SIGKILL to each that still runs (the same process: same start time).
    pub(crate) fn kill(&self) {
        if self.0.is_empty() {
            return;
        }
        let table = table();
        for &(pid, start) in &self.0 {
            if table
                .iter()
                .any(|p| p.pid == pid && p.start == start && !p.zombie)
            {
                log::debug!("killing process {pid}, which left its server's process group");
                // SAFETY: kill has no memory-safety preconditions.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
        }
    }
}

/// The sessions of the guests (`guest`) that may still have processes.
static GUESTS: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());

/// Leaves the processes of `session`, a guest's (see the header), alone.
/// Call it under the spawn lock (`leaders`) that the guest was spawned
/// under, so no scan sees it first.
#[cfg(feature = "remote")]
pub(super) fn guest(session: libc::pid_t) {
    GUESTS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(session);
    FOUND.store(true, Ordering::Relaxed);
}

/// Set when the last scan found a process outside the servers' groups or an
/// orphan, or a leader was reaped since (what was below it is the
/// workbench's now): scans go on while servers run or this is set.
static FOUND: AtomicBool = AtomicBool::new(false);
/// The newest pid when the last pass ran (`scan` skips the walk while it is
/// unchanged); 0 before the first walk, or when `/proc/loadavg` cannot say.
static NEWEST: AtomicI32 = AtomicI32::new(0);

/// The processes below the workbench, other than the watchdog, the leaders
/// and live guests, that are in no leader's group; and the workbench's
/// children among all the rest that are neither leaders, the watchdog nor
/// live guests (orphans it adopted, in a server's group or not, and dead
/// guests to reap).
fn strays(
    table: &[Proc],
    leaders: &[libc::pid_t],
    guests: &[libc::pid_t],
) -> (Vec<Proc>, Vec<Proc>) {
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    let watchdog = watchdog::pid();
    let ours = |p: &Proc| {
        !leaders.contains(&p.pid)
            && Some(p.pid) != watchdog
            && (p.zombie || !guests.contains(&p.session))
    };
    let all = below(table, me);
    let outside = all
        .iter()
        .filter(|p| ours(p) && !leaders.contains(&p.pgid))
        .copied()
        .collect();
    let orphans = all
        .iter()
        .filter(|p| p.ppid == me && ours(p))
        .copied()
        .collect();
    (outside, orphans)
}

/// A leader was reaped: what was below it, helpers the stop killed included,
/// was adopted by the workbench, so the next scan walks (to register or reap
/// it) even if no server runs any more.
pub(super) fn leader_gone() {
    FOUND.store(true, Ordering::Relaxed);
}

/// The `watchdog` thread's periodic pass: registers every live process
/// outside the servers' groups with the watchdog, and reaps the adopted
/// orphans that died (unregistered first).
pub(super) fn scan() {
    let leaders = leaders();
    if leaders.is_empty() && !FOUND.load(Ordering::Relaxed) {
        return;
    }
    // When the last walk found no helper or orphan and no process was
    // created anywhere since, nothing can have left a group: the walk of
    // /proc (milliseconds) is skipped, and an idle pass costs one read of
    // /proc/loadavg. Helpers found keep the walks going: they may die and
    // need reaping, or be joined by others.
    let newest = newest_pid().unwrap_or(0);
    let seen = NEWEST.swap(newest, Ordering::Relaxed);
    if newest != 0 && newest == seen && !FOUND.load(Ordering::Relaxed) {
        return;
    }
    let table = table();
    let guests = live_guests(&table);
    let (outside, orphans) = strays(&table, &leaders, &guests);
    let live: Vec<libc::pid_t> = outside
        .iter()
        .filter(|p| !p.zombie)
        .map(|p| p.pid)
        .collect();
    watchdog::set_helpers(&live);
    for orphan in orphans.iter().filter(|p| p.zombie) {
        log::debug!(
            "reaping process {}, an orphan the workbench adopted",
            orphan.pid
        );
        // SAFETY: waitpid on a child of ours that no `Child` owns (not a
        // leader, under the spawn lock), without blocking.
        unsafe {
            libc::waitpid(orphan.pid, std::ptr::null_mut(), libc::WNOHANG);
        }
    }
    FOUND.store(
        !outside.is_empty() || !orphans.is_empty() || !guests.is_empty(),
        Ordering::Relaxed,
    );
}

/// The guests' sessions that still have a process (the others are
/// forgotten).
fn live_guests(table: &[Proc]) -> Vec<libc::pid_t> {
    let mut guests = GUESTS.lock().unwrap_or_else(|p| p.into_inner());
    guests.retain(|session| table.iter().any(|p| p.session == *session));
    guests.clone()
}

/// The pid the kernel gave last (the last field of `/proc/loadavg`).
fn newest_pid() -> Option<libc::pid_t> {
    let loadavg = fs::read_to_string("/proc/loadavg").ok()?;
    loadavg.split_whitespace().last()?.parse().ok()
}

/// At shutdown, once every server was stopped: kills every process still
/// outside the servers' groups and every adopted orphan, and reaps the
/// orphans, until none is left (at most 2 s).
pub(super) fn kill_orphans() {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        {
            let leaders = leaders();
            let table = table();
            let guests = live_guests(&table);
            let (outside, orphans) = strays(&table, &leaders, &guests);
            if outside.is_empty() && orphans.is_empty() {
                watchdog::set_helpers(&[]);
                return;
            }
            for p in outside.iter().chain(&orphans).filter(|p| !p.zombie) {
                log::debug!("killing process {}, left behind by a server", p.pid);
                // SAFETY: kill has no memory-safety preconditions.
                unsafe {
                    libc::kill(p.pid, libc::SIGKILL);
                }
            }
            let reaped: Vec<libc::pid_t> =
                orphans.iter().filter(|p| p.zombie).map(|p| p.pid).collect();
            let live: Vec<libc::pid_t> = outside
                .iter()
                .filter(|p| !reaped.contains(&p.pid))
                .map(|p| p.pid)
                .collect();
            watchdog::set_helpers(&live);
            for pid in reaped {
                // SAFETY: as in `scan`.
                unsafe {
                    libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG);
                }
            }
        }
        if Instant::now() >= deadline {
            return;
        }
        thread::sleep(Duration::from_millis(5));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_names_parse() {
        let line =
            "4242 (a (b) c) S 17 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
        let proc = parse(line).unwrap();
        assert_eq!((proc.pid, proc.ppid, proc.pgid), (4242, 17, 4242));
        assert_eq!((proc.zombie, proc.start), (false, 987654));
        assert!(parse("12 (x) Z 1 12").is_none());
    }

    #[test]
    fn the_walk_follows_parent_links_below_the_root_only() {
        let p = |pid, ppid| Proc {
            pid,
            ppid,
            pgid: pid,
            session: pid,
            zombie: false,
            start: 0,
        };
        let table = [p(10, 1), p(11, 10), p(12, 11), p(13, 1), p(14, 12)];
        let mut found: Vec<_> = below(&table, 10).iter().map(|p| p.pid).collect();
        found.sort();
        assert_eq!(found, [11, 12, 14]);
        assert!(below(&table, 14).is_empty());
    }

    #[test]
    fn guests_are_left_alone_until_they_die() {
        let me = std::process::id() as libc::pid_t;
        let p = |pid, ppid, session, zombie| Proc {
            pid,
            ppid,
            pgid: pid,
            session,
            zombie,
            start: 0,
        };
        // A browser's opener (session 900) and the browser it left behind,
        // adopted; a server's stray helper (session 1).
        let table = [
            p(900, me, 900, false),
            p(901, me, 900, false),
            p(902, me, 1, false),
        ];
        let pids = |v: Vec<Proc>| v.iter().map(|p| p.pid).collect::<Vec<_>>();
        let (outside, orphans) = strays(&table, &[], &[900]);
        assert_eq!((pids(outside), pids(orphans)), (vec![902], vec![902]));
        let (outside, orphans) = strays(&table, &[], &[]);
        assert_eq!(pids(outside), [900, 901, 902]);
        assert_eq!(pids(orphans), [900, 901, 902]);
        // A dead guest is reaped like any orphan.
        let dead = [p(901, me, 900, true)];
        let (_, orphans) = strays(&dead, &[], &[900]);
        assert_eq!(pids(orphans), [901]);
    }

    #[test]
    fn this_process_is_in_the_table() {
        let me = std::process::id() as libc::pid_t;
        let table = table();
        let proc = table.iter().find(|p| p.pid == me).expect("this process");
        assert!(!proc.zombie && proc.start > 0);
    }
}
