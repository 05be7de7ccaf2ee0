//! Replays every transcript case in `testdata/transcripts/` against the real
//! binary and compares every byte it writes to stdout.
//!
//! A case is a folder:
//! - `config.json`: the workbench config (the workbench runs with the case
//!   folder as its working directory; `${FAKE_MCP_SERVER}` is the fake server);
//! - `host.jsonl`: the lines the host sends, byte for byte. After a request
//!   the harness waits for its response before sending the next line (also
//!   for a request nested deeper than serde_json can parse). Lines
//!   starting with `#` are directives: `# ...` is a comment; `#pipeline` sends
//!   the following lines without waiting, until `#wait`, which waits for all
//!   their responses and lists them in request order (other lines first);
//!   `#send LINE` sends LINE without waiting for an answer (for requests that
//!   get none, such as cancelled ones); `#sleep MS` waits MS milliseconds
//!   (for idle timeouts: make it many times the timeout);
//! - `expected.jsonl`: every line the workbench must write;
//! - fake server scripts (`*.json`) named by the config;
//! - optional `not-on-windows` (why the case cannot run on Windows or under Wine, such as a
//!   `sh` script as a server: it is skipped there and listed as skipped),
//!   `env` (KEY=VALUE lines for the workbench's environment), `args`
//!   (the command-line arguments, one per line; default `--config config.json`),
//!   `expected-exit` (default 0) and `expected-stderr.txt` (compared when present,
//!   with logging off).
//!
//! After the run no process may be left whose working directory is inside the
//! case folder: that covers children and their grandchildren (checked on
//! Linux, through `/proc`).
//! `UPDATE_TRANSCRIPTS=1 cargo test --test it transcripts::` rewrites the
//! expected files (`TRANSCRIPT=NAME` runs only the cases whose folder name
//! contains NAME).
//!
//! Each case gets an empty cache folder of its own (`XDG_CACHE_HOME`,
//! `LOCALAPPDATA`): the tool catalog starts empty and is removed afterwards.
//!
//! Expected files write the crate version as `{{VERSION}}`, and may write the
//! `initialize` instructions as `{{INSTRUCTIONS}}` (see `normalise`), so a new
//! version or a reworded instruction does not touch every case; the case's
//! own folder, where a message names a path in it, is `{{CASE}}/`. A line that
//! differs is reported from its first differing byte, with some context.

use crate::harness::{leftover_processes, workbench_in, Workbench};
use serde_json::Value;
use std::collections::VecDeque;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

const RESPONSE_TIMEOUT: Duration = Duration::from_secs(20);
const EXIT_TIMEOUT: Duration = Duration::from_secs(30);

#[test]
fn transcripts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/transcripts");
    let mut cases: Vec<PathBuf> = fs::read_dir(&root)
        .expect("testdata/transcripts exists")
        .map(|e| e.expect("readable dir entry").path())
        .filter(|p| p.join("host.jsonl").exists() || p.join("args").exists())
        .collect();
    cases.sort();
    assert!(!cases.is_empty(), "no transcript cases found");
    let filter = std::env::var("TRANSCRIPT").unwrap_or_default();
    let queue = Mutex::new(
        cases
            .into_iter()
            .filter(|c| c.to_string_lossy().contains(&filter))
            .collect::<VecDeque<_>>(),
    );
    let failures = Mutex::new(Vec::new());
    let ran = Mutex::new(0usize);
    thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| loop {
                let Some(case) = queue.lock().unwrap().pop_front() else {
                    return;
                };
                let name = case.file_name().unwrap().to_string_lossy().to_string();
                if cfg!(windows) {
                    if let Ok(why) = fs::read_to_string(case.join("not-on-windows")) {
                        eprintln!("transcript {name}: skipped on Windows: {}", why.trim());
                        continue;
                    }
                }
                let started = Instant::now();
                let result = run_case(&case);
                eprintln!(
                    "transcript {name}: {} in {:?}",
                    if result.is_ok() { "ok" } else { "FAILED" },
                    started.elapsed()
                );
                *ran.lock().unwrap() += 1;
                if let Err(report) = result {
                    failures
                        .lock()
                        .unwrap()
                        .push(format!("=== {name} ===\n{report}"));
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} transcripts failed:\n\n{}",
        failures.len(),
        ran.into_inner().unwrap(),
        failures.join("\n\n")
    );
}

