//! The authorization request and what comes back (RFC 6749 §4.1): the URL
//! the browser opens (`response_type=code`, the client, the loopback
//! redirect, PKCE's S256 challenge, `state`, the scope, and the `resource`
//! of RFC 8707), and the redirect's query checked: an error from the
//! server, a `state` that is not this sign-in's, an `iss` that is not the
//! issuer (RFC 9207), or the code. The same checks apply to a redirect URL
//! pasted into the terminal, where a bare code is taken too. No IO.

use super::metadata::ServerMetadata;
use crate::net::{text, url, Url};

/// What a redirect must match to be this sign-in's.
#[derive(Debug, Clone)]
pub(crate) struct Expect {
    pub state: String,
    pub issuer: String,
    /// The server says its redirects carry `iss` (RFC 9207 §3).
    pub iss_required: bool,
}

/// What a redirect said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Redirect {
    /// The authorization code: sign-in can be completed.
    Code(String),
    /// The server ended the sign-in (`error`, RFC 6749 §4.1.2.1).
    Refused(String),
    /// Not this sign-in's redirect (wrong `state` or `iss`, no code):
    /// ignored, the sign-in goes on waiting.
    Stray(String),
}

/// The URL that starts the sign-in in a browser.
pub(crate) struct Request<'a> {
    pub meta: &'a ServerMetadata,
    pub client_id: &'a str,
    pub redirect_uri: &'a str,
    pub challenge: &'a str,
    pub state: &'a str,
    pub scope: Option<&'a str>,
    pub resource: &'a str,
}

impl Request<'_> {
    pub(crate) fn url(&self) -> Result<Url, String> {
        let endpoint = Url::parse(&self.meta.authorization_endpoint)
            .map_err(|e| format!("the authorization endpoint: {e}"))?;
        let mut pairs = vec![
            ("response_type", "code"),
            ("client_id", self.client_id),
            ("redirect_uri", self.redirect_uri),
            ("code_challenge", self.challenge),
            ("code_challenge_method", "S256"),
            ("state", self.state),
        ];
        if let Some(scope) = self.scope {
            pairs.push(("scope", scope));
        }
        pairs.push(("resource", self.resource));
        Ok(endpoint.with_query(&pairs))
    }
}

/// The scope to ask for: the configured one, else the one the server's
/// challenge named, else everything its metadata says it supports; none
/// when nothing says.
pub(crate) fn scope(
    configured: &[String],
    challenged: Option<&str>,
    supported: &[String],
) -> Option<String> {
    let chosen = if !configured.is_empty() {
        configured.join(" ")
    } else if let Some(scope) = challenged.filter(|s| !s.trim().is_empty()) {
        scope.trim().to_string()
    } else {
        supported.join(" ")
    };
    (!chosen.is_empty()).then_some(chosen)
}

/// Reads a redirect's query.
pub(crate) fn redirect(query: &str, expect: &Expect) -> Redirect {
    let pairs = url::query_pairs(query);
    let get = |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    if get("state") != Some(expect.state.as_str()) {
        return Redirect::Stray("its state is not this sign-in's (an old or foreign link)".into());
    }
    match get("iss") {
        Some(iss) if !same_issuer(iss, &expect.issuer) => {
            return Redirect::Stray(format!(
                "it comes from issuer '{}', not '{}'",
                text::shown(iss, 200),
                expect.issuer
            ))
        }
        None if expect.iss_required => {
            return Redirect::Stray("it lacks the iss its server promised".into())
        }
        _ => {}
    }
    if let Some(error) = get("error") {
        let detail = get("error_description")
            .map(|d| format!(" ({})", text::shown(d, 200)))
            .unwrap_or_default();
        return Redirect::Refused(format!(
            "the authorization server said {}{detail}",
            text::shown(error, 100)
        ));
    }
    match get("code").filter(|c| !c.is_empty()) {
        Some(code) => Redirect::Code(code.to_string()),
        None => Redirect::Stray("it carries no code".into()),
    }
}

/// Reads what a person pasted: the redirect's whole URL (checked like a
/// redirect), or the bare code.
pub(crate) fn pasted(line: &str, expect: &Expect) -> Redirect {
    let line = line.trim();
    if line.is_empty() {
        return Redirect::Stray("nothing was pasted".into());
    }
    if let Some((_, query)) = line.split_once('?') {
        return redirect(query.split('#').next().unwrap_or(""), expect);
    }
    if line.contains("://") || line.contains(char::is_whitespace) {
        return Redirect::Stray("that is neither the redirect's URL nor a code".into());
    }
    Redirect::Code(line.to_string())
}

