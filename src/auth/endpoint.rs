//! The token endpoint (RFC 6749 §3.2): the two grants this client uses,
//! `authorization_code` with PKCE's verifier (RFC 7636 §4.5) and
//! `refresh_token` (§6), each with the `resource` (RFC 8707 §2.2) and the
//! client's authentication (none, `client_secret_basic` or
//! `client_secret_post`); and the tokens a response makes.
//!
//! A refusal (400 or 401, RFC 6749 §5.2: `invalid_grant`, a revoked or
//! spent refresh token) is told apart from a failure to ask (the network,
//! a 5xx), because a refusal ends the sign-in and a failure does not.

use super::http::{self, Http};
use super::store::{AuthMethod, Tokens};
use super::token::{self, TokenResponse};
use crate::net::base64;
use crate::net::{url, Url};

/// What a token request needs besides the grant itself.
#[derive(Clone)]
pub(crate) struct Grant {
    pub issuer: String,
    pub token_endpoint: Url,
    pub client_id: String,
    pub client_secret: Option<String>,
    pub auth_method: AuthMethod,
    /// The client was registered here (kept with the tokens).
    pub registered: bool,
    pub resource: String,
}

/// Never shows the client's secret.
impl std::fmt::Debug for Grant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grant")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

/// Why a token request gave no tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The server refused the grant: it will not work again.
    Refused(String),
    /// The request did not get an answer that counts: it may next time.
    Failed(String),
}

impl Grant {
    /// The grant that refreshes `tokens`; `configured_secret` is the
    /// configured client's secret, for a client that is not registered here.
    pub(crate) fn of(tokens: &Tokens, configured_secret: Option<&str>) -> Result<Grant, String> {
        let token_endpoint = Url::parse(&tokens.token_endpoint)
            .map_err(|e| format!("the stored token endpoint: {e}"))?;
        let client_secret = match tokens.registered {
            true => tokens.client_secret.clone(),
            false => configured_secret.map(str::to_string),
        };
        Ok(Grant {
            issuer: tokens.issuer.clone(),
            token_endpoint,
            client_id: tokens.client_id.clone(),
            client_secret,
            auth_method: tokens.auth_method,
            registered: tokens.registered,
            resource: tokens.resource.clone(),
        })
    }

    /// Exchanges an authorization code (RFC 6749 §4.1.3).
    pub(crate) fn exchange(
        &self,
        http: &dyn Http,
        code: &str,
        verifier: &str,
        redirect_uri: &str,
    ) -> Result<TokenResponse, Failure> {
        self.request(
            http,
            &[
                ("grant_type", "authorization_code"),
                ("code", code),
                ("redirect_uri", redirect_uri),
                ("code_verifier", verifier),
            ],
        )
    }

