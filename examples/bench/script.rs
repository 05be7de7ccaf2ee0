//! The `call` rows (docs/reference.md §13): what one `mcp-workbench call`
//! adds to the tool's own time through a running shared fleet whose server
//! is up, process start included, and how long `call --batch` of 100 calls
//! to that fast tool takes. The tool's own time is the same `bench serve`
//! server's round trip spoken to directly by the driver, measured in the
//! same rounds.

use crate::session::{call_line, call_tail, is_ok};
use crate::{le, Ctx, INHERIT};
use serde_json::{json, Value};
use std::io::{self, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// One `mcp-workbench call` (or `call --batch` with `input`): its wall time
/// in ms; an error unless it exits 0.
fn run_call(workbench: &Path, config: &Path, args: &[&str], input: &[u8]) -> io::Result<f64> {
    let began = Instant::now();
    let mut child = Command::new(workbench)
        .arg("call")
        .args(args)
        .arg("--config")
        .arg(config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    child
        .stdin
        .take()
        .ok_or(io::ErrorKind::BrokenPipe)?
        .write_all(input)?;
    let out = child.wait_with_output()?;
    let ms = began.elapsed().as_secs_f64() * 1e3;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "call {args:?} failed: {:?}",
            out.status
        )));
    }
    Ok(ms)
}

pub fn script_calls(ctx: &mut Ctx) -> io::Result<()> {
    ctx.place = INHERIT;
    let path = ctx.config("one-script", false, (1, 1), &[])?;
    let mut config: Value = serde_json::from_slice(&std::fs::read(&path)?)?;
    config["shareServers"] = json!(true);
    config["shareLingerMs"] = json!(2000);
    std::fs::write(&path, config.to_string())?;
    // A host session keeps the fleet and its server up.
    let mut session = ctx.workbench(&path)?;
    session.open(&["tb0".to_string()])?;
    let mut direct = ctx.serve(&[])?;
    let tail = call_tail("echo", &json!({"x": 1}));
    let arguments = r#"{"x": 1}"#;
    // The first call warms the catalog's file and the fleet's session path.
    run_call(&ctx.workbench, &path, &["tb0/s0/echo", arguments], b"")?;
    let rounds = if ctx.quick { 10 } else { 40 };
    let mut added = Vec::new();
    for _ in 0..rounds {
        let began = Instant::now();
        let id = direct.next_id();
        direct.send(&call_line(id, &tail))?;
        let reply = direct.recv()?;
        if !is_ok(reply) {
            return Err(io::Error::other("the direct call failed"));
        }
        let own = began.elapsed().as_secs_f64() * 1e3;
        let call = run_call(&ctx.workbench, &path, &["tb0/s0/echo", arguments], b"")?;
        added.push(call - own);
    }
    ctx.check(
        9,
        "call through a running fleet: added time",
        "ms",
        &added,
        le(15.0),
    );
    let batch: Vec<u8> = (0..100)
        .map(|i| format!("{{\"tool\":\"tb0/s0/echo\",\"arguments\":{{\"x\":{i}}}}}\n"))
        .collect::<String>()
        .into_bytes();
    let mut batches = Vec::new();
    for _ in 0..if ctx.quick { 3 } else { 10 } {
        batches.push(run_call(&ctx.workbench, &path, &["--batch"], &batch)?);
    }
    ctx.check(
        10,
        "call --batch of 100 fast calls",
        "ms",
        &batches,
        le(1000.0),
    );
    direct.close()?;
    session.close()
}
