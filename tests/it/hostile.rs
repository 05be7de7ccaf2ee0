//! Hostile input at scale: 64 MiB lines from the host (a request whose params
//! hold a 64 MiB string, and 64 MiB lines that are not JSON) get the right
//! answers and leave the server serving; a 64 MiB tool result from a child
//! reaches the host intact. The framing has no line-length cap (docs/reference.md §4.1),
//! so these lines must pass whole, not be cut or refused.
//!
//! A 32 MiB `use_tool` argument of small integers is forwarded without being
//! built into a tree: the workbench's peak memory stays a small multiple of
//! the line (issue 9, item 11).
//!
//! The transcript cases `testdata/transcripts/hostile-*` cover the small hostile
//! lines; this file covers what is too big to keep in a transcript.

use crate::harness::{peak_rss, Workbench, FAKE};
use serde_json::{json, Value};
use std::time::Duration;

const HUGE: usize = 64 << 20;
/// Generous: a debug build parses and writes 64 MiB lines, several at a time
/// when the test threads run in parallel.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(120);
/// How long the workbench may take to exit after stdin EOF.
const EXIT_TIMEOUT: Duration = Duration::from_secs(30);

/// A workbench whose toolbox `dev` has one server, `files`, with `tools`;
/// logging at warn level (debug would log the 64 MiB lines).
fn start(name: &str, tools: Value) -> Workbench {
    let config = json!({"toolboxes": {"dev": {
        "description": "Development environment",
        "mcpServers": {"files": {"command": FAKE, "args": ["files.json"]}}
    }}});
    let files = [("files.json", json!({ "tools": tools }))];
    let mut wb = Workbench::start(
        &format!("hostile-{name}"),
        config,
        &files,
        &[("RUST_LOG", "warn")],
    );
    wb.timeout = ANSWER_TIMEOUT;
    assert_eq!(wb.init["id"], 0);
    assert_eq!(wb.init["result"]["protocolVersion"], "2025-06-18");
    wb
}

/// Sends a line of exactly `HUGE` bytes: `prefix`, `fill` repeated, `suffix`.
fn send_huge(wb: &mut Workbench, prefix: &[u8], fill: u8, suffix: &[u8]) {
    wb.send_bytes(&huge_line(prefix, fill, suffix));
}

