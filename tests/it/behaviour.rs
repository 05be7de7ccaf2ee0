//! Behaviour that a byte-for-byte transcript cannot show: ordering under
//! concurrency, parallel start-up, single-flight opens, what reaches the logs,
//! the instructions' example used as a real call, the signals children get, and
//! what is left after a signal or a kill.
//!
//! Assertions are about order and counts, not speed; the time bounds (parallel
//! start, the ends of processes after a signal or a kill) have margins of
//! seconds.

use crate::harness::{
    self, assert_gone, case_dir, check, check_output, command, exit_within, fake,
    leftover_processes, processes_with, scratch, text, wait_until, Workbench, FAKE,
};
use serde_json::{json, Value};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// A fake server with one tool, `echo`.
fn echo_script() -> Value {
    json!({"tools": [{"tool": {"name": "echo", "inputSchema": {"type": "object"}}}]})
}

fn slow_script() -> Value {
    json!({"tools": [
        {"tool": {"name": "slow", "inputSchema": {"type": "object"}}, "action": {"delayMs": 2000}},
        {"tool": {"name": "fast", "inputSchema": {"type": "object"}}}
    ]})
}

#[test]
fn a_slow_call_delays_neither_ping_nor_other_servers() {
    let config = json!({"toolboxes": {"box": {"description": "d", "mcpServers": {
        "a": fake("slow.json"), "b": fake("slow.json")}}}});
    let mut wb = Workbench::start("slow", config, &[("slow.json", slow_script())], &[]);
    wb.call(1, "open_toolbox", json!({"toolbox_name": "box"}));
    assert_eq!(wb.recv()["id"], 1);
    let id = |server: &str, tool: &str| json!({"toolbox": "box", "server": server, "tool": tool});
    wb.call(2, "use_tool", json!({"tool": id("a", "slow")}));
    wb.send(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    wb.call(4, "use_tool", json!({"tool": id("b", "fast")}));
    wb.call(5, "use_tool", json!({"tool": id("a", "fast")}));
    let mut order: Vec<Value> = (0..4).map(|_| wb.recv()["id"].clone()).collect();
    // Calls 4 and 5 run on different servers: either may answer first.
    order[1..3].sort_by_key(|id| id.as_i64());
    assert_eq!(order, [json!(3), json!(4), json!(5), json!(2)]);
    assert_eq!(wb.finish().0, Some(0));
}

#[test]
fn servers_start_in_parallel_and_concurrent_opens_start_each_once() {
    let script = json!({"initializeDelayMs": 1500, "startup": {"appendPidTo": "starts.log"},
        "tools": [{"tool": {"name": "t", "inputSchema": {"type": "object"}}}]});
    let servers: serde_json::Map<String, Value> = ["s1", "s2", "s3"]
        .iter()
        .map(|s| (s.to_string(), fake("slow.json")))
        .collect();
    let config = json!({"toolboxes": {"box": {"description": "d", "mcpServers": servers}}});
    let mut wb = Workbench::start("parallel", config, &[("slow.json", script)], &[]);
    let started = Instant::now();
    wb.call(1, "open_toolbox", json!({"toolbox_name": "box"}));
    wb.call(2, "open_toolbox", json!({"toolbox_name": "box"}));
    let (first, second) = (wb.recv(), wb.recv());
    let elapsed = started.elapsed();
    // Three sequential starts would take 4.5 s (plus the second open's own).
    assert!(
        elapsed < Duration::from_millis(4000),
        "open took {elapsed:?}"
    );
    assert_eq!(text(&first), text(&second));
    assert_eq!(first["result"]["structuredContent"]["servers_connected"], 3);
    let starts = fs::read_to_string(wb.dir.join("starts.log")).unwrap();
    assert_eq!(
        starts.lines().count(),
        3,
        "each server starts once: {starts:?}"
    );
    assert_eq!(wb.finish().0, Some(0));
}

#[test]
fn expanded_values_never_reach_the_logs() {
    let secret = "s3cr3t-value-42";
    let mut server = fake("echo.json");
    server["args"] = json!(["echo.json", "--token=${SECRET_TOKEN}"]);
    server["env"] = json!({"TOKEN": "${SECRET_TOKEN}"});
    let script = json!({"tools": [{"tool": {"name": "env", "inputSchema": {"type": "object"}}, "action": {"env": ["TOKEN"]}}]});
    let config = json!({"toolboxes": {"box": {"description": "d", "mcpServers": {"s": server}}}});
    let mut wb = Workbench::start(
        "secret",
        config,
        &[("echo.json", script)],
        &[("SECRET_TOKEN", secret)],
    );
    wb.call(1, "open_toolbox", json!({"toolbox_name": "box"}));
    wb.recv();
    wb.call(
        2,
        "use_tool",
        json!({"tool": {"toolbox": "box", "server": "s", "tool": "env"}}),
    );
    let reply = wb.recv();
    assert_eq!(
        text(&reply),
        format!("TOKEN={secret}"),
        "the child gets the value"
    );
    wb.call(3, "close_toolbox", json!({"toolbox_name": "box"}));
    wb.recv();
    let (code, stderr) = wb.finish();
    assert_eq!(code, Some(0));
    // The env tool's answer is logged at debug level as protocol traffic;
    // nothing else may carry the value.
    let leaks: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains(secret) && !l.contains("\"text\":\"TOKEN="))
        .collect();
    assert!(leaks.is_empty(), "secret in logs: {leaks:#?}");
    // What the logs show of the server's start is the config's template.
    assert!(
        stderr.contains("[box/s] started '${FAKE_MCP_SERVER}' (pid "),
        "the command's template, not its value: {stderr}"
    );
}

