//! The exchange's last state, RecvBody: the response's body read as it
//! comes, from the bytes read past the head and then from the `Wire`,
//! decoded by its framing (a length, chunks, or up to the connection's
//! end); whole, as a stream on the request's thread, or without waiting for
//! a pump that waits on the socket itself. What it leaves is a wire that
//! may serve another exchange (`reusable`), or none; it knows nothing of
//! pools (`client` gives the connection back to one).

use super::{read_more, Answered, Times, Wire};
use crate::net::conn::Conn;
use crate::net::error::NetError;
use crate::net::http::{BodyDecoder, Head};
use std::io;
use std::time::{Duration, Instant};

/// What one `Body::read` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Chunk {
    /// Bytes of the body were appended.
    Data,
    /// Nothing yet (non-blocking only): wait for the socket.
    Pending,
    /// The body is complete.
    End,
}

/// A response's body, read as it comes, on a connection (or on bytes in a
/// test).
pub(crate) struct Body<W = Conn> {
    wire: W,
    /// Bytes read but not yet decoded: `buf[start..]`.
    buf: Vec<u8>,
    start: usize,
    decoder: BodyDecoder,
    keep_alive: bool,
    /// `None`: no limit (a long-lived event stream).
    deadline: Option<Instant>,
    /// What the deadline was, for the message when it passes.
    limit: Duration,
    nonblocking: bool,
}

impl<W: Wire> Body<W> {
    /// The head of the response `answered`, and its body, read within the
    /// exchange's `times`.
    pub(crate) fn after(answered: Answered<W>, times: Times) -> (Head, Body<W>) {
        let body = Body {
            keep_alive: answered.head.keep_alive(),
            wire: answered.wire,
            buf: answered.buf,
            start: answered.start,
            decoder: BodyDecoder::new(answered.framing),
            deadline: Some(times.deadline),
            limit: times.limit,
            nonblocking: false,
        };
        (answered.head, body)
    }

