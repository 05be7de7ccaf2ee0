//! The MCP vocabulary the workbench uses, named as in the spec's schema:
//! protocol versions, method names, `Tool` entries kept as raw JSON,
//! `CallToolResult` builders for the workbench's own results, and the hosts'
//! `_meta` hints on the tools the workbench lists.
//!
//! No IO here.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The legacy-era revisions we speak, oldest first (MCP 2025-11-25, basic/lifecycle, "Version Negotiation").
pub(crate) const SUPPORTED_VERSIONS: [&str; 4] =
    ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// What we offer downstream and answer upstream to a version we do not support.
pub(crate) const LATEST_VERSION: &str = "2025-11-25";
/// The first revision with `structuredContent` and `outputSchema` (2025-06-18 changelog).
pub(crate) const STRUCTURED_CONTENT_SINCE: &str = "2025-06-18";

pub const NAME: &str = "mcp-workbench";
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The `_meta` key of a `use_tool` call that sets this call's time limit in
/// milliseconds, in place of its server's `callTimeoutMs` (`call --timeout`
/// sends it; docs/reference.md §13). The workbench takes it out: the
/// server never sees it.
pub const TIME_LIMIT_META: &str = "mcp-workbench/timeoutMs";

pub(crate) mod method {
    pub(crate) const INITIALIZE: &str = "initialize";
    pub(crate) const INITIALIZED: &str = "notifications/initialized";
    /// The modern era's opening (MCP 2026-07-28, server/discover).
    pub(crate) const DISCOVER: &str = "server/discover";
    pub(crate) const PING: &str = "ping";
    pub(crate) const TOOLS_LIST: &str = "tools/list";
    pub(crate) const TOOLS_CALL: &str = "tools/call";
    pub(crate) const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
    pub(crate) const CANCELLED: &str = "notifications/cancelled";
    pub(crate) const PROGRESS: &str = "notifications/progress";
    pub(crate) const SET_LEVEL: &str = "logging/setLevel";
    pub(crate) const MESSAGE: &str = "notifications/message";
}

/// The `_meta` keys hosts read on a listed tool (docs/reference.md §12).
pub(crate) mod hint {
    /// `true`: the host shows the model the tool's whole definition in every
    /// request, never deferred behind its own tool search (Claude Code).
    pub(crate) const ALWAYS_LOAD: &str = "anthropic/alwaysLoad";
    /// Results up to this many characters stay in the conversation; the host
    /// saves a longer one to a file instead (Claude Code; 100,000 without it).
    pub(crate) const MAX_RESULT_SIZE_CHARS: &str = "anthropic/maxResultSizeChars";
    /// The largest `MAX_RESULT_SIZE_CHARS` Claude Code honours; it takes a
    /// larger value as this one, and so does the workbench.
    pub(crate) const RESULT_SIZE_LIMIT: usize = 500_000;
}

/// The host hints of one of the workbench's tools: always loaded, and, for a
/// tool whose results the workbench cuts to `result_chars`, that size
/// (at most `hint::RESULT_SIZE_LIMIT`), so the host does not set aside a
/// result the workbench already sized.
pub(crate) fn host_hints(result_chars: Option<usize>) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert(hint::ALWAYS_LOAD.into(), Value::Bool(true));
    if let Some(chars) = result_chars {
        meta.insert(
            hint::MAX_RESULT_SIZE_CHARS.into(),
            chars.min(hint::RESULT_SIZE_LIMIT).into(),
        );
    }
    meta
}

/// The version to answer a client's `initialize` with.
pub(crate) fn negotiate(requested: &str) -> &'static str {
    SUPPORTED_VERSIONS
        .iter()
        .find(|v| **v == requested)
        .copied()
        .unwrap_or(LATEST_VERSION)
}

/// Whether results may carry `structuredContent` for this negotiated version.
pub(crate) fn has_structured_content(version: &str) -> bool {
    version >= STRUCTURED_CONTENT_SINCE
}

/// A downstream tool: its name, and its definition exactly as the server sent it.
#[derive(Debug, Clone)]
pub(crate) struct ToolEntry {
    pub name: String,
    pub raw: Box<RawValue>,
}

/// The fields of a `Tool` the workbench reads, each as the text the server
/// sent: one field of an odd type or holding what serde_json cannot read as
/// values (a number out of range, a lone surrogate) costs nothing else. All
/// `None` when even the object's keys do not read.
#[derive(Deserialize, Default)]
pub(crate) struct ToolFields<'a> {
    #[serde(borrow)]
    pub name: Option<&'a RawValue>,
    #[serde(borrow)]
    pub title: Option<&'a RawValue>,
    #[serde(borrow)]
    pub description: Option<&'a RawValue>,
    #[serde(borrow, rename = "inputSchema")]
    pub input_schema: Option<&'a RawValue>,
    #[serde(borrow, rename = "outputSchema")]
    pub output_schema: Option<&'a RawValue>,
    #[serde(borrow)]
    pub annotations: Option<&'a RawValue>,
}

