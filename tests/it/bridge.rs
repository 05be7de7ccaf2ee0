//! The era bridge (docs/reference.md §7): what the workbench sends a server
//! that refuses `initialize`, read back byte for byte from the fake's
//! `receivedTo` file; the era kept per server definition across restarts;
//! `check` naming each server's era. The host-side view is the transcript
//! `downstream-modern-era`; a real modern-only server (the TypeScript SDK v2)
//! is in the interop suite (`scripts/interop`).

use crate::harness::{check_output, fake, is_error, text, tool, toolbox, Workbench};
use serde_json::{json, Value};
use std::fs;
use std::path::Path;

/// The lines a fake received, parsed.
fn received(dir: &Path, file: &str) -> Vec<Value> {
    fs::read_to_string(dir.join(file))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The raw lines a fake received whose method is `method`.
fn raw_lines(dir: &Path, file: &str, method: &str) -> Vec<String> {
    let needle = format!("\"method\":\"{method}\"");
    fs::read_to_string(dir.join(file))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(&needle))
        .map(str::to_owned)
        .collect()
}

fn methods(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .map(|l| l["method"].as_str().unwrap_or("?").to_owned())
        .collect()
}

/// The `_meta` a modern request carries, as the workbench writes it.
fn era_meta() -> String {
    format!(
        r#""io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{{"name":"mcp-workbench","version":"{}"}},"io.modelcontextprotocol/protocolVersion":"2026-07-28""#,
        env!("CARGO_PKG_VERSION")
    )
}

#[test]
fn a_modern_only_server_gets_the_eras_meta_and_a_restart_skips_initialize() {
    let modern = json!({
        "legacyVersions": [], "modernVersions": ["2026-07-28"],
        "receivedTo": "modern.log", "startup": {"appendPidTo": "modern.pids"},
        "tools": [tool("meta", json!({"meta": true})), tool("crash", json!({"exit": 3}))]});
    let legacy = json!({"receivedTo": "legacy.log", "tools": [tool("echo", json!({}))]});
    let config = json!({"toolboxes": {"box": toolbox(json!({
        "legacy": fake("legacy.json"), "modern": fake("modern.json")}))}});
    let mut wb = Workbench::start(
        "bridge-meta",
        config,
        &[("modern.json", modern), ("legacy.json", legacy)],
        &[],
    );
    wb.open_ok(1, "box");
    // The opening: initialize refused, then server/discover and tools/list in the modern era.
    let dir = wb.dir.clone();
    let meta = era_meta();
    assert_eq!(
        methods(&received(&dir, "modern.log")),
        ["initialize", "server/discover", "tools/list"]
    );
    assert_eq!(
        raw_lines(&dir, "modern.log", "server/discover"),
        [format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{{"_meta":{{{meta}}}}}}}"#
        )]
    );
    assert_eq!(
        raw_lines(&dir, "modern.log", "tools/list"),
        [format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{{"_meta":{{{meta}}}}}}}"#
        )]
    );
    // A call: the host's _meta keys stay, its progress token becomes the
    // workbench's own (the call's id), the era's keys are added.
    wb.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "use_tool",
        "arguments": {"tool": {"toolbox": "box", "server": "modern", "tool": "meta"}, "arguments": {"a": 1}},
        "_meta": {"progressToken": "p", "traceparent": "00-abc-01"}}}));
    let answer = wb.answer(2, &mut Vec::new());
    let sent: Value = serde_json::from_str(text(&answer)).unwrap();
    assert_eq!(sent["progressToken"], json!(4), "{answer}");
    assert_eq!(sent["traceparent"], "00-abc-01");
    assert_eq!(
        sent["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        sent["io.modelcontextprotocol/clientCapabilities"],
        json!({})
    );
    assert_eq!(
        sent["io.modelcontextprotocol/clientInfo"]["name"],
        "mcp-workbench"
    );
    assert_eq!(
        answer["result"]["resultType"], "complete",
        "passed unchanged"
    );
    // The legacy server of the same toolbox: its call carries no _meta at all.
    wb.use_tool(3, "box", "legacy", "echo", json!({"b": 2}));
    let answer = wb.answer(3, &mut Vec::new());
    assert_eq!(text(&answer), r#"echo {"b":2}"#);
    assert_eq!(
        raw_lines(&dir, "legacy.log", "tools/call"),
        [
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"b":2}}}"#
        ]
    );
    // The modern server crashes; the next call restarts it, in the era kept
    // for its definition: no initialize this time.
    wb.use_tool(4, "box", "modern", "crash", json!({}));
    assert!(is_error(&wb.answer(4, &mut Vec::new())));
    wb.use_tool(5, "box", "modern", "meta", json!({}));
    let answer = wb.answer(5, &mut Vec::new());
    assert!(!is_error(&answer), "{answer}");
    assert_eq!(
        fs::read_to_string(dir.join("modern.pids"))
            .unwrap()
            .lines()
            .count(),
        2
    );
    assert_eq!(
        methods(&received(&dir, "modern.log")),
        [
            "initialize",
            "server/discover",
            "tools/list",
            "tools/call",
            "tools/call",
            "server/discover",
            "tools/list",
            "tools/call"
        ]
    );
    wb.finish_clean(std::time::Duration::from_secs(20));
}

