//! What splits a shared server between sessions (docs/reference.md §8): a
//! shared fleet's sessions share a server's process when what the child
//! would get that matters is the same for both: the program its command
//! resolves to (through the session's `PATH`), its args, the config's `env`
//! and `cwd` after expansion, for an `inheritEnv` server everything it
//! inherits, for a remote server its reach. The allow-listed variables
//! (`PATH`, `HOME`, ...) do not by themselves split a server: a shared server
//! runs with those of the session that started it. Each part is hashed: the
//! values may be secrets, and only their names are ever shown.

use crate::config::expand::Vars;
use crate::config::{ServerConfig, ToolboxConfig};
use crate::fleet::launch;
use crate::fleet::toolbox::{Part, Variant};
use crate::sys;
use std::hash::{DefaultHasher, Hash, Hasher};

/// The variant of the `part` of toolbox `config` for a session with
/// environment `env`: a hash of the `start_parts` of each of its servers,
/// and of the session's `id` when a server is not shared. Two sessions share
/// a process only if it would start alike: one session's credentials never
/// serve another's calls.
pub(crate) fn variant(config: &ToolboxConfig, part: Part, env: &Vars, id: u64) -> Variant {
    let mut hasher = DefaultHasher::new();
    part.hash(&mut hasher);
    for server in config.servers.iter().filter(|s| part.has(s)) {
        start_parts(&config.name, server, env).hash(&mut hasher);
        if !server.shared {
            id.hash(&mut hasher);
        }
    }
    hasher.finish().max(1) // never BASE
}

/// What server `server` of toolbox `toolbox` would start with for a
/// session with environment `env`, part by part: its name for a message,
/// and a hash of its value. Unset variables count as unset.
pub(crate) fn start_parts(toolbox: &str, server: &ServerConfig, env: &Vars) -> Vec<(String, u64)> {
    let spec = match launch::resolve(toolbox, server, Some(env)) {
        Ok(spec) => spec,
        Err(unset) => return vec![("its unset variables".into(), hash(&unset))],
    };
    if let Some(remote) = &spec.remote {
        return vec![(
            "its url, headers or OAuth client".into(),
            hash(&remote.identity()),
        )];
    }
    let program = sys::program_path(&spec.program, &spec.env);
    let mut parts = vec![
        (
            "the program its command resolves to".to_string(),
            match &program {
                Some(file) => hash(file),
                None => hash(&spec.program),
            },
        ),
        ("its args".into(), hash(&spec.args)),
        ("its cwd".into(), hash(&spec.cwd)),
    ];
    for (name, _) in &server.env {
        parts.push((format!("its env.{name}"), hash(&spec.env.get(name))));
    }
    if server.inherit_env {
        parts.push((
            "the environment it inherits (inheritEnv)".into(),
            hash(&spec.env),
        ));
    }
    parts
}

/// Why sessions with environments `a` and `b` hold separate copies of
/// `server` of toolbox `toolbox`, in words; `None` when it would start alike
/// for both (they share it unless it is not shared).
pub(crate) fn why_separate(
    toolbox: &str,
    server: &ServerConfig,
    a: &Vars,
    b: &Vars,
) -> Option<String> {
    if !server.shared {
        return Some("it is not shared (\"shareServers\": false)".into());
    }
    let theirs = start_parts(toolbox, server, b);
    let differ: Vec<String> = start_parts(toolbox, server, a)
        .into_iter()
        .filter(|part| !theirs.contains(part))
        .map(|(name, _)| name)
        .collect();
    match differ.as_slice() {
        [] => None,
        [one] => Some(format!("{one} differs")),
        many => Some(format!("{} differ", many.join(", "))),
    }
}

