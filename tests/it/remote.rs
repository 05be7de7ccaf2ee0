//! Remote servers end to end (docs/reference.md §11): the workbench, serving
//! a config whose server has a `url`, against scripted HTTP servers on
//! loopback (`test_server`, the one the unit tests of the transports use):
//! a call with progress, the secrets of a header kept out of the log, TLS
//! trusted through `SSL_CERT_FILE` and refused without it, calls side by
//! side, a stalled call that neither `close_toolbox` nor the exit waits for,
//! what a remote server costs in threads while open and asleep, and a
//! script's call to a server that needs a sign-in.

#[path = "../../src/net/test_server.rs"]
mod test_server;

use crate::harness::*;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};
use test_server::{Responder, Seen, Server};

const SECRET: &str = "planted-remote-secret-7e1d";

/// A Streamable HTTP MCP server: initialize (session `s-1`), notifications
/// (202), `tools/list` (echo, slow), no GET stream (405), DELETE; each
/// `tools/call` goes to `on_call`.
fn mcp(on_call: impl Fn(&Value, &mut Responder<'_>) + Send + Sync + 'static) -> Server {
    Server::start(move |seen, reply| standard(seen, reply, &on_call))
}

fn standard(seen: &Seen, reply: &mut Responder<'_>, on_call: &dyn Fn(&Value, &mut Responder<'_>)) {
    match seen.method.as_str() {
        "GET" => return reply.send(405, &[], b""),
        "DELETE" => return reply.send(200, &[], b""),
        _ => {}
    }
    let message = seen.json();
    let id = message["id"].clone();
    match message["method"].as_str() {
        Some("initialize") => reply.json(
            200,
            &[("Mcp-Session-Id", "s-1")],
            &json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                "serverInfo": {"name": "scripted", "version": "1"}}}),
        ),
        Some("tools/list") => reply.json(
            200,
            &[],
            &json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                {"name": "echo", "inputSchema": {"type": "object"}},
                {"name": "slow", "inputSchema": {"type": "object"}}]}}),
        ),
        Some("tools/call") => on_call(&message, reply),
        _ if message.get("id").is_none() => reply.accepted(),
        _ => reply.json(200, &[], &json!({"jsonrpc": "2.0", "id": id, "result": {}})),
    }
}

fn result(message: &Value, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": message["id"], "result": {"content": [{"type": "text", "text": text}]}})
}

/// A config with toolbox `far` holding the remote server `api` at `url`.
fn config(url: &str, extra: Value) -> Value {
    let mut server = json!({"url": url, "headers": {"X-Api-Key": "${API_KEY}"}});
    if let (Some(server), Some(extra)) = (server.as_object_mut(), extra.as_object()) {
        server.extend(extra.clone());
    }
    json!({"toolboxes": {"far": toolbox(json!({"api": server}))}})
}

/// Waits, with the session's own deadline, for `done`.
fn eventually(wb: &Workbench, what: &str, done: impl FnMut() -> bool) {
    assert!(
        wait_until(EVENT_WAIT, done),
        "{what}; the workbench's stderr ends:\n{}",
        wb.log_tail(40)
    );
}

