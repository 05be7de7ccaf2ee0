//! Which era of MCP a downstream server speaks, and what the modern era
//! (revision 2026-07-28) asks of each request: the era bridge of
//! docs/reference.md §7.
//!
//! The workbench opens every server with `initialize` (the legacy era). A
//! server that refuses it names the versions it supports in the error's
//! `data.supported` (MCP 2026-07-28, basic/versioning: a modern-only server
//! SHOULD; `-32022 UnsupportedProtocolVersion` carries `{supported,
//! requested}`). `after_refusal` reads that list: an older legacy version we
//! speak is tried once, a modern one switches the connection to the modern
//! era, anything else fails with the versions named. A modern connection
//! carries `io.modelcontextprotocol/protocolVersion`, `…/clientCapabilities`
//! and `…/clientInfo` in every request's `_meta` (basic/index, "Request
//! metadata"); `Modern` builds them.
//!
//! No IO here.

use crate::protocol::jsonrpc::ErrorObject;
use crate::protocol::mcp;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The modern revisions we speak, oldest first.
pub(crate) const MODERN_VERSIONS: [&str; 1] = ["2026-07-28"];

/// The reserved `_meta` keys of a modern request (MCP 2026-07-28, basic/index).
pub(crate) mod key {
    pub(crate) const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    pub(crate) const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    pub(crate) const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    pub(crate) const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
}

/// The era a server speaks, with the revision agreed on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Era {
    /// `initialize` offering `offered` (our latest, or the older version a
    /// refusal named) was answered with `version`.
    Legacy {
        offered: &'static str,
        version: String,
    },
    Modern(&'static str),
}

impl Era {
    /// `legacy` or `modern`.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Era::Legacy { .. } => "legacy",
            Era::Modern(_) => "modern",
        }
    }

    /// The revision agreed on.
    pub(crate) fn version(&self) -> &str {
        match self {
            Era::Legacy { version, .. } => version,
            Era::Modern(version) => version,
        }
    }
}

/// A server definition as it was started (the expanded command, arguments,
/// environment and folder, or a remote server's reach): the key its era is
/// kept under for the run. In memory only.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Definition {
    program: String,
    args: Vec<String>,
    env: BTreeMap<String, String>,
    cwd: Option<String>,
    /// A remote server's `Remote::identity`, hashed (it holds secrets).
    remote: Option<u64>,
}

impl Definition {
    pub(crate) fn of(spec: &super::transport::spec::Spec) -> Definition {
        Definition {
            program: spec.program.clone(),
            args: spec.args.clone(),
            env: spec.env.clone(),
            cwd: spec.cwd.clone(),
            remote: spec.remote.as_ref().map(|r| {
                use std::hash::{Hash, Hasher};
                let mut hasher = std::hash::DefaultHasher::new();
                r.identity().hash(&mut hasher);
                hasher.finish()
            }),
        }
    }
}

/// What to do after a server refused `initialize`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// Offer this older legacy version (once).
    Legacy(&'static str),
    /// Speak the modern era at this revision.
    Modern(&'static str),
    /// No version in common: the sentence says which the server supports.
    Fail(String),
}

/// The versions an error says the server supports (`data.supported`, a
/// list of strings), if it says so.
pub(crate) fn supported_versions(error: &ErrorObject) -> Option<Vec<String>> {
    #[derive(Deserialize)]
    struct Data {
        supported: Vec<Value>,
    }
    let data: Data = serde_json::from_str(error.data.as_deref()?).ok()?;
    Some(
        data.supported
            .into_iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
    )
}

/// The latest of `ours` that `theirs` lists, other than `except`.
fn latest_common<const N: usize>(
    ours: &[&'static str; N],
    theirs: &[String],
    except: &str,
) -> Option<&'static str> {
    ours.iter()
        .rev()
        .find(|v| **v != except && theirs.iter().any(|t| t == *v))
        .copied()
}

/// The decision after a refused `initialize` that offered `offered`, whose
/// error listed `supported`: an older legacy version we speak, once (not
/// after a retry); else a modern version we speak; else a failure naming
/// the server's versions and ours.
pub(crate) fn after_refusal(offered: &str, supported: &[String], retried: bool) -> Next {
    if !retried {
        if let Some(v) = latest_common(&mcp::SUPPORTED_VERSIONS, supported, offered) {
            return Next::Legacy(v);
        }
    }
    if let Some(v) = latest_common(&MODERN_VERSIONS, supported, "") {
        return Next::Modern(v);
    }
    Next::Fail(refused_every_version(supported))
}

/// The failure for a server that supports none of our versions.
pub(crate) fn refused_every_version(supported: &[String]) -> String {
    let theirs = if supported.is_empty() {
        "none".to_string()
    } else {
        supported.join(", ")
    };
    let ours: Vec<&str> = mcp::SUPPORTED_VERSIONS
        .iter()
        .chain(MODERN_VERSIONS.iter())
        .copied()
        .collect();
    format!(
        "refused every protocol version the workbench speaks: the server supports {theirs}; the workbench speaks {}",
        ours.join(", ")
    )
}

/// A connection in the modern era: the `_meta` entries every request carries.
#[derive(Debug)]
pub(crate) struct Modern {
    version: &'static str,
    entries: Map<String, Value>,
}

impl Modern {
    pub(crate) fn new(version: &'static str) -> Modern {
        let mut entries = Map::new();
        entries.insert(key::PROTOCOL_VERSION.into(), json!(version));
        // No client capability: like `initialize`'s `capabilities: {}`, the
        // server then asks the workbench for nothing (no roots, sampling or
        // elicitation, which a host behind the bridge could not answer).
        entries.insert(key::CLIENT_CAPABILITIES.into(), json!({}));
        entries.insert(
            key::CLIENT_INFO.into(),
            json!({"name": mcp::NAME, "version": mcp::VERSION}),
        );
        Modern { version, entries }
    }

    pub(crate) fn version(&self) -> &'static str {
        self.version
    }

    /// `params` (an object) with the era's `_meta` added.
    pub(crate) fn params(&self, mut params: Map<String, Value>, log_level: Option<&str>) -> Value {
        let mut meta = self.entries.clone();
        if let Some(level) = log_level {
            meta.insert(key::LOG_LEVEL.into(), json!(level));
        }
        params.insert("_meta".into(), Value::Object(meta));
        Value::Object(params)
    }
}

