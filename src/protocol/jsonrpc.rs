//! JSON-RPC 2.0 values as MCP profiles them: request ids, the classification of an
//! incoming message, error codes, and the builders of outgoing lines.
//!
//! No IO happens here. Outgoing messages are built as complete lines (`\n` included)
//! so that a writer can hand each one to the kernel with a single `write_all`.
//! Results forwarded from a downstream server are spliced in as raw bytes and are
//! never re-serialised, which keeps their key order and number formatting exact.

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

/// Invalid JSON was received (JSON-RPC 2.0 §5.1).
pub(crate) const PARSE_ERROR: i64 = -32700;
/// The JSON is not a valid Request object.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// The method does not exist or is not available.
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters.
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// Internal JSON-RPC error.
pub(crate) const INTERNAL_ERROR: i64 = -32603;

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
    /// `data`, as compact JSON text, when a child sent one (JSON-RPC 2.0
    /// §5.1: "additional information about the error"; for example the
    /// versions a server supports, with `-32022`).
    pub data: Option<String>,
}

impl ErrorObject {
    /// A peer's `error` member, read leniently: a missing code or message
    /// reads as 0 or empty, `data` is kept as compact JSON text.
    pub fn from_raw(raw: &RawValue) -> ErrorObject {
        #[derive(serde::Deserialize)]
        struct Wire {
            #[serde(default)]
            code: i64,
            #[serde(default)]
            message: String,
            #[serde(default)]
            data: Option<Box<RawValue>>,
        }
        match serde_json::from_str::<Wire>(raw.get()) {
            Ok(wire) => ErrorObject {
                code: wire.code,
                message: wire.message,
                data: wire.data.map(|data| compact(data.get())),
            },
            Err(_) => ErrorObject::new(INTERNAL_ERROR, "an error that is not an error object"),
        }
    }

    pub fn new(code: i64, message: impl Into<String>) -> ErrorObject {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The message, followed by the data when there is some: `message (data: {...})`.
    pub fn text(&self) -> String {
        match &self.data {
            Some(data) => format!("{} (data: {data})", self.message),
            None => self.message.clone(),
        }
    }

    /// `-32600 Invalid Request: <reason>`.
    pub fn invalid_request(reason: &str) -> ErrorObject {
        ErrorObject::new(INVALID_REQUEST, format!("Invalid Request: {reason}"))
    }
}

/// One message received from the host, classified. Its params are an object
/// kept as JSON text: the host's own bytes, or, for a line only a full parse
/// could read, that parse re-serialised. Each handler reads only the members it
/// needs (`Members`), so tool arguments are never built into a tree.
#[derive(Debug)]
pub enum Incoming<'a> {
    Request {
        id: RequestId,
        method: Cow<'a, str>,
        params: Option<Cow<'a, RawValue>>,
    },
    Notification {
        method: Cow<'a, str>,
        params: Option<Cow<'a, RawValue>>,
    },
    /// A response to a request we sent: a child's answer (the workbench sends
    /// no request upstream yet, so the host's are ignored).
    Response {
        id: Option<RequestId>,
        reply: Reply<'a>,
    },
    /// Not a valid message: answer `-32600`, echoing the id when it could be read.
    Invalid {
        id: Option<RequestId>,
        reason: String,
    },
}

/// A response's `result` (as sent), or its `error`; `result` wins when a
/// response has both.
pub type Reply<'a> = Result<Cow<'a, RawValue>, ErrorObject>;

/// What one line holds.
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
/// The borrowed read skips params and unknown members without recursion, so a
/// valid line nested deeper than the parser's limit still gets its own id.
pub fn read(line: &[u8]) -> Result<Read<'_>, serde_json::Error> {
    read_with(line, true)
}

/// `read` for a line whose members the reader only keeps or drops (a
/// child's): the members kept as raw JSON are checked for UTF-8 by the parser
/// itself, and a member skipped is dropped, so the pass over the whole line
/// that `read` makes first (a 16 MiB result read twice) is left out.
pub(crate) fn read_kept(line: &[u8]) -> Result<Read<'_>, serde_json::Error> {
    read_with(line, false)
}

