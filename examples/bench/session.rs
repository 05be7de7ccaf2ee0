//! The processes under test and how the driver talks to them: spawning with a
//! CPU placement, line IO, the MCP requests the benchmark needs, configs and
//! readings from /proc.

use serde_json::{json, Value};
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// A child process spoken to with newline-delimited JSON-RPC.
pub struct Proc {
    child: Child,
    stdin: Option<ChildStdin>,
    out: BufReader<ChildStdout>,
    line: Vec<u8>,
    next_id: u64,
}

impl Proc {
    /// Starts `program` on CPU `cpu` through `taskset` (which execs it, so the
    /// pid is the program's), or where the driver runs (CPU 0) when None.
    pub fn spawn(
        cpu: Option<usize>,
        program: &Path,
        args: &[String],
        log: &File,
    ) -> io::Result<Proc> {
        let mut cmd = Command::new(if cpu.is_some() {
            Path::new("taskset")
        } else {
            program
        });
        if let Some(cpu) = cpu {
            cmd.arg("-c").arg(cpu.to_string()).arg(program);
        }
        cmd.args(args).stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut child = cmd.stderr(log.try_clone()?).spawn()?;
        let (stdin, stdout) = (child.stdin.take(), child.stdout.take().expect("piped"));
        let out = BufReader::with_capacity(1 << 16, stdout);
        Ok(Proc {
            child,
            stdin,
            out,
            line: Vec::new(),
            next_id: 0,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    pub fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        let stdin = self.stdin.as_mut().ok_or(io::ErrorKind::BrokenPipe)?;
        stdin.write_all(bytes)
    }

    /// The next line that is not a notification, without its `\n`.
    pub fn recv(&mut self) -> io::Result<&[u8]> {
        loop {
            self.line.clear();
            if self.out.read_until(b'\n', &mut self.line)? == 0 {
                let pid = self.pid();
                return Err(io::Error::other(format!("pid {pid} closed its stdout")));
            }
            if !contains(&self.line[..self.line.len().min(40)], b"\"method\"") {
                self.line.pop();
                return Ok(&self.line);
            }
        }
    }

    /// The last line `recv` returned.
    pub fn last_line(&self) -> &[u8] {
        &self.line
    }

    /// Whether a whole line is already buffered (reading it will not block).
    pub fn has_buffered_line(&self) -> bool {
        self.out.buffer().contains(&b'\n')
    }

    /// Sends a request without waiting for its answer; its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> io::Result<u64> {
        let id = self.next_id();
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(format!("{msg}\n").as_bytes())?;
        Ok(id)
    }

    /// Waits for the result of request `id`.
    pub fn wait(&mut self, id: u64) -> io::Result<Value> {
        loop {
            let msg: Value = serde_json::from_slice(self.recv()?).map_err(io::Error::other)?;
            if msg["id"] == id {
                return match msg.get("error") {
                    Some(e) => Err(io::Error::other(format!("request failed: {e}"))),
                    None => Ok(msg["result"].clone()),
                };
            }
        }
    }

    pub fn request(&mut self, method: &str, params: Value) -> io::Result<Value> {
        let id = self.send_request(method, params)?;
        self.wait(id)
    }

    /// The MCP handshake, as a host does it.
    pub fn initialize(&mut self) -> io::Result<()> {
        let id = self.send_initialize()?;
        self.initialized(id)
    }

    /// The first half of `initialize`: sends the request; its id.
    pub fn send_initialize(&mut self) -> io::Result<u64> {
        let client = json!({"name": "bench", "version": "0"});
        let params =
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client});
        self.send_request("initialize", params)
    }

    /// The second half: waits for the result and sends `initialized`.
    pub fn initialized(&mut self, id: u64) -> io::Result<()> {
        self.wait(id)?;
        self.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
    }

    /// Opens toolboxes, all at once; the time until the last answer, whose
    /// line stays in `last_line`.
    pub fn open(&mut self, toolboxes: &[String]) -> io::Result<Duration> {
        let began = Instant::now();
        for toolbox in toolboxes {
            let tail = call_tail("open_toolbox", &json!({"toolbox_name": toolbox}));
            let line = call_line(self.next_id(), &tail);
            self.send(&line)?;
        }
        for _ in toolboxes {
            if !is_ok(self.recv()?) {
                return Err(self.unexpected());
            }
        }
        Ok(began.elapsed())
    }

    /// An error quoting the last line read.
    pub fn unexpected(&self) -> io::Error {
        let text = String::from_utf8_lossy(&self.line[..self.line.len().min(400)]);
        io::Error::other(format!("unexpected answer: {text}"))
    }

    /// Closes stdin and waits for the exit (killing after 10 s).
    pub fn close(mut self) -> io::Result<()> {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.child.try_wait()?.is_none() {
            if Instant::now() > deadline {
                self.child.kill()?;
            }
            thread::sleep(Duration::from_millis(2));
        }
        Ok(())
    }
}

