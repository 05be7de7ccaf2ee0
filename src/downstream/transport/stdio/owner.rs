//! The process owner: the one place that spawns a child and reaps it, and
//! kills its process tree on drop (like rust-analyzer's `JodChild`). Only the
//! child's own thread holds it: the stop sequence is steps of that thread's
//! loop (`pump.rs`), not a wait of its own.

use crate::sys::{Exit, Helpers, Tree};
use std::io;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use std::sync::Arc;

pub(super) struct Owner {
    tree: Arc<Tree>,
    /// `None` once reaped.
    child: Option<Child>,
    /// The tree's helpers that left it, noted when the stop began.
    helpers: Option<Helpers>,
}

/// A spawned child and the parent's ends of its three pipes.
pub(super) struct Spawned {
    pub owner: Owner,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
}

impl Owner {
    /// Spawns `cmd` (its stdio must be piped) as a process tree of its own.
    /// Call it from the thread that lives as long as the child: on Linux the
    /// parent-death signal follows the spawning thread.
    pub(super) fn spawn(mut cmd: Command) -> io::Result<Spawned> {
        let (mut child, tree) = Tree::spawn(&mut cmd)?;
        let pipes = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let mut owner = Owner {
            tree: Arc::new(tree),
            child: Some(child),
            helpers: None,
        };
        let (Some(stdin), Some(stdout), Some(stderr)) = pipes else {
            owner.finish();
            return Err(io::Error::other("the child's stdio is not piped"));
        };
        Ok(Spawned {
            owner,
            stdin,
            stdout,
            stderr,
        })
    }

    /// The child's process tree, to signal or poll.
    pub(super) fn tree(&self) -> &Arc<Tree> {
        &self.tree
    }

    /// Notes the helpers below the first process that left its tree (Linux:
    /// `setsid`, a second group), for `finish` to kill. Call it as the stop
    /// begins, before stdin closes: once the first process exits they are no
    /// longer below it.
    pub(super) fn note_helpers(&mut self) {
        self.helpers = Some(Helpers::of(self.tree.pid()));
    }

    /// The first process exited (or must be given up on): kills what is left
    /// of the tree, and the helpers noted, and reaps the process. How it
    /// ended, as seen before the kill.
    pub(super) fn finish(&mut self) -> Exit {
        let exit = self.tree.exited();
        self.tree.kill();
        if let Some(helpers) = self.helpers.take() {
            helpers.kill();
        }
        let Some(mut child) = self.child.take() else {
            return exit.unwrap_or(Exit::Unknown);
        };
        // Until it is reaped the process is a zombie, and its pid (the group's
        // id) cannot be reused: forget it only now.
        self.tree.release();
        let reaped = child.wait().map_or(Exit::Unknown, Exit::from);
        exit.unwrap_or(reaped)
    }
}

impl Drop for Owner {
    /// A last resort: the child's thread finishes its owner before it ends.
    fn drop(&mut self) {
        if self.child.is_some() {
            self.finish();
        }
    }
}
