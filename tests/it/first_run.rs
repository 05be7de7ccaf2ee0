//! A newcomer's first hour, through the real binary: where the config is
//! looked for and what is said when it is missing, paths in the config taken
//! from its own folder (not the working directory, which GUI hosts set to `/`),
//! and `check` reports that hold the config's warnings and nothing else.
//! Cases whose output depends on absolute paths or timings live here rather
//! than in transcripts.

use crate::harness::{
    command, leftover_processes, scratch, workbench_in, Workbench, FAKE, INITIALIZE,
};
use serde_json::{json, Value};
use std::fs;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

/// Runs the workbench in `cwd` with a clean environment plus `env`; stdin is empty.
fn run(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = workbench_in(cwd);
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_missing_default_config_is_named_with_its_absolute_path() {
    let dir = scratch("missing-default");
    // Nothing named, nothing here, and no home to find the user's own config in.
    let out = run(&dir, &[], &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(
            "error: no config: neither --config nor WORKBENCH_CONFIG was given, there is no \
             ./workbench-config.json, and your own config cannot be found ("
        ),
        "{stderr}"
    );

    // With a home, the user's own config is used; check --json names it as JSON on stdout.
    let home = dir.join("home");
    let home_text = home.display().to_string();
    let env = [("HOME", home_text.as_str()), ("XDG_CONFIG_HOME", "")];
    let out = run(&dir, &["check", "--json"], &env);
    assert_eq!(out.status.code(), Some(2));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    if cfg!(target_os = "linux") {
        assert_eq!(
            report["config"],
            home.join(".config/mcp-workbench/config.json")
                .display()
                .to_string()
        );
    }
    assert!(
        report["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains(&format!(
                "it is your own config, used because neither --config nor WORKBENCH_CONFIG was \
                 given and {} does not exist either",
                dir.join("workbench-config.json").display()
            )),
        "{report:#}"
    );

    // Named with --config: the same quality, with its absolute path.
    let out = run(&dir, &["--config", "nope.json"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: {}: the file does not exist (it is the path given with --config, taken from the working directory)\n",
            dir.join("nope.json").display()
        )
    );

    // From WORKBENCH_CONFIG, with ~ taken from HOME.
    let home = dir.display().to_string();
    let out = run(
        Path::new("/"),
        &[],
        &[("WORKBENCH_CONFIG", "~/elsewhere.json"), ("HOME", &home)],
    );
    assert_eq!(
        text(&out.stderr),
        format!("error: {home}/elsewhere.json: the file does not exist (it is the path in WORKBENCH_CONFIG); pass --config PATH to name your config file\n")
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
#[cfg(unix)] // a symlink to the fake stands for a relative command
fn relative_paths_are_taken_from_the_config_folder() {
    let dir = scratch("relative-paths");
    let config_dir = dir.join("conf");
    fs::create_dir_all(config_dir.join("bin")).unwrap();
    fs::create_dir_all(config_dir.join("work")).unwrap();
    fs::create_dir_all(dir.join("home/data")).unwrap();
    std::os::unix::fs::symlink(FAKE, config_dir.join("bin/fake")).unwrap();
    let script = json!({"tools": [{"tool": {"name": "t", "inputSchema": {"type": "object"}}}]});
    // The scripts sit only in the cwd folders: the fake reads them from its cwd.
    fs::write(config_dir.join("work/s.json"), script.to_string()).unwrap();
    fs::write(dir.join("home/data/s.json"), script.to_string()).unwrap();
    let config = json!({"toolboxes": {"box": {"description": "d", "mcpServers": {
        "relative": {"command": "bin/fake", "args": ["s.json"], "cwd": "work"},
        "home": {"command": "./bin/fake", "args": ["s.json"], "cwd": "~/data"}}}}});
    fs::write(config_dir.join("config.json"), config.to_string()).unwrap();
    let home = dir.join("home").display().to_string();
    // Started from the parent folder with a relative --config, as a shell would.
    let out = run(
        &dir,
        &["check", "--json", "--config", "conf/config.json"],
        &[("HOME", &home)],
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    for server in report["toolboxes"][0]["servers"].as_array().unwrap() {
        assert_eq!(server["status"], "ok", "{report:#}");
        assert_eq!(server["tools"], 1, "{report:#}");
    }
    // Started in / with an absolute path, as a GUI host does.
    let absolute = config_dir.join("config.json").display().to_string();
    let out = run(
        Path::new("/"),
        &["--config", &absolute, "check"],
        &[("HOME", &home)],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(leftover_processes(&dir).is_empty());
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn check_reports_config_warnings_and_keeps_logs_out_of_the_report() {
    let dir = scratch("first-run-check-quiet");
    let failing = json!({"startup": {"stderr": ["cannot open database /var/db"], "exit": 3}});
    let good = json!({"tools": [{"tool": {"name": "t", "inputSchema": {"type": "object"}}}]});
    fs::write(dir.join("failing.json"), failing.to_string()).unwrap();
    fs::write(dir.join("good.json"), good.to_string()).unwrap();
    let config = json!({"toolboxes": {"box": {"description": "d", "mcpServers": {
        "bad": {"command": FAKE, "args": ["failing.json"], "cwd": "."},
        "good": {"command": FAKE, "args": ["good.json"], "cwd": ".", "note": "mine"},
        "typo": {"command": FAKE, "args": ["good.json"], "cwd": ".", "toolFilters": ["tt"]}}}}});
    fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let warning = "toolboxes.box.mcpServers.good.note: unknown key ignored (known keys: ";

    let out = run(&dir, &["check", "--config", "config.json"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert_eq!(stderr, "", "nothing but the report by default");
    assert_eq!(
        stdout.matches("cannot open database /var/db").count(),
        1,
        "the stderr tail appears once, in the failure details:\n{stdout}"
    );
    assert!(
        stdout.contains(&format!("warnings:\n  {warning}")),
        "{stdout}"
    );

    let out = run(&dir, &["--config", "config.json", "check", "--json"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        report["warnings"][0].as_str().unwrap().starts_with(warning),
        "{report:#}"
    );
    assert_eq!(
        report["warnings"][1],
        "toolboxes.box.mcpServers.typo.toolFilters names 'tt', which the server does not have (did you mean 't'?)",
        "{report:#}"
    );
    assert_eq!(text(&out.stderr), "");

    // RUST_LOG still opens the logs up when asked.
    let out = run(
        &dir,
        &["check", "--config", "config.json"],
        &[("RUST_LOG", "info")],
    );
    assert!(text(&out.stderr).contains("cannot open database"));
    assert!(leftover_processes(&dir).is_empty());
    let _ = fs::remove_dir_all(&dir);
}

/// A key one typo away from a known one changes what the config means
/// (`toolFilter` exposes every tool): serving warns, `check` fails at once.
#[test]
fn check_fails_on_a_near_miss_of_a_known_key() {
    let dir = scratch("first-run-near-miss");
    let good = json!({"tools": [{"tool": {"name": "t", "inputSchema": {"type": "object"}}}]});
    fs::write(dir.join("good.json"), good.to_string()).unwrap();
    let config = json!({"sharedServers": true, "toolboxes": {"box": {"description": "d", "mcpServers": {
        "s": {"command": FAKE, "args": ["good.json"], "cwd": ".", "toolFilter": ["t"], "arg": [], "note": "x"}}}}});
    fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let out = run(&dir, &["check", "--config", "config.json"], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let stderr = text(&out.stderr);
    for (path, known) in [
        ("sharedServers", "shareServers"),
        ("toolboxes.box.mcpServers.s.toolFilter", "toolFilters"),
        ("toolboxes.box.mcpServers.s.arg", "args"),
    ] {
        assert!(
            stderr.contains(&format!(
                "{path}: unknown key; did you mean '{known}'? (serving only warns"
            )),
            "{stderr}"
        );
    }
    assert!(
        stderr.contains("and 1 warning:"),
        "a key far from any stays a warning: {stderr}"
    );
    assert_eq!(
        text(&out.stdout),
        "",
        "no server was started: {}",
        text(&out.stdout)
    );
    let out = run(&dir, &["check", "--json", "--config", "config.json"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["errors"].as_array().map(Vec::len),
        Some(3),
        "{report:#}"
    );
    // Serving takes the same config, with warnings.
    let mut wb = Workbench::spawn_raw(dir.clone(), command(&dir, &[]), false);
    wb.send_line(INITIALIZE);
    assert!(wb.recv()["result"].is_object());
    assert!(
        wb.log().contains("did you mean 'toolFilters'?"),
        "{}",
        wb.log()
    );
    wb.end(Duration::from_secs(10));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn check_warns_about_relative_args_without_cwd_where_they_pass_and_where_they_fail() {
    let dir = scratch("relative-args");
    let script = json!({"tools": [{"tool": {"name": "t", "inputSchema": {"type": "object"}}}]});
    fs::write(dir.join("s.json"), script.to_string()).unwrap();
    let config = json!({"toolboxes": {"box": {"description": "d", "mcpServers": {
        "fake": {"command": FAKE, "args": ["s.json"]}}}}});
    fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let absolute = dir.join("config.json").display().to_string();
    let warning = |cwd: &Path| {
        format!(
            "toolboxes.box.mcpServers.fake.args[0]: 's.json' looks like a relative path, and the \
             server has no \"cwd\": it is taken from the workbench's working directory ({} here; \
             GUI hosts start the workbench in '/'), not from the config's folder. Set \"cwd\": \
             \".\" to take it from the config's folder ({}), or write an absolute path",
            cwd.join("s.json").display(),
            dir.display()
        )
    };

    // From the config's folder the server starts: the warning says why a host may fail.
    let out = run(&dir, &["check", "--json", "--config", "config.json"], &[]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    assert_eq!(report["warnings"], json!([warning(&dir)]), "{report:#}");

    // From /, as a GUI host starts it, the same config fails, with the same warning.
    let out = run(
        Path::new("/"),
        &["check", "--json", "--config", &absolute],
        &[],
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{report:#}");
    assert_eq!(
        report["warnings"],
        json!([warning(Path::new("/"))]),
        "{report:#}"
    );

    // Serving, the start-up log says it too.
    let out = run(&dir, &["--config", "config.json"], &[]);
    assert!(
        text(&out.stderr).contains("'s.json' looks like a relative path"),
        "{}",
        text(&out.stderr)
    );
    assert!(leftover_processes(&dir).is_empty());
    let _ = fs::remove_dir_all(&dir);
}

/// A reader that went away (`check --json | head -1`) ends every command
/// that prints quietly: nothing on stderr, no panic, and the exit code its
/// work decided. The pipe's read end is closed before the command starts,
/// so its first write meets the broken pipe.
#[test]
fn a_closed_stdout_ends_each_command_quietly() {
    let dir = scratch("closed-stdout");
    let good = json!({"tools": [{"tool": {"name": "t", "inputSchema": {"type": "object"}}}]});
    fs::write(dir.join("good.json"), good.to_string()).unwrap();
    let config = json!({"toolboxes": {"box": {"description": "d", "mcpServers": {
        "good": {"command": FAKE, "args": ["good.json"], "cwd": "."}}}}});
    fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let state = dir.join("state").display().to_string();
    let cache = dir.join("cache").display().to_string();
    let commands: [&[&str]; 8] = [
        &["check", "--json"],
        &["check"],
        &["index"],
        &["learned"],
        &["pins"],
        &["pins", "diff"],
        &["--version"],
        &["--help"],
    ];
    for args in commands {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = workbench_in(&dir)
            .args(args)
            .args(["--config", "config.json"])
            .env("XDG_STATE_HOME", &state)
            .env("XDG_CACHE_HOME", &cache)
            .stdout(writer)
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert_eq!(stderr, "", "{args:?}");
    }
    assert!(leftover_processes(&dir).is_empty());
    let _ = fs::remove_dir_all(&dir);
}

/// A command that is not there says where it was looked for: the folders of
/// PATH for a bare name, the absolute path for a relative one (taken from
/// the config's folder), as `check` reports it and as the model reads it.
#[test]
#[cfg(unix)] // the harness's PATH is the system folders there
fn a_missing_command_says_where_it_was_looked_for() {
    let dir = scratch("missing-command");
    let config = json!({"toolboxes": {"box": {"description": "d", "mcpServers": {
        "bare": {"command": "no-such-mcp-server"},
        "relative": {"command": "bin/no-such-server"}}}}});
    fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let out = run(&dir, &["check", "--json", "--config", "config.json"], &[]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{report:#}");
    let reason = |i: usize| {
        report["toolboxes"][0]["servers"][i]["reason"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let folders = crate::harness::system_path().replace(':', ", ");
    assert!(
        reason(0).starts_with(&format!(
            "cannot start 'no-such-mcp-server': no 'no-such-mcp-server' in any folder of PATH ({folders}); "
        )),
        "{report:#}"
    );
    assert_eq!(
        reason(1),
        format!(
            "cannot start 'bin/no-such-server': {} does not exist (a relative command is taken \
             from the config file's folder)",
            dir.join("bin/no-such-server").display()
        ),
        "{report:#}"
    );
    // The model reads the same in the open result.
    let mut wb = Workbench::spawn_raw(dir.clone(), command(&dir, &[]), false);
    wb.send_line(INITIALIZE);
    assert!(wb.recv()["result"].is_object());
    let open = wb.open(1, "box", &mut Vec::new());
    let text = open["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("no 'no-such-mcp-server' in any folder of PATH"),
        "{open}"
    );
    wb.end(Duration::from_secs(10));
    let _ = fs::remove_dir_all(&dir);
}

/// A host's log shows one start-up line at info level: the version, the
/// config's absolute path and how many toolboxes it has. No terminal: no
/// word about waiting for a host.
#[test]
fn serving_logs_one_start_up_line() {
    let dir = scratch("start-up-line");
    let config = json!({"toolboxes": {
        "a": {"description": "d", "mcpServers": {}},
        "b": {"description": "d", "mcpServers": {}}}});
    fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let home = dir.display().to_string();
    let cmd = command(&dir, &[("RUST_LOG", "info"), ("HOME", &home)]);
    let mut wb = Workbench::spawn_raw(dir.clone(), cmd, false);
    wb.send_line(INITIALIZE);
    assert!(wb.recv()["result"].is_object());
    let line = format!(
        "mcp-workbench {} serving {} (2 toolboxes)",
        env!("CARGO_PKG_VERSION"),
        dir.join("config.json").display()
    );
    wb.expect_log(&line);
    let info: Vec<String> = wb
        .log()
        .lines()
        .filter(|l| l.starts_with("[INFO"))
        .map(str::to_string)
        .collect();
    assert_eq!(info.len(), 1, "{info:#?}");
    assert!(
        !wb.log().contains("waiting for an MCP host"),
        "{}",
        wb.log()
    );
    wb.end(Duration::from_secs(10));
    let _ = fs::remove_dir_all(&dir);
}

/// Run in a terminal (stdin a TTY, here `script`'s), the workbench says on
/// stderr what it waits for and how to try it; the end of the input ends it.
#[test]
#[cfg(target_os = "linux")] // util-linux `script` gives it a terminal
fn in_a_terminal_it_says_what_it_waits_for() {
    use std::io::Read;
    use std::process::Stdio;
    let dir = scratch("terminal");
    let config = json!({"toolboxes": {"a": {"description": "d", "mcpServers": {}}}});
    fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let serve = format!("{} --config config.json", crate::harness::WORKBENCH);
    let mut script = std::process::Command::new("script")
        .args(["-q", "-e", "-c", &serve, "/dev/null"])
        .current_dir(&dir)
        .env_clear()
        .env("PATH", crate::harness::system_path())
        .env("RUST_LOG", "off")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut terminal = script.stdout.take().unwrap();
    let (lines, seen) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = terminal.read(&mut buf) {
            all.extend_from_slice(&buf[..n]);
            let _ = lines.send(String::from_utf8_lossy(&all).into_owned());
        }
    });
    let notice = "mcp-workbench speaks MCP (JSON-RPC, one message per line) on stdin and stdout \
        and is waiting for an MCP host to talk to it; to try it from a terminal, run \
        `mcp-workbench check` (with --config PATH) instead; press Ctrl-C to quit";
    let mut shown = String::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while !shown.contains(notice) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match seen.recv_timeout(left) {
            Ok(text) => shown = text,
            Err(_) => break,
        }
    }
    // The end of the input: `script` passes it on, and the workbench stops.
    drop(script.stdin.take());
    let ended = crate::harness::wait_exit(&mut script, Duration::from_secs(10));
    if ended.is_none() {
        let _ = script.kill();
        let _ = script.wait();
    }
    assert!(shown.contains(notice), "the terminal showed: {shown:?}");
    assert_eq!(shown.matches(notice).count(), 1, "{shown:?}");
    assert!(ended.is_some(), "the workbench did not end with its input");
    assert!(leftover_processes(&dir).is_empty());
    let _ = fs::remove_dir_all(&dir);
}
