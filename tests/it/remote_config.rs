//! Remote servers as the config and the commands see them (docs/reference.md
//! §3.6): a `url` server is checked, resolved, reported by `check` and opened
//! beside a child, and a secret planted in its url or a header reaches no
//! output, log or file. The HTTP transports' own behaviour is tested with
//! them.

use crate::harness::*;
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};

const URL_SECRET: &str = "planted-url-secret-1f3a";
const HEADER_SECRET: &str = "planted-header-secret-9c2e";
/// Nothing listens on port 1 of loopback.
const URL: &str = "http://127.0.0.1:1/mcp?key=${TOKEN}";

/// The child's script: one tool.
fn near() -> (&'static str, Value) {
    ("near.json", json!({"tools": [tool("ping", json!({}))]}))
}

/// A toolbox with a remote server whose url and header hold the planted
/// secrets, beside a child that lists a tool (so the catalog is written).
fn config() -> Value {
    json!({"pinTools": true, "toolboxes": {"t": toolbox(json!({
        "far": {"url": URL, "headers": {"Authorization": "Bearer ${HEADER_TOKEN}"}},
        "near": fake("near.json"),
    }))}})
}

/// The environment: the secrets, and the cache and state folders in `dir`.
fn env(dir: &Path) -> Vec<(&'static str, String)> {
    vec![
        ("TOKEN", URL_SECRET.to_string()),
        ("HEADER_TOKEN", HEADER_SECRET.to_string()),
        ("HOME", dir.display().to_string()),
        ("XDG_CACHE_HOME", dir.join("cache").display().to_string()),
        ("XDG_STATE_HOME", dir.join("state").display().to_string()),
        ("LOCALAPPDATA", dir.join("local").display().to_string()),
    ]
}

/// Every file below `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(folder) = todo.pop() {
        for entry in fs::read_dir(&folder).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}

fn assert_no_secret(what: &str, text: &str, log: &str) {
    for secret in [URL_SECRET, HEADER_SECRET] {
        assert!(
            !text.contains(secret),
            "{what} shows a secret:\n{text}\nstderr:\n{log}"
        );
    }
}

/// `check` as a person and as a script read it: the transport, the url as
/// written and the outcome; at debug level, with the secrets set, nothing
/// shows them, and neither do the catalog and the other files written.
#[test]
fn check_reports_a_remote_server_and_never_its_secrets() {
    let dir = case_dir("remote-check", &config(), &[near()]);
    let run = |extra: &[&str]| {
        let mut cmd = check(&dir, extra);
        cmd.env("RUST_LOG", "debug");
        for (k, v) in env(&dir) {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, text, log) = run(&[]);
    assert_eq!(
        code,
        Some(1),
        "the remote server fails to start:\n{text}\n{log}"
    );
    assert!(
        text.contains(&format!(
            "remote servers:\n  t/far: Streamable HTTP {URL}\n"
        )),
        "{text}\nstderr:\n{log}"
    );
    let status = |server: &str| {
        text.lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|cells| cells.len() > 2 && cells[0] == "t" && cells[1] == server)
            .map(|cells| cells[2].to_string())
    };
    assert_eq!(status("far").as_deref(), Some("failed"), "{text}");
    assert_eq!(status("near").as_deref(), Some("ok"), "{text}\n{log}");
    assert!(
        text.contains("\n  t/far: "),
        "its failure is named:\n{text}"
    );
    assert!(
        !log.contains("No such file") && !log.contains("cannot start ''"),
        "no command is looked for:\n{log}"
    );
    assert_no_secret("check", &text, &log);
    assert_no_secret("check's log", &log, "");

    let (code, json_text, log) = run(&["--json"]);
    assert_eq!(code, Some(1), "{json_text}\n{log}");
    let report: Value = serde_json::from_str(&json_text).unwrap();
    let far = &report["toolboxes"][0]["servers"][0];
    assert_eq!(far["name"], "far");
    assert_eq!(far["transport"], "Streamable HTTP", "{far}");
    assert_eq!(far["url"], URL, "{far}");
    assert_eq!(far["status"], "failed", "{far}");
    assert!(far["reason"].as_str().unwrap_or("").contains(URL), "{far}");
    let near = &report["toolboxes"][0]["servers"][1];
    assert_eq!(near["status"], "ok", "{near}");
    assert!(near.get("transport").is_none(), "{near}");
    assert_no_secret("check --json", &json_text, &log);
    assert_no_secret("check --json's log", &log, "");

    let written = files(&dir);
    assert!(
        written.iter().any(|f| f.starts_with(dir.join("cache"))),
        "the catalog was written: {written:?}"
    );
    for file in written {
        let bytes = fs::read(&file).unwrap();
        assert_no_secret(
            &file.display().to_string(),
            &String::from_utf8_lossy(&bytes),
            "",
        );
    }
    let _ = fs::remove_dir_all(&dir);
}

