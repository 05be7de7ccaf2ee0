//! The exchange's first state, Prepare: the request's bytes as they go on
//! the wire, its head (`http::request_head`) and its body. The target is
//! the path, or the whole URL through a proxy to a plain `http` server (with
//! the proxy's `Proxy-Authorization`). A POST, PUT or PATCH always says its
//! length. Pure: no IO.

use super::Outgoing;
use crate::net::http;

/// The bytes of `out`, or why it cannot be sent (a header's name or value;
/// the text never holds a value).
pub(super) fn request(out: &Outgoing<'_>) -> Result<Vec<u8>, String> {
    let absolute;
    let mut headers = out.headers.to_vec();
    let target = match out.via_proxy {
        Some(authorization) => {
            absolute = out.url.as_sent();
            if let Some(a) = authorization {
                headers.push(("Proxy-Authorization", a.as_str()));
            }
            absolute.as_str()
        }
        None => out.url.target(),
    };
    let has_body = out.body.is_some() || matches!(out.method, "POST" | "PUT" | "PATCH");
    let mut bytes = http::request_head(
        out.method,
        target,
        &out.url.authority(),
        &headers,
        has_body.then(|| out.body.map_or(0, <[u8]>::len)),
    )?;
    bytes.extend_from_slice(out.body.unwrap_or_default());
    Ok(bytes)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::net::Url;

    fn sent(out: &Outgoing<'_>) -> String {
        String::from_utf8(request(out).unwrap()).unwrap()
    }

    #[test]
    fn a_request_names_its_path_or_through_a_proxy_its_whole_url() {
        let url = Url::parse("http://example.test:8080/a/b?c=d").unwrap();
        let mut out = Outgoing {
            method: "GET",
            url: &url,
            headers: &[("Accept", "text/event-stream")],
            body: None,
            via_proxy: None,
        };
        let direct = sent(&out);
        assert!(direct.starts_with("GET /a/b?c=d HTTP/1.1\r\nHost: example.test:8080\r\n"));
        assert!(direct.contains("\r\nAccept: text/event-stream\r\n"));
        assert!(!direct.contains("Content-Length"), "{direct}");
        assert!(direct.ends_with("\r\n\r\n"));

        let authorization = Some("Basic dTpw".to_string());
        out.via_proxy = Some(&authorization);
        let proxied = sent(&out);
        assert!(proxied.starts_with("GET http://example.test:8080/a/b?c=d HTTP/1.1\r\n"));
        assert!(proxied.contains("\r\nProxy-Authorization: Basic dTpw\r\n"));
        let none = None;
        out.via_proxy = Some(&none);
        assert!(!sent(&out).contains("Proxy-Authorization"));
    }

    #[test]
    fn a_body_follows_the_head_and_a_post_always_says_its_length() {
        let url = Url::parse("https://example.test/mcp").unwrap();
        let mut out = Outgoing {
            method: "POST",
            url: &url,
            headers: &[],
            body: Some(b"{\"a\":1}"),
            via_proxy: None,
        };
        let post = sent(&out);
        assert!(post.contains("\r\nContent-Length: 7\r\n"), "{post}");
        assert!(post.ends_with("\r\n\r\n{\"a\":1}"));
        out.body = None;
        assert!(sent(&out).contains("\r\nContent-Length: 0\r\n"));
        out.method = "DELETE";
        assert!(!sent(&out).contains("Content-Length"));
    }

    #[test]
    fn a_header_that_cannot_be_sent_is_named_without_its_value() {
        let url = Url::parse("http://example.test/").unwrap();
        let out = Outgoing {
            headers: &[("X-Key", "secret\r\nInjected: 1")],
            ..super::super::fake::get(&url)
        };
        let why = request(&out).unwrap_err();
        assert!(why.contains("X-Key") && !why.contains("secret"), "{why}");
    }
}
