//! One connection to a server: a TCP socket, plain or with TLS on it, read
//! and written blocking (within timeouts) by a request's thread, or read
//! without blocking by a pump that polls its socket. `Cut` is a second
//! handle on the same socket with which another thread shuts it down: a read
//! blocked on it returns at once, TLS or not, so a stalled server never holds
//! a thread that a stop or a cancellation wants back.

use rustls::ClientConnection;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

pub(crate) struct Conn {
    sock: TcpStream,
    tls: Option<Box<ClientConnection>>,
    /// What the pool files it under (`connect::key`).
    pub(crate) key: String,
    /// Through a proxy to a plain `http` server: requests name the whole
    /// URL, with the proxy's `Proxy-Authorization`, if any.
    pub(crate) via_proxy: Option<Option<String>>,
    /// The limit the socket's reads and writes have now.
    timeout: Option<Duration>,
}

/// Shuts a connection down from any thread.
#[derive(Debug)]
pub(crate) struct Cut(TcpStream);

impl Cut {
    /// Ends the connection both ways: a read or write blocked on it, on any
    /// thread, returns. Safe to call more than once.
    pub(crate) fn cut(&self) {
        let _ = self.0.shutdown(Shutdown::Both);
    }
}

impl Conn {
    pub(crate) fn new(sock: TcpStream, tls: Option<ClientConnection>, key: String) -> Conn {
        Conn {
            sock,
            tls: tls.map(Box::new),
            key,
            via_proxy: None,
            timeout: None,
        }
    }

    /// A handle that shuts this connection down from another thread.
    pub(crate) fn cut(&self) -> io::Result<Cut> {
        self.sock.try_clone().map(Cut)
    }

    /// Limits every blocking read and write from now on (`None`: no limit).
    pub(crate) fn set_timeout(&mut self, limit: Option<Duration>) -> io::Result<()> {
        // A zero timeout means "none" to the socket: a millisecond is the least.
        let limit = limit.map(|t| t.max(Duration::from_millis(1)));
        self.sock.set_read_timeout(limit)?;
        self.sock.set_write_timeout(limit)?;
        self.timeout = limit;
        Ok(())
    }

    /// Makes the next blocking reads and writes wait `left` at most, give or
    /// take an eighth: the socket is only told when what it has is longer
    /// than that (a deadline drawing near), or none. Two system calls saved
    /// per read on the hot path, where an exchange takes microseconds.
    pub(crate) fn wait_at_most(&mut self, left: Duration) -> io::Result<()> {
        match self.timeout {
            Some(now) if now >= left && now - left <= now / 8 => Ok(()),
            _ => self.set_timeout(Some(left)),
        }
    }

    /// Makes reads return `WouldBlock` instead of waiting (a pump's stream).
    pub(crate) fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        self.sock.set_nonblocking(on)
    }

    /// The socket, for a wait on its readiness.
    pub(crate) fn socket(&self) -> &TcpStream {
        &self.sock
    }

    /// Writes all of `bytes` (blocking), through TLS if there is TLS.
    pub(crate) fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        let Some(tls) = &mut self.tls else {
            return self.sock.write_all(bytes);
        };
        tls.writer().write_all(bytes)?;
        while tls.wants_write() {
            tls.write_tls(&mut self.sock)?;
        }
        Ok(())
    }

    /// Whether the server closed the connection (or sent something unasked)
    /// while it sat idle: then it cannot carry another request.
    pub(crate) fn is_stale(&mut self) -> bool {
        if self.sock.set_nonblocking(true).is_err() {
            return true;
        }
        let mut probe = [0u8; 1];
        let stale = match self.sock.peek(&mut probe) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => false,
            // Data the server sent unasked, its end, or an error.
            _ => true,
        };
        self.sock.set_nonblocking(false).is_err() || stale
    }
}

impl Read for Conn {
    /// Reads plaintext: in blocking mode it waits (within the timeout, then
    /// `WouldBlock` or `TimedOut`); in non-blocking mode it returns
    /// `WouldBlock` once the socket has nothing more. `Ok(0)` at a clean end;
    /// a TLS connection that ended without `close_notify` is `UnexpectedEof`.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(tls) = &mut self.tls else {
            return self.sock.read(buf);
        };
        loop {
            match tls.reader().read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                done => return done,
            }
            // No plaintext buffered: read and decrypt more records.
            // At the end (0) the next turn's read says how it ended.
            tls.read_tls(&mut self.sock)?;
            tls.process_new_packets()
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            // Alerts or key updates rustls owes the server.
            while tls.wants_write() {
                match tls.write_tls(&mut self.sock) {
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => return Err(e),
                }
            }
        }
    }
}
