//! The `tools/call` line a forwarded call becomes: the host's arguments as
//! its bytes, the host's `_meta` (legacy) or the modern era's (2026-07-28),
//! and the call's own id as its progress token. Built on the caller's thread
//! (the hot path). No IO.

use super::era::{self, Modern};
use crate::protocol::jsonrpc::{self, RequestId};
use crate::protocol::mcp::method;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// The `tools/call` params sent to a child; `M` is the `_meta`: the host's
/// map (legacy), or `era::CallMeta` (modern).
#[derive(serde::Serialize)]
struct CallParams<'a, M = Cow<'a, Map<String, Value>>> {
    name: &'a str,
    arguments: &'a RawValue,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<M>,
}

/// What a forwarded call carries to the child.
pub(super) struct Call<'a> {
    pub tool: &'a str,
    pub arguments: &'a RawValue,
    /// The host's `_meta`, without its progress token.
    pub meta: &'a Map<String, Value>,
    /// Whether the host gave a progress token.
    pub has_token: bool,
}

/// Call `id`'s line, in the modern era when `modern` is set (with the host's
/// log level), else in the legacy one.
pub(super) fn line(
    id: i64,
    call: &Call<'_>,
    modern: Option<&Modern>,
    log_level: Option<&str>,
) -> Vec<u8> {
    let Call {
        tool,
        arguments,
        meta,
        has_token,
    } = *call;
    if let Some(modern) = modern {
        let params = CallParams {
            name: tool,
            arguments,
            meta: Some(era::CallMeta {
                host: meta,
                progress_token: has_token.then_some(id),
                modern,
                log_level,
            }),
        };
        return jsonrpc::request_line(&RequestId::Int(id), method::TOOLS_CALL, &params);
    }
    let meta = if has_token {
        let mut meta = meta.clone();
        meta.insert("progressToken".into(), Value::from(id));
        Some(Cow::Owned(meta))
    } else {
        (!meta.is_empty()).then_some(Cow::Borrowed(meta))
    };
    let params = CallParams {
        name: tool,
        arguments,
        meta,
    };
    jsonrpc::request_line(&RequestId::Int(id), method::TOOLS_CALL, &params)
}
