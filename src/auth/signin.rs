//! One sign-in from start to stored tokens, shared by `login` and the
//! background sign-in of a serving workbench: `begin` discovers where to
//! sign in, picks the client and the loopback port (a remembered
//! registration whose port is free, else a new registration, or the
//! configured client), and builds the authorization URL with a new PKCE
//! pair and `state`; the caller brings the browser there and waits for the
//! code (`Begun::wait`, or a pasted redirect through `Begun::pasted`);
//! `Begun::finish` exchanges the code and stores the tokens under the
//! token file's lock.

use super::challenge::Bearer;
use super::discovery;
use super::endpoint::{Failure, Grant};
use super::flow::{self, Expect, Redirect, Request};
use super::http::Http;
use super::loopback::Loopback;
use super::metadata;
use super::pkce::{self, Pkce};
use super::register::{self, port_of};
use super::store::{self, Registration, Store, Tokens};
use super::Client;
use crate::net::Url;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// A sign-in waiting for the person in the browser.
#[derive(Debug)]
pub(crate) struct Begun {
    /// The page that starts it.
    pub url: Url,
    pub loopback: Loopback,
    pub expect: Expect,
    verifier: String,
    redirect_uri: String,
    grant: Grant,
    scope: Option<String>,
}

/// Starts a sign-in to `server` with `client`; `challenge` is the server's
/// 401 challenge, if one came.
pub(crate) fn begin(
    http: &dyn Http,
    store: &Store,
    server: &Url,
    client: &Client,
    challenge: Option<&Bearer>,
) -> Result<Begun, String> {
    let found = discovery::discover(http, server, challenge)?;
    let issuer = metadata::canonical(&found.issuer);
    let (loopback, chosen) = match register::configured(client, &found.meta) {
        Some(configured) => (Loopback::bind(client.callback_port)?, configured),
        None => registered(http, store, &issuer, &found.meta, client.callback_port)?,
    };
    let redirect_uri = register::redirect_uri(loopback.port());
    let pkce = Pkce::new()?;
    let state = pkce::state()?;
    let scope = flow::scope(
        &client.scopes,
        challenge.and_then(|c| c.scope.as_deref()),
        &found.resource_scopes,
    );
    let url = Request {
        meta: &found.meta,
        client_id: &chosen.client_id,
        redirect_uri: &redirect_uri,
        challenge: &pkce.challenge,
        state: &state,
        scope: scope.as_deref(),
        resource: &found.resource,
    }
    .url()?;
    let token_endpoint = Url::parse(&found.meta.token_endpoint)?;
    Ok(Begun {
        url,
        loopback,
        expect: Expect {
            state,
            issuer: issuer.clone(),
            iss_required: found.meta.authorization_response_iss_parameter_supported,
        },
        verifier: pkce.verifier,
        redirect_uri,
        grant: Grant {
            issuer,
            token_endpoint,
            client_id: chosen.client_id,
            client_secret: chosen.client_secret,
            auth_method: chosen.auth_method,
            registered: client.client_id.is_none(),
            resource: found.resource,
        },
        scope,
    })
}

/// A client registered here for `issuer` and a listener on its redirect
/// port: a remembered one whose port is free now (with `callbackPort`, only
/// one on that port), else a new registration on a new listener.
fn registered(
    http: &dyn Http,
    store: &Store,
    issuer: &str,
    meta: &metadata::ServerMetadata,
    callback_port: Option<u16>,
) -> Result<(Loopback, Registration), String> {
    for known in store.registrations(issuer) {
        let Some(port) = port_of(&known.redirect_uri) else {
            continue;
        };
        if callback_port.is_some_and(|p| p != port) {
            continue;
        }
        if let Ok(loopback) = Loopback::bind(Some(port)) {
            return Ok((loopback, known));
        }
    }
    let loopback = Loopback::bind(callback_port)?;
    let registration = register::register(http, meta, &register::redirect_uri(loopback.port()))?;
    if let Err(e) = store.remember(issuer, registration.clone()) {
        log::warn!("the client registered at {issuer} is not remembered: {e}");
    }
    Ok((loopback, registration))
}

impl Begun {
    /// Waits for the browser's redirect until `until` or `stop`.
    pub(crate) fn wait(&self, until: Instant, stop: &AtomicBool) -> Result<String, String> {
        self.loopback.wait(&self.expect, until, stop)
    }

    /// Reads a pasted redirect URL or code.
    pub(crate) fn pasted(&self, line: &str) -> Redirect {
        flow::pasted(line, &self.expect)
    }

    /// The issuer signed in at.
    pub(crate) fn issuer(&self) -> &str {
        &self.grant.issuer
    }

