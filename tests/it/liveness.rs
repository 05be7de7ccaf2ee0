//! Liveness: no stalled, dying or hostile peer wedges the workbench, and every
//! stop really stops. Each test is one way a peer misbehaves: a child that
//! stops reading its stdin, a crash behind a helper that keeps stdout open, a
//! start that never completes, calls piling up on a dead server, pipelined
//! lifecycle requests, cancellations, progress forever, a host that stops
//! reading, and shutdown triggers that arrive twice.
//!
//! The bounds here are generous (seconds against what used to take the
//! whole stop sequence or never ended); they turn hangs into failures and are
//! not speed measurements.

use crate::harness::{
    self, case_dir, command, exit_within, fake, is_error, leftover_processes, processes_with, text,
    tool, toolbox, wait_until, Workbench, INITIALIZE,
};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::Write;
use std::process::Stdio;
use std::thread;
use std::time::{Duration, Instant};

#[test]
fn a_child_that_stops_reading_its_stdin_blocks_nothing_else() {
    let script =
        json!({"tools": [tool("stall", json!({"stallStdin": true})), tool("echo", json!({}))]});
    let config = json!({"toolboxes": {
        "stuck": toolbox(json!({"s": fake("s.json")})),
        "fine": toolbox(json!({"s": fake("s.json")}))}});
    let mut wb = Workbench::start("stalled-stdin", config, &[("s.json", script)], &[]);
    wb.open_ok(1, "stuck");
    wb.open_ok(2, "fine");
    wb.use_tool(3, "stuck", "s", "stall", json!({}));
    // 40 calls of 300 KB: far more than the pipe and the queue hold.
    let big = "x".repeat(300_000);
    for id in 100..140 {
        wb.use_tool(id, "stuck", "s", "echo", json!({"pad": big}));
    }
    wb.send(json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}));
    wb.use_tool(5, "fine", "s", "echo", json!({"n": 1}));
    let mut others = Vec::new();
    assert_eq!(wb.answer(4, &mut others)["result"], json!({}));
    let fine = wb.answer(5, &mut others);
    assert_eq!(text(&fine), r#"echo {"n":1}"#);
    // The calls the child could not take failed at once, saying why.
    let refused = others
        .iter()
        .filter(|l| text(l).contains("not reading its stdin"))
        .count();
    assert!(refused > 0, "no call was refused: {others:?}");
    // Closing the stuck toolbox answers every call still in flight once.
    wb.call(6, "close_toolbox", json!({"toolbox_name": "stuck"}));
    let closed = wb.answer(6, &mut others);
    assert!(
        text(&closed).starts_with("Toolbox 'stuck' closed"),
        "{closed}"
    );
    let mut answered: HashMap<i64, usize> = HashMap::new();
    for line in &others {
        if let Some(id) = line["id"].as_i64() {
            *answered.entry(id).or_default() += 1;
        }
    }
    while answered.len() < 41 {
        let line = wb.recv();
        *answered.entry(line["id"].as_i64().unwrap()).or_default() += 1;
    }
    assert!(answered.values().all(|&n| n == 1), "{answered:?}");
    assert_eq!(wb.finish().0, Some(0));
}

#[test]
fn a_crash_is_noticed_while_a_helper_keeps_stdout_open() {
    let script = json!({"tools": [tool("die", json!({"exit": 3})), tool("echo", json!({}))]});
    // The shell's background `sleep` inherits the server's stdout and outlives it.
    let server = json!({"command": "sh", "args": ["-c", "sleep 30 & exec \"$0\" s.json", "${FAKE_MCP_SERVER}"],
        "callTimeoutMs": 60000});
    let config = json!({"toolboxes": {"box": toolbox(json!({"s": server}))}});
    let mut wb = Workbench::start("helper-stdout", config, &[("s.json", script)], &[]);
    wb.open_ok(1, "box");
    let began = Instant::now();
    wb.use_tool(2, "box", "s", "die", json!({}));
    let died = wb.recv();
    assert!(
        text(&died).contains("the server process ended (exit status 3)"),
        "{died}"
    );
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "noticed only by a timeout"
    );
    // The next call restarts it.
    wb.use_tool(3, "box", "s", "echo", json!({}));
    assert_eq!(text(&wb.recv()), "echo {}");
    assert_eq!(wb.finish().0, Some(0));
}