fn run_case(dir: &Path) -> Result<(), String> {
    let dir = dir.canonicalize().map_err(|e| e.to_string())?;
    // A fresh, empty cache folder (the tool catalog) for each case, so no
    // case sees another's listings, nor writes outside the temp folder.
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    let cache = std::env::temp_dir().join(format!(
        "mcp-workbench-transcript-cache-{}-{name}",
        std::process::id()
    ));
    let _ = fs::remove_dir_all(&cache);
    let result = run_case_with_cache(&dir, &cache);
    let _ = fs::remove_dir_all(&cache);
    result
}

fn run_case_with_cache(dir: &Path, cache: &Path) -> Result<(), String> {
    let dir = dir.to_path_buf();
    let stderr_expected = dir.join("expected-stderr.txt");
    let args: Vec<String> = match fs::read_to_string(dir.join("args")) {
        Ok(text) => text.lines().map(str::to_string).collect(),
        Err(_) => vec!["--config".into(), "config.json".into()],
    };
    let mut cmd = workbench_in(&dir);
    cmd.args(&args)
        .env("HOME", "/nonexistent-home")
        .env("XDG_CACHE_HOME", cache)
        .env("LOCALAPPDATA", cache)
        .env(
            "RUST_LOG",
            if stderr_expected.exists() {
                "off"
            } else {
                "debug"
            },
        );
    if let Ok(env) = fs::read_to_string(dir.join("env")) {
        for line in env.lines().filter(|l| !l.trim().is_empty()) {
            let (k, v) = line
                .split_once('=')
                .ok_or(format!("bad env line {line:?}"))?;
            cmd.env(k, v);
        }
    }
    // The case folder belongs to the repository: the session keeps it.
    let mut wb = Workbench::spawn_raw(dir.clone(), cmd, false);
    let mut session = Session {
        wb: &mut wb,
        output: Vec::new(),
    };
    let sent = session.replay(&dir);
    let mut output = session.output;
    // The exit code; `None` for a signal, or when it had to be killed.
    let status = wb.end(EXIT_TIMEOUT).flatten();
    output.extend(wb.lines.try_iter().map(|l| lossy(&l)));
    // As `read_to_string` would: nothing at all if it is not UTF-8.
    let stderr_text = String::from_utf8(wb.log_bytes()).unwrap_or_default();

    let mut problems = Vec::new();
    if let Err(e) = sent {
        problems.push(e);
    }
    let actual = output.iter().map(|l| format!("{l}\n")).collect::<String>();
    compare(&dir.join("expected.jsonl"), &actual, &mut problems);
    if stderr_expected.exists() {
        compare(&stderr_expected, &stderr_text, &mut problems);
    }
    let expected_exit: i32 = fs::read_to_string(dir.join("expected-exit"))
        .map(|t| t.trim().parse().expect("expected-exit holds a number"))
        .unwrap_or(0);
    match status {
        Some(code) if code == expected_exit => {}
        other => problems.push(format!("exit status {other:?}, expected {expected_exit}")),
    }
    if cfg!(target_os = "linux") {
        let leftovers = leftover_processes(&dir);
        if !leftovers.is_empty() {
            problems.push(format!("processes left behind: {leftovers:?}"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        // Every warning and error in full (a failed start's reason comes
        // long before the end), then the last lines.
        let warnings: Vec<&str> = stderr_text
            .lines()
            .filter(|l| l.starts_with("[WARN") || l.starts_with("[ERROR"))
            .take(100)
            .collect();
        let tail: Vec<&str> = stderr_text.lines().rev().take(40).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        Err(format!(
            "{}\n--- workbench stderr: warnings and errors ---\n{}\n--- workbench stderr (last lines) ---\n{}",
            problems.join("\n"),
            warnings.join("\n"),
            tail.join("\n")
        ))
    }
}

/// A stdout line as text, invalid UTF-8 replaced.
fn lossy(line: &[u8]) -> String {
    String::from_utf8_lossy(line).into_owned()
}

/// A transcript being replayed: the lines received so far, in order.
struct Session<'a> {
    wb: &'a mut Workbench,
    output: Vec<String>,
}

impl Session<'_> {
    fn replay(&mut self, dir: &Path) -> Result<(), String> {
        let Ok(script) = fs::read(dir.join("host.jsonl")) else {
            return Ok(());
        };
        let mut pipeline: Option<(usize, Vec<Value>)> = None;
        for raw in script.split(|&b| b == b'\n') {
            if raw.is_empty() {
                continue;
            }
            if let Some(line) = raw.strip_prefix(b"#send ") {
                self.send(line)?;
                continue;
            }
            if raw.starts_with(b"#") {
                let directive = String::from_utf8_lossy(raw);
                match directive.trim() {
                    "#pipeline" => pipeline = Some((self.output.len(), Vec::new())),
                    "#wait" => {
                        let (start, ids) = pipeline.take().ok_or("#wait without #pipeline")?;
                        for id in &ids {
                            self.wait_for(id)?;
                        }
                        order_block(&mut self.output[start..], &ids);
                    }
                    d if d.starts_with("#sleep ") => {
                        let ms = d["#sleep ".len()..]
                            .parse()
                            .map_err(|_| format!("bad directive {d:?}"))?;
                        thread::sleep(Duration::from_millis(ms));
                    }
                    d if d.starts_with("# ") || d == "#" => {}
                    d => return Err(format!("unknown directive {d:?}")),
                }
                continue;
            }
            self.send(raw)?;
            if let Some(id) = request_id(raw) {
                match &mut pipeline {
                    Some((_, ids)) => ids.push(id),
                    None => self.wait_for(&id)?,
                }
            }
        }
        if pipeline.is_some() {
            return Err("#pipeline without #wait".into());
        }
        Ok(())
    }

    fn send(&mut self, raw: &[u8]) -> Result<(), String> {
        self.wb
            .try_send(raw)
            .map_err(|e| format!("cannot write to the workbench: {e}"))
    }

    /// Collects output until a response carrying `id` has arrived.
    fn wait_for(&mut self, id: &Value) -> Result<(), String> {
        if self
            .output
            .iter()
            .any(|l| response_id(l).as_ref() == Some(id))
        {
            return Ok(());
        }
        let deadline = Instant::now() + RESPONSE_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.wb.lines.recv_timeout(left) {
                Ok(line) => {
                    let line = lossy(&line);
                    let done = response_id(&line).as_ref() == Some(id);
                    self.output.push(line);
                    if done {
                        return Ok(());
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!(
                        "no response to id {id} within {RESPONSE_TIMEOUT:?}"
                    ))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(format!(
                        "the workbench closed stdout before answering id {id}"
                    ))
                }
            }
        }
    }
}

