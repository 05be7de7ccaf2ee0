//! A child's stdout or stderr, read so that stopping the child always releases
//! the reading thread.
//!
//! A server may start a helper that inherits its pipes and outlives it (in a
//! session of its own, out of reach of the process-group kill). A plain
//! blocking read would then wait forever, keeping a thread and two
//! descriptors per open/close cycle. Here the pipe is non-blocking; when it has
//! nothing, the thread waits in `poll` on the pipe and on the owner's wake
//! pipe, and stopping closes the wake pipe, which reads as EOF here.

use crate::process::{self, Ready};
use std::io::{self, PipeReader, Read};
use std::os::fd::AsRawFd;
use std::sync::Arc;

pub struct Output<R> {
    pipe: R,
    wake: Arc<PipeReader>,
}

impl<R: Read + AsRawFd> Output<R> {
    pub fn new(pipe: R, wake: Arc<PipeReader>) -> io::Result<Output<R>> {
        process::set_nonblocking(&pipe)?;
        Ok(Output { pipe, wake })
    }
}

impl<R: Read + AsRawFd> Read for Output<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.pipe.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let fd = self.pipe.as_raw_fd();
                    if process::wait_ready(fd, false, self.wake.as_raw_fd())? == Ready::Stop {
                        return Ok(0);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                other => return other,
            }
        }
    }
}