/// An unset variable fails the one server that uses it: the toolbox's other
/// servers open, and one `_errors` entry names the variable and its path.
#[test]
fn an_unset_variable_fails_its_server_and_not_its_toolbox() {
    let mut broken = fake("echo.json");
    broken["env"] = json!({"TOKEN": "${OPEN_UNSET_VARIABLE}"});
    let config = json!({"toolboxes": {"box": {"description": "d", "mcpServers": {
        "good": fake("echo.json"),
        "broken": broken
    }}}});
    let mut wb = Workbench::start("unset-one", config, &[("echo.json", echo_script())], &[]);
    let line = wb.open(1, "box", &mut Vec::new());
    let log = wb.log();
    let result = &line["result"]["structuredContent"];
    let tools = result["tools"].to_string();
    assert!(
        tools.contains("echo"),
        "the good server opens: {line}\n{log}"
    );
    let errors = result["_errors"].as_array().cloned().unwrap_or_default();
    assert_eq!(errors.len(), 1, "{line}\n{log}");
    let error = errors[0].to_string();
    assert!(
        error.contains("broken")
            && error.contains(
                "environment variable 'OPEN_UNSET_VARIABLE' is not set (toolboxes.box.mcpServers.broken.env.TOKEN)"
            ),
        "{line}\n{log}"
    );
    wb.call(
        2,
        "use_tool",
        json!({"tool": {"toolbox": "box", "server": "good", "tool": "echo"}, "arguments": {"text": "hi"}}),
    );
    let reply = wb.recv();
    assert!(!harness::is_error(&reply), "{reply}\n{}", wb.log());
    let (code, stderr) = wb.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn the_instructions_example_is_a_valid_use_tool_call() {
    let config = json!({"toolboxes": {"dev": {"description": "d", "mcpServers": {"files": fake("x.json")}}}});
    let mut wb = Workbench::start("example", config, &[("x.json", json!({}))], &[]);
    let instructions = wb.init["result"]["instructions"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        instructions.contains("- dev (1 server): d"),
        "{instructions}"
    );
    let example = instructions
        .lines()
        .find_map(|l| l.strip_prefix("then use_tool "))
        .expect("an example use_tool call");
    let arguments: Value = serde_json::from_str(example).unwrap();
    wb.call(2, "use_tool", arguments);
    // Its toolbox is not open: the call starts the named server, which has
    // no tool of the placeholder's name.
    assert_eq!(
        text(&wb.recv()),
        "Tool '<name from find_tools>' not found in server 'files' (toolbox 'dev'); the server \
         offers no tools",
        "the example passes validation and names a configured toolbox and server"
    );
    let again = wb.request(3, "initialize", json!({"protocolVersion": "2025-06-18"}));
    assert_eq!(
        again["error"]["code"], -32600,
        "initialize is accepted once"
    );
    assert_eq!(wb.finish().0, Some(0));
}

fn stubborn_config() -> (Value, Vec<(&'static str, Value)>) {
    let script = json!({"ignoreStdinEof": true, "ignoreSigterm": true,
        "tools": [{"tool": {"name": "t", "inputSchema": {"type": "object"}}}]});
    let config = json!({"toolboxes": {"box": {"description": "d", "mcpServers": {
        "plain": fake("plain.json"),
        "stubborn": fake("stubborn.json"),
        "wrapped": {"command": "sh", "args": ["-c", "${FAKE_MCP_SERVER} plain.json; echo wrapper done >&2"]}
    }}}});
    (
        config,
        vec![
            ("stubborn.json", script),
            ("plain.json", json!({"tools": []})),
        ],
    )
}

#[test]
fn shutdown_signals_stop_every_child() {
    // One workbench per signal, side by side: each stop waits out a stubborn
    // child's 4 s stop sequence.
    thread::scope(|scope| {
        for signal in ["TERM", "INT", "HUP"] {
            scope.spawn(move || stop_by_signal(signal));
        }
    });
}

/// Opens a toolbox of three servers, one stubborn, and sends `signal`: the
/// workbench exits 0 and leaves no process.
fn stop_by_signal(signal: &str) {
    let (config, files) = stubborn_config();
    let mut wb = Workbench::start(&format!("signal-{signal}"), config, &files, &[]);
    wb.call(1, "open_toolbox", json!({"toolbox_name": "box"}));
    let opened = wb.recv();
    assert_eq!(
        opened["result"]["structuredContent"]["servers_connected"], 3,
        "{opened}"
    );
    harness::signal(wb.pid(), signal);
    let code = wb
        .wait_exit(Duration::from_secs(15))
        .unwrap_or_else(|| panic!("no exit after SIG{signal}"));
    assert_eq!(code, Some(0), "SIG{signal}");
    let left = leftover_processes(&wb.dir);
    assert!(left.is_empty(), "SIG{signal} left {left:?}");
}

#[test]
fn children_and_grandchildren_die_with_a_killed_workbench() {
    let (mut config, files) = stubborn_config();
    // A grandchild behind `sh -c` that ignores stdin EOF and SIGTERM: the
    // parent-death signal reaches only the shell.
    config["toolboxes"]["box"]["mcpServers"]["wrapped_stubborn"] = json!({"command": "sh",
        "args": ["-c", "${FAKE_MCP_SERVER} stubborn.json grandchild-marker; echo wrapper done >&2"]});
    let mut wb = Workbench::start("sigkill", config, &files, &[]);
    wb.call(1, "open_toolbox", json!({"toolbox_name": "box"}));
    let opened = wb.recv();
    assert_eq!(
        opened["result"]["structuredContent"]["servers_connected"], 4,
        "{opened}"
    );
    assert_eq!(processes_with(&wb.dir, "grandchild-marker").len(), 2);
    wb.sigkill_leaves_nothing();
}

#[test]
fn children_start_with_an_empty_signal_mask() {
    let config = json!({"toolboxes": {"box": {"description": "d", "mcpServers": {
        "direct": {"command": "${FAKE_MCP_SERVER}", "args": ["plain.json", "mask-marker"]},
        "wrapped": {"command": "sh", "args": ["-c", "${FAKE_MCP_SERVER} plain.json mask-marker; true"]}
    }}}});
    let mut wb = Workbench::start(
        "sigmask",
        config,
        &[("plain.json", json!({"tools": []}))],
        &[],
    );
    wb.call(1, "open_toolbox", json!({"toolbox_name": "box"}));
    let opened = wb.recv();
    assert_eq!(
        opened["result"]["structuredContent"]["servers_connected"], 2,
        "{opened}"
    );
    let found = processes_with(&wb.dir, "mask-marker");
    assert_eq!(found.len(), 3, "{found:?}"); // the direct fake, the shell, its fake
                                             // SIGHUP, SIGINT, SIGUSR1 and SIGTERM: the signals the workbench blocks for sigwait.
    let shutdown_signals = (1u64 << 0) | (1 << 1) | (1 << 9) | (1 << 14);
    for process in found {
        let pid = process.split_whitespace().next().unwrap();
        let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let field = |name: &str| {
            let line = status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .unwrap_or_else(|| panic!("no {name} in {status}"));
            u64::from_str_radix(line.trim(), 16).unwrap()
        };
        assert_eq!(field("SigBlk:"), 0, "blocked signals of {process}");
        assert_eq!(
            field("SigIgn:") & shutdown_signals,
            0,
            "ignored signals of {process}"
        );
    }
    assert_eq!(wb.finish().0, Some(0));
}

#[test]
fn close_toolbox_sigterm_reaches_a_child_that_ignores_stdin_eof() {
    // The child ignores stdin EOF but not SIGTERM: the SIGTERM sent to its group
    // 2 s after stdin closed must end it. Were SIGTERM blocked in the child, only
    // the SIGKILL 2 s later would, and its exit would say signal 9.
    let config = json!({"toolboxes": {"box": {"description": "d", "mcpServers": {
        "eof": {"command": "${FAKE_MCP_SERVER}", "args": ["eof.json", "term-marker"]}}}}});
    let files = [(
        "eof.json",
        json!({"ignoreStdinEof": true, "tools": [{"tool": {"name": "t", "inputSchema": {"type": "object"}}}]}),
    )];
    let mut wb = Workbench::start("sigterm-reaches", config, &files, &[]);
    wb.call(1, "open_toolbox", json!({"toolbox_name": "box"}));
    let opened = wb.recv();
    assert_eq!(
        opened["result"]["structuredContent"]["servers_connected"], 1,
        "{opened}"
    );
    wb.call(2, "close_toolbox", json!({"toolbox_name": "box"}));
    let closed = wb.recv();
    assert_eq!(closed["id"], 2, "{closed}");
    assert_gone(
        &wb.dir,
        "term-marker",
        Duration::from_secs(10),
        "close_toolbox",
    );
    let (code, stderr) = wb.finish();
    assert_eq!(code, Some(0));
    assert!(
        stderr.contains("[box/eof] stopped (killed by signal 15)"),
        "{stderr}"
    );
}

/// A fresh folder holding `config` and the `files`, for `check` runs.
fn check_dir(name: &str, config: &Value, files: &[(&str, Value)]) -> PathBuf {
    case_dir(&format!("check-{name}"), config, files)
}

/// `check` started in `dir`, logging at info level.
fn spawn_check(dir: &Path) -> Child {
    check(dir, &[])
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn check_stops_its_children_and_exits_on_a_signal() {
    let mut silent = fake("silent.json");
    silent["startupTimeoutMs"] = json!(30000);
    let config =
        json!({"toolboxes": {"box": {"description": "d", "mcpServers": {"silent": silent}}}});
    let files = [("silent.json", json!({"initialize": "ignore"}))];
    for (signal, expected) in [("TERM", 143), ("INT", 130), ("HUP", 129)] {
        let dir = check_dir(&format!("signal-{signal}"), &config, &files);
        let mut check = spawn_check(&dir);
        // The server started: `check` waits for its handshake.
        assert!(
            wait_until(Duration::from_secs(10), || {
                !processes_with(&dir, "silent.json").is_empty()
            }),
            "the server never started"
        );
        harness::signal(check.id(), signal);
        let code = exit_within(&mut check, Duration::from_secs(5));
        assert_eq!(code, Some(Some(expected)), "check after SIG{signal}");
        assert_gone(&dir, "", Duration::from_secs(1), "check");
        let _ = fs::remove_dir_all(&dir);
    }
}

#[test]
fn a_killed_check_leaves_no_grandchild() {
    let script = json!({"initialize": "ignore", "ignoreStdinEof": true, "ignoreSigterm": true});
    let config = json!({"toolboxes": {"box": {"description": "d", "mcpServers": {
        "wrapped": {"command": "sh", "startupTimeoutMs": 30000,
            "args": ["-c", "${FAKE_MCP_SERVER} stubborn.json check-marker; true"]}}}}});
    let dir = check_dir("sigkill", &config, &[("stubborn.json", script)]);
    let mut check = spawn_check(&dir);
    assert!(
        wait_until(Duration::from_secs(10), || {
            processes_with(&dir, "check-marker").len() >= 2
        }),
        "the server never started"
    );
    check.kill().unwrap();
    check.wait().unwrap();
    assert_gone(&dir, "", Duration::from_secs(5), "SIGKILL of check");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn check_names_a_missing_working_directory() {
    let mut lost = fake("plain.json");
    lost["cwd"] = json!("no-such-dir");
    let config = json!({"toolboxes": {"box": {"description": "d", "mcpServers": {"lost": lost}}}});
    let dir = check_dir("cwd", &config, &[("plain.json", json!({"tools": []}))]);
    let (code, text) = check_output(&dir, false);
    assert_eq!(code, Some(1), "{text}");
    let looked = dir.join("no-such-dir");
    assert!(
        text.contains(&format!(
            "box/lost: working directory 'no-such-dir' (toolboxes.box.mcpServers.lost.cwd, which is '{}') does not exist",
            looked.display()
        )),
        "{text}"
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn check_reports_every_server_and_sets_the_exit_code() {
    let dir = scratch("check-report");
    let good = json!({"tools": [
        {"tool": {"name": "a", "inputSchema": {"type": "object"}}},
        {"tool": {"name": "b", "inputSchema": {"type": "object"}}}]});
    let bad = json!({"startup": {"stderr": ["cannot open database"], "exit": 4}});
    fs::write(dir.join("good.json"), good.to_string()).unwrap();
    fs::write(dir.join("bad.json"), bad.to_string()).unwrap();
    let mut filtered = fake("good.json");
    filtered["toolFilters"] = json!(["b"]);
    let mut disabled = fake("good.json");
    disabled["disabled"] = json!(true);
    let mut needs_env = fake("good.json");
    needs_env["env"] = json!({"K": "${CHECK_UNSET_VARIABLE}"});
    let run = |config: Value, json: bool| {
        fs::write(dir.join("config.json"), config.to_string()).unwrap();
        check_output(&dir, json)
    };
    let config = json!({"mode": "dynamic", "toolboxes": {
        "one": {"description": "d", "mcpServers": {"good": fake("good.json"), "filtered": filtered, "off": disabled}},
        "two": {"description": "d", "mcpServers": {"bad": fake("bad.json"), "env": needs_env}}}});
    let (code, text) = run(config.clone(), true);
    assert_eq!(code, Some(1), "{text}");
    let report: Value = serde_json::from_str(&text).unwrap();
    let server = |t: usize, s: usize| &report["toolboxes"][t]["servers"][s];
    // json! sorts keys: servers appear as filtered, good, off; then bad, env.
    assert_eq!(server(0, 0)["name"], "filtered");
    assert_eq!(server(0, 0)["status"], "ok");
    assert_eq!(server(0, 0)["tools"], 1);
    assert_eq!(server(0, 1)["tools"], 2);
    assert!(server(0, 1)["startup_ms"].is_u64());
    assert_eq!(
        server(0, 1)["tokens"],
        (tool_bytes("a") + tool_bytes("b")) / 4
    );
    assert_eq!(server(0, 2)["status"], "disabled");
    assert_eq!(report["toolboxes"][0]["total"]["tools"], 3);
    assert_eq!(server(1, 0)["status"], "failed");
    let reason = server(1, 0)["reason"].as_str().unwrap();
    assert!(
        reason.contains("exit status 4") && reason.contains("cannot open database"),
        "{reason}"
    );
    assert!(server(1, 1)["reason"]
        .as_str()
        .unwrap()
        .contains("'CHECK_UNSET_VARIABLE' is not set"));
    assert_eq!(report["total"]["tools"], 3);
    // The host's tools/list: four meta-tools with the workbench, versus the
    // servers' own tools listed directly.
    let host = &report["host_tools_list"];
    assert_eq!(host["workbench"]["tools"], 4);
    assert!(
        host["workbench"]["tokens"].as_u64().unwrap() > 300,
        "{host}"
    );
    assert_eq!(host["direct"], report["total"]);
    let warnings = report["warnings"].to_string();
    assert!(warnings.contains("CHECK_UNSET_VARIABLE"), "{warnings}");
    let (code, text) = run(config, false);
    assert_eq!(code, Some(1));
    assert!(
        text.lines()
            .any(|l| l.split_whitespace().take(3).eq(["one", "good", "ok"])),
        "{text}"
    );
    assert!(
        text.contains("failures:") && text.contains("two/bad:"),
        "{text}"
    );
    assert!(
        text.contains("the host's tools/list: 4 tools, ~")
            && text.contains("tokens with the workbench; 3 tools, ~"),
        "{text}"
    );
    let (code, text) = run(
        json!({"toolboxes": {"one": {"description": "d", "mcpServers": {"good": fake("good.json")}}}}),
        false,
    );
    assert_eq!(code, Some(0), "{text}");
    assert!(leftover_processes(&dir).is_empty());
    let _ = fs::remove_dir_all(&dir);
}

/// The bundled example shows the value: `check` on it finds every server
/// healthy, and the host's `tools/list` costs less with the workbench than with
/// every server listed directly. The demo, playing a host on the same config,
/// counts the same tokens: the meta-tools, each toolbox, every server listed
/// directly.
#[test]
fn check_on_the_example_config_shows_the_workbench_is_cheaper() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = scratch("check-example");
    // The example names the release build of the fake; use the test's own.
    let text = fs::read_to_string(root.join("testdata/example/workbench-config.json")).unwrap();
    let mut config: Value = serde_json::from_str(&text).unwrap();
    for toolbox in config["toolboxes"].as_object_mut().unwrap().values_mut() {
        for server in toolbox["mcpServers"].as_object_mut().unwrap().values_mut() {
            server["command"] = json!(FAKE);
            let script = server["args"][0].as_str().unwrap().to_string();
            server["args"][0] = json!(root.join(script));
        }
    }
    fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let (code, out) = check_output(&dir, true);
    assert_eq!(code, Some(0));
    let report: Value = serde_json::from_str(&out).unwrap();
    let host = &report["host_tools_list"];
    let (workbench, direct) = (
        host["workbench"]["tokens"].as_u64().unwrap(),
        host["direct"]["tokens"].as_u64().unwrap(),
    );
    assert!(
        workbench * 2 < direct,
        "the example should show the saving: {host}"
    );
    assert!(
        report["warnings"].as_array().unwrap().is_empty(),
        "{report}"
    );
    let out = std::process::Command::new(crate::harness::example("demo"))
        .arg(dir.join("config.json"))
        .env("MCP_WORKBENCH", crate::harness::WORKBENCH)
        .output()
        .unwrap();
    let demo = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{demo}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // "(~N tokens" after each label, in the demo's order.
    let counted = |label: &str| -> u64 {
        let after = &demo[demo
            .find(label)
            .unwrap_or_else(|| panic!("{label}: {demo}"))..];
        let number = &after[after.find("(~").unwrap() + 2..];
        number[..number.find(' ').unwrap()].parse().unwrap()
    };
    let mut from_check = vec![("host -> tools/list".to_string(), workbench)];
    for toolbox in report["toolboxes"].as_array().unwrap() {
        let label = format!("host -> open_toolbox {}", toolbox["name"].as_str().unwrap());
        from_check.push((label, toolbox["total"]["tokens"].as_u64().unwrap()));
    }
    from_check.push(("tools/list would hold".to_string(), direct));
    let from_demo: Vec<(String, u64)> = from_check
        .iter()
        .map(|(label, _)| (label.clone(), counted(label)))
        .collect();
    assert_eq!(
        from_demo, from_check,
        "the demo counts otherwise than check:\n{demo}"
    );
    let _ = fs::remove_dir_all(&dir);
}

/// The size of a fake tool definition as the fake lists it.
fn tool_bytes(name: &str) -> usize {
    json!({"name": name, "inputSchema": {"type": "object"}})
        .to_string()
        .len()
}

#[test]
fn check_warns_about_filters_long_names_and_big_toolboxes() {
    let dir = scratch("check-warn");
    let tools: Vec<Value> = (0..41)
        .map(|i| json!({"tool": {"name": format!("tool.{i}"), "inputSchema": {"type": "object"}}}))
        .collect();
    fs::write(dir.join("many.json"), json!({"tools": tools}).to_string()).unwrap();
    // Safe, and 52 characters as a native name: under 64, over the default 48.
    let long = "safe_but_long_tool_name_for_the_budget_xx";
    fs::write(
        dir.join("long.json"),
        json!({"tools": [{"tool": {"name": long, "inputSchema": {"type": "object"}}}]}).to_string(),
    )
    .unwrap();
    let mut filtered = fake("many.json");
    filtered["toolFilters"] = json!(["tool.1", "no_such_tool"]);
    let config = json!({"mode": "dynamic", "toolboxes": {
        "big": {"description": "d", "mcpServers": {"many": fake("many.json")}},
        "small": {"description": "d", "mcpServers": {"few": filtered}},
        "named": {"description": "d", "mcpServers": {"srv": fake("long.json")}}}});
    fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let (code, out) = check_output(&dir, true);
    assert_eq!(code, Some(0));
    let report: Value = serde_json::from_str(&out).unwrap();
    let warnings: Vec<&str> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(
        warnings.iter().any(|w| w.contains("names 'no_such_tool'")),
        "{warnings:#?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("toolbox 'big' has 41 tools")),
        "{warnings:#?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("tool 'tool.1' of small/few is listed as 'small__few_tool_1_")),
        "{warnings:#?}"
    );
    assert!(
        warnings.iter().any(|w| w
            .contains(&format!("tool '{long}' of named/srv is listed as 'named__"))
            && w.contains("has 52 characters, more than dynamicNameMaxLength (48)")),
        "{warnings:#?}"
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn trace_records_all_four_directions_in_order() {
    let config =
        json!({"toolboxes": {"box": {"description": "d", "mcpServers": {"s": fake("s.json")}}}});
    let dir = case_dir("trace", &config, &[("s.json", echo_script())]);
    let mut cmd = command(&dir, &[("RUST_LOG", "off")]);
    cmd.args(["--trace", "trace.jsonl"]);
    let mut wb = Workbench::spawn_raw(dir.clone(), cmd, true);
    for request in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "open_toolbox", "arguments": {"toolbox_name": "box"}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "use_tool", "arguments": {"tool": {"toolbox": "box", "server": "s", "tool": "echo"}, "arguments": {"k": "v"}}}}),
    ] {
        wb.send(request);
        wb.recv_line();
    }
    assert_eq!(wb.end(Duration::from_secs(20)), Some(Some(0)));
    let trace = fs::read_to_string(dir.join("trace.jsonl")).unwrap();
    let entries: Vec<Value> = trace
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let seqs: Vec<u64> = entries.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "{seqs:?}");
    let find = |dir: &str, pred: &dyn Fn(&Value) -> bool| {
        entries
            .iter()
            .position(|e| e["dir"] == dir && pred(&e["msg"]))
            .unwrap_or_else(|| panic!("no {dir} entry in\n{trace}"))
    };
    let host_call = find("host->wb", &|m| m["id"] == 3);
    let child_call = find("wb->child", &|m| m["method"] == "tools/call");
    let child_answer = find("child->wb", &|m| {
        m["result"]["content"][0]["text"] == "echo {\"k\":\"v\"}"
    });
    let host_answer = find("wb->host", &|m| m["id"] == 3);
    assert!(host_call < child_call && child_call < child_answer && child_answer < host_answer);
    assert_eq!(entries[child_call]["server"], "box/s");
    assert_eq!(entries[host_call]["server"], Value::Null);
    let case = dir.join("case");
    let status = Command::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scripts/trace-to-transcript"
    ))
    .arg(dir.join("trace.jsonl"))
    .arg(&case)
    .status()
    .expect("scripts/trace-to-transcript runs (python3)");
    assert!(status.success());
    let host = fs::read_to_string(case.join("host.jsonl")).unwrap();
    assert_eq!(host.lines().filter(|l| !l.starts_with('#')).count(), 3);
    let expected = fs::read_to_string(case.join("expected.jsonl")).unwrap();
    assert_eq!(expected.lines().count(), 3);
}

