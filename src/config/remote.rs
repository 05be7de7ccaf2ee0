//! A remote server's keys (docs/reference.md §3.6): `url` and the other
//! hosts' spellings of it (`httpUrl`, `serverUrl`), `type`, `headers` and
//! `oauth`, checked together once a server's keys were walked, and turned
//! into a `RemoteConfig`; and what a server with `url` must not have (`command`
//! and the keys that only a child process reads).
//!
//! Pure: the URL is parsed with `net::Url` when it holds no reference (one
//! that does is checked when it is expanded, in `fleet::launch`), and no
//! expanded value is ever in a message.

use super::checker::{child_path, show, Checker};
use super::model::{OAuthConfig, RemoteConfig, RemoteKind};
use super::ordered_json::Node;
use crate::net::Url;

/// The spellings of a remote server's URL: ours and Claude Code's, Gemini
/// CLI's (always Streamable HTTP) and Windsurf's.
pub(super) const URL_KEYS: &[&str] = &["url", "httpUrl", "serverUrl"];

/// The keys only a child process reads.
pub(super) const CHILD_KEYS: &[&str] = &["args", "env", "cwd", "inheritEnv"];

/// What `type` accepts, as the message lists it.
const TYPES: &str =
    "\"stdio\" (a command), \"http\", \"streamable-http\", \"streamableHttp\" or \"sse\" (a url)";

/// The keys of one server that decide how it is reached, as found by the walk
/// over its keys.
#[derive(Default)]
pub(super) struct Reach<'a> {
    pub has_command: bool,
    pub kind: Option<&'a Node>,
    /// The URL spellings present, with their keys, in file order.
    pub urls: Vec<(&'a str, &'a Node)>,
    pub headers: Option<&'a Node>,
    pub oauth: Option<&'a Node>,
    /// The child-only keys present (`CHILD_KEYS`).
    pub child_keys: Vec<&'a str>,
}

/// What `type` says.
#[derive(Clone, Copy, PartialEq)]
enum Declared {
    Stdio,
    Remote(RemoteKind),
}

impl Checker {
    /// Checks how the server at `path` is reached: `Some` for a remote
    /// server, `None` for a command (or when the keys are wrong, each
    /// problem reported at its path).
    pub(super) fn reach(&mut self, path: &str, reach: &Reach) -> Option<RemoteConfig> {
        let declared = reach.kind.and_then(|node| self.declared(node, path));
        let Some(&(url_key, url_node)) = reach.urls.first() else {
            self.command_server(path, reach, declared);
            return None;
        };
        let url_path = child_path(path, url_key);
        if let Some((again, _)) = reach.urls.get(1) {
            self.error(
                &child_path(path, again),
                format!("\"{url_key}\" and \"{again}\" spell the same key: keep one"),
            );
        }
        if reach.has_command {
            self.error(
                &url_path,
                "a server has either \"command\" (a child process) or a url (a remote server), not both",
            );
        }
        for key in &reach.child_keys {
            self.error(
                &child_path(path, key),
                "applies to a command (a child process); a remote server (a url) has none",
            );
        }
        let kind = match (url_key, declared) {
            (_, Some(Declared::Stdio)) => {
                self.error(
                    &child_path(path, "type"),
                    "\"stdio\" is for a command; a server with a url is \"http\" or \"sse\"",
                );
                RemoteKind::StreamableHttp
            }
            ("httpUrl", Some(Declared::Remote(RemoteKind::Sse))) => {
                self.error(
                    &child_path(path, "type"),
                    "\"httpUrl\" is always Streamable HTTP; for the legacy SSE transport write \"url\" with \"type\": \"sse\"",
                );
                RemoteKind::Sse
            }
            (_, Some(Declared::Remote(kind))) => kind,
            (_, None) => RemoteKind::StreamableHttp,
        };
        let url = self.url(url_node, &url_path)?;
        let headers = match reach.headers {
            Some(node) => self.headers(node, &child_path(path, "headers")),
            None => Vec::new(),
        };
        let oauth = reach
            .oauth
            .and_then(|node| self.oauth(node, &child_path(path, "oauth")));
        #[cfg(not(feature = "remote"))]
        self.error(
            &url_path,
            "this build has no remote servers (built without the `remote` feature)",
        );
        Some(RemoteConfig {
            kind,
            url,
            headers,
            oauth,
        })
    }

