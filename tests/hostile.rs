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

mod common;

use common::leftover_processes;
use serde_json::{json, Value};
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

const WORKBENCH: &str = env!("CARGO_BIN_EXE_mcp-workbench");
const FAKE: &str = env!("CARGO_BIN_EXE_mcp-fake-server");
const HUGE: usize = 64 << 20;
/// Generous: a debug build parses and writes 64 MiB lines, several at a time
/// when the test threads run in parallel.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(120);

struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Vec<u8>>,
    dir: PathBuf,
}

impl Session {
    fn start(name: &str, tools: Value) -> Session {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("hostile-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let config = json!({"toolboxes": {"dev": {
            "description": "Development environment",
            "mcpServers": {"files": {"command": FAKE, "args": ["files.json"]}}
        }}});
        fs::write(dir.join("config.json"), config.to_string()).unwrap();
        fs::write(
            dir.join("files.json"),
            json!({ "tools": tools }).to_string(),
        )
        .unwrap();
        let mut child = Command::new(WORKBENCH)
            .args(["--config", "config.json"])
            .current_dir(&dir)
            .env_clear()
            .env("PATH", common::system_path())
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the workbench starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::with_capacity(1 << 20, stdout).split(b'\n') {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut session = Session {
            child,
            stdin,
            lines,
            dir,
        };
        session.send(
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}"#,
        );
        let init = session.next_json();
        assert_eq!(init["id"], 1);
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
        session.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        session
    }

    /// Sends one line (the `\n` is added).
    fn send(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line).expect("the workbench reads stdin");
        stdin.write_all(b"\n").expect("the workbench reads stdin");
        stdin.flush().unwrap();
    }

    /// Sends a line of exactly `HUGE` bytes: `prefix`, `fill` repeated, `suffix`.
    fn send_huge(&mut self, prefix: &[u8], fill: u8, suffix: &[u8]) {
        self.send(&huge_line(prefix, fill, suffix));
    }

    fn next_line(&mut self) -> Vec<u8> {
        self.lines
            .recv_timeout(ANSWER_TIMEOUT)
            .expect("the workbench answers in time")
    }

    fn next_json(&mut self) -> Value {
        let line = self.next_line();
        serde_json::from_slice(&line).expect("every stdout line is JSON")
    }

    fn ping(&mut self, id: u64) {
        self.send(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).as_bytes());
        assert_eq!(
            self.next_line(),
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#).into_bytes()
        );
    }

    /// Closes stdin and expects exit 0, nothing more on stdout, and no process left.
    fn finish(mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the workbench did not exit within 30 s of stdin EOF");
            }
            thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(status.code(), Some(0), "exit status on stdin EOF");
        let extra: Vec<String> = self
            .lines
            .try_iter()
            .map(|l| String::from_utf8_lossy(&l[..l.len().min(200)]).into_owned())
            .collect();
        assert!(extra.is_empty(), "unexpected output: {extra:?}");
        let leftovers = leftover_processes(&self.dir);
        assert!(leftovers.is_empty(), "processes left behind: {leftovers:?}");
        let _ = fs::remove_dir_all(&self.dir);
    }
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
    let mut s = Session::start("request", json!([]));
    // A ping whose params hold an unknown 64 MiB string.
    s.send_huge(
        br#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{"padding":""#,
        b'a',
        br#""}}"#,
    );
    assert_eq!(s.next_line(), br#"{"jsonrpc":"2.0","id":2,"result":{}}"#);
    s.ping(3);
    // A 64 MiB string id is echoed exactly.
    let (prefix, suffix) = (br#"{"jsonrpc":"2.0","method":"ping","id":""#, br#""}"#);
    s.send_huge(prefix, b'i', suffix);
    let answer = s.next_json();
    assert_eq!(answer["result"], json!({}));
    let id = answer["id"].as_str().expect("a string id");
    assert_eq!(id.len(), HUGE - prefix.len() - suffix.len());
    assert!(id.bytes().all(|b| b == b'i'));
    s.ping(4);
    // tools/call with 64 MiB of arguments to a meta-tool: an isError result.
    s.send_huge(
        br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"open_toolbox","arguments":{"toolbox_name":""#,
        b'n',
        br#""}}}"#,
    );
    let answer = s.next_json();
    assert_eq!(answer["id"], 5);
    assert_eq!(answer["result"]["isError"], true);
    s.ping(6);
    s.finish();
}

#[test]
fn a_64_mib_line_that_is_not_json_gets_a_parse_error() {
    let mut s = Session::start("garbage", json!([]));
    // Looks like a request, but the string never ends: the parser reads all of it.
    s.send_huge(
        br#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{"s":""#,
        b'g',
        b"",
    );
    let answer = s.next_json();
    assert_eq!(answer["id"], Value::Null);
    assert_eq!(answer["error"]["code"], -32700);
    s.ping(3);
    // 64 MiB of bytes that are not UTF-8.
    s.send_huge(b"", 0xff, b"");
    assert_eq!(
        s.next_line(),
        br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: expected value at line 1 column 1"}}"#
    );
    s.ping(4);
    // A valid request followed by 64 MiB of spaces and a stray byte on the same line.
    s.send_huge(br#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#, b' ', b"x");
    let answer = s.next_json();
    assert_eq!(answer["id"], Value::Null);
    assert_eq!(answer["error"]["code"], -32700);
    s.ping(6);
    s.finish();
}

#[test]
fn a_64_mib_tool_result_passes_through_intact() {
    let mut s = Session::start(
        "result",
        json!([{"tool": {"name": "big", "inputSchema": {"type": "object"}}, "action": {"textBytes": HUGE}}]),
    );
    s.send(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"open_toolbox","arguments":{"toolbox_name":"dev"}}}"#);
    let open = s.next_json();
    assert_eq!(open["id"], 2);
    assert_eq!(open["result"]["structuredContent"]["servers_connected"], 1);
    for id in [3, 4] {
        s.send(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"use_tool","arguments":{{"tool":{{"toolbox":"dev","server":"files","tool":"big"}}}}}}}}"#).as_bytes());
        let line = s.next_line();
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
        s.ping(10 + id);
    }
    s.finish();
}

/// The peak resident set of a live process (`VmHWM`), in bytes.
fn peak_rss(pid: u32) -> usize {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc is readable");
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .expect("VmHWM in /proc/PID/status");
    kib * 1024
}

#[test]
fn a_32_mib_argument_of_small_integers_costs_a_few_times_its_size() {
    const LINE: usize = 32 << 20;
    let mut s = Session::start(
        "memory",
        json!([{"tool": {"name": "quiet", "inputSchema": {"type": "object"}}, "action": {"reply": {"content": [{"type": "text", "text": "done"}]}}}]),
    );
    s.send(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"open_toolbox","arguments":{"toolbox_name":"dev"}}}"#);
    assert_eq!(s.next_json()["id"], 2);
    let prefix = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"use_tool","arguments":{"tool":{"toolbox":"dev","server":"files","tool":"quiet"},"arguments":{"n":[1"#;
    let suffix = b"]}}}}";
    let mut line = Vec::with_capacity(LINE);
    line.extend_from_slice(prefix);
    while line.len() + 2 + suffix.len() <= LINE {
        line.extend_from_slice(b",1");
    }
    line.extend_from_slice(suffix);
    s.send(&line);
    drop(line);
    let answer = s.next_json();
    assert_eq!(answer["id"], 3);
    assert_eq!(answer["result"]["content"][0]["text"], "done");
    let peak = peak_rss(s.child.id());
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
    s.ping(4);
    s.finish();
}
