//! One `[mcp_servers.NAME]` table of Codex's `config.toml` mapped onto the
//! workbench's keys: `command`, `args`, `env`, `cwd`; `env_vars` (names
//! Codex passes through: `"env": {"X": "${X}"}`); `url` (Streamable HTTP),
//! `bearer_token_env_var` (an `Authorization: Bearer ${VAR}` header),
//! `http_headers`, `env_http_headers` (`${VAR}` headers);
//! `startup_timeout_sec` / `startup_timeout_ms` and `tool_timeout_sec` (in
//! milliseconds); `enabled_tools` (`toolFilters`); `enabled = false`
//! (`disabled`); `oauth.client_id` and `scopes` (§11's `oauth`). Codex reads
//! no variables in its strings, so they are taken literally. What has no
//! equivalent is reported as dropped. No IO.

use super::entry::{Entry, Identity, Transport};
use super::json_entry::Mapped;
use super::toml::{Table, Value};
use super::vars::{escape, valid_name};
use crate::config::ordered_json::Node;

/// The identity of the server `value` (a table that maps), as `install`
/// compares it with the workbench's config.
pub(crate) fn identity(value: &Value) -> Option<Identity> {
    match value {
        Value::Table(t) => map(t).ok().map(|m| m.entry.identity()),
        _ => None,
    }
}

/// Whether a table's or key's `path` lies in server `name`'s table
/// (`mcp_servers.NAME` and below).
pub(crate) fn under(path: &[String], name: &str) -> bool {
    path.len() >= 2 && path[0] == "mcp_servers" && path[1] == name
}

/// Maps the server table `table`; the error says why it cannot be imported.
pub(crate) fn map(table: &Table) -> Result<Mapped, String> {
    let string = |key: &str| -> Result<Option<String>, String> {
        match table.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(escape(s))),
            Some(other) => Err(format!("{key}: expected a string, found {}", other.kind())),
        }
    };
    let mut entry = match (string("command")?, string("url")?) {
        (Some(command), None) => Entry::stdio(command),
        (None, Some(url)) => Entry::remote(url, false),
        (Some(_), Some(_)) => return Err("both \"command\" and \"url\" are given".into()),
        (None, None) => return Err("neither \"command\" nor \"url\" is given".into()),
    };
    let mut dropped = Vec::new();
    let mut skip = |key: &str, why: &str| dropped.push((key.to_string(), why.to_string()));
    for (key, value) in &table.entries {
        let key = key.as_str();
        let remote = entry.is_remote();
        match (key, &mut entry.transport) {
            ("command" | "url", _) => {}
            ("args", Transport::Stdio { args, .. }) => {
                *args = strings(value, key)?.iter().map(|a| escape(a)).collect();
            }
            ("env", Transport::Stdio { env, .. }) => env.extend(pairs(value, key)?),
            ("env_vars", Transport::Stdio { env, .. }) => {
                for name in env_var_names(value)? {
                    if !env.iter().any(|(k, _)| *k == name) {
                        env.push((name.clone(), format!("${{{name}}}")));
                    }
                }
            }
            ("cwd", Transport::Stdio { cwd, .. }) => match value {
                Value::String(s) => *cwd = Some(escape(s)),
                other => return Err(format!("cwd: expected a string, found {}", other.kind())),
            },
            ("bearer_token_env_var", Transport::Remote { headers, .. }) => {
                let name = var_name(value).ok_or_else(|| not_a_var(key))?;
                headers.push(("Authorization".into(), format!("Bearer ${{{name}}}")))
            }
            ("http_headers", Transport::Remote { headers, .. }) => {
                headers.extend(pairs(value, key)?)
            }
            ("env_http_headers", Transport::Remote { headers, .. }) => {
                headers.extend(env_headers(value, key)?)
            }
            ("startup_timeout_sec", _) => entry.startup_timeout_ms = Some(seconds(value, key)?),
            ("startup_timeout_ms", _) => {
                if table.get("startup_timeout_sec").is_none() {
                    entry.startup_timeout_ms = Some(millis(value, key)?);
                }
            }
            ("tool_timeout_sec", _) => entry.call_timeout_ms = Some(seconds(value, key)?),
            ("enabled_tools", _) => entry.tool_filters = Some(strings(value, key)?),
            ("enabled", _) => match value {
                Value::Bool(on) => entry.disabled = !on,
                other => {
                    return Err(format!(
                        "enabled: expected true or false, found {}",
                        other.kind()
                    ))
                }
            },
            ("scopes", Transport::Remote { .. }) => {
                let scopes = strings(value, key)?;
                entry.oauth.push((
                    "scopes".into(),
                    Node::Array(scopes.into_iter().map(Node::String).collect()),
                ));
            }
            ("oauth", Transport::Remote { .. }) => oauth(value, &mut entry.oauth, &mut skip),
            _ => skip(key, why_dropped(key, remote)),
        }
    }
    Ok(Mapped {
        entry,
        notes: Vec::new(),
        dropped,
        description: None,
    })
}

