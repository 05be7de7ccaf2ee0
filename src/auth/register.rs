//! Which OAuth client signs in: the configured one (`oauth.clientId`,
//! with its secret sent as the authorization server prefers), else one this
//! workbench registers dynamically (RFC 7591) as a public client with a
//! loopback redirect, remembered in the store by issuer and redirect URI so
//! that later sign-ins reuse it (docs/decisions.md, "A registered client
//! keeps its port").

use super::http::{self, Http};
use super::metadata::ServerMetadata;
use super::store::{self, AuthMethod, Registration};
use super::Client;
use crate::net::Url;
use crate::protocol::mcp;
use serde_json::{json, Value};

/// The loopback redirect URI on `port` (RFC 8252 §7.3).
pub(crate) fn redirect_uri(port: u16) -> String {
    format!("http://127.0.0.1:{port}/callback")
}

/// The port of a loopback redirect URI of ours.
pub(crate) fn port_of(redirect_uri: &str) -> Option<u16> {
    let url = Url::parse(redirect_uri).ok()?;
    (url.host() == "127.0.0.1" && url.path() == "/callback").then(|| url.port())
}

/// The configured client, with how it authenticates at `meta`'s token
/// endpoint: without a secret, as a public client; with one,
/// `client_secret_basic` where the server takes it (RFC 8414's default when
/// it lists nothing), else `client_secret_post` where it takes that.
pub(crate) fn configured(client: &Client, meta: &ServerMetadata) -> Option<Registration> {
    let client_id = client.client_id.clone()?;
    let auth_method = match &client.client_secret {
        None => AuthMethod::None,
        Some(_) => match &meta.token_endpoint_auth_methods_supported {
            Some(methods)
                if !methods.iter().any(|m| m == "client_secret_basic")
                    && methods.iter().any(|m| m == "client_secret_post") =>
            {
                AuthMethod::ClientSecretPost
            }
            _ => AuthMethod::ClientSecretBasic,
        },
    };
    Some(Registration {
        redirect_uri: String::new(),
        client_id,
        client_secret: client.client_secret.clone(),
        auth_method,
        registered_at: 0,
    })
}