/// The id of a line the host sends, if it is a request we should wait for.
fn request_id(raw: &[u8]) -> Option<Value> {
    let Ok(value) = serde_json::from_slice::<Value>(raw) else {
        return deep_request_id(raw);
    };
    let obj = value.as_object()?;
    obj.get("method")?;
    obj.get("id")
        .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
        .cloned()
}

/// The id of a request nested deeper than serde_json's parse limit: the
/// members other than `method` and `id` are skipped without being parsed
/// (skipping checks no UTF-8, so that is checked first).
fn deep_request_id(raw: &[u8]) -> Option<Value> {
    std::str::from_utf8(raw).ok()?;
    #[derive(serde::Deserialize)]
    struct Head<'a> {
        #[serde(borrow)]
        method: Option<&'a serde_json::value::RawValue>,
        id: Option<Value>,
    }
    let head: Head = serde_json::from_slice(raw).ok()?;
    head.method?;
    head.id
        .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
}

fn response_id(line: &str) -> Option<Value> {
    let value: Value = serde_json::from_str(line).ok()?;
    let obj = value.as_object()?;
    if obj.contains_key("method") {
        return None;
    }
    obj.get("id").cloned()
}

/// Lines of a pipelined block: non-responses first (arrival order), then
/// responses in the order their requests were sent.
fn order_block(block: &mut [String], ids: &[Value]) {
    let rank = |line: &String| match response_id(line) {
        Some(id) => ids
            .iter()
            .position(|i| *i == id)
            .map_or(usize::MAX, |p| p + 1),
        None => 0,
    };
    block.sort_by_key(rank);
}

