//! Fuzzes what a remote server sends: a response head (status line and
//! fields, with their limits), the body framing it implies and the body
//! decoded by it (`Content-Length`, chunked, until close), the chunked
//! decoder alone, and the event-stream parser; and what the sign-in reads:
//! a `WWW-Authenticate` challenge, protected-resource and authorization
//! server metadata, token responses and token errors. The streams are fed in pieces whose
//! sizes come from the input, as a socket would deliver them. Beside "no
//! panic, no hang", it checks what the parsers promise: never more taken
//! than given, a decoded body no longer than its wire form, the same result
//! whatever the pieces, no event past the cap.
//!
//! Run it from the repository root with a scratch corpus first (any folder
//! outside the repository), so that new inputs do not land in the committed
//! seeds; `-max_len` lets inputs grow to the parsers' limits:
//!
//! ```text
//! scratch="$(mktemp -d)"
//! cargo +nightly fuzz run --fuzz-dir .fuzz network "$scratch" .fuzz/seeds/network \
//!     -- -max_total_time=600 -max_len=140000
//! ```

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_workbench::net::http::{self, BodyDecoder, Chunked, Framing};
use mcp_workbench::auth::{challenge, metadata, token};
use mcp_workbench::net::sse;

/// The event cap the parser is run with (small, so that inputs reach it).
const EVENT_CAP: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let Some((&control, data)) = data.split_first() else {
        return;
    };
    let piece = usize::from(control & 0x3f) + 1;
    response(data, piece, control & 0x40 != 0);
    chunked(data, piece);
    events(data, piece);
    sign_in(data);
    let text = String::from_utf8_lossy(data);
    let _ = http::request_head("POST", "/mcp", "h", &[("X-Name", &text), (&text, "v")], Some(1));
});

/// A head, then its body by its framing, in pieces.
fn response(data: &[u8], piece: usize, head_request: bool) {
    let parsed = match http::parse_head(data) {
        Ok(Some(parsed)) => parsed,
        Ok(None) => {
            assert!(data.len() <= http::MAX_HEAD + http::MAX_LINE, "an incomplete head past the limits");
            return;
        }
        Err(_) => return,
    };
    let (head, used) = parsed;
    assert!(used <= data.len());
    assert!(head.headers.len() <= http::MAX_HEADERS);
    let _ = head.keep_alive();
    let method = if head_request { "HEAD" } else { "GET" };
    let Ok(framing) = head.framing(method) else {
        return;
    };
    let body = &data[used..];
    assert_eq!(
        decode(framing, body, body.len().max(1)),
        decode(framing, body, piece),
        "the pieces changed the body"
    );
}

/// The body decoded from `wire` fed `piece` bytes at a time: its bytes,
/// whether it ended, how much it took; or the error.
fn decode(framing: Framing, wire: &[u8], piece: usize) -> Result<(Vec<u8>, bool, usize), String> {
    let mut decoder = BodyDecoder::new(framing);
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < wire.len() && !decoder.is_done() {
        let end = (pos + piece).min(wire.len());
        let used = decoder.decode(&wire[pos..end], &mut out)?;
        assert!(used <= end - pos, "took more than it was given");
        assert!(used == end - pos || decoder.is_done(), "stopped early without its end");
        pos += used;
    }
    assert!(out.len() <= wire.len(), "a body longer than its wire form");
    let done = decoder.is_done() || decoder.at_eof().is_ok();
    Ok((out, done, pos))
}

/// The chunked decoder alone: the same body (or error) whatever the pieces.
fn chunked(data: &[u8], piece: usize) {
    let run = |size: usize| -> Result<(Vec<u8>, bool, usize), String> {
        let mut decoder = Chunked::default();
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < data.len() && !decoder.is_done() {
            let end = (pos + size).min(data.len());
            let used = decoder.decode(&data[pos..end], &mut out)?;
            assert!(used <= end - pos);
            assert!(used == end - pos || decoder.is_done(), "stopped early without its end");
            pos += used;
        }
        assert!(out.len() <= data.len());
        Ok((out, decoder.is_done(), pos))
    };
    assert_eq!(run(data.len().max(1)), run(piece), "the pieces changed the chunked body");
}

/// The event-stream parser: the same events whatever the pieces, none past
/// the cap.
fn events(data: &[u8], piece: usize) {
    let run = |size: usize| -> (Vec<sse::Event>, bool) {
        let mut parser = sse::Parser::new(EVENT_CAP);
        let mut got = Vec::new();
        for part in data.chunks(size) {
            if parser.feed(part, |e| got.push(e)).is_err() {
                return (got, false);
            }
        }
        (got, true)
    };
    let (whole, whole_ok) = run(data.len().max(1));
    let (pieces, pieces_ok) = run(piece);
    for event in whole.iter().chain(&pieces) {
        assert!(event.data.len() <= EVENT_CAP, "an event past the cap");
    }
    assert_eq!((whole, whole_ok), (pieces, pieces_ok), "the pieces changed the events");
}

/// What the sign-in parses from a server: none may panic, and a challenge
/// read as Bearer is one of the challenges read.
fn sign_in(data: &[u8]) {
    let challenges = challenge::parse(data);
    if challenge::bearer(data).is_some() {
        assert!(!challenges.is_empty(), "a Bearer challenge out of no challenge");
    }
    let _ = metadata::resource_metadata(data);
    let _ = metadata::server_metadata(data);
    let _ = token::token_response(data);
    let _ = token::token_error(data);
}
