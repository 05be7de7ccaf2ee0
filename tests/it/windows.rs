//! Windows only (run under Wine in CI): a server behind a `.cmd` file found
//! through `PATH` and `PATHEXT`, its arguments quoted safely, the Windows
//! allow-list of variables, and no process outliving the workbench, whether
//! it stops on stdin EOF, on Ctrl-Break or Ctrl-C, or is killed; the shared
//! fleet over a named pipe (docs/reference.md §8).
//!
//! A process left behind is seen by its heartbeat: the fake server appends a
//! line to a file every 50 ms while it lives (`heartbeatTo`), so a file that
//! keeps growing after the workbench is gone names a survivor.

use crate::harness::{
    case_dir, command, counted, fake, fleet_loss_answered_at_once, is_error, starts, system_path,
    text, tool, toolbox, wait_until, workbench_in, Workbench, FAKE,
};
use serde_json::{json, Value};
use std::fs;
use std::os::windows::process::CommandExt;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

/// A folder for test `name` with `bin\fake-server.cmd` (which runs the fake
/// with its arguments) and the fake's script, whose name needs quoting.
fn case(name: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("mcp-workbench-win-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("bin")).unwrap();
    let fake = plain(&fs::canonicalize(FAKE).unwrap());
    fs::write(
        dir.join("bin").join("fake-server.cmd"),
        format!("@echo off\r\n\"{}\" %*\r\n", fake.display()),
    )
    .unwrap();
    let beats = dir.join("beats.txt");
    // It ignores stdin EOF, so that only the job's termination stops it.
    let script = json!({
        "ignoreStdinEof": true,
        "startup": {"heartbeatTo": plain(&beats), "heartbeatMs": 50},
        "tools": [
            {"tool": {"name": "echo", "inputSchema": {"type": "object"}}},
            {"tool": {"name": "env", "inputSchema": {"type": "object"}}, "action": {"env": "*"}}
        ]
    });
    fs::write(dir.join("a script & co.json"), script.to_string()).unwrap();
    let config = json!({"toolboxes": {"win": {"description": "A toolbox on Windows",
        "mcpServers": {"wrapped": {"command": "fake-server", "args": [plain(&dir.join("a script & co.json"))]}}}}});
    fs::write(dir.join("config.json"), config.to_string()).unwrap();
    (dir, beats)
}

/// `path` without the `\\?\` prefix that `canonicalize` adds (cmd.exe does
/// not take it).
fn plain(path: &Path) -> PathBuf {
    let text = path.to_string_lossy();
    PathBuf::from(text.strip_prefix(r"\\?\").unwrap_or(&text).to_string())
}

/// The workbench command for `dir`: `bin` first in `PATH`, and the system
/// variables Windows programs need.
fn workbench_command(dir: &Path) -> std::process::Command {
    let path = format!("{};{}", plain(&dir.join("bin")).display(), system_path());
    let system = std::env::var("SYSTEMROOT").unwrap_or_default();
    let env = [
        ("PATH", path.as_str()),
        ("SYSTEMROOT", system.as_str()),
        ("SECRET_TOKEN", "must-not-leak"),
    ];
    command(dir, &env)
}

/// Opens the toolbox and checks the wrapped server answers.
fn open_and_call(wb: &mut Workbench) {
    let opened = wb.request(
        1,
        "tools/call",
        json!({"name": "open_toolbox", "arguments": {"toolbox_name": "win"}}),
    );
    assert!(!is_error(&opened), "open failed: {opened}");
    assert!(text(&opened).contains("\"echo\""), "no tools: {opened}");
    wb.use_tool(
        2,
        "win",
        "wrapped",
        "echo",
        json!({"said": "a \"quoted\" & | < > ^ word"}),
    );
    let answer = wb.recv();
    assert_eq!(
        text(&answer),
        r#"echo {"said":"a \"quoted\" & | < > ^ word"}"#,
        "{answer}"
    );
}

/// Lines in the heartbeat file.
fn beats(file: &Path) -> usize {
    fs::read_to_string(file).map_or(0, |t| t.lines().count())
}

/// Waits until the heartbeat file grows: the server is alive.
fn assert_beating(file: &Path) {
    let before = beats(file);
    let deadline = Instant::now() + Duration::from_secs(10);
    while beats(file) <= before + 1 {
        assert!(Instant::now() < deadline, "the server never beat");
        thread::sleep(Duration::from_millis(20));
    }
}

/// Asserts the heartbeat file stops growing: no server process is left.
fn assert_stopped(file: &Path) {
    // A beat may be in flight when the process dies: let it land first.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let before = beats(file);
        thread::sleep(Duration::from_millis(500));
        if beats(file) == before {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "a server process outlived the workbench"
        );
    }
}

#[test]
fn a_cmd_server_found_through_pathext_serves_and_stdin_eof_stops_it() {
    let (dir, beats_file) = case("eof");
    let mut wb = Workbench::spawn(dir.clone(), workbench_command(&dir));
    open_and_call(&mut wb);
    assert_beating(&beats_file);
    let (code, stderr) = wb.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert_stopped(&beats_file);
}

#[test]
fn children_get_the_windows_allow_list_only() {
    let (dir, _) = case("env");
    let mut wb = Workbench::spawn(dir.clone(), workbench_command(&dir));
    open_and_call(&mut wb);
    wb.use_tool(3, "win", "wrapped", "env", json!({}));
    let answer = wb.recv();
    let names: Vec<String> = text(&answer)
        .lines()
        .filter_map(|line| line.split_once('=').map(|(k, _)| k.to_ascii_uppercase()))
        .collect();
    assert!(names.contains(&"SYSTEMROOT".to_string()), "{names:?}");
    assert!(names.contains(&"PATH".to_string()), "{names:?}");
    assert!(!names.contains(&"SECRET_TOKEN".to_string()), "{names:?}");
    assert!(!names.contains(&"FAKE_MCP_SERVER".to_string()), "{names:?}");
    let (code, _) = wb.finish();
    assert_eq!(code, Some(0));
}

#[test]
fn a_killed_workbench_leaves_no_process() {
    let (dir, beats_file) = case("killed");
    let mut wb = Workbench::spawn(dir.clone(), workbench_command(&dir));
    open_and_call(&mut wb);
    assert_beating(&beats_file);
    wb.child.kill().unwrap(); // TerminateProcess: no code of ours runs
    wb.wait_exit(Duration::from_secs(20))
        .expect("the workbench ends");
    assert_stopped(&beats_file);
}

/// The workbench runs in a console of its own, where the fake sends the
/// event (`mcp-fake-server --ctrl-c`), as a user's key press would.
const CREATE_NEW_CONSOLE: u32 = 0x0000_0010;

/// Ctrl-C, sent to the workbench's console: Ctrl-Break, console close,
/// logoff and shutdown take the same path through the console handler, but
/// Wine 8 cannot generate them.
#[test]
fn ctrl_c_stops_every_server_and_exits() {
    let (dir, beats_file) = case("ctrl-c");
    let mut cmd = workbench_command(&dir);
    cmd.creation_flags(CREATE_NEW_CONSOLE);
    let mut wb = Workbench::spawn(dir.clone(), cmd);
    open_and_call(&mut wb);
    assert_beating(&beats_file);
    let sent = std::process::Command::new(FAKE)
        .args(["--ctrl-c", &wb.pid().to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "cannot send Ctrl-C: {sent}");
    let code = wb
        .wait_exit(Duration::from_secs(20))
        .expect("the workbench exits on the event");
    assert_eq!(code, Some(0));
    assert_stopped(&beats_file);
}

// ------------------------------------------------------------ shared fleet

/// A shared config (fleet lingering 300 ms) whose toolbox `dev` runs the
/// fake, directly or (`wrapped`) through `bin\fake-server.cmd` found on
/// `PATH`, counting its starts in `starts.log` and beating into
/// `beats.txt`; and a `LOCALAPPDATA` of the case's own, for its fleet's
/// lock and log (the pipe's name comes from the config's path).
fn shared_case(name: &str, wrapped: bool) -> (PathBuf, PathBuf, PathBuf) {
    let server = if wrapped {
        json!({"command": "fake-server", "args": ["fake.json"]})
    } else {
        fake("fake.json")
    };
    let config = json!({
        "shareServers": true,
        "shareLingerMs": 300,
        "toolboxes": {"dev": toolbox(json!({"s": server}))}
    });
    let dir = case_dir(name, &config, &[]);
    let dir = plain(&dir);
    fs::create_dir(dir.join("bin")).unwrap();
    let fake_exe = plain(&fs::canonicalize(FAKE).unwrap());
    fs::write(
        dir.join("bin").join("fake-server.cmd"),
        format!("@echo off\r\n\"{}\" %*\r\n", fake_exe.display()),
    )
    .unwrap();
    let beats = dir.join("beats.txt");
    let echo = json!({"tool": {"name": "echo", "inputSchema": {"type": "object"}}});
    let slow = tool("slow", json!({"delayMs": 30000, "reply": {"content": []}}));
    let mut script = counted("starts.log", json!([echo, slow]));
    script["startup"]["heartbeatTo"] = json!(beats);
    script["startup"]["heartbeatMs"] = json!(50);
    fs::write(dir.join("fake.json"), script.to_string()).unwrap();
    let appdata = dir.join("appdata");
    fs::create_dir(&appdata).unwrap();
    (dir, appdata, beats)
}

/// What every shared test's processes need besides the harness's variables
/// (and the fake as a Windows path).
fn shared_env(appdata: &Path) -> Vec<(&'static str, String)> {
    let fake = plain(&fs::canonicalize(FAKE).unwrap());
    let bin = appdata.parent().unwrap().join("bin");
    vec![
        ("FAKE_MCP_SERVER", fake.display().to_string()),
        ("PATH", format!("{};{}", bin.display(), system_path())),
        ("LOCALAPPDATA", appdata.display().to_string()),
        (
            "SYSTEMROOT",
            std::env::var("SYSTEMROOT").unwrap_or_default(),
        ),
    ]
}

/// A session on the shared config, initialized.
fn shared_session(dir: &Path, appdata: &Path) -> Workbench {
    let env = shared_env(appdata);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Workbench::initialized(dir, &env)
}

/// `mcp-workbench status --json`: exit code, report, stderr.
fn shared_status(dir: &Path, appdata: &Path) -> (Option<i32>, Value, String) {
    let out = workbench_in(dir)
        .args(["status", "--config", "config.json", "--json"])
        .envs(shared_env(appdata))
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (
        out.status.code(),
        report,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The fleet's log (its stderr, next to its lock).
fn fleet_log(appdata: &Path) -> String {
    fs::read_dir(appdata.join("mcp-workbench").join("run"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
        .map(|e| fs::read_to_string(e.path()).unwrap_or_default())
        .collect()
}

#[test]
fn sessions_share_one_server_through_the_fleet_pipe_and_it_ends_after_them() {
    let (dir, appdata, beats_file) = shared_case("shared", false);
    let mut a = shared_session(&dir, &appdata);
    let mut b = shared_session(&dir, &appdata);
    for wb in [&mut a, &mut b] {
        let opened = wb.request(
            1,
            "tools/call",
            json!({"name": "open_toolbox", "arguments": {"toolbox_name": "dev"}}),
        );
        assert!(
            !is_error(&opened),
            "{opened}\nfleet log:\n{}",
            fleet_log(&appdata)
        );
    }
    assert_eq!(starts(&dir, "starts.log").len(), 1, "one process for both");
    assert_beating(&beats_file);
    // The same id in both sessions: each gets its own answer.
    a.use_tool(7, "dev", "s", "echo", json!({"said": "a"}));
    b.use_tool(7, "dev", "s", "echo", json!({"said": "b"}));
    let (from_a, from_b) = (a.recv(), b.recv());
    assert_eq!(
        (&from_a["id"], text(&from_a)),
        (&json!(7), r#"echo {"said":"a"}"#)
    );
    assert_eq!(
        (&from_b["id"], text(&from_b)),
        (&json!(7), r#"echo {"said":"b"}"#)
    );

    let (code, report, stderr) = shared_status(&dir, &appdata);
    assert_eq!(code, Some(0), "{stderr}");
    let mut sessions: Vec<u64> = report["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["pid"].as_u64().unwrap())
        .collect();
    sessions.sort_unstable();
    let mut pids = vec![u64::from(a.pid()), u64::from(b.pid())];
    pids.sort_unstable();
    assert_eq!(sessions, pids, "{report}");
    assert_eq!(
        report["sessions"][0]["toolboxes"],
        json!(["dev"]),
        "{report}"
    );
    let servers = report["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 1, "{report}");
    assert_eq!(servers[0]["pid"], starts(&dir, "starts.log")[0], "{report}");
    assert_eq!(
        servers[0]["sessions"].as_array().unwrap().len(),
        2,
        "{report}"
    );
    let rss = servers[0]["rssKb"].as_u64();
    assert!(rss.is_some_and(|kb| kb > 0), "the working set: {report}");

    // A second fleet cannot take the first one's pipe.
    let second = workbench_in(&dir)
        .args(["fleet", "--config", "config.json"])
        .envs(shared_env(&appdata))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(1), "{said}");
    assert!(said.contains("another process listens at"), "{said}");

    // The sessions end (their stdout closes: the fleet holds no handle of
    // theirs); the fleet lingers 300 ms, then ends with its server.
    for mut wb in [a, b] {
        assert_eq!(
            wb.end(Duration::from_secs(20)),
            Some(Some(0)),
            "{}",
            wb.log()
        );
    }
    let ended = wait_until(Duration::from_secs(20), || {
        shared_status(&dir, &appdata).0 == Some(1)
    });
    assert!(ended, "the fleet outlived its linger");
    let (_, _, stderr) = shared_status(&dir, &appdata);
    assert!(stderr.contains("no shared fleet runs"), "{stderr}");
    assert_stopped(&beats_file);
    let log = fleet_log(&appdata);
    assert!(log.contains("the fleet ends"), "{log}");
    let _ = fs::remove_dir_all(&dir);
}

/// The status report's `pid` (the fleet's) and its first server's pid.
fn fleet_and_server(dir: &Path, appdata: &Path) -> (u64, u64) {
    let (code, report, stderr) = shared_status(dir, appdata);
    assert_eq!(code, Some(0), "{stderr}");
    (
        report["pid"].as_u64().unwrap(),
        report["servers"][0]["pid"].as_u64().unwrap(),
    )
}

/// The server is a `.cmd` file: cmd.exe runs it in the fleet's folder.
#[test]
fn a_killed_fleet_fails_the_call_at_once_takes_its_server_and_the_next_request_starts_another() {
    let (dir, appdata, beats_file) = shared_case("shared-killed", true);
    let mut a = shared_session(&dir, &appdata);
    a.open_ok(1, "dev");
    let (fleet, _) = fleet_and_server(&dir, &appdata);
    a.use_tool(2, "dev", "s", "slow", json!({}));
    let slow = r#""method":"tools/call","params":{"name":"slow""#;
    let sent = wait_until(Duration::from_secs(10), || {
        fleet_log(&appdata).contains(slow)
    });
    assert!(sent, "{}", fleet_log(&appdata));
    // TerminateProcess: no code of the fleet's runs.
    let killed = std::process::Command::new("taskkill")
        .args(["/F", "/PID", &fleet.to_string()])
        .output()
        .unwrap();
    assert!(killed.status.success(), "{killed:?}");
    fleet_loss_answered_at_once(&mut a, 2);
    assert_stopped(&beats_file);
    // The session stays up; its next call starts a new fleet, which re-opens
    // its toolbox first.
    a.use_tool(3, "dev", "s", "echo", json!({}));
    let again = a.recv();
    assert!(!is_error(&again), "{again}");
    assert_eq!(starts(&dir, "starts.log").len(), 2);
    let (second, _) = fleet_and_server(&dir, &appdata);
    assert_ne!(second, fleet);
    assert_eq!(a.end(Duration::from_secs(20)), Some(Some(0)), "{}", a.log());
    let ended = wait_until(Duration::from_secs(20), || {
        shared_status(&dir, &appdata).0 == Some(1)
    });
    assert!(ended, "the fleet outlived its linger");
    assert_stopped(&beats_file);
    let _ = fs::remove_dir_all(&dir);
}
