//! What a session's loop waits on: the host's lines and the fleet's facts,
//! handed out one at a time by `Inbox::next`.
//!
//! Where the input is a descriptor (Unix: stdin, a shared fleet's socket),
//! the loop waits in one `epoll` (elsewhere `poll`) on it and on a waker the
//! fleet rings after it sent a fact (`sys::InputWait`), then reads the input
//! on its own thread: a host's line costs the hot path one wait more than a
//! blocking read, and no hand-off to another thread. Elsewhere (Windows, where a
//! host's pipe cannot be waited on with anything else, and readers that are
//! no descriptor) a `host reader` thread reads the lines into a channel,
//! and the loop selects over it and the facts.

use crate::fleet::facts::{Fact, Mailbox};
use crate::protocol::framing::LineReader;
use crossbeam_channel::{select, Receiver, TryRecvError};
use std::io::{self, BufRead, BufReader};

/// How many lines the `host reader` thread may read ahead of the loop.
const READ_AHEAD: usize = 256;

/// Reads of this size pass by the smaller buffer of std's own stdin.
const READ_SIZE: usize = 1 << 16;

/// Where a session's host lines come from.
pub struct HostInput(Source);

enum Source {
    /// A buffered reader over a descriptor the loop can wait on.
    #[cfg(unix)]
    Polled(Box<dyn Buffered>, std::os::fd::RawFd),
    /// Any reader: read on a thread of its own.
    Threaded(Box<dyn BufRead + Send>),
}

/// A buffered reader that tells whether it holds bytes no line took yet.
#[cfg(unix)]
trait Buffered: BufRead + Send {
    fn has_buffered(&self) -> bool;
}

#[cfg(unix)]
impl<R: io::Read + Send> Buffered for BufReader<R> {
    fn has_buffered(&self) -> bool {
        !self.buffer().is_empty()
    }
}

impl HostInput {
    /// The process's stdin.
    pub fn stdin(stdin: io::Stdin) -> HostInput {
        let stdin = BufReader::with_capacity(READ_SIZE, stdin);
        #[cfg(unix)]
        return HostInput(Source::Polled(Box::new(stdin), 0));
        #[cfg(not(unix))]
        return HostInput::reader(stdin);
    }

    /// Any buffered reader, read on a `host reader` thread.
    pub fn reader(input: impl BufRead + Send + 'static) -> HostInput {
        HostInput(Source::Threaded(Box::new(input)))
    }

    /// A buffered reader over a descriptor the loop waits on (Unix); what
    /// `input` buffered already is read first.
    #[cfg(unix)]
    pub(crate) fn polled<R>(input: BufReader<R>) -> HostInput
    where
        R: io::Read + std::os::fd::AsRawFd + Send + 'static,
    {
        let fd = input.get_ref().as_raw_fd();
        HostInput(Source::Polled(Box::new(input), fd))
    }
}

/// What the loop handles next.
pub(crate) enum Next<'a> {
    /// A host line, without its terminator.
    Line(&'a [u8]),
    Fact(Fact),
    /// The host's input ended (EOF), or could not be read.
    End(io::Result<()>),
}

/// A session's host lines and facts.
pub(crate) struct Inbox {
    facts: Receiver<Fact>,
    lines: Lines,
}

enum Lines {
    #[cfg(unix)]
    Polled {
        reader: LineReader<Box<dyn Buffered>>,
        wait: crate::sys::InputWait,
    },
    Threaded {
        lines: Receiver<io::Result<Vec<u8>>>,
        line: Vec<u8>,
    },
}

impl Inbox {
    /// The inbox of `input`, and the mailbox the fleet sends this session's
    /// facts to.
    pub(crate) fn new(input: HostInput) -> io::Result<(Inbox, Mailbox)> {
        // Unbounded: the fleet's threads never wait for a session. Each
        // request that waits in the fleet brings at most one fact per copy
        // back, and what is open changing one each.
        let (tell, facts) = crossbeam_channel::unbounded();
        let (lines, wake) = match input.0 {
            #[cfg(unix)]
            Source::Polled(reader, fd) => {
                let (wait, waker) = crate::sys::InputWait::new(fd)?;
                let reader = LineReader::new(reader);
                (Lines::Polled { reader, wait }, Some(waker))
            }
            Source::Threaded(input) => {
                let lines = read_lines(input)?;
                let line = Vec::new();
                (Lines::Threaded { lines, line }, None)
            }
        };
        Ok((Inbox { facts, lines }, Mailbox::new(tell, wake)))
    }

    /// Waits for the next line or fact. Facts come first; a line whose
    /// first bytes are read is read to its end.
    pub(crate) fn next(&mut self) -> Next<'_> {
        match self.facts.try_recv() {
            Ok(fact) => return Next::Fact(fact),
            // The fleet is gone: only the host's lines are left.
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => {}
        }
        match &mut self.lines {
            #[cfg(unix)]
            Lines::Polled { reader, wait } => {
                while !reader.get_ref().has_buffered() {
                    match wait.wait() {
                        Ok(true) => break,
                        Ok(false) => {
                            if let Ok(fact) = self.facts.try_recv() {
                                return Next::Fact(fact);
                            }
                        }
                        Err(e) => return Next::End(Err(e)),
                    }
                }
                match reader.next_line() {
                    Ok(Some(line)) => Next::Line(line),
                    Ok(None) => Next::End(Ok(())),
                    Err(e) => Next::End(Err(e)),
                }
            }
            Lines::Threaded { lines, line } => {
                let read = select! {
                    recv(lines) -> read => read,
                    recv(self.facts) -> fact => match fact {
                        Ok(fact) => return Next::Fact(fact),
                        // The fleet is gone: wait for the host alone.
                        Err(_) => lines.recv(),
                    },
                };
                match read {
                    Ok(Ok(read)) => {
                        *line = read;
                        Next::Line(line)
                    }
                    Ok(Err(e)) => Next::End(Err(e)),
                    // EOF: the reader is done.
                    Err(_) => Next::End(Ok(())),
                }
            }
        }
    }
}

/// Starts the `host reader` thread: it reads `input` line by line into the
/// channel returned, up to `READ_AHEAD` lines ahead of the loop, and ends at
/// EOF or at the first read error (sent as the last item).
fn read_lines(input: Box<dyn BufRead + Send>) -> io::Result<Receiver<io::Result<Vec<u8>>>> {
    let (lines, read) = crossbeam_channel::bounded(READ_AHEAD);
    std::thread::Builder::new()
        .name("host reader".into())
        .spawn(move || {
            let mut reader = LineReader::new(input);
            loop {
                let line = match reader.next_line() {
                    Ok(Some(line)) => Ok(line.to_vec()),
                    Ok(None) => return,
                    Err(e) => Err(e),
                };
                let failed = line.is_err();
                // The loop is gone (it stopped on a signal): nothing to do.
                if lines.send(line).is_err() || failed {
                    return;
                }
            }
        })?;
    Ok(read)
}