/// A modern call's `_meta`, written without copying the host's: the host's
/// keys (trace context and the like), the call's own progress token, the
/// era's entries, the log level. The era's keys win over a host's of the same
/// name, and no key is written twice.
pub(crate) struct CallMeta<'a> {
    /// The host's `_meta`, without its progress token.
    pub host: &'a Map<String, Value>,
    /// The token the child gets for the host's (the call's own id).
    pub progress_token: Option<i64>,
    pub modern: &'a Modern,
    pub log_level: Option<&'a str>,
}

impl serde::Serialize for CallMeta<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let ours = |k: &str| {
            self.modern.entries.contains_key(k)
                || (k == "progressToken" && self.progress_token.is_some())
                || (k == key::LOG_LEVEL && self.log_level.is_some())
        };
        let mut map = serializer.serialize_map(None)?;
        for (k, v) in self.host.iter().filter(|(k, _)| !ours(k)) {
            map.serialize_entry(k, v)?;
        }
        if let Some(token) = self.progress_token {
            map.serialize_entry("progressToken", &token)?;
        }
        for (k, v) in &self.modern.entries {
            map.serialize_entry(k, v)?;
        }
        if let Some(level) = self.log_level {
            map.serialize_entry(key::LOG_LEVEL, level)?;
        }
        map.end()
    }
}

/// What the workbench reads of a `DiscoverResult` (MCP 2026-07-28, server/discover).
#[derive(Deserialize)]
pub(crate) struct DiscoverResult {
    #[serde(rename = "supportedVersions", default)]
    pub supported_versions: Vec<String>,
    #[serde(default)]
    pub capabilities: mcp::ServerCapabilities,
    #[serde(rename = "resultType", default)]
    pub result_type: Option<String>,
    #[serde(default)]
    pub instructions: Option<String>,
}

/// The `resultType` of a modern result (a missing one means `complete`).
#[derive(Deserialize)]
pub(crate) struct ResultHead<'a> {
    #[serde(rename = "resultType", borrow, default)]
    pub result_type: Option<std::borrow::Cow<'a, str>>,
}

