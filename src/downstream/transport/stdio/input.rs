//! A child's stdin, written without ever blocking the caller.
//!
//! The caller (the main thread on the hot path) writes a line with one
//! non-blocking write (`sys::Stdin::try_write`). Whatever the pipe does
//! not take goes to a bounded queue, and the child's own thread writes it as
//! the child reads (`flush`, when its wait says stdin has room). While the
//! queue holds anything, every later line queues behind it, so lines never
//! interleave. A child that stops reading fills the queue up to
//! `QUEUE_LIMIT`; past it, lines are refused at once with `Full`, and the
//! calls that carried them fail fast instead of freezing the workbench.

use super::super::{WriteError, QUEUE_LIMIT};
use crate::sys::{Stdin, Waker};
use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pub(super) struct Input {
    state: Mutex<State>,
    /// Whether `queued > 0`, readable without the lock: the child's thread
    /// asks at every turn, and must not contend with the writers for it.
    backlog: AtomicBool,
    /// Wakes the child's thread when the queue gets something.
    waker: Waker,
}

struct State {
    /// `None` once closed. The child's thread holds a clone while it waits
    /// for room, so the descriptor outlives that wait.
    pipe: Option<Arc<Stdin>>,
    /// Lines not yet written whole.
    queue: VecDeque<Vec<u8>>,
    /// Bytes of `queue[0]` already written.
    offset: usize,
    /// Bytes in `queue` not yet written: while any are, lines queue.
    queued: usize,
    /// The pipe failed; further lines fail the same way.
    broken: Option<io::ErrorKind>,
}

impl Input {
    pub(super) fn new(stdin: Stdin, waker: Waker) -> Input {
        Input {
            state: Mutex::new(State {
                pipe: Some(Arc::new(stdin)),
                queue: VecDeque::new(),
                offset: 0,
                queued: 0,
                broken: None,
            }),
            backlog: AtomicBool::new(false),
            waker,
        }
    }

    /// Sends one complete line, or refuses all of it. What the pipe does not
    /// take is queued as it is: the line is never copied.
    #[allow(
        clippy::expect_used,
        reason = "the pipe is checked present above, under the same lock"
    )]
    pub(super) fn write(&self, line: Vec<u8>) -> Result<(), WriteError> {
        let mut state = crate::lock(&self.state);
        if let Some(kind) = state.broken {
            return Err(WriteError::Io(kind.into()));
        }
        if state.pipe.is_none() {
            return Err(WriteError::Closed);
        }
        if state.queued > 0 {
            if state.queued + line.len() > QUEUE_LIMIT {
                return Err(WriteError::Full {
                    queued: state.queued,
                });
            }
            state.queued += line.len();
            state.queue.push_back(line);
            return Ok(());
        }
        let pipe = state.pipe.as_ref().expect("checked above");
        let written = match pipe.try_write(&line) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => 0,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => 0,
            Err(e) => {
                state.broken = Some(e.kind());
                return Err(WriteError::Io(e));
            }
        };
        if written < line.len() {
            state.queued = line.len() - written;
            state.offset = written;
            state.queue.push_back(line);
            self.backlog.store(true, Ordering::Release);
            self.waker.wake();
        } else if pipe.in_flight() {
            // Windows: the write goes on after this call, and ends with the
            // thread that started it if that thread ends first (a toolbox
            // worker): the child's thread watches it and resumes it.
            self.backlog.store(true, Ordering::Release);
            self.waker.wake();
        }
        Ok(())
    }

    /// Ends the child's thread's wait early.
    pub(super) fn wake(&self) {
        self.waker.wake();
    }

    /// Whether a write failed: the child closed its stdin, or died.
    pub(super) fn is_broken(&self) -> bool {
        crate::lock(&self.state).broken.is_some()
    }

    /// The pipe, while something waits to be written to it (or, on Windows,
    /// is still being written): what the child's thread waits on for room.
    pub(super) fn waiting(&self) -> Option<Arc<Stdin>> {
        if !self.backlog.load(Ordering::Acquire) {
            return None;
        }
        let state = crate::lock(&self.state);
        state
            .pipe
            .clone()
            .filter(|pipe| state.queued > 0 || pipe.in_flight())
    }

    /// Writes as much of the queue as the pipe takes now (the child's thread,
    /// once the pipe has room). Never blocks.
    pub(super) fn flush(&self) {
        let mut state = crate::lock(&self.state);
        state.flush();
        let in_flight = match &state.pipe {
            // Resumes a write cut short (Windows); `Ok(0)` once all went out.
            Some(pipe) if state.queued == 0 && pipe.in_flight() => {
                !matches!(pipe.try_write(&[]), Ok(0))
            }
            _ => false,
        };
        self.backlog
            .store(state.queued > 0 || in_flight, Ordering::Release);
    }

    /// Closes stdin (the child reads EOF after what it was sent); queued lines
    /// are dropped. Safe to call more than once.
    pub(super) fn close(&self) {
        let mut state = crate::lock(&self.state);
        state.pipe = None;
        state.drop_queue();
        self.backlog.store(false, Ordering::Release);
    }
}