fn read_with(line: &[u8], check_utf8: bool) -> Result<Read<'_>, serde_json::Error> {
    match line.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') if !check_utf8 || plain(line) => {
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
/// UTF-8. The borrowed read skips params and unknown members without checking
/// their UTF-8 (it checks structure, escapes and control characters), and a
/// full parse answers such lines as before (`-32700`).
fn plain(line: &[u8]) -> bool {
    std::str::from_utf8(line).is_ok()
}

/// Classifies one parsed JSON value.
#[allow(
    clippy::expect_used,
    reason = "a parsed value serialises; a parsed object serialises"
)]
pub(crate) fn classify(value: Value) -> Incoming<'static> {
    let Value::Object(mut obj) = value else {
        return Incoming::invalid(None, "a message must be a JSON object");
    };
    let method = obj.remove("method");
    Fields {
        jsonrpc_ok: obj.get("jsonrpc").and_then(Value::as_str) == Some("2.0"),
        id: obj.remove("id").map(|id| RequestId::from_json(&id)),
        method: method.map(|m| match m {
            Value::String(m) => Some(Cow::Owned(m)),
            _ => None,
        }),
        params: obj.remove("params").map(|p| match p {
            Value::Object(p) => Some(Cow::Owned(
                serde_json::value::to_raw_value(&p).expect("a parsed object serialises"),
            )),
            _ => None,
        }),
        reply: match (obj.remove("result"), obj.remove("error")) {
            (Some(result), _) => Some(Ok(Cow::Owned(
                serde_json::value::to_raw_value(&result).expect("a parsed value serialises"),
            ))),
            (None, Some(error)) => Some(Err(ErrorObject::from_raw(
                &serde_json::value::to_raw_value(&error).expect("a parsed value serialises"),
            ))),
            (None, None) => None,
        },
    }
    .classify()
}

/// The members of a message object as they bear on classification, however
/// the object was read. An outer `Some` means the member was present.
struct Fields<'a> {
    jsonrpc_ok: bool,
    id: Option<Option<RequestId>>,
    method: Option<Option<Cow<'a, str>>>,
    params: Option<Option<Cow<'a, RawValue>>>,
    /// Present in a response.
    reply: Option<Reply<'a>>,
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
                Some(Some(id)) => Incoming::Request { id, method, params },
                Some(None) => Incoming::invalid(None, "\"id\" must be a string or an integer"),
            },
            Some(None) => Incoming::invalid(id, "\"method\" must be a string"),
            None => match self.reply {
                Some(reply) => Incoming::Response { id, reply },
                None => Incoming::invalid(id, "\"method\" is missing"),
            },
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

/// A member that is present, even as `null` (plain `Option` reads `null` as
/// absent); for `#[serde(default, deserialize_with = "present")]`.
pub(crate) fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue as Deserialize>::deserialize(d).map(Some)
}

/// `{}`, for tool arguments that are absent.
#[allow(clippy::expect_used, reason = "{} is JSON")]
pub(crate) fn empty_object() -> &'static RawValue {
    serde_json::from_str("{}").expect("{} is JSON")
}

impl<'a> Envelope<'a> {
    /// `None` when the line is not one plain object (the caller then reads it
    /// as a `Value`).
    fn read(line: &'a [u8]) -> Option<Incoming<'a>> {
        let envelope: Envelope = serde_json::from_slice(line).ok()?;
        // Borrowed where the text has no escapes (always, in practice).
        let text = |raw: &'a RawValue| match serde_json::from_str::<&str>(raw.get()) {
            Ok(text) => Some(Cow::Borrowed(text)),
            Err(_) => string(raw).map(Cow::Owned),
        };
        let params = envelope
            .params
            .map(|raw| raw.get().starts_with('{').then_some(Cow::Borrowed(raw)));
        Some(
            Fields {
                jsonrpc_ok: envelope.jsonrpc.and_then(text).as_deref() == Some("2.0"),
                id: envelope.id.map(RequestId::from_raw),
                method: envelope.method.map(text),
                params,
                reply: match (envelope.result, envelope.error) {
                    (Some(result), _) => Some(Ok(Cow::Borrowed(result))),
                    (None, Some(error)) => Some(Err(ErrorObject::from_raw(error))),
                    (None, None) => None,
                },
            }
            .classify(),
        )
    }
}

