//! The guards against leftovers (Linux): the watchdog survives every signal
//! but SIGKILL and is replaced when it is lost; helpers that leave their
//! server's process group (`setsid`, a double fork) die with a close, an exit
//! or a SIGKILL of the workbench; SIGUSR2 is harmless whether or not a toolbox
//! was opened.

use crate::harness::{
    self, alive, assert_gone, leftover_processes, status_field, text, tool, wait_until, Workbench,
    FAKE,
};
use serde_json::{json, Value};
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

/// A fake server behind `sh -c`, with `before` run by the shell first (the
/// fake's arguments end with `marker`, to find it).
fn shell_server(before: &str, marker: &str) -> Value {
    json!({"command": "sh", "args": ["-c", format!("{before} \"$0\" s.json {marker}; true"), FAKE]})
}

fn config(servers: Value) -> Value {
    json!({"toolboxes": {"box": {"description": "d", "mcpServers": servers}}})
}

fn script() -> Value {
    json!({"tools": [{"tool": {"name": "echo", "inputSchema": {"type": "object"}}}]})
}

fn start(name: &str, servers: Value) -> Workbench {
    Workbench::start(name, config(servers), &[("s.json", script())], &[])
}

/// The pid of the one process of the test in `dir` whose command line is `command`.
fn pid_of(dir: &Path, command: &str) -> u32 {
    let found: Vec<String> = leftover_processes(dir)
        .into_iter()
        .filter(|p| p.split_once(' ').is_some_and(|(_, c)| c == command))
        .collect();
    assert_eq!(found.len(), 1, "processes running {command:?}: {found:?}");
    found[0].split_whitespace().next().unwrap().parse().unwrap()
}

/// The pid of the newest watchdog, from the workbench's log: waits for its
/// line to be whole (stderr is read apart from stdout).
fn watchdog_pid(wb: &Workbench) -> u32 {
    let newest = || {
        let log = wb.log();
        let (_, rest) = log.rsplit_once("watchdog started (pid ")?;
        rest.split_once(')')?.0.parse().ok()
    };
    let mut pid = None;
    wait_until(Duration::from_secs(15), || {
        pid = newest();
        pid.is_some()
    });
    pid.expect("a watchdog started (pid N) line in the log")
}

/// Waits up to 3 s for `pid` to be reaped (no `/proc` entry, not even a zombie).
fn reaped(pid: u32) -> bool {
    wait_until(Duration::from_secs(3), || {
        !Path::new(&format!("/proc/{pid}")).exists()
    })
}

/// Field `name` of `/proc/PID/status`, which must be there.
fn field(pid: u32, name: &str) -> String {
    status_field(pid, name).unwrap_or_else(|| panic!("no {name} for process {pid}"))
}

#[test]
fn the_watchdog_survives_every_signal_but_sigkill() {
    let mut wb = start(
        "watchdog-signals",
        json!({"s": shell_server("", "grandchild-marker")}),
    );
    wb.open_ok(1, "box");
    let watchdog = watchdog_pid(&wb);
    for signal in [
        "USR1", "USR2", "ALRM", "QUIT", "HUP", "INT", "TERM", "PIPE", "VTALRM", "PROF", "TSTP",
        "TTIN", "TTOU", "XCPU", "XFSZ", "PWR", "SYS", "TRAP", "ABRT",
    ] {
        harness::signal(watchdog, signal);
    }
    thread::sleep(Duration::from_millis(300));
    assert!(alive(watchdog), "the watchdog died of a signal");
    assert_eq!(field(watchdog, "State").chars().next(), Some('S'));
    assert_eq!(watchdog_pid(&wb), watchdog);
    wb.sigkill_leaves_nothing();
}

#[test]
fn a_lost_watchdog_is_replaced_and_guards_the_open_servers() {
    let mut wb = start(
        "watchdog-lost",
        json!({"s": shell_server("", "grandchild-marker")}),
    );
    wb.open_ok(1, "box");
    let lost = watchdog_pid(&wb);
    harness::signal(lost, "KILL");
    assert!(
        wb.wait_log("watchdog started (pid ", 2, Duration::from_secs(5)),
        "no new watchdog"
    );
    let new = watchdog_pid(&wb);
    assert_ne!(new, lost);
    assert!(alive(new));
    assert!(reaped(lost), "the lost watchdog is left a zombie");
    // Servers started after the loss are guarded too.
    wb.call(2, "close_toolbox", json!({"toolbox_name": "box"}));
    assert!(text(&wb.recv()).starts_with("Toolbox 'box' closed"));
    wb.open_ok(3, "box");
    wb.sigkill_leaves_nothing();
}

#[test]
fn close_toolbox_kills_a_helper_in_a_session_of_its_own() {
    let mut wb = start(
        "helper-close",
        json!({"setsid": shell_server("setsid sleep 1001 &", "m1")}),
    );
    wb.open_ok(1, "box");
    pid_of(&wb.dir, "sleep 1001");
    wb.call(2, "close_toolbox", json!({"toolbox_name": "box"}));
    assert!(text(&wb.recv()).starts_with("Toolbox 'box' closed"));
    assert_gone(&wb.dir, "sleep", Duration::from_secs(3), "close_toolbox");
    assert_eq!(wb.finish().0, Some(0));
}