impl State {
    /// Writes as much of the queue as the pipe takes now.
    fn flush(&mut self) {
        while let (Some(pipe), Some(line)) = (&self.pipe, self.queue.front()) {
            match pipe.try_write(&line[self.offset..]) {
                Ok(0) => return,
                Ok(n) => self.advance(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    log::debug!("cannot write to a child's stdin: {e}");
                    self.broken = Some(e.kind());
                    self.drop_queue();
                    return;
                }
            }
        }
    }

    fn drop_queue(&mut self) {
        self.queue.clear();
        self.queued = 0;
        self.offset = 0;
    }

    /// `n` more bytes of the first queued line were written.
    fn advance(&mut self, n: usize) {
        self.offset += n;
        self.queued -= n;
        if self.offset == self.queue.front().map_or(0, |f| f.len()) {
            self.queue.pop_front();
            self.offset = 0;
        }
    }
}

#[cfg(all(test, unix))] // `sleep` and `cat` stand in for children
#[allow(clippy::disallowed_methods)] // the tests spawn their stand-in children
#[allow(clippy::unwrap_used, clippy::expect_used)] // tests, under more than `cfg(test)`
mod tests {
    use super::*;
    use crate::sys::{Stream, Watch};
    use std::process::{Child, Command, Stdio};
    use std::time::Duration;

    fn input(program: &str, args: &[&str]) -> (Child, Input, Watch) {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the stand-in runs");
        let (watch, waker) = Watch::new(
            child.id(),
            child.stdout.take().unwrap(),
            child.stderr.take().unwrap(),
        )
        .unwrap();
        let stdin = Stdin::new(child.stdin.take().unwrap()).unwrap();
        (child, Input::new(stdin, waker), watch)
    }

    /// A child that never reads its stdin: writes must still return at once,
    /// queue up to the limit, then be refused whole.
    #[test]
    fn a_child_that_does_not_read_fills_the_queue_then_refuses() {
        let (mut child, input, _watch) = input("sleep", &["30"]);
        let line = vec![b'x'; 100_000];
        let mut accepted = 0;
        let refused = loop {
            match input.write(line.clone()) {
                Ok(()) => accepted += line.len(),
                Err(e) => break e,
            }
            assert!(accepted < 2 * QUEUE_LIMIT, "never refused");
        };
        assert!(matches!(refused, WriteError::Full { queued } if queued <= QUEUE_LIMIT));
        assert!(accepted >= QUEUE_LIMIT, "refused after {accepted} bytes");
        // A line that does not fit is refused whole; the queue is unchanged.
        assert!(matches!(input.write(line), Err(WriteError::Full { .. })));
        input.close();
        assert!(matches!(
            input.write(b"x\n".to_vec()),
            Err(WriteError::Closed)
        ));
        let _ = child.kill();
        let _ = child.wait();
    }

    /// What the pipe does not take reaches the child, in order, as the
    /// child's thread flushes whenever its wait says stdin has room.
    #[test]
    fn flushing_delivers_the_queue_in_order() {
        let (mut child, input, mut watch) = input("cat", &[]);
        let mut expected = Vec::new();
        for i in 0..200u32 {
            let line = format!("{i:0>5}{}\n", "y".repeat(3000));
            input.write(line.clone().into_bytes()).unwrap();
            expected.extend_from_slice(line.as_bytes());
        }
        let mut got = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        let start = std::time::Instant::now();
        while got.len() < expected.len() {
            let stuck = start.elapsed() > Duration::from_secs(20);
            assert!(!stuck, "stuck at {} bytes", got.len());
            let stdin = input.waiting();
            // A wake-up (the queue got its first line) finds nothing ready.
            let ready = watch
                .wait(stdin.as_deref(), Some(Duration::from_secs(10)))
                .unwrap();
            if ready.stdin {
                input.flush();
            }
            if ready.stdout {
                match watch.read(Stream::Stdout, &mut buf) {
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                    Err(e) => assert_eq!(e.kind(), io::ErrorKind::WouldBlock),
                }
            }
        }
        assert!(input.waiting().is_none(), "the queue is drained");
        assert!(got == expected, "bytes lost or reordered");
        input.close();
        let _ = child.wait();
    }
}