/// Registers a public client with redirect `redirect_uri` at `meta`'s
/// registration endpoint (RFC 7591 §3).
pub(crate) fn register(
    http: &dyn Http,
    meta: &ServerMetadata,
    redirect_uri: &str,
) -> Result<Registration, String> {
    let Some(endpoint) = &meta.registration_endpoint else {
        return Err(format!(
            "the authorization server {} does not register clients itself: register one there, \
             then set its id as oauth.clientId (and its redirect port as oauth.callbackPort) for this server",
            meta.issuer
        ));
    };
    let endpoint = Url::parse(endpoint).map_err(|e| format!("the registration endpoint: {e}"))?;
    let body = json!({
        "client_name": mcp::NAME,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    })
    .to_string();
    let response = http.fetch(
        "POST",
        &endpoint,
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json"),
        ],
        Some(body.as_bytes()),
        http::TIMEOUT,
    )?;
    let shown = super::discovery::shown(&endpoint);
    if !response.ok() {
        return Err(format!(
            "the registration endpoint {shown} refused to register a client: {}",
            response.summary()
        ));
    }
    let doc: Value = serde_json::from_slice(&response.body)
        .map_err(|_| format!("the registration endpoint {shown} did not answer with JSON"))?;
    let text = |key: &str| {
        doc.get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let client_id = text("client_id")
        .ok_or_else(|| format!("the registration endpoint {shown} answered without a client_id"))?;
    let client_secret = text("client_secret");
    // The server may give a confidential client after all (§3.2.1).
    let auth_method = match (
        text("token_endpoint_auth_method").as_deref(),
        &client_secret,
    ) {
        (Some("client_secret_post"), Some(_)) => AuthMethod::ClientSecretPost,
        (Some("client_secret_basic"), Some(_)) => AuthMethod::ClientSecretBasic,
        _ => AuthMethod::None,
    };
    Ok(Registration {
        redirect_uri: redirect_uri.to_string(),
        client_id,
        client_secret,
        auth_method,
        registered_at: store::now(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::http::fake::{json, Fake};
    use serde_json::json;

    fn meta(registration: Option<&str>, methods: Option<Vec<&str>>) -> ServerMetadata {
        ServerMetadata {
            issuer: "https://as.example".into(),
            authorization_endpoint: "https://as.example/authorize".into(),
            token_endpoint: "https://as.example/token".into(),
            registration_endpoint: registration.map(str::to_string),
            code_challenge_methods_supported: None,
            token_endpoint_auth_methods_supported: methods
                .map(|m| m.into_iter().map(str::to_string).collect()),
            authorization_response_iss_parameter_supported: false,
            scopes_supported: Vec::new(),
        }
    }

    #[test]
    fn dynamic_registration_asks_for_a_public_loopback_client() {
        let fake = Fake::new(|_| {
            json(
                201,
                json!({"client_id": "new-client", "client_id_issued_at": 1}),
            )
        });
        let got = register(
            &*fake,
            &meta(Some("https://as.example/register"), None),
            "http://127.0.0.1:4000/callback",
        )
        .unwrap();
        assert_eq!(got.client_id, "new-client");
        assert_eq!(got.auth_method, AuthMethod::None);
        assert_eq!(got.redirect_uri, "http://127.0.0.1:4000/callback");
        let sent: Value = serde_json::from_str(&fake.to("/register")[0].body).unwrap();
        assert_eq!(
            sent["redirect_uris"],
            json!(["http://127.0.0.1:4000/callback"])
        );
        assert_eq!(sent["token_endpoint_auth_method"], "none");
        assert_eq!(
            sent["grant_types"],
            json!(["authorization_code", "refresh_token"])
        );
        assert_eq!(sent["client_name"], "mcp-workbench");
    }

    #[test]
    fn registration_failures_say_what_to_do() {
        let fake = Fake::new(|_| json(400, json!({"error": "invalid_redirect_uri"})));
        let m = meta(Some("https://as.example/register"), None);
        let error = register(&*fake, &m, "http://127.0.0.1:1/callback").unwrap_err();
        assert!(
            error.contains("HTTP 400") && error.contains("invalid_redirect_uri"),
            "{error}"
        );
        let no_id = Fake::new(|_| json(201, json!({})));
        assert!(register(&*no_id, &m, "x")
            .unwrap_err()
            .contains("without a client_id"));
        let none = register(&*fake, &meta(None, None), "x").unwrap_err();
        assert!(none.contains("oauth.clientId"), "{none}");
        let confidential = Fake::new(|_| {
            json(
                201,
                json!({"client_id": "c", "client_secret": "s", "token_endpoint_auth_method": "client_secret_post"}),
            )
        });
        let got = register(&*confidential, &m, "x").unwrap();
        assert_eq!(got.auth_method, AuthMethod::ClientSecretPost);
        assert_eq!(got.client_secret.as_deref(), Some("s"));
    }

    #[test]
    fn a_configured_secret_goes_as_the_server_prefers() {
        let with_secret = Client {
            client_id: Some("mine".into()),
            client_secret: Some("s".into()),
            ..Client::default()
        };
        let method = |methods| {
            configured(&with_secret, &meta(None, methods))
                .unwrap()
                .auth_method
        };
        assert_eq!(method(None), AuthMethod::ClientSecretBasic);
        assert_eq!(
            method(Some(vec!["client_secret_post"])),
            AuthMethod::ClientSecretPost
        );
        assert_eq!(
            method(Some(vec!["client_secret_post", "client_secret_basic"])),
            AuthMethod::ClientSecretBasic
        );
        let public = Client {
            client_id: Some("mine".into()),
            ..Client::default()
        };
        assert_eq!(
            configured(&public, &meta(None, None)).unwrap().auth_method,
            AuthMethod::None
        );
        assert!(configured(&Client::default(), &meta(None, None)).is_none());
        assert_eq!(port_of("http://127.0.0.1:4711/callback"), Some(4711));
        assert_eq!(port_of("http://localhost:4711/callback"), None);
    }
}
