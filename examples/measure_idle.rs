//! `measure_idle`: what sleeping servers save and cost. Runs one workbench
//! session with three toolboxes of real npm servers (server-everything,
//! server-memory, server-filesystem), each with `idleTimeoutMs`, and prints:
//! - the RSS of the workbench plus all its descendants (`VmRSS` summed over
//!   the process tree, the watchdog included): open and in use, then once the
//!   idle timeout has put every server to sleep;
//! - the latency of the first call after a wake (the start included), p50
//!   and range of 10 per server;
//! - the workbench's CPU over 10 s with every server asleep and the config
//!   watch running (utime + stime from /proc/PID/stat, and the threads'
//!   schedstat in µs, which is finer than the 10 ms tick).
//!
//! `scripts/measure-idle` installs the npm peers and runs it:
//! `measure_idle --workbench BIN --npm NODE_MODULES [--idle-ms N]`.

// A test tool, and a crate of its own: it spawns processes and writes stdout
// as it likes (clippy.toml), and `pub` in it means crate-wide.
#![allow(unreachable_pub, clippy::disallowed_methods, clippy::print_stdout)]
// Test tools: a failure is a panic with its reason, not an answer to handle.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use std::collections::HashMap;
use std::fs;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

struct Session {
    child: Child,
    stdin: ChildStdin,
    out: BufReader<ChildStdout>,
    next_id: u64,
}

impl Session {
    fn request(&mut self, method: &str, params: Value) -> io::Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{line}")?;
        self.stdin.flush()?;
        loop {
            let mut text = String::new();
            if self.out.read_line(&mut text)? == 0 {
                return Err(io::Error::other("the workbench closed stdout"));
            }
            let reply: Value = serde_json::from_str(&text).map_err(io::Error::other)?;
            if reply["id"] == json!(id) {
                return Ok(reply);
            }
        }
    }

    fn tool(&mut self, name: &str, arguments: Value) -> io::Result<Value> {
        let reply = self.request("tools/call", json!({"name": name, "arguments": arguments}))?;
        if reply["result"]["isError"] == json!(true) || reply.get("error").is_some() {
            return Err(io::Error::other(format!("{name} failed: {reply}")));
        }
        Ok(reply)
    }
}

/// The toolboxes: (toolbox, server, a tool to call and its arguments).
fn calls(files: &Path) -> [(&'static str, &'static str, &'static str, Value); 3] {
    [
        ("everything", "everything", "echo", json!({"message": "hi"})),
        ("memory", "memory", "read_graph", json!({})),
        (
            "filesystem",
            "filesystem",
            "list_directory",
            json!({"path": files.display().to_string()}),
        ),
    ]
}

fn config(npm: &Path, work: &Path, idle_ms: u64) -> Value {
    let node = |package: &str, extra: &[String]| {
        let script = npm
            .join("@modelcontextprotocol")
            .join(package)
            .join("dist/index.js");
        let mut args = vec![script.display().to_string()];
        args.extend_from_slice(extra);
        json!({"command": "node", "args": args, "startupTimeoutMs": 60000})
    };
    let mut memory = node("server-memory", &[]);
    memory["env"] = json!({"MEMORY_FILE_PATH": work.join("memory.jsonl").display().to_string()});
    let files = work.join("files").display().to_string();
    json!({"idleTimeoutMs": idle_ms, "toolboxes": {
        "everything": {"description": "server-everything", "mcpServers": {
            "everything": node("server-everything", &["stdio".to_string()])}},
        "memory": {"description": "server-memory", "mcpServers": {"memory": memory}},
        "filesystem": {"description": "server-filesystem", "mcpServers": {
            "filesystem": node("server-filesystem", &[files])}}}})
}

/// `root` and all its descendants.
fn tree(root: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for entry in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Some(ppid) = stat_field(pid, 4) {
            children.entry(ppid as u32).or_default().push(pid);
        }
    }
    let mut all = vec![root];
    let mut i = 0;
    while i < all.len() {
        all.extend(children.get(&all[i]).into_iter().flatten());
        i += 1;
    }
    all
}

/// Field `i` of /proc/PID/stat as numbered in proc(5).
fn stat_field(pid: u32, i: usize) -> Option<u64> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = text.rsplit_once(')')?.1;
    rest.split_whitespace().nth(i - 3)?.parse().ok()
}

fn rss_kb(pid: u32) -> u64 {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The tree's RSS in MB, and how many processes it has.
fn tree_rss(root: u32) -> (f64, usize) {
    let pids = tree(root);
    let kb: u64 = pids.iter().map(|&p| rss_kb(p)).sum();
    (kb as f64 * 1024.0 / 1e6, pids.len())
}

/// CPU of `pid`: utime + stime in ms (10 ms ticks), and its threads'
/// schedstat in µs.
fn cpu(pid: u32) -> (f64, f64) {
    let tick_ms = 1000.0 / 100.0; // USER_HZ is 100 on Linux
    let ticks = stat_field(pid, 14).unwrap_or(0) + stat_field(pid, 15).unwrap_or(0);
    let mut ns = 0.0;
    for task in fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let text = fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
        ns += text
            .split(' ')
            .next()
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0);
    }
    (ticks as f64 * tick_ms, ns / 1e3)
}

