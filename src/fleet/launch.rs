//! Starting and stopping groups of servers, and the list of every live child so
//! that shutdown reaches all of them, including ones still in their handshake.
//!
//! Servers of one toolbox start in parallel (one scoped thread each), so an open
//! takes about as long as the slowest server. Stops also run in parallel. A
//! missing working directory is reported by its config path before the spawn.
//!
//! Shutdown runs once: the first trigger (stdin EOF or a signal) runs it; a
//! later one makes it hurry (`sys::hurry`) and waits for it to finish, so
//! no trigger ends the process before every process group is killed, nor
//! before what the servers left outside their groups is (`sys::kill_orphans`).

use crate::auth;
use crate::config::expand::{self, Template, Vars};
use crate::config::{child_path, header_value, RemoteConfig, ServerConfig, HEADER_VALUE_RULE};
use crate::downstream::era::{Definition, Era};
use crate::downstream::{self, Downstream, Lookup, Remote, Spec, Started};
use crate::lock;
use crate::net::Url;
use crate::sys;
use crate::wire::outbox::Outbox;
use crossbeam_channel::Sender;
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::thread;
use std::time::Instant;

pub(crate) struct Launcher {
    outbox: Arc<Outbox>,
    live: Mutex<Live>,
    /// The host's `logging/setLevel`, applied to every child that supports it.
    log_level: Mutex<Option<String>>,
    /// Where children report `notifications/tools/list_changed` (dynamic mode).
    changes: Option<Sender<Arc<Downstream>>>,
    /// Signalled when shutdown has stopped every child.
    shut_down: Condvar,
    /// The era each server definition was found to speak, for the rest of
    /// the run: a restart or a reopen goes straight to it (docs/reference.md §7).
    eras: Mutex<HashMap<Definition, Era>>,
    /// The sign-in's and the network's state, for remote servers.
    sign_ins: auth::SignIns,
}

#[derive(Default)]
struct Live {
    shutting_down: bool,
    done: bool,
    conns: Vec<Weak<Downstream>>,
}

impl Launcher {
    /// A launcher whose servers' output goes to `outbox`, their tool list
    /// changes to `changes`, and whose remote servers sign in and talk
    /// through `sign_ins`.
    pub(crate) fn new(
        outbox: Arc<Outbox>,
        changes: Option<Sender<Arc<Downstream>>>,
        sign_ins: auth::SignIns,
    ) -> Launcher {
        Launcher {
            sign_ins,
            changes,
            shut_down: Condvar::new(),
            outbox,
            live: Mutex::new(Live::default()),
            log_level: Mutex::new(None),
            eras: Mutex::new(HashMap::new()),
        }
    }

    /// The sign-in's and the network's state its remote servers use.
    #[cfg_attr(not(feature = "remote"), allow(dead_code))]
    pub(crate) fn sign_ins(&self) -> &auth::SignIns {
        &self.sign_ins
    }