#[test]
fn an_older_legacy_version_is_retried_once_and_kept() {
    let older = json!({
        "legacyVersions": ["2025-03-26"], "receivedTo": "older.log",
        "tools": [tool("echo", json!({})), tool("crash", json!({"exit": 3}))]});
    let counter = json!({
        "protocolVersion": "2024-11-05", "receivedTo": "counter.log",
        "tools": [tool("echo", json!({})), tool("crash", json!({"exit": 3}))]});
    let config = json!({"toolboxes": {"box": toolbox(json!({
        "older": fake("older.json"), "counter": fake("counter.json")}))}});
    let mut wb = Workbench::start(
        "bridge-retry",
        config,
        &[("older.json", older), ("counter.json", counter)],
        &[],
    );
    wb.open_ok(1, "box");
    wb.use_tool(2, "box", "older", "crash", json!({}));
    assert!(is_error(&wb.answer(2, &mut Vec::new())));
    wb.use_tool(3, "box", "older", "echo", json!({}));
    let answer = wb.answer(3, &mut Vec::new());
    assert_eq!(text(&answer), "echo {}", "{answer}");
    let dir = wb.dir.clone();
    let offered: Vec<Value> = received(&dir, "older.log")
        .iter()
        .filter(|l| l["method"] == "initialize")
        .map(|l| l["params"]["protocolVersion"].clone())
        .collect();
    // The first start: 2025-11-25 refused, 2025-03-26 accepted; the restart
    // offers 2025-03-26 at once. Its calls carry no modern _meta.
    assert_eq!(offered, ["2025-11-25", "2025-03-26", "2025-03-26"]);
    assert!(raw_lines(&dir, "older.log", "tools/call")
        .iter()
        .all(|l| !l.contains("_meta")));
    // A counter-offer is no refusal: a restart offers 2025-11-25 again.
    wb.use_tool(4, "box", "counter", "crash", json!({}));
    assert!(is_error(&wb.answer(4, &mut Vec::new())));
    wb.use_tool(5, "box", "counter", "echo", json!({}));
    assert_eq!(text(&wb.answer(5, &mut Vec::new())), "echo {}");
    let offered: Vec<Value> = received(&dir, "counter.log")
        .iter()
        .filter(|l| l["method"] == "initialize")
        .map(|l| l["params"]["protocolVersion"].clone())
        .collect();
    assert_eq!(offered, ["2025-11-25", "2025-11-25"]);
    wb.finish_clean(std::time::Duration::from_secs(20));
}

#[test]
fn a_refusal_without_a_version_in_common_names_the_servers_versions() {
    // It refuses initialize naming only 2099-01-01: no retry, no modern era.
    let stubborn = json!({"legacyVersions": [], "modernVersions": ["2099-01-01"],
        "tools": [tool("echo", json!({}))]});
    let config = json!({"toolboxes": {"box": toolbox(json!({"alien": fake("alien.json")}))}});
    let mut wb = Workbench::start("bridge-alien", config, &[("alien.json", stubborn)], &[]);
    let answer = wb.open(1, "box", &mut Vec::new());
    assert!(is_error(&answer), "{answer}");
    assert!(
        text(&answer).contains(
            "refused every protocol version the workbench speaks: the server supports 2099-01-01; \
             the workbench speaks 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28"
        ),
        "{answer}"
    );
    wb.finish_clean(std::time::Duration::from_secs(20));
}