    /// Appends the next bytes of the body to `out`.
    pub(crate) fn read(&mut self, out: &mut Vec<u8>) -> Result<Chunk, NetError> {
        loop {
            if self.decode(out)? {
                return Ok(Chunk::Data);
            }
            if self.decoder.is_done() {
                return Ok(Chunk::End);
            }
            if self.start == self.buf.len() {
                self.buf.clear();
                self.start = 0;
            }
            let deadline = if self.nonblocking {
                None
            } else {
                self.deadline
            };
            match read_more(&mut self.wire, &mut self.buf, deadline) {
                Ok(0) => {
                    self.keep_alive = false;
                    self.decoder.at_eof().map_err(|_| NetError::Ended)?;
                    return Ok(Chunk::End);
                }
                Ok(_) => {}
                Err(e) if self.nonblocking && e.kind() == io::ErrorKind::WouldBlock => {
                    return Ok(Chunk::Pending)
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(NetError::reading(e, self.limit)),
            }
        }
    }

    /// Decodes what was read and not yet decoded into `out`; whether that
    /// gave bytes of the body.
    fn decode(&mut self, out: &mut Vec<u8>) -> Result<bool, NetError> {
        if self.start == self.buf.len() {
            return Ok(false);
        }
        let before = out.len();
        let used = self
            .decoder
            .decode(&self.buf[self.start..], out)
            .map_err(NetError::Protocol)?;
        self.start += used;
        Ok(out.len() > before)
    }

    /// The whole body, refused past `cap` bytes.
    pub(crate) fn read_to_end(&mut self, cap: usize) -> Result<Vec<u8>, NetError> {
        let mut out = Vec::new();
        loop {
            match self.read(&mut out)? {
                Chunk::End => return Ok(out),
                Chunk::Data if out.len() > cap => return Err(NetError::TooLarge(cap)),
                Chunk::Data | Chunk::Pending => {}
            }
        }
    }

    /// Reads without waiting from now on (a pump polls the socket), or
    /// blocking again.
    pub(crate) fn set_nonblocking(&mut self, on: bool) -> io::Result<()> {
        self.nonblocking = on;
        self.wire.set_nonblocking(on)
    }

    /// Reads with no deadline from now on (a long-lived event stream).
    pub(crate) fn without_deadline(&mut self) -> io::Result<()> {
        self.deadline = None;
        self.wire.wait_without_limit()
    }

    /// Reads what is left of the body for up to `wait` (within the
    /// deadline, if it comes sooner), dropping it.
    pub(crate) fn drain_for(&mut self, wait: Duration) {
        let soon = Instant::now() + wait;
        if self.deadline.is_none_or(|at| at > soon) {
            self.deadline = Some(soon);
        }
        let mut rest = Vec::new();
        while let Ok(Chunk::Data) = self.read(&mut rest) {
            rest.clear();
        }
    }

    /// The wire, when the body was read whole (blocking) and the server
    /// keeps the connection open: another exchange may use it. Else
    /// nothing, and the wire is dropped (a connection closes).
    pub(crate) fn reusable(self) -> Option<W> {
        // The next exchange on it sets its own limit.
        let whole = self.decoder.is_done() && self.start == self.buf.len();
        (whole && self.keep_alive && !self.nonblocking).then_some(self.wire)
    }
}

impl Body<Conn> {
    /// The connection's socket, for a wait on its readiness.
    pub(crate) fn socket(&self) -> &std::net::TcpStream {
        self.wire.socket()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::super::fake::{self, Bytes};
    use super::super::run;
    use super::*;
    use crate::net::Url;

    fn times() -> Times {
        Times {
            deadline: Instant::now() + Duration::from_secs(5),
            limit: Duration::from_millis(2500),
            reused: false,
        }
    }

    /// The body of the response a GET gets from `wire`.
    fn body_of(wire: Bytes) -> Body<Bytes> {
        let url = Url::parse("http://example.test/events").unwrap();
        let answered = run(wire, &fake::get(&url), times())
            .map_err(|_| "failed")
            .unwrap();
        Body::after(answered, times()).1
    }

    fn answering(parts: &[&[u8]]) -> Body<Bytes> {
        body_of(Bytes::answering(parts))
    }

    #[test]
    fn a_body_of_a_length_ends_there_and_leaves_the_connection() {
        let mut body = answering(&[
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel",
            b"lo",
            b"HTTP/1.1 200 OK\r\n",
        ]);
        assert_eq!(body.read_to_end(1 << 20).unwrap(), b"hello");
        let wire = body.reusable().expect("read whole, kept open");
        // What followed is the next exchange's.
        assert_eq!(wire.reads.len(), 1);
        let mut cut = answering(&[b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel"]);
        assert!(matches!(cut.read_to_end(1 << 20), Err(NetError::Ended)));
        assert!(cut.reusable().is_none());
    }

    #[test]
    fn a_chunked_body_is_decoded_across_reads() {
        let mut body = answering(&[
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
            b"lo\r\n3\r\n, w\r\n0\r",
            b"\n\r\n",
        ]);
        assert_eq!(body.read_to_end(1 << 20).unwrap(), b"hello, w");
        assert!(body.reusable().is_some());
        let mut large = answering(&[
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
            b"5\r\nworld\r\n0\r\n\r\n",
        ]);
        let too_large = large.read_to_end(4).unwrap_err();
        assert_eq!(too_large.to_string(), "its response is larger than 0 MiB");
        let mut bad = answering(&[b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"]);
        assert!(matches!(
            bad.read_to_end(1 << 20),
            Err(NetError::Protocol(_))
        ));
    }

    #[test]
    fn a_body_without_length_ends_with_the_connection() {
        let mut body = answering(&[b"HTTP/1.1 200 OK\r\n\r\nab", b"cd"]);
        let mut out = Vec::new();
        assert_eq!(body.read(&mut out).unwrap(), Chunk::Data);
        assert_eq!(body.read(&mut out).unwrap(), Chunk::Data);
        assert_eq!(body.read(&mut out).unwrap(), Chunk::End);
        assert_eq!(out, b"abcd");
        assert!(body.reusable().is_none(), "the connection ended");
    }

    #[test]
    fn an_event_stream_comes_chunk_by_chunk_as_it_arrives() {
        let mut wire = Bytes::answering(&[
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"f\r\ndata: {\"a\":1}\n\n\r\n",
        ]);
        wire.fail = Some(io::ErrorKind::WouldBlock);
        let mut body = body_of(wire);
        body.without_deadline().unwrap();
        body.set_nonblocking(true).unwrap();
        let mut out = Vec::new();
        assert_eq!(body.read(&mut out).unwrap(), Chunk::Data);
        assert_eq!(out, b"data: {\"a\":1}\n\n");
        assert_eq!(body.read(&mut out).unwrap(), Chunk::Pending);
        body.wire
            .reads
            .push_back(b"f\r\ndata: {\"b\":2}\n\n\r\n0\r\n".to_vec());
        out.clear();
        assert_eq!(body.read(&mut out).unwrap(), Chunk::Data);
        assert_eq!(out, b"data: {\"b\":2}\n\n");
        assert_eq!(body.read(&mut out).unwrap(), Chunk::Pending);
        body.wire.reads.push_back(b"\r\n".to_vec());
        assert_eq!(body.read(&mut out).unwrap(), Chunk::End);
        // Read without blocking: never given back, whole as it is.
        assert!(body.reusable().is_none());
    }

    #[test]
    fn a_time_out_or_a_cut_names_what_happened() {
        let mut wire = Bytes::answering(&[b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nab"]);
        wire.fail = Some(io::ErrorKind::TimedOut);
        let mut late = body_of(wire);
        let mut out = Vec::new();
        assert_eq!(late.read(&mut out).unwrap(), Chunk::Data);
        let err = late.read(&mut out).unwrap_err();
        assert_eq!(err.to_string(), "no answer within 2500 ms");
        let mut wire = Bytes::answering(&[b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n"]);
        wire.fail = Some(io::ErrorKind::ConnectionReset);
        let err = body_of(wire).read(&mut out).unwrap_err();
        assert_eq!(err.to_string(), "the connection ended");
        // The rest of a body is drained for a while, then the connection
        // may serve again.
        let mut rest = answering(&[b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nab", b"cd"]);
        rest.drain_for(Duration::from_secs(1));
        assert!(rest.reusable().is_some());
    }
}