/// Issue 9, item 21: the trace's `wb->host` entries are in exactly the order
/// of the host's stdout lines, even when several children's answers race for
/// stdout (four servers, hundreds of calls in flight).
#[test]
fn trace_orders_host_lines_as_the_host_received_them() {
    const SERVERS: usize = 4;
    const CALLS: usize = 600;
    let servers: serde_json::Map<String, Value> = (0..SERVERS)
        .map(|i| (format!("s{i}"), fake("s.json")))
        .collect();
    let config = json!({"toolboxes": {"box": {"description": "d", "mcpServers": servers}}});
    let dir = case_dir("trace-order", &config, &[("s.json", echo_script())]);
    let mut cmd = command(&dir, &[("RUST_LOG", "off")]);
    cmd.args(["--trace", "trace.jsonl"]);
    let mut wb = Workbench::spawn_raw(dir.clone(), cmd, true);
    let mut stdin = wb.stdin.take().unwrap();
    let mut requests = vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "open_toolbox", "arguments": {"toolbox_name": "box"}}}),
    ];
    for id in 2..CALLS + 2 {
        let server = format!("s{}", id % SERVERS);
        requests.push(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "use_tool", "arguments": {"tool": {"toolbox": "box", "server": server, "tool": "echo"}, "arguments": {"n": id}}}}));
    }
    // The open is answered before the calls are sent: they all find it open.
    let mut batch = String::new();
    for (i, request) in requests.iter().enumerate() {
        batch.push_str(&format!("{request}\n"));
        if i == 1 {
            stdin.write_all(batch.as_bytes()).unwrap();
            batch.clear();
            let opened = wait_until(Duration::from_secs(60), || {
                fs::read_to_string(dir.join("trace.jsonl"))
                    .unwrap_or_default()
                    .contains(r#""dir":"wb->host","server":null,"msg":{"jsonrpc":"2.0","id":1,"#)
            });
            assert!(opened, "the open was not answered");
        }
    }
    stdin.write_all(batch.as_bytes()).unwrap();
    stdin.flush().unwrap();
    // Every call answered: the workbench is still reading, then EOF.
    let answered = || {
        let trace = fs::read_to_string(dir.join("trace.jsonl")).unwrap_or_default();
        trace.matches(r#""dir":"wb->host""#).count()
    };
    assert!(
        wait_until(Duration::from_secs(60), || answered() >= CALLS + 2),
        "not every call was answered"
    );
    drop(stdin);
    assert_eq!(wb.end(Duration::from_secs(20)), Some(Some(0)));
    let received: Vec<Value> = wb
        .lines
        .try_iter()
        .map(|line| serde_json::from_slice::<Value>(&line).unwrap())
        .collect();
    assert_eq!(received.len(), CALLS + 2);
    let trace = fs::read_to_string(dir.join("trace.jsonl")).unwrap();
    let recorded: Vec<Value> = trace
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["dir"] == "wb->host")
        .map(|e| e["msg"].clone())
        .collect();
    let ids = |lines: &[Value]| lines.iter().map(|l| l["id"].clone()).collect::<Vec<_>>();
    assert_eq!(
        ids(&recorded),
        ids(&received),
        "trace order vs stdout order"
    );
    assert_eq!(recorded, received);
}

