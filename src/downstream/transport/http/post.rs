//! One exchange of a remote transport with its server, on the request's
//! own thread: the request sent (its connection's `Cut` registered first,
//! same-origin redirects followed), then what a response carries read and
//! handed on: a JSON body or an event stream of messages (progress and
//! logs, then the response), or, for an error status, the JSON-RPC error
//! it may carry, else a sentence with the status and the first bytes of the
//! body. Every text names the server by its URL as written in the config.

use super::peek;
use super::remote::{self, Common, Event, MAX_MESSAGE};
use crate::net::client::{self, Chunk, Exchange, Request};
use crate::net::sse;
use crate::net::{redirect, Url};
use std::time::{Duration, Instant};

/// How much of an error's body a message shows.
const SHOWN_BODY: usize = 200;
/// How long a response stream may take to end once its response came (the
/// connection is kept for the next request if it does).
const AFTER_ANSWER: Duration = Duration::from_millis(100);

/// GETs the event stream, with `more` headers besides the configured ones
/// and the credentials: hands it over (`Common::hand_over`) and returns
/// `None`, or returns the answer that is not a stream, for the caller to say
/// why. A GET that fails is told to the pump as `NoStream` (`again`: whether
/// a later GET may do better); a closed transport sends none.
pub(super) fn open_stream(
    common: &Common,
    more: &[(&str, String)],
    again: bool,
) -> Option<Exchange> {
    let token = common.cuts.register(None)?;
    let authorization = common.credentials.authorization();
    let headers = common.request_headers(authorization.as_deref(), more);
    let deadline = Instant::now() + common.stream_limit;
    let exchange = match send(common, "GET", &headers, None, token, deadline) {
        Ok(exchange) => exchange,
        Err(why) => {
            common.cuts.done(token);
            common.mailbox.post(Event::NoStream { why, again });
            return None;
        }
    };
    let is_stream = exchange
        .header("content-type")
        .is_some_and(|t| t.to_ascii_lowercase().starts_with("text/event-stream"));
    if (200..300).contains(&exchange.status()) && is_stream {
        log::debug!("[{}] its event stream is open", common.label);
        common.hand_over(exchange.body, token);
        return None;
    }
    common.cuts.done(token);
    Some(exchange)
}

/// Sends one request for exchange `token` and reads the head of its
/// response, following redirects within the origin (307 and 308, which
/// keep the method and body).
pub(super) fn send(
    common: &Common,
    method: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
    token: u64,
    deadline: Instant,
) -> Result<Exchange, String> {
    let mut url: Url = common.url.clone();
    send_to(common, &mut url, method, headers, body, token, deadline)
}

/// `send` to `url` (which a redirect moves).
pub(super) fn send_to(
    common: &Common,
    url: &mut Url,
    method: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
    token: u64,
    deadline: Instant,
) -> Result<Exchange, String> {
    for _ in 0..=redirect::MAX_REDIRECTS {
        let request = Request {
            method,
            url,
            headers,
            body,
        };
        let mut attach = |conn: &crate::net::conn::Conn| match conn.cut() {
            Ok(cut) => common.cuts.attach(token, cut),
            Err(_) => true,
        };
        let exchange = client::send(&common.net, &common.pool, &request, deadline, &mut attach)
            .map_err(|e| format!("{}: {e}", common.shown))?;
        let status = exchange.status();
        if !matches!(status, 307 | 308) {
            return Ok(exchange);
        }
        let next = redirect::next(status, exchange.header("location"), method, url)
            .map_err(|e| format!("{}: {e}", common.shown))?;
        let Some((_, to)) = next else {
            return Ok(exchange);
        };
        log::debug!("[{}] redirected within its origin", common.label);
        *url = to;
    }
    Err(format!(
        "{}: more than {} redirects",
        common.shown,
        redirect::MAX_REDIRECTS
    ))
}

/// Reads a successful (2xx) response to a message: each JSON-RPC message it
/// carries goes to `deliver`. For a request (`expect`: its id) the response
/// to it must come, in a JSON body or in the event stream, which is read
/// until then; a body that is not an MCP message is an error.
pub(super) fn read_answer(
    common: &Common,
    mut exchange: Exchange,
    expect: Option<i64>,
    deliver: &mut dyn FnMut(Vec<u8>),
) -> Result<(), String> {
    let content_type = exchange
        .header("content-type")
        .unwrap_or("")
        .to_ascii_lowercase();
    if content_type.starts_with("text/event-stream") {
        return read_events(common, exchange, expect, deliver);
    }
    let status = exchange.status();
    let body = exchange
        .body
        .read_to_end(MAX_MESSAGE)
        .map_err(|e| format!("{}: {e}", common.shown))?;
    exchange.body.finish(&common.pool);
    let Some(id) = expect else {
        // A notification or a response: 202 and no body, or anything.
        return Ok(());
    };
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(format!(
            "{} answered {status} with no response to the request",
            common.shown,
        ));
    }
    match peek::response_id(&body) {
        Ok(Some(got)) if got == id => {
            deliver(body);
            Ok(())
        }
        Ok(_) => Err(format!(
            "{} answered with a message that is not the response to the request: {}",
            common.shown,
            shown_body(&content_type, &body)
        )),
        Err(()) => Err(format!(
            "{} answered with a body that is not MCP JSON{}: {}",
            common.shown,
            content_type_note(&content_type),
            shown_body(&content_type, &body)
        )),
    }
}

