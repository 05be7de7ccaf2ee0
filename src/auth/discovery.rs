//! Finding where to sign in (MCP authorization, "Authorization Server
//! Discovery"): the server's protected-resource metadata (RFC 9728) from
//! the `resource_metadata` of its 401's challenge, else from the well-known
//! URLs; its `resource` checked against the server; its first authorization
//! server; that server's metadata (RFC 8414, else OpenID Connect) checked.
//! And the probe `login` sends to get a server's challenge.
//!
//! Messages name URLs without their query (it may hold a secret).

use super::challenge::{self, Bearer};
use super::http::{self, Http};
use super::metadata::{self, ResourceMetadata, ServerMetadata};
use crate::net::{text, Url};
use crate::protocol::mcp;

/// Where and how a server's tokens are obtained.
#[derive(Debug, Clone)]
pub(crate) struct Discovered {
    /// The resource tokens are asked for (RFC 8707), canonical.
    pub resource: String,
    pub issuer: Url,
    pub meta: ServerMetadata,
    /// The resource's `scopes_supported`.
    pub resource_scopes: Vec<String>,
}

/// Discovers where `server` signs in; `challenge` is its 401's, if any.
pub(crate) fn discover(
    http: &dyn Http,
    server: &Url,
    challenge: Option<&Bearer>,
) -> Result<Discovered, String> {
    metadata::secure(server)?;
    let (prm, from) = resource_metadata(http, server, challenge)?;
    let resource = match &prm.resource {
        Some(resource) if metadata::covers(resource, server) => {
            Url::parse(resource).map(|u| metadata::canonical(&u))?
        }
        Some(resource) => {
            return Err(format!(
                "the protected-resource metadata at {} is for the resource '{}', which is not this server's",
                shown(&from),
                text::shown(resource, 200)
            ))
        }
        None => metadata::canonical(server),
    };
    let first = &prm.authorization_servers[0];
    let issuer = Url::parse(first).map_err(|e| {
        format!(
            "the protected-resource metadata at {} names the authorization server '{}': {e}",
            shown(&from),
            text::shown(first, 200)
        )
    })?;
    metadata::secure(&issuer)?;
    let meta = server_metadata(http, &issuer)?;
    Ok(Discovered {
        resource,
        issuer,
        meta,
        resource_scopes: prm.scopes_supported,
    })
}

/// The resource's metadata and where it was found: the challenge's link
/// first, then the well-known URLs.
fn resource_metadata(
    http: &dyn Http,
    server: &Url,
    challenge: Option<&Bearer>,
) -> Result<(ResourceMetadata, Url), String> {
    let mut tried = Vec::new();
    let linked = challenge
        .and_then(|c| c.resource_metadata.as_deref())
        .and_then(|link| server.join(link).ok());
    for url in linked
        .into_iter()
        .chain(metadata::resource_metadata_urls(server))
    {
        metadata::secure(&url)?;
        let response = http::get_json(http, &url)?;
        if !response.ok() {
            tried.push(format!("{} ({})", shown(&url), response.summary()));
            continue;
        }
        let prm = metadata::resource_metadata(&response.body).map_err(|e| {
            format!(
                "the protected-resource metadata at {} does not read: {e}",
                shown(&url)
            )
        })?;
        return Ok((prm, url));
    }
    Err(format!(
        "the server has no protected-resource metadata to say where to sign in (tried {})",
        tried.join(", ")
    ))
}

/// The authorization server's metadata, from the first of its well-known
/// URLs that has it, checked.
fn server_metadata(http: &dyn Http, issuer: &Url) -> Result<ServerMetadata, String> {
    let mut tried = Vec::new();
    for url in metadata::server_metadata_urls(issuer) {
        let response = http::get_json(http, &url)?;
        if !response.ok() {
            tried.push(format!("{} ({})", shown(&url), response.summary()));
            continue;
        }
        let meta = metadata::server_metadata(&response.body)
            .and_then(|meta| metadata::check_server(&meta, issuer).map(|()| meta))
            .map_err(|e| {
                format!(
                    "the authorization server metadata at {} cannot be used: {e}",
                    shown(&url)
                )
            })?;
        return Ok(meta);
    }
    Err(format!(
        "the authorization server {} publishes no metadata (tried {})",
        metadata::canonical(issuer),
        tried.join(", ")
    ))
}