    /// The checks of a server without a url: a command, and none of the
    /// remote keys.
    fn command_server(&mut self, path: &str, reach: &Reach, declared: Option<Declared>) {
        if let Some(Declared::Remote(_)) = declared {
            self.error(
                &child_path(path, "type"),
                "is a remote server's type, which needs \"url\" (a command is \"type\": \"stdio\")",
            );
        }
        for (key, present) in [("headers", reach.headers), ("oauth", reach.oauth)] {
            if present.is_some() {
                self.error(
                    &child_path(path, key),
                    "applies to a remote server (\"url\"), not to a command",
                );
            }
        }
        if !reach.has_command {
            self.error(
                &child_path(path, "command"),
                "required string is missing (or \"url\" for a remote server)",
            );
        }
    }

    fn declared(&mut self, node: &Node, path: &str) -> Option<Declared> {
        if let Node::String(t) = node {
            match t.as_str() {
                "stdio" => return Some(Declared::Stdio),
                "http" | "streamable-http" | "streamableHttp" => {
                    return Some(Declared::Remote(RemoteKind::StreamableHttp))
                }
                "sse" => return Some(Declared::Remote(RemoteKind::Sse)),
                _ => {}
            }
        }
        self.error(
            &child_path(path, "type"),
            format!("expected {TYPES}, found {}", show(node)),
        );
        None
    }

    /// The url: a template; without references it must parse now. Plain
    /// `http` to a host that is not loopback is a warning.
    fn url(&mut self, node: &Node, path: &str) -> Option<super::expand::Template> {
        let url = self.template(node, path)?;
        if url.source().trim().is_empty() {
            self.error(path, "must not be empty");
            return None;
        }
        match Url::parse(url.source()) {
            Err(e) if !url.has_references() => {
                self.error(path, e);
                return None;
            }
            // A reference may stand for any part: only a literal host is judged.
            Ok(parsed)
                if !parsed.is_https() && !parsed.is_loopback() && !parsed.host().contains('$') =>
            {
                self.warning(
                    path.to_string(),
                    format!(
                        "plain http to '{}': requests and their headers are sent unencrypted, and sign-in is refused over it; use https",
                        parsed.host()
                    ),
                );
            }
            _ => {}
        }
        Some(url)
    }

    /// `headers`: names that HTTP allows, each once (whatever its case), and
    /// values (templates) that can be sent (`header_value`).
    fn headers(&mut self, node: &Node, path: &str) -> Vec<(String, super::expand::Template)> {
        let Some(entries) = self.object(node, path, &[]) else {
            return Vec::new();
        };
        let mut out: Vec<(String, super::expand::Template)> = Vec::new();
        for (name, value) in entries {
            let p = child_path(path, name);
            if !header_name(name) {
                self.error(
                    &p,
                    "not a valid header name (letters, digits and !#$%&'*+-.^_`|~)",
                );
                continue;
            }
            if let Some((first, _)) = out.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
                self.error(
                    &p,
                    format!("names header '{first}' again (header names ignore case)"),
                );
                continue;
            }
            let Some(value) = self.template(value, &p) else {
                continue;
            };
            if !header_value(value.source()) {
                self.error(
                    &p,
                    format!("not a sendable header value ({HEADER_VALUE_RULE})"),
                );
                continue;
            }
            out.push((name.clone(), value));
        }
        out
    }

    /// `oauth`: `clientId`, `clientSecret` (a template), `scopes`, `callbackPort`.
    fn oauth(&mut self, node: &Node, path: &str) -> Option<OAuthConfig> {
        let known = ["clientId", "clientSecret", "scopes", "callbackPort"];
        let entries = self.object(node, path, &known)?;
        let mut oauth = OAuthConfig::default();
        for (key, value) in entries {
            let p = child_path(path, key);
            match key.as_str() {
                "clientId" => {
                    oauth.client_id = self.string(value, &p);
                    if oauth
                        .client_id
                        .as_deref()
                        .is_some_and(|c| c.trim().is_empty())
                    {
                        self.error(&p, "must not be empty");
                    }
                }
                "clientSecret" => oauth.client_secret = self.template(value, &p),
                "scopes" => match value {
                    Node::Array(items) => {
                        for (i, item) in items.iter().enumerate() {
                            let item_path = format!("{p}[{i}]");
                            match self.string(item, &item_path) {
                                Some(s) if s.is_empty() || s.contains(char::is_whitespace) => {
                                    self.error(&item_path, "a scope is one word, without spaces")
                                }
                                Some(s) => oauth.scopes.push(s),
                                None => {}
                            }
                        }
                    }
                    other => self.error(
                        &p,
                        format!("expected an array of strings, found {}", other.kind()),
                    ),
                },
                "callbackPort" => match value {
                    Node::Number(n) if n.as_u64().is_some_and(|v| (1..=65535).contains(&v)) => {
                        oauth.callback_port = n.as_u64().and_then(|v| u16::try_from(v).ok());
                    }
                    other => self.error(
                        &p,
                        format!(
                            "expected a port number from 1 to 65535, found {}",
                            match other {
                                Node::Number(n) => n.to_string(),
                                _ => other.kind().to_string(),
                            }
                        ),
                    ),
                },
                _ => {}
            }
        }
        Some(oauth)
    }
}

