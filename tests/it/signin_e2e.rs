//! Sign-in end to end through the real binary and its remote transport,
//! against the test authorization server (`testdata/oauth/
//! authorization-server.py`, Python's standard library, started and stopped
//! here) and a scripted browser (`testdata/oauth/browser.py`, the
//! `$BROWSER` of the workbench: it records each start and follows the
//! authorization page to the loopback listener):
//!
//! - a host opening a toolbox that needs a sign-in is answered at once, the
//!   browser opens once, and after the sign-in the remote tool works;
//! - two host sessions of one shared fleet, and two workbenches without a
//!   fleet, calling across several short token lifetimes: every call
//!   succeeds, no refresh token is spent twice, about one refresh per
//!   lifetime reaches the server;
//! - a refresh the server refuses becomes sign-in-needed once, not a loop;
//! - `check` and `status` show the sign-in, never a token; `logout`
//!   deletes it and the next open needs a sign-in again.

use crate::harness::*;
use serde_json::{json, Value};
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

const AUTH_SERVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/testdata/oauth/authorization-server.py"
);
const BROWSER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/oauth/browser.py");

/// How long a sign-in through the scripted browser may take.
const SIGN_IN_WAIT: Duration = Duration::from_secs(20);

/// The test authorization server, stopped by its pid when dropped; its
/// request log is shown when a test fails.
struct AuthServer {
    child: Child,
    port: u16,
    log: Arc<Mutex<String>>,
}

