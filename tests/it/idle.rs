//! Servers that sleep when idle (`idleTimeoutMs`): they stop after the
//! timeout, their toolbox stays open and answers from their last listing, and
//! the next call starts them again, with the machinery of any start.
//!
//! Timeouts are short (300 ms) and every wait for an event has a deadline of
//! seconds; no assertion bounds how fast anything happens.

use crate::harness::{
    alive, check_output, counted, fake, gone, is_error, leftover_processes, list_changed, scratch,
    starts, text, tool, Workbench,
};
use serde_json::{json, Value};
use std::fs;
use std::thread;
use std::time::{Duration, Instant};

/// A fake server running `script`, that sleeps after `idle` ms without a call.
fn sleepy(script: &str, idle: u64) -> Value {
    let mut server = fake(script);
    server["idleTimeoutMs"] = json!(idle);
    server
}

#[test]
fn an_idle_server_sleeps_its_toolbox_stays_open_and_a_call_wakes_it() {
    let script = counted("s.log", json!([tool("echo", json!({}))]));
    let config = json!({"toolboxes": {"box": {"description": "d", "mcpServers": {
        "s": sleepy("s.json", 300)}}}});
    let mut wb = Workbench::start("idle-sleep", config, &[("s.json", script)], &[]);
    let opened = wb.open_next(1, "box");
    wb.use_tool(2, "box", "s", "echo", json!({"n": 1}));
    assert_eq!(text(&wb.recv()), "echo {\"n\":1}");
    let pid = starts(&wb.dir, "s.log")[0];
    assert!(gone(pid), "the idle server was not stopped");
    assert!(wb.wait_log(
        "asleep after 300 ms without a call",
        1,
        Duration::from_secs(5)
    ));

    // Opening again answers from the last listing, without a start.
    let again = wb.open_next(3, "box");
    assert_eq!(again["tools"], opened["tools"]);
    assert_eq!(again["servers_connected"], 1);
    let warnings = again["_warnings"].to_string();
    assert!(
        warnings.contains("Server 's' is asleep (no call for idleTimeoutMs, 300 ms)"),
        "{again}"
    );
    assert_eq!(starts(&wb.dir, "s.log").len(), 1, "open woke the server");

    // The next call starts it and is answered by the new process.
    wb.use_tool(4, "box", "s", "echo", json!({"n": 2}));
    let woken = wb.recv();
    assert_eq!(text(&woken), "echo {\"n\":2}", "{woken}");
    let pids = starts(&wb.dir, "s.log");
    assert_eq!(pids.len(), 2);
    assert!(alive(pids[1]));
    // Awake again, the open lists no warning.
    let awake = wb.open_next(5, "box");
    assert!(awake.get("_warnings").is_none(), "{awake}");
    assert_eq!(wb.finish().0, Some(0));
}

#[test]
fn steady_use_keeps_a_server_awake() {
    let script = counted("s.log", json!([tool("echo", json!({}))]));
    let config = json!({"toolboxes": {"box": {"description": "d", "mcpServers": {
        "s": sleepy("s.json", 1500)}}}});
    let mut wb = Workbench::start("idle-steady", config, &[("s.json", script)], &[]);
    wb.open_next(1, "box");
    // Three times the timeout, a call every 100 ms.
    let until = Instant::now() + Duration::from_millis(4500);
    let mut id = 10;
    while Instant::now() < until {
        wb.use_tool(id, "box", "s", "echo", json!({}));
        assert_eq!(text(&wb.recv()), "echo {}");
        id += 1;
        thread::sleep(Duration::from_millis(100));
    }
    let pids = starts(&wb.dir, "s.log");
    assert_eq!(pids.len(), 1, "the server was restarted: {pids:?}");
    assert!(alive(pids[0]));
    // Left alone, it sleeps, and leaves no process behind.
    assert!(gone(pids[0]));
    let workbench = format!("{} ", wb.pid());
    let left = leftover_processes(&wb.dir);
    assert!(left.iter().all(|p| p.starts_with(&workbench)), "{left:?}");
    assert_eq!(wb.finish().0, Some(0));
}