    /// Starts every spec in parallel; results in the order of `specs`.
    pub(crate) fn start_all(&self, specs: Vec<Spec>) -> Vec<Result<Started, String>> {
        thread::scope(|scope| {
            let handles: Vec<_> = specs
                .into_iter()
                .map(|spec| {
                    let name = format!("start {}/{}", spec.toolbox, spec.server);
                    thread::Builder::new()
                        .name(name)
                        .spawn_scoped(scope, move || self.start(spec))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| match h {
                    Ok(h) => h.join().unwrap_or_else(|_| {
                        Err("internal error: the start thread panicked".into())
                    }),
                    Err(e) => Err(format!("cannot create a thread: {e}")),
                })
                .collect()
        })
    }

    fn start(&self, spec: Spec) -> Result<Started, String> {
        if let Some(problem) = cwd_problem(&spec) {
            return Err(problem);
        }
        let changes = self.changes.clone();
        let definition = Definition::of(&spec);
        let known = lock(&self.eras).get(&definition).cloned();
        let outbox = Arc::clone(&self.outbox);
        let sign_ins = &self.sign_ins;
        let started = downstream::start(spec, outbox, changes, known.as_ref(), sign_ins, |conn| {
            let mut live = lock(&self.live);
            live.conns.retain(|w| w.strong_count() > 0);
            live.conns.push(Arc::downgrade(conn));
            !live.shutting_down
        })?;
        if known.as_ref() != Some(&started.era) {
            lock(&self.eras).insert(definition, started.era.clone());
        }
        if let Some(level) = &*lock(&self.log_level) {
            started.conn.set_log_level(level);
        }
        Ok(started)
    }

    /// Records the host's log level and passes it to every live child.
    pub(crate) fn set_log_level(&self, level: &str) {
        *lock(&self.log_level) = Some(level.to_string());
        let conns: Vec<Arc<Downstream>> = {
            let live = lock(&self.live);
            live.conns.iter().filter_map(|w| w.upgrade()).collect()
        };
        for conn in conns {
            conn.set_log_level(level);
        }
    }

    /// Every live child, whatever toolbox it serves (or served: a retiring
    /// one still runs its calls).
    pub(crate) fn live_conns(&self) -> Vec<Arc<Downstream>> {
        let live = lock(&self.live);
        live.conns.iter().filter_map(Weak::upgrade).collect()
    }

    /// Stops every live child, in parallel, and refuses new ones. The host
    /// gets no more messages: it is leaving, and may no longer read them. A
    /// second call hurries the first and returns when it is done.
    pub(crate) fn shutdown(&self) {
        self.outbox.close();
        let conns: Vec<Arc<Downstream>> = {
            let mut live = lock(&self.live);
            if live.shutting_down {
                sys::hurry();
                while !live.done {
                    live = self.shut_down.wait(live).unwrap_or_else(|p| p.into_inner());
                }
                return;
            }
            live.shutting_down = true;
            live.conns.drain(..).filter_map(|w| w.upgrade()).collect()
        };
        stop_all(&conns, "");
        sys::kill_orphans();
        lock(&self.live).done = true;
        self.shut_down.notify_all();
    }
}

/// Stops `conns` in parallel (each child's thread runs its own stop
/// sequence); `in_flight` is the text for calls still running (`{tool}` is
/// replaced by the tool's name).
pub(crate) fn stop_all(conns: &[Arc<Downstream>], in_flight: &str) {
    for conn in conns {
        conn.ask_to_stop(in_flight);
    }
    let deadline = Instant::now() + downstream::STOP_LIMIT;
    for conn in conns {
        conn.stop_by(in_flight, deadline);
    }
}

/// Why the spec's working directory cannot be used, if it cannot: otherwise
/// the spawn would fail as if the command were missing ("No such file or
/// directory").
fn cwd_problem(spec: &Spec) -> Option<String> {
    let (cwd, display) = (spec.cwd.as_ref()?, spec.cwd_display.as_deref()?);
    match std::fs::metadata(cwd) {
        Ok(meta) if meta.is_dir() => None,
        Ok(_) => Some(format!("working directory {display} is not a directory")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Some(format!("working directory {display} does not exist"))
        }
        Err(e) => Some(format!("working directory {display} cannot be used: {e}")),
    }
}

/// Resolves a server's config into a start spec, expanding with `env` (a
/// shared fleet's session's) or else the workbench's own environment; the
/// errors name every unset variable with its JSON path.
pub(crate) fn resolve(
    toolbox: &str,
    server: &ServerConfig,
    env: Option<&Vars>,
) -> Result<Spec, Vec<String>> {
    let lookup = |name: &str| match env {
        Some(vars) => vars.get(name).cloned(),
        None => std::env::var(name).ok(),
    };
    let all_vars = || -> Box<dyn Iterator<Item = (String, String)>> {
        match env {
            Some(vars) => Box::new(vars.clone().into_iter()),
            None => Box::new(std::env::vars()),
        }
    };
    let mut errors = Vec::new();
    let mut expand = |t: &Template, path: String| {
        t.expand(&lookup).unwrap_or_else(|name| {
            errors.push(format!(
                "environment variable '{name}' is not set ({}{path})",
                server.json_path
            ));
            String::new()
        })
    };
    if let Some(remote) = &server.remote {
        let remote = resolve_remote(&server.json_path, remote, &lookup, &mut expand);
        return match remote {
            Ok(remote) if errors.is_empty() => Ok(remote_spec(toolbox, server, remote)),
            Ok(_) => Err(errors),
            Err(problems) => Err(errors.into_iter().chain(problems).collect()),
        };
    }
    let program = expand(&server.command, ".command".into());
    let args: Vec<String> = server
        .args
        .iter()
        .enumerate()
        .map(|(i, a)| expand(a, format!(".args[{i}]")))
        .collect();
    let own: Vec<(String, String)> = server
        .env
        .iter()
        .map(|(k, v)| (k.clone(), expand(v, format!(".env.{k}"))))
        .collect();
    let cwd = server.cwd.as_ref().map(|c| expand(c, ".cwd".into()));
    if !errors.is_empty() {
        return Err(errors);
    }
    let cwd_display = server.cwd.as_ref().map(|c| {
        let written = format!("'{}' ({}.cwd", c.source(), server.json_path);
        match cwd.as_deref() {
            // Where it looked, unless that would show an expanded value.
            Some(resolved) if !c.has_references() && resolved != c.source() => {
                format!("{written}, which is '{resolved}')")
            }
            _ => format!("{written})"),
        }
    });
    // What a start that finds no program may show (`downstream::Lookup`).
    let path_secret = server
        .env
        .iter()
        .find(|(name, template)| {
            let path = if cfg!(windows) {
                name.eq_ignore_ascii_case("PATH")
            } else {
                name == "PATH"
            };
            path && template.has_references()
        })
        .map(|(name, _)| format!("{}.env.{name}", server.json_path));
    let shown = Lookup {
        command_secret: server.command.has_references(),
        path_secret,
    };
    Ok(Spec {
        toolbox: toolbox.to_string(),
        server: server.name.clone(),
        program,
        args,
        env: expand::child_env(&lookup, all_vars(), server.inherit_env, &own),
        cwd,
        command_display: server.command.source().to_string(),
        cwd_display,
        lookup: shown,
        startup_timeout: server.startup_timeout,
        call_timeout: server.call_timeout,
        max_call_timeout: server.max_call_timeout,
        max_result_chars: server.max_result_chars,
        remote: None,
    })
}

/// A remote server's reach with its references expanded by `expand` (which
/// records unset variables); the errors are the expanded values that cannot
/// be used, said without them (they may be secrets).
fn resolve_remote(
    json_path: &str,
    remote: &RemoteConfig,
    lookup: &dyn Fn(&str) -> Option<String>,
    expand: &mut impl FnMut(&Template, String) -> String,
) -> Result<Remote, Vec<String>> {
    let mut problems = Vec::new();
    let url = expand(&remote.url, ".url".into());
    let hidden = remote.url.references(lookup);
    let headers: Vec<(String, String)> = remote
        .headers
        .iter()
        .map(|(name, value)| {
            let path = child_path(".headers", name);
            let expanded = expand(value, path.clone());
            if !header_value(&expanded) {
                // The expanded value is a secret: the path names it.
                problems.push(format!(
                    "{json_path}{path} is not a sendable header value once its variables are expanded ({HEADER_VALUE_RULE})"
                ));
            }
            (name.clone(), expanded)
        })
        .collect();
    let oauth = remote.oauth.clone().unwrap_or_default();
    let client_secret = oauth
        .client_secret
        .as_ref()
        .map(|secret| expand(secret, ".oauth.clientSecret".into()));
    // An unset variable leaves the URL empty: that error is already said.
    if remote.url.has_references() && !url.is_empty() {
        // Url's reasons quote the URL, which is now a secret.
        if Url::parse(&url).is_err() {
            problems.push(format!(
                "{json_path}.url ('{}') does not expand to a usable http:// or https:// URL",
                remote.url.source()
            ));
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Remote {
        url,
        url_display: remote.url.source().to_string(),
        hidden,
        kind: remote.kind,
        headers,
        oauth: auth::Client {
            client_id: oauth.client_id,
            client_secret,
            scopes: oauth.scopes,
            callback_port: oauth.callback_port,
        },
    })
}

/// The spec of a remote server: no program, arguments, environment or folder;
/// the url as written stands where a command would be shown.
fn remote_spec(toolbox: &str, server: &ServerConfig, remote: Remote) -> Spec {
    Spec {
        toolbox: toolbox.to_string(),
        server: server.name.clone(),
        program: String::new(),
        args: Vec::new(),
        env: Default::default(),
        cwd: None,
        command_display: remote.url_display.clone(),
        cwd_display: None,
        lookup: Lookup::default(),
        startup_timeout: server.startup_timeout,
        call_timeout: server.call_timeout,
        max_call_timeout: server.max_call_timeout,
        max_result_chars: server.max_result_chars,
        remote: Some(remote),
    }
}

#[cfg(all(test, feature = "remote"))]
mod tests {
    use super::*;
    use crate::config::one_server_toolbox;
    use crate::config::RemoteKind;
    use crate::downstream::era::Definition;

    fn server(json: &str) -> ServerConfig {
        one_server_toolbox(json).servers.remove(0)
    }

    fn vars(pairs: &[(&str, &str)]) -> Vars {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_remote_server_resolves_to_its_reach_and_no_program() {
        let s = server(
            r#"{"type": "sse", "url": "https://h.example/sse?key=${KEY}",
                "headers": {"Authorization": "Bearer ${TOKEN}"},
                "oauth": {"clientId": "wb", "clientSecret": "${SECRET:-none}", "scopes": ["r"], "callbackPort": 4000}}"#,
        );
        let env = vars(&[("KEY", "k1"), ("TOKEN", "t1"), ("PATH", "/bin")]);
        let spec = resolve("t", &s, Some(&env)).unwrap();
        assert!(spec.program.is_empty() && spec.args.is_empty());
        assert!(spec.env.is_empty(), "no child environment: {:?}", spec.env);
        assert_eq!(spec.cwd, None);
        assert_eq!(spec.command_display, "https://h.example/sse?key=${KEY}");
        let remote = spec.remote.as_ref().unwrap();
        assert_eq!(remote.url, "https://h.example/sse?key=k1");
        assert_eq!(remote.url_display, "https://h.example/sse?key=${KEY}");
        assert_eq!(remote.kind, RemoteKind::Sse);
        assert_eq!(
            remote.headers,
            [("Authorization".to_string(), "Bearer t1".to_string())]
        );
        let client = &remote.oauth;
        assert_eq!(client.client_id.as_deref(), Some("wb"));
        assert_eq!(client.client_secret.as_deref(), Some("none"));
        assert_eq!(
            (client.scopes.as_slice(), client.callback_port),
            (&["r".to_string()][..], Some(4000))
        );
        // Its Debug shows no expanded value.
        let shown = format!("{spec:?}");
        assert!(!shown.contains("k1") && !shown.contains("t1"), "{shown}");
        // A command's spec has no reach.
        assert!(resolve("t", &server(r#"{"command": "x"}"#), Some(&env))
            .unwrap()
            .remote
            .is_none());
    }

    #[test]
    fn an_unset_variable_fails_with_its_path_and_a_bad_expansion_without_its_value() {
        let s = server(
            r#"{"url": "${BASE}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}", "X-Trace": "${TRACE}"},
                "oauth": {"clientSecret": "${SECRET}"}}"#,
        );
        let errors = resolve("t", &s, Some(&vars(&[("TRACE", "x")]))).unwrap_err();
        assert_eq!(
            errors,
            [
                "environment variable 'BASE' is not set (toolboxes.t.mcpServers.s.url)",
                "environment variable 'TOKEN' is not set (toolboxes.t.mcpServers.s.headers.Authorization)",
                "environment variable 'SECRET' is not set (toolboxes.t.mcpServers.s.oauth.clientSecret)",
            ]
        );
        let planted = vars(&[
            ("BASE", "ftp://planted-secret"),
            ("TOKEN", "planted\r\nX-Evil: 1"),
            ("TRACE", "x"),
            ("SECRET", "s"),
        ]);
        let errors = resolve("t", &s, Some(&planted)).unwrap_err();
        assert_eq!(
            errors,
            [
                "toolboxes.t.mcpServers.s.headers.Authorization is not a sendable header value once its variables are expanded (it holds a control character, or a space or tab at its start or end)",
                "toolboxes.t.mcpServers.s.url ('${BASE}/mcp') does not expand to a usable http:// or https:// URL",
            ]
        );
        assert!(!errors.concat().contains("planted"));
    }

    #[test]
    fn an_expanded_header_value_holds_no_control_byte_and_is_not_shown() {
        let s = server(r#"{"url": "https://h.example/mcp", "headers": {"X-Key": "k ${KEY}"}}"#);
        let resolved = |key: &str| resolve("t", &s, Some(&vars(&[("KEY", key)])));
        // Spaces and tabs between visible characters, and non-ASCII, are sendable.
        let remote = resolved("a \tb\u{e9}").unwrap().remote.unwrap();
        assert_eq!(remote.headers[0].1, "k a \tb\u{e9}");
        for planted in [
            "planted\u{b}1",
            "planted\u{7f}",
            "planted\u{1}",
            "planted\t",
        ] {
            let errors = resolved(planted).unwrap_err();
            assert_eq!(
                errors,
                ["toolboxes.t.mcpServers.s.headers.X-Key is not a sendable header value once its variables are expanded (it holds a control character, or a space or tab at its start or end)"],
                "{planted:?}"
            );
            assert!(!errors.concat().contains("planted"));
        }
    }

    #[test]
    fn the_era_is_kept_per_reach() {
        let spec = |json: &str, token: &str| {
            resolve("t", &server(json), Some(&vars(&[("TOKEN", token)]))).unwrap()
        };
        let a = r#"{"url": "https://h.example/mcp", "headers": {"Authorization": "${TOKEN}"}}"#;
        let b = r#"{"url": "https://h.example/other", "headers": {"Authorization": "${TOKEN}"}}"#;
        assert_eq!(Definition::of(&spec(a, "1")), Definition::of(&spec(a, "1")));
        assert_ne!(Definition::of(&spec(a, "1")), Definition::of(&spec(a, "2")));
        assert_ne!(Definition::of(&spec(a, "1")), Definition::of(&spec(b, "1")));
    }

    #[cfg(feature = "remote")]
    #[test]
    fn a_remote_server_that_cannot_be_reached_is_named_as_written() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = format!("http://127.0.0.1:{port}/mcp?k=${{K}}");
        let spec = resolve(
            "t",
            &server(&format!(r#"{{"url": "{url}"}}"#)),
            Some(&vars(&[("K", "planted")])),
        )
        .unwrap();
        let launcher = Launcher::new(
            Arc::new(Outbox::new(Box::new(std::io::sink()))),
            None,
            auth::SignIns::default(),
        );
        let results = launcher.start_all(vec![spec]);
        let Err(why) = &results[0] else {
            panic!("started")
        };
        assert_eq!(
            why,
            &format!("{url}: the connection was refused (is the server running?)")
        );
    }
}