/// The naming rules of docs/reference.md §6 in dynamic mode, across several open toolboxes that
/// share one server: names are unique and safe, every listed native tool
/// resolves to its own toolbox's process and to the tool it names.
#[test]
fn dynamic_mode_invariants_hold_across_toolboxes() {
    let names = [
        "read",
        "read.file",
        "read/file",
        "read file",
        &"x".repeat(70),
        &format!("{}y", "x".repeat(69)),
    ];
    let tools: Vec<Value> = names
        .iter()
        .map(|n| json!({"tool": {"name": n, "inputSchema": {"type": "object"}}, "action": {"env": ["MARKER"]}}))
        .collect();
    let server = |marker: &str| {
        let mut s = fake("tools.json");
        s["env"] = json!({"MARKER": marker});
        s
    };
    let config = json!({"mode": "dynamic", "toolboxes": {
        "alpha": {"description": "a", "mcpServers": {"shared": server("alpha")}},
        "beta": {"description": "b", "mcpServers": {"shared": server("beta")}},
        "a-very-long-toolbox-name-that-eats-most-of-the-budget": {"description": "c", "mcpServers": {"shared": server("long")}}
    }});
    let mut wb = Workbench::start(
        "dynamic-invariants",
        config,
        &[("tools.json", json!({"tools": tools}))],
        &[],
    );
    for (i, toolbox) in [
        "alpha",
        "beta",
        "a-very-long-toolbox-name-that-eats-most-of-the-budget",
    ]
    .iter()
    .enumerate()
    {
        wb.call(
            10 + i as i64,
            "open_toolbox",
            json!({"toolbox_name": toolbox}),
        );
        let notification = wb.recv();
        assert_eq!(notification["method"], "notifications/tools/list_changed");
        assert_eq!(wb.recv()["id"], 10 + i as i64);
    }
    let list = wb.request(20, "tools/list", json!({}));
    let native: Vec<&Value> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .skip(4)
        .collect();
    assert_eq!(native.len(), 3 * names.len());
    let mut seen = std::collections::HashSet::new();
    for (i, tool) in native.iter().enumerate() {
        let name = tool["name"].as_str().unwrap();
        assert!(
            name.len() <= 64
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
            "{name}"
        );
        assert!(seen.insert(name.to_string()), "duplicate {name}");
        let toolbox = tool["_meta"]["toolbox_name"].as_str().unwrap();
        let original = tool["_meta"]["original_name"].as_str().unwrap();
        assert!(names.contains(&original));
        let id = 100 + i as i64;
        wb.call(id, name, json!({}));
        let reply = wb.recv();
        assert_eq!(reply["id"], id);
        let marker = if toolbox.starts_with("a-very") {
            "long"
        } else {
            toolbox
        };
        assert_eq!(
            text(&reply),
            format!("MARKER={marker}"),
            "{name} must reach {toolbox}'s own process"
        );
    }
    assert_eq!(wb.finish().0, Some(0));
}
