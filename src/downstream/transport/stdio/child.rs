//! The stdio transport: a child process's pipes and its exit (MCP
//! basic/transports §stdio). `spawn` starts the child on its pump's thread;
//! `Pipes` is the pump's half (stdout cut into messages, stderr into
//! diagnostics, one `sys::Watch` over them, the stop steps as signals to the
//! process tree); `ChildInput` is the shared half (stdin, written without
//! blocking by any thread, `input.rs`). Nothing here knows what a message
//! means.

use super::super::spec::Spec;
use super::super::{Flow, Opener, Outlet, Ready, Sink, Transport, WriteError};
use super::input::Input;
use super::lines::{LineBuffer, StderrLines};
use super::missing::Missing;
use super::owner::{self, Owner};
use crate::sys::{self, Exit, Stdin, Stream, Tree, Waker, Watch};
use std::io;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Longest stderr line kept (the rest of the line is dropped).
const TAIL_LINE_BYTES: usize = 400;
/// The most reads of stdout in one turn (stderr, stdin and deadlines get a
/// turn in between).
const STREAK: usize = 8;
/// How long the last output is read once the process exited (a helper that
/// holds the pipes may write forever).
const LAST_WORDS: Duration = Duration::from_millis(200);

/// How to open `spec`'s child: the job the pump runs on its own thread
/// (`Opener`), which spawns it there, so that PR_SET_PDEATHSIG follows the
/// pump's life.
pub(in crate::downstream) fn opener(spec: &Spec) -> impl Opener {
    let mut cmd = sys::command(&spec.program, &spec.env);
    cmd.args(&spec.args)
        .env_clear()
        .envs(&spec.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(cwd) = &spec.cwd {
        cmd.current_dir(cwd);
    }
    let label = format!("{}/{}", spec.toolbox, spec.server);
    let missing = Missing::of(spec);
    move || Pipes::spawn(cmd, label).map_err(|e| missing.explain(e))
}

/// The shared half: the child's stdin, and its process tree (to see its
/// exit and kill it from any thread).
pub(in crate::downstream) struct ChildInput {
    input: Input,
    /// `None` in the unit tests, which have no process.
    tree: Option<Arc<Tree>>,
}

impl ChildInput {
    pub(in crate::downstream) fn new(
        stdin: Stdin,
        waker: Waker,
        tree: Option<Arc<Tree>>,
    ) -> ChildInput {
        ChildInput {
            input: Input::new(stdin, waker),
            tree,
        }
    }
}

impl Outlet for ChildInput {
    fn send(&self, line: Vec<u8>) -> Result<(), WriteError> {
        self.input.write(line)
    }

    fn is_broken(&self) -> bool {
        self.input.is_broken()
    }

    fn wake(&self) {
        self.input.wake();
    }

    fn ended(&self) -> Option<Exit> {
        self.tree.as_ref().and_then(|tree| tree.exited())
    }

    fn kill(&self) {
        if let Some(tree) = &self.tree {
            tree.kill();
        }
    }

    fn pid(&self) -> u32 {
        self.tree.as_ref().map_or(0, |tree| tree.pid())
    }
}

/// The pump's half.
pub(super) struct Pipes {
    owner: Owner,
    watch: Watch,
    input: Arc<ChildInput>,
    stdout: LineBuffer,
    stderr: StderrLines,
    label: String,
}

impl Pipes {
    /// Spawns the child and sets up the watch on its pipes (on the pump's
    /// thread); the shared half too.
    fn spawn(cmd: std::process::Command, label: String) -> io::Result<(Pipes, Arc<dyn Outlet>)> {
        let owner::Spawned {
            owner,
            stdin,
            stdout,
            stderr,
        } = Owner::spawn(cmd)?;
        let (watch, waker) = Watch::new(owner.tree().pid(), stdout, stderr)?;
        let tree = Arc::clone(owner.tree());
        let input = Arc::new(ChildInput::new(Stdin::new(stdin)?, waker, Some(tree)));
        let pipes = Pipes {
            owner,
            watch,
            input: Arc::clone(&input),
            stdout: LineBuffer::default(),
            stderr: StderrLines::new(TAIL_LINE_BYTES),
            label,
        };
        Ok((pipes, input))
    }

    /// Reads stdout and hands over every complete line; reads again, up to
    /// `STREAK` times, while reads bring several lines or fill the buffer,
    /// which saves a wait per read when calls are pipelined.
    fn read_stdout(&mut self, sink: &mut impl Sink) -> Flow {
        for _ in 0..STREAK {
            let Pipes { watch, stdout, .. } = self;
            match stdout.fill(|room| watch.read(Stream::Stdout, room)) {
                Ok((0, _)) => {
                    if let Some(line) = self.stdout.rest() {
                        sink.message(line);
                    }
                    self.watch.close(Stream::Stdout);
                    return Flow::Closed;
                }
                Ok((_, full)) => {
                    let mut lines = 0;
                    while let Some(line) = self.stdout.next_line() {
                        sink.message(line);
                        lines += 1;
                    }
                    // One answer per read: calls one at a time, and the next
                    // answer is not there yet (a read would only say so).
                    // More: pipelined calls, whose next answers probably are.
                    if !full && lines < 2 {
                        return Flow::Open;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Flow::Open,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => return Flow::Open,
                Err(e) => {
                    log::warn!("[{}] cannot read stdout: {e}", self.label);
                    self.watch.close(Stream::Stdout);
                    return Flow::Open;
                }
            }
        }
        Flow::Open
    }

    /// Reads stderr once, handing over its complete lines.
    fn read_stderr(&mut self, sink: &mut impl Sink) {
        let mut buf = [0u8; 4 * 1024];
        let Pipes { watch, stderr, .. } = self;
        match watch.read(Stream::Stderr, &mut buf) {
            Ok(0) => {
                stderr.finish(|line| sink.diagnostic(line));
                watch.close(Stream::Stderr);
            }
            Ok(n) => stderr.feed(&buf[..n], |line| sink.diagnostic(line)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => watch.close(Stream::Stderr),
        }
    }
}

impl Transport for Pipes {
    fn wait(&mut self, timeout: Option<Duration>) -> io::Result<Ready> {
        let stdin = self.input.input.waiting();
        let ready = self.watch.wait(stdin.as_deref(), timeout)?;
        drop(stdin);
        let ended = ready.exited || (self.watch.polls_exit() && self.ended().is_some());
        Ok(Ready {
            messages: ready.stdout,
            diagnostics: ready.stderr,
            room: ready.stdin,
            ended,
        })
    }

    fn read(&mut self, ready: &Ready, sink: &mut impl Sink) -> Flow {
        let flow = if ready.messages {
            self.read_stdout(sink)
        } else {
            Flow::Open
        };
        if ready.diagnostics {
            self.read_stderr(sink);
        }
        if ready.room {
            self.input.input.flush();
        }
        flow
    }

    /// What the process wrote before it exited is in the pipes (a result,
    /// its last stderr lines): read until they are empty.
    fn read_last_words(&mut self, sink: &mut impl Sink) {
        let until = Instant::now() + LAST_WORDS;
        while Instant::now() < until {
            let ready = self.watch.wait(None, Some(Duration::ZERO));
            let Ok(ready) = ready else { return };
            if !ready.stdout && !ready.stderr {
                return;
            }
            if ready.stdout {
                self.read_stdout(sink);
            }
            if ready.stderr {
                self.read_stderr(sink);
            }
        }
    }

    fn ended(&self) -> Option<Exit> {
        self.owner.tree().exited()
    }

    fn close_input(&mut self) {
        // Noted before stdin closes: once the first process exits, the
        // helpers that left its tree are no longer below it.
        self.owner.note_helpers();
        self.input.input.close();
    }

    fn ask_to_end(&mut self) -> bool {
        self.owner.tree().ask_to_stop()
    }

    fn kill(&mut self) {
        self.owner.tree().kill();
    }

    fn finish(&mut self) -> Exit {
        self.owner.finish()
    }
}