/// Whether a result's `resultType` is missing or `complete` (MCP 2026-07-28,
/// basic/index: clients MUST treat a missing one as complete); the value
/// otherwise (`input_required`: the server wants input the workbench, which
/// declares no client capability, cannot give).
pub(crate) fn incomplete(result: &str) -> Option<String> {
    match serde_json::from_str::<ResultHead<'_>>(result) {
        Ok(ResultHead { result_type: None }) => None,
        Ok(ResultHead {
            result_type: Some(t),
        }) if t == "complete" => None,
        Ok(ResultHead {
            result_type: Some(t),
        }) => Some(t.into_owned()),
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(code: i64, data: Option<&str>) -> ErrorObject {
        let mut error = ErrorObject::new(code, "Unsupported protocol version");
        error.data = data.map(str::to_owned);
        error
    }

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_refusal_names_its_versions() {
        let e = refusal(
            -32022,
            Some(r#"{"supported":["2026-07-28"],"requested":"2025-11-25"}"#),
        );
        assert_eq!(supported_versions(&e), Some(strings(&["2026-07-28"])));
        // Non-strings are skipped; no list, no data, or data that is not an
        // object: the error is not a version refusal.
        let e = refusal(-32602, Some(r#"{"supported":[1,"2025-06-18"]}"#));
        assert_eq!(supported_versions(&e), Some(strings(&["2025-06-18"])));
        assert_eq!(
            supported_versions(&refusal(-32602, Some(r#"{"x":1}"#))),
            None
        );
        assert_eq!(supported_versions(&refusal(-32602, Some("[1]"))), None);
        assert_eq!(supported_versions(&refusal(-32022, None)), None);
    }

    #[test]
    fn only_modern_versions_switch_to_the_modern_era() {
        let next = after_refusal("2025-11-25", &strings(&["2026-07-28"]), false);
        assert_eq!(next, Next::Modern("2026-07-28"));
        // An unknown later revision next to ours: ours.
        let next = after_refusal("2025-11-25", &strings(&["2027-01-01", "2026-07-28"]), false);
        assert_eq!(next, Next::Modern("2026-07-28"));
    }

    #[test]
    fn an_older_legacy_version_is_retried_once() {
        let listed = strings(&["2024-11-05", "2025-06-18"]);
        assert_eq!(
            after_refusal("2025-11-25", &listed, false),
            Next::Legacy("2025-06-18")
        );
        // Refused again, listing the same: no second retry.
        assert!(matches!(
            after_refusal("2025-06-18", &listed, true),
            Next::Fail(_)
        ));
        // A legacy version comes before a modern one; after the retry, modern.
        let both = strings(&["2025-03-26", "2026-07-28"]);
        assert_eq!(
            after_refusal("2025-11-25", &both, false),
            Next::Legacy("2025-03-26")
        );
        assert_eq!(
            after_refusal("2025-03-26", &both, true),
            Next::Modern("2026-07-28")
        );
        // The version offered is no retry.
        assert!(matches!(
            after_refusal("2025-11-25", &strings(&["2025-11-25"]), false),
            Next::Fail(_)
        ));
    }

    #[test]
    fn no_version_in_common_names_both_sides() {
        let Next::Fail(text) = after_refusal("2025-11-25", &strings(&["2099-01-01", "1.0"]), false)
        else {
            panic!("not a failure");
        };
        assert_eq!(
            text,
            "refused every protocol version the workbench speaks: the server supports 2099-01-01, 1.0; \
             the workbench speaks 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28"
        );
        let Next::Fail(text) = after_refusal("2025-11-25", &[], false) else {
            panic!("not a failure");
        };
        assert!(text.contains("the server supports none;"), "{text}");
    }

    #[test]
    fn modern_requests_carry_the_era_in_meta() {
        let modern = Modern::new("2026-07-28");
        let params = modern.params(Map::new(), None);
        assert_eq!(
            params.to_string(),
            format!(
                r#"{{"_meta":{{"io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{{"name":"mcp-workbench","version":"{}"}},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}}"#,
                mcp::VERSION
            )
        );
        // A call: a host's keys stay (trace context), the call's token and
        // the era's keys win, each key once.
        let mut host = Map::new();
        host.insert("traceparent".into(), json!("00-abc-01"));
        host.insert("progressToken".into(), json!("host's"));
        host.insert(key::PROTOCOL_VERSION.into(), json!("1999-01-01"));
        host.insert(key::LOG_LEVEL.into(), json!("error"));
        let meta = CallMeta {
            host: &host,
            progress_token: Some(7),
            modern: &modern,
            log_level: Some("debug"),
        };
        assert_eq!(
            serde_json::to_string(&meta).unwrap(),
            format!(
                r#"{{"traceparent":"00-abc-01","progressToken":7,"io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{{"name":"mcp-workbench","version":"{}"}},"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/logLevel":"debug"}}"#,
                mcp::VERSION
            )
        );
        // Without a token or a level, the host's keys of those names stay.
        let meta = CallMeta {
            host: &host,
            progress_token: None,
            modern: &modern,
            log_level: None,
        };
        let text = serde_json::to_string(&meta).unwrap();
        assert!(
            text.starts_with(
                r#"{"io.modelcontextprotocol/logLevel":"error","progressToken":"host's","traceparent""#
            ),
            "{text}"
        );
        assert_eq!(text.matches("protocolVersion").count(), 1, "{text}");
    }

    #[test]
    fn result_types() {
        assert_eq!(incomplete(r#"{"content":[]}"#), None);
        assert_eq!(
            incomplete(r#"{"content":[],"resultType":"complete"}"#),
            None
        );
        assert_eq!(
            incomplete(r#"{"resultType":"input_required","inputRequests":{}}"#),
            Some("input_required".into())
        );
        // An escaped value is read too.
        assert_eq!(
            incomplete(r#"{"resultType":"input\u005frequired"}"#),
            Some("input_required".into())
        );
    }

    #[test]
    fn definitions_differ_by_what_starts_them() {
        let spec = |args: &[&str]| super::super::transport::spec::Spec {
            toolbox: "t".into(),
            server: "s".into(),
            program: "node".into(),
            args: strings(args),
            env: BTreeMap::new(),
            cwd: None,
            command_display: "node".into(),
            cwd_display: None,
            lookup: Default::default(),
            startup_timeout: std::time::Duration::from_secs(1),
            call_timeout: std::time::Duration::from_secs(1),
            max_call_timeout: std::time::Duration::from_secs(1),
            max_result_chars: None,
            remote: None,
        };
        assert_eq!(
            Definition::of(&spec(&["a.js"])),
            Definition::of(&spec(&["a.js"]))
        );
        assert_ne!(
            Definition::of(&spec(&["a.js"])),
            Definition::of(&spec(&["b.js"]))
        );
    }
}