/// Pings as request `id`: the answer must be the next line, byte for byte.
fn ping(wb: &mut Workbench, id: u64) {
    wb.send_line(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
    assert_eq!(
        wb.recv_line(),
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#).into_bytes()
    );
}

/// `prefix` + `fill` repeated so that the line is exactly `HUGE` bytes with `suffix`.
fn huge_line(prefix: &[u8], fill: u8, suffix: &[u8]) -> Vec<u8> {
    let mut line = Vec::with_capacity(HUGE);
    line.extend_from_slice(prefix);
    line.resize(HUGE - suffix.len(), fill);
    line.extend_from_slice(suffix);
    assert_eq!(line.len(), HUGE);
    line
}

#[test]
fn a_64_mib_request_is_answered_and_the_server_keeps_serving() {
    let mut s = start("request", json!([]));
    // A ping whose params hold an unknown 64 MiB string.
    send_huge(
        &mut s,
        br#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{"padding":""#,
        b'a',
        br#""}}"#,
    );
    assert_eq!(s.recv_line(), br#"{"jsonrpc":"2.0","id":2,"result":{}}"#);
    ping(&mut s, 3);
    // A 64 MiB string id is echoed exactly.
    let (prefix, suffix) = (br#"{"jsonrpc":"2.0","method":"ping","id":""#, br#""}"#);
    send_huge(&mut s, prefix, b'i', suffix);
    let answer = s.recv();
    assert_eq!(answer["result"], json!({}));
    let id = answer["id"].as_str().expect("a string id");
    assert_eq!(id.len(), HUGE - prefix.len() - suffix.len());
    assert!(id.bytes().all(|b| b == b'i'));
    ping(&mut s, 4);
    // tools/call with 64 MiB of arguments to a meta-tool: an isError result.
    send_huge(
        &mut s,
        br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"open_toolbox","arguments":{"toolbox_name":""#,
        b'n',
        br#""}}}"#,
    );
    let answer = s.recv();
    assert_eq!(answer["id"], 5);
    assert_eq!(answer["result"]["isError"], true);
    ping(&mut s, 6);
    s.finish_clean(EXIT_TIMEOUT);
}

#[test]
fn a_64_mib_line_that_is_not_json_gets_a_parse_error() {
    let mut s = start("garbage", json!([]));
    // Looks like a request, but the string never ends: the parser reads all of it.
    send_huge(
        &mut s,
        br#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{"s":""#,
        b'g',
        b"",
    );
    let answer = s.recv();
    assert_eq!(answer["id"], Value::Null);
    assert_eq!(answer["error"]["code"], -32700);
    ping(&mut s, 3);
    // 64 MiB of bytes that are not UTF-8.
    send_huge(&mut s, b"", 0xff, b"");
    assert_eq!(
        s.recv_line(),
        br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: expected value at line 1 column 1"}}"#
    );
    ping(&mut s, 4);
    // A valid request followed by 64 MiB of spaces and a stray byte on the same line.
    send_huge(
        &mut s,
        br#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
        b' ',
        b"x",
    );
    let answer = s.recv();
    assert_eq!(answer["id"], Value::Null);
    assert_eq!(answer["error"]["code"], -32700);
    ping(&mut s, 6);
    s.finish_clean(EXIT_TIMEOUT);
}

#[test]
fn a_64_mib_tool_result_passes_through_intact() {
    let mut s = start(
        "result",
        json!([{"tool": {"name": "big", "inputSchema": {"type": "object"}}, "action": {"textBytes": HUGE}}]),
    );
    s.send_bytes(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"open_toolbox","arguments":{"toolbox_name":"dev"}}}"#);
    let open = s.recv();
    assert_eq!(open["id"], 2);
    assert_eq!(open["result"]["structuredContent"]["servers_connected"], 1);
    for id in [3, 4] {
        s.send_bytes(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"use_tool","arguments":{{"tool":{{"toolbox":"dev","server":"files","tool":"big"}}}}}}}}"#).as_bytes());
        let line = s.recv_line();
        assert!(
            line.len() > HUGE,
            "the whole result came back ({} bytes)",
            line.len()
        );
        let answer: Value = serde_json::from_slice(&line).expect("the result line parses");
        assert_eq!(answer["jsonrpc"], "2.0");
        assert_eq!(answer["id"], id);
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .expect("a text result");
        assert_eq!(text.len(), HUGE);
        assert!(text.bytes().all(|b| b == b'x'));
        assert_eq!(answer["result"]["content"][0]["type"], "text");
        ping(&mut s, 10 + id);
    }
    s.finish_clean(EXIT_TIMEOUT);
}

#[test]
fn a_32_mib_argument_of_small_integers_costs_a_few_times_its_size() {
    const LINE: usize = 32 << 20;
    let mut s = start(
        "memory",
        json!([{"tool": {"name": "quiet", "inputSchema": {"type": "object"}}, "action": {"reply": {"content": [{"type": "text", "text": "done"}]}}}]),
    );
    s.send_bytes(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"open_toolbox","arguments":{"toolbox_name":"dev"}}}"#);
    assert_eq!(s.recv()["id"], 2);
    let prefix = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"use_tool","arguments":{"tool":{"toolbox":"dev","server":"files","tool":"quiet"},"arguments":{"n":[1"#;
    let suffix = b"]}}}}";
    let mut line = Vec::with_capacity(LINE);
    line.extend_from_slice(prefix);
    while line.len() + 2 + suffix.len() <= LINE {
        line.extend_from_slice(b",1");
    }
    line.extend_from_slice(suffix);
    s.send_bytes(&line);
    drop(line);
    let answer = s.recv();
    assert_eq!(answer["id"], 3);
    assert_eq!(answer["result"]["content"][0]["text"], "done");
    let peak = peak_rss(s.pid());
    eprintln!("peak RSS {} MiB for a {} MiB line", peak >> 20, LINE >> 20);
    // About 19 times the line when the arguments were parsed into a tree; now
    // about 3: the host's line, the request line for the child, and the part
    // of it the pipe did not take, queued for the child's writer.
    assert!(
        peak < 4 * LINE,
        "peak RSS {} MiB for a {} MiB line",
        peak >> 20,
        LINE >> 20
    );
    ping(&mut s, 4);
    s.finish_clean(EXIT_TIMEOUT);
}