/// Waits up to `limit` for the tree under `root` to have `n` processes.
fn wait_tree(root: u32, n: usize, limit: Duration) -> io::Result<Duration> {
    let began = Instant::now();
    while tree(root).len() != n {
        if began.elapsed() > limit {
            return Err(io::Error::other(format!(
                "the tree did not shrink to {n} processes"
            )));
        }
        thread::sleep(Duration::from_millis(50));
    }
    Ok(began.elapsed())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() -> io::Result<()> {
    let mut args = std::env::args().skip(1);
    let (mut workbench, mut npm, mut idle_ms) = (None, None, 2000);
    while let Some(arg) = args.next() {
        let value = args
            .next()
            .ok_or_else(|| io::Error::other(format!("{arg} needs a value")))?;
        match arg.as_str() {
            "--workbench" => workbench = Some(PathBuf::from(value)),
            "--npm" => npm = Some(PathBuf::from(value)),
            "--idle-ms" => idle_ms = value.parse().map_err(io::Error::other)?,
            other => return Err(io::Error::other(format!("unknown argument {other}"))),
        }
    }
    let usage =
        || io::Error::other("usage: measure_idle --workbench BIN --npm NODE_MODULES [--idle-ms N]");
    let (workbench, npm) = (workbench.ok_or_else(usage)?, npm.ok_or_else(usage)?);
    let work = std::env::temp_dir().join(format!("measure-idle-{}", std::process::id()));
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(work.join("files"))?;
    fs::write(work.join("files/hello.txt"), "hello\n")?;
    fs::write(
        work.join("config.json"),
        config(&npm, &work, idle_ms).to_string(),
    )?;
    let log = fs::File::create(work.join("workbench.log"))?;
    let mut child = Command::new(&workbench)
        .args(["--config", "config.json"])
        .current_dir(&work)
        .env("RUST_LOG", "info")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()?;
    let (stdin, stdout) = (
        child.stdin.take().expect("piped"),
        child.stdout.take().expect("piped"),
    );
    let pid = child.id();
    let mut s = Session {
        child,
        stdin,
        out: BufReader::new(stdout),
        next_id: 0,
    };
    s.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "measure-idle", "version": "0"}}),
    )?;
    writeln!(
        s.stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )?;
    thread::sleep(Duration::from_millis(200));
    let (bare_rss, bare) = tree_rss(pid); // the workbench and its watchdog
    let calls = calls(&work.join("files"));

    for (toolbox, ..) in &calls {
        s.tool("open_toolbox", json!({"toolbox_name": toolbox}))?;
    }
    for _ in 0..5 {
        for (toolbox, server, tool, arguments) in &calls {
            let id = json!({"toolbox": toolbox, "server": server, "tool": tool});
            s.tool("use_tool", json!({"tool": id, "arguments": arguments}))?;
        }
    }
    let (in_use, in_use_n) = tree_rss(pid);
    let slept_after = wait_tree(pid, bare, Duration::from_secs(120))?;
    thread::sleep(Duration::from_millis(200));
    let (asleep, asleep_n) = tree_rss(pid);

    // Idle CPU, every server asleep, the config watch polling.
    let (ticks0, us0) = cpu(pid);
    thread::sleep(Duration::from_secs(10));
    let (ticks1, us1) = cpu(pid);

    // The first call after a wake, 10 times per server.
    let mut wake: Vec<Vec<f64>> = vec![Vec::new(); calls.len()];
    for _ in 0..10 {
        wait_tree(pid, bare, Duration::from_secs(120))?;
        for (i, (toolbox, server, tool, arguments)) in calls.iter().enumerate() {
            let id = json!({"toolbox": toolbox, "server": server, "tool": tool});
            let began = Instant::now();
            s.tool("use_tool", json!({"tool": id, "arguments": arguments}))?;
            wake[i].push(ms(began.elapsed()));
        }
    }
    // An awake call, for comparison.
    let (toolbox, server, tool, arguments) = &calls[0];
    let id = json!({"toolbox": toolbox, "server": server, "tool": tool});
    let began = Instant::now();
    s.tool("use_tool", json!({"tool": id, "arguments": arguments}))?;
    let awake_ms = ms(began.elapsed());

    drop(s.stdin);
    s.child.wait()?;
    let _ = fs::remove_dir_all(&work);

    println!("idleTimeoutMs {idle_ms}; node {}", node_version());
    println!("RSS, workbench + watchdog, before any open: {bare_rss:.1} MB ({bare} processes)");
    println!("RSS, workbench + children, 3 toolboxes open and in use: {in_use:.1} MB ({in_use_n} processes)");
    println!(
        "RSS, workbench + children, after the idle timeout: {asleep:.1} MB ({asleep_n} processes; \
         all asleep {:.0} ms after the last call)",
        ms(slept_after)
    );
    println!(
        "idle CPU of the workbench over 10 s, all asleep, config watch on: {:.0} ms (utime+stime), \
         {:.0} µs (schedstat)",
        ticks1 - ticks0,
        us1 - us0
    );
    for ((toolbox, ..), times) in calls.iter().zip(&mut wake) {
        times.sort_by(f64::total_cmp);
        println!(
            "first call after a wake, {toolbox}: p50 {:.0} ms (min {:.0}, max {:.0}, n {})",
            (times[4] + times[5]) / 2.0,
            times[0],
            times[times.len() - 1],
            times.len()
        );
    }
    println!("a call to an awake server (everything echo): {awake_ms:.1} ms");
    Ok(())
}

fn node_version() -> String {
    Command::new("node")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}
