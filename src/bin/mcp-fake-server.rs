//! `mcp-fake-server SCRIPT.json`: a scriptable fake downstream MCP server used
//! by the tests of mcp-workbench. It is a test tool, not part of the product.
//!
//! It speaks newline-delimited JSON-RPC 2.0 on stdin/stdout and behaves as the
//! JSON script says. Every key is optional; unknown keys are a script error.
//!
//! ```text
//! serverInfo, capabilities   raw JSON for the initialize result
//! instructions               string: the result's `instructions` (both eras)
//! protocolVersion            string; default: echo the client's
//! initialize                 "normal" | "ignore" | "exit" | {"error": {...}}
//! initializeDelayMs          sleep before answering initialize
//! startup                    {"stderr": [..], "stderrBytes": n, "stdoutBytes": n (noise),
//!                             "stdout": [..], "exit": code,
//!                             "appendPidTo": "file"} (appends the pid as a line: counts starts)
//!                            "heartbeatTo": "file", "heartbeatMs": n: from startup on,
//!                            a line appended every n ms (default 50) while the
//!                            process lives (a test sees whether it outlives a stop)
//! afterInitialized           lines written when notifications/initialized arrives
//! pageSize                   tools/list page size (nextCursor = index of next tool)
//! ignoreStdinEof             on stdin EOF sleep forever instead of exiting 0
//! ignoreSigterm              set SIGTERM to SIG_IGN
//! tools                      [{"tool": {..definition..}, "action": {..}}]
//! action keys, in order:     delayMs, stdout [..], stderr [..], exit code, then one
//!                            answer: reply {..} | error {..} | env [names] or "*" |
//!                            inbox true | textBytes n | noReply true | (none: echo) |
//!                            replyHex "7b..": the result's bytes in hex, written as
//!                            they are (they may be invalid UTF-8)
//!                            progress [..]: before the answer, one notifications/progress
//!                            per entry (its fields after the caller's progressToken),
//!                            each after progressIntervalMs
//!                            addTools [..]: tool definitions listed from now on
//!                            (they answer with the echo; send list_changed via stdout)
//!                            stallStdin true: stop reading stdin for good (no answer)
//!                            listChangedEveryMs n: from now on, a
//!                            notifications/tools/list_changed every n ms
//!                            meta true: the text is the call's `_meta` (compact JSON, or null)
//! inbox                      responses, notifications (not initialized) and requests
//!                            of unknown methods received
//! receivedTo                 "file": every request and notification received is
//!                            appended to it as one compact line
//! legacyVersions             [..]: `initialize` offering another version is refused
//!                            with {supported: legacyVersions + modernVersions, requested}
//!                            (code -32022 when modernVersions is set, else -32602);
//!                            [] refuses every `initialize`
//! modernVersions             [..]: serves MCP 2026-07-28 requests (whose `_meta` names a
//!                            protocolVersion): `server/discover`; a version not listed gets
//!                            -32022 {supported, requested}; a claim without
//!                            clientCapabilities gets -32602; results get resultType
//!                            (ttlMs, cacheScope for lists). With legacyVersions [], a
//!                            request without the claim gets -32602 too.
//! ```
//!
//! Lines in `stdout`/`afterInitialized` lists are written verbatim when they are
//! JSON strings, minified otherwise. Raw values (tool definitions, replies,
//! serverInfo, ...) keep the key order they have in the script. A bad script
//! makes the fake print an error and exit with code 2.

// A test tool, and a crate of its own: it spawns processes and writes stdout
// as it likes (clippy.toml), and `pub` in it means crate-wide.
#![allow(unreachable_pub, clippy::disallowed_methods, clippy::print_stdout)]
// Test tools: a failure is a panic with its reason, not an answer to handle.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_workbench::protocol::jsonrpc::compact;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::io::{self, BufRead, Write};
use std::process::exit;
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

type Raw = Box<RawValue>;