impl<'a> ToolFields<'a> {
    /// The fields of the tool object `raw`; `None` when its keys do not read.
    pub(crate) fn read(raw: &'a RawValue) -> Option<ToolFields<'a>> {
        serde_json::from_str(raw.get()).ok()
    }
}

/// The text of a string field as the server sent it: decoded when serde_json
/// can (`None` when it is not a string); a string it cannot decode (a lone
/// surrogate escape) as its text between the quotes, escapes and all, so a
/// description nobody can decode is still shown rather than dropped.
pub(crate) fn text_of(raw: &RawValue) -> Option<String> {
    let text = raw.get();
    match serde_json::from_str::<String>(text) {
        Ok(decoded) => Some(decoded),
        Err(_) if text.len() >= 2 && text.starts_with('"') => {
            Some(text[1..text.len() - 1].to_string())
        }
        Err(_) => None,
    }
}

/// The part of a `Tool` the workbench reads; the rest stays raw.
#[derive(Deserialize)]
pub(crate) struct ToolHead {
    pub name: String,
}

/// One page of `tools/list` (MCP 2025-11-25, server/tools, "Listing Tools").
#[derive(Deserialize)]
pub(crate) struct ListToolsResult {
    pub tools: Vec<Box<RawValue>>,
    #[serde(rename = "nextCursor", default)]
    pub next_cursor: Option<String>,
}

/// What the workbench reads of a downstream `initialize` result.
#[derive(Deserialize)]
pub(crate) struct InitializeResult {
    #[serde(rename = "protocolVersion")]
    pub protocol_version: String,
    #[serde(default)]
    pub capabilities: ServerCapabilities,
    /// What the server says of itself to the model (`import` describes a
    /// toolbox with its first sentence).
    #[serde(default)]
    pub instructions: Option<String>,
}

/// The server capabilities the workbench acts on.
#[derive(Deserialize, Default)]
pub(crate) struct ServerCapabilities {
    #[serde(default)]
    pub logging: Option<serde::de::IgnoredAny>,
}

/// The levels of `logging/setLevel` (server/utilities/logging, RFC 5424 names).
pub(crate) const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// A `CallToolResult` with one text block, built by the workbench itself.
#[derive(Serialize)]
pub(crate) struct TextResult<'a> {
    content: [TextContent<'a>; 1],
    #[serde(rename = "structuredContent", skip_serializing_if = "Option::is_none")]
    structured_content: Option<&'a RawValue>,
    #[serde(rename = "isError", skip_serializing_if = "std::ops::Not::not")]
    is_error: bool,
}

#[derive(Serialize)]
struct TextContent<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

impl<'a> TextResult<'a> {
    pub(crate) fn ok(text: &'a str) -> TextResult<'a> {
        TextResult {
            content: [TextContent { kind: "text", text }],
            structured_content: None,
            is_error: false,
        }
    }

    pub(crate) fn error(text: &'a str) -> TextResult<'a> {
        TextResult {
            is_error: true,
            ..TextResult::ok(text)
        }
    }

    pub(crate) fn with_structured(mut self, structured: Option<&'a RawValue>) -> TextResult<'a> {
        self.structured_content = structured;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_of_keeps_what_it_cannot_decode() {
        let text = |json: &str| text_of(&RawValue::from_string(json.into()).unwrap());
        assert_eq!(text(r#""a\nb""#).as_deref(), Some("a\nb"));
        assert_eq!(text(r#""a\ud800b""#).as_deref(), Some("a\\ud800b"));
        assert_eq!(text("5"), None);
    }

    #[test]
    fn negotiation_echoes_supported_versions() {
        for v in SUPPORTED_VERSIONS {
            assert_eq!(negotiate(v), v);
        }
        assert_eq!(negotiate("2026-07-28"), LATEST_VERSION);
        assert_eq!(negotiate("1.0"), LATEST_VERSION);
        assert!(!has_structured_content("2025-03-26"));
        assert!(has_structured_content("2025-06-18"));
    }

    #[test]
    fn host_hints_always_load_and_clamp_the_result_size() {
        let hints = |chars| Value::Object(host_hints(chars)).to_string();
        assert_eq!(hints(None), r#"{"anthropic/alwaysLoad":true}"#);
        assert_eq!(
            hints(Some(2000)),
            r#"{"anthropic/alwaysLoad":true,"anthropic/maxResultSizeChars":2000}"#
        );
        assert_eq!(
            hints(Some(500_000)),
            r#"{"anthropic/alwaysLoad":true,"anthropic/maxResultSizeChars":500000}"#
        );
        assert_eq!(
            hints(Some(1 << 40)),
            r#"{"anthropic/alwaysLoad":true,"anthropic/maxResultSizeChars":500000}"#,
            "over Claude Code's limit: the limit"
        );
    }

    #[test]
    fn text_results() {
        let ok = serde_json::to_string(&TextResult::ok("hi")).unwrap();
        assert_eq!(ok, r#"{"content":[{"type":"text","text":"hi"}]}"#);
        let err = serde_json::to_string(&TextResult::error("no")).unwrap();
        assert_eq!(
            err,
            r#"{"content":[{"type":"text","text":"no"}],"isError":true}"#
        );
    }
}
