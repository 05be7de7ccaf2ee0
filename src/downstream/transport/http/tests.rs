//! The remote transports against scripted servers on loopback
//! (`net::test_server`): a server is started through `start` from a `Spec`
//! with `remote` set, as the fleet starts one, and called through its
//! handle, as a session calls it; what reaches the host is read from its
//! outbox. Every wait has a deadline and waits for what it checks.

use crate::config::RemoteKind;
use crate::downstream::era::Era;
use crate::downstream::{start, Downstream, Remote, Spec};
use crate::lock;
use crate::net::test_server::{Responder, Seen, Server};
use crate::protocol::jsonrpc::RequestId;
use crate::wire::outbox::Outbox;
use crate::wire::{SessionId, SessionIds};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::sync::{Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// What a wait for the host's lines allows.
const WAIT: Duration = Duration::from_secs(15);

/// What the host received, shared with the outbox.
#[derive(Clone, Default)]
struct Host(Arc<Mutex<Vec<u8>>>);

impl Write for Host {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        lock(&self.0).extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Host {
    fn lines(&self) -> Vec<Value> {
        lock(&self.0)
            .split(|&b| b == b'\n')
            .filter(|line| !line.is_empty())
            .map(|line| serde_json::from_slice(line).expect("the host gets JSON"))
            .collect()
    }
}

fn spec(name: &str, url: &str, kind: RemoteKind, headers: &[(&str, &str)]) -> Spec {
    Spec {
        toolbox: "t".into(),
        server: name.into(),
        program: String::new(),
        args: Vec::new(),
        env: BTreeMap::new(),
        cwd: None,
        command_display: url.into(),
        cwd_display: None,
        startup_timeout: Duration::from_secs(10),
        call_timeout: Duration::from_secs(10),
        max_call_timeout: Duration::from_secs(20),
        max_result_chars: None,
        lookup: Default::default(),
        remote: Some(Remote {
            url: url.into(),
            url_display: format!("{url} (shown)"),
            hidden: Vec::new(),
            kind,
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            oauth: crate::auth::Client::default(),
        }),
    }
}

/// A started remote server and the host that calls it.
struct Case {
    conn: Arc<Downstream>,
    tools: Vec<String>,
    host: Host,
    outbox: Arc<Outbox>,
    session: SessionId,
}

impl Case {
    fn open(spec: Spec) -> Result<Case, String> {
        let host = Host::default();
        let outbox = Arc::new(Outbox::new(Box::new(host.clone())));
        let sign_ins = crate::auth::SignIns::default();
        let started = start(spec, Arc::clone(&outbox), None, None, &sign_ins, |_| true)?;
        Ok(Case {
            tools: started.tools.iter().map(|t| t.name.clone()).collect(),
            conn: started.conn,
            host,
            outbox,
            session: SessionIds::default().next(),
        })
    }

    /// The host calls `tool` as request `id`.
    fn call(&self, id: i64, tool: &str, token: Option<Value>) {
        let args = RawValue::from_string(r#"{"x":1}"#.into()).unwrap();
        self.conn
            .forward_call(
                RequestId::Int(id),
                (self.session, &self.outbox),
                tool,
                &args,
                &Map::new(),
                token.as_ref(),
                None,
            )
            .expect("taken");
    }

    /// The answer to `id`, and the lines before it.
    fn answer(&self, id: i64) -> (Value, Vec<Value>) {
        let deadline = Instant::now() + WAIT;
        loop {
            let lines = self.host.lines();
            if let Some(at) = lines.iter().position(|l| l["id"] == id) {
                let before = lines[..at].to_vec();
                return (lines[at].clone(), before);
            }
            assert!(
                Instant::now() < deadline,
                "no answer to {id}; the host got {lines:?}"
            );
            thread::sleep(Duration::from_millis(5));
        }
    }

    fn text(&self, id: i64) -> String {
        let (answer, _) = self.answer(id);
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

impl Drop for Case {
    fn drop(&mut self) {
        self.conn.stop("");
    }
}

/// What the scripted MCP server does with a `tools/call`.
type OnCall = dyn Fn(&Value, &Seen, &mut Responder<'_>) + Send + Sync;

/// A Streamable HTTP MCP server: initialize (session `s-1`), notifications
/// (202), `tools/list` (echo, slow), no GET stream (405), DELETE; each
/// `tools/call` goes to `on_call`.
fn mcp(on_call: impl Fn(&Value, &Seen, &mut Responder<'_>) + Send + Sync + 'static) -> Server {
    let on_call: Arc<OnCall> = Arc::new(on_call);
    Server::start(move |seen, reply| standard(seen, reply, &*on_call))
}

fn standard(seen: &Seen, reply: &mut Responder<'_>, on_call: &OnCall) {
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
        Some("tools/call") => on_call(&message, seen, reply),
        _ if message.get("id").is_none() => reply.accepted(),
        _ => reply.json(200, &[], &json!({"jsonrpc": "2.0", "id": id, "result": {}})),
    }
}

/// A `tools/call` result with `text`.
fn result(message: &Value, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": message["id"], "result": {"content": [{"type": "text", "text": text}]}})
}

fn echo(message: &Value, _seen: &Seen, reply: &mut Responder<'_>) {
    reply.json(200, &[], &result(message, "echoed"));
}

#[test]
fn json_and_event_stream_answers_reach_the_host_with_progress_first() {
    let server = mcp(|message, seen, reply| {
        if message["params"]["name"] == "slow" {
            let token = message["params"]["_meta"]["progressToken"].clone();
            reply.events(&[]);
            // A priming event (2025-11-25): an id and no data.
            reply.chunk(b"id: prime-1\ndata:\n\n").unwrap();
            let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": token, "progress": 1, "total": 2}});
            reply.event(None, &progress.to_string()).unwrap();
            reply
                .event(None, &result(message, "slow done").to_string())
                .unwrap();
            reply.end();
        } else {
            echo(message, seen, reply);
        }
    });
    let case = Case::open(spec(
        "s",
        &server.url("/mcp"),
        RemoteKind::StreamableHttp,
        &[],
    ))
    .unwrap();
    assert_eq!(case.tools, ["echo", "slow"]);
    assert_eq!(case.conn.pid(), 0);
    case.call(1, "echo", None);
    assert_eq!(case.text(1), "echoed");
    case.call(2, "slow", Some(json!("tok")));
    let (answer, before) = case.answer(2);
    assert_eq!(answer["result"]["content"][0]["text"], "slow done");
    let progress: Vec<&Value> = before
        .iter()
        .filter(|l| l["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 1, "{before:?}");
    assert_eq!(progress[0]["params"]["progressToken"], "tok");
}

#[test]
fn the_session_id_and_version_are_sent_back_and_the_session_deleted_at_the_stop() {
    let server = mcp(echo);
    let case = Case::open(spec(
        "s",
        &server.url("/mcp"),
        RemoteKind::StreamableHttp,
        &[("X-Api-Key", "k1")],
    ))
    .unwrap();
    case.call(1, "echo", None);
    assert_eq!(case.text(1), "echoed");
    let seen = server.seen();
    let posts: Vec<&Seen> = seen.iter().filter(|s| s.method == "POST").collect();
    assert_eq!(posts[0].rpc_method().as_deref(), Some("initialize"));
    assert_eq!(posts[0].header("mcp-session-id"), None);
    assert_eq!(posts[0].header("mcp-protocol-version"), None);
    for post in &posts {
        assert_eq!(post.header("x-api-key"), Some("k1"));
        assert_eq!(
            post.header("accept"),
            Some("application/json, text/event-stream")
        );
        assert_eq!(post.header("content-type"), Some("application/json"));
    }
    for post in &posts[1..] {
        assert_eq!(post.header("mcp-session-id"), Some("s-1"), "{post:?}");
        assert_eq!(post.header("mcp-protocol-version"), Some("2025-06-18"));
    }
    let methods: Vec<Option<String>> = posts.iter().map(|p| p.rpc_method()).collect();
    assert_eq!(
        methods[..3],
        [
            Some("initialize".to_string()),
            Some("notifications/initialized".to_string()),
            Some("tools/list".to_string())
        ],
        "the notification went out before the next request"
    );
    // The GET stream was asked for once, after initialization (405: none).
    assert!(server.wait_for(WAIT, |seen| seen.iter().any(|s| s.method == "GET")));
    case.conn.stop("");
    assert!(server.wait_for(WAIT, |seen| seen
        .iter()
        .any(|s| s.method == "DELETE" && s.header("mcp-session-id") == Some("s-1"))));
    assert_eq!(
        server.seen().iter().filter(|s| s.method == "GET").count(),
        1
    );
}

#[test]
fn an_expired_session_is_initialized_again_once_and_the_call_sent_again() {
    let sessions = Arc::new(Mutex::new((1, true)));
    let state = Arc::clone(&sessions);
    let server = Server::start(move |seen, reply| {
        let message = seen.json();
        let mut state = lock(&state);
        let current = format!("s-{}", state.0);
        if message["method"] == "initialize" {
            if !state.1 {
                state.0 += 1;
                state.1 = true;
            }
            let id = format!("s-{}", state.0);
            drop(state);
            return reply.json(200, &[("Mcp-Session-Id", &id)], &json!({"jsonrpc": "2.0", "id": message["id"],
                "result": {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "x", "version": "1"}}}));
        }
        if seen.method == "POST" && seen.header("mcp-session-id") != Some(current.as_str()) {
            return reply.send(404, &[], b"no such session");
        }
        if message["params"]["name"] == "forget" {
            // The server restarts: the session is gone.
            state.1 = false;
            state.0 += 100;
        }
        drop(state);
        let noop: &OnCall = &|m, s, r| {
            let text = format!("session {}", s.header("mcp-session-id").unwrap_or(""));
            r.json(200, &[], &result(m, &text));
        };
        standard(seen, reply, noop);
    });
    let case = Case::open(spec(
        "s",
        &server.url("/mcp"),
        RemoteKind::StreamableHttp,
        &[],
    ))
    .unwrap();
    case.call(1, "echo", None);
    assert_eq!(case.text(1), "session s-1");
    case.call(2, "forget", None);
    assert_eq!(case.text(2), "session s-1");
    case.call(3, "echo", None);
    assert_eq!(case.text(3), "session s-102");
    let initializes = server
        .seen()
        .iter()
        .filter(|s| s.rpc_method().as_deref() == Some("initialize"))
        .count();
    assert_eq!(initializes, 2);
}

#[test]
fn a_404_after_initializing_again_fails_the_call_without_a_loop() {
    let server = mcp(|_, _, reply| reply.send(404, &[], b"gone for good"));
    let case = Case::open(spec(
        "s",
        &server.url("/mcp"),
        RemoteKind::StreamableHttp,
        &[],
    ))
    .unwrap();
    case.call(1, "echo", None);
    let text = case.text(1);
    assert!(
        text.contains("answered 404 Not Found: gone for good"),
        "{text}"
    );
    let initializes = server
        .seen()
        .iter()
        .filter(|s| s.rpc_method().as_deref() == Some("initialize"))
        .count();
    assert_eq!(initializes, 2, "initialized again once");
}

/// A server that answers 404 to every session id: one open initializes
/// again once, not once per request.
#[test]
fn a_server_that_forgets_every_session_is_initialized_again_once_per_open() {
    let initializes = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = Arc::clone(&initializes);
    let server = Server::start(move |seen, reply| {
        let message = seen.json();
        if message["method"] == "initialize" {
            let n = count.fetch_add(1, Ordering::SeqCst) + 1;
            let id = format!("s-{n}");
            return reply.json(200, &[("Mcp-Session-Id", &id)], &json!({"jsonrpc": "2.0", "id": message["id"],
                "result": {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "x", "version": "1"}}}));
        }
        if seen.header("mcp-session-id").is_some() {
            return reply.send(404, &[], b"no such session");
        }
        standard(seen, reply, &echo);
    });
    let failed = Case::open(spec(
        "s",
        &server.url("/mcp"),
        RemoteKind::StreamableHttp,
        &[],
    ));
    let Err(why) = failed else {
        panic!("opened a server that forgets every session")
    };
    assert!(
        why.contains("answered 404 Not Found: no such session"),
        "{why}"
    );
    assert_eq!(
        initializes.load(Ordering::SeqCst),
        2,
        "initialized again once"
    );
}

/// A session id is sent back in every request: one with control bytes is
/// refused, naming the server's url, and never sent.
#[test]
fn a_session_id_with_control_bytes_is_refused() {
    let server = Server::start(move |seen, reply| {
        let message = seen.json();
        if message["method"] == "initialize" {
            return reply.json(200, &[("Mcp-Session-Id", "ab\x01cd\x7fef")], &json!({"jsonrpc": "2.0", "id": message["id"],
                "result": {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "x", "version": "1"}}}));
        }
        standard(seen, reply, &echo);
    });
    let url = server.url("/mcp");
    let failed = Case::open(spec("s", &url, RemoteKind::StreamableHttp, &[]));
    let Err(why) = failed else {
        panic!("opened with a session id holding control bytes")
    };
    assert_eq!(
        why,
        format!("{url} (shown) sent a session id (Mcp-Session-Id) with bytes other than visible ASCII (0x21 to 0x7E): refused")
    );
    let seen = server.seen();
    assert!(
        seen.iter().all(|s| s.header("mcp-session-id").is_none()),
        "{seen:?}"
    );
}

#[test]
fn an_error_status_fails_that_call_alone_with_the_status_and_what_the_body_says() {
    let server = mcp(|message, seen, reply| {
        if message["params"]["name"] == "slow" {
            let body = format!(
                "<!DOCTYPE html>\n<html><head><title>Upstream\n exploded</title></head><body>{}</body></html>",
                "<p>x</p>".repeat(400)
            );
            reply.send(500, &[("Content-Type", "text/html")], body.as_bytes());
        } else {
            echo(message, seen, reply);
        }
    });
    let case = Case::open(spec(
        "s",
        &server.url("/mcp"),
        RemoteKind::StreamableHttp,
        &[],
    ))
    .unwrap();
    case.call(1, "slow", None);
    let text = case.text(1);
    assert!(
        text.starts_with("Server 's' in toolbox 't' failed while running tool 'slow': "),
        "{text}"
    );
    assert!(
        text.contains(
            "(shown) answered 500 Internal Server Error: an HTML page titled \"Upstream exploded\""
        ),
        "the page's title, not its markup: {text}"
    );
    assert!(text.len() < 400, "the body is cut: {text}");
    case.call(2, "echo", None);
    assert_eq!(case.text(2), "echoed");
    assert!(case.conn.is_up());
}

#[test]
fn a_body_that_is_not_mcp_fails_the_call_saying_so() {
    let page = b"<html><head><title>Sign in</title></head><body><form>login</form></body></html>";
    let server = mcp(|_, _, reply| reply.send(200, &[("Content-Type", "text/html")], page));
    let case = Case::open(spec(
        "s",
        &server.url("/mcp"),
        RemoteKind::StreamableHttp,
        &[],
    ))
    .unwrap();
    case.call(1, "echo", None);
    let text = case.text(1);
    assert!(
        text.contains("not MCP JSON (text/html): an HTML page titled \"Sign in\""),
        "{text}"
    );
}

#[test]
fn a_stream_cut_mid_way_fails_the_call_and_the_next_call_connects_again() {
    let server = mcp(|message, seen, reply| {
        if message["params"]["name"] == "slow" {
            reply.events(&[]);
            let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": 1, "progress": 1}});
            reply.event(None, &progress.to_string()).unwrap();
            reply.close();
        } else {
            echo(message, seen, reply);
        }
    });
    let case = Case::open(spec(
        "s",
        &server.url("/mcp"),
        RemoteKind::StreamableHttp,
        &[],
    ))
    .unwrap();
    case.call(1, "slow", None);
    let text = case.text(1);
    assert!(text.ends_with("(shown): the connection ended"), "{text}");
    let before = server.connections();
    case.call(2, "echo", None);
    assert_eq!(case.text(2), "echoed");
    assert!(server.connections() > before, "a new connection");
}

#[test]
fn a_stalled_call_times_out_its_socket_is_shut_and_the_stop_does_not_wait() {
    let stalled = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = Arc::clone(&stalled);
    let server = mcp(move |message, seen, reply| {
        if message["params"]["name"] == "slow" {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            reply.events(&[]);
            // Keep-alive comments until the client shuts the connection.
            while reply.chunk(b": waiting\n\n").is_ok() {
                thread::sleep(Duration::from_millis(20));
            }
            count.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        } else {
            echo(message, seen, reply);
        }
    });
    let stalled_now = || stalled.load(std::sync::atomic::Ordering::SeqCst);
    let url = server.url("/mcp");
    let mut spec = spec("s", &url, RemoteKind::StreamableHttp, &[]);
    spec.call_timeout = Duration::from_millis(300);
    let case = Case::open(spec).unwrap();
    case.call(1, "slow", None);
    // The url as written in the config (the spec's shows "(shown)").
    assert_eq!(
        case.text(1),
        format!("Tool 'slow' in server 's' (toolbox 't') timed out after 300 ms (callTimeoutMs): no answer from {url} (shown)")
    );
    // The cancellation went out, then the call's own connection was shut.
    assert!(server.wait_for(WAIT, |seen| seen
        .iter()
        .any(|s| s.rpc_method().as_deref() == Some("notifications/cancelled"))));
    let deadline = Instant::now() + WAIT;
    while stalled_now() > 0 {
        assert!(
            Instant::now() < deadline,
            "the stalled call's connection stays open"
        );
        thread::sleep(Duration::from_millis(10));
    }
    // Another call stalls, and the stop does not wait for it.
    case.call(2, "slow", None);
    let deadline = Instant::now() + WAIT;
    while stalled_now() == 0 {
        assert!(Instant::now() < deadline, "the second call never came");
        thread::sleep(Duration::from_millis(10));
    }
    let began = Instant::now();
    case.conn.stop("");
    assert!(
        began.elapsed() < Duration::from_secs(1),
        "stopped in {:?}",
        began.elapsed()
    );
    let text = case.text(2);
    assert!(
        text.contains("was stopped while tool 'slow' was running"),
        "{text}"
    );
    let deadline = Instant::now() + WAIT;
    while stalled_now() > 0 {
        assert!(Instant::now() < deadline, "the stop left a connection open");
        thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_stalled_opening_times_out_naming_the_url_as_written() {
    let server = Server::start(|seen, reply| {
        if seen.json()["method"] == "initialize" {
            reply.events(&[]);
            // Keep-alive comments until the client shuts the connection.
            while reply.chunk(b": waiting\n\n").is_ok() {
                thread::sleep(Duration::from_millis(20));
            }
            return;
        }
        standard(seen, reply, &echo);
    });
    let url = server.url("/mcp");
    let mut spec = spec("s", &url, RemoteKind::StreamableHttp, &[]);
    spec.startup_timeout = Duration::from_millis(300);
    let Err(why) = Case::open(spec) else {
        panic!("opened a server that never answers initialize")
    };
    assert_eq!(
        why,
        format!("no answer from {url} (shown) within 300 ms while starting")
    );
}

#[test]
fn calls_in_flight_run_side_by_side() {
    const N: usize = 4;
    let barrier = Arc::new(Barrier::new(N));
    let all = Arc::clone(&barrier);
    let server = mcp(move |message, _, reply| {
        // Answers only once every call arrived: calls sent one after the
        // other would never all arrive.
        all.wait();
        reply.json(200, &[], &result(message, "together"));
    });
    let case = Case::open(spec(
        "s",
        &server.url("/mcp"),
        RemoteKind::StreamableHttp,
        &[],
    ))
    .unwrap();
    for id in 1..=N as i64 {
        case.call(id, "slow", None);
    }
    for id in 1..=N as i64 {
        assert_eq!(case.text(id), "together");
    }
}

#[test]
fn a_redirect_to_another_origin_is_refused_and_credentials_never_go_there() {
    let other = Server::start(|seen, reply| standard(seen, reply, &echo));
    let target = other.url("/mcp");
    let server = Server::start(move |_, reply| reply.send(307, &[("Location", &target)], b""));
    let result = Case::open(spec(
        "s",
        &server.url("/mcp"),
        RemoteKind::StreamableHttp,
        &[("Authorization", "Bearer secret-token")],
    ));
    let why = result.err().expect("refused");
    assert!(
        why.contains("redirected to another origin (http://127.0.0.1:"),
        "{why}"
    );
    assert!(!why.contains("secret-token"));
    assert!(other.seen().is_empty(), "nothing reached the other origin");
    // Within the origin a redirect is followed, with the headers.
    let same = Server::start(|seen, reply| {
        if seen.target == "/old" {
            return reply.send(308, &[("Location", "/mcp")], b"");
        }
        standard(seen, reply, &echo)
    });
    let case = Case::open(spec(
        "s",
        &same.url("/old"),
        RemoteKind::StreamableHttp,
        &[("Authorization", "Bearer secret-token")],
    ))
    .unwrap();
    assert_eq!(case.tools.len(), 2);
    assert!(same
        .seen()
        .iter()
        .filter(|s| s.target == "/mcp")
        .all(|s| s.header("authorization") == Some("Bearer secret-token")));
}

#[test]
fn list_changes_come_on_the_get_stream() {
    let server = Server::start(|seen, reply| {
        if seen.method == "GET" {
            assert_eq!(seen.header("accept"), Some("text/event-stream"));
            assert_eq!(seen.header("mcp-session-id"), Some("s-1"));
            reply.events(&[]);
            let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
            let _ = reply.event(None, &changed.to_string());
            // Held open until the client goes.
            while reply.chunk(b": ping\n\n").is_ok() {
                thread::sleep(Duration::from_millis(20));
            }
            return;
        }
        standard(seen, reply, &echo)
    });
    let case = Case::open(spec(
        "s",
        &server.url("/mcp"),
        RemoteKind::StreamableHttp,
        &[],
    ))
    .unwrap();
    let deadline = Instant::now() + WAIT;
    while !case.conn.tools_changed() {
        assert!(Instant::now() < deadline, "no list change came");
        thread::sleep(Duration::from_millis(10));
    }
    case.call(1, "echo", None);
    assert_eq!(case.text(1), "echoed");
}

#[test]
fn the_legacy_transport_posts_to_its_endpoint_and_reads_answers_on_the_stream() {
    let (tx, rx) = crossbeam_channel::unbounded::<Value>();
    let rx = Arc::new(Mutex::new(rx));
    // `notifications/initialized` is accepted slowly: a request posted before
    // that (each message has a POST of its own) would come in meanwhile.
    let (listed, listing) = crossbeam_channel::unbounded::<()>();
    let early = Arc::new(AtomicBool::new(false));
    let too_early = Arc::clone(&early);
    let server =
        Server::start(
            move |seen, reply| match (seen.method.as_str(), seen.target.as_str()) {
                ("GET", "/sse") => {
                    reply.events(&[]);
                    reply
                        .event(Some("endpoint"), "/messages?session=abc")
                        .unwrap();
                    let rx = lock(&rx).clone();
                    while let Ok(message) = rx.recv() {
                        if reply.event(Some("message"), &message.to_string()).is_err() {
                            return;
                        }
                    }
                }
                ("POST", "/messages?session=abc") => {
                    let message = seen.json();
                    if message["method"] == "notifications/initialized"
                        && listing.recv_timeout(Duration::from_millis(300)).is_ok()
                    {
                        too_early.store(true, Ordering::SeqCst);
                    }
                    reply.send(202, &[], b"Accepted");
                    let id = message["id"].clone();
                    let answer = match message["method"].as_str() {
                        Some("initialize") => json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "legacy", "version": "1"}}}),
                        Some("tools/list") => {
                            let _ = listed.send(());
                            json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                    {"name": "echo", "inputSchema": {"type": "object"}}]}})
                        }
                        Some("tools/call") => result(&message, "legacy echo"),
                        _ => return,
                    };
                    let _ = tx.send(answer);
                }
                _ => reply.send(404, &[], b""),
            },
        );
    let case = Case::open(spec("s", &server.url("/sse"), RemoteKind::Sse, &[])).unwrap();
    assert_eq!(case.tools, ["echo"]);
    assert!(
        !early.load(Ordering::SeqCst),
        "tools/list was posted before notifications/initialized was accepted"
    );
    case.call(1, "echo", None);
    assert_eq!(case.text(1), "legacy echo");
    assert!(matches!(case.conn.era(), Some(Era::Legacy { .. })));
}

