//! `bench serve [--spin N] [--tools N] [--page N] [--init-delay-ms N]`: the
//! benchmark's own downstream MCP server, used both behind the workbench and
//! directly by the driver, so the two paths differ only by the workbench.
//!
//! Tools: `echo` (answers `ok`), `blob` (answers a text of `arguments.bytes`
//! bytes), then `t2`, `t3`, ... up to `--tools` tools in all (default 2).
//! Every call first runs `--spin` iterations of a fixed loop: a fixed amount of
//! CPU work (`calibrate` finds how many make 50 µs). `tools/list` pages hold
//! `--page` tools. `initialize` is answered after `--init-delay-ms`.
//! Every answer is flushed at once, as real servers do.

use serde_json::Value;
use std::hint::black_box;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::thread;
use std::time::{Duration, Instant};

struct Opts {
    spin: u64,
    tools: usize,
    page: usize,
    init_delay: Duration,
}

pub fn run(args: &[String]) -> io::Result<()> {
    let mut opts = Opts {
        spin: 0,
        tools: 2,
        page: usize::MAX,
        init_delay: Duration::ZERO,
    };
    for pair in args.chunks(2) {
        let bad = || io::Error::other(format!("serve: bad option {pair:?}"));
        let value: u64 = pair.get(1).and_then(|v| v.parse().ok()).ok_or_else(bad)?;
        match pair[0].as_str() {
            "--spin" => opts.spin = value,
            "--tools" => opts.tools = value as usize,
            "--page" => opts.page = value.max(1) as usize,
            "--init-delay-ms" => opts.init_delay = Duration::from_millis(value),
            _ => return Err(bad()),
        }
    }
    let tools: Vec<String> = (0..opts.tools).map(definition).collect();
    let mut input = BufReader::with_capacity(1 << 16, io::stdin());
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return out.flush();
        }
        if let Ok(msg) = serde_json::from_slice::<Value>(&line) {
            answer(&opts, &tools, &msg, &mut out)?;
            out.flush()?;
        }
    }
}

pub fn definition(i: usize) -> String {
    let name = match i {
        0 => "echo".to_string(),
        1 => "blob".to_string(),
        _ => format!("t{i}"),
    };
    format!(
        r#"{{"name":"{name}","description":"Benchmark tool {i}: answers ok, or a text of arguments.bytes bytes","inputSchema":{{"type":"object","properties":{{"bytes":{{"type":"integer","description":"size of the text to answer"}}}}}}}}"#
    )
}

fn answer(opts: &Opts, tools: &[String], msg: &Value, out: &mut impl Write) -> io::Result<()> {
    let Some(id) = msg.get("id") else {
        return Ok(()); // a notification
    };
    let params = &msg["params"];
    let result = match msg["method"].as_str().unwrap_or("") {
        "initialize" => {
            thread::sleep(opts.init_delay);
            let version = params["protocolVersion"].as_str().unwrap_or("2025-06-18");
            format!(
                r#"{{"protocolVersion":"{version}","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"bench","version":"0"}}}}"#
            )
        }
        "ping" => "{}".to_string(),
        "tools/list" => {
            let start: usize = params["cursor"]
                .as_str()
                .and_then(|c| c.parse().ok())
                .unwrap_or(0);
            let end = start.saturating_add(opts.page).min(tools.len());
            let page = tools.get(start..end).unwrap_or_default().join(",");
            if end < tools.len() {
                format!(r#"{{"tools":[{page}],"nextCursor":"{end}"}}"#)
            } else {
                format!(r#"{{"tools":[{page}]}}"#)
            }
        }
        "tools/call" => {
            black_box(spin(opts.spin));
            match params["arguments"]["bytes"].as_u64() {
                Some(n) => {
                    let text = "x".repeat(n as usize);
                    format!(r#"{{"content":[{{"type":"text","text":"{text}"}}]}}"#)
                }
                None => r#"{"content":[{"type":"text","text":"ok"}]}"#.to_string(),
            }
        }
        other => {
            let error = format!(r#"{{"code":-32601,"message":"Method not found: {other}"}}"#);
            return writeln!(out, r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#);
        }
    };
    writeln!(out, r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
}

/// The answer to `msg` with no work and no delay (`serve-http` spins by
/// itself), for tools defined by `tools`; nothing for a notification.
pub fn answer_one(tools: &[String], msg: &Value, out: &mut impl Write) -> io::Result<()> {
    let opts = Opts {
        spin: 0,
        tools: tools.len(),
        page: usize::MAX,
        init_delay: Duration::ZERO,
    };
    answer(&opts, tools, msg, out)
}

/// A fixed amount of CPU work: `iterations` rounds of a dependent multiply-add.
pub fn spin(iterations: u64) -> u64 {
    let mut x = 1u64;
    for i in 0..iterations {
        x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
    }
    x
}

/// Iterations of `spin` that take `micros` µs of CPU on this machine (the
/// fastest of several timings, so time stolen by other work does not count).
pub fn calibrate(micros: f64) -> u64 {
    const N: u64 = 2_000_000;
    let best = (0..7)
        .map(|_| {
            let began = Instant::now();
            black_box(spin(N));
            began.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    (N as f64 * micros * 1e-6 / best).round() as u64
}
