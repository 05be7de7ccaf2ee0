//! `mcp-workbench login` and `logout` as a person runs them: what they
//! refuse (a server that is not remote, a name that is not in the config, a
//! target that is not `TOOLBOX/SERVER`), with the exit codes of a usage or
//! config error. The sign-in itself is tested against an authorization
//! server in `src/auth/` (its end-to-end tests).

use crate::harness::*;
use serde_json::json;
use std::path::Path;

/// Runs the workbench with `args` in `dir`, with a state folder of its own:
/// exit code, stdout, stderr.
fn run(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = workbench_in(dir)
        .args(args)
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("HOME", dir.join("home"))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn login_and_logout_refuse_what_is_not_a_remote_server() {
    let config =
        json!({"toolboxes": {"dev": toolbox(json!({"files": fake("never-started.json")}))}});
    let dir = case_dir("signin-refusals", &config, &[]);
    let (code, out, err) = run(&dir, &["login", "dev/files", "--config", "config.json"]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert_eq!(
        out,
        "error: server 'files' (toolbox 'dev') is not a remote server (it has a command, not a url): there is nothing to sign in to\n",
        "{err}"
    );
    let (code, out, err) = run(&dir, &["logout", "dve/files", "--config", "config.json"]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert_eq!(
        out, "error: there is no toolbox 'dve' in the config; did you mean 'dev'?\n",
        "{err}"
    );
    let (code, out, err) = run(&dir, &["login", "dev/file", "--config", "config.json"]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert_eq!(
        out, "error: there is no server 'file' in toolbox 'dev'; did you mean 'files'?\n",
        "{err}"
    );
    assert!(!dir.join("state").exists(), "nothing was written");
}

#[test]
fn login_needs_one_toolbox_and_server() {
    let config =
        json!({"toolboxes": {"dev": toolbox(json!({"files": fake("never-started.json")}))}});
    let dir = case_dir("signin-usage", &config, &[]);
    let (code, out, err) = run(&dir, &["login", "--config", "config.json"]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(
        err.starts_with("error: login needs TOOLBOX/SERVER"),
        "{err}"
    );
    let (code, _, err) = run(&dir, &["logout", "dev", "--config", "config.json"]);
    assert_eq!(code, Some(2));
    assert!(
        err.starts_with("error: logout: 'dev' is not TOOLBOX/SERVER"),
        "{err}"
    );
    let (code, _, err) = run(&dir, &["check", "--no-browser", "--config", "config.json"]);
    assert_eq!(code, Some(2));
    assert!(
        err.starts_with("error: --no-browser applies to login"),
        "{err}"
    );
}

/// A token file as a sign-in leaves it, for the server at `resource`.
fn plant_tokens(dir: &Path, resource: &str, expires_in: u64) -> std::path::PathBuf {
    let folder = dir.join("state/mcp-workbench/oauth/tokens");
    std::fs::create_dir_all(&folder).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let file = folder.join("0123456789abcdef0123456789abcdef.json");
    let tokens = json!({
        "issuer": "http://127.0.0.1:9", "resource": resource,
        "token_endpoint": "http://127.0.0.1:9/token", "client_id": "c1", "registered": true,
        "auth_method": "none", "access_token": "secret-access-token", "refresh_token": "secret-refresh-token",
        "obtained_at": now, "expires_at": now + expires_in,
    });
    std::fs::write(&file, tokens.to_string()).unwrap();
    file
}

#[test]
fn check_shows_a_stored_sign_in_and_logout_deletes_it() {
    let config = json!({"toolboxes": {"work": toolbox(json!({"remote": {"url": "http://127.0.0.1:9/mcp"}}))}});
    let dir = case_dir("signin-logout", &config, &[]);
    let (code, out, err) = run(&dir, &["logout", "work/remote", "--config", "config.json"]);
    assert_eq!(
        (code, out.as_str()),
        (
            Some(0),
            "No sign-in is stored for work/remote: nothing to delete\n"
        ),
        "{err}"
    );

    let file = plant_tokens(&dir, "http://127.0.0.1:9/mcp", 3030);
    let (_, out, err) = run(&dir, &["check", "--config", "config.json"]);
    assert!(
        out.contains("work/remote: Streamable HTTP http://127.0.0.1:9/mcp, sign-in: signed in at http://127.0.0.1:9, the access token expires in 50 min\n")
            || out.contains("the access token expires in 49 min\n"),
        "{out}{err}"
    );
    assert!(
        !out.contains("secret-") && !err.contains("secret-"),
        "no token shown: {out}{err}"
    );

    let (code, out, err) = run(&dir, &["logout", "work/remote", "--config", "config.json"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let folder = dir.join("state/mcp-workbench/oauth/tokens");
    assert_eq!(
        out,
        format!(
            "Signed out of work/remote: deleted its tokens from http://127.0.0.1:9 (in {})\n",
            folder.display()
        )
    );
    assert!(!file.exists());
    let (_, out, _) = run(&dir, &["check", "--config", "config.json"]);
    assert!(
        out.contains("work/remote: Streamable HTTP http://127.0.0.1:9/mcp\n"),
        "{out}"
    );
}
