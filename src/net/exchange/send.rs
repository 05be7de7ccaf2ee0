//! The exchange's second state, SendRequest: the prepared bytes written
//! whole within the deadline. A failure here came before any byte of a
//! response (`run` says whether another connection may do).

use super::Wire;
use std::io;
use std::time::Instant;

/// Writes `bytes` on `wire` by `deadline`.
pub(super) fn send<W: Wire>(wire: &mut W, bytes: &[u8], deadline: Instant) -> io::Result<()> {
    let left = deadline.saturating_duration_since(Instant::now());
    wire.wait_at_most(left).and_then(|()| wire.write_all(bytes))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::super::fake::Bytes;
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_bytes_go_whole_or_the_failure_comes_back() {
        let soon = Instant::now() + Duration::from_secs(1);
        let mut wire = Bytes::default();
        send(&mut wire, b"GET / HTTP/1.1\r\n\r\n", soon).unwrap();
        assert_eq!(wire.written, b"GET / HTTP/1.1\r\n\r\n");
        let mut refused = Bytes {
            refuse_writes: Some(io::ErrorKind::BrokenPipe),
            ..Bytes::default()
        };
        let e = send(&mut refused, b"x", soon).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
    }
}