fn compare(expected_file: &Path, actual: &str, problems: &mut Vec<String>) {
    let expected = fs::read_to_string(expected_file).ok();
    let case = expected_file
        .parent()
        .expect("an expected file is in its case folder");
    let actual = normalise(&hide_case_folder(actual, case), expected.as_deref());
    if std::env::var_os("UPDATE_TRANSCRIPTS").is_some() {
        fs::write(expected_file, &actual).expect("expected file is writable");
        return;
    }
    let expected = expected.unwrap_or_default();
    if expected != actual {
        problems.push(format!(
            "{} differs:\n{}",
            expected_file.display(),
            line_diff(&expected, &actual)
        ));
    }
}

/// What may change without a transcript being wrong: the crate version is
/// always written as `{{VERSION}}`, and the `initialize` instructions as
/// `{{INSTRUCTIONS}}` in every case whose expected file says so (a new case
/// does; the cases that check the instructions themselves keep the text).
fn normalise(actual: &str, expected: Option<&str>) -> String {
    let version = env!("CARGO_PKG_VERSION");
    let mut text = actual
        .replace(
            &format!("\"name\":\"mcp-workbench\",\"version\":\"{version}\""),
            &format!("\"name\":\"mcp-workbench\",\"version\":\"{VERSION}\""),
        )
        .replace(
            &format!("mcp-workbench {version}\n"),
            &format!("mcp-workbench {VERSION}\n"),
        );
    if expected.is_none_or(|e| e.contains(INSTRUCTIONS_FIELD)) {
        text = hide_instructions(&text);
    }
    text
}

/// The case's own folder, which the workbench names when it says where it
/// looked (a path of the config taken from the config's folder), written as
/// `{{CASE}}/`: with or without Windows' `\\?\` prefix, as it is written raw
/// (stderr), in a JSON string, or in JSON inside a JSON string (a tool
/// result's text), and whichever separator follows it.
fn hide_case_folder(text: &str, case: &Path) -> String {
    let verbatim = case.to_string_lossy().into_owned();
    let plain = verbatim
        .strip_prefix(r"\\?\")
        .unwrap_or(&verbatim)
        .to_string();
    let mut text = text.to_string();
    for form in [verbatim.clone(), plain] {
        // A backslash is 1, 2 or 4 of them, escaped once per level.
        for backslash in [r"\", r"\\", r"\\\\"] {
            let folder = form.replace('\\', backslash);
            for separator in [backslash, "/"] {
                text = text.replace(&format!("{folder}{separator}"), CASE);
            }
        }
    }
    text
}

const CASE: &str = "{{CASE}}/";
const VERSION: &str = "{{VERSION}}";
const INSTRUCTIONS_FIELD: &str = "\"instructions\":\"{{INSTRUCTIONS}}\"";

/// Replaces the value of every `"instructions"` string by the placeholder.
fn hide_instructions(text: &str) -> String {
    const KEY: &str = "\"instructions\":\"";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(KEY) {
        out.push_str(&rest[..start]);
        let value = &rest[start + KEY.len()..];
        let mut end = None;
        let mut escaped = false;
        for (i, c) in value.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => {
                    end = Some(i);
                    break;
                }
                _ => {}
            }
        }
        let Some(end) = end else {
            rest = &rest[start..];
            break;
        };
        out.push_str(INSTRUCTIONS_FIELD);
        rest = &value[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Expected and actual line by line: equal lines once, and for a line that
/// differs, where: the first differing byte with some context on both sides,
/// not two whole lines of maybe thousands of characters.
fn line_diff(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let mut report = String::new();
    for i in 0..e.len().max(a.len()) {
        match (e.get(i).copied(), a.get(i).copied()) {
            (Some(el), Some(al)) if el == al => {
                report.push_str(&format!("  {i:>3}   {}\n", excerpt(el, 0, 120)));
            }
            (Some(el), Some(al)) => {
                let at = first_difference(el, al);
                report.push_str(&format!(
                    "  {i:>3} differs at byte {at} (lengths {} and {}):\n",
                    el.len(),
                    al.len()
                ));
                report.push_str(&format!("      expected: {}\n", excerpt(el, at, CONTEXT)));
                report.push_str(&format!("      actual:   {}\n", excerpt(al, at, CONTEXT)));
            }
            (el, al) => {
                report.push_str(&format!(
                    "  {i:>3} expected: {}\n",
                    el.map_or("<none>".into(), |l| excerpt(l, 0, 2 * CONTEXT))
                ));
                report.push_str(&format!(
                    "  {i:>3} actual:   {}\n",
                    al.map_or("<none>".into(), |l| excerpt(l, 0, 2 * CONTEXT))
                ));
            }
        }
    }
    report
}

/// Bytes of context shown on each side of a difference.
const CONTEXT: usize = 80;

/// The index of the first byte where `a` and `b` differ (the shorter length
/// when one is a prefix of the other).
fn first_difference(a: &str, b: &str) -> usize {
    a.bytes()
        .zip(b.bytes())
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()))
}

