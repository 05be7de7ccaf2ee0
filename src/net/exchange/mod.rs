//! One HTTP exchange as an explicit state machine: `prepare` (the
//! request's bytes), `send` (written whole within the deadline), `head`
//! (the response's head read, interim 1xx skipped), then `body` (read as it
//! comes, as a `Body`). Each state is a small file that works on byte
//! buffers, tested without a socket; `run` drives them up to the head over
//! a `Wire` (a `Conn`, or a buffer in the tests). Blocks within the
//! request's deadline (a body may be read without waiting); knows nothing
//! of pools or retries (`client::send` decides, from `Failed`, whether
//! another connection may do, and `client` gives a connection a body left
//! reusable back to the pool).

mod body;
mod head;
mod prepare;
mod send;

pub(crate) use body::{Body, Chunk};

use super::conn::Conn;
use super::error::NetError;
use super::http::{Framing, Head};
use head::RecvHead;
use std::io::{self, Read};
use std::time::{Duration, Instant};

/// How much a read asks the socket for.
pub(crate) const READ_SIZE: usize = 16 * 1024;

/// What an exchange reads from and writes to: a connection, or bytes in a
/// test.
pub(crate) trait Wire: Read {
    /// Sets the limit of the next reads and writes (none past `left`).
    fn wait_at_most(&mut self, left: Duration) -> io::Result<()>;
    /// Lets the next reads and writes wait as long as they take.
    fn wait_without_limit(&mut self) -> io::Result<()>;
    /// Makes reads return `WouldBlock` instead of waiting, or wait again.
    fn set_nonblocking(&mut self, on: bool) -> io::Result<()>;
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()>;
}

impl Wire for Conn {
    fn wait_at_most(&mut self, left: Duration) -> io::Result<()> {
        Conn::wait_at_most(self, left)
    }

    fn wait_without_limit(&mut self) -> io::Result<()> {
        Conn::set_timeout(self, None)
    }

    fn set_nonblocking(&mut self, on: bool) -> io::Result<()> {
        Conn::set_nonblocking(self, on)
    }

    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        Conn::write_all(self, bytes)
    }
}

/// What is sent, as the states need it.
pub(crate) struct Outgoing<'a> {
    pub method: &'a str,
    pub url: &'a super::Url,
    /// Besides `Host`, `User-Agent` and `Content-Length`.
    pub headers: &'a [(&'a str, &'a str)],
    pub body: Option<&'a [u8]>,
    /// Through a proxy to a plain `http` server (`Conn::via_proxy`): the
    /// whole URL is named, with the proxy's `Proxy-Authorization`, if any.
    pub via_proxy: Option<&'a Option<String>>,
}

/// How an exchange failed.
#[derive(Debug)]
pub(crate) enum Failed {
    /// Before any byte of a response: another connection may do.
    Unanswered(NetError),
    After(NetError),
}

/// What a failure before any byte of a response is: `Unanswered` on a
/// reused connection (the server may have closed it as it was taken), else
/// like any other.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Times {
    pub deadline: Instant,
    /// What the deadline was, for the message when it passes.
    pub limit: Duration,
    pub reused: bool,
}

impl Times {
    fn unanswered(&self, e: NetError) -> Failed {
        if self.reused {
            Failed::Unanswered(e)
        } else {
            Failed::After(e)
        }
    }
}

/// A response whose head was read: its body's framing, the wire, and the
/// bytes read past the head (`buf[start..]`).
pub(crate) struct Answered<W> {
    pub head: Head,
    pub framing: Framing,
    pub wire: W,
    pub buf: Vec<u8>,
    pub start: usize,
}

/// Runs the exchange on `wire` up to the response's head.
pub(crate) fn run<W: Wire>(
    mut wire: W,
    out: &Outgoing<'_>,
    times: Times,
) -> Result<Answered<W>, Failed> {
    let bytes = prepare::request(out).map_err(|e| Failed::After(NetError::Request(e)))?;
    send::send(&mut wire, &bytes, times.deadline)
        .map_err(|e| times.unanswered(NetError::reading(e, times.limit)))?;
    let mut head = RecvHead::default();
    loop {
        if let Some((answer, framing)) = head.parse(out.method)? {
            let (buf, start) = head.into_rest();
            return Ok(Answered {
                head: answer,
                framing,
                wire,
                buf,
                start,
            });
        }
        let before = head.buf.len();
        let read = read_more(&mut wire, &mut head.buf, Some(times.deadline));
        head::after_read(before, read, &times)?;
    }
}