/// Keys with no equivalent in the workbench, and why each is dropped.
const DROPPED: &[(&[&str], &str)] = &[
    (
        &["disabled_tools"],
        "the workbench has no list of tools to hide: list the tools to keep in \"enabled_tools\" (toolFilters)",
    ),
    (
        &["bearer_token"],
        "a token written in the file is not imported: name its variable in bearer_token_env_var",
    ),
    (
        &["tools", "default_tools_approval_mode"],
        "the workbench asks for no approval; the host does",
    ),
    (
        &["required", "supports_parallel_tool_calls", "experimental_environment", "name"],
        "a Codex setting with no equivalent in the workbench",
    ),
];

/// Why `key` is dropped from an entry (`remote`: a remote server's).
fn why_dropped(key: &str, remote: bool) -> &'static str {
    if let Some((_, why)) = DROPPED.iter().find(|(keys, _)| keys.contains(&key)) {
        return why;
    }
    match key {
        "args" | "env" | "env_vars" | "cwd" if remote => {
            "the entry is a remote server, so its process settings do not apply"
        }
        _ => "not a setting the workbench knows",
    }
}

/// `env_http_headers`: each header with the variable that holds its value.
fn env_headers(value: &Value, key: &str) -> Result<Vec<(String, String)>, String> {
    let Value::Table(t) = value else {
        return Err(format!("{key}: expected a table, found {}", value.kind()));
    };
    let header = |(header, var): &(String, Value)| match var_name(var) {
        Some(name) => Ok((header.clone(), format!("${{{name}}}"))),
        None => Err(not_a_var(&format!("{key}.{header}"))),
    };
    t.entries.iter().map(header).collect()
}

/// The name of an environment variable, where `value` is one.
fn var_name(value: &Value) -> Option<&str> {
    match value {
        Value::String(name) if valid_name(name) => Some(name),
        _ => None,
    }
}

fn not_a_var(key: &str) -> String {
    format!("{key}: expected the name of an environment variable")
}

/// Codex's `[mcp_servers.NAME.oauth]` onto §11's `oauth`: `client_id`
/// (first); the rest is dropped.
fn oauth(value: &Value, out: &mut Vec<(String, Node)>, skip: &mut dyn FnMut(&str, &str)) {
    let Value::Table(t) = value else {
        return skip("oauth", "expected a table");
    };
    for (name, v) in &t.entries {
        match (name.as_str(), v) {
            ("client_id", Value::String(id)) => {
                out.insert(0, ("clientId".into(), Node::String(id.clone())))
            }
            _ => skip(
                &format!("oauth.{name}"),
                "not a sign-in setting the workbench knows",
            ),
        }
    }
}

fn strings(value: &Value, key: &str) -> Result<Vec<String>, String> {
    let fail = || format!("{key}: expected an array of strings");
    let Value::Array(items) = value else {
        return Err(fail());
    };
    items
        .iter()
        .map(|item| match item {
            Value::String(s) => Ok(s.clone()),
            _ => Err(fail()),
        })
        .collect()
}

/// A table of strings, taken literally.
fn pairs(value: &Value, key: &str) -> Result<Vec<(String, String)>, String> {
    let Value::Table(table) = value else {
        return Err(format!("{key}: expected a table, found {}", value.kind()));
    };
    table
        .entries
        .iter()
        .map(|(name, v)| match v {
            Value::String(s) => Ok((name.clone(), escape(s))),
            Value::Integer(n) => Ok((name.clone(), n.to_string())),
            Value::Bool(b) => Ok((name.clone(), b.to_string())),
            other => Err(format!(
                "{key}.{name}: expected a string, found {}",
                other.kind()
            )),
        })
        .collect()
}