    /// Exchanges `code` and stores the tokens; the token file and what it holds.
    pub(crate) fn finish(
        &self,
        http: &dyn Http,
        store: &Store,
        code: &str,
    ) -> Result<(PathBuf, Tokens), String> {
        let response = match self
            .grant
            .exchange(http, code, &self.verifier, &self.redirect_uri)
        {
            Ok(response) => response,
            Err(Failure::Refused(why)) => {
                if why.contains("invalid_client") && self.grant.registered {
                    // The server forgot the client: the next sign-in registers again.
                    let _ = store.forget(&self.grant.issuer, &self.grant.client_id);
                }
                return Err(why);
            }
            Err(Failure::Failed(why)) => return Err(why),
        };
        let tokens = self
            .grant
            .tokens(response, store::now(), None, self.scope.clone());
        let path = store.path(
            &self.grant.issuer,
            &self.grant.resource,
            &self.grant.client_id,
        );
        let _held = store.lock(&path)?;
        store.write(&path, &tokens)?;
        Ok((path, tokens))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::http::fake::{json, peers};
    use serde_json::json;
    use std::sync::atomic::Ordering;

    fn query(url: &Url, name: &str) -> String {
        crate::net::url::query_pairs(url.query().unwrap_or(""))
            .into_iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
            .unwrap_or_default()
    }

    #[test]
    fn a_sign_in_registers_once_and_stores_its_tokens() {
        let (fake, registrations) = peers(|seen| {
            assert_eq!(
                seen.field("grant_type").as_deref(),
                Some("authorization_code")
            );
            json(
                200,
                json!({"access_token": "a1", "expires_in": 3600, "refresh_token": "r1", "token_type": "Bearer"}),
            )
        });
        let store = crate::auth::store::tests::scratch("signin");
        let server = Url::parse("https://mcp.example.com/mcp").unwrap();
        let begun = begin(&*fake, &store, &server, &Client::default(), None).unwrap();
        assert_eq!(query(&begun.url, "client_id"), "client-1");
        assert_eq!(query(&begun.url, "scope"), "tools");
        assert_eq!(query(&begun.url, "resource"), "https://mcp.example.com/mcp");
        let redirect = query(&begun.url, "redirect_uri");
        assert_eq!(redirect, register::redirect_uri(begun.loopback.port()));
        assert!(begun.expect.iss_required);
        let (path, tokens) = begun.finish(&*fake, &store, "code-1").unwrap();
        assert_eq!(tokens.access_token, "a1");
        assert_eq!(store.read(&path).unwrap(), tokens);
        let sent = &fake.to("/token")[0];
        assert_eq!(
            sent.field("code_verifier").as_deref(),
            Some(begun.verifier.as_str())
        );
        assert_eq!(sent.field("client_id").as_deref(), Some("client-1"));
        // The port is free again: the next sign-in reuses the client and its port.
        let port = begun.loopback.port();
        drop(begun);
        let again = begin(&*fake, &store, &server, &Client::default(), None).unwrap();
        assert_eq!(registrations.load(Ordering::SeqCst), 1);
        assert_eq!(again.loopback.port(), port);
        assert_eq!(query(&again.url, "client_id"), "client-1");
        // While it listens there, a third sign-in registers a second client on another port.
        let third = begin(&*fake, &store, &server, &Client::default(), None).unwrap();
        assert_eq!(registrations.load(Ordering::SeqCst), 2);
        assert_ne!(third.loopback.port(), port);
    }

    #[test]
    fn a_configured_client_is_not_registered() {
        let (fake, registrations) = peers(|_| json(200, json!({"access_token": "a"})));
        let store = crate::auth::store::tests::scratch("configured");
        let server = Url::parse("https://mcp.example.com/mcp").unwrap();
        let client = Client {
            client_id: Some("mine".into()),
            client_secret: Some("s3cr3t-value".into()),
            scopes: vec!["x".into(), "y".into()],
            callback_port: None,
        };
        let challenge = Bearer {
            scope: Some("from-challenge".into()),
            ..Bearer::default()
        };
        let begun = begin(&*fake, &store, &server, &client, Some(&challenge)).unwrap();
        assert_eq!(registrations.load(Ordering::SeqCst), 0);
        assert_eq!(query(&begun.url, "client_id"), "mine");
        assert_eq!(query(&begun.url, "scope"), "x y");
        let (path, tokens) = begun.finish(&*fake, &store, "c").unwrap();
        assert!(!tokens.registered);
        let written = std::fs::read_to_string(path).unwrap();
        assert!(
            !written.contains("s3cr3t"),
            "a configured secret stays in the config"
        );
        assert!(fake.to("/token")[0]
            .header("Authorization")
            .unwrap()
            .starts_with("Basic "));
    }

    #[test]
    fn a_refused_code_stores_nothing() {
        let (fake, _) = peers(|_| json(400, json!({"error": "invalid_grant"})));
        let store = crate::auth::store::tests::scratch("refused-code");
        let server = Url::parse("https://mcp.example.com/mcp").unwrap();
        let begun = begin(&*fake, &store, &server, &Client::default(), None).unwrap();
        let error = begun.finish(&*fake, &store, "c").unwrap_err();
        assert!(error.contains("invalid_grant"), "{error}");
        assert!(store.find(&server, None).is_empty());
    }
}
