//! The token endpoint's answers (RFC 6749 §5.1, §5.2): a token response,
//! or an error response; and the arithmetic of expiry: when a token counts
//! as expired, and when it is refreshed ahead of that.
//!
//! The parse functions are pure and total over any bytes (the fuzz target
//! calls them); their errors never quote the body, which holds tokens. No IO.

use serde_json::Value;

/// A successful token response.
#[derive(Clone, PartialEq, Eq)]
pub struct TokenResponse {
    pub access_token: String,
    /// Seconds from now; `None`: not said.
    pub expires_in: Option<u64>,
    pub refresh_token: Option<String>,
    /// The scopes granted, space-separated, when the server says.
    pub scope: Option<String>,
}

/// Never shows a token (a `{:?}` in a log must not leak one).
impl std::fmt::Debug for TokenResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenResponse")
            .field("expires_in", &self.expires_in)
            .field("refresh_token", &self.refresh_token.is_some())
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

/// An error response: `invalid_grant`, `invalid_client`, ...
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenError {
    pub error: String,
    pub description: Option<String>,
}

impl std::fmt::Display for TokenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.description {
            Some(text) => write!(f, "{} ({})", clip(&self.error), clip(text)),
            None => write!(f, "{}", clip(&self.error)),
        }
    }
}

/// The longest a lifetime is taken to be: ten years (a larger `expires_in`
/// is as good as forever, and must not overflow).
const LONGEST: u64 = 10 * 365 * 24 * 3600;

/// Reads a successful token response. Only `Bearer` tokens are used (any
/// case, RFC 6749 §5.1; a response without `token_type` is taken as one).
pub fn token_response(body: &[u8]) -> Result<TokenResponse, String> {
    let doc = match serde_json::from_slice(body) {
        Ok(Value::Object(map)) => map,
        Ok(_) => return Err("the token response is not a JSON object".to_string()),
        Err(e) => return Err(format!("the token response is not JSON ({e})")),
    };
    let text = |key: &str| match doc.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
        Some(_) => Err(format!(
            "the token response's {key} is not a non-empty string"
        )),
    };
    let access_token = text("access_token")?
        .ok_or_else(|| "the token response has no access_token".to_string())?;
    if let Some(kind) = text("token_type")? {
        if !kind.eq_ignore_ascii_case("bearer") {
            return Err(format!(
                "the token response's token_type is '{}', not Bearer",
                clip(&kind)
            ));
        }
    }
    let expires_in = match doc.get("expires_in") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => n.as_u64().or_else(|| n.as_f64().map(|f| f.max(0.0) as u64)),
        Some(Value::String(s)) => s.trim().parse::<u64>().ok(),
        Some(_) => None,
    }
    .map(|s| s.min(LONGEST));
    Ok(TokenResponse {
        access_token,
        expires_in,
        refresh_token: text("refresh_token")?,
        scope: text("scope")?,
    })
}

/// Reads an error response, if the body is one.
pub fn token_error(body: &[u8]) -> Option<TokenError> {
    let doc: Value = serde_json::from_slice(body).ok()?;
    let error = doc.get("error")?.as_str()?.to_string();
    let description = doc
        .get("error_description")
        .and_then(Value::as_str)
        .map(str::to_string);
    Some(TokenError { error, description })
}

/// At most 200 characters of a server's text, for a message.
fn clip(text: &str) -> String {
    crate::net::text::shown(text, 200)
}

/// When a token obtained at `obtained` (Unix seconds) that expires at
/// `expires` is refreshed ahead of its expiry: when less than a tenth of its
/// lifetime or a minute is left, whichever is less. A token of an hour is
/// refreshed a minute ahead, one of five minutes thirty seconds ahead, one
/// of ten seconds one second ahead.
pub(crate) fn refresh_at(obtained: u64, expires: u64) -> u64 {
    let lifetime = expires.saturating_sub(obtained);
    expires.saturating_sub((lifetime / 10).min(60))
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_error_is_shown_escaped() {
        let e = token_error(
            b"{\"error\":\"invalid_grant\\u001b[31m\",\"error_description\":\"bad\\r\\nX\\u0007\"}",
        )
        .unwrap();
        assert_eq!(e.to_string(), "invalid_grant\\x1b[31m (bad X\\x07)");
    }

    use super::*;

    #[test]
    fn token_responses_of_every_usual_shape() {
        let full = token_response(
            br#"{"access_token":"a","token_type":"Bearer","expires_in":3600,"refresh_token":"r","scope":"x y"}"#,
        )
        .unwrap();
        assert_eq!(full.access_token, "a");
        assert_eq!(full.expires_in, Some(3600));
        assert_eq!(full.refresh_token.as_deref(), Some("r"));
        assert_eq!(full.scope.as_deref(), Some("x y"));
        let lower =
            token_response(br#"{"access_token":"a","token_type":"bearer","expires_in":"60"}"#)
                .unwrap();
        assert_eq!(lower.expires_in, Some(60));
        assert_eq!(lower.refresh_token, None);
        let bare = token_response(br#"{"access_token":"a","expires_in":1e99}"#).unwrap();
        assert_eq!(bare.expires_in, Some(LONGEST));
        let odd = token_response(br#"{"access_token":"a","expires_in":-5,"refresh_token":null}"#)
            .unwrap();
        assert_eq!(odd.expires_in, Some(0));
        for (bad, why) in [
            (&b"{}"[..], "no access_token"),
            (br#"{"access_token":"a","token_type":"mac"}"#, "not Bearer"),
            (br#"{"access_token":7}"#, "not a non-empty string"),
            (b"[]", "not a JSON object"),
            (b"access_token=a", "not JSON"),
        ] {
            let error = token_response(bad).unwrap_err();
            assert!(error.contains(why), "{error}");
        }
        let secret = format!("{:?}", full);
        assert!(
            !secret.contains("\"a\"") && !secret.contains("\"r\""),
            "{secret}"
        );
    }

    #[test]
    fn error_responses() {
        let e =
            token_error(br#"{"error":"invalid_grant","error_description":"refresh token reused"}"#)
                .unwrap();
        assert_eq!(e.error, "invalid_grant");
        assert_eq!(e.to_string(), "invalid_grant (refresh token reused)");
        assert!(token_error(b"<html>").is_none());
        assert!(token_error(br#"{"error":1}"#).is_none());
    }

    #[test]
    fn refresh_ahead_of_expiry_by_the_smaller_margin() {
        assert_eq!(refresh_at(1000, 1000 + 3600), 1000 + 3600 - 60);
        assert_eq!(refresh_at(1000, 1000 + 300), 1000 + 300 - 30);
        assert_eq!(refresh_at(1000, 1000 + 10), 1000 + 10 - 1);
        assert_eq!(refresh_at(1000, 1000), 1000);
        assert_eq!(refresh_at(2000, 1000), 1000);
    }
}