/// Reads an event stream's messages until the response to `expect` came
/// (or, for no request, until it ends).
fn read_events(
    common: &Common,
    mut exchange: Exchange,
    expect: Option<i64>,
    deliver: &mut dyn FnMut(Vec<u8>),
) -> Result<(), String> {
    let mut parser = sse::Parser::new(MAX_MESSAGE);
    let mut data = Vec::new();
    let mut answered = false;
    loop {
        data.clear();
        let chunk = exchange
            .body
            .read(&mut data)
            .map_err(|e| format!("{}: {e}", common.shown))?;
        if chunk == Chunk::End {
            if expect.is_some() && !answered {
                return Err(format!("{}: the connection ended", common.shown));
            }
            exchange.body.finish(&common.pool);
            return Ok(());
        }
        let mut messages = Vec::new();
        parser
            .feed(&data, |event| {
                if event.event == "message" && !remote::is_blank(&event.data) {
                    messages.push(event.data);
                }
            })
            .map_err(|e| format!("{}: {e}", common.shown))?;
        for message in messages {
            if expect.is_some() && peek::response_id(&message) == Ok(expect) {
                answered = true;
            }
            deliver(message);
        }
        if answered {
            // The response ends what this stream is for: the end of the
            // body, which usually follows at once, keeps the connection for
            // the next request; a server that keeps the stream open is not
            // waited on.
            exchange.body.finish_soon(&common.pool, AFTER_ANSWER);
            return Ok(());
        }
    }
}

/// What an error status says: the JSON-RPC error response to `expect` it
/// carries goes to `deliver` (`None` comes back: the request is answered);
/// else the sentence its caller is told. `streamable`: the exchange was a
/// Streamable HTTP POST (a 405 then hints at the legacy transport).
pub(super) fn refusal(
    common: &Common,
    mut exchange: Exchange,
    expect: Option<i64>,
    deliver: &mut dyn FnMut(Vec<u8>),
    streamable: bool,
) -> Option<String> {
    let status = exchange.status();
    let reason = exchange.head.reason.clone();
    let content_type = exchange
        .header("content-type")
        .unwrap_or("")
        .to_ascii_lowercase();
    let is_json = content_type.starts_with("application/json");
    // Enough for a JSON-RPC error; a longer body is only shown in part.
    let body = exchange.body.read_to_end(1 << 20).unwrap_or_default();
    if is_json && expect.is_some() && peek::response_id(&body) == Ok(expect) {
        deliver(body);
        return None;
    }
    let reason = if reason.is_empty() {
        String::new()
    } else {
        format!(" {}", crate::net::text::shown(&reason, 80))
    };
    let legacy =
        streamable && (status == 405 || (status == 404 && common.url.path().ends_with("/sse")));
    let hint = if legacy {
        " (a server on the legacy HTTP+SSE transport needs \"type\": \"sse\")"
    } else {
        ""
    };
    Some(if body.iter().all(u8::is_ascii_whitespace) {
        format!("{} answered {status}{reason}{hint}", common.shown)
    } else {
        format!(
            "{} answered {status}{reason}{hint}: {}",
            common.shown,
            shown_body(&content_type, &body)
        )
    })
}

fn content_type_note(content_type: &str) -> String {
    if content_type.is_empty() {
        String::new()
    } else {
        format!(" ({})", crate::net::text::shown(content_type, 80))
    }
}

/// The first bytes of a body, on one line, fit to show; an HTML page by
/// its title (`net::page`).
pub(super) fn shown_body(content_type: &str, body: &[u8]) -> String {
    crate::net::page::shown_body(content_type, body, SHOWN_BODY)
}

#[cfg(test)]
mod tests {
    use super::shown_body;

    #[test]
    fn a_body_is_shown_on_one_line_and_cut() {
        assert_eq!(
            shown_body("text/plain", b"<h1>Bad\r\n  gateway</h1>\n"),
            "<h1>Bad gateway</h1>"
        );
        assert_eq!(
            shown_body("text/html", b"<h1>Bad\r\n  gateway</h1>\n"),
            "an HTML page headed \"Bad gateway\""
        );
        let long = vec![b'x'; 300];
        let shown = shown_body("", &long);
        assert_eq!(shown.len(), 204);
        assert!(shown.ends_with(" ..."));
        assert_eq!(
            shown_body("", "é".repeat(250).as_bytes()).chars().count(),
            204
        );
    }
}
