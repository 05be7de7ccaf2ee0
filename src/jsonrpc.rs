//! JSON-RPC 2.0 values as MCP profiles them: request ids, the classification of an
//! incoming message, error codes, and the builders of outgoing lines.
//!
//! No IO happens here. Outgoing messages are built as complete lines (`\n` included)
//! so that a writer can hand each one to the kernel with a single `write_all`.
//! Results forwarded from a downstream server are spliced in as raw bytes and are
//! never re-serialised, which keeps their key order and number formatting exact.

use serde::ser::{Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::fmt;

/// Invalid JSON was received (JSON-RPC 2.0 §5.1).
pub const PARSE_ERROR: i64 = -32700;
/// The JSON is not a valid Request object.
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist or is not available.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters.
pub const INVALID_PARAMS: i64 = -32602;
/// Internal JSON-RPC error.
pub const INTERNAL_ERROR: i64 = -32603;

/// A request id: a string or an integer, never null (MCP 2025-11-25, basic, "Requests").
/// `1` and `"1"` are different ids; `0` and negative numbers are valid. A string
/// id keeps its JSON text, escapes included, so it is echoed byte for byte.
#[derive(Clone, Debug)]
pub enum RequestId {
    Int(i64),
    /// Only for integers above `i64::MAX`.
    UInt(u64),
    /// The JSON text of the string, quotes included.
    Str(Box<RawValue>),
}

impl PartialEq for RequestId {
    fn eq(&self, other: &RequestId) -> bool {
        match (self, other) {
            (RequestId::Int(a), RequestId::Int(b)) => a == b,
            (RequestId::UInt(a), RequestId::UInt(b)) => a == b,
            (RequestId::Str(a), RequestId::Str(b)) => a.get() == b.get() || decode(a) == decode(b),
            _ => false,
        }
    }
}

impl Eq for RequestId {}

impl std::hash::Hash for RequestId {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match self {
            RequestId::Int(i) => i.hash(state),
            RequestId::UInt(u) => u.hash(state),
            RequestId::Str(s) => decode(s).hash(state),
        }
    }
}

/// The string a string id stands for (`"\u00e9"` and `"é"` are the same id).
fn decode(raw: &RawValue) -> Option<String> {
    serde_json::from_str(raw.get()).ok()
}

impl RequestId {
    /// Reads an id from JSON; `None` for null, fractions, booleans and the rest.
    pub fn from_json(value: &Value) -> Option<RequestId> {
        match value {
            Value::String(s) => serde_json::value::to_raw_value(s).ok().map(RequestId::Str),
            Value::Number(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => Some(RequestId::Int(i)),
                (None, Some(u)) => Some(RequestId::UInt(u)),
                _ => None,
            },
            _ => None,
        }
    }

    /// Reads an id from its JSON text; a string keeps that text, escapes
    /// included, so it is echoed byte for byte.
    pub fn from_raw(raw: &RawValue) -> Option<RequestId> {
        if raw.get().starts_with('"') {
            return Some(RequestId::Str(raw.to_owned()));
        }
        RequestId::from_json(&serde_json::from_str(raw.get()).ok()?)
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Int(i) => s.serialize_i64(*i),
            RequestId::UInt(u) => s.serialize_u64(*u),
            RequestId::Str(v) => v.serialize(s),
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Int(i) => write!(f, "{i}"),
            RequestId::UInt(u) => write!(f, "{u}"),
            RequestId::Str(v) => f.write_str(v.get()),
        }
    }
}

/// A JSON-RPC error object.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorObject {
    pub code: i64,
    pub message: String,
}

impl ErrorObject {
    pub fn new(code: i64, message: impl Into<String>) -> ErrorObject {
        ErrorObject {
            code,
            message: message.into(),
        }
    }

    /// `-32600 Invalid Request: <reason>`.
    pub fn invalid_request(reason: &str) -> ErrorObject {
        ErrorObject::new(INVALID_REQUEST, format!("Invalid Request: {reason}"))
    }
}

/// One message received from the host, classified.
#[derive(Debug)]
pub enum Incoming<'a> {
    Request {
        id: RequestId,
        method: String,
        params: Option<Map<String, Value>>,
        /// The params as the host wrote them, when the line could be read that
        /// way (tool arguments are forwarded from these bytes).
        raw_params: Option<&'a RawValue>,
    },
    Notification {
        method: String,
        params: Option<Map<String, Value>>,
    },
    /// A response to a request we sent (the workbench sends none upstream yet).
    Response { id: Option<RequestId> },
    /// Not a valid message: answer `-32600`, echoing the id when it could be read.
    Invalid {
        id: Option<RequestId>,
        reason: String,
    },
}