/// An unset variable in a remote server's url or header fails that server
/// alone, naming the variable and the JSON path.
#[test]
fn an_unset_variable_of_a_remote_server_is_named_with_its_path() {
    let dir = case_dir("remote-unset", &config(), &[near()]);
    let out = check(&dir, &["--json"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let report: Value = serde_json::from_str(&text).unwrap();
    let far = &report["toolboxes"][0]["servers"][0];
    assert_eq!(far["status"], "failed", "{text}");
    assert_eq!(
        far["reason"],
        "environment variable 'TOKEN' is not set (toolboxes.t.mcpServers.far.url); \
         environment variable 'HEADER_TOKEN' is not set (toolboxes.t.mcpServers.far.headers.Authorization)",
    );
    assert_eq!(
        report["toolboxes"][0]["servers"][1]["status"], "ok",
        "{text}"
    );
    let _ = fs::remove_dir_all(&dir);
}

/// A host opening a toolbox with a remote server gets the child's tools and
/// the remote server's failure in `_errors`, naming it by its url as written;
/// neither the debug log nor the catalog and pins files show a secret.
#[test]
fn a_toolbox_opens_its_child_beside_a_remote_server() {
    let dir = case_dir("remote-open", &config(), &[near()]);
    let pairs = env(&dir);
    let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut wb = Workbench::initialized(&dir, &pairs);
    let line = wb.open(1, "t", &mut Vec::new());
    let shown = line.to_string();
    let log = wb.log();
    let result = &line["result"]["structuredContent"];
    let tools: Vec<&str> = result["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    assert!(tools.iter().any(|t| t.contains("ping")), "{shown}\n{log}");
    let errors = result["_errors"].to_string();
    assert!(
        errors.contains("far") && errors.contains(URL),
        "{shown}\n{log}"
    );
    assert_no_secret("the open result", &shown, &log);
    let (_, log) = wb.finish();
    assert_no_secret("the serving log", &log, "");
    let written = files(&dir);
    assert!(
        written.iter().any(|f| f.starts_with(dir.join("state"))),
        "the pins were written: {written:?}"
    );
    for file in written {
        let bytes = fs::read(&file).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert_no_secret(&file.display().to_string(), &text, &log);
    }
    let _ = fs::remove_dir_all(&dir);
}

/// A config error for a remote server is reported like any other: every
/// problem at once, with its path, and exit 2.
#[test]
fn a_remote_server_with_child_keys_is_a_config_error() {
    let config = json!({"toolboxes": {"t": toolbox(json!({
        "far": {"url": "https://mcp.example.com/mcp", "command": "x", "args": ["a"], "type": "websocket"},
    }))}});
    let dir = case_dir("remote-error", &config, &[]);
    let out = check(&dir, &[]).output().unwrap();
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{log}");
    for problem in [
        "toolboxes.t.mcpServers.far.type: expected \"stdio\" (a command), \"http\"",
        "toolboxes.t.mcpServers.far.url: a server has either \"command\" (a child process) or a url (a remote server), not both",
        "toolboxes.t.mcpServers.far.args: applies to a command (a child process)",
    ] {
        assert!(log.contains(problem), "{problem}\nin:\n{log}");
    }
    let _ = fs::remove_dir_all(&dir);
}
