//! The process owner: the one place that spawns a child, stops it and kills
//! its process tree, and kills it on drop (like rust-analyzer's `JodChild`).
//!
//! The stop sequence (`process::Tree::stop`) is MCP's for stdio: close stdin,
//! wait, ask the tree to stop, wait, kill it (on Linux with the helpers that
//! left its group, noted before stdin closes). The first caller runs it; a
//! concurrent caller waits until it is done, so a shutdown that finds a stop
//! already running does not exit before the kill. `process::hurry` cuts the
//! waits short, never the kill.

use crate::process::{Exit, Tree};
use std::io;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// How long a stopping child gets after stdin is closed, and again after SIGTERM.
pub const STOP_GRACE: Duration = Duration::from_secs(2);

pub struct Owner {
    tree: Tree,
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
    /// Spawns `cmd` (its stdio must be piped) as a process tree of its own.
    /// Call it from a thread that lives as long as the child: on Linux the
    /// parent-death signal follows the spawning thread.
    pub fn spawn(mut cmd: Command) -> io::Result<Spawned> {
        let (mut child, tree) = Tree::spawn(&mut cmd)?;
        let pipes = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let (Some(stdin), Some(stdout), Some(stderr)) = pipes else {
            tree.kill();
            tree.release();
            let _ = child.wait();
            return Err(io::Error::other("the child's stdio is not piped"));
        };
        Ok(Spawned {
            owner: Owner {
                tree,
                state: Mutex::new(State::Running(child)),
                stopped: Condvar::new(),
            },
            stdin,
            stdout,
            stderr,
        })
    }

    /// The child's process tree, to poll or wait for its exit.
    pub fn tree(&self) -> &Tree {
        &self.tree
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
        let exit = self.tree.stop(STOP_GRACE, close_stdin);
        self.tree.release();
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
            self.tree.kill();
            self.tree.release();
            let _ = child.wait();
        }
    }
}