/// `line` around byte `at`: `context` bytes before and after it, widened to
/// character boundaries, with `...` where the line was cut.
fn excerpt(line: &str, at: usize, context: usize) -> String {
    let mut start = at.saturating_sub(context).min(line.len());
    while !line.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (at + context).min(line.len());
    while !line.is_char_boundary(end) {
        end += 1;
    }
    format!(
        "{}{}{}",
        if start > 0 { "..." } else { "" },
        &line[start..end],
        if end < line.len() { "..." } else { "" }
    )
}

#[test]
fn placeholders_replace_the_version_and_instructions() {
    let version = env!("CARGO_PKG_VERSION");
    let line = format!(
        "{{\"serverInfo\":{{\"name\":\"mcp-workbench\",\"version\":\"{version}\"}},\"instructions\":\"a \\\"b\\\" \\\\\",\"x\":1}}\nmcp-workbench {version}\n"
    );
    let kept = normalise(&line, Some("no placeholder here"));
    assert_eq!(
        kept,
        "{\"serverInfo\":{\"name\":\"mcp-workbench\",\"version\":\"{{VERSION}}\"},\"instructions\":\"a \\\"b\\\" \\\\\",\"x\":1}\nmcp-workbench {{VERSION}}\n"
    );
    let hidden = normalise(&line, None);
    assert_eq!(
        hidden,
        "{\"serverInfo\":{\"name\":\"mcp-workbench\",\"version\":\"{{VERSION}}\"},\"instructions\":\"{{INSTRUCTIONS}}\",\"x\":1}\nmcp-workbench {{VERSION}}\n"
    );
    assert_eq!(normalise(&line, Some(&hidden)), hidden);
}

#[test]
fn a_long_line_diff_shows_where_it_differs() {
    let expected = format!("same\n{}X{}\n", "a".repeat(5000), "b".repeat(5000));
    let actual = format!("same\n{}Y{}\n", "a".repeat(5000), "b".repeat(5000));
    let report = line_diff(&expected, &actual);
    assert!(report.contains("1 differs at byte 5000"), "{report}");
    assert!(
        report.contains(&format!(
            "expected: ...{}X{}...",
            "a".repeat(80),
            "b".repeat(79)
        )),
        "{report}"
    );
    assert!(report.len() < 600, "{report}");
    assert_eq!(first_difference("abc", "ab"), 2);
    assert_eq!(excerpt("héllo", 2, 1), "...é...");
}