#[test]
fn the_legacy_transport_ends_with_its_stream() {
    let server = Server::start(|seen, reply| match seen.method.as_str() {
        "GET" => {
            reply.events(&[]);
            reply
                .event(Some("endpoint"), "http://127.0.0.2:1/elsewhere")
                .unwrap();
            thread::sleep(Duration::from_millis(500));
        }
        _ => reply.accepted(),
    });
    let why = Case::open(spec("s", &server.url("/sse"), RemoteKind::Sse, &[]))
        .err()
        .expect("refused");
    assert!(why.contains("another origin (http://127.0.0.2:1)"), "{why}");
}

#[test]
fn a_modern_only_server_is_reached_with_the_headers_its_revision_requires() {
    let server = Server::start(|seen, reply| {
        let message = seen.json();
        let id = message["id"].clone();
        match message["method"].as_str() {
            Some("initialize") => reply.json(400, &[], &json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32022, "message": "Unsupported protocol version",
                    "data": {"supported": ["2026-07-28"], "requested": "2025-11-25"}}})),
            Some("server/discover") => reply.json(200, &[], &json!({"jsonrpc": "2.0", "id": id, "result": {
                "resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                "ttlMs": 0, "cacheScope": "private"}})),
            Some("tools/list") => reply.json(200, &[], &json!({"jsonrpc": "2.0", "id": id, "result": {
                "resultType": "complete", "ttlMs": 0, "cacheScope": "private",
                "tools": [{"name": "wëather", "inputSchema": {"type": "object"}}]}})),
            Some("tools/call") => reply.json(200, &[], &result(&message, "sunny")),
            _ => reply.send(400, &[], b""),
        }
    });
    let case = Case::open(spec(
        "s",
        &server.url("/mcp"),
        RemoteKind::StreamableHttp,
        &[],
    ))
    .unwrap();
    assert!(matches!(case.conn.era(), Some(Era::Modern(_))));
    case.call(1, "wëather", None);
    assert_eq!(case.text(1), "sunny");
    let seen = server.seen();
    for s in seen
        .iter()
        .filter(|s| s.rpc_method().as_deref() != Some("initialize"))
    {
        assert_eq!(
            s.header("mcp-protocol-version"),
            Some("2026-07-28"),
            "{s:?}"
        );
        assert_eq!(s.header("mcp-method"), s.rpc_method().as_deref());
        assert_eq!(s.header("mcp-session-id"), None);
    }
    let call = seen
        .iter()
        .find(|s| s.rpc_method().as_deref() == Some("tools/call"))
        .unwrap();
    assert_eq!(call.header("mcp-name"), Some("=?base64?d8OrYXRoZXI=?="));
    assert!(
        seen.iter().all(|s| s.method == "POST"),
        "no GET stream in the modern era"
    );
}

#[test]
fn a_401_says_a_sign_in_is_needed() {
    let server = Server::start(|_, reply| reply.send(401, &[("WWW-Authenticate", "Bearer")], b""));
    let why = Case::open(spec(
        "s",
        &server.url("/mcp"),
        RemoteKind::StreamableHttp,
        &[],
    ))
    .err()
    .expect("refused");
    assert!(
        why.starts_with("Sign-in needed for server 's' (toolbox 't')")
            && why.contains("mcp-workbench login t/s"),
        "{why}"
    );
}

#[test]
fn a_server_that_is_not_there_is_named_with_the_reason() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/mcp");
    let why = Case::open(spec("s", &url, RemoteKind::StreamableHttp, &[]))
        .err()
        .expect("refused");
    assert!(
        why.contains(&format!("{url} (shown): the connection was refused")),
        "{why}"
    );
    let why = Case::open(spec(
        "s",
        "http://no-such-host.invalid/mcp",
        RemoteKind::StreamableHttp,
        &[],
    ))
    .err()
    .expect("refused");
    assert!(why.contains("its host name does not resolve"), "{why}");
}

