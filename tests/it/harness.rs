//! The one harness of the integration tests: config builders for the fake
//! server, scratch folders, the workbench's command line, a session with a
//! running workbench (`Workbench`), waits with deadlines, and what the tests
//! read of the process table.
//!
//! Every wait has a deadline of seconds and turns a hang into a failure; none
//! measures speed.

#![allow(dead_code)] // the Windows build uses a part of it

use serde_json::{json, Value};
use std::fs;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

pub const WORKBENCH: &str = env!("CARGO_BIN_EXE_mcp-workbench");
pub const FAKE: &str = env!("CARGO_BIN_EXE_mcp-fake-server");

/// How many of the workbench's last stderr lines a failing test shows.
pub const LOG_SHOWN: usize = 200;

/// How long `expect_log` and `wait_list_changed` wait: what they wait for
/// comes within a second or two (a config or pins poll is one second), more
/// under load.
pub const EVENT_WAIT: Duration = Duration::from_secs(15);

/// How long a session waits for a line, and for the workbench's exit in
/// `finish`, unless a test sets `Workbench::timeout`.
pub const TIMEOUT: Duration = Duration::from_secs(20);

pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

// ---------------------------------------------------------------- configs

/// A server running the fake with `script` (found through `FAKE_MCP_SERVER`).
pub fn fake(script: &str) -> Value {
    json!({"command": "${FAKE_MCP_SERVER}", "args": [script]})
}

/// A tool of a fake script, with its `action`.
pub fn tool(name: &str, action: Value) -> Value {
    json!({"tool": {"name": name, "inputSchema": {"type": "object"}}, "action": action})
}

/// A toolbox holding `servers`.
pub fn toolbox(servers: Value) -> Value {
    json!({"description": "d", "mcpServers": servers})
}

/// A fake script with `tools` that appends its pid to `log` at every start
/// (read back with `starts`).
pub fn counted(log: &str, tools: Value) -> Value {
    json!({"startup": {"appendPidTo": log}, "tools": tools})
}

/// How many lines of `lines` are `notifications/tools/list_changed`.
pub fn list_changed(lines: &[Value]) -> usize {
    lines
        .iter()
        .filter(|l| l["method"] == "notifications/tools/list_changed")
        .count()
}

