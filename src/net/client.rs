//! One HTTP exchange: a request written on an idle pooled connection or a
//! new one, the response's head read (interim 1xx responses skipped; the
//! states up to the head are `exchange/`'s), then its body read as it
//! comes (`Body`): whole, as a stream on the request's
//! thread, or handed to a pump that reads it without blocking. A request
//! that fails on a reused connection before any byte of its response came
//! is sent once more on a new connection: the server closed the idle one as
//! it was taken. Everything here blocks, within the request's deadline.

use super::agent::Agent;
use super::conn::Conn;
use super::connect;
use super::error::NetError;
use super::exchange::{self, read_more, Failed, Outgoing, Times};
use super::http::{BodyDecoder, Head};
use super::pool::Pool;
use super::Url;
use std::io;
use std::time::{Duration, Instant};

/// What to send.
pub(crate) struct Request<'a> {
    pub method: &'a str,
    pub url: &'a Url,
    /// Besides `Host`, `User-Agent` and `Content-Length`.
    pub headers: &'a [(&'a str, &'a str)],
    pub body: Option<&'a [u8]>,
}

/// A response whose head was read; its body follows.
pub(crate) struct Exchange {
    pub head: Head,
    pub body: Body,
}

impl Exchange {
    pub(crate) fn status(&self) -> u16 {
        self.head.status
    }

    /// The first header field named `name` (case-insensitive).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.head.header(name)
    }
}

/// Sends `request` by `deadline` and reads its response's head, on a
/// connection from `pool` or a new one made through `agent`. `on_conn`
/// sees the connection before anything is written to it (to keep a `Cut`);
/// when it returns false the request is given up (the caller cut it).
pub(crate) fn send(
    agent: &Agent,
    pool: &Pool,
    request: &Request<'_>,
    deadline: Instant,
    on_conn: &mut dyn FnMut(&Conn) -> bool,
) -> Result<Exchange, NetError> {
    // What a time-out names: the whole of it, connecting included.
    let limit = deadline.saturating_duration_since(Instant::now());
    if let Some(conn) = pool.take(&connect::key(request.url)) {
        if !on_conn(&conn) {
            return Err(NetError::Ended);
        }
        match exchange(conn, request, (deadline, limit), true) {
            Ok(exchange) => return Ok(exchange),
            Err(Failed::Unanswered(_)) => {}
            Err(Failed::After(e)) => return Err(e),
        }
    }
    let conn = connect::connect(agent, request.url, deadline)?;
    if !on_conn(&conn) {
        return Err(NetError::Ended);
    }
    exchange(conn, request, (deadline, limit), false).map_err(|failed| match failed {
        Failed::Unanswered(e) | Failed::After(e) => e,
    })
}

/// Sends `request` on `conn` (made for it) and reads its response's head.
#[cfg(test)]
pub(crate) fn send_on(
    conn: Conn,
    request: &Request<'_>,
    deadline: Instant,
) -> Result<Exchange, NetError> {
    let limit = deadline.saturating_duration_since(Instant::now());
    exchange(conn, request, (deadline, limit), false).map_err(|failed| match failed {
        Failed::Unanswered(e) | Failed::After(e) => e,
    })
}

/// Runs the exchange's states (`exchange`) on `conn` up to the response's
/// head; the body follows as a `Body`.
fn exchange(
    conn: Conn,
    request: &Request<'_>,
    (deadline, limit): (Instant, Duration),
    reused: bool,
) -> Result<Exchange, Failed> {
    let via_proxy = conn.via_proxy.clone();
    let out = Outgoing {
        method: request.method,
        url: request.url,
        headers: request.headers,
        body: request.body,
        via_proxy: via_proxy.as_ref(),
    };
    let times = Times {
        deadline,
        limit,
        reused,
    };
    let answered = exchange::run(conn, &out, times)?;
    let body = Body {
        keep_alive: answered.head.keep_alive(),
        conn: answered.wire,
        buf: answered.buf,
        start: answered.start,
        decoder: BodyDecoder::new(answered.framing),
        deadline: Some(deadline),
        limit,
        nonblocking: false,
    };
    Ok(Exchange {
        head: answered.head,
        body,
    })
}

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

/// A response's body, read as it comes.
pub(crate) struct Body {
    conn: Conn,
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

impl Body {
    /// Appends the next bytes of the body to `out`.
    pub(crate) fn read(&mut self, out: &mut Vec<u8>) -> Result<Chunk, NetError> {
        loop {
            if self.start < self.buf.len() {
                let before = out.len();
                let used = self
                    .decoder
                    .decode(&self.buf[self.start..], out)
                    .map_err(NetError::Protocol)?;
                self.start += used;
                if out.len() > before {
                    return Ok(Chunk::Data);
                }
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
            match read_more(&mut self.conn, &mut self.buf, deadline) {
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
        self.conn.set_nonblocking(on)
    }

    /// Reads with no deadline from now on (a long-lived event stream).
    pub(crate) fn without_deadline(&mut self) -> io::Result<()> {
        self.deadline = None;
        self.conn.set_timeout(None)
    }

    /// The connection's socket, for a wait on its readiness.
    pub(crate) fn socket(&self) -> &std::net::TcpStream {
        self.conn.socket()
    }

    /// Reads what is left of the body for up to `wait`, dropping it, and
    /// gives the connection back to `pool` if the body ended by then; else
    /// closes it.
    pub(crate) fn finish_soon(mut self, pool: &Pool, wait: Duration) {
        let soon = Instant::now() + wait;
        if self.deadline.is_none_or(|at| at > soon) {
            self.deadline = Some(soon);
        }
        let mut rest = Vec::new();
        while let Ok(Chunk::Data) = self.read(&mut rest) {
            rest.clear();
        }
        self.finish(pool);
    }

    /// Gives the connection back to `pool` when the body was read whole and
    /// the server keeps it open; else closes it.
    pub(crate) fn finish(self, pool: &Pool) {
        // The next exchange on it sets its own limit.
        let whole = self.decoder.is_done() && self.start == self.buf.len();
        if whole && self.keep_alive && !self.nonblocking {
            pool.put(self.conn);
        }
    }
}