#[test]
fn a_remote_tool_answers_with_progress_and_its_header_secret_stays_out_of_the_log() {
    let server = mcp(|message, reply| {
        if message["params"]["name"] == "slow" {
            let token = message["params"]["_meta"]["progressToken"].clone();
            reply.events(&[]);
            let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": token, "progress": 1, "total": 2}});
            reply.event(None, &progress.to_string()).unwrap();
            reply
                .event(None, &result(message, "slow done").to_string())
                .unwrap();
            reply.end();
        } else {
            reply.json(200, &[], &result(message, "echoed"));
        }
    });
    let mut wb = Workbench::start(
        "remote-progress",
        config(&server.url("/mcp"), json!({})),
        &[],
        &[("API_KEY", SECRET)],
    );
    let opened = wb.open_ok(1, "far");
    let listing = text(&opened);
    assert!(
        listing.contains("\"echo\"") && listing.contains("\"slow\""),
        "{listing}"
    );
    wb.use_tool(2, "far", "api", "echo", json!({}));
    let mut others = Vec::new();
    assert_eq!(text(&wb.answer(2, &mut others)), "echoed");
    let params = json!({"name": "use_tool", "arguments": {"tool": {"toolbox": "far", "server": "api", "tool": "slow"}, "arguments": {}}, "_meta": {"progressToken": "p1"}});
    let answer = wb.answer_to(3, "tools/call", params, &mut others);
    assert_eq!(text(&answer), "slow done");
    let progress: Vec<&Value> = others
        .iter()
        .filter(|l| l["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 1, "{others:?}");
    assert_eq!(progress[0]["params"]["progressToken"], "p1");
    assert!(server
        .seen()
        .iter()
        .filter(|s| s.method == "POST")
        .all(|s| s.header("x-api-key") == Some(SECRET)));
    let (code, log) = wb.finish();
    assert_eq!(code, Some(0));
    assert!(
        !log.contains(SECRET),
        "the log shows the header's value:\n{log}"
    );
}

#[test]
fn tls_is_trusted_through_ssl_cert_file_and_refused_naming_the_certificate_without_it() {
    let server = Server::start_tls(|seen, reply| {
        standard(seen, reply, &|message, reply| {
            reply.json(200, &[], &result(message, "over tls"))
        })
    });
    let url = server.url("/mcp");
    let ca = test_server::tls_dir().join("ca.pem");
    let ca = ca.display().to_string();
    let mut trusted = Workbench::start(
        "remote-tls-trusted",
        config(&url, json!({})),
        &[],
        &[("API_KEY", "k"), ("SSL_CERT_FILE", &ca)],
    );
    trusted.open_ok(1, "far");
    trusted.use_tool(2, "far", "api", "echo", json!({}));
    assert_eq!(text(&trusted.answer(2, &mut Vec::new())), "over tls");
    trusted.finish_clean(Duration::from_secs(10));

    let mut refused = Workbench::start(
        "remote-tls-refused",
        config(&url, json!({})),
        &[],
        &[("API_KEY", "k")],
    );
    let opened = refused.open(1, "far", &mut Vec::new());
    let errors = opened.to_string();
    assert!(errors.contains(&url), "{errors}");
    assert!(
        errors.contains("its TLS certificate CN=localhost (names localhost, 127.0.0.1, ::1; issued by CN=mcp-workbench test CA) was refused"),
        "{errors}"
    );
    assert!(
        errors.contains("not signed by an authority the workbench trusts"),
        "{errors}"
    );
}

#[test]
fn remote_calls_run_side_by_side_through_the_workbench() {
    const N: usize = 3;
    let all = Arc::new(Barrier::new(N));
    let server = mcp(move |message, reply| {
        // Answered only once every call came: calls one after the other
        // would never all come.
        all.wait();
        reply.json(200, &[], &result(message, "together"));
    });
    let mut wb = Workbench::start(
        "remote-parallel",
        config(&server.url("/mcp"), json!({})),
        &[],
        &[("API_KEY", "k")],
    );
    wb.open_ok(1, "far");
    for id in 0..N as i64 {
        wb.use_tool(10 + id, "far", "api", "slow", json!({}));
    }
    let mut answered = Vec::new();
    while answered.len() < N {
        let line = wb.recv();
        assert_eq!(text(&line), "together", "{line}");
        answered.push(line["id"].as_i64().unwrap());
    }
    answered.sort_unstable();
    assert_eq!(answered, [10, 11, 12]);
}

#[test]
fn a_stalled_remote_call_holds_up_neither_close_toolbox_nor_the_exit() {
    let stalled = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&stalled);
    let server = mcp(move |message, reply| {
        if message["params"]["name"] != "slow" {
            return reply.json(200, &[], &result(message, "echoed"));
        }
        count.fetch_add(1, Ordering::SeqCst);
        reply.events(&[]);
        // Keep-alive comments until the client shuts the connection.
        while reply.chunk(b": waiting\n\n").is_ok() {
            thread::sleep(Duration::from_millis(20));
        }
        count.fetch_sub(1, Ordering::SeqCst);
    });
    let stalled_now = || stalled.load(Ordering::SeqCst);
    let mut wb = Workbench::start(
        "remote-stall",
        config(&server.url("/mcp"), json!({"callTimeoutMs": 60000})),
        &[],
        &[("API_KEY", "k")],
    );
    wb.open_ok(1, "far");
    wb.use_tool(2, "far", "api", "slow", json!({}));
    eventually(&wb, "the call reached the server", || stalled_now() == 1);
    let began = Instant::now();
    wb.call(3, "close_toolbox", json!({"toolbox_name": "far"}));
    let mut others = Vec::new();
    let closed = wb.answer(3, &mut others);
    assert!(
        began.elapsed() < Duration::from_secs(3),
        "close took {:?}",
        began.elapsed()
    );
    assert!(text(&closed).contains("closed"), "{closed}");
    let stopped = others
        .iter()
        .find(|l| l["id"] == 2)
        .expect("the call was answered");
    assert!(is_error(stopped), "{stopped}");
    eventually(&wb, "the stalled connection was shut", || {
        stalled_now() == 0
    });

    // Again, and the host goes: the workbench exits without waiting for it.
    wb.use_tool(4, "far", "api", "slow", json!({}));
    eventually(&wb, "the call reached the server", || stalled_now() == 1);
    let began = Instant::now();
    let code = wb.end(Duration::from_secs(10));
    assert_eq!(code, Some(Some(0)));
    assert!(
        began.elapsed() < Duration::from_secs(5),
        "exit took {:?}",
        began.elapsed()
    );
}

/// The workbench's threads once they stop changing.
#[cfg(target_os = "linux")]
fn settled_threads(wb: &Workbench, want: usize) -> usize {
    let mut seen = 0;
    wait_until(EVENT_WAIT, || {
        seen = threads(wb.pid());
        seen == want
    });
    seen
}

#[cfg(target_os = "linux")]
#[test]
fn an_open_remote_server_costs_one_thread_and_none_asleep_or_closed() {
    let server = Server::start(|seen, reply| {
        if seen.method == "GET" {
            // An event stream held open: the pump reads it itself.
            reply.events(&[]);
            while reply.chunk(b": ping\n\n").is_ok() {
                thread::sleep(Duration::from_millis(20));
            }
            return;
        }
        standard(seen, reply, &|message, reply| {
            reply.json(200, &[], &result(message, "echoed"))
        })
    });
    let mut wb = Workbench::start(
        "remote-threads",
        config(&server.url("/mcp"), json!({"idleTimeoutMs": 1500})),
        &[],
        &[("API_KEY", "k")],
    );
    // Settled before anything opens (the catalog's first write and such).
    thread::sleep(Duration::from_millis(300));
    let base = threads(wb.pid());
    wb.open_ok(1, "far");
    assert!(server.wait_for(EVENT_WAIT, |seen| seen.iter().any(|s| s.method == "GET")));
    assert_eq!(
        settled_threads(&wb, base + 1),
        base + 1,
        "open, with its event stream"
    );
    wb.use_tool(2, "far", "api", "echo", json!({}));
    assert_eq!(text(&wb.answer(2, &mut Vec::new())), "echoed");
    assert_eq!(settled_threads(&wb, base + 1), base + 1, "after a call");
    // Idle for 1.5 s: asleep, and its session deleted.
    assert!(server.wait_for(EVENT_WAIT, |seen| seen.iter().any(|s| s.method == "DELETE")));
    assert_eq!(settled_threads(&wb, base), base, "asleep");
    // The next call wakes it.
    wb.use_tool(3, "far", "api", "echo", json!({}));
    assert_eq!(text(&wb.answer(3, &mut Vec::new())), "echoed");
    wb.call(4, "close_toolbox", json!({"toolbox_name": "far"}));
    wb.answer(4, &mut Vec::new());
    assert_eq!(settled_threads(&wb, base), base, "closed");
}

#[test]
fn a_script_calling_a_server_that_needs_a_sign_in_is_told_the_login_command() {
    let server = Server::start(|_, reply| reply.send(401, &[("WWW-Authenticate", "Bearer")], b""));
    let dir = case_dir(
        "remote-script-sign-in",
        &config(&server.url("/mcp"), json!({})),
        &[],
    );
    let out = workbench_in(&dir)
        .args(["call", "far/api/echo", "{}", "--config", "config.json"])
        .env("API_KEY", SECRET)
        .envs(user_env(&dir))
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert_eq!(
        stderr.lines().last(),
        Some(
            "Failed to connect to server 'api' in toolbox 'far': Sign-in needed for server 'api' \
             (toolbox 'far'): run mcp-workbench login far/api in a terminal"
        ),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        !stderr.contains(SECRET) && !stdout.contains(SECRET),
        "{stderr}"
    );
    assert!(
        server
            .seen()
            .iter()
            .all(|s| s.header("authorization").is_none()),
        "a script has no token to send, and opens no browser to get one"
    );
}