/// The text of a `CallToolResult` line.
pub fn text(result: &Value) -> &str {
    result["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

/// Whether a `CallToolResult` line is an error result.
pub fn is_error(result: &Value) -> bool {
    result["result"]["isError"] == json!(true)
}

// ------------------------------------------------------ folders and commands

/// The `PATH` the tests give the workbench: the system folders (on Windows,
/// the test's own `PATH`, which holds the system folders there).
pub fn system_path() -> String {
    if cfg!(windows) {
        std::env::var("PATH").unwrap_or_default()
    } else {
        "/usr/local/bin:/usr/bin:/bin".to_string()
    }
}

/// A fresh, empty folder for test `name` (unique within the test binary), as
/// its canonical path: the one `/proc/PID/cwd` shows.
pub fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("mcp-workbench-test-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

/// Saves `config` as `config.json` of `dir` as editors do: a new file
/// renamed over the old one, so the workbench never reads half of it.
pub fn save_config(dir: &Path, config: &Value) {
    let new = dir.join("config.json.new");
    fs::write(&new, config.to_string()).unwrap();
    fs::rename(&new, dir.join("config.json")).unwrap();
}

/// A fresh folder for test `name` holding `config.json` and `files`.
pub fn case_dir(name: &str, config: &Value, files: &[(&str, Value)]) -> PathBuf {
    let dir = scratch(name);
    fs::write(dir.join("config.json"), config.to_string()).unwrap();
    for (file, content) in files {
        fs::write(dir.join(file), content.to_string()).unwrap();
    }
    dir
}

/// The user's folders of a case in `dir`, created, as the environment that
/// names them: its state (pins, tokens), cache (catalog), runtime (the
/// fleet) and home.
pub fn user_env(dir: &Path) -> Vec<(String, String)> {
    let path = |leaf: &str| {
        let p = dir.join(leaf);
        let _ = fs::create_dir_all(&p);
        p.to_string_lossy().into_owned()
    };
    vec![
        ("XDG_STATE_HOME".into(), path("state")),
        ("XDG_CACHE_HOME".into(), path("cache")),
        ("XDG_RUNTIME_DIR".into(), path("run")),
        ("HOME".into(), path("home")),
    ]
}

/// The workbench, run in `dir` with a clean environment: `PATH` (the system
/// folders) and `FAKE_MCP_SERVER`, no arguments, no `RUST_LOG`.
pub fn workbench_in(dir: &Path) -> Command {
    let mut cmd = Command::new(WORKBENCH);
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", system_path())
        .env("FAKE_MCP_SERVER", FAKE);
    cmd
}

/// The workbench serving `config.json` of `dir`, logging at debug level,
/// with `env` added (stdio not yet set).
pub fn command(dir: &Path, env: &[(&str, &str)]) -> Command {
    let mut cmd = workbench_in(dir);
    cmd.args(["--config", "config.json"])
        .env("RUST_LOG", "debug");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// `check --config config.json` in `dir` with `extra` arguments, logging off.
pub fn check(dir: &Path, extra: &[&str]) -> Command {
    let mut cmd = workbench_in(dir);
    cmd.args(["check", "--config", "config.json"])
        .args(extra)
        .env("RUST_LOG", "off");
    cmd
}

/// Runs `check` in `dir` (`--json` if `json`): its exit code and stdout.
pub fn check_output(dir: &Path, json: bool) -> (Option<i32>, String) {
    let out = check(dir, if json { &["--json"] } else { &[] })
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

/// Example `name`'s executable, built by cargo now if it is not fresh (a
/// no-op after `cargo test`, which builds the examples; `cargo test --test
/// it` does not), its path taken from cargo's own report: no target folder,
/// profile or platform is guessed, and a stale build is never run. The
/// cargo gets none of what cargo sets for the test it runs (as
/// `scripts/fake-server`): ring's build script tracks those variables, and
/// would be rebuilt with everything above it, here and again by the next
/// cargo started from a shell.
pub fn example(name: &str) -> PathBuf {
    let cargo = option_env!("CARGO").unwrap_or("cargo");
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| cargo.into()));
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if key.starts_with("CARGO_MANIFEST_")
            || key.starts_with("CARGO_PKG_")
            || [
                "CARGO_CRATE_NAME",
                "CARGO_BIN_NAME",
                "CARGO_PRIMARY_PACKAGE",
                "OUT_DIR",
            ]
            .contains(&key.as_ref())
        {
            cmd.env_remove(key.as_ref());
        }
    }
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["build", "--quiet", "--locked", "--example", name])
        .args(["--message-format", "json-render-diagnostics"]);
    if !cfg!(debug_assertions) {
        cmd.arg("--release");
    }
    let out = cmd.stderr(Stdio::inherit()).output().unwrap();
    assert!(
        out.status.success(),
        "cargo cannot build the {name} example"
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == name)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("cargo names the {name} example's executable"))
}

// ------------------------------------------------------------------ waits

/// Polls `done` every 20 ms until it holds or `limit` passed; whether it held.
pub fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// Waits up to `limit` for `child` to exit: its exit code (`None` inside for
/// a signal), or `None` if it still runs.
pub fn wait_exit(child: &mut Child, limit: Duration) -> Option<Option<i32>> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status.code());
        }
        if Instant::now() >= deadline {
            return None;
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// `wait_exit`, and a child still running at the deadline is killed.
pub fn exit_within(child: &mut Child, limit: Duration) -> Option<Option<i32>> {
    let code = wait_exit(child, limit);
    if code.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    code
}

// ---------------------------------------------------------- process table

/// Processes (other than zombies) whose working directory is inside `dir`,
/// as "PID command line"; waits up to 500 ms for them to go. The workbench's
/// watchdog works in `/`, so it is never among them. Linux only (it reads
/// `/proc`); on Windows, the `windows` tests check that no process outlives
/// the workbench in their own way.
pub fn leftover_processes(dir: &Path) -> Vec<String> {
    if cfg!(not(target_os = "linux")) {
        panic!("leftover_processes reads /proc: Linux only");
    }
    let mut found = Vec::new();
    wait_until(Duration::from_millis(500), || {
        found = processes_in(dir);
        found.is_empty()
    });
    found
}

/// Processes whose working directory is inside `dir`, at once (a zombie
/// has no working directory).
fn processes_in(dir: &Path) -> Vec<String> {
    fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter(|e| fs::read_link(e.path().join("cwd")).is_ok_and(|cwd| cwd.starts_with(dir)))
        .map(|e| {
            let cmdline = fs::read(e.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            format!("{} {}", e.file_name().to_string_lossy(), cmdline.trim())
        })
        .collect()
}

/// Processes of the test in `dir` whose command line contains `marker`.
pub fn processes_with(dir: &Path, marker: &str) -> Vec<String> {
    processes_in(dir)
        .into_iter()
        .filter(|p| p.contains(marker))
        .collect()
}

/// Waits up to `limit` for every process of the test in `dir` whose command
/// line contains `marker` to be gone; fails naming `what` otherwise.
pub fn assert_gone(dir: &Path, marker: &str, limit: Duration, what: &str) {
    let mut left = Vec::new();
    let gone = wait_until(limit, || {
        left = processes_with(dir, marker);
        left.is_empty()
    });
    assert!(gone, "{what} left {left:?}");
}

/// The pids a script with `appendPidTo` wrote to `log` in `dir`, one per start.
pub fn starts(dir: &Path, log: &str) -> Vec<u32> {
    fs::read_to_string(dir.join(log))
        .unwrap_or_default()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

/// Whether process `pid` runs (Linux: reads `/proc`; a zombie does not run).
pub fn alive(pid: u32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|s| !s.starts_with(" Z"))
    })
}

