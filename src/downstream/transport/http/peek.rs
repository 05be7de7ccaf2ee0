//! What a remote transport reads of a JSON-RPC message without taking it
//! apart: an outgoing line's method, id, name (or URI), the request a
//! cancellation names, and the modern era's version in its `_meta`; an
//! incoming message's id and whether it is a response; an initialize
//! result's version. From these come the HTTP headers a message needs
//! (`Mcp-Method`, `Mcp-Name` for the 2026-07-28 transport). Everything the
//! transport does not need (a call's arguments) is skipped unread. No IO.

use crate::net::base64;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// What an outgoing line says.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Outgoing {
    pub method: Option<String>,
    /// The request's id (the workbench's are integers); `None` for a
    /// notification or a response.
    pub id: Option<i64>,
    /// Whether the line is a request (has a method and an id).
    pub is_request: bool,
    /// `params.name` (tools/call, prompts/get) or `params.uri` (resources/read).
    pub name: Option<String>,
    /// `params.requestId` of a `notifications/cancelled`.
    pub cancels: Option<i64>,
    /// `params._meta`'s modern protocol version: the line is in the modern era.
    pub modern: Option<String>,
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    params: Option<Params<'a>>,
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    uri: Option<Cow<'a, str>>,
    #[serde(rename = "requestId", default)]
    request_id: Option<serde_json::Value>,
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<Meta<'a>>,
}

#[derive(Deserialize)]
struct Meta<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow, default)]
    version: Option<Cow<'a, str>>,
}

impl Outgoing {
    /// Reads `line` (one JSON-RPC message, with or without its newline);
    /// what does not parse reads as empty.
    pub(super) fn of(line: &[u8]) -> Outgoing {
        let Ok(parsed) = serde_json::from_slice::<Line<'_>>(line) else {
            return Outgoing::default();
        };
        let id = parsed.id.and_then(|id| id.get().parse::<i64>().ok());
        let params = parsed.params;
        let wanted = |p: &Params<'_>| match parsed.method.as_deref() {
            Some("resources/read") => p.uri.as_deref().map(str::to_string),
            Some("tools/call" | "prompts/get") => p.name.as_deref().map(str::to_string),
            _ => None,
        };
        Outgoing {
            is_request: parsed.method.is_some() && parsed.id.is_some(),
            method: parsed.method.as_deref().map(str::to_string),
            id,
            name: params.as_ref().and_then(wanted),
            cancels: params
                .as_ref()
                .and_then(|p| p.request_id.as_ref())
                .and_then(serde_json::Value::as_i64),
            modern: params
                .and_then(|p| p.meta)
                .and_then(|m| m.version)
                .map(Cow::into_owned),
        }
    }

    /// The headers the 2026-07-28 Streamable HTTP transport requires of a
    /// modern request (basic/transports/streamable-http, "Request
    /// Metadata"): `MCP-Protocol-Version` equal to the `_meta` version,
    /// `Mcp-Method`, and `Mcp-Name` for tools/call, resources/read and
    /// prompts/get, Base64 in its sentinel form when it is not a plain ASCII
    /// header value. Empty for a legacy message.
    pub(super) fn modern_headers(&self) -> Vec<(&'static str, String)> {
        let (Some(version), Some(method)) = (&self.modern, &self.method) else {
            return Vec::new();
        };
        let mut headers = vec![
            ("MCP-Protocol-Version", version.clone()),
            ("Mcp-Method", method.clone()),
        ];
        if let Some(name) = &self.name {
            headers.push(("Mcp-Name", header_value(name)));
        }
        headers
    }
}

/// `value` as a header value: as it is when it is plain visible ASCII
/// without surrounding spaces, else `=?base64?...?=` (also for a value that
/// looks like that form itself).
pub(super) fn header_value(value: &str) -> String {
    let plain = value
        .bytes()
        .all(|b| b == b' ' || b == b'\t' || (0x21..=0x7e).contains(&b))
        && value.trim() == value
        && !(value.starts_with("=?base64?") && value.ends_with("?="));
    if plain {
        value.to_string()
    } else {
        format!("=?base64?{}?=", base64::standard(value.as_bytes()))
    }
}

/// What an incoming message is, for a transport waiting for one response.
#[derive(Deserialize)]
struct Incoming<'a> {
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

/// The id of the response `message` is, if it is a JSON-RPC response (with
/// an integer id); `Err` when it is not JSON-RPC at all.
pub(super) fn response_id(message: &[u8]) -> Result<Option<i64>, ()> {
    let incoming: Incoming<'_> = serde_json::from_slice(message).map_err(|_| ())?;
    if incoming.method.is_some() || (incoming.result.is_none() && incoming.error.is_none()) {
        return Ok(None);
    }
    Ok(incoming.id.and_then(|id| id.get().parse::<i64>().ok()))
}

/// The `protocolVersion` of an initialize result (a whole response).
pub(super) fn initialized_version(response: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Response {
        result: Option<Result>,
    }
    #[derive(Deserialize)]
    struct Result {
        #[serde(rename = "protocolVersion")]
        protocol_version: Option<String>,
    }
    serde_json::from_slice::<Response>(response)
        .ok()?
        .result?
        .protocol_version
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_call_line_gives_its_method_id_name_and_era() {
        let line = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_weather","arguments":{"big":[1,2,3]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        let o = Outgoing::of(line);
        assert_eq!(o.method.as_deref(), Some("tools/call"));
        assert_eq!((o.id, o.is_request), (Some(7), true));
        assert_eq!(o.name.as_deref(), Some("get_weather"));
        assert_eq!(o.modern.as_deref(), Some("2026-07-28"));
        assert_eq!(
            o.modern_headers(),
            [
                ("MCP-Protocol-Version", "2026-07-28".to_string()),
                ("Mcp-Method", "tools/call".to_string()),
                ("Mcp-Name", "get_weather".to_string())
            ]
        );
        let legacy = Outgoing::of(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#,
        );
        assert!(legacy.modern_headers().is_empty());
        let read = Outgoing::of(br#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///a b","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#);
        assert_eq!(read.name.as_deref(), Some("file:///a b"));
    }

    #[test]
    fn a_cancellation_names_its_request_and_a_notification_has_no_id() {
        let o = Outgoing::of(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12,"reason":"x"}}"#);
        assert_eq!((o.cancels, o.id, o.is_request), (Some(12), None, false));
        assert_eq!(Outgoing::of(b"not json"), Outgoing::default());
    }

    #[test]
    fn header_values_that_are_not_plain_ascii_go_as_base64() {
        assert_eq!(header_value("us-west1"), "us-west1");
        assert_eq!(
            header_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(header_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            header_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
    }

    #[test]
    fn responses_are_told_from_requests_and_notifications() {
        assert_eq!(
            response_id(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#),
            Ok(Some(3))
        );
        assert_eq!(
            response_id(br#"{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"m"}}"#),
            Ok(Some(3))
        );
        assert_eq!(
            response_id(br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#),
            Ok(None)
        );
        assert_eq!(
            response_id(br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#),
            Ok(None)
        );
        assert_eq!(response_id(b"<html>"), Err(()));
        assert_eq!(
            initialized_version(br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{}}}"#).as_deref(),
            Some("2025-06-18")
        );
    }
}