/// What one line from the host holds.
pub enum Read<'a> {
    One(Incoming<'a>),
    /// A JSON array (a batch): its elements as the host wrote them.
    Batch(Vec<&'a RawValue>),
}

/// Reads and classifies one line (JSON-RPC 2.0 §4; MCP 2025-11-25, basic, "Messages").
/// The error is the parser's, for a `-32700`.
///
/// An object is read in one pass into borrowed pieces (`Envelope`), so ids and
/// params keep the host's bytes; anything else (arrays, duplicate keys, other
/// JSON) is read as a `Value`, which also gives the parser's exact errors.
pub fn read(line: &[u8]) -> Result<Read<'_>, serde_json::Error> {
    match line.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') if plain(line) => {
            if let Some(incoming) = Envelope::read(line) {
                return Ok(Read::One(incoming));
            }
        }
        Some(b'[') => {
            if let Ok(items) = serde_json::from_slice(line) {
                return Ok(Read::Batch(items));
            }
        }
        _ => {}
    }
    let value: Value = serde_json::from_slice(line)?;
    Ok(Read::One(classify(value)))
}

/// Whether the borrowed read of `line` may stand in for a full parse: it is
/// UTF-8 and nests less deep than serde_json's limit (it fails at 128 levels;
/// a test pins the boundary). The borrowed read
/// skips unknown members without checking either, and a full parse must
/// answer such lines exactly as before (`-32700`).
fn plain(line: &[u8]) -> bool {
    const MAX_DEPTH: usize = 127;
    if std::str::from_utf8(line).is_err() {
        return false;
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in line {
        match (in_string, b) {
            (true, _) if escaped => escaped = false,
            (true, b'\\') => escaped = true,
            (true, b'"') => in_string = false,
            (true, _) => {}
            (false, b'"') => in_string = true,
            (false, b'[' | b'{') => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return false;
                }
            }
            (false, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    true
}

/// Classifies one parsed JSON value.
pub fn classify(value: Value) -> Incoming<'static> {
    let Value::Object(mut obj) = value else {
        return Incoming::invalid(None, "a message must be a JSON object");
    };
    let method = obj.remove("method");
    Fields {
        jsonrpc_ok: obj.get("jsonrpc").and_then(Value::as_str) == Some("2.0"),
        id: obj.remove("id").map(|id| RequestId::from_json(&id)),
        method: method.map(|m| match m {
            Value::String(m) => Some(m),
            _ => None,
        }),
        params: obj.remove("params").map(|p| match p {
            Value::Object(p) => Some(p),
            _ => None,
        }),
        raw_params: None,
        is_response: obj.contains_key("result") || obj.contains_key("error"),
    }
    .classify()
}

/// The members of a message object as they bear on classification, however
/// the object was read. An outer `Some` means the member was present.
struct Fields<'a> {
    jsonrpc_ok: bool,
    id: Option<Option<RequestId>>,
    method: Option<Option<String>>,
    params: Option<Option<Map<String, Value>>>,
    raw_params: Option<&'a RawValue>,
    is_response: bool,
}

impl<'a> Fields<'a> {
    fn classify(self) -> Incoming<'a> {
        let id = self.id.clone().flatten();
        if !self.jsonrpc_ok {
            return Incoming::invalid(id, "\"jsonrpc\" must be \"2.0\"");
        }
        let params = match self.params {
            None => None,
            Some(Some(p)) => Some(p),
            Some(None) => return Incoming::invalid(id, "\"params\" must be an object"),
        };
        match self.method {
            Some(Some(method)) => match self.id {
                None => Incoming::Notification { method, params },
                Some(Some(id)) => Incoming::Request {
                    id,
                    method,
                    params,
                    raw_params: self.raw_params,
                },
                Some(None) => Incoming::invalid(None, "\"id\" must be a string or an integer"),
            },
            Some(None) => Incoming::invalid(id, "\"method\" must be a string"),
            None if self.is_response => Incoming::Response { id },
            None => Incoming::invalid(id, "\"method\" is missing"),
        }
    }
}

