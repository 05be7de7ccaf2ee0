//! The handle and the pump's state, without a process or a pump thread:
//! each test feeds events by hand (a call from the host, a line from the
//! child, a deadline, the end of the process) and reads what was written to
//! the host and to the child's stdin.

use super::inbound::Inbound;
use super::outcome::Why;
use super::pending;
use super::transport::stdio::child::ChildInput;
use super::*;
use crate::lock;
use crate::protocol::jsonrpc::{self, RequestId};
use crate::sys::{Stdin, Waker};
use crate::wire::outbox::Outbox;
use crate::wire::{SessionId, SessionIds};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::io::{self, BufRead, BufReader, PipeReader, Write};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

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
    /// The messages received since the last call.
    fn take(&self) -> Vec<Value> {
        let bytes = std::mem::take(&mut *lock(&self.0));
        bytes
            .split(|&b| b == b'\n')
            .filter(|line| !line.is_empty())
            .map(|line| serde_json::from_slice(line).expect("the host gets JSON"))
            .collect()
    }
}

fn stop_asked(conn: &Downstream) -> bool {
    conn.stop_asked()
}

struct Case {
    conn: Arc<Downstream>,
    /// The session the calls come from, and its outbox.
    session: SessionId,
    outbox: Arc<Outbox>,
    host: Host,
    child: BufReader<PipeReader>,
    /// The pump's state, driven by hand.
    pump: Inbound,
}

impl Case {
    fn new() -> Case {
        let (child, stdin) = io::pipe().expect("a pipe");
        let host = Host::default();
        let spec = Spec {
            toolbox: "box".into(),
            server: "s".into(),
            program: "none".into(),
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            command_display: "none".into(),
            cwd_display: None,
            lookup: Default::default(),
            startup_timeout: Duration::from_secs(5),
            call_timeout: Duration::from_secs(10),
            max_call_timeout: Duration::from_secs(100),
            max_result_chars: None,
            remote: None,
        };
        let outbox = Arc::new(Outbox::new(Box::new(host.clone())));
        let stdin = Stdin::new(stdin).expect("a non-blocking pipe");
        let input = ChildInput::new(stdin, Waker::detached(), None);
        let conn = Downstream::new(spec, Arc::new(input), None, None);
        let pump = Inbound::new(Arc::clone(&conn), Arc::clone(&outbox), None);
        Case {
            conn,
            session: SessionIds::default().next(),
            outbox,
            host,
            child: BufReader::new(child),
            pump,
        }
    }

    /// The next message the child received.
    fn child_got(&mut self) -> Value {
        let mut line = String::new();
        self.child.read_line(&mut line).expect("the child's stdin");
        serde_json::from_str(&line).expect("the child gets JSON")
    }

    /// The child writes `message` on its stdout.
    fn child_says(&mut self, message: Value) {
        self.pump.on_line(message.to_string().as_bytes());
    }

    /// The host calls `tool` as request `id`, with a progress token or not.
    fn call(&mut self, id: i64, tool: &str, token: Option<Value>) -> Value {
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
        self.child_got()
    }
}

#[test]
fn a_forwarded_call_gets_a_fresh_id_and_its_result_goes_back_under_the_hosts() {
    let mut case = Case::new();
    let sent = case.call(42, "echo", None);
    assert_eq!(sent["method"], "tools/call");
    assert_eq!(
        sent["params"],
        json!({"name": "echo", "arguments": {"x": 1}})
    );
    let child_id = sent["id"].clone();
    assert_ne!(child_id, json!(42), "the host's ids never reach a child");
    case.child_says(json!({"jsonrpc": "2.0", "id": child_id, "result": {"content": []}}));
    assert_eq!(
        case.host.take(),
        [json!({"jsonrpc": "2.0", "id": 42, "result": {"content": []}})]
    );
    // A second answer to the same id finds nothing.
    case.child_says(json!({"jsonrpc": "2.0", "id": child_id, "result": {}}));
    assert!(case.host.take().is_empty());
    assert!(matches!(case.conn.idle_since(), Idle::Since(_)));
}

#[test]
fn an_error_response_becomes_an_is_error_result_naming_the_tool() {
    let mut case = Case::new();
    let sent = case.call(7, "boom", None);
    case.child_says(json!({"jsonrpc": "2.0", "id": sent["id"],
        "error": {"code": -32000, "message": "it broke"}}));
    let got = case.host.take();
    assert_eq!(got[0]["id"], 7);
    assert_eq!(got[0]["result"]["isError"], true);
    let text = got[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("'boom'") && text.contains("it broke"),
        "{text}"
    );
}