#[test]
fn a_failed_open_is_answered_at_its_deadline_not_after_the_stop() {
    let script = json!({"initialize": "ignore", "ignoreStdinEof": true, "ignoreSigterm": true});
    let server =
        json!({"command": "${FAKE_MCP_SERVER}", "args": ["s.json"], "startupTimeoutMs": 1000});
    let config = json!({"toolboxes": {"box": toolbox(json!({"s": server}))}});
    let mut wb = Workbench::start("failed-open", config, &[("s.json", script)], &[]);
    let began = Instant::now();
    wb.call(1, "open_toolbox", json!({"toolbox_name": "box"}));
    let line = wb.recv();
    let took = began.elapsed();
    assert!(text(&line).contains("no answer within 1000 ms"), "{line}");
    // The stop sequence of this child takes 4 s (it ignores EOF and SIGTERM).
    assert!(
        took < Duration::from_millis(3500),
        "answered after {took:?}"
    );
    drop(wb.stdin.take());
    assert_eq!(wb.wait_exit(Duration::from_secs(10)), Some(Some(0)));
    let left = leftover_processes(&wb.dir);
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn calls_to_a_dead_server_queue_for_one_restart_and_each_gets_one_answer() {
    let script = json!({"initializeDelayMs": 300, "tools": [tool("die", json!({"exit": 1})), tool("echo", json!({}))]});
    let config = json!({"toolboxes": {"box": toolbox(json!({"s": fake("s.json")}))}});
    let mut wb = Workbench::start("dead-server-calls", config, &[("s.json", script)], &[]);
    wb.open_ok(1, "box");
    wb.use_tool(2, "box", "s", "die", json!({}));
    assert!(is_error(&wb.recv()));
    let calls = 2000;
    for id in 0..calls {
        wb.use_tool(1000 + id, "box", "s", "echo", json!({"i": id}));
    }
    let pid = wb.pid();
    let mut most_threads = 0;
    let mut answers: HashMap<i64, Value> = HashMap::new();
    while answers.len() < calls as usize {
        most_threads = most_threads.max(harness::threads(pid));
        let line = wb.recv();
        let id = line["id"].as_i64().unwrap();
        assert!(answers.insert(id, line).is_none(), "{id} answered twice");
    }
    // Every call was forwarded to the restarted server (none told to reopen).
    for (id, line) in &answers {
        assert_eq!(
            text(line),
            format!(r#"echo {{"i":{}}}"#, id - 1000),
            "{line}"
        );
    }
    assert!(most_threads < 50, "{most_threads} threads");
    assert_eq!(wb.finish().0, Some(0));
}

#[test]
fn pipelined_open_and_close_of_one_toolbox_run_in_order() {
    let script = json!({"tools": [tool("echo", json!({}))]});
    let config = json!({"toolboxes": {"box": toolbox(json!({"s": fake("s.json")}))}});
    let mut wb = Workbench::start("open-close-order", config, &[("s.json", script)], &[]);
    for round in 0..10 {
        let id = 10 * round;
        wb.call(id + 1, "open_toolbox", json!({"toolbox_name": "box"}));
        wb.call(id + 2, "close_toolbox", json!({"toolbox_name": "box"}));
        let (first, second) = (wb.recv(), wb.recv());
        assert_eq!(
            (first["id"].as_i64(), second["id"].as_i64()),
            (Some(id + 1), Some(id + 2))
        );
        assert!(
            text(&second).starts_with("Toolbox 'box' closed"),
            "{second}"
        );
        // Closed: the call opens it again with just its server.
        wb.use_tool(id + 3, "box", "s", "echo", json!({}));
        assert_eq!(text(&wb.recv()), "echo {}");
    }
    assert_eq!(wb.finish().0, Some(0));
}

#[test]
fn cancelled_requests_that_wait_in_the_workbench_get_no_answer() {
    let slow = json!({"initializeDelayMs": 800, "tools": [tool("die", json!({"exit": 1})), tool("echo", json!({}))]});
    let config = json!({"toolboxes": {
        "slow": toolbox(json!({"s": fake("s.json")})),
        "other": toolbox(json!({"s": fake("s.json")}))}});
    let mut wb = Workbench::start("cancel-waiting", config, &[("s.json", slow)], &[]);
    // An open cancelled while its server starts (it takes 800 ms): the
    // start ends, unanswered.
    wb.call(1, "open_toolbox", json!({"toolbox_name": "slow"}));
    let starting = wait_until(Duration::from_secs(10), || {
        !processes_with(&wb.dir, "s.json").is_empty()
    });
    assert!(starting, "the server never started");
    wb.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
    );
    let early = wb.recv_within(Duration::from_millis(1500));
    assert!(early.is_none(), "answered a cancelled open: {early:?}");
    // A call cancelled while it waits for its server's restart.
    wb.open_ok(2, "other");
    wb.use_tool(3, "other", "s", "die", json!({}));
    assert_eq!(wb.recv()["id"], 3);
    wb.use_tool(4, "other", "s", "echo", json!({}));
    wb.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 4}}),
    );
    wb.use_tool(5, "other", "s", "echo", json!({"after": true}));
    let mut others = Vec::new();
    let after = wb.answer(5, &mut others);
    assert_eq!(text(&after), r#"echo {"after":true}"#);
    // Give a wrong answer time to arrive.
    while let Some(line) = wb.recv_within(Duration::from_millis(1500)) {
        others.push(line);
    }
    assert!(
        others.is_empty(),
        "answered a cancelled request: {others:?}"
    );
    assert_eq!(wb.finish().0, Some(0));
}