#[test]
fn close_toolbox_kills_a_double_forked_helper() {
    // The subshell starts the helper and exits: the helper is an orphan in a
    // session of its own, outside its server's group and no longer below the
    // process that started it.
    let mut wb = start(
        "helper-double-fork",
        json!({"daemon": shell_server("(setsid sleep 1005 &);", "m5")}),
    );
    wb.open_ok(1, "box");
    let helper = pid_of(&wb.dir, "sleep 1005");
    wb.call(2, "close_toolbox", json!({"toolbox_name": "box"}));
    assert!(text(&wb.recv()).starts_with("Toolbox 'box' closed"));
    if !wait_until(Duration::from_secs(3), || !alive(helper)) {
        harness::signal(helper, "KILL");
        panic!(
            "close_toolbox left the double-forked helper {helper} running; the workbench's stderr:\n{}",
            wb.log()
        );
    }
    assert!(
        reaped(helper),
        "the killed helper {helper} is left a zombie; the workbench's stderr:\n{}",
        wb.log()
    );
    // The workbench goes on serving.
    wb.send(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    let answer = wb.recv_within(Duration::from_secs(5));
    assert!(
        answer.is_some_and(|a| a["id"] == json!(3)),
        "no answer to ping after the close; the workbench's stderr:\n{}",
        wb.log()
    );
    assert_eq!(wb.finish().0, Some(0));
}

#[test]
fn an_orphan_the_workbench_adopted_is_reaped_when_it_dies() {
    // A server's first process is the subreaper of its tree: the
    // double-forked helper is adopted by the workbench only once that
    // process is gone (here the server crashes), and reaped when it dies.
    let script = json!({"tools": [tool("crash", json!({"exit": 3}))]});
    let servers = json!({"daemon": shell_server("(setsid sleep 1002 &);", "m2")});
    let mut wb = Workbench::start("helper-reaped", config(servers), &[("s.json", script)], &[]);
    wb.open_ok(1, "box");
    let daemon = pid_of(&wb.dir, "sleep 1002");
    let workbench = wb.pid().to_string();
    assert_ne!(
        field(daemon, "PPid"),
        workbench,
        "the helper left its server's tree"
    );
    wb.use_tool(2, "box", "daemon", "crash", json!({}));
    wb.recv();
    let adopted = wait_until(Duration::from_secs(3), || {
        status_field(daemon, "PPid").as_deref() == Some(workbench.as_str())
    });
    assert!(
        adopted,
        "the workbench did not adopt the helper; its stderr:\n{}",
        wb.log()
    );
    harness::signal(daemon, "KILL");
    assert!(
        reaped(daemon),
        "an adopted orphan is left a zombie; the workbench's stderr:\n{}",
        wb.log()
    );
    assert_eq!(wb.finish().0, Some(0));
}

/// A setsid helper (a child of the server) and a double-forked one (an orphan
/// its server's first process adopted).
fn helpers() -> Value {
    json!({
        "setsid": shell_server("setsid sleep 1003 &", "m1"),
        "daemon": shell_server("(setsid sleep 1004 &);", "m2"),
    })
}

#[test]
fn helpers_out_of_the_group_die_when_the_workbench_exits() {
    let mut wb = start("helper-exit", helpers());
    wb.open_ok(1, "box");
    let helpers = [pid_of(&wb.dir, "sleep 1003"), pid_of(&wb.dir, "sleep 1004")];
    assert_eq!(wb.finish().0, Some(0)); // this removes the folder: watch the pids
    let deadline = Instant::now() + Duration::from_secs(3);
    while helpers.iter().any(|&pid| alive(pid)) {
        assert!(
            Instant::now() < deadline,
            "the workbench's exit left {helpers:?}"
        );
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn helpers_out_of_the_group_die_with_a_killed_workbench() {
    let mut wb = start("helper-sigkill", helpers());
    wb.open_ok(1, "box");
    pid_of(&wb.dir, "sleep 1003");
    pid_of(&wb.dir, "sleep 1004");
    // The workbench hands them to the watchdog within a second or so.
    wb.wait_log("registered with the watchdog", 2, Duration::from_secs(5));
    wb.sigkill_leaves_nothing();
}

#[test]
fn sigusr2_is_harmless_before_and_after_an_open() {
    let mut wb = start("sigusr2", json!({"s": shell_server("", "usr2-marker")}));
    for round in 0..2 {
        if round == 1 {
            wb.open_ok(1, "box");
        }
        harness::signal(wb.pid(), "USR2");
        thread::sleep(Duration::from_millis(200));
        let id = 10 + round;
        wb.send(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
        let answer = wb.recv_within(Duration::from_secs(5));
        assert!(
            answer.is_some_and(|a| a["id"] == json!(id)),
            "no answer to ping after SIGUSR2 (round {round}): exit {:?}",
            wb.wait_exit(Duration::from_millis(100))
        );
    }
    // A server gets SIGUSR2's default disposition back. (Today the handler
    // that `install_interrupt` puts in before every spawn does that too; this
    // guards the reset once that handler is gone.)
    let server = pid_of(&wb.dir, &format!("{FAKE} s.json usr2-marker"));
    let ignored = u64::from_str_radix(&field(server, "SigIgn"), 16).unwrap();
    assert_eq!(
        ignored & (1 << (12 - 1)),
        0,
        "SIGUSR2 ignored in the server"
    );
    assert_eq!(wb.finish().0, Some(0));
}