impl AuthServer {
    /// Starts it on a free port with `args` (`--access-ttl`, ...).
    fn start(args: &[&str]) -> AuthServer {
        let mut child = Command::new("python3")
            .arg(AUTH_SERVER)
            .args(["--port", "0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("python3 runs the authorization server");
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let port = serde_json::from_str::<Value>(&first)
            .ok()
            .and_then(|v| v["port"].as_u64())
            .unwrap_or_else(|| panic!("the server's first line is its port: {first:?}"));
        let log = Arc::new(Mutex::new(String::new()));
        let written = Arc::clone(&log);
        let stderr = child.stderr.take().unwrap();
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let mut log = written.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        AuthServer {
            child,
            port: port as u16,
            log,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// One request over HTTP/1.0 (the server closes after it): the body.
    fn request(&self, method: &str, path: &str) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            stream,
            "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n"
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        match response.split_once("\r\n\r\n") {
            Some((_, body)) => body.to_string(),
            None => String::new(),
        }
    }

    /// What the server counted: `code_exchanges`, `refresh_requests`,
    /// `refreshes_refused`, `revoked_families`, ...
    fn stats(&self) -> Value {
        serde_json::from_str(&self.request("GET", "/stats")).unwrap()
    }

    fn stat(&self, name: &str) -> u64 {
        self.stats()[name].as_u64().unwrap()
    }
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        if wait_exit(&mut self.child, Duration::from_secs(5)).is_none() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
        if thread::panicking() {
            let log = self.log.lock().unwrap();
            let tail: Vec<&str> = log.lines().rev().take(60).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            eprintln!("the authorization server's log ends:\n{}", tail.join("\n"));
        }
    }
}

/// A case's folder: `config.json` with toolbox `work` holding the remote
/// server `remote` (the authorization server's `/mcp`) and the child
/// `local`, `extra` top-level keys added; a state and a runtime folder.
fn case(name: &str, server: &AuthServer, extra: Value) -> PathBuf {
    let mut config = json!({"toolboxes": {"work": toolbox(json!({
        "remote": {"url": server.url("/mcp")},
        "local": fake("local.json"),
    }))}});
    if let (Some(config), Some(extra)) = (config.as_object_mut(), extra.as_object()) {
        config.extend(extra.clone());
    }
    let local = json!({"tools": [tool("ping", json!({}))]});
    let dir = case_dir(name, &config, &[("local.json", local)]);
    fs::create_dir(dir.join("run")).unwrap();
    dir
}

/// The environment of the case's workbenches: the state, home and runtime
/// folders, and the scripted browser recording to `browser.log`
/// (`follow`: it goes through the sign-in; else it only records).
fn env(dir: &Path, follow: bool) -> Vec<(&'static str, String)> {
    let path = |p: &str| dir.join(p).to_str().unwrap().to_string();
    vec![
        ("XDG_STATE_HOME", path("state")),
        ("XDG_RUNTIME_DIR", path("run")),
        ("HOME", path("home")),
        ("BROWSER", BROWSER.to_string()),
        ("OAUTH_BROWSER_LOG", path("browser.log")),
        (
            "OAUTH_BROWSER_FOLLOW",
            if follow { "1" } else { "0" }.into(),
        ),
        ("RUST_LOG", "info".into()),
    ]
}

fn pairs<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// A host session on the case's config.
fn session(dir: &Path, follow: bool) -> Workbench {
    let env = env(dir, follow);
    Workbench::initialized(dir, &pairs(&env))
}

/// Runs the workbench with `args` in the case's environment: exit code,
/// stdout, stderr.
fn run(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let mut cmd = workbench_in(dir);
    cmd.args(args).stdin(Stdio::null());
    for (k, v) in env(dir, true) {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `mcp-workbench login work/remote`, the scripted browser completing it.
fn login(dir: &Path) {
    let (code, out, err) = run(dir, &["login", "work/remote", "--config", "config.json"]);
    assert_eq!(code, Some(0), "login: {out}\n{err}");
}

/// The URLs the browser was started on (its error lines left out, shown
/// on failure by `browser_log`).
fn browser_starts(dir: &Path) -> Vec<String> {
    browser_log(dir)
        .lines()
        .filter(|l| !l.starts_with("error:"))
        .map(str::to_string)
        .collect()
}

fn browser_log(dir: &Path) -> String {
    fs::read_to_string(dir.join("browser.log")).unwrap_or_default()
}

/// The token files stored.
fn token_files(dir: &Path) -> Vec<PathBuf> {
    fs::read_dir(dir.join("state/mcp-workbench/oauth/tokens"))
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default()
}

/// The access and refresh token of the one token file.
fn stored_tokens(dir: &Path) -> Vec<String> {
    let files = token_files(dir);
    assert_eq!(files.len(), 1, "{files:?}");
    let tokens: Value = serde_json::from_slice(&fs::read(&files[0]).unwrap()).unwrap();
    ["access_token", "refresh_token"]
        .iter()
        .filter_map(|k| tokens[k].as_str().map(str::to_string))
        .collect()
}

/// The tool names of an open result, and its `_errors` as text.
fn opened(line: &Value) -> (Vec<String>, String) {
    let result = &line["result"]["structuredContent"];
    let tools = result["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    (tools, result["_errors"].to_string())
}

/// The start of the text a host is given when `remote` needs a sign-in.
const SIGN_IN_NEEDED: &str = "Sign-in needed for server 'remote' (toolbox 'work')";

/// Calls the remote `echo` as request `id`: its answer.
fn echo(wb: &mut Workbench, id: i64, text: &str) -> Value {
    wb.use_tool(id, "work", "remote", "echo", json!({"text": text}));
    wb.answer(id, &mut Vec::new())
}

#[test]
fn a_host_signs_in_through_the_browser_and_then_uses_the_remote_tool() {
    host_signs_in("signin-host", json!({}));
}

#[test]
fn a_host_of_a_shared_fleet_signs_in_through_the_browser() {
    host_signs_in(
        "signin-host-fleet",
        json!({"shareServers": true, "shareLingerMs": 300}),
    );
}

/// A host opens the toolbox, the browser signs in, the host opens it again.
fn host_signs_in(name: &str, extra: Value) {
    let server = AuthServer::start(&[]);
    let dir = case(name, &server, extra);
    let mut wb = session(&dir, true);

    let started = Instant::now();
    let line = wb.open(1, "work", &mut Vec::new());
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "answered at once"
    );
    let (tools, errors) = opened(&line);
    assert!(tools.iter().any(|t| t.contains("ping")), "{line}");
    assert!(!tools.iter().any(|t| t.contains("echo")), "{line}");
    assert!(
        errors.contains(&format!("{SIGN_IN_NEEDED}: a browser window was opened; finish signing in there, then open the toolbox again (or run: mcp-workbench login work/remote)")),
        "{errors}"
    );
    assert!(errors.contains(&server.url("/authorize?")), "{errors}");

    let signed_in = wait_until(SIGN_IN_WAIT, || {
        server.stat("code_exchanges") == 1 && token_files(&dir).len() == 1
    });
    assert!(
        signed_in,
        "no sign-in stored; the browser's log: {}",
        browser_log(&dir)
    );

    // As the entry says: open the toolbox again (it is still open).
    let line = wb.open(3, "work", &mut Vec::new());
    let (tools, errors) = opened(&line);
    assert!(tools.iter().any(|t| t.contains("echo")), "{line}");
    assert!(tools.iter().any(|t| t.contains("ping")), "{line}");
    assert!(!errors.contains("Sign-in"), "{errors}");
    let answer = echo(&mut wb, 4, "through the sign-in");
    assert!(!is_error(&answer), "{answer}");
    assert_eq!(text(&answer), "through the sign-in");

    assert_eq!(
        browser_starts(&dir).len(),
        1,
        "the browser opened once: {}",
        browser_log(&dir)
    );
    let log = wb.finish().1;
    for token in stored_tokens(&dir) {
        assert!(!log.contains(&token), "no token in the log");
    }
    let _ = fs::remove_dir_all(&dir);
}

/// What each session's calls gave: how many, and the failures.
type Calls = (usize, Vec<String>);

/// Calls the remote tool from `wb` (its toolbox opened) over and over
/// until `until`.
fn call_until(mut wb: Workbench, until: Instant) -> (Workbench, Calls) {
    let mut failures = Vec::new();
    let mut id = 100;
    while Instant::now() < until {
        id += 1;
        let answer = echo(&mut wb, id, "again");
        if is_error(&answer) || text(&answer) != "again" {
            failures.push(answer.to_string());
        }
    }
    (wb, ((id - 100) as usize, failures))
}

/// Whether the case's config shares servers.
fn extra_shares(dir: &Path) -> bool {
    let config: Value =
        serde_json::from_slice(&fs::read(dir.join("config.json")).unwrap()).unwrap();
    config["shareServers"] == json!(true)
}

/// Two sessions (sharing a fleet or not) calling the remote tool across
/// four lifetimes of two-second access tokens, after one `login`.
fn two_sessions_refresh_once_per_lifetime(name: &str, extra: Value) {
    const TTL: u64 = 2;
    let server = AuthServer::start(&["--access-ttl", &TTL.to_string()]);
    let dir = case(name, &server, extra);
    let started = Instant::now();
    login(&dir);
    assert_eq!(server.stat("code_exchanges"), 1);

    let mut sessions = [session(&dir, false), session(&dir, false)];
    for wb in &mut sessions {
        let line = wb.open(1, "work", &mut Vec::new());
        let (tools, errors) = opened(&line);
        assert!(tools.iter().any(|t| t.contains("echo")), "{line}");
        assert!(!errors.contains("Sign-in"), "{errors}");
    }
    let (code, status, err) = run(&dir, &["status", "--config", "config.json", "--json"]);
    let shared = extra_shares(&dir);
    assert_eq!(code, Some(if shared { 0 } else { 1 }), "{status}\n{err}");
    if shared {
        assert!(
            status.contains(&server.url("/mcp")),
            "the fleet runs the remote server: {status}"
        );
    }
    let until = Instant::now() + Duration::from_secs(4 * TTL);
    let running: Vec<_> = sessions
        .into_iter()
        .map(|wb| thread::spawn(move || call_until(wb, until)))
        .collect();
    let results: Vec<(Workbench, Calls)> = running.into_iter().map(|t| t.join().unwrap()).collect();
    let elapsed = started.elapsed().as_secs();
    let stats = server.stats();
    for (wb, (calls, failures)) in &results {
        assert!(
            failures.is_empty() && *calls > 0,
            "{calls} calls, failed: {failures:?}; stats {stats}; stderr:\n{}",
            wb.log_tail(40)
        );
    }
    assert_eq!(stats["revoked_families"], 0, "{stats}");
    assert_eq!(stats["refreshes_refused"], 0, "{stats}");
    let refreshes = stats["refresh_requests"].as_u64().unwrap();
    let lifetimes = elapsed / TTL;
    let calls: usize = results.iter().map(|(_, (n, _))| n).sum();
    println!("{name}: {calls} calls, {refreshes} refreshes in {elapsed} s of {TTL} s tokens");
    assert!(
        (lifetimes.saturating_sub(1)..=lifetimes + 1).contains(&refreshes),
        "{refreshes} refreshes in {elapsed} s of {TTL} s tokens: {stats}"
    );
    assert!(
        browser_starts(&dir).len() == 1,
        "only the login opened the browser: {}",
        browser_log(&dir)
    );
    for (wb, _) in results {
        let (_, log) = wb.finish();
        assert!(
            !log.contains("Sign-in needed"),
            "no session needed a sign-in:\n{log}"
        );
    }
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn two_sessions_of_one_fleet_share_one_sign_in_and_one_refresher() {
    two_sessions_refresh_once_per_lifetime(
        "signin-fleet",
        json!({"shareServers": true, "shareLingerMs": 300}),
    );
}

#[test]
fn two_workbenches_without_a_fleet_never_spend_a_refresh_token_twice() {
    two_sessions_refresh_once_per_lifetime("signin-apart", json!({}));
}

#[test]
fn a_refused_refresh_becomes_sign_in_needed_once_not_a_loop() {
    let server = AuthServer::start(&[]);
    let dir = case("signin-refused", &server, json!({}));
    login(&dir);
    // This session's browser only records: the sign-in it starts stays open.
    let mut wb = session(&dir, false);
    wb.open_ok(1, "work");
    assert_eq!(text(&echo(&mut wb, 2, "before")), "before");

    server.request("POST", "/revoke");
    server.request("POST", "/expire");
    let answer = echo(&mut wb, 3, "after");
    assert!(is_error(&answer), "{answer}");
    assert!(text(&answer).contains(SIGN_IN_NEEDED), "{answer}");
    assert_eq!(server.stat("refresh_requests"), 1);
    assert!(
        token_files(&dir).is_empty(),
        "the refused sign-in is deleted"
    );

    for id in 4..7 {
        let answer = echo(&mut wb, id, "again");
        assert!(text(&answer).contains(SIGN_IN_NEEDED), "{answer}");
    }
    let stats = server.stats();
    assert_eq!(stats["refresh_requests"], 1, "{stats}");
    // The browser starts detached: its line comes when it runs.
    let opened = wait_until(EVENT_WAIT, || browser_starts(&dir).len() >= 2);
    assert!(
        opened && browser_starts(&dir).len() == 2,
        "the login's and one background sign-in: {}",
        browser_log(&dir)
    );
    let _ = wb.finish();
    let _ = fs::remove_dir_all(&dir);
}

/// `check` (text and `--json`) and `status --json` of the case.
fn reports(dir: &Path) -> Vec<(String, String, String)> {
    let mut all = Vec::new();
    for args in [
        &["check", "--config", "config.json"][..],
        &["check", "--config", "config.json", "--json"],
        &["status", "--config", "config.json", "--json"],
        &["status", "--config", "config.json"],
    ] {
        let (_, out, err) = run(dir, args);
        all.push((args.join(" "), out, err));
    }
    all
}

#[test]
fn check_and_status_show_the_sign_in_and_never_a_token() {
    let server = AuthServer::start(&[]);
    let extra = json!({"shareServers": true, "shareLingerMs": 300});
    let dir = case("signin-check", &server, extra);
    let (_, out, err) = run(&dir, &["check", "--config", "config.json"]);
    assert!(
        out.contains(&format!(
            "{SIGN_IN_NEEDED}: run mcp-workbench login work/remote in a terminal"
        )),
        "{out}\n{err}"
    );

    login(&dir);
    let tokens = stored_tokens(&dir);
    assert_eq!(tokens.len(), 2);
    let (code, out, err) = run(&dir, &["check", "--config", "config.json"]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(
        out.contains(&format!(
            "work/remote: Streamable HTTP {}, sign-in: signed in at {}, the access token expires in ",
            server.url("/mcp"),
            server.url("")
        )),
        "{out}\n{err}"
    );

    let mut wb = session(&dir, false);
    wb.open_ok(1, "work");
    assert_eq!(text(&echo(&mut wb, 2, "x")), "x");
    let shown = reports(&dir);
    let (_, status, _) = &shown[2];
    assert!(
        status.contains("\"remote\"") && status.contains(&server.url("/mcp")),
        "status shows the remote server: {status}"
    );
    for (what, out, err) in &shown {
        for token in &tokens {
            assert!(
                !out.contains(token) && !err.contains(token),
                "{what} shows a token:\n{out}\n{err}"
            );
        }
    }
    let (_, log) = wb.finish();
    for token in &tokens {
        assert!(!log.contains(token), "the session's log shows a token");
    }
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn logout_deletes_the_tokens_and_the_next_open_needs_a_sign_in() {
    let server = AuthServer::start(&[]);
    let dir = case("signin-logout-e2e", &server, json!({}));
    login(&dir);
    assert_eq!(token_files(&dir).len(), 1);
    let (code, out, err) = run(&dir, &["logout", "work/remote", "--config", "config.json"]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(out.starts_with("Signed out of work/remote"), "{out}");
    assert!(token_files(&dir).is_empty());

    let mut wb = session(&dir, false);
    let line = wb.open(1, "work", &mut Vec::new());
    let (tools, errors) = opened(&line);
    assert!(tools.iter().any(|t| t.contains("ping")), "{line}");
    assert!(
        errors.contains(&format!("{SIGN_IN_NEEDED}: a browser window was opened")),
        "{errors}"
    );
    let opened = wait_until(EVENT_WAIT, || browser_starts(&dir).len() >= 2);
    assert!(
        opened && browser_starts(&dir).len() == 2,
        "the login's and the host's sign-in: {}",
        browser_log(&dir)
    );
    let _ = wb.finish();
    let _ = fs::remove_dir_all(&dir);
}
