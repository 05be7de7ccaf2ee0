//! A child's stdout or stderr, read so that stopping the child always releases
//! the reading thread.
//!
//! A server may start a helper that inherits its pipes and outlives it (in a
//! session of its own, out of reach of the process-group kill). A plain read
//! would then wait forever, keeping a thread and two descriptors per
//! open/close cycle. Reads here block as usual (one system call per read, the
//! cheapest there is on the hot path), and stopping sets `stopping` and
//! interrupts the thread (`process::interrupt`): the read then fails with
//! `EINTR` and ends here as EOF.

use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub struct Output<R> {
    pipe: R,
    stopping: Arc<AtomicBool>,
}

impl<R: Read> Output<R> {
    pub fn new(pipe: R, stopping: Arc<AtomicBool>) -> Output<R> {
        Output { pipe, stopping }
    }
}

impl<R: Read> Read for Output<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.pipe.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                    if self.stopping.load(Ordering::SeqCst) {
                        return Ok(0);
                    }
                }
                other => return other,
            }
        }
    }
}
