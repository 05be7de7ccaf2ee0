//! A workbench started on a config written into a fresh temporary folder,
//! driven line by line: the harness of the behaviour and liveness tests.

#![allow(dead_code)]

use serde_json::{json, Value};
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

pub const WORKBENCH: &str = env!("CARGO_BIN_EXE_mcp-workbench");
pub const FAKE: &str = env!("CARGO_BIN_EXE_mcp-fake-server");

pub struct Workbench {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub lines: Receiver<Value>,
    /// Everything the workbench wrote to stderr so far.
    pub log: Arc<Mutex<String>>,
    pub stderr: Option<thread::JoinHandle<()>>,
    pub dir: PathBuf,
    /// The response to `initialize`.
    pub init: Value,
}

/// A fresh folder for test `name` holding `config.json` and `files`.
pub fn case_dir(name: &str, config: &Value, files: &[(&str, Value)]) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("mcp-workbench-test-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("config.json"), config.to_string()).unwrap();
    for (file, content) in files {
        fs::write(dir.join(file), content.to_string()).unwrap();
    }
    dir
}

/// The workbench command for a case folder (stdio not yet set).
pub fn command(dir: &PathBuf, env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(WORKBENCH);
    cmd.args(["--config", "config.json"])
        .current_dir(dir)
        .env_clear()
        .env("PATH", super::system_path())
        .env("FAKE_MCP_SERVER", FAKE)
        .env("RUST_LOG", "debug");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

impl Workbench {
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

    /// Starts `cmd` (from `command`, adjusted as a test needs) in `dir` and
    /// initializes the session.
    pub fn spawn(dir: PathBuf, mut cmd: Command) -> Workbench {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value = serde_json::from_str(&line).expect("stdout carries JSON only");
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(String::new()));
        let written = Arc::clone(&log);
        let stderr = thread::spawn(move || {
            for line in BufReader::new(stderr).split(b'\n') {
                let Ok(line) = line else { break };
                let mut log = written.lock().unwrap();
                log.push_str(&String::from_utf8_lossy(&line));
                log.push('\n');
            }
        });
        let mut wb = Workbench {
            child,
            stdin,
            lines,
            log,
            stderr: Some(stderr),
            dir,
            init: Value::Null,
        };
        wb.send_line(INITIALIZE);
        wb.init = wb.recv();
        wb.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        wb
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, message: Value) {
        self.send_line(&message.to_string());
    }

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

    pub fn recv(&mut self) -> Value {
        self.lines
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| {
                let log = self.log.lock().unwrap();
                let tail: Vec<&str> = log.lines().rev().take(60).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                panic!(
                    "no line from the workbench within 20 s; its stderr ends:\n{}",
                    tail.join("\n")
                )
            })
    }

    /// The next line within `limit`, if any.
    pub fn recv_within(&mut self, limit: Duration) -> Option<Value> {
        self.lines.recv_timeout(limit).ok()
    }

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
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status.code());
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Closes stdin and returns the exit code and stderr.
    pub fn finish(mut self) -> (Option<i32>, String) {
        drop(self.stdin.take());
        let code = self
            .wait_exit(Duration::from_secs(20))
            .expect("the workbench exits");
        self.stderr.take().unwrap().join().unwrap();
        (code, self.log.lock().unwrap().clone())
    }

    /// Waits up to `limit` for stderr to hold `needle` `n` times.
    pub fn wait_log(&self, needle: &str, n: usize, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            if self.log.lock().unwrap().matches(needle).count() >= n {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Workbench {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = fs::remove_dir_all(&self.dir);
    }
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

/// `Threads:` of process `pid`.
pub fn threads(pid: u32) -> usize {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

/// Open file descriptors of process `pid`.
pub fn fds(pid: u32) -> usize {
    fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// Sends `signal` to `pid`.
pub fn signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([format!("-{signal}"), pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}