/// Waits up to 15 s for process `pid` to be gone (reaped or a zombie).
pub fn gone(pid: u32) -> bool {
    wait_until(Duration::from_secs(15), || !alive(pid))
}

/// A field of `/proc/PID/status` (the text after `name:`, trimmed).
pub fn status_field(pid: u32, name: &str) -> Option<String> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .map(|v| v.trim().to_string())
}

/// `Threads:` of process `pid`.
pub fn threads(pid: u32) -> usize {
    status_field(pid, "Threads")
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// The peak resident set of a live process (`VmHWM`), in bytes.
pub fn peak_rss(pid: u32) -> usize {
    let kib = status_field(pid, "VmHWM")
        .and_then(|v| v.strip_suffix("kB")?.trim().parse::<usize>().ok())
        .expect("VmHWM in /proc/PID/status");
    kib * 1024
}

/// Open file descriptors of process `pid`.
pub fn fds(pid: u32) -> usize {
    fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// The answer to request `id` of session `wb` whose shared fleet was just
/// killed: at once (not at a timeout), an `isError` naming the fleet.
pub fn fleet_loss_answered_at_once(wb: &mut Workbench, id: i64) {
    let started = Instant::now();
    let answer = wb.recv();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "answered at once"
    );
    assert_eq!(answer["id"], id);
    assert!(
        is_error(&answer) && text(&answer).contains("shared fleet"),
        "{answer}"
    );
}

/// Sends `signal` (a name such as `TERM`) to `pid`.
pub fn signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([format!("-{signal}"), pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

// ---------------------------------------------------------------- session

/// A running workbench driven line by line, as a host would: what it writes
/// to stdout arrives in `lines`, its stderr in a log.
pub struct Workbench {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    /// stdout, one line at a time, without the `\n`.
    pub lines: Receiver<Vec<u8>>,
    stdout: Option<JoinHandle<()>>,
    stderr: Option<JoinHandle<()>>,
    /// Everything the workbench wrote to stderr so far.
    log: Arc<Mutex<Vec<u8>>>,
    pub dir: PathBuf,
    /// Whether dropping the session removes `dir`.
    remove_dir: bool,
    /// The response to `initialize`.
    pub init: Value,
    /// How long `recv` waits for a line and `finish` for the exit.
    pub timeout: Duration,
}

impl Workbench {
    /// A workbench on `config` and `files` in a fresh folder for test `name`,
    /// with `env` added; initialized.
    pub fn start(
        name: &str,
        config: Value,
        files: &[(&str, Value)],
        env: &[(&str, &str)],
    ) -> Workbench {
        let dir = case_dir(name, &config, files);
        let cmd = command(&dir, env);
        Workbench::spawn(dir, cmd)
    }

    /// Starts `cmd` (from `command`, adjusted as a test needs) in `dir`, which
    /// it removes when dropped, and initializes the session.
    pub fn spawn(dir: PathBuf, cmd: Command) -> Workbench {
        let mut wb = Workbench::spawn_raw(dir, cmd, true);
        wb.send_line(INITIALIZE);
        wb.init = wb.recv();
        wb.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        wb
    }

    /// The workbench on `config.json` of `dir` with `env` added, through
    /// `initialize` and `notifications/initialized`; the folder stays.
    pub fn initialized(dir: &Path, env: &[(&str, &str)]) -> Workbench {
        let mut wb = Workbench::spawn_raw(dir.to_path_buf(), command(dir, env), false);
        wb.send_line(INITIALIZE);
        wb.init = wb.recv();
        wb.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        wb
    }

    /// Starts `cmd` in `dir` and sends nothing. `remove_dir`: whether the
    /// folder goes when the session is dropped (not a folder of the repository).
    pub fn spawn_raw(dir: PathBuf, mut cmd: Command, remove_dir: bool) -> Workbench {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the workbench starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        let stdout = thread::spawn(move || {
            // Large reads: some tests send and receive 64 MiB lines.
            for line in BufReader::with_capacity(1 << 20, stdout).split(b'\n') {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut stderr = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let written = Arc::clone(&log);
        let stderr = thread::spawn(move || {
            let mut buf = [0; 8192];
            while let Ok(n @ 1..) = stderr.read(&mut buf) {
                written.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Workbench {
            child,
            stdin,
            lines,
            stdout: Some(stdout),
            stderr: Some(stderr),
            log,
            dir,
            remove_dir,
            init: Value::Null,
            timeout: TIMEOUT,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends one line (the `\n` is added), reporting a failed write.
    pub fn try_send(&mut self, line: &[u8]) -> io::Result<()> {
        let stdin = self.stdin.as_mut().ok_or(io::ErrorKind::BrokenPipe)?;
        stdin.write_all(line)?;
        stdin.write_all(b"\n")?;
        stdin.flush()
    }

    pub fn send_bytes(&mut self, line: &[u8]) {
        self.try_send(line).expect("the workbench reads stdin");
    }

    pub fn send_line(&mut self, line: &str) {
        self.send_bytes(line.as_bytes());
    }

    pub fn send(&mut self, message: Value) {
        self.send_line(&message.to_string());
    }

    /// Sends `tools/call` of `tool` as request `id`.
    pub fn call(&mut self, id: i64, tool: &str, arguments: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}));
    }

    pub fn use_tool(&mut self, id: i64, toolbox: &str, server: &str, tool: &str, arguments: Value) {
        let identifier = json!({"toolbox": toolbox, "server": server, "tool": tool});
        self.call(
            id,
            "use_tool",
            json!({"tool": identifier, "arguments": arguments}),
        );
    }

    /// Opens `toolbox` as request `id`: its answer, the lines before it
    /// kept in `others`.
    pub fn open(&mut self, id: i64, toolbox: &str, others: &mut Vec<Value>) -> Value {
        self.call(id, "open_toolbox", json!({"toolbox_name": toolbox}));
        self.answer(id, others)
    }

    /// Opens `toolbox` as request `id`, and checks that it opened (other
    /// lines before the answer are dropped).
    pub fn open_ok(&mut self, id: i64, toolbox: &str) -> Value {
        let line = self.open(id, toolbox, &mut Vec::new());
        assert!(!is_error(&line), "open {toolbox}: {line}");
        line
    }

    /// Opens `toolbox` as request `id`; the very next line must be its
    /// answer, whose `structuredContent` this returns.
    pub fn open_next(&mut self, id: i64, toolbox: &str) -> Value {
        self.call(id, "open_toolbox", json!({"toolbox_name": toolbox}));
        let line = self.recv();
        assert_eq!(line["id"], id, "{line}");
        line["result"]["structuredContent"].clone()
    }

    /// The next stdout line within `timeout`; fails with the end of stderr.
    pub fn recv_line(&mut self) -> Vec<u8> {
        self.lines.recv_timeout(self.timeout).unwrap_or_else(|_| {
            panic!(
                "no line from the workbench within {:?}; its stderr ends:\n{}",
                self.timeout,
                self.log_tail(60)
            )
        })
    }

    /// The next stdout line, which must be JSON.
    pub fn recv(&mut self) -> Value {
        let line = self.recv_line();
        serde_json::from_slice(&line).unwrap_or_else(|e| {
            let shown = String::from_utf8_lossy(&line[..line.len().min(300)]).into_owned();
            panic!("stdout carries JSON only ({e}): {shown}")
        })
    }

    /// The next line within `limit`, if any.
    pub fn recv_within(&mut self, limit: Duration) -> Option<Value> {
        let line = self.lines.recv_timeout(limit).ok()?;
        Some(serde_json::from_slice(&line).expect("stdout carries JSON only"))
    }

    /// Waits up to `EVENT_WAIT` for a `notifications/tools/list_changed`,
    /// keeping the lines before it in `others`.
    pub fn wait_list_changed(&mut self, others: &mut Vec<Value>) {
        let deadline = Instant::now() + EVENT_WAIT;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.recv_within(left) {
                Some(line) if line["method"] == "notifications/tools/list_changed" => return,
                Some(line) => others.push(line),
                None => break,
            }
        }
        panic!(
            "no notifications/tools/list_changed within {EVENT_WAIT:?}; other lines: {others:?}"
        );
    }

    /// Every line that arrives until none came for `quiet` (to show that
    /// nothing more comes; never to wait for a line that must come).
    pub fn lines_until_quiet(&mut self, quiet: Duration) -> Vec<Value> {
        let mut lines = Vec::new();
        while let Some(line) = self.recv_within(quiet) {
            lines.push(line);
        }
        lines
    }

    /// Sends request `id` and expects its answer as the next line.
    pub fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let line = self.recv();
        assert_eq!(line["id"], json!(id), "unexpected line {line}");
        line
    }

    /// Waits for the answer to `id`, keeping the other lines seen meanwhile.
    pub fn answer(&mut self, id: i64, others: &mut Vec<Value>) -> Value {
        loop {
            let line = self.recv();
            if line["id"] == json!(id) {
                return line;
            }
            others.push(line);
        }
    }

    /// Sends request `id` and waits for its answer, keeping other lines.
    pub fn answer_to(
        &mut self,
        id: i64,
        method: &str,
        params: Value,
        others: &mut Vec<Value>,
    ) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.answer(id, others)
    }

    /// Waits up to `limit` for the workbench to exit; its exit code.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<Option<i32>> {
        wait_exit(&mut self.child, limit)
    }

    /// Closes stdin and waits up to `limit` for the exit (killing the
    /// workbench after that: then `None`); then every stdout line is in
    /// `lines` and all of stderr in the log.
    pub fn end(&mut self, limit: Duration) -> Option<Option<i32>> {
        drop(self.stdin.take());
        let code = exit_within(&mut self.child, limit);
        for reader in [self.stdout.take(), self.stderr.take()]
            .into_iter()
            .flatten()
        {
            reader.join().unwrap();
        }
        code
    }

    /// Closes stdin and returns the exit code and stderr.
    pub fn finish(mut self) -> (Option<i32>, String) {
        let code = self.end(self.timeout).expect("the workbench exits");
        (code, self.log())
    }

    /// Closes stdin and expects exit 0 within `limit`, nothing more on
    /// stdout, and no process left in the folder.
    pub fn finish_clean(mut self, limit: Duration) {
        let code = self.end(limit);
        assert_eq!(code, Some(Some(0)), "exit status on stdin EOF");
        let extra: Vec<String> = self
            .lines
            .try_iter()
            .map(|l| String::from_utf8_lossy(&l[..l.len().min(200)]).into_owned())
            .collect();
        assert!(extra.is_empty(), "unexpected output: {extra:?}");
        let leftovers = leftover_processes(&self.dir);
        assert!(leftovers.is_empty(), "processes left behind: {leftovers:?}");
    }

    /// Everything on stderr so far, invalid UTF-8 replaced. Stderr is read
    /// apart from stdout: a line the workbench logged before an answer may
    /// reach this log after it. To check a line while it runs, wait for it
    /// (`expect_log`); after `end` or `finish` the log is whole.
    pub fn log(&self) -> String {
        String::from_utf8_lossy(&self.log.lock().unwrap()).into_owned()
    }

    /// Everything on stderr so far, as bytes.
    pub fn log_bytes(&self) -> Vec<u8> {
        self.log.lock().unwrap().clone()
    }

    /// The last `n` lines of stderr.
    pub fn log_tail(&self, n: usize) -> String {
        let log = self.log();
        let tail: Vec<&str> = log.lines().rev().take(n).collect();
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    }

    /// SIGKILLs the workbench (no code of its own runs) and checks that
    /// nothing of its folder's processes survives it.
    pub fn sigkill_leaves_nothing(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        assert_gone(
            &self.dir,
            "",
            Duration::from_secs(5),
            "SIGKILL of the workbench",
        );
    }

    /// Waits up to `limit` for stderr to hold `needle` `n` times.
    pub fn wait_log(&self, needle: &str, n: usize, limit: Duration) -> bool {
        wait_until(limit, || self.log().matches(needle).count() >= n)
    }

    /// Waits up to `EVENT_WAIT` for stderr to hold `needle`; fails otherwise
    /// (the failing test shows the log).
    pub fn expect_log(&self, needle: &str) {
        assert!(
            self.wait_log(needle, 1, EVENT_WAIT),
            "no {needle:?} on the workbench's stderr within {EVENT_WAIT:?}"
        );
    }
}

impl Drop for Workbench {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if thread::panicking() {
            // The test failed with the workbench running: what it logged
            // says why. Its stderr ends with its exit (a server that holds
            // it open is not waited for).
            if let Some(reader) = &self.stderr {
                wait_until(Duration::from_secs(2), || reader.is_finished());
            }
            eprintln!(
                "the workbench's stderr (last {LOG_SHOWN} lines):\n{}",
                self.log_tail(LOG_SHOWN)
            );
        }
        if self.remove_dir {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}