const DEFAULT_SERVER_INFO: &str = r#"{"name":"fake","version":"0.0.0"}"#;
const DEFAULT_CAPABILITIES: &str = r#"{"tools":{"listChanged":true}}"#;

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
struct Script {
    server_info: Option<Raw>,
    instructions: Option<String>,
    protocol_version: Option<String>,
    capabilities: Option<Raw>,
    initialize: Option<Raw>,
    initialize_delay_ms: u64,
    startup: Startup,
    after_initialized: Vec<Raw>,
    page_size: Option<usize>,
    ignore_stdin_eof: bool,
    ignore_sigterm: bool,
    tools: Vec<Tool>,
    received_to: Option<String>,
    legacy_versions: Option<Vec<String>>,
    modern_versions: Option<Vec<String>>,
}

impl Script {
    /// `,"instructions":...` when the script gives some, else nothing.
    fn instructions(&self) -> String {
        self.instructions
            .as_deref()
            .map(|text| format!(r#","instructions":{}"#, json_string(text)))
            .unwrap_or_default()
    }

    /// The `capabilities` and `serverInfo` the server declares (both eras).
    fn capabilities_and_info(&self) -> (String, String) {
        let caps = self
            .capabilities
            .as_deref()
            .map_or(DEFAULT_CAPABILITIES.into(), compact_raw);
        let info = self
            .server_info
            .as_deref()
            .map_or(DEFAULT_SERVER_INFO.into(), compact_raw);
        (caps, info)
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
struct Startup {
    stderr: Vec<String>,
    stderr_bytes: usize,
    stdout_bytes: usize,
    stdout: Vec<Raw>,
    exit: Option<i32>,
    append_pid_to: Option<String>,
    heartbeat_to: Option<String>,
    heartbeat_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Tool {
    tool: Raw,
    #[serde(default)]
    action: Action,
    /// The definition's "name" if it is a string (filled in by `load`);
    /// tools without one are listed but can never be called.
    #[serde(skip)]
    name: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
struct Action {
    delay_ms: u64,
    stdout: Vec<Raw>,
    stderr: Vec<String>,
    exit: Option<i32>,
    reply: Option<Raw>,
    error: Option<Raw>,
    env: Option<Value>,
    inbox: bool,
    text_bytes: Option<usize>,
    no_reply: bool,
    reply_hex: Option<String>,
    progress: Vec<Raw>,
    progress_interval_ms: u64,
    add_tools: Vec<Raw>,
    stall_stdin: bool,
    list_changed_every_ms: u64,
    meta: bool,
}

enum InitMode {
    Normal,
    Ignore,
    Exit,
    Error(String),
}

struct Fake {
    script: Script,
    init: InitMode,
    /// Responses received from the client (raw lines, minified).
    inbox: Mutex<Vec<String>>,
    /// Tool definitions added by `addTools` actions (minified), listed last.
    added: Mutex<Vec<String>>,
    /// An `initialize` was accepted (with `legacyVersions`).
    legacy_session: std::sync::atomic::AtomicBool,
}

/// How a request meets the modern era (`modernVersions`).
enum Gate {
    /// Served as a legacy request.
    Legacy,
    /// Served as a modern request.
    Modern,
    /// Answered with this error.
    Refuse(String),
}

fn compact_raw(raw: &RawValue) -> String {
    compact(raw.get())
}

/// A scripted output line: a JSON string is written verbatim, anything else minified.
fn raw_line(raw: &RawValue) -> String {
    serde_json::from_str::<String>(raw.get()).unwrap_or_else(|_| compact(raw.get()))
}

fn parse_init(raw: Option<&RawValue>) -> Result<InitMode, String> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct ErrorMode {
        error: Raw,
    }
    let Some(raw) = raw else {
        return Ok(InitMode::Normal);
    };
    match serde_json::from_str::<String>(raw.get()).as_deref() {
        Ok("normal") => Ok(InitMode::Normal),
        Ok("ignore") => Ok(InitMode::Ignore),
        Ok("exit") => Ok(InitMode::Exit),
        _ => serde_json::from_str::<ErrorMode>(raw.get())
            .map(|m| InitMode::Error(compact_raw(&m.error)))
            .map_err(|_| {
                r#""initialize" must be "normal", "ignore", "exit" or {"error": {...}}"#.into()
            }),
    }
}

fn check_action(a: &Action) -> Result<(), String> {
    match &a.env {
        None => {}
        Some(Value::String(s)) if s == "*" => {}
        Some(Value::Array(names)) if names.iter().all(Value::is_string) => {}
        Some(_) => return Err("\"env\" must be \"*\" or an array of names".into()),
    }
    let answers = [
        a.reply.is_some(),
        a.error.is_some(),
        a.env.is_some(),
        a.inbox,
        a.text_bytes.is_some(),
        a.no_reply,
        a.reply_hex.is_some(),
        a.meta,
    ];
    if answers.iter().filter(|&&x| x).count() > 1 {
        return Err(
            "more than one of reply/error/env/inbox/textBytes/noReply/replyHex/meta".into(),
        );
    }
    match a.reply_hex.as_deref().map(from_hex) {
        Some(None) => Err("\"replyHex\" must be pairs of hex digits".into()),
        _ => Ok(()),
    }
}

fn load(path: &str) -> Result<Fake, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut script: Script = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    if script.page_size == Some(0) {
        return Err("\"pageSize\" must be at least 1".into());
    }
    for (i, t) in script.tools.iter_mut().enumerate() {
        let def: Value = serde_json::from_str(t.tool.get()).map_err(|e| e.to_string())?;
        t.name = def.get("name").and_then(Value::as_str).map(str::to_owned);
        check_action(&t.action).map_err(|e| format!("tools[{i}].action: {e}"))?;
    }
    let init = parse_init(script.initialize.as_deref())?;
    let inbox = Mutex::default();
    Ok(Fake {
        script,
        init,
        inbox,
        added: Mutex::default(),
        legacy_session: Default::default(),
    })
}

/// Bytes from pairs of hex digits.
fn from_hex(hex: &str) -> Option<Vec<u8>> {
    let digits = hex.as_bytes();
    if !digits.len().is_multiple_of(2) {
        return None;
    }
    digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
        .collect()
}

/// Writes one line to stdout with a single write_all under the stdout lock.
fn send(line: String) {
    send_bytes(line.into_bytes());
}

/// `send` for a line that may not be UTF-8.
fn send_bytes(mut line: Vec<u8>) {
    line.push(b'\n');
    let mut out = io::stdout().lock();
    if let Err(e) = out.write_all(&line).and_then(|()| out.flush()) {
        eprintln!("fake: cannot write to stdout ({e}); exiting");
        exit(1);
    }
}

fn result_line(id: &str, result: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
}

fn error_line(id: &str, error: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#)
}

fn rpc_error(code: i64, message: &str) -> String {
    serde_json::json!({ "code": code, "message": message }).to_string()
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

fn text_result(text: &str) -> String {
    let text = json_string(text);
    format!(r#"{{"content":[{{"type":"text","text":{text}}}]}}"#)
}

fn sleep_ms(ms: u64) {
    if ms > 0 {
        thread::sleep(Duration::from_millis(ms));
    }
}

/// Writes exactly `left` bytes of noise lines to stderr.
fn flood_stderr(left: usize) {
    flood(io::stderr().lock(), left);
}

/// Writes `left` bytes of 64-byte noise lines (not JSON) to `out`.
fn flood(out: impl Write, mut left: usize) {
    const LINE: &[u8] = b"fake: noise flood .............................................\n";
    let mut err = io::BufWriter::with_capacity(1 << 16, out);
    while left > 0 {
        // The last n bytes of LINE, so that every piece ends with a newline.
        let n = left.min(LINE.len());
        if err.write_all(&LINE[LINE.len() - n..]).is_err() {
            return;
        }
        left -= n;
    }
    let _ = err.flush();
}

impl Fake {
    fn inbox(&self) -> MutexGuard<'_, Vec<String>> {
        self.inbox.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends a received line to `receivedTo`.
    fn record(&self, line: &str) {
        let Some(file) = &self.script.received_to else {
            return;
        };
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(file)
            .and_then(|mut f| writeln!(f, "{}", compact(line)));
        if let Err(e) = appended {
            eprintln!("fake: cannot append to {file}: {e}");
        }
    }

    /// Whether a request is served in the modern era (its `_meta` names a
    /// protocol version), in the legacy era, or refused.
    fn modern_gate(&self, method: &str, params: &str) -> Gate {
        const VERSION: &str = "io.modelcontextprotocol/protocolVersion";
        const CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
        let Some(modern) = &self.script.modern_versions else {
            return Gate::Legacy;
        };
        let params: Value = serde_json::from_str(params).unwrap_or(Value::Null);
        let meta = params.get("_meta");
        let Some(claim) = meta.and_then(|m| m.get(VERSION)) else {
            let modern_only = self
                .script
                .legacy_versions
                .as_ref()
                .is_some_and(Vec::is_empty);
            let legacy = self
                .legacy_session
                .load(std::sync::atomic::Ordering::SeqCst);
            if modern_only && !legacy && method != "initialize" && method != "ping" {
                return Gate::Refuse(rpc_error(
                    -32602,
                    "Request is missing the required _meta envelope",
                ));
            }
            return Gate::Legacy;
        };
        if !modern.iter().any(|v| claim == v.as_str()) {
            let error = serde_json::json!({"code": -32022, "message": "Unsupported protocol version",
                "data": {"supported": modern, "requested": claim}});
            return Gate::Refuse(error.to_string());
        }
        if meta.and_then(|m| m.get(CAPABILITIES)).is_none() {
            return Gate::Refuse(rpc_error(
                -32602,
                &format!("Request is missing {CAPABILITIES}"),
            ));
        }
        Gate::Modern
    }

    fn discover(&self, id: &str) {
        let s = &self.script;
        let (caps, info) = s.capabilities_and_info();
        let versions = serde_json::to_string(&s.modern_versions).unwrap_or_default();
        let instructions = s.instructions();
        send(result_line(
            id,
            &format!(
                r#"{{"supportedVersions":{versions},"capabilities":{caps}{instructions},"resultType":"complete","ttlMs":0,"cacheScope":"private","_meta":{{"io.modelcontextprotocol/serverInfo":{info}}}}}"#
            ),
        ));
    }

    fn run_startup(&self) {
        let s = &self.script.startup;
        if let Some(file) = &s.append_pid_to {
            let appended = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(file)
                .and_then(|mut f| writeln!(f, "{}", std::process::id()));
            if let Err(e) = appended {
                eprintln!("fake: cannot append to {file}: {e}");
                exit(2);
            }
        }
        if let Some(file) = s.heartbeat_to.clone() {
            let every = Duration::from_millis(s.heartbeat_ms.unwrap_or(50));
            thread::spawn(move || loop {
                let beat = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&file)
                    .and_then(|mut f| writeln!(f, "{}", std::process::id()));
                if let Err(e) = beat {
                    eprintln!("fake: cannot append to {file}: {e}");
                }
                thread::sleep(every);
            });
        }
        for line in &s.stderr {
            eprintln!("{line}");
        }
        flood_stderr(s.stderr_bytes);
        // Startup runs before stdin is read: nothing else writes stdout yet.
        flood(io::stdout().lock(), s.stdout_bytes);
        for line in &s.stdout {
            send(raw_line(line));
        }
        if let Some(code) = s.exit {
            exit(code);
        }
    }

    fn handle_line(&'static self, line: &str) {
        #[derive(Deserialize)]
        struct Incoming {
            id: Option<Raw>,
            method: Option<String>,
            params: Option<Raw>,
        }
        let msg: Incoming = match serde_json::from_str(line) {
            Ok(m) => m,
            Err(e) => return eprintln!("fake: ignoring non-JSON-RPC line ({e}): {line}"),
        };
        let params = msg.params.as_deref().map_or("null", RawValue::get);
        if msg.method.is_some() {
            self.record(line);
        }
        let modern = match (&msg.method, &msg.id) {
            (Some(method), Some(id)) => match self.modern_gate(method, params) {
                Gate::Legacy => false,
                Gate::Modern => true,
                Gate::Refuse(error) => return send(error_line(&compact(id.get()), &error)),
            },
            _ => false,
        };
        match (msg.method.as_deref(), msg.id) {
            (None, Some(_)) => self.inbox().push(compact(line)),
            (None, None) => eprintln!("fake: ignoring message without method or id: {line}"),
            (Some("notifications/initialized"), None) => {
                for line in &self.script.after_initialized {
                    send(raw_line(line));
                }
            }
            (Some(_), None) => self.inbox().push(compact(line)),
            (Some(method), Some(id)) => {
                let id = compact(id.get());
                match method {
                    "initialize" if !modern => self.initialize(&id, params),
                    "ping" => send(result_line(&id, "{}")),
                    "server/discover" if modern => self.discover(&id),
                    "tools/list" => self.list_tools(&id, params, modern),
                    "tools/call" => self.call_tool(id, params, modern),
                    _ => {
                        self.inbox().push(compact(line));
                        send(error_line(&id, &rpc_error(-32601, "Method not found")))
                    }
                }
            }
        }
    }

    fn initialize(&self, id: &str, params: &str) {
        sleep_ms(self.script.initialize_delay_ms);
        if let Some(legacy) = &self.script.legacy_versions {
            let requested = serde_json::from_str::<Value>(params)
                .ok()
                .and_then(|p| p.get("protocolVersion").cloned())
                .unwrap_or(Value::Null);
            if !legacy.iter().any(|v| requested == v.as_str()) {
                let modern = self.script.modern_versions.clone().unwrap_or_default();
                let code = if modern.is_empty() { -32602 } else { -32022 };
                let supported: Vec<&String> = legacy.iter().chain(&modern).collect();
                let error = serde_json::json!({"code": code, "message": "Unsupported protocol version",
                    "data": {"supported": supported, "requested": requested}});
                return send(error_line(id, &error.to_string()));
            }
            self.legacy_session
                .store(true, std::sync::atomic::Ordering::SeqCst);
        }
        match &self.init {
            InitMode::Ignore => {}
            InitMode::Exit => {
                eprintln!("fake: exiting on initialize");
                exit(1);
            }
            InitMode::Error(e) => send(error_line(id, e)),
            InitMode::Normal => {
                let requested = serde_json::from_str::<Value>(params).ok().and_then(|p| {
                    p.get("protocolVersion")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                });
                let s = &self.script;
                let version = s.protocol_version.clone().or(requested);
                let version = json_string(version.as_deref().unwrap_or("2025-06-18"));
                let (caps, info) = s.capabilities_and_info();
                let instructions = s.instructions();
                let result = format!(
                    r#"{{"protocolVersion":{version},"capabilities":{caps},"serverInfo":{info}{instructions}}}"#
                );
                send(result_line(id, &result));
            }
        }
    }

    fn list_tools(&self, id: &str, params: &str, modern: bool) {
        let mut tools: Vec<String> = self
            .script
            .tools
            .iter()
            .map(|t| compact_raw(&t.tool))
            .collect();
        tools.extend(
            self.added
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .cloned(),
        );
        let params: Value = serde_json::from_str(params).unwrap_or(Value::Null);
        let start = match params.get("cursor") {
            None | Some(Value::Null) => Some(0),
            Some(Value::String(c)) => c.parse::<usize>().ok().filter(|&i| i < tools.len()),
            Some(_) => None,
        };
        let Some(start) = start else {
            return send(error_line(id, &rpc_error(-32602, "Invalid cursor")));
        };
        let page = self.script.page_size.unwrap_or(tools.len());
        let end = start.saturating_add(page).min(tools.len());
        let defs = &tools[start..end];
        let mut result = format!(r#"{{"tools":[{}]"#, defs.join(","));
        if end < tools.len() {
            result.push_str(&format!(r#","nextCursor":"{end}""#));
        }
        if modern {
            result.push_str(r#","resultType":"complete","ttlMs":0,"cacheScope":"private""#);
        }
        result.push('}');
        send(result_line(id, &result));
    }

    fn call_tool(&'static self, id: String, params: &str, modern: bool) {
        #[derive(Deserialize)]
        struct CallParams {
            name: String,
            arguments: Option<Raw>,
            #[serde(rename = "_meta")]
            meta: Option<Meta>,
        }
        #[derive(Deserialize)]
        struct Meta {
            #[serde(rename = "progressToken")]
            progress_token: Option<Raw>,
        }
        let call: CallParams = match serde_json::from_str(params) {
            Ok(c) => c,
            Err(e) => {
                let message = format!("Invalid params: {e}");
                return send(error_line(&id, &rpc_error(-32602, &message)));
            }
        };
        let wanted = Some(call.name.as_str());
        let Some(tool) = self
            .script
            .tools
            .iter()
            .find(|t| t.name.as_deref() == wanted)
        else {
            let added = self.added.lock().unwrap_or_else(|e| e.into_inner());
            let named = |def: &String| {
                serde_json::from_str::<Value>(def)
                    .is_ok_and(|v| v.get("name").and_then(Value::as_str) == Some(&call.name))
            };
            if added.iter().any(named) {
                let args = call.arguments.as_deref().map_or("{}".into(), compact_raw);
                return send(result_line(
                    &id,
                    &text_result(&format!("{} {args}", call.name)),
                ));
            }
            let message = format!("Unknown tool: {}", call.name);
            return send(error_line(&id, &rpc_error(-32602, &message)));
        };
        let args = call.arguments.as_deref().map_or("{}".into(), compact_raw);
        // Read only for the `meta` action: the other calls cost what they did.
        let meta_text = if tool.action.meta {
            serde_json::from_str::<Value>(params)
                .ok()
                .and_then(|p| p.get("_meta").map(Value::to_string))
                .unwrap_or_else(|| "null".into())
        } else {
            String::new()
        };
        let token = call
            .meta
            .and_then(|m| m.progress_token)
            .map(|t| compact(t.get()));
        // Delayed calls get their own thread so they do not hold up other requests;
        // the others run inline, which keeps the order of replies deterministic.
        if tool.action.delay_ms > 0 || tool.action.progress_interval_ms > 0 {
            thread::spawn(move || {
                self.run_action(tool, &id, &args, token.as_deref(), &meta_text, modern)
            });
        } else {
            self.run_action(tool, &id, &args, token.as_deref(), &meta_text, modern);
        }
    }

    fn run_action(
        &self,
        tool: &Tool,
        id: &str,
        args: &str,
        token: Option<&str>,
        meta: &str,
        modern: bool,
    ) {
        let a = &tool.action;
        sleep_ms(a.delay_ms);
        if !a.add_tools.is_empty() {
            let mut added = self.added.lock().unwrap_or_else(|e| e.into_inner());
            added.extend(a.add_tools.iter().map(|t| compact_raw(t)));
        }
        for fields in &a.progress {
            sleep_ms(a.progress_interval_ms);
            let Some(token) = token else { break };
            let fields = compact_raw(fields);
            let rest = fields.trim_start_matches('{').trim_end_matches('}');
            let sep = if rest.is_empty() { "" } else { "," };
            send(format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{token}{sep}{rest}}}}}"#
            ));
        }
        for line in &a.stdout {
            send(raw_line(line));
        }
        for line in &a.stderr {
            eprintln!("{line}");
        }
        if let Some(code) = a.exit {
            exit(code);
        }
        if a.list_changed_every_ms > 0 {
            let every = a.list_changed_every_ms;
            thread::spawn(move || loop {
                send(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.into());
                sleep_ms(every);
            });
        }
        if a.stall_stdin {
            // Runs inline (no delay), so the loop that reads stdin never resumes.
            loop {
                thread::sleep(Duration::from_secs(3600));
            }
        }
        if a.no_reply {
            return;
        }
        if let Some(error) = &a.error {
            return send(error_line(id, &compact_raw(error)));
        }
        if let Some(hex) = &a.reply_hex {
            let result = from_hex(hex).expect("checked when the script was loaded");
            let head = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":"#);
            return send_bytes([head.as_bytes(), &result, b"}"].concat());
        }
        if let Some(reply) = &a.reply {
            return send(result_line(id, &compact_raw(reply)));
        }
        let result = if a.meta {
            text_result(meta)
        } else if let Some(env) = &a.env {
            text_result(&env_text(env))
        } else if a.inbox {
            text_result(
                &self
                    .inbox
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .join("\n"),
            )
        } else if let Some(n) = a.text_bytes {
            text_result(&"x".repeat(n))
        } else {
            let name = tool.name.as_deref().unwrap_or("");
            text_result(&format!("{name} {args}"))
        };
        let result = if modern {
            format!(
                r#"{},"resultType":"complete"}}"#,
                result.strip_suffix('}').unwrap_or(&result)
            )
        } else {
            result
        };
        send(result_line(id, &result));
    }
}

/// NAME=value lines for the `env` action: the listed names, or all sorted for "*".
fn env_text(env: &Value) -> String {
    let lines: Vec<String> = match env.as_array() {
        Some(names) => names
            .iter()
            .filter_map(Value::as_str)
            .map(|n| match std::env::var_os(n) {
                Some(v) => format!("{n}={}", v.to_string_lossy()),
                None => format!("{n}=<unset>"),
            })
            .collect(),
        None => {
            let mut vars: Vec<(String, String)> = std::env::vars_os()
                .map(|(k, v)| (k.to_string_lossy().into(), v.to_string_lossy().into()))
                .collect();
            vars.sort();
            vars.iter().map(|(k, v)| format!("{k}={v}")).collect()
        }
    };
    lines.join("\n")
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    #[cfg(windows)]
    if let [_, flag, pid] = args.as_slice() {
        if flag == "--ctrl-c" {
            exit(ctrl_c(pid));
        }
    }
    // Arguments after the script are accepted and ignored (tests pass markers).
    let [_, path, ..] = args.as_slice() else {
        eprintln!("usage: mcp-fake-server SCRIPT.json [IGNORED...]");
        exit(2);
    };
    let fake = match load(path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("mcp-fake-server: bad script {path}: {e}");
            exit(2);
        }
    };
    // The fake lives until the process exits; leaking it lets call threads borrow it.
    let fake: &'static Fake = Box::leak(Box::new(fake));
    // Windows has no SIGTERM: a stop there ends in the job's termination.
    #[cfg(unix)]
    if fake.script.ignore_sigterm {
        // SAFETY: installing SIG_IGN has no handler code and no preconditions.
        unsafe {
            libc::signal(libc::SIGTERM, libc::SIG_IGN);
        }
    }
    fake.run_startup();

    for line in io::stdin().lock().split(b'\n') {
        let line = match line {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) => {
                eprintln!("fake: stdin read error: {e}");
                break;
            }
        };
        let line = line.strip_suffix('\r').unwrap_or(&line);
        if !line.trim().is_empty() {
            fake.handle_line(line);
        }
    }
    if fake.script.ignore_stdin_eof {
        loop {
            thread::sleep(Duration::from_secs(3600));
        }
    }
    exit(0);
}

/// `mcp-fake-server --ctrl-c PID` (Windows): sends Ctrl-C to the console of
/// process PID, as a user pressing the keys there would. An event reaches only the processes of the
/// sender's console, so the test runs this in a process of its own, which
/// leaves its console and attaches to PID's. Exits 0 once sent.
#[cfg(windows)]
fn ctrl_c(pid: &str) -> i32 {
    #[link(name = "kernel32")]
    extern "system" {
        fn FreeConsole() -> i32;
        fn AttachConsole(pid: u32) -> i32;
        fn SetConsoleCtrlHandler(handler: *const (), add: i32) -> i32;
        fn GenerateConsoleCtrlEvent(event: u32, group: u32) -> i32;
    }
    const CTRL_C_EVENT: u32 = 0;
    let Ok(pid) = pid.parse::<u32>() else {
        return 2;
    };
    // SAFETY: plain console calls; a null handler with TRUE makes this
    // process ignore the event it sends to its (new) console.
    unsafe {
        FreeConsole();
        if AttachConsole(pid) == 0 {
            return 3;
        }
        SetConsoleCtrlHandler(std::ptr::null(), 1);
        // Group 0: every process attached to the console.
        if GenerateConsoleCtrlEvent(CTRL_C_EVENT, 0) == 0 {
            return 4;
        }
    }
    0
}