#[test]
fn a_call_in_flight_keeps_a_server_awake() {
    let script = counted(
        "s.log",
        json!([
            tool("slow", json!({"delayMs": 1500})),
            tool("echo", json!({}))
        ]),
    );
    let config = json!({"toolboxes": {"box": {"description": "d", "mcpServers": {
        "s": sleepy("s.json", 300)}}}});
    let mut wb = Workbench::start("idle-in-flight", config, &[("s.json", script)], &[]);
    wb.open_next(1, "box");
    wb.use_tool(2, "box", "s", "slow", json!({}));
    let answer = wb.recv();
    assert!(!is_error(&answer), "{answer}");
    assert_eq!(text(&answer), "slow {}");
    let pids = starts(&wb.dir, "s.log");
    assert_eq!(pids.len(), 1);
    // The timer starts again with the answer.
    assert!(gone(pids[0]));
    assert_eq!(wb.finish().0, Some(0));
}

#[test]
fn the_top_level_timeout_is_the_default_and_zero_means_never() {
    let a = counted("a.log", json!([tool("echo", json!({}))]));
    let b = counted("b.log", json!([tool("echo", json!({}))]));
    let config = json!({"idleTimeoutMs": 300, "toolboxes": {"box": {"description": "d", "mcpServers": {
        "a": fake("a.json"),
        "b": sleepy("b.json", 0)}}}});
    let mut wb = Workbench::start("idle-default", config, &[("a.json", a), ("b.json", b)], &[]);
    wb.open_next(1, "box");
    let (a, b) = (starts(&wb.dir, "a.log")[0], starts(&wb.dir, "b.log")[0]);
    assert!(gone(a), "the default did not apply");
    thread::sleep(Duration::from_millis(1000));
    assert!(alive(b), "idleTimeoutMs 0 is never");
    assert_eq!(wb.finish().0, Some(0));
}

#[test]
fn a_failed_wake_is_answered_like_a_failed_start() {
    let script = counted("s.log", json!([tool("echo", json!({}))]));
    let config = json!({"toolboxes": {"box": {"description": "d", "mcpServers": {
        "s": sleepy("s.json", 300)}}}});
    let mut wb = Workbench::start("idle-wake-fails", config, &[("s.json", script)], &[]);
    wb.open_next(1, "box");
    assert!(gone(starts(&wb.dir, "s.log")[0]));
    fs::remove_file(wb.dir.join("s.json")).unwrap();
    wb.use_tool(2, "box", "s", "echo", json!({}));
    let answer = wb.recv();
    assert!(is_error(&answer), "{answer}");
    let message = text(&answer);
    assert!(
        message.starts_with("Failed to connect to server 's' in toolbox 'box': ")
            && message.contains("exit status 2")
            && message.contains("bad script s.json"),
        "{message}"
    );
    assert_eq!(wb.finish().0, Some(0));
}

#[test]
fn a_call_that_wakes_a_server_gets_progress_and_can_be_cancelled() {
    let script = json!({"initializeDelayMs": 500, "startup": {"appendPidTo": "s.log"}, "tools": [
        tool("work", json!({"progress": [{"progress": 1}, {"progress": 2}], "progressIntervalMs": 50})),
        tool("echo", json!({}))]});
    let config = json!({"toolboxes": {"box": {"description": "d", "mcpServers": {
        "s": sleepy("s.json", 300)}}}});
    let mut wb = Workbench::start("idle-progress", config, &[("s.json", script)], &[]);
    wb.open_next(1, "box");
    assert!(gone(starts(&wb.dir, "s.log")[0]));
    let identifier = json!({"toolbox": "box", "server": "s", "tool": "work"});
    wb.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "use_tool", "arguments": {"tool": identifier}, "_meta": {"progressToken": "tok"}}}),
    );
    let mut others = Vec::new();
    let answer = wb.answer(2, &mut others);
    assert_eq!(text(&answer), "work {}", "{answer}");
    let progress: Vec<&Value> = others
        .iter()
        .filter(|l| l["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 2, "{others:?}");
    assert!(progress
        .iter()
        .all(|p| p["params"]["progressToken"] == "tok"));

    // Asleep again: a call cancelled while it waits for the start gets no answer.
    assert!(gone(starts(&wb.dir, "s.log")[1]));
    wb.use_tool(3, "box", "s", "echo", json!({}));
    wb.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}),
    );
    wb.use_tool(4, "box", "s", "echo", json!({}));
    let mut others = Vec::new();
    assert_eq!(text(&wb.answer(4, &mut others)), "echo {}");
    wb.send(json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}));
    wb.answer(5, &mut others);
    assert!(others.iter().all(|l| l["id"] != 3), "{others:?}");
    assert_eq!(
        starts(&wb.dir, "s.log").len(),
        3,
        "one start for both calls"
    );
    assert_eq!(wb.finish().0, Some(0));
}