/// `{"jsonrpc":"2.0","id":ID` + `tail`: a request line.
pub fn call_line(id: u64, tail: &str) -> Vec<u8> {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id}{tail}").into_bytes()
}

/// The part of a `tools/call` request line after the id.
pub fn call_tail(tool: &str, arguments: &Value) -> String {
    let params = json!({"name": tool, "arguments": arguments});
    format!(",\"method\":\"tools/call\",\"params\":{params}}}\n")
}

/// The same call through `use_tool`.
pub fn use_tool_tail(toolbox: &str, server: &str, tool: &str, arguments: &Value) -> String {
    let id = json!({"toolbox": toolbox, "server": server, "tool": tool});
    call_tail("use_tool", &json!({"tool": id, "arguments": arguments}))
}

/// A result that is not `isError`. Looks at both ends only, so it is cheap
/// for results of many megabytes.
pub fn is_ok(reply: &[u8]) -> bool {
    let head = &reply[..reply.len().min(200)];
    let tail = &reply[reply.len().saturating_sub(64)..];
    contains(head, b"\"result\"") && !contains(tail, b"\"isError\":true")
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// A workbench config: toolboxes `tb0..` with servers `s0..`, each running
/// `bench serve ARGS`.
pub fn write_config(
    path: &Path,
    exe: &Path,
    dynamic: bool,
    shape: (usize, usize),
    args: &[String],
) -> io::Result<()> {
    let args = [&["serve".to_string()], args].concat();
    let server = json!({"command": exe, "args": args});
    let servers: serde_json::Map<_, _> = (0..shape.1)
        .map(|s| (format!("s{s}"), server.clone()))
        .collect();
    let toolbox = json!({"description": "benchmark", "mcpServers": servers});
    let toolboxes: serde_json::Map<_, _> = (0..shape.0)
        .map(|t| (format!("tb{t}"), toolbox.clone()))
        .collect();
    let mode = if dynamic { "dynamic" } else { "proxy" };
    fs::write(
        path,
        json!({"mode": mode, "toolboxes": toolboxes}).to_string(),
    )
}

/// A field of /proc/PID/status (VmRSS, VmHWM) in bytes.
pub fn status_bytes(pid: u32, key: &str) -> io::Result<f64> {
    let text = fs::read_to_string(format!("/proc/{pid}/status"))?;
    let kb = text
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'));
    let kb = kb.and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok());
    kb.map(|kb| kb * 1024.0)
        .ok_or_else(|| io::Error::other(format!("no {key} for {pid}")))
}

/// Field `i` of /proc/PID/stat as in proc(5): 10 minflt, 14 utime, 15 stime.
pub fn proc_stat(pid: u32, i: usize) -> io::Result<u64> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // Fields after the command name, which is in parentheses, start at 3.
    let rest = text.rsplit_once(')').map_or("", |s| s.1);
    let field = rest
        .split_whitespace()
        .nth(i - 3)
        .and_then(|f| f.parse().ok());
    field.ok_or(io::Error::other(format!("bad /proc/{pid}/stat")))
}

/// CPU time of every live thread in ns (/proc/PID/task/*/schedstat).
pub fn cpu_ns(pid: u32) -> io::Result<f64> {
    let mut total = 0.0;
    for task in fs::read_dir(format!("/proc/{pid}/task"))? {
        let text = fs::read_to_string(task?.path().join("schedstat")).unwrap_or_default();
        total += text
            .split(' ')
            .next()
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0);
    }
    Ok(total)
}
