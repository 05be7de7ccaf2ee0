//! Why a request got no usable response, as the rest of the workbench tells
//! it: the text is the reason only, without the URL (the caller names the
//! server the way it may show it: a configured URL may hold a secret).

use std::fmt;
use std::io;
use std::time::Duration;

#[derive(Debug)]
pub(crate) enum NetError {
    /// The host name did not resolve.
    Dns(String),
    /// Every address refused the connection.
    Refused,
    /// No connection within the limit.
    ConnectTimeout(Duration),
    /// The connection could not be made otherwise.
    Connect(io::Error),
    /// The proxy refused or failed (the text says how).
    Proxy(String),
    /// The TLS handshake failed (the text names the certificate and why).
    Tls(String),
    /// No answer within the limit.
    Timeout(Duration),
    /// The connection ended before the response did.
    Ended,
    /// The response is not HTTP/1.1 as it should be (the text says how).
    Protocol(String),
    /// The response is larger than the workbench takes.
    TooLarge(usize),
    /// The request itself cannot be sent (the text says why).
    Request(String),
    /// Reading or writing failed otherwise.
    Io(io::Error),
}

impl NetError {
    /// An IO error met while waiting for or reading a response: a time-out
    /// (`limit`), the end of the connection, or another failure.
    pub(crate) fn reading(e: io::Error, limit: Duration) -> NetError {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => NetError::Timeout(limit),
            io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::NotConnected => NetError::Ended,
            _ => NetError::Io(e),
        }
    }
}

impl fmt::Display for NetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NetError::Dns(e) => write!(f, "its host name does not resolve ({e})"),
            NetError::Refused => write!(f, "the connection was refused (is the server running?)"),
            NetError::ConnectTimeout(limit) => {
                write!(f, "no connection within {} ms", millis(*limit))
            }
            NetError::Connect(e) => write!(f, "cannot connect: {e}"),
            NetError::Proxy(e) | NetError::Tls(e) | NetError::Request(e) => f.write_str(e),
            NetError::Timeout(limit) => write!(f, "no answer within {} ms", millis(*limit)),
            NetError::Ended => write!(f, "the connection ended"),
            NetError::Protocol(e) => write!(f, "its response is not valid HTTP/1.1: {e}"),
            NetError::TooLarge(cap) => {
                write!(f, "its response is larger than {} MiB", cap >> 20)
            }
            NetError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// A limit in whole milliseconds, rounded up (what is left of a deadline
/// when a request starts is a hair under the limit it was given).
fn millis(limit: Duration) -> u128 {
    limit.as_micros().div_ceil(1000)
}