/// An HTTP field name: one or more token characters (RFC 9110 §5.1).
pub(crate) fn header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Whether a header value can be sent as it is: an RFC 9110 field-value,
/// visible characters (non-ASCII ones too, obs-text) with spaces and tabs
/// only between them, and no other control byte.
pub(crate) fn header_value(value: &str) -> bool {
    let blank = |b: Option<&u8>| matches!(b, Some(b' ' | b'\t'));
    let bytes = value.as_bytes();
    !blank(bytes.first())
        && !blank(bytes.last())
        && bytes
            .iter()
            .all(|&b| matches!(b, b' ' | b'\t' | 0x21..=0x7e | 0x80..=0xff))
}

/// What a value `header_value` refuses holds.
pub(crate) const HEADER_VALUE_RULE: &str =
    "it holds a control character, or a space or tab at its start or end";

#[cfg(test)]
mod tests {
    use crate::config::{parse, Problem, ServerConfig};
    use std::path::Path;

    fn strings(problems: &[Problem]) -> Vec<String> {
        problems.iter().map(Problem::to_string).collect()
    }

    /// The servers of toolbox `t` whose `mcpServers` is `servers`, with
    /// the warnings; or the errors.
    fn servers(servers: &str) -> Result<(Vec<ServerConfig>, Vec<String>), Vec<String>> {
        let text =
            format!(r#"{{"toolboxes": {{"t": {{"description": "d", "mcpServers": {servers}}}}}}}"#);
        match parse(text.as_bytes(), Path::new("c.json"), Path::new("/cfg")) {
            Ok(mut loaded) => Ok((
                loaded.config.toolboxes.remove(0).servers,
                strings(&loaded.warnings),
            )),
            Err(e) => Err(strings(&e.problems)),
        }
    }

    fn errors(json: &str) -> Vec<String> {
        servers(json).err().unwrap_or_default()
    }

    #[test]
    #[cfg(feature = "remote")]
    fn every_spelling_of_a_remote_server() {
        use crate::config::RemoteKind::{self, Sse, StreamableHttp as H};
        let (list, warnings) = servers(
            r#"{
            "plain": {"url": "https://a.example/mcp"},
            "http": {"type": "http", "url": "https://a.example/mcp"},
            "dash": {"type": "streamable-http", "url": "https://a.example/mcp"},
            "camel": {"type": "streamableHttp", "url": "https://a.example/mcp"},
            "sse": {"type": "sse", "url": "https://a.example/sse"},
            "gemini": {"httpUrl": "https://a.example/mcp"},
            "windsurf": {"serverUrl": "https://a.example/mcp"},
            "child": {"type": "stdio", "command": "x"}}"#,
        )
        .unwrap();
        assert_eq!(warnings, Vec::<String>::new());
        let kinds: Vec<Option<RemoteKind>> = list
            .iter()
            .map(|s| s.remote.as_ref().map(|r| r.kind))
            .collect();
        assert_eq!(
            kinds,
            [
                Some(H),
                Some(H),
                Some(H),
                Some(H),
                Some(Sse),
                Some(H),
                Some(H),
                None
            ]
        );
        let remote = list[0].remote.as_ref().unwrap();
        assert_eq!(remote.url.source(), "https://a.example/mcp");
        assert!(remote.headers.is_empty() && remote.oauth.is_none());
        assert!(list[0].command.source().is_empty(), "no command");
    }