/// `env_vars`: names, or `{name = "X", source = "local"}` tables.
fn env_var_names(value: &Value) -> Result<Vec<String>, String> {
    let Value::Array(items) = value else {
        return Err("env_vars: expected an array of names".into());
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let name = match item {
                Value::String(name) => Some(name),
                Value::Table(t) => match t.get("name") {
                    Some(Value::String(name)) => Some(name),
                    _ => None,
                },
                _ => None,
            };
            match name {
                Some(name) if valid_name(name) => Ok(name.clone()),
                _ => Err(format!(
                    "env_vars[{i}]: expected the name of an environment variable"
                )),
            }
        })
        .collect()
}

/// Seconds (integer or float) as milliseconds.
fn seconds(value: &Value, key: &str) -> Result<u64, String> {
    let secs = match value {
        Value::Integer(n) if *n >= 0 => *n as f64,
        Value::Float(f) if f.is_finite() && *f >= 0.0 => *f,
        _ => return Err(format!("{key}: expected a number of seconds")),
    };
    Ok((secs * 1000.0).round() as u64)
}

fn millis(value: &Value, key: &str) -> Result<u64, String> {
    match value {
        Value::Integer(n) if *n >= 0 => Ok(*n as u64),
        _ => Err(format!("{key}: expected a number of milliseconds")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosts::toml;

    fn mapped(text: &str) -> Result<Mapped, String> {
        let doc = toml::parse(text).unwrap();
        let Some(Value::Table(servers)) = doc.root.get("mcp_servers") else {
            panic!("no servers")
        };
        let Some((_, Value::Table(server))) = servers.entries.first() else {
            panic!("no server")
        };
        map(server)
    }

    fn json(m: &Mapped) -> String {
        serde_json::to_string(&m.entry.node()).unwrap()
    }

    #[test]
    fn stdio_keys() {
        let m = mapped(
            r#"[mcp_servers.gh]
command = "npx"
args = ["-y", "pkg", "${NOT_A_VAR}"]
env = { LITERAL = "a$b", TOKEN = "t" }
env_vars = ["GITHUB_TOKEN", { name = "OTHER", source = "local" }]
cwd = "/srv"
startup_timeout_sec = 12.5
tool_timeout_sec = 60
enabled_tools = ["search"]
disabled_tools = ["delete"]
enabled = false
required = true
"#,
        )
        .unwrap();
        assert_eq!(
            json(&m),
            r#"{"command":"npx","args":["-y","pkg","$${NOT_A_VAR}"],"env":{"LITERAL":"a$b","TOKEN":"t","GITHUB_TOKEN":"${GITHUB_TOKEN}","OTHER":"${OTHER}"},"cwd":"/srv","toolFilters":["search"],"startupTimeoutMs":12500,"callTimeoutMs":60000,"disabled":true}"#
        );
        let keys: Vec<&str> = m.dropped.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["disabled_tools", "required"]);
    }

    #[test]
    fn remote_keys() {
        let m = mapped(
            r#"[mcp_servers.linear]
url = "https://mcp.linear.app/mcp"
bearer_token_env_var = "LINEAR_TOKEN"
http_headers = { "X-Team" = "core" }
env_http_headers = { "X-Key" = "LINEAR_KEY" }
scopes = ["read"]
oauth = { client_id = "abc" }
startup_timeout_ms = 2000
"#,
        )
        .unwrap();
        assert_eq!(
            json(&m),
            r#"{"type":"http","url":"https://mcp.linear.app/mcp","headers":{"Authorization":"Bearer ${LINEAR_TOKEN}","X-Team":"core","X-Key":"${LINEAR_KEY}"},"oauth":{"clientId":"abc","scopes":["read"]},"startupTimeoutMs":2000}"#
        );
        let err = mapped("[mcp_servers.x]\nurl = \"u\"\ncommand = \"c\"\n").unwrap_err();
        assert_eq!(err, "both \"command\" and \"url\" are given");
        let err =
            mapped("[mcp_servers.x]\nurl = \"u\"\nbearer_token_env_var = \"a b\"\n").unwrap_err();
        assert!(
            err.starts_with("bearer_token_env_var: expected the name"),
            "{err}"
        );
        let err = mapped("[mcp_servers.x]\ncommand = \"c\"\nargs = [1]\n").unwrap_err();
        assert_eq!(err, "args: expected an array of strings");
    }
}