/// A message object read in one pass, each member kept as the host's bytes.
#[derive(serde::Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// A member that is present, even as `null` (plain `Option` reads `null` as absent).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue as serde::Deserialize>::deserialize(d).map(Some)
}

impl<'a> Envelope<'a> {
    /// `None` when the line is not one plain object (the caller then reads it
    /// as a `Value`).
    fn read(line: &'a [u8]) -> Option<Incoming<'a>> {
        let envelope: Envelope = serde_json::from_slice(line).ok()?;
        let string = |raw: &RawValue| serde_json::from_str::<String>(raw.get()).ok();
        let params = match envelope.params {
            None => None,
            Some(raw) if raw.get().starts_with('{') => {
                Some(Some(serde_json::from_str(raw.get()).ok()?))
            }
            Some(_) => Some(None),
        };
        Some(
            Fields {
                jsonrpc_ok: envelope.jsonrpc.and_then(string).as_deref() == Some("2.0"),
                id: envelope.id.map(RequestId::from_raw),
                method: envelope.method.map(string),
                params,
                raw_params: envelope.params,
                is_response: envelope.result.is_some() || envelope.error.is_some(),
            }
            .classify(),
        )
    }
}

impl Incoming<'_> {
    pub fn invalid(id: Option<RequestId>, reason: &str) -> Self {
        Incoming::Invalid {
            id,
            reason: reason.to_string(),
        }
    }
}

#[derive(serde::Serialize)]
struct ResultLine<'a, R: Serialize + ?Sized> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: &'a R,
}

#[derive(serde::Serialize)]
struct ErrorLine<'a> {
    jsonrpc: &'static str,
    id: Option<&'a RequestId>,
    error: ErrorBody<'a>,
}

#[derive(serde::Serialize)]
struct ErrorBody<'a> {
    code: i64,
    message: &'a str,
}

#[derive(serde::Serialize)]
struct RequestLine<'a, P: Serialize + ?Sized> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    method: &'a str,
    params: &'a P,
}

#[derive(serde::Serialize)]
struct NotificationLine<'a, P: Serialize + ?Sized> {
    jsonrpc: &'static str,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a P>,
}

fn to_line<T: Serialize>(msg: &T) -> Vec<u8> {
    let mut line = serde_json::to_vec(msg).expect("messages serialise: keys are strings");
    line.push(b'\n');
    line
}

/// `{"jsonrpc":"2.0","id":..,"result":..}\n`
pub fn result_line<R: Serialize + ?Sized>(id: &RequestId, result: &R) -> Vec<u8> {
    to_line(&ResultLine {
        jsonrpc: "2.0",
        id,
        result,
    })
}

/// A result line around raw bytes received from elsewhere, copied verbatim.
pub fn raw_result_line(id: &RequestId, result: &RawValue) -> Vec<u8> {
    let (head, tail) = raw_result_parts(id);
    [head.as_slice(), result.get().as_bytes(), tail].concat()
}

/// The bytes before and after the result of a result line, so that a large
/// forwarded result can be written around without being copied into a line.
pub fn raw_result_parts(id: &RequestId) -> (Vec<u8>, &'static [u8]) {
    let mut head = b"{\"jsonrpc\":\"2.0\",\"id\":".to_vec();
    serde_json::to_writer(&mut head, id).expect("ids serialise");
    head.extend_from_slice(b",\"result\":");
    (head, b"}\n")
}

/// `{"jsonrpc":"2.0","id":..|null,"error":{"code":..,"message":..}}\n`
pub fn error_line(id: Option<&RequestId>, error: &ErrorObject) -> Vec<u8> {
    to_line(&ErrorLine {
        jsonrpc: "2.0",
        id,
        error: ErrorBody {
            code: error.code,
            message: &error.message,
        },
    })
}

/// `{"jsonrpc":"2.0","id":..,"method":..,"params":..}\n`
pub fn request_line<P: Serialize + ?Sized>(id: &RequestId, method: &str, params: &P) -> Vec<u8> {
    to_line(&RequestLine {
        jsonrpc: "2.0",
        id,
        method,
        params,
    })
}

