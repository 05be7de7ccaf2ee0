//! The HTTP the sign-in sends, behind a trait of its own with the
//! signature of the HTTP layer's one-shot request (`net`'s `fetch`): a
//! whole response, redirects and proxies handled below. The tests put a
//! scripted fake behind it; the process's client is `through(agent)`, which
//! is `net::fetch` through that `net::Agent`.
//!
//! Plus the two bodies OAuth sends: forms (`application/x-www-form-urlencoded`)
//! and JSON, and reading a JSON answer with a clear error.

use crate::net::{url, Agent, Url};
use std::sync::Arc;
use std::time::Duration;

/// How long one request to an authorization server may take.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) use crate::net::Response;

/// One HTTP request and its whole response; the error is a sentence naming
/// the URL.
pub(crate) trait Http: Send + Sync {
    fn fetch(
        &self,
        method: &str,
        url: &Url,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
        timeout: Duration,
    ) -> Result<Response, String>;
}

/// The HTTP client of `agent`: its `fetch`.
pub(crate) fn through(agent: &Agent) -> Arc<dyn Http> {
    Arc::new(Net(agent.clone()))
}

struct Net(Agent);

impl Http for Net {
    fn fetch(
        &self,
        method: &str,
        url: &Url,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
        timeout: Duration,
    ) -> Result<Response, String> {
        crate::net::fetch(&self.0, method, url, headers, body, timeout)
    }
}

/// A form body.
pub(crate) fn form(pairs: &[(&str, &str)]) -> Vec<u8> {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", url::encode(k), url::encode(v)))
        .collect::<Vec<_>>()
        .join("&")
        .into_bytes()
}

/// GETs `url` for a JSON document.
pub(crate) fn get_json(http: &dyn Http, url: &Url) -> Result<Response, String> {
    http.fetch("GET", url, &[("Accept", "application/json")], None, TIMEOUT)
}

#[cfg(test)]
pub(crate) mod fake {
    //! A scripted HTTP peer for the tests: a function of the request, and
    //! a record of every request made.

    use super::*;
    use serde_json::json;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    /// One request as the fake saw it.
    #[derive(Debug, Clone)]
    pub(crate) struct Seen {
        pub method: String,
        pub url: String,
        pub headers: Vec<(String, String)>,
        pub body: String,
    }

    impl Seen {
        /// A form body's field.
        pub(crate) fn field(&self, name: &str) -> Option<String> {
            url::query_pairs(&self.body)
                .into_iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v)
        }

        pub(crate) fn header(&self, name: &str) -> Option<&str> {
            self.headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        }
    }

    type Script = dyn Fn(&Seen) -> Result<Response, String> + Send + Sync;

    pub(crate) struct Fake {
        script: Box<Script>,
        pub seen: Mutex<Vec<Seen>>,
    }

    impl Fake {
        pub(crate) fn new(
            script: impl Fn(&Seen) -> Result<Response, String> + Send + Sync + 'static,
        ) -> Arc<Fake> {
            Arc::new(Fake {
                script: Box::new(script),
                seen: Mutex::new(Vec::new()),
            })
        }

        /// The requests made to URLs containing `part`.
        pub(crate) fn to(&self, part: &str) -> Vec<Seen> {
            crate::lock(&self.seen)
                .iter()
                .filter(|s| s.url.contains(part))
                .cloned()
                .collect()
        }
    }

    impl Http for Fake {
        fn fetch(
            &self,
            method: &str,
            url: &Url,
            headers: &[(&str, &str)],
            body: Option<&[u8]>,
            _timeout: Duration,
        ) -> Result<Response, String> {
            let seen = Seen {
                method: method.to_string(),
                url: url.as_sent(),
                headers: headers
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                body: String::from_utf8_lossy(body.unwrap_or_default()).into_owned(),
            };
            crate::lock(&self.seen).push(seen.clone());
            (self.script)(&seen)
        }
    }

    /// A JSON response.
    pub(crate) fn json(status: u16, body: serde_json::Value) -> Result<Response, String> {
        Ok(Response {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.to_string().into_bytes(),
        })
    }

    /// A resource server and its authorization server, as a fake: PRM, AS
    /// metadata, registration (counted), and a token endpoint that answers
    /// `tokens(seen)`.
    pub(crate) fn peers(
        tokens: impl Fn(&Seen) -> Result<Response, String> + Send + Sync + 'static,
    ) -> (Arc<Fake>, Arc<AtomicUsize>) {
        let registrations = Arc::new(AtomicUsize::new(0));
        let counted = registrations.clone();
        let fake = Fake::new(move |seen| match seen.url.as_str() {
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp" => json(
                200,
                json!({"resource": "https://mcp.example.com/mcp", "authorization_servers": ["https://as.example"], "scopes_supported": ["tools"]}),
            ),
            "https://as.example/.well-known/oauth-authorization-server" => json(
                200,
                json!({
                    "issuer": "https://as.example",
                    "authorization_endpoint": "https://as.example/authorize",
                    "token_endpoint": "https://as.example/token",
                    "registration_endpoint": "https://as.example/register",
                    "code_challenge_methods_supported": ["S256"],
                    "authorization_response_iss_parameter_supported": true,
                }),
            ),
            "https://as.example/register" => {
                let n = counted.fetch_add(1, Ordering::SeqCst) + 1;
                json(201, json!({"client_id": format!("client-{n}")}))
            }
            "https://as.example/token" => tokens(seen),
            _ => status(404),
        });
        (fake, registrations)
    }

    pub(crate) fn status(status: u16) -> Result<Response, String> {
        Ok(Response {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        })
    }
}
