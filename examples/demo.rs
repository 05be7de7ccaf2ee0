//! The demo: plays an MCP host against the workbench on the bundled example
//! config and prints what happens in readable form: what the host's
//! `tools/list` costs with the workbench and with every server listed
//! directly, then toolboxes opened, tools used (the same server answering
//! from two toolboxes with their own environments) and a toolbox closed.
//!
//! ```text
//! cargo run --release --features test-fake --example demo
//! ```
//!
//! Run it from the repository's root. It starts the `mcp-workbench` next to
//! its own folder (`$MCP_WORKBENCH` overrides that) with
//! `--config testdata/example/workbench-config.json` (or the config given as
//! its argument). Token counts are `mcp-workbench check`'s, by the same
//! function (`mcp_workbench::tools::cost`).

// A test tool, and a crate of its own: it spawns processes and writes stdout
// as it likes (clippy.toml), and `pub` in it means crate-wide.
#![allow(unreachable_pub, clippy::disallowed_methods, clippy::print_stdout)]
// Test tools: a failure is a panic with its reason, not an answer to handle.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitCode, Stdio};

struct Host {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Host {
    /// Sends one request and returns its `result` (or its `error`).
    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{line}").map_err(|e| format!("cannot write: {e}"))?;
        loop {
            let mut text = String::new();
            match self.stdout.read_line(&mut text) {
                Ok(0) => return Err("the workbench closed its stdout".into()),
                Ok(_) => {}
                Err(e) => return Err(format!("cannot read: {e}")),
            }
            let message: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
            if message["id"] == id {
                return Ok(message
                    .get("result")
                    .or(message.get("error"))
                    .cloned()
                    .unwrap_or(Value::Null));
            }
        }
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Result<(String, bool), String> {
        let result = self.request("tools/call", json!({"name": tool, "arguments": arguments}))?;
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string();
        Ok((text, result["isError"] == true))
    }
}

/// What tool definitions `values` cost a model's context, as `check` counts it.
fn tokens(values: &[Value]) -> usize {
    mcp_workbench::tools::cost::tools_tokens(values)
}

fn run() -> Result<(), String> {
    let workbench = match std::env::var_os("MCP_WORKBENCH") {
        Some(path) => path.into(),
        None => {
            let exe = std::env::current_exe().map_err(|e| e.to_string())?;
            let dir = exe.parent().and_then(|d| d.parent()).ok_or("no folder")?;
            dir.join("mcp-workbench")
        }
    };
    let config = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "testdata/example/workbench-config.json".into());
    let mut child = Command::new(&workbench)
        .args(["--config", &config])
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", workbench.display()))?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("no pipes".into());
    };
    let mut host = Host {
        child,
        stdin,
        stdout: BufReader::new(stdout),
        next_id: 0,
    };

    let init = host.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "demo-host", "version": "1"}}),
    )?;
    println!(
        "host -> initialize\n         {} {}, protocol {}",
        init["serverInfo"]["name"].as_str().unwrap_or("?"),
        init["serverInfo"]["version"].as_str().unwrap_or("?"),
        init["protocolVersion"].as_str().unwrap_or("?")
    );
    let list = host.request("tools/list", json!({}))?;
    let meta = list["tools"].as_array().cloned().unwrap_or_default();
    let names: Vec<&str> = meta.iter().filter_map(|t| t["name"].as_str()).collect();
    println!(
        "host -> tools/list\n         {} tools: {} (~{} tokens in every request)",
        meta.len(),
        names.join(", "),
        tokens(&meta)
    );

    // Every toolbox, opened once: what listing every server directly would cost.
    let toolboxes: Vec<String> = meta
        .iter()
        .find(|t| t["name"] == "open_toolbox")
        .and_then(|t| t["inputSchema"]["properties"]["toolbox_name"]["enum"].as_array())
        .map(|e| {
            e.iter()
                .filter_map(|n| n.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let mut direct = Vec::new();
    for toolbox in &toolboxes {
        let (text, is_error) = host.call("open_toolbox", json!({"toolbox_name": toolbox}))?;
        if is_error {
            println!("host -> open_toolbox {toolbox}\n         error: {text}");
            continue;
        }
        let opened: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        let tools = opened["tools"].as_array().cloned().unwrap_or_default();
        let listed: Vec<String> = tools
            .iter()
            .map(|t| {
                let (server, name) = (&t["source_server"], &t["name"]);
                format!(
                    "{}/{}",
                    server.as_str().unwrap_or("?"),
                    name.as_str().unwrap_or("?")
                )
            })
            .collect();
        println!(
            "host -> open_toolbox {toolbox}\n         {} tool{} (~{} tokens, paid only now): {}",
            tools.len(),
            if tools.len() == 1 { "" } else { "s" },
            tokens(&tools),
            listed.join(", ")
        );
        direct.extend(tools);
    }
    println!(
        "\n         with every server listed directly, tools/list would hold {} tools \
         (~{} tokens) in every request\n",
        direct.len(),
        tokens(&direct)
    );

    for toolbox in ["dev", "prod"] {
        let id = json!({"toolbox": toolbox, "server": "demo", "tool": "whoami"});
        let (text, _) = host.call("use_tool", json!({"tool": id}))?;
        println!("host -> use_tool {toolbox}/demo/whoami\n         {text}");
    }
    let id = json!({"toolbox": "tickets", "server": "tracker", "tool": "get_ticket"});
    let (text, _) = host.call(
        "use_tool",
        json!({"tool": id, "arguments": {"ticket": "OPS-142"}}),
    )?;
    println!(
        "host -> use_tool tickets/tracker/get_ticket {{\"ticket\":\"OPS-142\"}}\n         {text}"
    );
    let (text, _) = host.call("close_toolbox", json!({"toolbox_name": "dev"}))?;
    println!("host -> close_toolbox dev\n         {text}");
    let id = json!({"toolbox": "dev", "server": "demo", "tool": "whoami"});
    let (text, _) = host.call("use_tool", json!({"tool": id}))?;
    println!("host -> use_tool dev/demo/whoami\n         {text}");

    drop(host.stdin);
    let status = host.child.wait().map_err(|e| e.to_string())?;
    println!("host closes stdin: every server is stopped; the workbench exits ({status})");
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("demo: {e}");
            ExitCode::from(1)
        }
    }
}