fn same_issuer(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expect(iss_required: bool) -> Expect {
        Expect {
            state: "st8".into(),
            issuer: "https://as.example".into(),
            iss_required,
        }
    }

    #[test]
    fn the_authorization_url_has_every_parameter() {
        let meta = ServerMetadata {
            issuer: "https://as.example".into(),
            authorization_endpoint: "https://as.example/authorize?tenant=t".into(),
            token_endpoint: "https://as.example/token".into(),
            registration_endpoint: None,
            code_challenge_methods_supported: None,
            token_endpoint_auth_methods_supported: None,
            authorization_response_iss_parameter_supported: false,
            scopes_supported: Vec::new(),
        };
        let url = Request {
            meta: &meta,
            client_id: "c1",
            redirect_uri: "http://127.0.0.1:33418/callback",
            challenge: "ch",
            state: "st8",
            scope: Some("a b"),
            resource: "https://mcp.example.com/mcp",
        }
        .url()
        .unwrap();
        let pairs = url::query_pairs(url.query().unwrap());
        let get = |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("tenant"), Some("t"));
        assert_eq!(get("response_type"), Some("code"));
        assert_eq!(get("client_id"), Some("c1"));
        assert_eq!(get("redirect_uri"), Some("http://127.0.0.1:33418/callback"));
        assert_eq!(get("code_challenge"), Some("ch"));
        assert_eq!(get("code_challenge_method"), Some("S256"));
        assert_eq!(get("state"), Some("st8"));
        assert_eq!(get("scope"), Some("a b"));
        assert_eq!(get("resource"), Some("https://mcp.example.com/mcp"));
    }

    #[test]
    fn scope_comes_from_the_config_then_the_challenge_then_the_metadata() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            scope(&s(&["a", "b"]), Some("c"), &s(&["d"])).as_deref(),
            Some("a b")
        );
        assert_eq!(scope(&[], Some("c"), &s(&["d"])).as_deref(), Some("c"));
        assert_eq!(scope(&[], None, &s(&["d", "e"])).as_deref(), Some("d e"));
        assert_eq!(scope(&[], Some(" "), &[]), None);
    }

    #[test]
    fn redirects_are_checked_before_their_code_is_taken() {
        let e = expect(false);
        assert_eq!(
            redirect("code=abc&state=st8", &e),
            Redirect::Code("abc".into())
        );
        assert!(matches!(
            redirect("code=abc&state=other", &e),
            Redirect::Stray(_)
        ));
        assert!(matches!(redirect("code=abc", &e), Redirect::Stray(_)));
        assert!(matches!(
            redirect("code=abc&state=st8&iss=https%3A%2F%2Fevil.example", &e),
            Redirect::Stray(_)
        ));
        assert_eq!(
            redirect("code=abc&state=st8&iss=https%3A%2F%2Fas.example%2F", &e),
            Redirect::Code("abc".into())
        );
        assert!(matches!(
            redirect("code=abc&state=st8", &expect(true)),
            Redirect::Stray(_)
        ));
        let Redirect::Refused(why) = redirect(
            "error=access_denied&error_description=no+thanks&state=st8",
            &e,
        ) else {
            panic!("a refusal");
        };
        assert_eq!(
            why,
            "the authorization server said access_denied (no thanks)"
        );
        // What it says reaches a terminal and the model escaped.
        let Redirect::Refused(why) = redirect(
            "error=access_denied%1b%5b2J&error_description=no%0d%0aForged%3a+1%1b]0;x%07&state=st8",
            &e,
        ) else {
            panic!("a refusal");
        };
        assert_eq!(
            why,
            "the authorization server said access_denied\\x1b[2J (no Forged: 1\\x1b]0;x\\x07)"
        );
        // An error with another state is someone else's.
        assert!(matches!(
            redirect("error=access_denied&state=x", &e),
            Redirect::Stray(_)
        ));
    }

    #[test]
    fn a_pasted_url_or_code() {
        let e = expect(false);
        assert_eq!(
            pasted(" http://127.0.0.1:1/callback?code=c9&state=st8 \n", &e),
            Redirect::Code("c9".into())
        );
        assert!(matches!(
            pasted("http://127.0.0.1:1/callback?code=c9&state=nope", &e),
            Redirect::Stray(_)
        ));
        assert_eq!(pasted("c9", &e), Redirect::Code("c9".into()));
        assert!(matches!(pasted("", &e), Redirect::Stray(_)));
        assert!(matches!(pasted("two words", &e), Redirect::Stray(_)));
    }
}
