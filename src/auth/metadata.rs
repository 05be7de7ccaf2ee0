//! What discovery reads (MCP authorization, "Authorization Server
//! Discovery"): a resource's protected-resource metadata (RFC 9728) and its
//! authorization server's metadata (RFC 8414, or OpenID Connect Discovery),
//! parsed and checked, and the well-known URLs where each is looked for.
//!
//! The parse functions are pure and total over any bytes (the fuzz target
//! calls them); their errors never quote the body. No IO.

use crate::net::Url;
use serde_json::Value;

/// A protected resource's metadata (RFC 9728 §2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceMetadata {
    /// The resource's identifier, which tokens are asked for (`None`: the
    /// document left it out, and the server's own URL stands in).
    pub resource: Option<String>,
    pub authorization_servers: Vec<String>,
    pub scopes_supported: Vec<String>,
}

/// An authorization server's metadata (RFC 8414 §2), what a client uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerMetadata {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    /// Dynamic client registration (RFC 7591), when offered.
    pub registration_endpoint: Option<String>,
    /// `None`: not listed.
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// `None`: not listed (RFC 8414 then means `client_secret_basic`).
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// RFC 9207: the redirect carries `iss`, which must be the issuer.
    pub authorization_response_iss_parameter_supported: bool,
    pub scopes_supported: Vec<String>,
}

/// Reads a protected-resource metadata document.
pub fn resource_metadata(body: &[u8]) -> Result<ResourceMetadata, String> {
    let doc = object(body)?;
    let servers = strings(&doc, "authorization_servers")?;
    if servers.is_empty() {
        return Err("it names no authorization server (authorization_servers)".to_string());
    }
    Ok(ResourceMetadata {
        resource: string(&doc, "resource")?,
        authorization_servers: servers,
        scopes_supported: strings(&doc, "scopes_supported")?,
    })
}

/// Reads an authorization server's metadata document.
pub fn server_metadata(body: &[u8]) -> Result<ServerMetadata, String> {
    let doc = object(body)?;
    let required = |key: &str| string(&doc, key)?.ok_or_else(|| format!("it has no {key}"));
    let listed = |key: &str| match doc.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => strings(&doc, key).map(Some),
    };
    Ok(ServerMetadata {
        issuer: required("issuer")?,
        authorization_endpoint: required("authorization_endpoint")?,
        token_endpoint: required("token_endpoint")?,
        registration_endpoint: string(&doc, "registration_endpoint")?,
        code_challenge_methods_supported: listed("code_challenge_methods_supported")?,
        token_endpoint_auth_methods_supported: listed("token_endpoint_auth_methods_supported")?,
        authorization_response_iss_parameter_supported: doc
            .get("authorization_response_iss_parameter_supported")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        scopes_supported: strings(&doc, "scopes_supported")?,
    })
}

fn object(body: &[u8]) -> Result<serde_json::Map<String, Value>, String> {
    match serde_json::from_slice(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err("it is not a JSON object".to_string()),
        Err(e) => Err(format!("it is not JSON ({e})")),
    }
}

fn string(doc: &serde_json::Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match doc.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.trim().to_string())),
        Some(_) => Err(format!("its {key} is not a non-empty string")),
    }
}

fn strings(doc: &serde_json::Map<String, Value>, key: &str) -> Result<Vec<String>, String> {
    match doc.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("its {key} holds something that is not a string"))
            })
            .collect(),
        Some(_) => Err(format!("its {key} is not a list")),
    }
}

/// A URL as an identifier: the resource or issuer form (RFC 8707 §2, RFC
/// 8414 §2), without a lone trailing `/` and without a query.
pub(crate) fn canonical(url: &Url) -> String {
    let path = url.path();
    let path = if path == "/" { "" } else { path };
    format!("{}{path}", url.origin())
}

/// Where a server's protected-resource metadata may be (RFC 9728 §3.1),
/// in order: the well-known path with the server's path after it, then at
/// the root. The query stays out: it may hold a secret.
pub(crate) fn resource_metadata_urls(server: &Url) -> Vec<Url> {
    well_known(server, "oauth-protected-resource")
}