fn hash(value: &impl Hash) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::config::one_server_toolbox as toolbox;
    use std::path::{Path, PathBuf};

    fn vars(pairs: &[(&str, &str)]) -> Vars {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn sessions_share_a_server_only_if_it_would_start_alike() {
        // PATH is allow-listed on every system.
        let alice = vars(&[("PATH", "/bin"), ("GH_TOKEN", "alice")]);
        let bob = vars(&[("PATH", "/bin"), ("GH_TOKEN", "bob")]);
        let same = |server: &str, a: &Vars, b: &Vars| {
            let config = toolbox(server);
            variant(&config, Part::All, a, 1) == variant(&config, Part::All, b, 2)
        };
        // GH_TOKEN reaches the child only through inheritEnv or a reference.
        assert!(same(r#"{"command": "gh"}"#, &alice, &bob));
        assert!(!same(
            r#"{"command": "gh", "inheritEnv": true}"#,
            &alice,
            &bob
        ));
        assert!(!same(
            r#"{"command": "gh", "env": {"T": "${GH_TOKEN}"}}"#,
            &alice,
            &bob
        ));
        // The allow-listed variables do not split it by themselves.
        let elsewhere = vars(&[("PATH", "/usr/bin"), ("GH_TOKEN", "alice")]);
        assert!(same(r#"{"command": "gh"}"#, &alice, &elsewhere));
        // A server that is not shared is each session's own.
        assert!(!same(
            r#"{"command": "gh", "shareServers": false}"#,
            &alice,
            &alice
        ));
    }

    #[test]
    #[cfg(feature = "remote")]
    fn sessions_share_a_remote_server_only_if_it_would_be_reached_alike() {
        let alice = vars(&[("PATH", "/bin"), ("GH_TOKEN", "alice")]);
        let bob = vars(&[("PATH", "/bin"), ("GH_TOKEN", "bob")]);
        let elsewhere = vars(&[("PATH", "/usr/bin"), ("GH_TOKEN", "alice")]);
        let same = |server: &str, a: &Vars, b: &Vars| {
            let config = toolbox(server);
            variant(&config, Part::All, a, 1) == variant(&config, Part::All, b, 2)
        };
        let plain = r#"{"url": "https://api.example/mcp"}"#;
        assert!(same(plain, &alice, &bob), "nothing of theirs reaches it");
        assert!(same(plain, &alice, &elsewhere), "no child environment");
        for server in [
            r#"{"url": "https://api.example/mcp?token=${GH_TOKEN}"}"#,
            r#"{"url": "https://api.example/mcp", "headers": {"Authorization": "Bearer ${GH_TOKEN}"}}"#,
            r#"{"url": "https://api.example/mcp", "oauth": {"clientSecret": "${GH_TOKEN}"}}"#,
        ] {
            assert!(!same(server, &alice, &bob), "{server}");
            assert!(same(server, &alice, &alice), "{server}");
        }
        // The transport and the url are part of the reach.
        let a = toolbox(plain);
        let b = toolbox(r#"{"type": "sse", "url": "https://api.example/mcp"}"#);
        let c = toolbox(r#"{"url": "https://api.example/other"}"#);
        let one = variant(&a, Part::All, &alice, 1);
        assert_ne!(one, variant(&b, Part::All, &alice, 1));
        assert_ne!(one, variant(&c, Part::All, &alice, 1));
    }

    /// A folder holding an executable `tool`.
    fn folder_with_tool(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("split-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(if cfg!(windows) { "tool.exe" } else { "tool" });
        std::fs::write(&file, b"").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        dir
    }

    /// A desktop's short PATH and a terminal's long one share a server when
    /// its command resolves to the same program; another program splits it,
    /// and `why_separate` says so.
    #[test]
    fn the_program_the_command_resolves_to_decides_not_the_path() {
        let one = folder_with_tool("one");
        let two = folder_with_tool("two");
        let empty = std::env::temp_dir().join("split-empty-folder");
        let path = |folders: &[&Path]| {
            std::env::join_paths(folders)
                .unwrap()
                .into_string()
                .unwrap()
        };
        let desktop = vars(&[("PATH", &path(&[&one]))]);
        let terminal = vars(&[("PATH", &path(&[&empty, &one, &two]))]);
        let other = vars(&[("PATH", &path(&[&two, &one]))]);
        let config = toolbox(r#"{"command": "tool", "args": ["-y"]}"#);
        let server = &config.servers[0];
        let variant = |env: &Vars, id| variant(&config, Part::All, env, id);
        assert_eq!(variant(&desktop, 1), variant(&terminal, 2));
        assert_eq!(why_separate("t", server, &desktop, &terminal), None);
        assert_ne!(variant(&desktop, 1), variant(&other, 2));
        assert_eq!(
            why_separate("t", server, &desktop, &other).as_deref(),
            Some("the program its command resolves to differs")
        );
        let with_env = toolbox(r#"{"command": "tool", "env": {"T": "${TOKEN}"}, "cwd": "${DIR}"}"#);
        let a = vars(&[("PATH", &path(&[&one])), ("TOKEN", "a"), ("DIR", "/a")]);
        let b = vars(&[("PATH", &path(&[&one])), ("TOKEN", "b"), ("DIR", "/b")]);
        assert_eq!(
            why_separate("t", &with_env.servers[0], &a, &b).as_deref(),
            Some("its cwd, its env.T differ")
        );
        let _ = std::fs::remove_dir_all(one);
        let _ = std::fs::remove_dir_all(two);
    }
}
