//! Unix: the servers' leaders (the first process of each tree), listed under
//! the spawn lock. `unix` spawns under it, the `reaper` never reaps a leader
//! it lists, and `watchdog` creates its pipes under it. It imports nothing of
//! the other process modules, so each of them can use it.

use std::sync::{Mutex, MutexGuard};

/// The pids of the leaders that std's `Child` owns (each from just before its
/// spawn returns until its `Tree` is dropped, after the `Child` reaped it):
/// every other child of the workbench but the watchdog is an orphan it
/// adopted (Linux), which `reaper` may reap. The lock is also the spawn lock:
/// held around each spawn, so a leader is never taken for an orphan, and
/// around the creation of a watchdog's pipes, so no server inherits an end
/// before it is close-on-exec.
static LEADERS: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());

/// Takes the spawn lock; the list of live leaders.
pub(super) fn leaders() -> MutexGuard<'static, Vec<libc::pid_t>> {
    LEADERS.lock().unwrap_or_else(|p| p.into_inner())
}
