//! Tools from scripts (docs/reference.md §13): `mcp-workbench tools` and
//! `mcp-workbench call` run as a script runs them, against the fake server:
//! every exit code, `--batch`'s order, a shared fleet's server reached by a
//! script and a host session alike, a held pin, a cut result, and no process
//! left behind (read from `/proc`: Linux). Each case has its own cache,
//! state and runtime folders.

use crate::harness::*;
use serde_json::{json, Value};
use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// What a run of the workbench gave: its exit code, stdout and stderr.
struct Ran {
    code: Option<i32>,
    out: String,
    err: String,
}

impl std::fmt::Display for Ran {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {:?}\nstdout:\n{}\nstderr:\n{}",
            self.code, self.out, self.err
        )
    }
}

/// `mcp-workbench ARGS --config config.json` in `dir`, `input` on stdin.
fn run(dir: &Path, args: &[&str], input: &str) -> Ran {
    let mut child = workbench_in(dir)
        .args(args)
        .args(["--config", "config.json"])
        .envs(user_env(dir))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    Ran {
        code: out.status.code(),
        out: String::from_utf8_lossy(&out.stdout).into_owned(),
        err: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn def(name: &str, description: &str, schema: Value, action: Value) -> Value {
    json!({"tool": {"name": name, "description": description, "inputSchema": schema}, "action": action})
}

/// A server whose `echo` requires `text`, `fail` answers an error, `slow`
/// takes 600 ms and `fast` none; each start appends its pid to `starts.log`.
fn script() -> Value {
    let object = json!({"type": "object"});
    let text = json!({"type": "object", "required": ["text"],
        "properties": {"text": {"type": "string", "description": "What to echo"}}});
    counted(
        "starts.log",
        json!([
            def("echo", "Echo the arguments. Then stop.", text, json!({})),
            def(
                "fail",
                "Fail.",
                object.clone(),
                json!({"reply": {"content": [{"type": "text", "text": "it broke"}], "isError": true}})
            ),
            def(
                "slow",
                "Answer late.",
                object.clone(),
                json!({"delayMs": 600, "reply": {"content": [{"type": "text", "text": "slow"}]}})
            ),
            def(
                "fast",
                "Answer at once.",
                object.clone(),
                json!({"reply": {"content": [{"type": "text", "text": "fast"}]}})
            ),
            def("big", "A long text.", object, json!({"textBytes": 5000})),
        ]),
    )
}

fn case(name: &str, config: Value) -> std::path::PathBuf {
    case_dir(name, &config, &[("fake.json", script())])
}

#[test]
fn call_exits_0_1_or_2_and_leaves_no_process() {
    let config = json!({"toolboxes": {
        "box": toolbox(json!({"s": fake("fake.json")})),
        "broken": toolbox(json!({"b": {"command": "/nonexistent/server"}}))}});
    let dir = case("script-exits", config);

    // Nothing listed yet: the catalog learns box/s from this first call.
    let ran = run(&dir, &["call", "box/s/echo", "text=hi"], "");
    assert_eq!(ran.code, Some(0), "{ran}");
    assert_eq!(ran.out, "echo {\"text\":\"hi\"}\n", "{ran}");
    assert_eq!(
        leftover_processes(&dir),
        Vec::<String>::new(),
        "after a call without a fleet"
    );

    let ran = run(
        &dir,
        &["call", "box/s/echo", "-"],
        r#"{"text": "from stdin"}"#,
    );
    assert_eq!(
        (ran.code, ran.out.as_str()),
        (Some(0), "echo {\"text\":\"from stdin\"}\n"),
        "{ran}"
    );
    let ran = run(
        &dir,
        &["call", "box/s/echo", "--json", r#"{"text":"j"}"#],
        "",
    );
    let result: Value = serde_json::from_str(&ran.out).unwrap();
    assert_eq!(
        result["content"][0]["text"], "echo {\"text\":\"j\"}",
        "{ran}"
    );

    let ran = run(&dir, &["call", "box/s/fail"], "");
    assert_eq!((ran.code, ran.out.as_str()), (Some(1), ""), "{ran}");
    assert!(ran.err.contains("it broke"), "{ran}");
    let ran = run(&dir, &["call", "broken/b/anything"], "");
    assert_eq!(ran.code, Some(1), "a server that cannot start: {ran}");
    assert!(ran.err.contains("/nonexistent/server"), "{ran}");

    for (args, said) in [
        (&["call", "box/s/ech", "text=1"][..], "did you mean 'echo'?"),
        (
            &["call", "box/t/echo"],
            "unknown server 't' in toolbox 'box'; did you mean 's'?",
        ),
        (
            &["call", "bx/s/echo"],
            "unknown toolbox 'bx'; did you mean 'box'?",
        ),
        (&["call", "box/s/echo", "[1]"], "ARGS is not a JSON object"),
        (
            &["call", "box/s/echo", "n=1"],
            "requires the argument 'text'",
        ),
        (&["call", "box/s"], "is not TOOLBOX/SERVER/TOOL"),
    ] {
        let ran = run(&dir, args, "");
        assert_eq!(ran.code, Some(2), "{args:?}: {ran}");
        assert!(ran.err.contains(said), "{args:?}: {ran}");
    }
    // Nothing was called for them: box/s started once to be listed, then
    // once per call above (four).
    assert_eq!(
        starts(&dir, "starts.log").len(),
        5,
        "{}",
        fs::read_to_string(dir.join("starts.log")).unwrap()
    );
    assert_eq!(leftover_processes(&dir), Vec::<String>::new());
}

#[test]
fn tools_lists_searches_and_describes() {
    let dir = case(
        "script-tools",
        json!({"toolboxes": {"box": toolbox(json!({"s": fake("fake.json")}))}}),
    );
    // Not in the catalog: listed by starting the server, as `index` does.
    let ran = run(&dir, &["tools"], "");
    assert_eq!(ran.code, Some(0), "{ran}");
    assert_eq!(
        ran.out,
        "box/s/echo  Echo the arguments.\nbox/s/fail  Fail.\nbox/s/slow  Answer late.\nbox/s/fast  Answer at once.\nbox/s/big  A long text.\n",
        "{ran}"
    );
    assert_eq!(leftover_processes(&dir), Vec::<String>::new());
    let ran = run(
        &dir,
        &[
            "tools",
            "echo",
            "the",
            "arguments",
            "--json",
            "--limit",
            "1",
        ],
        "",
    );
    let found: Value = serde_json::from_str(&ran.out).unwrap();
    assert_eq!(found["query"], "echo the arguments", "{ran}");
    assert_eq!(found["tools"][0]["tool"], "echo", "{ran}");
    assert_eq!(found["tools"].as_array().unwrap().len(), 1, "{ran}");
    let ran = run(&dir, &["tools", "box/s/echo"], "");
    assert_eq!(ran.code, Some(0), "{ran}");
    assert!(
        ran.out
            .contains("  text (string, required): What to echo\n"),
        "{ran}"
    );
    assert!(
        ran.out
            .contains("  mcp-workbench call box/s/echo text=TEXT"),
        "{ran}"
    );
    let ran = run(&dir, &["tools", "box/s/ehco"], "");
    assert_eq!(ran.code, Some(2), "{ran}");
    assert!(ran.err.contains("did you mean 'echo'?"), "{ran}");
}

#[test]
fn a_batch_answers_in_input_order_and_a_bad_line_fails_alone() {
    let dir = case(
        "script-batch",
        json!({"toolboxes": {"box": toolbox(json!({"s": fake("fake.json")}))}}),
    );
    let input = [
        r#"{"tool": "box/s/slow"}"#,
        r#"{"tool": "box/s/fast", "arguments": {}}"#,
        "not json",
        r#"{"tool": "box/s/echo", "arguments": {"text": "x"}}"#,
        r#"{"tool": "box/s/echo", "arguments": {}}"#,
    ]
    .join("\n");
    let ran = run(&dir, &["call", "--batch"], &input);
    assert_eq!(ran.code, Some(1), "a bad line fails the batch: {ran}");
    let lines: Vec<Value> = ran
        .out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5, "{ran}");
    assert_eq!(lines[0]["result"]["content"][0]["text"], "slow", "{ran}");
    assert_eq!(lines[1]["result"]["content"][0]["text"], "fast", "{ran}");
    assert!(
        lines[2]["error"]
            .as_str()
            .unwrap()
            .contains("not a line of the batch"),
        "{ran}"
    );
    assert_eq!(
        lines[3]["result"]["content"][0]["text"], "echo {\"text\":\"x\"}",
        "{ran}"
    );
    assert!(
        lines[4]["error"].as_str().unwrap().contains("'text'"),
        "{ran}"
    );
    assert_eq!(lines[4]["tool"], "box/s/echo");
    assert_eq!(leftover_processes(&dir), Vec::<String>::new());

    // Every line good: exit 0; one server, one start for the whole batch.
    let _ = fs::remove_file(dir.join("starts.log"));
    let many: Vec<String> = (0..20)
        .map(|i| json!({"tool": "box/s/echo", "arguments": {"text": i.to_string()}}).to_string())
        .collect();
    let ran = run(&dir, &["call", "--batch"], &many.join("\n"));
    assert_eq!(ran.code, Some(0), "{ran}");
    let texts: Vec<String> = ran
        .out
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let expected: Vec<String> = (0..20)
        .map(|i| format!("echo {{\"text\":\"{i}\"}}"))
        .collect();
    assert_eq!(texts, expected, "{ran}");
    assert_eq!(starts(&dir, "starts.log").len(), 1);
}

#[test]
fn timeout_caps_and_pins_are_the_sessions_own() {
    let config = json!({"pinTools": true, "maxResultChars": 1000,
        "toolboxes": {"box": toolbox(json!({"s": fake("fake.json")}))}});
    let dir = case("script-rules", config);
    let ran = run(&dir, &["call", "box/s/slow", "--timeout", "100"], "");
    assert_eq!(ran.code, Some(1), "{ran}");
    assert!(ran.err.contains("timed out after 100 ms"), "{ran}");

    let ran = run(&dir, &["call", "box/s/big"], "");
    assert_eq!(ran.code, Some(0), "{ran}");
    assert!(ran.out.contains("maxResultChars 1000"), "{ran}");
    assert!(
        ran.out
            .contains("the whole result (5000 characters) is in the file"),
        "{ran}"
    );

    // The server's `fast` changes: held until approved.
    let mut changed = script();
    changed["tools"][3]["tool"]["description"] = json!("Answer at once, and more.");
    fs::write(dir.join("fake.json"), changed.to_string()).unwrap();
    let ran = run(&dir, &["call", "box/s/fast"], "");
    assert_eq!(ran.code, Some(1), "{ran}");
    assert!(ran.err.contains("changed since it was approved"), "{ran}");
    assert!(
        ran.err.contains("mcp-workbench pins approve box/s/fast"),
        "{ran}"
    );
    assert_eq!(ran.out, "", "{ran}");
    assert_eq!(leftover_processes(&dir), Vec::<String>::new());
}

/// With a shared fleet, a script's call goes to the server the host's
/// session started: the same process.
#[test]
fn a_script_reaches_the_server_a_host_session_runs() {
    // `slow` answers after 600 ms: past this server's own limit.
    let mut server = fake("fake.json");
    server["callTimeoutMs"] = json!(300);
    let config = json!({"shareServers": true, "shareLingerMs": 300,
        "toolboxes": {"box": toolbox(json!({"s": server}))}});
    let dir = case("script-shared", config);
    let env = user_env(&dir);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut wb = Workbench::initialized(&dir, &env);
    wb.use_tool(1, "box", "s", "fast", json!({}));
    let answer = wb.answer(1, &mut Vec::new());
    assert_eq!(text(&answer), "fast", "{answer}");
    let pids = starts(&dir, "starts.log");
    assert_eq!(pids.len(), 1);

    let ran = run(&dir, &["call", "box/s/echo", "text=shared"], "");
    assert_eq!(ran.code, Some(0), "{ran}\n{}", wb.log());
    assert_eq!(ran.out, "echo {\"text\":\"shared\"}\n", "{ran}");
    let ran = run(&dir, &["call", "--batch"], "{\"tool\": \"box/s/fast\"}\n");
    assert_eq!(ran.code, Some(0), "{ran}");
    // --timeout is this call's limit in the fleet too, longer or shorter
    // than the server's callTimeoutMs.
    let ran = run(&dir, &["call", "box/s/slow"], "");
    assert_eq!(ran.code, Some(1), "{ran}");
    assert!(ran.err.contains("timed out after 300 ms"), "{ran}");
    let ran = run(&dir, &["call", "box/s/slow", "--timeout", "10000"], "");
    assert_eq!((ran.code, ran.out.as_str()), (Some(0), "slow\n"), "{ran}");
    assert_eq!(
        starts(&dir, "starts.log"),
        pids,
        "the script's calls reached the session's server"
    );
    assert!(alive(pids[0]));
    wb.finish_clean(Duration::from_secs(10));
    assert!(gone(pids[0]), "the fleet stops its server after its linger");
}
