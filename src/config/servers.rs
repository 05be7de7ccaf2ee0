//! The walk over one toolbox's `mcpServers`: each server's keys, checked and
//! turned into a `ServerConfig` (command and cwd anchored to the config's
//! folder, timeouts and sizes defaulted from the top level). How a server is
//! reached (a command, or a url and its keys) is judged in `remote`.

use super::checker::{child_path, valid_name, Checker, NAME_RULE};
use super::expand::{Anchor, Template};
use super::model::{
    ServerConfig, ToolFilter, ToolOverride, DEFAULT_CALL_TIMEOUT, DEFAULT_STARTUP_TIMEOUT,
    MAX_CALL_TIMEOUT_FACTOR,
};
use super::ordered_json::Node;
use super::remote::{Reach, CHILD_KEYS, URL_KEYS};
use std::time::Duration;

impl Checker {
    /// `toolOverrides`: `{"tool": {"description": "...", "title": "..."}}`.
    fn overrides(&mut self, node: &Node, path: &str) -> Vec<(String, ToolOverride)> {
        let mut out = Vec::new();
        let Some(entries) = self.object(node, path, &[]) else {
            return out;
        };
        for (name, value) in entries {
            let p = child_path(path, name);
            let Some(fields) = self.object(value, &p, &["description", "title"]) else {
                continue;
            };
            let mut over = ToolOverride::default();
            for (key, text) in fields {
                let slot = match key.as_str() {
                    "description" => &mut over.description,
                    "title" => &mut over.title,
                    _ => continue,
                };
                *slot = self.string(text, &child_path(&p, key));
            }
            if over.description.is_none() && over.title.is_none() {
                self.warning(
                    p,
                    "names neither \"description\" nor \"title\": nothing is replaced",
                );
            }
            out.push((name.clone(), over));
        }
        out
    }

    pub(super) fn servers(&mut self, node: &Node, path: &str) -> Vec<ServerConfig> {
        let mut out = Vec::new();
        let Some(entries) = self.object(node, path, &[]) else {
            return out;
        };
        for (name, value) in entries {
            let server_path = child_path(path, name);
            if !valid_name(name) {
                self.error(&server_path, NAME_RULE);
            }
            if let Some(server) = self.server(name, value, &server_path) {
                out.push(server);
            }
        }
        out
    }

    #[allow(clippy::expect_used, reason = "an empty template parses")]
    fn server(&mut self, name: &str, node: &Node, path: &str) -> Option<ServerConfig> {
        let entries = self.object(node, path, SERVER_KEYS)?;
        let errors_before = self.errors.len();
        let mut server = ServerConfig {
            name: name.to_string(),
            json_path: path.to_string(),
            command: Template::parse("").expect("an empty template parses"),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            tool_filter: ToolFilter::All,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            max_call_timeout: Duration::ZERO,
            idle_timeout: self.idle_timeout,
            disabled: false,
            inherit_env: false,
            shared: true,
            tool_overrides: Vec::new(),
            max_result_chars: self.max_result_chars,
            remote: None,
        };
        let mut reach = Reach::default();
        for (key, value) in entries {
            let p = child_path(path, key);
            if CHILD_KEYS.contains(&key.as_str()) {
                reach.child_keys.push(key);
            }
            match key.as_str() {
                "command" => {
                    reach.has_command = true;
                    if let Some(t) = self.path_template(value, &p) {
                        if t.source().trim().is_empty() {
                            self.error(&p, "must not be empty");
                        }
                        server.command = t.anchored(Anchor::Program(self.folder.clone()));
                    }
                }
                "args" => server.args = self.template_list(value, &p),
                "env" => server.env = self.env(value, &p),
                "cwd" => {
                    server.cwd = self
                        .path_template(value, &p)
                        .map(|t| t.anchored(Anchor::Dir(self.folder.clone())))
                }
                "toolFilters" => server.tool_filter = self.filters(value, &p),
                "startupTimeoutMs" => {
                    server.startup_timeout = self.timeout(value, &p, DEFAULT_STARTUP_TIMEOUT)
                }
                "callTimeoutMs" => {
                    server.call_timeout = self.timeout(value, &p, DEFAULT_CALL_TIMEOUT)
                }
                "maxCallTimeoutMs" => {
                    server.max_call_timeout = self.timeout(value, &p, Duration::ZERO)
                }
                "idleTimeoutMs" => server.idle_timeout = self.idle_timeout(value, &p),
                "disabled" => server.disabled = self.boolean(value, &p),
                "inheritEnv" => server.inherit_env = self.boolean(value, &p),
                "shareServers" => server.shared = self.boolean(value, &p),
                "toolOverrides" => server.tool_overrides = self.overrides(value, &p),
                "maxResultChars" => server.max_result_chars = self.result_chars(value, &p),
                "type" => reach.kind = Some(value),
                "headers" => reach.headers = Some(value),
                "oauth" => reach.oauth = Some(value),
                url if URL_KEYS.contains(&url) => reach.urls.push((url, value)),
                _ => {}
            }
        }
        server.remote = self.reach(path, &reach);
        if server.max_call_timeout.is_zero() {
            server.max_call_timeout = server.call_timeout * MAX_CALL_TIMEOUT_FACTOR;
        } else if server.max_call_timeout < server.call_timeout {
            self.error(
                &child_path(path, "maxCallTimeoutMs"),
                "must not be less than callTimeoutMs",
            );
        }
        (self.errors.len() == errors_before).then_some(server)
    }

    fn template_list(&mut self, node: &Node, path: &str) -> Vec<Template> {
        let Node::Array(items) = node else {
            self.error(
                path,
                format!("expected an array of strings, found {}", node.kind()),
            );
            return Vec::new();
        };
        items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| self.template(item, &format!("{path}[{i}]")))
            .collect()
    }

    fn env(&mut self, node: &Node, path: &str) -> Vec<(String, Template)> {
        let Some(entries) = self.object(node, path, &[]) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (key, value) in entries {
            let p = child_path(path, key);
            if key.is_empty() || key.contains('=') || key.contains('\0') {
                self.error(&p, "not a valid environment variable name");
            }
            if let Some(t) = self.template(value, &p) {
                out.push((key.clone(), t));
            }
        }
        out
    }

    fn filters(&mut self, node: &Node, path: &str) -> ToolFilter {
        let Node::Array(items) = node else {
            self.error(
                path,
                format!(
                    "expected an array of tool names (or [\"*\"]), found {}",
                    node.kind()
                ),
            );
            return ToolFilter::All;
        };
        let mut names = Vec::new();
        for (i, item) in items.iter().enumerate() {
            if let Some(name) = self.string(item, &format!("{path}[{i}]")) {
                names.push(name);
            }
        }
        if names.iter().any(|n| n == "*") {
            ToolFilter::All
        } else {
            ToolFilter::Only(names)
        }
    }
}

const SERVER_KEYS: &[&str] = &[
    "command",
    "args",
    "env",
    "cwd",
    "toolFilters",
    "startupTimeoutMs",
    "callTimeoutMs",
    "maxCallTimeoutMs",
    "idleTimeoutMs",
    "disabled",
    "inheritEnv",
    "shareServers",
    "type",
    "toolOverrides",
    "maxResultChars",
    "url",
    "httpUrl",
    "serverUrl",
    "headers",
    "oauth",
];