/// The members of a JSON object, each kept as its JSON text: reading them
/// builds no values, and skips every member's value without recursion, so an
/// unbounded member (tool arguments) costs neither memory nor stack. When a key
/// is repeated its last value counts, as in a parsed `Map`.
#[derive(Debug, Default)]
pub struct Members<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'a> Members<'a> {
    /// The members of `raw`: an error when it is not an object, or when a key
    /// is not a Rust string (a lone surrogate escape).
    pub fn read(raw: &'a RawValue) -> Result<Members<'a>, serde_json::Error> {
        serde_json::from_str(raw.get())
    }

    /// The value of `key`, if present (`null` included).
    pub fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|&(_, v)| v)
    }

    /// `key`'s value when it is a string (see `string`).
    pub fn string(&self, key: &str) -> Option<String> {
        string(self.get(key)?)
    }

    /// Every member in the order written, repeated keys included.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &'a RawValue)> + '_ {
        self.0.iter().map(|(k, v)| (k.as_ref(), *v))
    }
}

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Object;
        impl<'de> Visitor<'de> for Object {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut members = Vec::new();
                while let Some(Key(key)) = map.next_key()? {
                    members.push((key, map.next_value()?));
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(Object)
    }
}

/// JSON `text` without whitespace outside strings: the same JSON, compact.
pub fn compact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if matches!(c, ' ' | '\t' | '\n' | '\r') {
            continue;
        } else {
            in_string = c == '"';
        }
        out.push(c);
    }
    out
}

/// The string `raw` holds, if it is one. A string with a lone surrogate
/// escape (`"\ud800"`: valid JSON text, but no Rust string) keeps its escapes,
/// so that messages can still quote it.
pub(crate) fn string(raw: &RawValue) -> Option<String> {
    let text = raw.get();
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    Some(serde_json::from_str(text).unwrap_or_else(|_| inner.to_string()))
}

/// An object key, borrowed from the text when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Text;
        impl<'de> Visitor<'de> for Text {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_string())))
            }
        }
        d.deserialize_str(Text)
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

#[allow(clippy::expect_used, reason = "messages serialise: keys are strings")]
fn to_line<T: Serialize>(msg: &T) -> Vec<u8> {
    let mut line = serde_json::to_vec(msg).expect("messages serialise: keys are strings");
    line.push(b'\n');
    line
}

/// `{"jsonrpc":"2.0","id":..,"result":..}\n`
pub(crate) fn result_line<R: Serialize + ?Sized>(id: &RequestId, result: &R) -> Vec<u8> {
    to_line(&ResultLine {
        jsonrpc: "2.0",
        id,
        result,
    })
}

/// A result line around raw bytes received from elsewhere, copied verbatim.
pub(crate) fn raw_result_line(id: &RequestId, result: &RawValue) -> Vec<u8> {
    let (head, tail) = raw_result_parts(id);
    [head.as_slice(), result.get().as_bytes(), tail].concat()
}

/// The bytes before and after the result of a result line, so that a large
/// forwarded result can be written around without being copied into a line.
#[allow(clippy::expect_used, reason = "ids serialise")]
pub(crate) fn raw_result_parts(id: &RequestId) -> (Vec<u8>, &'static [u8]) {
    let mut head = b"{\"jsonrpc\":\"2.0\",\"id\":".to_vec();
    serde_json::to_writer(&mut head, id).expect("ids serialise");
    head.extend_from_slice(b",\"result\":");
    (head, b"}\n")
}

