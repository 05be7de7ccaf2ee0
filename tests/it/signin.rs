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
