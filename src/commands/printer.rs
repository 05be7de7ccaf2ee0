//! The stdout of the commands that print (all but serving, whose stdout is
//! the outbox's): a reader that went away (`check --json | head -1`: EPIPE
//! on Unix, a closed pipe on Windows) ends the output quietly. What could
//! not be written is dropped, nothing is logged, and the exit code stays
//! what the command's work decided; any other write error is the command's
//! to report, as before.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Stdout, written through `&Printer` (so a command and the question it
/// asks on the terminal share it).
pub(super) struct Printer<'a> {
    stdout: &'a io::Stdout,
    /// The reader went away: every later write is dropped.
    gone: AtomicBool,
}

impl<'a> Printer<'a> {
    pub(super) fn new(stdout: &'a io::Stdout) -> Printer<'a> {
        Printer {
            stdout,
            gone: AtomicBool::new(false),
        }
    }

    /// Runs `write` on stdout unless the reader went away; a broken pipe
    /// counts as done (`done`), and drops what follows.
    fn quietly<T>(
        &self,
        done: T,
        write: impl FnOnce(&io::Stdout) -> io::Result<T>,
    ) -> io::Result<T> {
        if self.gone.load(Ordering::Relaxed) {
            return Ok(done);
        }
        match write(self.stdout) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.gone.store(true, Ordering::Relaxed);
                Ok(done)
            }
            other => other,
        }
    }
}

impl Write for &Printer<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.quietly(buf.len(), |mut out| out.write(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.quietly((), |mut out| out.flush())
    }
}