#[test]
fn progress_cannot_keep_a_call_alive_past_max_call_timeout() {
    let progress: Vec<Value> = (0..100).map(|i| json!({"progress": i})).collect();
    let script = json!({"tools": [tool("forever", json!({"progress": progress, "progressIntervalMs": 100}))]});
    let server = json!({"command": "${FAKE_MCP_SERVER}", "args": ["s.json"],
        "callTimeoutMs": 400, "maxCallTimeoutMs": 1500});
    let config = json!({"toolboxes": {"box": toolbox(json!({"s": server}))}});
    let mut wb = Workbench::start("max-call-timeout", config, &[("s.json", script)], &[]);
    wb.open_ok(1, "box");
    let meta = json!({"progressToken": "p"});
    wb.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "use_tool",
        "arguments": {"tool": {"toolbox": "box", "server": "s", "tool": "forever"}}, "_meta": meta}}));
    let mut others = Vec::new();
    let line = wb.answer(2, &mut others);
    assert!(
        text(&line).contains("timed out after 1500 ms (maxCallTimeoutMs)"),
        "{line}"
    );
    // Progress flowed (each restarting the 400 ms deadline) until the cap.
    assert!(others.len() >= 5, "{} progress notifications", others.len());
    assert_eq!(wb.finish().0, Some(0));
}