    /// Refreshes (RFC 6749 §6).
    pub(crate) fn refresh(
        &self,
        http: &dyn Http,
        refresh_token: &str,
    ) -> Result<TokenResponse, Failure> {
        self.request(
            http,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", refresh_token),
            ],
        )
    }

    fn request(&self, http: &dyn Http, grant: &[(&str, &str)]) -> Result<TokenResponse, Failure> {
        let mut pairs = grant.to_vec();
        pairs.push(("resource", &self.resource));
        let secret = self.client_secret.as_deref().unwrap_or_default();
        let basic;
        let mut headers = vec![
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Accept", "application/json"),
        ];
        match self.auth_method {
            AuthMethod::None => pairs.push(("client_id", &self.client_id)),
            AuthMethod::ClientSecretPost => {
                pairs.push(("client_id", &self.client_id));
                pairs.push(("client_secret", secret));
            }
            AuthMethod::ClientSecretBasic => {
                // RFC 6749 §2.3.1: each part form-encoded, then Basic.
                let pair = format!("{}:{}", url::encode(&self.client_id), url::encode(secret));
                basic = format!("Basic {}", base64::standard(pair.as_bytes()));
                headers.push(("Authorization", &basic));
            }
        }
        let body = http::form(&pairs);
        let where_ = format!(
            "the token endpoint {}",
            super::discovery::shown(&self.token_endpoint)
        );
        let response = http
            .fetch(
                "POST",
                &self.token_endpoint,
                &headers,
                Some(&body),
                http::TIMEOUT,
            )
            .map_err(Failure::Failed)?;
        match response.status {
            200..=299 => token::token_response(&response.body)
                .map_err(|e| Failure::Failed(format!("{where_}: {e}"))),
            400 | 401 => Err(Failure::Refused(match token::token_error(&response.body) {
                Some(error) => format!("{where_} refused: {error}"),
                None => format!("{where_} refused (HTTP {})", response.status),
            })),
            status => Err(Failure::Failed(format!("{where_} answered HTTP {status}"))),
        }
    }

    /// The tokens `response` gives at `now`; a response without a refresh
    /// token keeps `previous` (RFC 6749 §6: rotation is the server's
    /// choice), and one without a scope keeps `scope`.
    pub(crate) fn tokens(
        &self,
        response: TokenResponse,
        now: u64,
        previous: Option<String>,
        scope: Option<String>,
    ) -> Tokens {
        Tokens {
            issuer: self.issuer.clone(),
            resource: self.resource.clone(),
            token_endpoint: self.token_endpoint.as_sent(),
            client_id: self.client_id.clone(),
            registered: self.registered,
            client_secret: self.client_secret.clone().filter(|_| self.registered),
            auth_method: self.auth_method,
            access_token: response.access_token,
            refresh_token: response.refresh_token.or(previous),
            obtained_at: now,
            refreshed: false,
            expires_at: response.expires_in.map(|s| now.saturating_add(s)),
            scope: response.scope.or(scope),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::http::fake::{json, status, Fake};
    use serde_json::json;

    fn grant(auth_method: AuthMethod) -> Grant {
        Grant {
            issuer: "https://as.example".into(),
            token_endpoint: Url::parse("https://as.example/token").unwrap(),
            client_id: "c 1".into(),
            client_secret: Some("s:é".into()),
            auth_method,
            registered: false,
            resource: "https://mcp.example.com/mcp".into(),
        }
    }

    #[test]
    fn the_code_exchange_sends_the_verifier_resource_and_client() {
        let fake = Fake::new(|_| {
            json(
                200,
                json!({"access_token": "a", "token_type": "Bearer", "expires_in": 60, "refresh_token": "r"}),
            )
        });
        let got = grant(AuthMethod::None)
            .exchange(
                &*fake,
                "the-code",
                "the-verifier",
                "http://127.0.0.1:5/callback",
            )
            .unwrap();
        assert_eq!(got.access_token, "a");
        let sent = &fake.to("/token")[0];
        assert_eq!(
            sent.field("grant_type").as_deref(),
            Some("authorization_code")
        );
        assert_eq!(sent.field("code").as_deref(), Some("the-code"));
        assert_eq!(sent.field("code_verifier").as_deref(), Some("the-verifier"));
        assert_eq!(
            sent.field("redirect_uri").as_deref(),
            Some("http://127.0.0.1:5/callback")
        );
        assert_eq!(
            sent.field("resource").as_deref(),
            Some("https://mcp.example.com/mcp")
        );
        assert_eq!(sent.field("client_id").as_deref(), Some("c 1"));
        assert_eq!(sent.field("client_secret"), None);
        assert_eq!(sent.header("Authorization"), None);
    }

    #[test]
    fn client_secrets_go_where_the_method_says() {
        let fake = Fake::new(|_| json(200, json!({"access_token": "a"})));
        grant(AuthMethod::ClientSecretBasic)
            .refresh(&*fake, "r")
            .unwrap();
        grant(AuthMethod::ClientSecretPost)
            .refresh(&*fake, "r")
            .unwrap();
        let sent = fake.to("/token");
        // "c%201:s%3A%C3%A9" in base64.
        assert_eq!(
            sent[0].header("Authorization"),
            Some(format!("Basic {}", base64::standard(b"c%201:s%3A%C3%A9")).as_str())
        );
        assert_eq!(sent[0].field("client_id"), None);
        assert_eq!(sent[0].field("refresh_token").as_deref(), Some("r"));
        assert_eq!(
            sent[0].field("resource").as_deref(),
            Some("https://mcp.example.com/mcp")
        );
        assert_eq!(sent[1].field("client_secret").as_deref(), Some("s:é"));
        assert_eq!(sent[1].header("Authorization"), None);
    }

    #[test]
    fn refusals_and_failures_are_told_apart() {
        let refused = Fake::new(|_| {
            json(
                400,
                json!({"error": "invalid_grant", "error_description": "spent"}),
            )
        });
        let Err(Failure::Refused(why)) = grant(AuthMethod::None).refresh(&*refused, "r") else {
            panic!("a refusal");
        };
        assert!(why.contains("invalid_grant (spent)"), "{why}");
        let unauthorized = Fake::new(|_| status(401));
        assert!(matches!(
            grant(AuthMethod::None).refresh(&*unauthorized, "r"),
            Err(Failure::Refused(_))
        ));
        let down = Fake::new(|_| status(503));
        assert!(matches!(
            grant(AuthMethod::None).refresh(&*down, "r"),
            Err(Failure::Failed(_))
        ));
        let cut = Fake::new(|_| Err("the connection to https://as.example/token ended".into()));
        assert!(matches!(
            grant(AuthMethod::None).refresh(&*cut, "r"),
            Err(Failure::Failed(_))
        ));
        let junk = Fake::new(|_| json(200, json!({"token": "x"})));
        assert!(matches!(
            grant(AuthMethod::None).refresh(&*junk, "r"),
            Err(Failure::Failed(_))
        ));
    }

    #[test]
    fn tokens_keep_the_old_refresh_token_unless_rotated() {
        let g = grant(AuthMethod::None);
        let response = |refresh: Option<&str>| TokenResponse {
            access_token: "a2".into(),
            expires_in: Some(100),
            refresh_token: refresh.map(str::to_string),
            scope: None,
        };
        let kept = g.tokens(response(None), 1000, Some("r1".into()), Some("s".into()));
        assert_eq!(kept.refresh_token.as_deref(), Some("r1"));
        assert_eq!(kept.expires_at, Some(1100));
        assert_eq!(kept.scope.as_deref(), Some("s"));
        assert_eq!(
            kept.client_secret, None,
            "a configured secret is not stored"
        );
        let rotated = g.tokens(response(Some("r2")), 1000, Some("r1".into()), None);
        assert_eq!(rotated.refresh_token.as_deref(), Some("r2"));
    }
}
