//! One server entry of a JSON host (Claude Desktop, Claude Code, Cursor, VS
//! Code, Gemini CLI, Windsurf) mapped onto the workbench's keys: stdio
//! (`command`, `args`, `env`, `cwd`) and remote (`url`, Gemini's `httpUrl`,
//! Windsurf's `serverUrl`, `type` `http`/`sse`, `headers`), `disabled`, and
//! each host's own extras (Gemini's `includeTools`, `timeout` and
//! `description`; the sign-in settings). A key with no equivalent is
//! reported as dropped, an entry that cannot run here at all as an error;
//! nothing is left out without saying so. No IO.

use super::entry::{Entry, Identity, Transport};
use super::host::{Host, Own};
use super::vars::{self, Context, Syntax};
use crate::config::ordered_json::Node;

/// A mapped entry and what the user should know about it.
#[derive(Debug)]
pub(crate) struct Mapped {
    pub entry: Entry,
    /// What the user must do (a variable to set).
    pub notes: Vec<String>,
    /// Keys not carried over: the key and why.
    pub dropped: Vec<(String, String)>,
    /// The host's own description of the server (Gemini CLI).
    pub description: Option<String>,
}

/// How `host` writes `$` in its strings.
pub(crate) fn syntax(host: Host) -> Syntax {
    host.keys().syntax
}

/// The identity of `host`'s entry `node` (one that maps), as `install`
/// compares it with the workbench's config.
pub(crate) fn identity(host: Host, node: &Node, cx: &Context<'_>) -> Option<Identity> {
    map(host, node, cx).ok().map(|m| m.entry.identity())
}

/// Maps the entry `node` of `host`; the error says why it cannot be imported.
pub(crate) fn map(host: Host, node: &Node, cx: &Context<'_>) -> Result<Mapped, String> {
    let entries = node
        .entries()
        .ok_or_else(|| format!("expected an object, found {}", node.kind()))?;
    let mut notes = Vec::new();
    let syntax = syntax(host);
    let text = |key: &str, value: &Node, notes: &mut Vec<String>| -> Result<String, String> {
        let raw = value
            .as_str()
            .ok_or_else(|| format!("{key}: expected a string, found {}", value.kind()))?;
        vars::translate(raw, syntax, cx, notes).map_err(|e| format!("{key}: {e}"))
    };
    let get = |key: &str| node.get(key);
    let kind = match get("type") {
        None => None,
        Some(Node::String(t)) => Some(t.as_str()),
        Some(other) => return Err(format!("type: expected a string, found {}", other.kind())),
    };
    let (url_key, sse) = url_key(host, node, kind)?;
    let mut entry = match (get("command"), get(url_key)) {
        (Some(command), _) if kind.is_none() || kind == Some("stdio") => {
            Entry::stdio(text("command", command, &mut notes)?)
        }
        (_, Some(url)) if kind != Some("stdio") => {
            Entry::remote(text(url_key, url, &mut notes)?, sse)
        }
        _ => {
            return Err(match kind {
                Some("stdio") => "\"command\" is missing".to_string(),
                Some(_) => format!("\"{url_key}\" is missing"),
                None => "neither \"command\" nor a URL is given".to_string(),
            })
        }
    };
    let mut dropped = Vec::new();
    let mut description = None;
    let mut skip = |key: &str, why: &str| dropped.push((key.to_string(), why.to_string()));
    for (key, value) in entries {
        let remote = entry.is_remote();
        if let Some(what) = own(host, key, remote) {
            set_own(what, key, value, &mut entry, &mut description, &mut skip)?;
            continue;
        }
        match (key.as_str(), &mut entry.transport) {
            ("command", Transport::Stdio { .. }) | ("type", _) => {}
            ("url" | "httpUrl" | "serverUrl", _) if key == url_key && remote => {}
            ("args", Transport::Stdio { args, .. }) => {
                let items = strings(value).ok_or("args: expected an array of strings")?;
                for (i, item) in items.iter().enumerate() {
                    args.push(
                        vars::translate(item, syntax, cx, &mut notes)
                            .map_err(|e| format!("args[{i}]: {e}"))?,
                    );
                }
            }
            ("env", Transport::Stdio { env, .. }) => {
                *env = string_map(value, "env", syntax, cx, &mut notes)?;
            }
            ("headers", Transport::Remote { headers, .. }) => {
                *headers = string_map(value, "headers", syntax, cx, &mut notes)?;
            }
            ("cwd", Transport::Stdio { cwd, .. }) => *cwd = Some(text("cwd", value, &mut notes)?),
            ("disabled", _) => match value {
                Node::Bool(b) => entry.disabled = *b,
                other => {
                    return Err(format!(
                        "disabled: expected true or false, found {}",
                        other.kind()
                    ))
                }
            },
            ("oauth", Transport::Remote { .. }) => {
                oauth(value, &mut entry.oauth, &mut skip);
            }
            _ => skip(key, why_dropped(key, remote)),
        }
    }
    Ok(Mapped {
        entry,
        notes,
        dropped,
        description,
    })
}