/// `{"jsonrpc":"2.0","method":..,"params"?:..}\n`
pub fn notification_line<P: Serialize + ?Sized>(method: &str, params: Option<&P>) -> Vec<u8> {
    to_line(&NotificationLine {
        jsonrpc: "2.0",
        method,
        params,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_keep_their_type() {
        assert_eq!(RequestId::from_json(&json!(0)), Some(RequestId::Int(0)));
        assert_eq!(RequestId::from_json(&json!(-7)), Some(RequestId::Int(-7)));
        let one = RequestId::from_json(&json!("1")).unwrap();
        assert_eq!(one.to_string(), "\"1\"");
        assert_ne!(RequestId::Int(1), one);
        let escaped = RequestId::from_json(&json!("é")).unwrap();
        let Ok(Read::One(Incoming::Request { id: exact, .. })) =
            read(br#"{"jsonrpc":"2.0","id":"\u00e9","method":"ping"}"#)
        else {
            panic!("a request")
        };
        assert_eq!(serde_json::to_string(&exact).unwrap(), r#""\u00e9""#);
        assert_eq!(exact, escaped, "the same id, however it is written");
        assert_eq!(RequestId::from_json(&json!(1.5)), None);
        assert_eq!(RequestId::from_json(&json!(null)), None);
        assert_eq!(RequestId::from_json(&json!(true)), None);
        let big = RequestId::from_json(&json!(u64::MAX)).unwrap();
        assert_eq!(serde_json::to_string(&big).unwrap(), u64::MAX.to_string());
    }

    #[test]
    fn classification() {
        let req = classify(json!({"jsonrpc":"2.0","id":"a","method":"ping"}));
        assert!(matches!(
            req,
            Incoming::Request {
                id: RequestId::Str(_),
                ..
            }
        ));
        let note = classify(json!({"jsonrpc":"2.0","method":"x"}));
        assert!(matches!(note, Incoming::Notification { .. }));
        let null_id = classify(json!({"jsonrpc":"2.0","id":null,"method":"ping"}));
        assert!(matches!(null_id, Incoming::Invalid { id: None, .. }));
        let bad_params = classify(json!({"jsonrpc":"2.0","id":3,"method":"ping","params":[1]}));
        assert!(matches!(
            bad_params,
            Incoming::Invalid {
                id: Some(RequestId::Int(3)),
                ..
            }
        ));
        let no_version = classify(json!({"id":1,"method":"ping"}));
        assert!(matches!(no_version, Incoming::Invalid { .. }));
        let response = classify(json!({"jsonrpc":"2.0","id":1,"result":{}}));
        assert!(matches!(response, Incoming::Response { .. }));
        assert!(matches!(classify(json!([])), Incoming::Invalid { .. }));
    }

    #[test]
    fn the_borrowed_read_answers_like_a_full_parse() {
        let outcome = |line: &[u8]| match read(line) {
            Err(_) => "parse error".to_string(),
            Ok(Read::One(incoming)) => format!("{incoming:?}"),
            Ok(Read::Batch(items)) => format!("batch of {}", items.len()),
        };
        let full = |line: &[u8]| match serde_json::from_slice::<Value>(line) {
            Err(_) => "parse error".to_string(),
            Ok(value) => format!("{:?}", classify(value)),
        };
        let mut lines: Vec<Vec<u8>> = (120..135)
            .map(|depth| {
                let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
                format!(r#"{{"jsonrpc":"2.0","method":"ping","x":{nested}}}"#).into_bytes()
            })
            .collect();
        lines.push(b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"x\":\"\xff\"}".to_vec());
        lines.push(br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#.to_vec());
        lines.push(br#"{"jsonrpc":"2\u002e0","id":null,"method":"ping"}"#.to_vec());
        lines.push(br#"{"jsonrpc":"2.0","id":[1],"method":"ping","params":null}"#.to_vec());
        for line in &lines {
            assert_eq!(
                outcome(line),
                full(line),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn lines_are_compact_and_terminated() {
        let raw = RawValue::from_string(r#"{"z":1,"a":[2.50]}"#.into()).unwrap();
        let line = raw_result_line(&RequestId::Int(-1), &raw);
        assert_eq!(
            line,
            b"{\"jsonrpc\":\"2.0\",\"id\":-1,\"result\":{\"z\":1,\"a\":[2.50]}}\n"
        );
        let err = error_line(None, &ErrorObject::new(PARSE_ERROR, "Parse error"));
        assert_eq!(
            err,
            b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}\n"
        );
    }
}
