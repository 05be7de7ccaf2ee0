//! `fetch`: one request with its whole response, for what needs no stream
//! (the sign-in's metadata, registration and token requests). Redirects
//! within the same origin are followed, at most five; one to another origin
//! is refused, so `Authorization` never reaches another server. Proxies and
//! TLS as for the transports; connections kept alive in the `Agent`'s pool.

use super::agent::Agent;
use super::client::{self, Request};
use super::redirect;
use super::Url;
use std::time::{Duration, Instant};

/// The largest body `fetch` reads.
const BODY_CAP: usize = 1 << 20;

/// A whole response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// The first header field named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// A 2xx status.
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// `HTTP NNN` and up to 200 characters of the body (an HTML page by its
    /// title: `page`), for a message: what a server said when it refused
    /// (never used on a body that may hold a token).
    pub fn summary(&self) -> String {
        let content_type = self.header("content-type").unwrap_or("");
        let text = super::page::shown_body(content_type, &self.body, 200);
        match text.is_empty() {
            true => format!("HTTP {}", self.status),
            false => format!("HTTP {}: {text}", self.status),
        }
    }
}

/// Sends one request and reads its whole response (1 MiB at most) within
/// `timeout`. The error is a sentence naming the URL and what went wrong
/// (DNS, refused, TLS with the certificate's subject and why, time-out, a
/// connection cut). Through `agent`, keeping connections alive in its pool.
pub(crate) fn fetch(
    agent: &Agent,
    method: &str,
    url: &Url,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
    timeout: Duration,
) -> Result<Response, String> {
    let pool = agent.pool();
    let deadline = Instant::now() + timeout;
    let mut method = method.to_string();
    let mut url = url.clone();
    let mut body = body;
    for _ in 0..=redirect::MAX_REDIRECTS {
        let fail = |why: String| format!("The request to {url} failed: {why}.");
        let request = Request {
            method: &method,
            url: &url,
            headers,
            body,
        };
        let mut exchange = client::send(agent, pool, &request, deadline, &mut |_| true)
            .map_err(|e| fail(e.to_string()))?;
        let next = redirect::next(
            exchange.status(),
            exchange.header("location"),
            &method,
            &url,
        )
        .map_err(&fail)?;
        let Some((next_method, next_url)) = next else {
            let data = exchange
                .body
                .read_to_end(BODY_CAP)
                .map_err(|e| fail(e.to_string()))?;
            let response = Response {
                status: exchange.head.status,
                headers: std::mem::take(&mut exchange.head.headers),
                body: data,
            };
            exchange.body.finish(pool);
            return Ok(response);
        };
        // The redirect's own body is dropped with its connection.
        if next_method != method {
            body = None;
        }
        method = next_method;
        url = next_url;
    }
    Err(format!(
        "The request to {url} failed: more than {} redirects.",
        redirect::MAX_REDIRECTS
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::net::test_server::Server;

    fn fetch(
        method: &str,
        url: &Url,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
        timeout: Duration,
    ) -> Result<Response, String> {
        super::fetch(&Agent::default(), method, url, headers, body, timeout)
    }

    const LIMIT: Duration = Duration::from_secs(10);

    #[test]
    fn a_whole_response_comes_back_after_same_origin_redirects() {
        let server = Server::start(|seen, reply| match seen.target.as_str() {
            "/a" => reply.send(302, &[("Location", "/b")], b""),
            "/b" => reply.send(307, &[("Location", "c")], b""),
            "/c" => reply.send(200, &[("X-Seen", &seen.method)], b"{\"ok\":true}"),
            _ => reply.send(404, &[], b""),
        });
        let url = Url::parse(&server.url("/a")).unwrap();
        let response = fetch("GET", &url, &[("Authorization", "Bearer t")], None, LIMIT).unwrap();
        assert_eq!(response.status, 200);
        assert_eq!(response.header("x-seen"), Some("GET"));
        assert_eq!(response.body, b"{\"ok\":true}");
        assert!(server
            .seen()
            .iter()
            .all(|s| s.header("authorization") == Some("Bearer t")));
        let posted = fetch("POST", &url, &[], Some(b"a=1"), LIMIT).unwrap();
        assert_eq!(
            posted.header("x-seen"),
            Some("GET"),
            "a 302 turns a POST into a GET"
        );
        // An error status is a response like any other.
        let missing = fetch(
            "GET",
            &Url::parse(&server.url("/nope")).unwrap(),
            &[],
            None,
            LIMIT,
        )
        .unwrap();
        assert_eq!(missing.status, 404);
    }

    #[test]
    fn another_origin_is_not_followed_and_never_gets_the_authorization() {
        let other = Server::start(|_, reply| reply.send(200, &[], b"other"));
        let target = other.url("/token");
        let server = Server::start(move |_, reply| reply.send(302, &[("Location", &target)], b""));
        let url = Url::parse(&server.url("/start")).unwrap();
        let e = fetch("GET", &url, &[("Authorization", "Bearer t")], None, LIMIT).unwrap_err();
        assert!(
            e.starts_with(&format!(
                "The request to {url} failed: it redirected to another origin"
            )),
            "{e}"
        );
        assert!(e.ends_with('.'), "{e}");
        assert!(other.seen().is_empty());
    }

    #[test]
    fn failures_are_sentences_naming_the_url() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = Url::parse(&format!("http://127.0.0.1:{port}/x")).unwrap();
        let e = fetch("GET", &url, &[], None, LIMIT).unwrap_err();
        assert_eq!(
            e,
            format!(
                "The request to {url} failed: the connection was refused (is the server running?)."
            )
        );
        let stalled = Server::start(|_, _| std::thread::sleep(Duration::from_secs(3)));
        let url = Url::parse(&stalled.url("/slow")).unwrap();
        let e = fetch("GET", &url, &[], None, Duration::from_millis(200)).unwrap_err();
        assert!(e.ends_with("no answer within 200 ms."), "{e}");
        let big = Server::start(|_, reply| reply.send(200, &[], &vec![b'x'; BODY_CAP + 1]));
        let url = Url::parse(&big.url("/big")).unwrap();
        let e = fetch("GET", &url, &[], None, LIMIT).unwrap_err();
        assert!(e.contains("larger than 1 MiB"), "{e}");
        let cut = Server::start(|_, reply| {
            reply.raw(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial");
            reply.close();
        });
        let url = Url::parse(&cut.url("/cut")).unwrap();
        let e = fetch("GET", &url, &[], None, LIMIT).unwrap_err();
        assert!(e.ends_with("the connection ended."), "{e}");
    }
}