/// Keys with no equivalent in the workbench, and why each is dropped.
const DROPPED: &[(&[&str], &str)] = &[
    (
        &["envFile"],
        "the workbench reads no env file: put the variables the server needs in \"env\"",
    ),
    (
        &["headersHelper"],
        "a command that prints headers has no equivalent: put the headers in \"headers\"",
    ),
    (
        &["excludeTools", "disabledTools"],
        "the workbench has no list of tools to hide: list the tools to keep in \"toolFilters\"",
    ),
    (
        &["trust"],
        "the workbench forwards every call as the model makes it; the host asks for confirmation",
    ),
    (
        &["alwaysLoad"],
        "the workbench's own tools are always loaded; a toolbox's tools come when it is opened",
    ),
];

/// Why `key` is dropped from an entry (`remote`: a remote server's).
fn why_dropped(key: &str, remote: bool) -> &'static str {
    if let Some((_, why)) = DROPPED.iter().find(|(keys, _)| keys.contains(&key)) {
        return why;
    }
    match key {
        "url" | "httpUrl" | "serverUrl" | "headers" if !remote => {
            "the entry runs a command, so its URL settings do not apply"
        }
        "command" | "args" | "env" | "cwd" if remote => {
            "the entry is a remote server, so its process settings do not apply"
        }
        _ => "not a setting the workbench knows",
    }
}

/// The key of the entry's URL, by its `type`, and whether it is the legacy
/// SSE transport; the error says why the `type` cannot be imported.
fn url_key(host: Host, node: &Node, kind: Option<&str>) -> Result<(&'static str, bool), String> {
    Ok(match kind {
        Some("ws" | "websocket") => {
            return Err(
                "the WebSocket transport (\"type\": \"ws\") has no equivalent in the workbench"
                    .into(),
            )
        }
        Some("sse") => ("url", true),
        Some("http" | "streamable-http" | "streamableHttp" | "streamable_http") => ("url", false),
        Some("stdio") | None => untyped_url(host, node),
        Some(other) => return Err(format!("type: transport {other:?} is unknown")),
    })
}

/// The URL key of an entry without `type` (or with `stdio`), and whether
/// it is the legacy SSE transport: the host's first present, else its last.
fn untyped_url(host: Host, node: &Node) -> (&'static str, bool) {
    let urls = host.keys().untyped_urls;
    urls.iter()
        .find(|(key, _)| node.get(key).is_some())
        .or(urls.last())
        .copied()
        .unwrap_or(("url", false))
}

/// What the host's own `key` sets, where it applies (`OAuth`: to a
/// remote server only).
fn own(host: Host, key: &str, remote: bool) -> Option<Own> {
    let (_, what) = host.keys().own.iter().find(|(k, _)| *k == key)?;
    (remote || *what != Own::OAuth).then_some(*what)
}

/// A host's own key onto the entry.
fn set_own(
    what: Own,
    key: &str,
    value: &Node,
    entry: &mut Entry,
    description: &mut Option<String>,
    skip: &mut dyn FnMut(&str, &str),
) -> Result<(), String> {
    match what {
        Own::ToolFilters => {
            let fail = || format!("{key}: expected an array of strings");
            entry.tool_filters = Some(strings(value).ok_or_else(fail)?);
        }
        Own::CallTimeoutMs => match value {
            Node::Number(n) if n.as_u64().is_some() => entry.call_timeout_ms = n.as_u64(),
            other => {
                return Err(format!(
                    "{key}: expected milliseconds, found {}",
                    other.kind()
                ))
            }
        },
        Own::Description => *description = value.as_str().map(str::to_string),
        Own::OAuth => oauth(value, &mut entry.oauth, skip),
    }
    Ok(())
}