#[test]
fn check_shows_each_servers_era() {
    let dir = crate::harness::scratch("bridge-check");
    let modern = json!({"legacyVersions": [], "modernVersions": ["2026-07-28"], "tools": [tool("a", json!({}))]});
    let legacy = json!({"protocolVersion": "2025-06-18", "tools": [tool("b", json!({}))]});
    let alien = json!({"legacyVersions": ["2024-10-07"], "tools": []});
    fs::write(dir.join("modern.json"), modern.to_string()).unwrap();
    fs::write(dir.join("legacy.json"), legacy.to_string()).unwrap();
    fs::write(dir.join("alien.json"), alien.to_string()).unwrap();
    let config = json!({"toolboxes": {"box": toolbox(json!({
        "alien": fake("alien.json"), "legacy": fake("legacy.json"), "modern": fake("modern.json")}))}});
    fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let (code, out) = check_output(&dir, true);
    assert_eq!(code, Some(1), "{out}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let servers = &report["toolboxes"][0]["servers"];
    assert_eq!(servers[0]["status"], "failed");
    assert_eq!(
        servers[0]["reason"],
        "refused every protocol version the workbench speaks: the server supports 2024-10-07; \
         the workbench speaks 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28"
    );
    assert_eq!(servers[0].get("era"), None);
    assert_eq!(servers[1]["era"], "legacy");
    assert_eq!(servers[1]["protocol_version"], "2025-06-18");
    assert_eq!(servers[2]["era"], "modern");
    assert_eq!(servers[2]["protocol_version"], "2026-07-28");
    assert_eq!(servers[2]["tools"], 1);
    let (_, text) = check_output(&dir, false);
    let row = |name: &str| {
        text.lines()
            .find(|l| l.split_whitespace().nth(1) == Some(name))
            .unwrap_or_default()
            .split_whitespace()
            .take(5)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        row("modern"),
        ["box", "modern", "ok", "modern", "2026-07-28"],
        "{text}"
    );
    assert_eq!(
        row("legacy"),
        ["box", "legacy", "ok", "legacy", "2025-06-18"],
        "{text}"
    );
    assert!(
        text.contains("box/alien: refused every protocol version"),
        "{text}"
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_modern_result_is_cut_by_max_result_chars_like_any_other() {
    let modern = json!({"legacyVersions": [], "modernVersions": ["2026-07-28"],
        "tools": [tool("long", json!({"textBytes": 5000})), tool("short", json!({"textBytes": 10}))]});
    let mut server = fake("modern.json");
    server["maxResultChars"] = json!(1000);
    let config = json!({"toolboxes": {"box": toolbox(json!({"modern": server}))}});
    // The folder `start` makes again for the session: its cache takes the cut's file.
    let dir = crate::harness::scratch("bridge-cap");
    let cache = dir.join("cache").to_string_lossy().into_owned();
    let home = dir.join("home").to_string_lossy().into_owned();
    let env = [("XDG_CACHE_HOME", cache.as_str()), ("HOME", home.as_str())];
    let mut wb = Workbench::start("bridge-cap", config, &[("modern.json", modern)], &env);
    wb.open_ok(1, "box");
    wb.use_tool(2, "box", "modern", "long", json!({}));
    let answer = wb.answer(2, &mut Vec::new());
    let text = text(&answer);
    assert!(!is_error(&answer), "{answer}");
    assert!(
        text.len() < 2000 && text.contains("xxx"),
        "not cut: {} characters",
        text.len()
    );
    wb.use_tool(3, "box", "modern", "short", json!({}));
    let answer = wb.answer(3, &mut Vec::new());
    assert_eq!(answer["result"]["content"][0]["text"], "x".repeat(10));
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    wb.finish_clean(std::time::Duration::from_secs(20));
}
