//! The exchange's third state, RecvResponse: the response's head, parsed
//! from what was read so far. Interim 1xx responses (but 101) are skipped;
//! the final head comes with its body's framing (RFC 9112 §6.3). What a
//! read that brought nothing means is `after_read`'s: before any byte of a
//! response, a reused connection's end or failure may send the request on
//! another (`Failed::Unanswered`); after one, or on a time-out, it may not.

use super::{Failed, Times, READ_SIZE};
use crate::net::error::NetError;
use crate::net::http::{self, Framing, Head};
use std::io;

/// What was read of the response: `buf[start..]` is not parsed yet.
pub(super) struct RecvHead {
    pub buf: Vec<u8>,
    start: usize,
}

impl Default for RecvHead {
    fn default() -> RecvHead {
        RecvHead {
            buf: Vec::with_capacity(READ_SIZE),
            start: 0,
        }
    }
}

impl RecvHead {
    /// The final head and its framing once read whole (for a request of
    /// `method`), or `None`: read more.
    pub(super) fn parse(&mut self, method: &str) -> Result<Option<(Head, Framing)>, Failed> {
        loop {
            let parsed = http::parse_head(&self.buf[self.start..])
                .map_err(|e| Failed::After(NetError::Protocol(e)))?;
            match parsed {
                Some((head, used)) if (100..200).contains(&head.status) && head.status != 101 => {
                    self.start += used;
                }
                Some((head, used)) => {
                    let framing = head
                        .framing(method)
                        .map_err(|e| Failed::After(NetError::Protocol(e)))?;
                    self.start += used;
                    return Ok(Some((head, framing)));
                }
                None => return Ok(None),
            }
        }
    }

    /// What was read and where the body begins in it.
    pub(super) fn into_rest(self) -> (Vec<u8>, usize) {
        (self.buf, self.start)
    }
}

/// What one read brought (`before`: the bytes read until then): more to
/// parse, or how the exchange failed.
pub(super) fn after_read(
    before: usize,
    read: io::Result<usize>,
    times: &Times,
) -> Result<(), Failed> {
    match read {
        Ok(0) if before == 0 => Err(times.unanswered(NetError::Ended)),
        Ok(0) => Err(Failed::After(NetError::Ended)),
        Ok(_) => Ok(()),
        Err(e)
            if before == 0
                && e.kind() != io::ErrorKind::WouldBlock
                && e.kind() != io::ErrorKind::TimedOut =>
        {
            Err(times.unanswered(NetError::reading(e, times.limit)))
        }
        Err(e) => Err(Failed::After(NetError::reading(e, times.limit))),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn fed(bytes: &[u8]) -> RecvHead {
        let mut head = RecvHead::default();
        head.buf.extend_from_slice(bytes);
        head
    }

    #[test]
    fn interim_heads_are_skipped_and_the_final_one_gives_its_framing() {
        let mut head = fed(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n");
        let (answer, framing) = head.parse("POST").unwrap().unwrap();
        assert_eq!((answer.status, framing), (200, Framing::Chunked));
        let (buf, start) = head.into_rest();
        assert_eq!(&buf[start..], b"5\r\n");
    }

    #[test]
    fn a_head_read_in_part_asks_for_more_and_101_is_final() {
        let mut head = fed(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No");
        assert!(head.parse("GET").unwrap().is_none());
        head.buf.extend_from_slice(b" Content\r\n\r\n");
        let (answer, framing) = head.parse("GET").unwrap().unwrap();
        assert_eq!((answer.status, framing), (204, Framing::Empty));
        let mut switching = fed(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n");
        let (answer, _) = switching.parse("GET").unwrap().unwrap();
        assert_eq!(answer.status, 101);
    }

    #[test]
    fn a_head_that_is_not_http_fails_after_the_answer_began() {
        let mut head = fed(b"SSH-2.0-OpenSSH\r\n\r\n");
        assert!(matches!(
            head.parse("GET"),
            Err(Failed::After(NetError::Protocol(_)))
        ));
        let mut both = fed(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n");
        assert!(matches!(
            both.parse("GET"),
            Err(Failed::After(NetError::Protocol(_)))
        ));
    }

    #[test]
    fn what_a_read_means_depends_on_what_came_before_and_the_connection() {
        let times = |reused| Times {
            deadline: Instant::now(),
            limit: Duration::from_secs(3),
            reused,
        };
        let reset = || Err(io::ErrorKind::ConnectionReset.into());
        let timed_out = || Err(io::ErrorKind::TimedOut.into());
        let would_block = || Err(io::ErrorKind::WouldBlock.into());
        let denied = || Err(io::ErrorKind::PermissionDenied.into());
        // (bytes before, the read, reused, what it means)
        type Row = (usize, fn() -> io::Result<usize>, bool, &'static str);
        let table: [Row; 14] = [
            (0, || Ok(10), true, "more"),
            (7, || Ok(10), false, "more"),
            (0, || Ok(0), true, "unanswered: ended"),
            (0, || Ok(0), false, "after: ended"),
            (7, || Ok(0), true, "after: ended"),
            (0, reset, true, "unanswered: ended"),
            (0, reset, false, "after: ended"),
            (7, reset, true, "after: ended"),
            (0, denied, true, "unanswered: other"),
            (7, denied, true, "after: other"),
            (0, timed_out, true, "after: timeout"),
            (0, would_block, true, "after: timeout"),
            (7, timed_out, false, "after: timeout"),
            (0, timed_out, false, "after: timeout"),
        ];
        for (before, read, reused, want) in table {
            let got = match after_read(before, read(), &times(reused)) {
                Ok(()) => "more",
                Err(Failed::Unanswered(NetError::Ended)) => "unanswered: ended",
                Err(Failed::After(NetError::Ended)) => "after: ended",
                Err(Failed::After(NetError::Timeout(limit))) => {
                    assert_eq!(limit, Duration::from_secs(3));
                    "after: timeout"
                }
                Err(Failed::Unanswered(_)) => "unanswered: other",
                Err(Failed::After(_)) => "after: other",
            };
            assert_eq!(got, want, "{before} bytes before, reused: {reused}");
        }
    }
}