/// `{"jsonrpc":"2.0","id":..|null,"error":{"code":..,"message":..}}\n`
pub(crate) fn error_line(id: Option<&RequestId>, error: &ErrorObject) -> Vec<u8> {
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
pub(crate) fn request_line<P: Serialize + ?Sized>(
    id: &RequestId,
    method: &str,
    params: &P,
) -> Vec<u8> {
    to_line(&RequestLine {
        jsonrpc: "2.0",
        id,
        method,
        params,
    })
}

/// `{"jsonrpc":"2.0","method":..,"params"?:..}\n`
pub(crate) fn notification_line<P: Serialize + ?Sized>(
    method: &str,
    params: Option<&P>,
) -> Vec<u8> {
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
    fn a_kept_read_checks_what_it_keeps() {
        // A result that is not UTF-8 fails (the child's reader repairs it);
        // a member it drops need not be UTF-8.
        assert!(read_kept(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\xff\"}").is_err());
        let dropped = read_kept(b"{\"jsonrpc\":\"2.0\",\"x\":\"\xff\",\"id\":1,\"result\":2}");
        assert!(matches!(
            dropped,
            Ok(Read::One(Incoming::Response { reply: Ok(_), .. }))
        ));
        assert!(read(b"{\"jsonrpc\":\"2.0\",\"x\":\"\xff\",\"id\":1,\"result\":2}").is_err());
    }

    #[test]
    fn a_response_carries_its_result_or_its_error() {
        let reply = |line: &str| match read(line.as_bytes()) {
            Ok(Read::One(Incoming::Response { id, reply })) => {
                (id, reply.map(|r| r.get().to_string()))
            }
            other => panic!("not a response: {:?}", other.map(|_| ())),
        };
        let (id, ok) = reply(r#"{"jsonrpc":"2.0","id":7,"result":{"a": [1, 2]}}"#);
        assert_eq!(id, Some(RequestId::Int(7)));
        assert_eq!(ok.unwrap(), r#"{"a": [1, 2]}"#, "the peer's bytes, as sent");
        let (_, err) = reply(
            r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"no","data":{ "k" : 1 }}}"#,
        );
        assert_eq!(
            err.unwrap_err(),
            ErrorObject {
                code: -32601,
                message: "no".into(),
                data: Some(r#"{"k":1}"#.into())
            }
        );
        let (_, both) = reply(r#"{"jsonrpc":"2.0","id":1,"error":{},"result":null}"#);
        assert_eq!(both.unwrap(), "null", "result wins");
        let (_, odd) = reply(r#"{"jsonrpc":"2.0","id":1,"error":"bad"}"#);
        assert_eq!(odd.unwrap_err().code, INTERNAL_ERROR);
        // A full parse (here: a duplicate key) reads the same reply.
        let (_, full) = reply(r#"{"jsonrpc":"2.0","id":1,"id":2,"result":[1]}"#);
        assert_eq!(full.unwrap(), "[1]");
    }

    #[test]
    fn the_borrowed_read_answers_like_a_full_parse() {
        // Params compare as values: the borrowed read keeps the host's text,
        // the full parse re-serialises it.
        fn show(incoming: Incoming) -> String {
            let value = |p: Option<Cow<RawValue>>| {
                p.map(|p| serde_json::from_str::<Value>(p.get()).expect("params are JSON"))
            };
            match incoming {
                Incoming::Request { id, method, params } => {
                    format!("request {id:?} {method} {:?}", value(params))
                }
                Incoming::Notification { method, params } => {
                    format!("notification {method} {:?}", value(params))
                }
                other => format!("{other:?}"),
            }
        }
        let outcome = |line: &[u8]| match read(line) {
            Err(_) => "parse error".to_string(),
            Ok(Read::One(incoming)) => show(incoming),
            Ok(Read::Batch(items)) => format!("batch of {}", items.len()),
        };
        let full = |line: &[u8]| match serde_json::from_slice::<Value>(line) {
            Err(_) => "parse error".to_string(),
            Ok(value) => show(classify(value)),
        };
        let mut lines: Vec<Vec<u8>> = vec![
            b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"x\":\"\xff\"}".to_vec(),
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"a\x01\"}".to_vec(),
            br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#.to_vec(),
            br#"{"jsonrpc":"2\u002e0","id":null,"method":"ping"}"#.to_vec(),
            br#"{"jsonrpc":"2.0","id":[1],"method":"ping","params":null}"#.to_vec(),
            br#"{"jsonrpc":"2.0","id":3,"method":"x","params":{"a":[1,{"b":2}],"c":"\u00e9"}}"#
                .to_vec(),
            br#"{"jsonrpc":"2.0","id":4,"method":"x","params":{"a":1,"a":2}}"#.to_vec(),
            br#"{"jsonrpc":"2.0","id":5,"method":"x","params":{"a":[1,}}"#.to_vec(),
            br#"{"jsonrpc":"2.0","id":6,"method":"x","params":{"a":01}}"#.to_vec(),
        ];
        // Up to serde_json's depth limit (it fails at 128 levels), the two reads agree.
        for depth in [1, 60, 124] {
            let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            let line =
                format!(r#"{{"jsonrpc":"2.0","id":7,"method":"x","params":{{"a":{nested}}}}}"#);
            lines.push(line.into_bytes());
        }
        for line in &lines {
            assert_eq!(
                outcome(line),
                full(line),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        // Deeper lines are read as well (issue 9, item 12): the full parse
        // stops at its limit, the borrowed read skips members without
        // recursing. They answer as the same line with the deep value shallow.
        for depth in [127, 128, 200, 100_000] {
            let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            let line = format!(r#"{{"jsonrpc":"2.0","method":"ping","x":{nested}}}"#);
            let shallow = br#"{"jsonrpc":"2.0","method":"ping","x":[]}"#;
            assert_eq!(outcome(line.as_bytes()), full(shallow), "depth {depth}");
            let line =
                format!(r#"{{"jsonrpc":"2.0","id":8,"method":"x","params":{{"a":{nested}}}}}"#);
            let Ok(Read::One(Incoming::Request { id, params, .. })) = read(line.as_bytes()) else {
                panic!("a request at depth {depth}")
            };
            assert_eq!(id, RequestId::Int(8));
            assert_eq!(params.unwrap().get(), format!(r#"{{"a":{nested}}}"#));
            // Still checked: a deep value that is not JSON.
            let broken = line.replacen("]", "}", 1);
            assert_eq!(outcome(broken.as_bytes()), "parse error", "depth {depth}");
        }
    }

    #[test]
    fn members_are_read_without_their_values() {
        let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        let text = format!(r#"{{"a":1,"b\u0021":{deep},"a":"two"}}"#);
        let raw = RawValue::from_string(text).unwrap();
        let members = Members::read(&raw).unwrap();
        let keys: Vec<&str> = members.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["a", "b!", "a"]);
        assert_eq!(
            members.string("a").as_deref(),
            Some("two"),
            "the last one counts"
        );
        assert_eq!(members.get("b!").unwrap().get(), deep);
        assert!(members.get("c").is_none());
        let array = RawValue::from_string("[1]".to_string()).unwrap();
        assert!(Members::read(&array).is_err());
    }

    #[test]
    fn error_data_is_shown_compact() {
        let raw = RawValue::from_string(
            "{ \"supported\" : [ \"2026-07-28\" ],\n \"note\": \"a \\\" b \" }".to_string(),
        )
        .unwrap();
        assert_eq!(
            compact(raw.get()),
            r#"{"supported":["2026-07-28"],"note":"a \" b "}"#
        );
        let mut error = ErrorObject::new(-32022, "Unsupported protocol version");
        assert_eq!(error.text(), "Unsupported protocol version");
        error.data = Some(compact(raw.get()));
        assert_eq!(
            error.text(),
            r#"Unsupported protocol version (data: {"supported":["2026-07-28"],"note":"a \" b "})"#
        );
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