/// Reads once from `wire` into the end of `buf`, within `deadline` (none:
/// the socket's own mode decides).
pub(crate) fn read_more<W: Wire>(
    wire: &mut W,
    buf: &mut Vec<u8>,
    deadline: Option<Instant>,
) -> io::Result<usize> {
    if let Some(deadline) = deadline {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        wire.wait_at_most(left)?;
    }
    let len = buf.len();
    buf.resize(len + READ_SIZE, 0);
    let read = wire.read(&mut buf[len..]);
    buf.truncate(len + *read.as_ref().unwrap_or(&0));
    read
}

/// A wire of bytes for the states' tests: what is written is kept, reads
/// come from `reads` one slice at a time (then the end, or `fail`).
#[cfg(test)]
pub(crate) mod fake {
    use super::{Outgoing, Wire};
    use crate::net::Url;
    use std::collections::VecDeque;
    use std::io;
    use std::time::Duration;

    /// A plain GET of `url`: no header, no body, no proxy.
    pub(crate) fn get(url: &Url) -> Outgoing<'_> {
        Outgoing {
            method: "GET",
            url,
            headers: &[],
            body: None,
            via_proxy: None,
        }
    }

    #[derive(Default)]
    pub(crate) struct Bytes {
        pub written: Vec<u8>,
        pub reads: VecDeque<Vec<u8>>,
        /// Once `reads` is empty: this error instead of the end.
        pub fail: Option<io::ErrorKind>,
        /// Writes fail with this.
        pub refuse_writes: Option<io::ErrorKind>,
    }

    impl Bytes {
        pub(crate) fn answering(parts: &[&[u8]]) -> Bytes {
            Bytes {
                reads: parts.iter().map(|p| p.to_vec()).collect(),
                ..Bytes::default()
            }
        }
    }

    impl io::Read for Bytes {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let Some(mut next) = self.reads.pop_front() else {
                return match self.fail {
                    Some(kind) => Err(kind.into()),
                    None => Ok(0),
                };
            };
            let n = next.len().min(buf.len());
            buf[..n].copy_from_slice(&next[..n]);
            if n < next.len() {
                self.reads.push_front(next.split_off(n));
            }
            Ok(n)
        }
    }

    impl Wire for Bytes {
        fn wait_at_most(&mut self, _left: Duration) -> io::Result<()> {
            Ok(())
        }

        fn wait_without_limit(&mut self) -> io::Result<()> {
            Ok(())
        }

        fn set_nonblocking(&mut self, _on: bool) -> io::Result<()> {
            Ok(())
        }

        fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
            match self.refuse_writes {
                Some(kind) => Err(kind.into()),
                None => {
                    self.written.extend_from_slice(bytes);
                    Ok(())
                }
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::fake::Bytes;
    use super::*;
    use crate::net::Url;

    fn times(reused: bool) -> Times {
        Times {
            deadline: Instant::now() + Duration::from_secs(5),
            limit: Duration::from_secs(5),
            reused,
        }
    }

    #[test]
    fn an_exchange_sends_the_request_and_stops_after_the_head() {
        let url = Url::parse("http://example.test/mcp").unwrap();
        let out = Outgoing {
            method: "POST",
            url: &url,
            headers: &[("Accept", "application/json")],
            body: Some(b"{}"),
            via_proxy: None,
        };
        let wire = Bytes::answering(&[
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-",
            b"Length: 5\r\n\r\nhel",
            b"lo",
        ]);
        let answered = run(wire, &out, times(false)).unwrap();
        assert_eq!(answered.head.status, 200);
        assert_eq!(answered.framing, Framing::Length(5));
        assert_eq!(&answered.buf[answered.start..], b"hel");
        let sent = String::from_utf8(answered.wire.written).unwrap();
        assert!(
            sent.starts_with("POST /mcp HTTP/1.1\r\nHost: example.test\r\n"),
            "{sent}"
        );
        assert!(sent.ends_with("\r\n\r\n{}"), "{sent}");
    }

    #[test]
    fn no_byte_of_an_answer_on_a_reused_connection_may_go_to_another() {
        let url = Url::parse("http://example.test/").unwrap();
        let out = fake::get(&url);
        let gone = run(Bytes::default(), &out, times(true));
        assert!(matches!(gone, Err(Failed::Unanswered(NetError::Ended))));
        let gone = run(Bytes::default(), &out, times(false));
        assert!(matches!(gone, Err(Failed::After(NetError::Ended))));
        let cut = run(Bytes::answering(&[b"HTTP/1.1 2"]), &out, times(true));
        assert!(matches!(cut, Err(Failed::After(NetError::Ended))));
        let refused = Bytes {
            refuse_writes: Some(io::ErrorKind::BrokenPipe),
            ..Bytes::default()
        };
        let refused = run(refused, &out, times(true));
        assert!(matches!(refused, Err(Failed::Unanswered(_))));
    }
}
