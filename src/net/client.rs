//! One HTTP exchange on a pooled connection: a request written on an idle
//! pooled connection or a new one, the response's head read, then its body
//! read as it comes (`Body`): whole, as a stream on the request's thread, or
//! handed to a pump that reads it without blocking. The states themselves
//! are `exchange/`'s; here is what the pool adds: a request that fails on a
//! reused connection before any byte of its response came is sent once
//! more on a new connection (the server closed the idle one as it was
//! taken), and a body's connection goes back to the pool when it can serve
//! again (`Body::finish`). Everything here blocks, within the request's
//! deadline.

use super::agent::Agent;
use super::conn::Conn;
use super::connect;
use super::error::NetError;
use super::exchange::{self, Failed, Outgoing, Times};
use super::http::Head;
use super::pool::Pool;
use super::Url;
use std::time::{Duration, Instant};

pub(crate) use super::exchange::{Body, Chunk};

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
    let (head, body) = Body::after(answered, times);
    Ok(Exchange { head, body })
}

impl Body {
    /// Reads what is left of the body for up to `wait`, dropping it, and
    /// gives the connection back to `pool` if the body ended by then; else
    /// closes it.
    pub(crate) fn finish_soon(mut self, pool: &Pool, wait: Duration) {
        self.drain_for(wait);
        self.finish(pool);
    }

    /// Gives the connection back to `pool` when the body was read whole and
    /// the server keeps it open; else closes it.
    pub(crate) fn finish(self, pool: &Pool) {
        if let Some(conn) = self.reusable() {
            pool.put(conn);
        }
    }
}
