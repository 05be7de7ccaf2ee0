//! A server as the workbench's config writes it (docs/reference.md §3, and
//! §11 for a remote one), built from a host's entry; the JSON it becomes, in
//! the order a person would write it; and what makes two servers the same
//! one (`Identity`: the same command, arguments and environment, or the same
//! URL), which both `import` (a server found in several hosts is imported
//! once) and `install --replace` (a host's server the workbench now holds is
//! removed from the host) go by. No IO.

use crate::config::ordered_json::Node;

/// How the workbench reaches the server.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        cwd: Option<String>,
    },
    Remote {
        /// The legacy HTTP+SSE transport rather than Streamable HTTP.
        sse: bool,
        url: String,
        headers: Vec<(String, String)>,
    },
}

/// One server's entry in the workbench's config, every text a template
/// (`${VAR}` references kept as references).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub transport: Transport,
    pub tool_filters: Option<Vec<String>>,
    pub startup_timeout_ms: Option<u64>,
    pub call_timeout_ms: Option<u64>,
    pub disabled: bool,
    /// §11's `oauth` object, as far as the host's settings map onto it.
    pub oauth: Vec<(String, Node)>,
}

/// What makes two entries one server. Env in name order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Identity {
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
    Remote {
        url: String,
    },
}

impl Entry {
    pub(crate) fn stdio(command: String) -> Entry {
        Entry::new(Transport::Stdio {
            command,
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
        })
    }

    pub(crate) fn remote(url: String, sse: bool) -> Entry {
        Entry::new(Transport::Remote {
            sse,
            url,
            headers: Vec::new(),
        })
    }

    fn new(transport: Transport) -> Entry {
        Entry {
            transport,
            tool_filters: None,
            startup_timeout_ms: None,
            call_timeout_ms: None,
            disabled: false,
            oauth: Vec::new(),
        }
    }

    pub(crate) fn is_remote(&self) -> bool {
        matches!(self.transport, Transport::Remote { .. })
    }

    pub(crate) fn identity(&self) -> Identity {
        match &self.transport {
            Transport::Stdio {
                command, args, env, ..
            } => {
                let mut env = env.clone();
                env.sort();
                Identity::Stdio {
                    command: command.clone(),
                    args: args.clone(),
                    env,
                }
            }
            Transport::Remote { url, .. } => Identity::Remote { url: url.clone() },
        }
    }

    /// The entry as the config's JSON.
    pub(crate) fn node(&self) -> Node {
        let mut out: Vec<(String, Node)> = Vec::new();
        let mut put = |key: &str, value: Node| out.push((key.to_string(), value));
        match &self.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                put("command", text(command));
                if !args.is_empty() {
                    put("args", Node::Array(args.iter().map(|a| text(a)).collect()));
                }
                if !env.is_empty() {
                    put("env", pairs(env));
                }
                if let Some(cwd) = cwd {
                    put("cwd", text(cwd));
                }
            }
            Transport::Remote { sse, url, headers } => {
                put("type", text(if *sse { "sse" } else { "http" }));
                put("url", text(url));
                if !headers.is_empty() {
                    put("headers", pairs(headers));
                }
            }
        }
        if !self.oauth.is_empty() {
            put("oauth", Node::Object(self.oauth.clone()));
        }
        if let Some(filters) = &self.tool_filters {
            put(
                "toolFilters",
                Node::Array(filters.iter().map(|f| text(f)).collect()),
            );
        }
        if let Some(ms) = self.startup_timeout_ms {
            put("startupTimeoutMs", Node::Number(ms.into()));
        }
        if let Some(ms) = self.call_timeout_ms {
            put("callTimeoutMs", Node::Number(ms.into()));
        }
        if self.disabled {
            put("disabled", Node::Bool(true));
        }
        Node::Object(out)
    }
}

fn text(s: &str) -> Node {
    Node::String(s.to_string())
}

fn pairs(pairs: &[(String, String)]) -> Node {
    Node::Object(pairs.iter().map(|(k, v)| (k.clone(), text(v))).collect())
}

/// The identity of a server entry of the workbench's config (as written,
/// before any validation: a remote entry counts though this build may not
/// load it); `None` for an entry that is neither.
pub(crate) fn identity_of(node: &Node) -> Option<Identity> {
    let strings = |key: &str| -> Vec<String> {
        match node.get(key) {
            Some(Node::Array(items)) => items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        }
    };
    if let Some(command) = node.get("command").and_then(Node::as_str) {
        let mut env: Vec<(String, String)> = node
            .get("env")
            .and_then(Node::entries)
            .unwrap_or_default()
            .iter()
            .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
            .collect();
        env.sort();
        return Some(Identity::Stdio {
            command: command.to_string(),
            args: strings("args"),
            env,
        });
    }
    ["url", "httpUrl", "serverUrl"]
        .iter()
        .find_map(|key| node.get(key).and_then(Node::as_str))
        .map(|url| Identity::Remote {
            url: url.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_config_shape_and_knows_a_server_again() {
        let mut stdio = Entry::stdio("npx".into());
        if let Transport::Stdio { args, env, .. } = &mut stdio.transport {
            args.push("-y".into());
            env.push(("B".into(), "2".into()));
            env.push(("A".into(), "${A}".into()));
        }
        stdio.tool_filters = Some(vec!["read".into()]);
        stdio.disabled = true;
        assert_eq!(
            serde_json::to_string(&stdio.node()).unwrap(),
            r#"{"command":"npx","args":["-y"],"env":{"B":"2","A":"${A}"},"toolFilters":["read"],"disabled":true}"#
        );
        let written: Node = serde_json::from_str(
            r#"{"env":{"A":"${A}","B":"2"},"args":["-y"],"command":"npx","cwd":"/x"}"#,
        )
        .unwrap();
        assert_eq!(
            identity_of(&written),
            Some(stdio.identity()),
            "env order and cwd do not count"
        );
        let mut remote = Entry::remote("https://mcp.example.com/mcp".into(), false);
        if let Transport::Remote { headers, .. } = &mut remote.transport {
            headers.push(("Authorization".into(), "Bearer ${TOKEN}".into()));
        }
        remote.call_timeout_ms = Some(5000);
        assert_eq!(
            serde_json::to_string(&remote.node()).unwrap(),
            r#"{"type":"http","url":"https://mcp.example.com/mcp","headers":{"Authorization":"Bearer ${TOKEN}"},"callTimeoutMs":5000}"#
        );
        let other: Node =
            serde_json::from_str(r#"{"serverUrl":"https://mcp.example.com/mcp"}"#).unwrap();
        assert_eq!(identity_of(&other), Some(remote.identity()));
        assert_eq!(identity_of(&Node::Object(Vec::new())), None);
    }
}
