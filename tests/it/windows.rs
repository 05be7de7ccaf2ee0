//! Windows only (run under Wine in CI): a server behind a `.cmd` file found
//! through `PATH` and `PATHEXT`, its arguments quoted safely, the Windows
//! allow-list of variables, and no process outliving the workbench, whether
//! it stops on stdin EOF, on Ctrl-Break or Ctrl-C, or is killed.
//!
//! A process left behind is seen by its heartbeat: the fake server appends a
//! line to a file every 50 ms while it lives (`heartbeatTo`), so a file that
//! keeps growing after the workbench is gone names a survivor.

use crate::harness::{command, is_error, system_path, text, Workbench, FAKE};
use serde_json::json;
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