/// Where an issuer's metadata may be, in order (MCP authorization, "Authorization
/// Server Metadata Discovery"): RFC 8414's well-known path with the issuer's
/// path after it, then OpenID Connect's the same way, then OpenID
/// Connect's after the issuer's path.
pub(crate) fn server_metadata_urls(issuer: &Url) -> Vec<Url> {
    let mut urls = well_known(issuer, "oauth-authorization-server");
    urls.truncate(1);
    let path = issuer.path().trim_end_matches('/');
    let mut openid = well_known(issuer, "openid-configuration");
    openid.truncate(1);
    urls.extend(openid);
    if !path.is_empty() {
        urls.extend(issuer.join(&format!("{path}/.well-known/openid-configuration")));
    }
    urls
}

/// `/.well-known/NAME/<path>` for a URL with a path, then `/.well-known/NAME`;
/// just the latter for one without.
fn well_known(url: &Url, name: &str) -> Vec<Url> {
    let path = url.path().trim_end_matches('/');
    let mut urls = Vec::new();
    if !path.is_empty() {
        urls.extend(url.join(&format!("/.well-known/{name}{path}")));
    }
    urls.extend(url.join(&format!("/.well-known/{name}")));
    urls
}

/// Whether the metadata's `resource` is the server's, or one that covers it
/// (the same origin, and a path the server's path lies under): a resource
/// names what tokens are for, and a server may sit below it.
pub(crate) fn covers(resource: &str, server: &Url) -> bool {
    let Ok(resource) = Url::parse(resource) else {
        return false;
    };
    if resource.origin() != server.origin() {
        return false;
    }
    let base = resource.path().trim_end_matches('/');
    let path = server.path();
    base.is_empty() || path == base || path.starts_with(&format!("{base}/"))
}

/// Checks an authorization server's metadata fetched for issuer `issuer`:
/// the issuer it names is that one (RFC 8414 §3.3), it takes PKCE's S256
/// when it lists methods at all, and each endpoint is https or on loopback.
pub(crate) fn check_server(meta: &ServerMetadata, issuer: &Url) -> Result<(), String> {
    let named = Url::parse(&meta.issuer)
        .map(|u| canonical(&u))
        .unwrap_or_else(|_| meta.issuer.clone());
    if named != canonical(issuer) {
        return Err(format!(
            "it names issuer '{}', not '{}'",
            crate::net::text::shown(&meta.issuer, 200),
            canonical(issuer)
        ));
    }
    if let Some(methods) = &meta.code_challenge_methods_supported {
        if !methods.iter().any(|m| m == "S256") {
            return Err(
                "it does not offer PKCE with S256 (code_challenge_methods_supported)".to_string(),
            );
        }
    }
    let endpoints = [
        ("authorization_endpoint", Some(&meta.authorization_endpoint)),
        ("token_endpoint", Some(&meta.token_endpoint)),
        ("registration_endpoint", meta.registration_endpoint.as_ref()),
    ];
    for (key, value) in endpoints {
        if let Some(value) = value {
            let url = Url::parse(value).map_err(|e| format!("its {key}: {e}"))?;
            secure(&url).map_err(|e| format!("its {key}: {e}"))?;
        }
    }
    Ok(())
}

