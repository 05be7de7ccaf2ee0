//! The catalog's name for a server definition: the SHA-256 of its expanded
//! command, arguments, own environment, working directory and `inheritEnv`,
//! or of a remote server's transport, expanded url and headers
//! (docs/reference.md §9). Two toolboxes running the same definition share a
//! listing; a changed definition (or a changed `${VAR}`) is a new one. The
//! values go into the hash only, never into the catalog in clear.
//!
//! No IO: the environment comes through a lookup.

use crate::config::expand::Vars;
use crate::config::{RemoteConfig, ServerConfig};
use crate::pins::sha256;
use serde_json::json;

/// The key of `server`'s definition, or `None` when a variable it uses is
/// unset (it cannot start, so it has no listing).
pub(crate) fn of(server: &ServerConfig, lookup: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    if let Some(remote) = &server.remote {
        return remote_key(remote, lookup);
    }
    let command = server.command.expand(lookup).ok()?;
    let args = server
        .args
        .iter()
        .map(|a| a.expand(lookup))
        .collect::<Result<Vec<_>, _>>()
        .ok()?;
    let mut env = server
        .env
        .iter()
        .map(|(k, v)| Some((k.clone(), v.expand(lookup).ok()?)))
        .collect::<Option<Vec<_>>>()?;
    env.sort_unstable();
    let cwd = match &server.cwd {
        Some(cwd) => Some(cwd.expand(lookup).ok()?),
        None => None,
    };
    let definition = json!([1, command, args, env, cwd, server.inherit_env]);
    Some(sha256::hex(definition.to_string().as_bytes()))
}

/// The key of a remote server: its transport, expanded url and headers
/// (names, which HTTP reads in any case, and values). What signs it in
/// changes no listing, so the OAuth client is left out.
fn remote_key(remote: &RemoteConfig, lookup: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let url = remote.url.expand(lookup).ok()?;
    let mut headers = remote
        .headers
        .iter()
        .map(|(k, v)| Some((k.to_ascii_lowercase(), v.expand(lookup).ok()?)))
        .collect::<Option<Vec<_>>>()?;
    headers.sort_unstable();
    let definition = json!([2, remote.kind.name(), url, headers]);
    Some(sha256::hex(definition.to_string().as_bytes()))
}

/// The key of `server` expanded with `env` (a shared fleet's session's), or
/// else the workbench's own environment: as `launch::resolve` expands it.
pub(crate) fn expanded(server: &ServerConfig, env: Option<&Vars>) -> Option<String> {
    match env {
        Some(vars) => of(server, &|name| vars.get(name).cloned()),
        None => of(server, &|name| std::env::var(name).ok()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(json: &str) -> ServerConfig {
        crate::config::one_server_toolbox(json).servers.remove(0)
    }

    #[test]
    fn the_key_follows_the_expanded_definition_and_hides_values() {
        let s = server(r#"{"command": "x", "env": {"TOKEN": "${SECRET}"}}"#);
        let with =
            |value: &'static str| move |name: &str| (name == "SECRET").then(|| value.to_string());
        let a = of(&s, &with("one")).unwrap();
        assert_eq!(a.len(), 64);
        assert!(!a.contains("one"));
        assert_eq!(of(&s, &with("one")), Some(a.clone()));
        assert_ne!(of(&s, &with("two")), Some(a.clone()));
        assert_eq!(of(&s, &|_| None), None, "an unset variable: no key");
        // Filters and timeouts do not change the process: same key.
        let filtered = server(
            r#"{"command": "x", "env": {"TOKEN": "${SECRET}"}, "toolFilters": ["a"], "callTimeoutMs": 5}"#,
        );
        assert_eq!(of(&filtered, &with("one")), Some(a));
        let other = server(r#"{"command": "x", "args": ["y"], "env": {"TOKEN": "${SECRET}"}}"#);
        assert_ne!(of(&other, &with("one")), of(&s, &with("one")));
    }

    #[test]
    #[cfg(feature = "remote")]
    fn a_remote_key_follows_the_url_and_headers_and_hides_them() {
        let with =
            |value: &'static str| move |name: &str| (name == "SECRET").then(|| value.to_string());
        let in_url = server(r#"{"url": "https://h.example/mcp?key=${SECRET}"}"#);
        let a = of(&in_url, &with("planted-value")).unwrap();
        assert!(!a.contains("planted-value"));
        assert_eq!(of(&in_url, &with("planted-value")), Some(a.clone()));
        assert_ne!(of(&in_url, &with("other")), Some(a.clone()));
        assert_eq!(of(&in_url, &|_| None), None, "an unset variable: no key");
        let header = |value: &str| {
            server(&format!(
                r#"{{"url": "https://h.example/mcp", "headers": {{"Authorization": "Bearer {value}"}}}}"#
            ))
        };
        let none = |_: &str| None;
        assert_ne!(of(&header("a"), &none), of(&header("b"), &none));
        let sse = server(r#"{"type": "sse", "url": "https://h.example/mcp?key=${SECRET}"}"#);
        assert_ne!(
            of(&sse, &with("planted-value")),
            Some(a.clone()),
            "the transport counts"
        );
        // The url written as a command's argument is another definition.
        let child = server(r#"{"command": "https://h.example/mcp?key=${SECRET}"}"#);
        assert_ne!(of(&child, &with("planted-value")), Some(a));
    }
}