    #[test]
    #[cfg(feature = "remote")]
    fn headers_oauth_and_the_keys_a_remote_server_shares_with_a_child() {
        let (list, warnings) = servers(
            r#"{"s": {"url": "https://a.example/mcp?key=${KEY}",
                "headers": {"Authorization": "Bearer ${TOKEN}", "X-Team": "core"},
                "oauth": {"clientId": "wb", "clientSecret": "${SECRET}", "scopes": ["read", "write"],
                          "callbackPort": 33418, "redirectUri": "x"},
                "toolFilters": ["a"], "callTimeoutMs": 5000, "idleTimeoutMs": 600,
                "shareServers": false, "maxResultChars": 900, "disabled": true,
                "toolOverrides": {"a": {"title": "A"}}}}"#,
        )
        .unwrap();
        assert_eq!(
            warnings,
            ["toolboxes.t.mcpServers.s.oauth.redirectUri: unknown key ignored (known keys: clientId, clientSecret, scopes, callbackPort)"]
        );
        let s = &list[0];
        let remote = s.remote.as_ref().unwrap();
        let headers: Vec<(&str, &str)> = remote
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.source()))
            .collect();
        assert_eq!(
            headers,
            [("Authorization", "Bearer ${TOKEN}"), ("X-Team", "core")]
        );
        assert!(remote.headers[0].1.has_references());
        let oauth = remote.oauth.as_ref().unwrap();
        assert_eq!(oauth.client_id.as_deref(), Some("wb"));
        assert_eq!(
            oauth.client_secret.as_ref().map(|t| t.source()),
            Some("${SECRET}")
        );
        assert_eq!(oauth.scopes, ["read", "write"]);
        assert_eq!(oauth.callback_port, Some(33418));
        assert_eq!(s.call_timeout.as_millis(), 5000);
        assert_eq!(s.idle_timeout.map(|d| d.as_millis()), Some(600));
        assert!(!s.shared && s.disabled);
        assert_eq!(s.max_result_chars, Some(900));
        assert_eq!(s.tool_overrides.len(), 1);
    }

    #[test]
    fn a_type_nobody_speaks_lists_the_accepted_ones() {
        assert_eq!(
            // A build without remote servers also says so of the url.
            errors(r#"{"s": {"type": "websocket", "url": "https://a.example/"}}"#)[0],
            "toolboxes.t.mcpServers.s.type: expected \"stdio\" (a command), \"http\", \"streamable-http\", \"streamableHttp\" or \"sse\" (a url), found \"websocket\""
        );
        assert_eq!(
            errors(r#"{"s": {"type": 1, "command": "x"}}"#)[0],
            "toolboxes.t.mcpServers.s.type: expected \"stdio\" (a command), \"http\", \"streamable-http\", \"streamableHttp\" or \"sse\" (a url), found a number"
        );
    }

    #[test]
    #[cfg(feature = "remote")]
    fn command_and_url_are_one_or_the_other() {
        assert_eq!(
            errors(r#"{"s": {"command": "x", "url": "https://a.example/"}}"#),
            ["toolboxes.t.mcpServers.s.url: a server has either \"command\" (a child process) or a url (a remote server), not both"]
        );
        assert_eq!(
            errors(r#"{"s": {"toolFilters": []}}"#),
            ["toolboxes.t.mcpServers.s.command: required string is missing (or \"url\" for a remote server)"]
        );
        assert_eq!(
            errors(r#"{"s": {"url": "https://a.example/", "serverUrl": "https://b.example/"}}"#),
            ["toolboxes.t.mcpServers.s.serverUrl: \"url\" and \"serverUrl\" spell the same key: keep one"]
        );
        assert_eq!(
            errors(r#"{"s": {"type": "http", "command": "x"}}"#),
            ["toolboxes.t.mcpServers.s.type: is a remote server's type, which needs \"url\" (a command is \"type\": \"stdio\")"]
        );
        assert_eq!(
            errors(r#"{"s": {"type": "stdio", "url": "https://a.example/"}}"#),
            ["toolboxes.t.mcpServers.s.type: \"stdio\" is for a command; a server with a url is \"http\" or \"sse\""]
        );
        assert_eq!(
            errors(r#"{"s": {"type": "sse", "httpUrl": "https://a.example/"}}"#),
            ["toolboxes.t.mcpServers.s.type: \"httpUrl\" is always Streamable HTTP; for the legacy SSE transport write \"url\" with \"type\": \"sse\""]
        );
        assert_eq!(
            errors(r#"{"s": {"command": "x", "headers": {}, "oauth": {}}}"#),
            [
                "toolboxes.t.mcpServers.s.headers: applies to a remote server (\"url\"), not to a command",
                "toolboxes.t.mcpServers.s.oauth: applies to a remote server (\"url\"), not to a command",
            ]
        );
    }

    #[test]
    #[cfg(feature = "remote")]
    fn a_remote_server_has_no_process_keys() {
        let got = errors(
            r#"{"s": {"url": "https://a.example/", "args": ["a"], "env": {"A": "b"}, "cwd": ".", "inheritEnv": true}}"#,
        );
        let want: Vec<String> = ["args", "env", "cwd", "inheritEnv"]
            .iter()
            .map(|k| format!("toolboxes.t.mcpServers.s.{k}: applies to a command (a child process); a remote server (a url) has none"))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_url_without_references_must_parse() {
        assert_eq!(
            errors(r#"{"s": {"url": "ftp://a.example/"}}"#),
            ["toolboxes.t.mcpServers.s.url: unsupported URL scheme 'ftp' (http or https)"]
        );
        assert_eq!(
            errors(r#"{"s": {"url": "a.example/mcp"}}"#),
            ["toolboxes.t.mcpServers.s.url: 'a.example/mcp' is not an absolute URL (http:// or https://)"]
        );
        assert_eq!(
            errors(r#"{"s": {"url": ""}}"#),
            ["toolboxes.t.mcpServers.s.url: must not be empty"]
        );
        assert_eq!(
            errors(r#"{"s": {"url": "https://a.example/${"}}"#)[0],
            "toolboxes.t.mcpServers.s.url: unclosed '${' in \"https://a.example/${\""
        );
    }

    #[test]
    #[cfg(feature = "remote")]
    fn a_url_with_references_is_judged_when_expanded() {
        let (list, warnings) = servers(r#"{"s": {"url": "${BASE}/mcp"}}"#).unwrap();
        assert!(list[0].remote.is_some());
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    #[cfg(feature = "remote")]
    fn plain_http_beyond_loopback_is_a_warning() {
        let (_, warnings) = servers(
            r#"{"far": {"url": "http://mcp.example.com/mcp?k=${K}"},
                "near": {"url": "http://127.0.0.1:8080/mcp"},
                "local": {"url": "http://localhost/mcp"},
                "six": {"url": "http://[::1]:9/mcp"},
                "safe": {"url": "https://mcp.example.com/mcp"},
                "unknown": {"url": "http://${HOST}/mcp"}}"#,
        )
        .unwrap();
        assert_eq!(
            warnings,
            ["toolboxes.t.mcpServers.far.url: plain http to 'mcp.example.com': requests and their headers are sent unencrypted, and sign-in is refused over it; use https"]
        );
    }

    #[test]
    #[cfg(feature = "remote")]
    fn headers_must_be_sendable() {
        assert_eq!(
            errors(
                r#"{"s": {"url": "https://a.example/", "headers": {
                    "Bad Name": "x", "": "x", "X-A": "one\r\nX-Injected: two", "X-B": 3,
                    "x-team": "a", "X-Team": "b"}}}"#
            ),
            [
                "toolboxes.t.mcpServers.s.headers[\"Bad Name\"]: not a valid header name (letters, digits and !#$%&'*+-.^_`|~)",
                "toolboxes.t.mcpServers.s.headers[\"\"]: not a valid header name (letters, digits and !#$%&'*+-.^_`|~)",
                "toolboxes.t.mcpServers.s.headers.X-A: not a sendable header value (it holds a control character, or a space or tab at its start or end)",
                "toolboxes.t.mcpServers.s.headers.X-B: expected a string, found a number",
                "toolboxes.t.mcpServers.s.headers.X-Team: names header 'x-team' again (header names ignore case)",
            ]
        );
        assert_eq!(
            errors(r#"{"s": {"url": "https://a.example/", "headers": ["a"]}}"#),
            ["toolboxes.t.mcpServers.s.headers: expected an object, found an array"]
        );
    }

    #[test]
    #[cfg(feature = "remote")]
    fn oauth_values_are_checked() {
        assert_eq!(
            errors(
                r#"{"s": {"url": "https://a.example/", "oauth": {
                    "clientId": "", "clientSecret": 5, "scopes": ["a b", 1], "callbackPort": 70000}}}"#
            ),
            [
                "toolboxes.t.mcpServers.s.oauth.clientId: must not be empty",
                "toolboxes.t.mcpServers.s.oauth.clientSecret: expected a string, found a number",
                "toolboxes.t.mcpServers.s.oauth.scopes[0]: a scope is one word, without spaces",
                "toolboxes.t.mcpServers.s.oauth.scopes[1]: expected a string, found a number",
                "toolboxes.t.mcpServers.s.oauth.callbackPort: expected a port number from 1 to 65535, found 70000",
            ]
        );
        assert_eq!(
            errors(r#"{"s": {"url": "https://a.example/", "oauth": {"callbackPort": 0, "scopes": "x"}}}"#),
            [
                "toolboxes.t.mcpServers.s.oauth.callbackPort: expected a port number from 1 to 65535, found 0",
                "toolboxes.t.mcpServers.s.oauth.scopes: expected an array of strings, found a string",
            ]
        );
    }

    #[test]
    #[cfg(not(feature = "remote"))]
    fn a_build_without_remote_servers_says_so() {
        assert_eq!(
            errors(r#"{"s": {"url": "https://a.example/"}}"#),
            ["toolboxes.t.mcpServers.s.url: this build has no remote servers (built without the `remote` feature)"]
        );
    }
}