#[test]
fn progress_is_passed_on_with_the_hosts_token_and_pushes_the_deadline() {
    let mut case = Case::new();
    let sent = case.call(1, "slow", Some(json!("host-token")));
    let child_token = sent["params"]["_meta"]["progressToken"].clone();
    assert_eq!(child_token, sent["id"], "the child gets the call's own id");
    let before = case.conn.flight.next_deadline().unwrap();
    std::thread::sleep(Duration::from_millis(5));
    case.child_says(json!({"jsonrpc": "2.0", "method": "notifications/progress",
        "params": {"progressToken": child_token, "progress": 1}}));
    assert_eq!(
        case.host.take(),
        [json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": "host-token", "progress": 1}})]
    );
    let after = case.conn.flight.next_deadline().unwrap();
    assert!(after > before, "the deadline restarted");
    // Progress for something else is dropped.
    case.child_says(json!({"jsonrpc": "2.0", "method": "notifications/progress",
        "params": {"progressToken": 999, "progress": 1}}));
    assert!(case.host.take().is_empty());
}

#[test]
fn a_call_past_its_deadline_is_answered_and_cancelled_downstream() {
    let mut case = Case::new();
    let sent = case.call(3, "slow", None);
    case.conn
        .flight
        .arm(Instant::now(), Duration::from_secs(10));
    case.pump.expire(Instant::now());
    assert!(case.host.take().is_empty(), "not yet");
    case.pump.expire(Instant::now() + Duration::from_secs(11));
    let got = case.host.take();
    let text = got[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(got[0]["id"], 3);
    assert!(
        text.contains("timed out after 10000 ms (callTimeoutMs)"),
        "{text}"
    );
    let cancel = case.child_got();
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], sent["id"]);
}

#[test]
fn the_hosts_cancel_reaches_the_child_and_the_late_answer_is_dropped() {
    let mut case = Case::new();
    let sent = case.call(5, "slow", None);
    assert!(case
        .conn
        .cancel(&RequestId::Int(5), case.session, Some("user")));
    let cancel = case.child_got();
    assert_eq!(
        cancel["params"],
        json!({"requestId": sent["id"], "reason": "user"})
    );
    case.child_says(json!({"jsonrpc": "2.0", "id": sent["id"], "result": {}}));
    assert!(
        case.host.take().is_empty(),
        "a cancelled call gets no answer"
    );
    assert!(
        !case.conn.cancel(&RequestId::Int(5), case.session, None),
        "once"
    );
}

#[test]
fn the_childs_requests_are_answered_ping_alone_with_a_result() {
    let mut case = Case::new();
    case.child_says(json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}));
    assert_eq!(
        case.child_got(),
        json!({"jsonrpc": "2.0", "id": "p", "result": {}})
    );
    case.child_says(json!({"jsonrpc": "2.0", "id": 9, "method": "roots/list"}));
    let refused = case.child_got();
    assert_eq!(refused["id"], 9);
    assert_eq!(refused["error"]["code"], jsonrpc::METHOD_NOT_FOUND);
    // Noise and half messages are skipped; nothing reaches the host.
    for line in [&b"not json"[..], b"{\"jsonrpc\":\"2.0\"}", b"[1,2]"] {
        case.pump.on_line(line);
    }
    assert!(case.host.take().is_empty());
}

#[test]
fn a_log_message_is_named_after_the_toolbox_and_server() {
    let mut case = Case::new();
    case.child_says(json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "logger": "db", "data": "hi"}}));
    let got = case.host.take();
    assert_eq!(got[0]["params"]["logger"], "box/s/db");
}

#[test]
fn the_end_of_the_process_fails_what_is_in_flight_once_with_its_last_words() {
    let mut case = Case::new();
    case.call(1, "a", None);
    case.call(2, "b", None);
    case.pump.keep_stderr_line(b"panic: out of memory");
    case.pump
        .went_down("the server process ended (exit status 1)".into());
    let mut got = case.host.take();
    got.sort_by_key(|m| m["id"].as_i64());
    assert_eq!(got.len(), 2);
    let text = got[1]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("running tool 'b'"), "{text}");
    assert!(
        text.contains("exit status 1") && text.contains("panic: out of memory"),
        "{text}"
    );
    case.pump.went_down("again".into());
    assert!(case.host.take().is_empty(), "answered once");
    assert!(!case.conn.is_up());
    let args = RawValue::from_string("{}".into()).unwrap();
    let refused = case.conn.forward_call(
        RequestId::Int(3),
        (case.session, &case.outbox),
        "c",
        &args,
        &Map::new(),
        None,
        None,
    );
    assert!(matches!(refused, Err(Refused::Down(_))));
}

#[test]
fn a_retiring_connection_answers_its_calls_then_asks_to_stop() {
    let mut case = Case::new();
    let sent = case.call(1, "a", None);
    case.conn.retire("its configuration changed");
    assert!(!stop_asked(&case.conn), "a call is still in flight");
    assert!(!case.conn.is_up(), "new calls wait for a new start");
    case.child_says(json!({"jsonrpc": "2.0", "id": sent["id"], "result": {}}));
    assert_eq!(case.host.take()[0]["id"], 1);
    assert!(
        stop_asked(&case.conn),
        "drained: the child's thread stops it"
    );
}

#[test]
fn a_waiting_request_is_timed_out_by_the_pump_with_the_last_stderr_lines() {
    let mut case = Case::new();
    let (tx, rx) = crossbeam_channel::bounded(1);
    let deadline = Instant::now() + Duration::from_secs(1);
    let wait = pending::Entry::Wait(pending::Waiter { tx, deadline });
    let registered = case.conn.flight.register(wait, Some(deadline)).unwrap();
    assert!(registered.wake, "an earlier deadline wakes the pump");
    case.pump.keep_stderr_line(b"waiting for a licence server");
    case.pump.expire(Instant::now());
    assert!(rx.try_recv().is_err(), "not yet");
    case.pump.expire(deadline);
    let failure = rx.try_recv().unwrap().err().unwrap();
    assert!(matches!(failure.why, Why::Timeout));
    assert_eq!(
        case.conn.describe(&failure, "starting"),
        "no answer within 5000 ms while starting\nLast stderr lines:\n  waiting for a licence server"
    );
}
