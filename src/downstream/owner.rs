//! The process owner: the one place that spawns a child, stops it and kills
//! its process group, and kills it on drop (like rust-analyzer's `JodChild`).
//!
//! The stop sequence is MCP's for stdio (basic/transports §stdio, 2025-06-18):
//! close stdin, wait, SIGTERM the group, wait, SIGKILL the group. The first
//! caller runs it; a concurrent caller waits until it is done, so a shutdown
//! that finds a stop already running does not exit before the kill.
//! `process::hurry` cuts the waits short, never the kill.
//!
//! Each group is registered with the watchdog (`process::watchdog`) right
//! after the spawn and unregistered just before its leader is reaped.

use crate::process::{self, Exit};
use std::io;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// How long a stopping child gets after stdin is closed, and again after SIGTERM.
pub const STOP_GRACE: Duration = Duration::from_secs(2);

pub struct Owner {
    pid: u32,
    state: Mutex<State>,
    stopped: Condvar,
}

enum State {
    Running(Child),
    Stopping,
    Stopped(Exit),
}

/// A spawned child and the parent's ends of its three pipes.
pub struct Spawned {
    pub owner: Owner,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
}

impl Owner {
    /// Spawns `cmd` (its stdio must be piped) in a process group of its own.
    /// Call it from a thread that lives as long as the child: the parent-death
    /// signal follows the spawning thread.
    pub fn spawn(mut cmd: Command) -> io::Result<Spawned> {
        process::configure(&mut cmd);
        let mut child = cmd.spawn()?;
        process::watchdog::watch(child.id());
        let pipes = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let (Some(stdin), Some(stdout), Some(stderr)) = pipes else {
            process::kill_group(child.id());
            process::watchdog::forget(child.id());
            let _ = child.wait();
            return Err(io::Error::other("the child's stdio is not piped"));
        };
        Ok(Spawned {
            owner: Owner {
                pid: child.id(),
                state: Mutex::new(State::Running(child)),
                stopped: Condvar::new(),
            },
            stdin,
            stdout,
            stderr,
        })
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Runs the stop sequence (`close_stdin` first) and reaps the child; or,
    /// if another thread is running it, waits until that one is done.
    pub fn stop(&self, close_stdin: impl FnOnce()) -> Exit {
        let mut state = crate::lock(&self.state);
        let mut child = loop {
            match std::mem::replace(&mut *state, State::Stopping) {
                State::Running(child) => break child,
                State::Stopping => {
                    state = self.stopped.wait(state).unwrap_or_else(|p| p.into_inner());
                }
                State::Stopped(exit) => {
                    *state = State::Stopped(exit);
                    return exit;
                }
            }
        };
        drop(state);
        close_stdin();
        let exit = process::stop_group(self.pid, STOP_GRACE);
        // While the leader is a zombie, its pid (the group id) is not reused.
        process::watchdog::forget(self.pid);
        let _ = child.wait();
        *crate::lock(&self.state) = State::Stopped(exit);
        self.stopped.notify_all();
        exit
    }
}

impl Drop for Owner {
    /// A last resort: every owner of a connection stops it first.
    fn drop(&mut self) {
        if let State::Running(child) = &mut *crate::lock(&self.state) {
            process::kill_group(self.pid);
            process::watchdog::forget(self.pid);
            let _ = child.wait();
        }
    }
}