/// Sign-in goes over https, or plain http to this machine only.
pub(crate) fn secure(url: &Url) -> Result<(), String> {
    match url.is_https() || url.is_loopback() {
        true => Ok(()),
        false => Err(format!(
            "{} is plain http to another machine, and signing in over it would expose the credentials",
            url.shown_origin()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    fn strings_of(urls: Vec<Url>) -> Vec<String> {
        urls.iter().map(Url::to_string).collect()
    }

    #[test]
    fn well_known_urls_in_the_order_the_spec_gives() {
        assert_eq!(
            strings_of(resource_metadata_urls(&url(
                "https://mcp.example.com/v1/mcp?key=secret"
            ))),
            [
                "https://mcp.example.com/.well-known/oauth-protected-resource/v1/mcp",
                "https://mcp.example.com/.well-known/oauth-protected-resource",
            ]
        );
        assert_eq!(
            strings_of(resource_metadata_urls(&url("https://mcp.example.com"))),
            ["https://mcp.example.com/.well-known/oauth-protected-resource"]
        );
        assert_eq!(
            strings_of(server_metadata_urls(&url("https://as.example/tenant1"))),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant1",
                "https://as.example/.well-known/openid-configuration/tenant1",
                "https://as.example/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            strings_of(server_metadata_urls(&url("https://as.example/"))),
            [
                "https://as.example/.well-known/oauth-authorization-server",
                "https://as.example/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn resource_metadata_reads_and_refuses() {
        let doc = resource_metadata(
            br#"{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://as.example"],"scopes_supported":["a","b"],"extra":1}"#,
        )
        .unwrap();
        assert_eq!(doc.resource.as_deref(), Some("https://mcp.example.com/mcp"));
        assert_eq!(doc.authorization_servers, ["https://as.example"]);
        assert_eq!(doc.scopes_supported, ["a", "b"]);
        for (bad, why) in [
            (&b"<html>"[..], "not JSON"),
            (b"[1]", "not a JSON object"),
            (
                br#"{"authorization_servers":[]}"#,
                "no authorization server",
            ),
            (br#"{"authorization_servers":"x"}"#, "not a list"),
            (br#"{"authorization_servers":[1]}"#, "not a string"),
            (
                br#"{"authorization_servers":["x"],"resource":5}"#,
                "resource is not",
            ),
        ] {
            let error = resource_metadata(bad).unwrap_err();
            assert!(error.contains(why), "{error}");
        }
    }

    #[test]
    fn server_metadata_reads_and_is_checked() {
        let body = br#"{"issuer":"https://as.example/","authorization_endpoint":"https://as.example/authorize",
            "token_endpoint":"https://as.example/token","registration_endpoint":"https://as.example/register",
            "code_challenge_methods_supported":["plain","S256"],"authorization_response_iss_parameter_supported":true}"#;
        let meta = server_metadata(body).unwrap();
        assert!(meta.authorization_response_iss_parameter_supported);
        assert_eq!(meta.token_endpoint_auth_methods_supported, None);
        check_server(&meta, &url("https://as.example")).unwrap();
        let other = check_server(&meta, &url("https://evil.example")).unwrap_err();
        assert!(other.contains("names issuer"), "{other}");
        let plain = ServerMetadata {
            code_challenge_methods_supported: Some(vec!["plain".into()]),
            ..meta.clone()
        };
        assert!(check_server(&plain, &url("https://as.example"))
            .unwrap_err()
            .contains("S256"));
        let unlisted = ServerMetadata {
            code_challenge_methods_supported: None,
            ..meta.clone()
        };
        check_server(&unlisted, &url("https://as.example")).unwrap();
        let cleartext = ServerMetadata {
            token_endpoint: "http://as.example/token".into(),
            ..meta.clone()
        };
        let error = check_server(&cleartext, &url("https://as.example")).unwrap_err();
        assert!(
            error.contains("token_endpoint") && error.contains("plain http"),
            "{error}"
        );
        let loopback = ServerMetadata {
            issuer: "http://127.0.0.1:9/".into(),
            authorization_endpoint: "http://127.0.0.1:9/a".into(),
            token_endpoint: "http://127.0.0.1:9/t".into(),
            registration_endpoint: None,
            ..meta
        };
        check_server(&loopback, &url("http://127.0.0.1:9")).unwrap();
        assert!(
            server_metadata(br#"{"issuer":"x","authorization_endpoint":"y"}"#)
                .unwrap_err()
                .contains("no token_endpoint")
        );
    }

    #[test]
    fn a_resource_covers_the_servers_below_it_on_its_origin() {
        let server = url("https://mcp.example.com/v1/mcp");
        assert!(covers("https://mcp.example.com/v1/mcp", &server));
        assert!(covers("https://mcp.example.com/v1/", &server));
        assert!(covers("https://mcp.example.com", &server));
        assert!(!covers("https://mcp.example.com/v2", &server));
        assert!(!covers("https://mcp.example.com/v1/m", &server));
        assert!(!covers("https://other.example/v1/mcp", &server));
        assert!(!covers("not a url", &server));
        assert_eq!(canonical(&url("https://A.example/")), "https://a.example");
        assert_eq!(
            canonical(&url("https://a.example:443/mcp?x=1")),
            "https://a.example/mcp"
        );
    }
}