/// An array of strings.
fn strings(node: &Node) -> Option<Vec<String>> {
    match node {
        Node::Array(items) => items
            .iter()
            .map(|i| i.as_str().map(str::to_string))
            .collect(),
        _ => None,
    }
}

/// An object of strings (numbers and booleans written as text, as hosts
/// pass them), each value translated.
fn string_map(
    node: &Node,
    key: &str,
    syntax: Syntax,
    cx: &Context<'_>,
    notes: &mut Vec<String>,
) -> Result<Vec<(String, String)>, String> {
    let entries = node
        .entries()
        .ok_or_else(|| format!("{key}: expected an object, found {}", node.kind()))?;
    let mut out = Vec::new();
    for (name, value) in entries {
        let raw = match value {
            Node::String(s) => s.clone(),
            Node::Number(n) => n.to_string(),
            Node::Bool(b) => b.to_string(),
            other => {
                return Err(format!(
                    "{key}.{name}: expected a string, found {}",
                    other.kind()
                ))
            }
        };
        let value =
            vars::translate(&raw, syntax, cx, notes).map_err(|e| format!("{key}.{name}: {e}"))?;
        out.push((name.clone(), value));
    }
    Ok(out)
}

/// A host's sign-in settings onto §11's `oauth` (`clientId`,
/// `clientSecret`, `scopes`, `callbackPort`); the rest is dropped.
fn oauth(node: &Node, out: &mut Vec<(String, Node)>, skip: &mut dyn FnMut(&str, &str)) {
    let Some(entries) = node.entries() else {
        skip("oauth", "expected an object");
        return;
    };
    for (key, value) in entries {
        let ours = match key.as_str() {
            "clientId" | "client_id" | "CLIENT_ID" => "clientId",
            "clientSecret" | "client_secret" | "CLIENT_SECRET" => "clientSecret",
            "scopes" => "scopes",
            "callbackPort" => "callbackPort",
            "enabled" => continue,
            other => {
                skip(
                    &format!("oauth.{other}"),
                    "not a sign-in setting the workbench knows",
                );
                continue;
            }
        };
        out.push((ours.to_string(), value.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn mapped(host: Host, json: &str) -> Result<Mapped, String> {
        let node: Node = serde_json::from_str(json).unwrap();
        let cx = Context {
            home: Path::new("/home/u"),
            project: None,
            inputs: &[],
            separator: '/',
        };
        map(host, &node, &cx)
    }

    fn json(m: &Mapped) -> String {
        serde_json::to_string(&m.entry.node()).unwrap()
    }

    #[test]
    fn claude_stdio_and_remote() {
        let m = mapped(
            Host::ClaudeDesktop,
            r#"{"command":"npx","args":["-y","pkg","${NOT_A_VAR}"],"env":{"TOKEN":"abc","N":3}}"#,
        )
        .unwrap();
        assert_eq!(
            json(&m),
            r#"{"command":"npx","args":["-y","pkg","$${NOT_A_VAR}"],"env":{"TOKEN":"abc","N":"3"}}"#
        );
        let m = mapped(
            Host::ClaudeCode,
            r#"{"type":"http","url":"https://x/mcp","headers":{"Authorization":"Bearer ${TOKEN}"},"headersHelper":"x","alwaysLoad":true}"#,
        )
        .unwrap();
        assert_eq!(
            json(&m),
            r#"{"type":"http","url":"https://x/mcp","headers":{"Authorization":"Bearer ${TOKEN}"}}"#
        );
        let keys: Vec<&str> = m.dropped.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["headersHelper", "alwaysLoad"]);
        let m = mapped(
            Host::ClaudeCode,
            r#"{"type":"sse","url":"https://x/sse","disabled":true}"#,
        )
        .unwrap();
        assert_eq!(
            json(&m),
            r#"{"type":"sse","url":"https://x/sse","disabled":true}"#
        );
        let err = mapped(Host::ClaudeCode, r#"{"type":"ws","url":"wss://x"}"#).unwrap_err();
        assert!(err.contains("WebSocket"), "{err}");
        let err = mapped(Host::ClaudeCode, r#"{"args":["x"]}"#).unwrap_err();
        assert_eq!(err, "neither \"command\" nor a URL is given");
        let err = mapped(Host::ClaudeCode, r#"{"command":"x","args":"y"}"#).unwrap_err();
        assert_eq!(err, "args: expected an array of strings");
    }

    #[test]
    fn vs_code_inputs_and_folders() {
        let inputs = [("gh-token".to_string(), "GitHub token".to_string())];
        let cx = Context {
            home: Path::new("/home/u"),
            project: Some(Path::new("/w/app")),
            inputs: &inputs,
            separator: '/',
        };
        let node: Node = serde_json::from_str(
            r#"{"type":"stdio","command":"npx","args":["pkg","${workspaceFolder}"],"env":{"GH":"${input:gh-token}","P":"${env:PATH}"},"envFile":"${workspaceFolder}/.env","dev":{"watch":"src/**"}}"#,
        )
        .unwrap();
        let m = map(Host::VsCode, &node, &cx).unwrap();
        assert_eq!(
            json(&m),
            r#"{"command":"npx","args":["pkg","/w/app"],"env":{"GH":"${GH_TOKEN}","P":"${PATH}"}}"#
        );
        assert_eq!(
            m.notes,
            ["set GH_TOKEN in the environment the workbench runs in: VS Code asked for input 'gh-token' (GitHub token)"]
        );
        let keys: Vec<&str> = m.dropped.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["envFile", "dev"]);
        let remote: Node = serde_json::from_str(
            r#"{"type":"sse","url":"https://v/sse","headers":{"A":"${input:gh-token}"}}"#,
        )
        .unwrap();
        let m = map(Host::VsCode, &remote, &cx).unwrap();
        assert_eq!(
            json(&m),
            r#"{"type":"sse","url":"https://v/sse","headers":{"A":"${GH_TOKEN}"}}"#
        );
    }

    #[test]
    fn gemini_windsurf_cursor() {
        let m = mapped(
            Host::Gemini,
            r#"{"httpUrl":"https://g/mcp","headers":{"X-Key":"$KEY"},"timeout":5000,"includeTools":["a"],"excludeTools":["b"],"trust":true,"description":"Gee"}"#,
        )
        .unwrap();
        assert_eq!(
            json(&m),
            r#"{"type":"http","url":"https://g/mcp","headers":{"X-Key":"${KEY}"},"toolFilters":["a"],"callTimeoutMs":5000}"#
        );
        assert_eq!(m.description.as_deref(), Some("Gee"));
        assert_eq!(m.dropped.len(), 2);
        let m = mapped(Host::Gemini, r#"{"url":"https://g/sse"}"#).unwrap();
        assert_eq!(json(&m), r#"{"type":"sse","url":"https://g/sse"}"#);
        let m = mapped(
            Host::Windsurf,
            r#"{"serverUrl":"https://w/mcp","headers":{"A":"${env:W}"}}"#,
        )
        .unwrap();
        assert_eq!(
            json(&m),
            r#"{"type":"http","url":"https://w/mcp","headers":{"A":"${W}"}}"#
        );
        let m = mapped(
            Host::Cursor,
            r#"{"command":"node","args":["${userHome}/s.js"],"env":{"K":"${env:K}"},"envFile":".env"}"#,
        )
        .unwrap();
        assert_eq!(
            json(&m),
            r#"{"command":"node","args":["/home/u/s.js"],"env":{"K":"${K}"}}"#
        );
        assert_eq!(m.dropped[0].0, "envFile");
        let m = mapped(
            Host::Cursor,
            r#"{"url":"https://c/mcp","auth":{"CLIENT_ID":"id","CLIENT_SECRET":"s"}}"#,
        )
        .unwrap();
        assert_eq!(
            json(&m),
            r#"{"type":"http","url":"https://c/mcp","oauth":{"clientId":"id","clientSecret":"s"}}"#
        );
        let err = mapped(
            Host::Cursor,
            r#"{"command":"x","args":["${workspaceFolder}"]}"#,
        )
        .unwrap_err();
        assert!(
            err.starts_with("args[0]: '${workspaceFolder}' has no value outside a project"),
            "{err}"
        );
    }
}
