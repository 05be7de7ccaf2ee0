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

/// A request id: a string or an integer, never null (MCP basic/index §Requests).
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

    /// For a string id, the exact text `line` gave it (a parsed string loses
    /// its escapes: `"\u00e9"` would come back as `"é"`).
    pub fn exact_from(self, line: &[u8]) -> RequestId {
        #[derive(serde::Deserialize)]
        struct Envelope<'a> {
            #[serde(borrow)]
            id: Option<&'a RawValue>,
        }
        match self {
            RequestId::Str(_) => match serde_json::from_slice::<Envelope>(line) {
                Ok(Envelope { id: Some(raw) }) if raw.get().starts_with('"') => {
                    RequestId::Str(raw.to_owned())
                }
                _ => self,
            },
            other => other,
        }
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
}

/// One message received from the host, classified.
#[derive(Debug)]
pub enum Incoming {
    Request {
        id: RequestId,
        method: String,
        params: Option<Map<String, Value>>,
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

/// Classifies one parsed JSON value (JSON-RPC 2.0 §4, MCP basic/index §Messages).
pub fn classify(value: Value) -> Incoming {
    let Value::Object(mut obj) = value else {
        return invalid(None, "a message must be a JSON object");
    };
    let id_value = obj.remove("id");
    let id = id_value.as_ref().and_then(RequestId::from_json);
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid(id, "\"jsonrpc\" must be \"2.0\"");
    }
    let params = match obj.remove("params") {
        None => None,
        Some(Value::Object(p)) => Some(p),
        Some(_) => return invalid(id, "\"params\" must be an object"),
    };
    match obj.remove("method") {
        Some(Value::String(method)) => match (id_value, id) {
            (None, _) => Incoming::Notification { method, params },
            (Some(_), Some(id)) => Incoming::Request { id, method, params },
            (Some(_), None) => invalid(None, "\"id\" must be a string or an integer"),
        },
        Some(_) => invalid(id, "\"method\" must be a string"),
        None if obj.contains_key("result") || obj.contains_key("error") => {
            Incoming::Response { id }
        }
        None => invalid(id, "\"method\" is missing"),
    }
}

fn invalid(id: Option<RequestId>, reason: &str) -> Incoming {
    Incoming::Invalid {
        id,
        reason: reason.to_string(),
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
        let exact = escaped
            .clone()
            .exact_from(br#"{"jsonrpc":"2.0","id":"\u00e9","method":"ping"}"#);
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