/// Dynamic mode: an asleep server keeps its native tools; woken with the same
/// tools, nothing is announced; with other tools, one `list_changed`.
#[test]
fn dynamic_mode_a_woken_server_with_other_tools_sends_one_list_changed() {
    let one = counted("s.log", json!([tool("echo", json!({}))]));
    let config = json!({"mode": "dynamic", "toolboxes": {"box": {"description": "d", "mcpServers": {
        "s": sleepy("s.json", 300)}}}});
    let mut wb = Workbench::start("idle-dynamic", config, &[("s.json", one)], &[]);
    let mut others = Vec::new();
    wb.answer_to(
        1,
        "tools/call",
        json!({"name": "open_toolbox", "arguments": {"toolbox_name": "box"}}),
        &mut others,
    );
    assert_eq!(list_changed(&others), 1, "the open: {others:?}");
    let native = |wb: &mut Workbench, id: i64| -> Vec<String> {
        let list = wb.request(id, "tools/list", json!({}));
        list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .filter(|n| n.starts_with("box__"))
            .collect()
    };
    assert!(gone(starts(&wb.dir, "s.log")[0]));
    assert_eq!(native(&mut wb, 2), ["box__s_echo"], "asleep, still listed");

    // Woken with the same tools: no notification.
    let mut others = Vec::new();
    wb.answer_to(
        3,
        "tools/call",
        json!({"name": "box__s_echo", "arguments": {}}),
        &mut others,
    );
    wb.answer_to(4, "ping", json!({}), &mut others);
    assert_eq!(list_changed(&others), 0, "{others:?}");

    // Asleep again, then woken with one more tool: one notification.
    assert!(gone(starts(&wb.dir, "s.log")[1]));
    let two = counted(
        "s.log",
        json!([tool("echo", json!({})), tool("extra", json!({}))]),
    );
    fs::write(wb.dir.join("s.json"), two.to_string()).unwrap();
    let mut others = Vec::new();
    let answer = wb.answer_to(
        5,
        "tools/call",
        json!({"name": "box__s_echo", "arguments": {}}),
        &mut others,
    );
    assert_eq!(text(&answer), "echo {}");
    wb.answer_to(6, "ping", json!({}), &mut others);
    assert_eq!(list_changed(&others), 1, "{others:?}");
    assert_eq!(native(&mut wb, 7), ["box__s_echo", "box__s_extra"]);
    assert_eq!(wb.finish().0, Some(0));
}

#[test]
fn check_shows_each_servers_idle_timeout() {
    let dir = scratch("check-idle");
    fs::write(dir.join("s.json"), json!({"tools": []}).to_string()).unwrap();
    let server = |idle: Option<u64>| {
        let mut s = fake("s.json");
        if let Some(ms) = idle {
            s["idleTimeoutMs"] = json!(ms);
        }
        s
    };
    let config = json!({"idleTimeoutMs": 600000, "toolboxes": {"box": {"description": "d", "mcpServers": {
        "a_default": server(None), "b_never": server(Some(0)), "c_short": server(Some(300)),
        "d_secs": server(Some(30000))}}}});
    fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let run = |json: bool| {
        let (code, stdout) = check_output(&dir, json);
        assert_eq!(code, Some(0));
        stdout
    };
    let report: Value = serde_json::from_str(&run(true)).unwrap();
    let idle: Vec<&Value> = report["toolboxes"][0]["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["idle_timeout_ms"])
        .collect();
    assert_eq!(
        idle,
        [&json!(600000), &json!(0), &json!(300), &json!(30000)]
    );
    let text = run(false);
    // The column is right-aligned under its heading.
    let end = text
        .lines()
        .next()
        .unwrap()
        .find("IDLE")
        .expect("an IDLE column")
        + 4;
    let column = |server: &str| {
        let line = text.lines().find(|l| l.contains(server)).unwrap();
        line[..end].rsplit("  ").next().unwrap().trim().to_string()
    };
    assert_eq!(column("a_default"), "10 min", "{text}");
    assert_eq!(column("b_never"), "never", "{text}");
    assert_eq!(column("c_short"), "300 ms", "{text}");
    assert_eq!(column("d_secs"), "30 s", "{text}");
    let _ = fs::remove_dir_all(&dir);
}
