//! A child's stdin, written without ever blocking the caller.
//!
//! Where pipes can be written without blocking (Unix), the caller (the main
//! thread on the hot path) writes a line with one non-blocking `write`.
//! Whatever the pipe does not take, or every line where writes would block
//! (Windows), goes to a bounded queue that the child's *writer* thread drains
//! as the child reads, holding no lock while it writes. While the queue holds
//! anything, every later line queues behind it, so lines never interleave. A
//! child that stops reading fills the queue up to `QUEUE_LIMIT`; past it,
//! lines are refused at once with `Full`, and the calls that carried them
//! fail fast instead of freezing the workbench.

use crate::process;
use std::collections::VecDeque;
use std::io::{self, Write};
use std::process::ChildStdin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// Bytes a child may leave unread before further lines to it are refused. A
/// single line is always accepted when nothing is queued, whatever its size.
pub const QUEUE_LIMIT: usize = 8 << 20;

/// Why a line was not taken.
#[derive(Debug)]
pub enum WriteError {
    /// Stdin was closed (the server is being stopped).
    Closed,
    /// The child has not read what was already sent (`queued` bytes).
    Full { queued: usize },
    /// The pipe failed (the child closed its stdin or died).
    Io(io::Error),
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::Closed => write!(f, "its stdin is closed"),
            WriteError::Full { queued } => write!(
                f,
                "it is not reading its stdin ({queued} bytes sent to it are still unread)"
            ),
            WriteError::Io(e) => write!(f, "cannot write to its stdin: {e}"),
        }
    }
}

pub struct Input {
    /// The caller may write to the pipe itself (it never blocks).
    direct: bool,
    state: Mutex<State>,
    /// Wakes the writer thread when the queue gets something, or on close.
    wake_writer: Condvar,
}

struct State {
    /// `None` once closed. Shared with the writer thread while it waits for
    /// room, so closing never waits for a write.
    pipe: Option<Arc<ChildStdin>>,
    /// Lines not yet written whole; the writer thread holds a clone of the
    /// first while it writes it.
    queue: VecDeque<Arc<Vec<u8>>>,
    /// Bytes of `queue[0]` already written.
    offset: usize,
    /// Bytes in `queue` not yet written: while any are, lines queue.
    queued: usize,
    /// The pipe failed; further lines fail the same way.
    broken: Option<io::ErrorKind>,
}

impl Input {
    pub fn new(stdin: ChildStdin) -> io::Result<Input> {
        let direct = process::use_nonblocking_writes(&stdin)?;
        Ok(Input {
            direct,
            state: Mutex::new(State {
                pipe: Some(Arc::new(stdin)),
                queue: VecDeque::new(),
                offset: 0,
                queued: 0,
                broken: None,
            }),
            wake_writer: Condvar::new(),
        })
    }

    /// Sends one complete line, or refuses all of it. What the pipe does not
    /// take is queued as it is: the line is never copied.
    pub fn write(&self, line: Vec<u8>) -> Result<(), WriteError> {
        let mut state = crate::lock(&self.state);
        if let Some(kind) = state.broken {
            return Err(WriteError::Io(kind.into()));
        }
        let Some(pipe) = state.pipe.clone() else {
            return Err(WriteError::Closed);
        };
        if state.queued > 0 || !self.direct {
            if state.queued > 0 && state.queued + line.len() > QUEUE_LIMIT {
                return Err(WriteError::Full {
                    queued: state.queued,
                });
            }
            state.queued += line.len();
            state.queue.push_back(Arc::new(line));
            self.wake_writer.notify_one();
            return Ok(());
        }
        let written = match (&*pipe).write(&line) {
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
            state.queue.push_back(Arc::new(line));
            self.wake_writer.notify_one();
        }
        Ok(())
    }

    /// Whether a write failed: the child closed its stdin, or died.
    pub fn is_broken(&self) -> bool {
        crate::lock(&self.state).broken.is_some()
    }

    /// Closes stdin (the child reads EOF after what it was sent); queued lines
    /// are dropped. Safe to call more than once.
    pub fn close(&self) {
        let mut state = crate::lock(&self.state);
        state.pipe = None;
        state.queue.clear();
        state.queued = 0;
        state.offset = 0;
        self.wake_writer.notify_one();
    }

    /// The writer thread: drains the queue as the child reads, until stdin is
    /// closed, or the owner is `stopping` and interrupts its wait for room.
    /// It holds no lock while it writes or waits, so `write` and `close` never
    /// wait for the child.
    pub fn run_writer(&self, label: &str, stopping: &AtomicBool) {
        let mut state = crate::lock(&self.state);
        loop {
            while state.queue.is_empty() && state.pipe.is_some() {
                state = self
                    .wake_writer
                    .wait(state)
                    .unwrap_or_else(|p| p.into_inner());
            }
            let (Some(pipe), Some(line)) = (state.pipe.clone(), state.queue.front().cloned())
            else {
                return;
            };
            let offset = state.offset;
            drop(state);
            let written = (&*pipe).write(&line[offset..]);
            state = crate::lock(&self.state);
            let current = state.queue.front().is_some_and(|f| Arc::ptr_eq(f, &line));
            match written {
                // A line dropped by `close` while it was written is forgotten.
                Ok(n) if current => state.advance(n),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    drop(state);
                    let ready = process::wait_writable(&pipe);
                    drop(pipe);
                    if stopping.load(Ordering::SeqCst) {
                        return;
                    }
                    if let Err(e) = ready {
                        if e.kind() != io::ErrorKind::Interrupted {
                            log::warn!("[{label}] cannot wait for room in stdin: {e}");
                            return;
                        }
                    }
                    state = crate::lock(&self.state);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                    if stopping.load(Ordering::SeqCst) {
                        return;
                    }
                }
                Err(e) => {
                    log::debug!("[{label}] cannot write to stdin: {e}");
                    state.broken = Some(e.kind());
                    state.queue.clear();
                    state.queued = 0;
                    state.offset = 0;
                }
            }
        }
    }
}

impl State {
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
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    /// A child that never reads its stdin: writes must still return at once,
    /// queue up to the limit, then be refused whole.
    #[test]
    fn a_child_that_does_not_read_fills_the_queue_then_refuses() {
        let mut child = Command::new("sleep")
            .arg("30")
            .stdin(Stdio::piped())
            .spawn()
            .expect("sleep runs");
        let input = Input::new(child.stdin.take().unwrap()).unwrap();
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

    /// What the pipe does not take reaches the child, in order, once the
    /// writer runs and the child reads.
    #[test]
    fn the_writer_delivers_the_queue_in_order() {
        let mut child = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("cat runs");
        let input = Arc::new(Input::new(child.stdin.take().unwrap()).unwrap());
        let stopping = Arc::new(AtomicBool::new(false));
        let writer = {
            let (input, stopping) = (Arc::clone(&input), Arc::clone(&stopping));
            std::thread::spawn(move || input.run_writer("test", &stopping))
        };
        let mut expected = Vec::new();
        for i in 0..200u32 {
            let line = format!("{i:0>5}{}\n", "y".repeat(3000));
            input.write(line.clone().into_bytes()).unwrap();
            expected.extend_from_slice(line.as_bytes());
        }
        let mut stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            std::io::Read::read_to_end(&mut stdout, &mut got).unwrap();
            got
        });
        // Closing drops the queue: wait until the writer has drained it.
        while crate::lock(&input.state).queued > 0 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        input.close();
        writer.join().unwrap();
        assert!(
            reader.join().unwrap() == expected,
            "bytes lost or reordered"
        );
        let _ = child.wait();
    }
}