/// A URL for a message: without its query, its secrets as written in the
/// config (`Url`'s `Display`).
pub(crate) fn shown(url: &Url) -> String {
    let shown = url.to_string();
    match shown.split_once('?') {
        Some((before, _)) => before.to_string(),
        None => shown,
    }
}

/// What a server says to a request without a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Probe {
    /// 401, with its `Bearer` challenge if it had one.
    Unauthorized(Option<Bearer>),
    /// It answered: no sign-in is needed.
    Open,
    /// Another status.
    Other(String),
}

/// Sends `server` the request an MCP client opens with (`initialize`),
/// without a token, to read its challenge.
pub(crate) fn probe(http: &dyn Http, server: &Url) -> Result<Probe, String> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": mcp::method::INITIALIZE,
        "params": {
            "protocolVersion": mcp::LATEST_VERSION,
            "capabilities": {},
            "clientInfo": {"name": mcp::NAME, "version": mcp::VERSION},
        },
    })
    .to_string();
    let response = http.fetch(
        "POST",
        server,
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        Some(body.as_bytes()),
        http::TIMEOUT,
    )?;
    if response.status == 401 {
        let challenge = response
            .header("WWW-Authenticate")
            .and_then(|h| challenge::bearer(h.as_bytes()));
        return Ok(Probe::Unauthorized(challenge));
    }
    if response.ok() {
        // A session it may have opened is ended at once.
        if let Some(session) = response.header("Mcp-Session-Id") {
            let _ = http.fetch(
                "DELETE",
                server,
                &[("Mcp-Session-Id", session)],
                None,
                http::TIMEOUT,
            );
        }
        return Ok(Probe::Open);
    }
    Ok(Probe::Other(format!("HTTP {}", response.status)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::http::fake::{json, status, Fake};
    use serde_json::json;

    fn as_meta(base: &str) -> serde_json::Value {
        json!({
            "issuer": base,
            "authorization_endpoint": format!("{base}/authorize"),
            "token_endpoint": format!("{base}/token"),
            "registration_endpoint": format!("{base}/register"),
            "code_challenge_methods_supported": ["S256"],
        })
    }

    #[test]
    fn the_challenges_link_comes_first() {
        let fake = Fake::new(|seen| match seen.url.as_str() {
            "https://mcp.example.com/meta/prm" => json(
                200,
                json!({"resource": "https://mcp.example.com/mcp", "authorization_servers": ["https://as.example"], "scopes_supported": ["s1"]}),
            ),
            "https://as.example/.well-known/oauth-authorization-server" => {
                json(200, as_meta("https://as.example"))
            }
            _ => status(404),
        });
        let challenge = Bearer {
            resource_metadata: Some("/meta/prm".into()),
            ..Bearer::default()
        };
        let server = Url::parse("https://mcp.example.com/mcp").unwrap();
        let found = discover(&*fake, &server, Some(&challenge)).unwrap();
        assert_eq!(found.resource, "https://mcp.example.com/mcp");
        assert_eq!(found.issuer.to_string(), "https://as.example/");
        assert_eq!(found.meta.token_endpoint, "https://as.example/token");
        assert_eq!(found.resource_scopes, ["s1"]);
        assert_eq!(crate::lock(&fake.seen).len(), 2);
    }

    #[test]
    fn well_known_fallbacks_in_order() {
        let fake = Fake::new(|seen| match seen.url.as_str() {
            // The path form is missing: the root one has it.
            "https://mcp.example.com/.well-known/oauth-protected-resource" => json(
                200,
                json!({"resource": "https://mcp.example.com", "authorization_servers": ["https://as.example/tenant"]}),
            ),
            // Neither RFC 8414 form: OpenID Connect after the path.
            "https://as.example/tenant/.well-known/openid-configuration" => {
                json(200, as_meta("https://as.example/tenant"))
            }
            _ => status(404),
        });
        let server = Url::parse("https://mcp.example.com/v1/mcp?key=secret").unwrap();
        let found = discover(&*fake, &server, None).unwrap();
        assert_eq!(found.resource, "https://mcp.example.com");
        let urls: Vec<String> = crate::lock(&fake.seen)
            .iter()
            .map(|s| s.url.clone())
            .collect();
        assert_eq!(
            urls,
            [
                "https://mcp.example.com/.well-known/oauth-protected-resource/v1/mcp",
                "https://mcp.example.com/.well-known/oauth-protected-resource",
                "https://as.example/.well-known/oauth-authorization-server/tenant",
                "https://as.example/.well-known/openid-configuration/tenant",
                "https://as.example/tenant/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn what_discovery_refuses() {
        let wrong_resource = Fake::new(|seen| match seen.url.as_str() {
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp" => json(
                200,
                json!({"resource": "https://elsewhere.example/mcp", "authorization_servers": ["https://as.example"]}),
            ),
            _ => status(404),
        });
        let server = Url::parse("https://mcp.example.com/mcp").unwrap();
        let error = discover(&*wrong_resource, &server, None).unwrap_err();
        assert!(error.contains("not this server's"), "{error}");

        let wrong_issuer = Fake::new(|seen| match seen.url.as_str() {
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp" => json(
                200,
                json!({"resource": "https://mcp.example.com/mcp", "authorization_servers": ["https://as.example"]}),
            ),
            "https://as.example/.well-known/oauth-authorization-server" => {
                json(200, as_meta("https://evil.example"))
            }
            _ => status(404),
        });
        let error = discover(&*wrong_issuer, &server, None).unwrap_err();
        assert!(error.contains("names issuer"), "{error}");

        let nothing = Fake::new(|_| status(404));
        let error = discover(&*nothing, &server, None).unwrap_err();
        assert!(error.contains("no protected-resource metadata"), "{error}");
        assert!(
            error.contains("oauth-protected-resource/mcp (HTTP 404)"),
            "{error}"
        );

        let plain = Url::parse("http://mcp.example.com/mcp").unwrap();
        let error = discover(&*nothing, &plain, None).unwrap_err();
        assert!(error.contains("plain http"), "{error}");

        let down = Fake::new(|seen| Err(format!("cannot connect to {}: refused", seen.url)));
        assert!(discover(&*down, &server, None)
            .unwrap_err()
            .contains("refused"));
    }

    #[test]
    fn the_probe_reads_the_challenge() {
        let fake = Fake::new(|_| {
            Ok(http::Response {
                status: 401,
                headers: vec![(
                    "www-authenticate".into(),
                    r#"Bearer resource_metadata="https://x/prm", scope="a""#.into(),
                )],
                body: Vec::new(),
            })
        });
        let server = Url::parse("https://mcp.example.com/mcp").unwrap();
        let Probe::Unauthorized(Some(challenge)) = probe(&*fake, &server).unwrap() else {
            panic!("a 401 with a challenge");
        };
        assert_eq!(challenge.scope.as_deref(), Some("a"));
        let sent = &fake.to("mcp.example.com")[0];
        assert_eq!(sent.method, "POST");
        assert!(sent.body.contains("\"initialize\""));
        let open = Fake::new(|seen| match seen.method.as_str() {
            "POST" => Ok(http::Response {
                status: 200,
                headers: vec![("Mcp-Session-Id".into(), "s1".into())],
                body: b"{}".to_vec(),
            }),
            _ => status(204),
        });
        assert_eq!(probe(&*open, &server).unwrap(), Probe::Open);
        assert_eq!(open.to("mcp")[1].method, "DELETE");
    }
}