#[test]
fn shutdown_completes_when_the_host_stops_reading_stdout() {
    let script = json!({"ignoreStdinEof": true, "tools": [
        tool("big", json!({"textBytes": 4_000_000})),
        tool("slow", json!({"delayMs": 60000}))]});
    let config = json!({"toolboxes": {"box": toolbox(json!({"s": fake("s.json")}))}});
    let dir = case_dir("host-not-reading", &config, &[("s.json", script)]);
    let mut child = command(&dir, &[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let _stdout = child.stdout.take(); // held, never read
    let lines = [
        INITIALIZE.to_string(),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}).to_string(),
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"open_toolbox","arguments":{"toolbox_name":"box"}}}).to_string(),
    ];
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    thread::sleep(Duration::from_millis(1000));
    for (id, name) in [(2, "big"), (3, "slow"), (4, "big")] {
        let call = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"use_tool",
            "arguments":{"tool":{"toolbox":"box","server":"s","tool":name}}}});
        writeln!(stdin, "{call}").unwrap();
    }
    thread::sleep(Duration::from_millis(1000));
    drop(stdin);
    // The stop sequence of this child takes about 2 s (it ignores EOF).
    let status = exit_within(&mut child, Duration::from_secs(8));
    let left = leftover_processes(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(status.is_some(), "the workbench did not exit");
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn sigterm_after_stdin_eof_hurries_the_stop_but_kills_every_group() {
    // The server runs behind `sh -c`, ignores EOF and SIGTERM: only the group
    // SIGKILL ends it. The SIGTERM that follows EOF must not cut that short.
    let script =
        json!({"ignoreStdinEof": true, "ignoreSigterm": true, "tools": [tool("echo", json!({}))]});
    let server =
        json!({"command": "sh", "args": ["-c", "\"$0\" s.json; echo done", "${FAKE_MCP_SERVER}"]});
    let config = json!({"toolboxes": {"box": toolbox(json!({"s": server}))}});
    let mut wb = Workbench::start("eof-then-sigterm", config, &[("s.json", script)], &[]);
    wb.open_ok(1, "box");
    drop(wb.stdin.take());
    // The stop on EOF has begun: SIGTERM is the second trigger.
    let stopping = wb.wait_log(
        "the host closed stdin; stopping",
        1,
        Duration::from_secs(10),
    );
    assert!(stopping, "the workbench did not see the EOF");
    harness::signal(wb.pid(), "TERM");
    let code = wb.wait_exit(Duration::from_secs(10));
    assert_eq!(code, Some(Some(0)));
    let left = leftover_processes(&wb.dir);
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_call_right_after_a_crash_is_never_told_to_reopen_the_toolbox() {
    // Twenty rounds over five identical servers: a server that keeps dying is
    // restarted after a backoff that doubles up to 5 s, which twenty deaths
    // of one server would spend most of a minute waiting out. Four deaths
    // each still see restarts at once and after a backoff.
    const SERVERS: i64 = 5;
    let script = json!({"tools": [tool("die", json!({"exit": 1})), tool("echo", json!({}))]});
    let servers: serde_json::Map<String, Value> = (0..SERVERS)
        .map(|i| (format!("s{i}"), fake("s.json")))
        .collect();
    let config = json!({"toolboxes": {"box": toolbox(Value::Object(servers))}});
    let mut wb = Workbench::start("restart-race", config, &[("s.json", script)], &[]);
    wb.open_ok(1, "box");
    for round in 0..20 {
        let id = 10 * (round + 1);
        let server = format!("s{}", round % SERVERS);
        wb.use_tool(id, "box", &server, "die", json!({}));
        wb.use_tool(id + 1, "box", &server, "echo", json!({}));
        let mut others = Vec::new();
        let echo = wb.answer(id + 1, &mut others);
        // In flight when the server died, or forwarded after a restart.
        assert!(
            text(&echo) == "echo {}" || text(&echo).contains("failed while running tool 'echo'"),
            "{echo}"
        );
        if others.is_empty() {
            wb.answer(id, &mut others);
        }
    }
    assert_eq!(wb.finish().0, Some(0));
}

#[test]
fn a_helper_in_its_own_session_holding_the_pipes_leaks_no_thread_or_fd() {
    let script = json!({"tools": [tool("echo", json!({}))]});
    // `setsid` puts the helper out of the server's process group: the stop
    // sequence cannot kill it, and it keeps stdout and stderr open for 3 s.
    let server = json!({"command": "sh", "args": ["-c", "setsid sleep 3 & exec \"$0\" s.json", "${FAKE_MCP_SERVER}"]});
    let config = json!({"toolboxes": {"box": toolbox(json!({"s": server}))}});
    let mut wb = Workbench::start("setsid-helper", config, &[("s.json", script)], &[]);
    let pid = wb.pid();
    let mut counts = Vec::new();
    for round in 0..5 {
        wb.open_ok(2 * round + 1, "box");
        wb.call(
            2 * round + 2,
            "close_toolbox",
            json!({"toolbox_name": "box"}),
        );
        assert!(text(&wb.recv()).starts_with("Toolbox 'box' closed"));
        counts.push((harness::threads(pid), harness::fds(pid)));
    }
    // A thread that answered may still be ending (a toolbox's worker, a
    // catalog write): what leaks never goes away, so wait for the counts to
    // come back to the first cycle's.
    let first = counts[0];
    let mut last = counts[4];
    let settled = harness::wait_until(Duration::from_secs(10), || {
        last = (harness::threads(pid), harness::fds(pid));
        last.0 <= first.0 + 1 && last.1 <= first.1
    });
    assert!(
        settled,
        "threads and fds after each cycle: {counts:?}, then {last:?}\n{}",
        wb.log()
    );
    assert_eq!(wb.finish().0, Some(0));
}

#[test]
fn dynamic_mode_a_flooding_child_starves_no_other_relist() {
    let flood = json!({"tools": [tool("flood", json!({"listChangedEveryMs": 20}))]});
    let grow = json!({"tools": [tool("grow", json!({
        "addTools": [{"name": "grown", "inputSchema": {"type": "object"}}],
        "stdout": [{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}]}))]});
    let config = json!({"mode": "dynamic", "toolboxes": {
        "a": toolbox(json!({"flood": fake("flood.json")})),
        "b": toolbox(json!({"grow": fake("grow.json")}))}});
    let files = [("flood.json", flood), ("grow.json", grow)];
    let mut wb = Workbench::start("relist-flood", config, &files, &[]);
    let mut others = Vec::new();
    wb.open_ok(1, "a");
    wb.open_ok(2, "b");
    wb.use_tool(3, "a", "flood", "flood", json!({}));
    wb.answer(3, &mut others);
    wb.use_tool(4, "b", "grow", "grow", json!({}));
    wb.answer(4, &mut others);
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut id = 100;
    loop {
        id += 1;
        let list = wb.answer_to(id, "tools/list", json!({}), &mut others);
        let names: Vec<&str> = list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        if names.iter().any(|n| n.contains("grown")) {
            break;
        }
        assert!(Instant::now() < deadline, "never re-listed: {names:?}");
        thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(wb.finish().0, Some(0));
}

#[test]
fn dynamic_mode_an_unanswered_relist_delays_no_close() {
    let mute =
        json!({"tools": [tool("mute", json!({"listChangedEveryMs": 500, "stallStdin": true}))]});
    let server =
        json!({"command": "${FAKE_MCP_SERVER}", "args": ["mute.json"], "startupTimeoutMs": 60000});
    let config = json!({"mode": "dynamic", "toolboxes": {
        "a": toolbox(json!({"mute": server})),
        "b": toolbox(json!({"mute": server}))}});
    let mut wb = Workbench::start("relist-unanswered", config, &[("mute.json", mute)], &[]);
    let mut others = Vec::new();
    wb.open_ok(1, "a");
    wb.open_ok(2, "b");
    wb.use_tool(3, "a", "mute", "mute", json!({}));
    // The re-list of a/mute is sent and never answered.
    thread::sleep(Duration::from_millis(1500));
    let began = Instant::now();
    wb.call(4, "close_toolbox", json!({"toolbox_name": "b"}));
    wb.call(5, "close_toolbox", json!({"toolbox_name": "a"}));
    let closed_b = wb.answer(4, &mut others);
    let closed_a = wb.answer(5, &mut others);
    assert!(
        text(&closed_b).starts_with("Toolbox 'b' closed"),
        "{closed_b}"
    );
    assert!(
        text(&closed_a).starts_with("Toolbox 'a' closed"),
        "{closed_a}"
    );
    // Closing stops each child (up to 2 s for EOF); the re-list's 60 s never counts.
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "{:?}",
        began.elapsed()
    );
    assert_eq!(wb.finish().0, Some(0));
}