/// The threads whose names start with `[t/NAME]` (Linux reads them in `/proc`).
#[cfg(target_os = "linux")]
fn threads_of(name: &str) -> usize {
    let prefix = format!("[t/{name}]");
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter(|task| {
            std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|comm| comm.starts_with(&prefix))
        })
        .count()
}

#[cfg(target_os = "linux")]
#[test]
fn an_open_server_costs_one_thread_and_a_stopped_one_none() {
    let server = Server::start(|seen, reply| {
        if seen.method == "GET" {
            reply.events(&[]);
            while reply.chunk(b": ping\n\n").is_ok() {
                thread::sleep(Duration::from_millis(20));
            }
            return;
        }
        standard(seen, reply, &echo)
    });
    let case = Case::open(spec(
        "thr",
        &server.url("/mcp"),
        RemoteKind::StreamableHttp,
        &[],
    ))
    .unwrap();
    case.call(1, "echo", None);
    assert_eq!(case.text(1), "echoed");
    assert!(server.wait_for(WAIT, |seen| seen.iter().any(|s| s.method == "GET")));
    let one = wait_until(|| threads_of("thr") == 1);
    assert!(
        one,
        "while open, with its GET stream: {} threads",
        threads_of("thr")
    );
    case.conn.stop("");
    let none = wait_until(|| threads_of("thr") == 0);
    assert!(none, "once stopped: {} threads", threads_of("thr"));
}

#[cfg(target_os = "linux")]
fn wait_until(done: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + WAIT;
    while !done() {
        if Instant::now() >= deadline {
            return false;
        }
        thread::sleep(Duration::from_millis(10));
    }
    true
}
