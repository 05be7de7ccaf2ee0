//! One fleet for every host session (docs/reference.md §8): several
//! workbench processes on one config with `"shareServers": true`, each a
//! host session of its own, sharing the servers of one fleet process.
//! Each test gives its sessions a runtime folder of their own
//! (`XDG_RUNTIME_DIR`), so its fleet is its own.

use crate::harness::*;
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A shared config: toolbox `dev` with server `s` (its starts counted in
/// `starts.log`) and `extra` top-level keys; the fleet lingers 300 ms.
fn shared_config(server: Value, extra: Value) -> Value {
    let mut config = json!({
        "shareServers": true,
        "shareLingerMs": 300,
        "toolboxes": {"dev": toolbox(json!({"s": server}))}
    });
    if let (Some(config), Some(extra)) = (config.as_object_mut(), extra.as_object()) {
        config.extend(extra.clone());
    }
    config
}

fn script() -> Value {
    counted(
        "starts.log",
        json!([
            tool("echo", json!({"env": ["MARKER"]})),
            tool("say", json!({})),
            tool("slow", json!({"delayMs": 30000, "reply": {"content": []}}))
        ]),
    )
}

/// How the fleet's log shows the `slow` call on its way to the server.
const SLOW_CALL: &str = r#""method":"tools/call","params":{"name":"slow""#;

/// The folder of a case and its runtime folder.
fn case(name: &str, config: &Value) -> (PathBuf, PathBuf) {
    let dir = case_dir(name, config, &[("fake.json", script())]);
    let run = dir.join("run");
    fs::create_dir(&run).unwrap();
    (dir, run)
}

/// A session (a workbench process) on the case's config, initialized.
fn session(dir: &Path, run: &Path, env: &[(&str, &str)]) -> Workbench {
    let mut all = vec![("XDG_RUNTIME_DIR", run.to_str().unwrap())];
    all.extend_from_slice(env);
    Workbench::initialized(dir, &all)
}

/// `mcp-workbench status --json` of the case: exit code and report.
fn status(dir: &Path, run: &Path) -> (Option<i32>, Value) {
    let out = workbench_in(dir)
        .args(["status", "--config", "config.json", "--json"])
        .env("XDG_RUNTIME_DIR", run)
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code(), report)
}

/// Waits for the status report to satisfy `done`.
fn status_until(dir: &Path, run: &Path, done: impl Fn(&Value) -> bool) -> Value {
    let mut last = Value::Null;
    wait_until(Duration::from_secs(10), || {
        last = status(dir, run).1;
        done(&last)
    });
    last
}

/// The fleet's log (it writes its stderr next to its socket).
fn fleet_log(run: &Path) -> String {
    fs::read_dir(run.join("mcp-workbench"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
        .map(|e| fs::read_to_string(e.path()).unwrap_or_default())
        .collect()
}

/// Ends the sessions and waits for the fleet (lingering 300 ms) and its
/// servers to be gone.
fn end_all(dir: &Path, run: &Path, sessions: Vec<Workbench>) {
    for mut wb in sessions {
        wb.end(Duration::from_secs(10));
    }
    let ended = wait_until(Duration::from_secs(10), || status(dir, run).0 == Some(1));
    assert!(ended, "the fleet outlived its linger");
    assert!(
        leftover_processes(dir).is_empty(),
        "{:?}",
        leftover_processes(dir)
    );
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn sessions_share_one_server_each_with_its_own_ids_and_holds() {
    let (dir, run) = case("shared-basic", &shared_config(fake("fake.json"), json!({})));
    let mut a = session(&dir, &run, &[]);
    let mut b = session(&dir, &run, &[]);
    a.open_ok(1, "dev");
    b.open_ok(1, "dev");
    assert_eq!(starts(&dir, "starts.log").len(), 1, "one process for both");
    // The same id in both sessions: each gets its own answer (the server
    // echoes the arguments, which tell the two apart).
    a.use_tool(7, "dev", "s", "say", json!({"from": "session-a"}));
    b.use_tool(7, "dev", "s", "say", json!({"from": "session-b"}));
    let (from_a, from_b) = (a.recv(), b.recv());
    assert_eq!((&from_a["id"], &from_b["id"]), (&json!(7), &json!(7)));
    assert!(text(&from_a).contains("session-a"), "{from_a}");
    assert!(text(&from_b).contains("session-b"), "{from_b}");
    let report = status_until(&dir, &run, |r| {
        r["sessions"].as_array().is_some_and(|s| s.len() == 2)
    });
    assert_eq!(report["servers"].as_array().unwrap().len(), 1, "{report}");
    let holders = report["servers"][0]["sessions"].as_array().unwrap().len();
    assert_eq!(holders, 2, "{report}");
    assert_eq!(report["sessions"][0]["toolboxes"], json!(["dev"]));
    assert_eq!(report["sessions"][0]["client"], "t");
    let checked = check(&dir, &[])
        .env("XDG_RUNTIME_DIR", &run)
        .output()
        .unwrap();
    let checked = String::from_utf8_lossy(&checked.stdout);
    assert!(checked.contains("shared by 2 session(s)"), "{checked}");
    // One session closes: the toolbox stays open for the other.
    a.call(2, "close_toolbox", json!({"toolbox_name": "dev"}));
    let closed = a.recv();
    assert!(
        text(&closed).contains("1 other session holds it, so it stays open"),
        "{closed}"
    );
    b.use_tool(3, "dev", "s", "echo", json!({}));
    assert!(!is_error(&b.recv()), "still served for b");
    let report = status_until(&dir, &run, |r| {
        r["servers"][0]["sessions"] == json!([b.pid()])
    });
    assert_eq!(report["sessions"][0]["toolboxes"], json!([]), "{report}");
    // The last holder closes: the server stops.
    b.call(5, "close_toolbox", json!({"toolbox_name": "dev"}));
    assert_eq!(text(&b.recv()), "Toolbox 'dev' closed (1 server stopped)");
    assert_eq!(
        starts(&dir, "starts.log").len(),
        2,
        "the fleet's one, and check's"
    );
    end_all(&dir, &run, vec![a, b]);
}

#[test]
fn expansions_that_differ_and_unshared_servers_get_processes_of_their_own() {
    let mut server = fake("fake.json");
    server["env"] = json!({"MARKER": "${MARK}"});
    let (dir, run) = case("shared-variants", &shared_config(server, json!({})));
    let mut a = session(&dir, &run, &[("MARK", "one")]);
    let mut b = session(&dir, &run, &[("MARK", "two")]);
    let mut c = session(&dir, &run, &[("MARK", "one")]);
    for wb in [&mut a, &mut b, &mut c] {
        wb.open_ok(1, "dev");
        wb.use_tool(2, "dev", "s", "echo", json!({}));
    }
    assert_eq!(text(&a.recv()), "MARKER=one");
    assert_eq!(text(&b.recv()), "MARKER=two");
    assert_eq!(text(&c.recv()), "MARKER=one");
    assert_eq!(starts(&dir, "starts.log").len(), 2, "one per expansion");
    // status says why, by name and without the values.
    let report = status_until(&dir, &run, |r| {
        r["servers"].as_array().is_some_and(|s| s.len() == 2)
    });
    for server in report["servers"].as_array().unwrap() {
        let why = server["separate"].as_str().unwrap_or_default();
        assert!(
            why.ends_with("hold a separate copy: its env.MARKER differs"),
            "{report}"
        );
    }
    assert!(!report.to_string().contains("one\""), "{report}");
    end_all(&dir, &run, vec![a, b, c]);

    let mut server = fake("fake.json");
    server["shareServers"] = json!(false);
    let (dir, run) = case("shared-opt-out", &shared_config(server, json!({})));
    let mut a = session(&dir, &run, &[]);
    let mut b = session(&dir, &run, &[]);
    a.open_ok(1, "dev");
    b.open_ok(1, "dev");
    assert_eq!(starts(&dir, "starts.log").len(), 2, "one per session");
    end_all(&dir, &run, vec![a, b]);
}

/// Sessions whose `PATH`s differ (a desktop-launched host's and a
/// terminal's) share a server whose command resolves to the same program.
#[test]
fn sessions_whose_path_differs_share_a_server_that_resolves_alike() {
    let (dir, run) = case("shared-path", &shared_config(fake("fake.json"), json!({})));
    let short = system_path();
    let long = format!(
        "{short}{}{}",
        if cfg!(windows) { ';' } else { ':' },
        dir.join("bin").display()
    );
    let mut a = session(&dir, &run, &[("PATH", &short)]);
    let mut b = session(&dir, &run, &[("PATH", &long)]);
    a.open_ok(1, "dev");
    b.open_ok(1, "dev");
    assert_eq!(starts(&dir, "starts.log").len(), 1, "one process for both");
    let report = status_until(&dir, &run, |r| {
        r["servers"][0]["sessions"]
            .as_array()
            .is_some_and(|s| s.len() == 2)
    });
    assert_eq!(
        report["servers"].as_array().map(Vec::len),
        Some(1),
        "{report}"
    );
    assert!(report["servers"][0].get("separate").is_none(), "{report}");
    end_all(&dir, &run, vec![a, b]);
}

/// A toolbox with a server that is not shared (`"shareServers": false`)
/// beside one that is: the first runs a process per session, the second
/// stays one process for all, and each session's open lists both; closing
/// stops the session's own server and leaves the shared one to the others.
#[test]
fn an_unshared_server_is_each_sessions_own_and_its_neighbours_stay_shared() {
    let script = |log: &str| counted(log, json!([tool("echo", json!({"env": ["MARKER"]}))]));
    let mut own = fake("own.json");
    own["shareServers"] = json!(false);
    let config = json!({
        "shareServers": true,
        "shareLingerMs": 300,
        "toolboxes": {"dev": toolbox(json!({"s": fake("shared.json"), "own": own}))}
    });
    let files = [
        ("shared.json", script("shared.log")),
        ("own.json", script("own.log")),
    ];
    let dir = case_dir("shared-mixed", &config, &files);
    let run = dir.join("run");
    fs::create_dir(&run).unwrap();
    let mut a = session(&dir, &run, &[]);
    let mut b = session(&dir, &run, &[]);
    for wb in [&mut a, &mut b] {
        let open = wb.open_ok(1, "dev");
        let tools = &open["result"]["structuredContent"];
        assert_eq!(tools["servers_connected"], 2, "{open}");
        let servers: Vec<&Value> = tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| &t["source_server"])
            .collect();
        // Config order (the config's keys are sorted): not the copies' order.
        assert_eq!(servers, [&json!("own"), &json!("s")], "{open}");
        wb.use_tool(2, "dev", "own", "echo", json!({}));
        assert!(!is_error(&wb.recv()));
        wb.use_tool(3, "dev", "s", "echo", json!({}));
        assert!(!is_error(&wb.recv()));
    }
    assert_eq!(starts(&dir, "shared.log").len(), 1, "one shared process");
    assert_eq!(
        starts(&dir, "own.log").len(),
        2,
        "one own process per session"
    );
    // A reload that changes another toolbox leaves the copies as they are.
    let mut more = config.clone();
    more["toolboxes"]["other"] = toolbox(json!({}));
    fs::write(dir.join("config.json"), more.to_string()).unwrap();
    let reloaded = wait_until(Duration::from_secs(10), || {
        fleet_log(&run).contains("config reloaded: 2 toolboxes")
    });
    assert!(reloaded, "{}", fleet_log(&run));
    assert!(
        fleet_log(&run).contains("changed: []"),
        "{}",
        fleet_log(&run)
    );
    let report = status(&dir, &run).1;
    let rows = report["servers"].as_array().unwrap();
    let shared: Vec<&Value> = rows.iter().filter(|r| r["server"] == "s").collect();
    assert_eq!(shared.len(), 1, "{report}");
    assert_eq!(shared[0]["sessions"], json!([a.pid(), b.pid()]), "{report}");
    // a closes: its own server stops; the shared one stays for b.
    a.call(4, "close_toolbox", json!({"toolbox_name": "dev"}));
    let closed = a.answer(4, &mut Vec::new());
    assert_eq!(
        text(&closed),
        "Toolbox 'dev' closed (1 server stopped): 1 other session holds it, so it stays open for them",
        "{closed}"
    );
    let report = status_until(&dir, &run, |r| {
        r["servers"].as_array().is_some_and(|s| s.len() == 2)
    });
    b.use_tool(5, "dev", "s", "echo", json!({}));
    assert!(!is_error(&b.answer(5, &mut Vec::new())), "{report}");
    a.call(6, "close_toolbox", json!({"toolbox_name": "dev"}));
    let closed = a.answer(6, &mut Vec::new());
    assert_eq!(text(&closed), "Toolbox 'dev' is not open");
    // a's use_tool starts only its own copy's server again.
    a.use_tool(7, "dev", "own", "echo", json!({}));
    assert!(!is_error(&a.answer(7, &mut Vec::new())));
    assert_eq!(starts(&dir, "own.log").len(), 3);
    assert_eq!(starts(&dir, "shared.log").len(), 1);
    end_all(&dir, &run, vec![a, b]);
}

#[test]
fn sessions_starting_together_start_one_fleet() {
    let (dir, run) = case("shared-race", &shared_config(fake("fake.json"), json!({})));
    let sessions: Vec<Workbench> = (0..4)
        .map(|_| {
            let mut all = vec![("XDG_RUNTIME_DIR", run.to_str().unwrap())];
            all.push(("RUST_LOG", "info"));
            Workbench::spawn_raw(dir.clone(), command(&dir, &all), false)
        })
        .collect();
    let mut sessions: Vec<Workbench> = sessions
        .into_iter()
        .map(|mut wb| {
            wb.send_line(INITIALIZE);
            wb.init = wb.recv();
            wb
        })
        .collect();
    for wb in &mut sessions {
        wb.open_ok(1, "dev");
    }
    let report = status_until(&dir, &run, |r| {
        r["sessions"].as_array().is_some_and(|s| s.len() == 4)
    });
    assert_eq!(report["sessions"].as_array().unwrap().len(), 4, "{report}");
    assert_eq!(
        processes_with(&dir, " fleet ").len(),
        1,
        "{:?}",
        processes_with(&dir, " fleet ")
    );
    assert_eq!(starts(&dir, "starts.log").len(), 1);
    end_all(&dir, &run, sessions);
}

#[test]
fn a_session_killed_mid_call_is_dropped_and_its_call_cancelled() {
    let (dir, run) = case(
        "shared-session-killed",
        &shared_config(fake("fake.json"), json!({})),
    );
    let mut a = session(&dir, &run, &[]);
    let mut b = session(&dir, &run, &[]);
    a.open_ok(1, "dev");
    b.open_ok(1, "dev");
    a.use_tool(2, "dev", "s", "slow", json!({}));
    assert!(wait_until(Duration::from_secs(10), || fleet_log(&run)
        .contains(SLOW_CALL)));
    a.child.kill().unwrap();
    a.child.wait().unwrap();
    let cancelled = wait_until(Duration::from_secs(10), || {
        fleet_log(&run).contains("notifications/cancelled")
    });
    assert!(
        cancelled,
        "the killed session's call is cancelled downstream: {}",
        fleet_log(&run)
    );
    let report = status_until(&dir, &run, |r| {
        r["sessions"].as_array().is_some_and(|s| s.len() == 1)
    });
    assert_eq!(
        report["servers"][0]["sessions"],
        json!([b.pid()]),
        "{report}"
    );
    b.use_tool(3, "dev", "s", "echo", json!({}));
    assert!(!is_error(&b.recv()), "the other session is untouched");
    end_all(&dir, &run, vec![a, b]);
}

#[test]
fn a_fleet_killed_mid_call_fails_the_call_at_once_and_the_next_request_starts_another() {
    let (dir, run) = case(
        "shared-fleet-killed",
        &shared_config(fake("fake.json"), json!({})),
    );
    let mut a = session(&dir, &run, &[]);
    a.open_ok(1, "dev");
    let report = status(&dir, &run).1;
    let (fleet, server) = (
        report["pid"].as_u64().unwrap() as u32,
        report["servers"][0]["pid"].as_u64().unwrap() as u32,
    );
    a.use_tool(2, "dev", "s", "slow", json!({}));
    assert!(wait_until(Duration::from_secs(10), || fleet_log(&run)
        .contains(SLOW_CALL)));
    signal(fleet, "KILL");
    fleet_loss_answered_at_once(&mut a, 2);
    assert!(gone(server), "nothing the fleet started survives it");
    // The session stays up; its next call starts a new fleet (over the stale
    // socket) and re-opens its toolbox first.
    a.use_tool(3, "dev", "s", "echo", json!({}));
    let again = a.recv();
    assert!(!is_error(&again), "{again}");
    assert_eq!(starts(&dir, "starts.log").len(), 2);
    assert_ne!(status(&dir, &run).1["pid"], json!(fleet));
    end_all(&dir, &run, vec![a]);
}

/// After the fleet dies, the host's next lines are read at once: a `ping`
/// is answered while the session's toolbox, whose server is slow to start,
/// re-opens in the new fleet; a call to it waits for that open there.
#[test]
fn after_the_fleet_died_a_ping_is_answered_while_toolboxes_reopen() {
    let mut script = script();
    script["initializeDelayMs"] = json!(3000);
    let config = shared_config(fake("fake.json"), json!({}));
    let dir = case_dir("shared-reopen-ping", &config, &[("fake.json", script)]);
    let run = dir.join("run");
    fs::create_dir(&run).unwrap();
    let mut a = session(&dir, &run, &[]);
    a.open_ok(1, "dev");
    let fleet = status(&dir, &run).1["pid"].as_u64().unwrap() as u32;
    signal(fleet, "KILL");
    // Once the front saw the fleet end, the ping starts the new fleet,
    // which starts re-opening `dev`.
    let noticed = wait_until(Duration::from_secs(10), || {
        a.log().contains("the shared fleet ended")
    });
    assert!(noticed, "{}", a.log());
    let ping = a.request(2, "ping", json!({}));
    assert_eq!(ping["result"], json!({}), "{ping}");
    assert!(
        !fleet_log(&run).contains("toolbox 'dev' open"),
        "answered before the re-open ended:\n{}",
        fleet_log(&run)
    );
    a.use_tool(3, "dev", "s", "echo", json!({}));
    let echo = a.recv();
    assert!(!is_error(&echo), "{echo}");
    assert_eq!(starts(&dir, "starts.log").len(), 2, "re-opened once");
    end_all(&dir, &run, vec![a]);
}

/// A host's id that looks like the front's own is the host's: answered.
#[test]
fn a_host_id_like_the_fronts_own_is_answered() {
    let (dir, run) = case(
        "shared-own-ids",
        &shared_config(fake("fake.json"), json!({})),
    );
    let mut a = session(&dir, &run, &[]);
    for id in ["mcp-workbench/front/initialize", "mcp-workbench/front/x"] {
        a.send(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
        let answer = a.recv_within(Duration::from_secs(10));
        assert_eq!(
            answer.as_ref().map(|a| &a["id"]),
            Some(&json!(id)),
            "{answer:?}\n{}",
            a.log()
        );
    }
    end_all(&dir, &run, vec![a]);
}

/// Sessions that attach just as the fleet lingers out (a 1 ms linger, each
/// session started as the one before it ends) are each counted by the
/// fleet or refused by it, so their front starts the next fleet: every
/// `initialize` is answered with a result.
#[test]
fn sessions_attaching_as_the_fleet_lingers_out_are_answered() {
    let config = shared_config(fake("fake.json"), json!({"shareLingerMs": 1}));
    let (dir, run) = case("shared-linger-race", &config);
    let mut before = session(&dir, &run, &[]);
    for round in 0..40 {
        let mut next = Workbench::spawn_raw(
            dir.clone(),
            command(&dir, &[("XDG_RUNTIME_DIR", run.to_str().unwrap())]),
            false,
        );
        before.end(Duration::from_secs(10));
        next.send_line(INITIALIZE);
        let init = next.recv();
        assert!(
            init["result"].is_object(),
            "round {round}: {init}\n{}\n{}",
            next.log(),
            fleet_log(&run)
        );
        before = next;
    }
    end_all(&dir, &run, vec![before]);
}

#[test]
fn the_fleet_lingers_after_its_last_session_and_its_servers_stop_with_their_holds() {
    let config = shared_config(fake("fake.json"), json!({"shareLingerMs": 1500}));
    let (dir, run) = case("shared-linger", &config);
    let mut a = session(&dir, &run, &[]);
    a.open_ok(1, "dev");
    a.end(Duration::from_secs(10));
    // No session holds the toolbox: its server stops; the fleet lingers, and
    // a new session within the linger finds it.
    let fleet = status(&dir, &run).1["pid"].clone();
    assert!(fleet.is_u64(), "the fleet lingers");
    assert!(status_until(&dir, &run, |r| r["servers"] == json!([]))["servers"] == json!([]));
    let mut b = session(&dir, &run, &[]);
    b.open_ok(1, "dev");
    assert_eq!(status(&dir, &run).1["pid"], fleet, "the same fleet");
    assert_eq!(starts(&dir, "starts.log").len(), 2);
    let server = status(&dir, &run).1["servers"][0]["pid"].as_u64().unwrap() as u32;
    end_all(&dir, &run, vec![b]);
    assert!(gone(server));
}

#[test]
fn status_shows_each_running_servers_era() {
    // Toolbox `dev`: `s` (the legacy fake) and `m`, a modern-only fake
    // reached through the era bridge (docs/reference.md §7.1.1).
    let mut config = shared_config(fake("fake.json"), json!({}));
    config["toolboxes"]["dev"]["mcpServers"]["m"] = fake("modern.json");
    let (dir, run) = case("shared-era", &config);
    let modern = json!({"legacyVersions": [], "modernVersions": ["2026-07-28"],
        "tools": [tool("echo", json!({}))]});
    fs::write(dir.join("modern.json"), modern.to_string()).unwrap();
    let mut a = session(&dir, &run, &[]);
    a.open_ok(1, "dev");
    a.use_tool(2, "dev", "m", "echo", json!({"x": 1}));
    assert_eq!(text(&a.recv()), r#"echo {"x":1}"#);
    let report = status_until(&dir, &run, |r| {
        r["servers"].as_array().is_some_and(|s| s.len() == 2)
    });
    let era = |name: &str| {
        report["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["server"] == name)
            .map(|s| s["era"].clone())
    };
    assert_eq!(era("s"), Some(json!("legacy 2025-11-25")), "{report}");
    assert_eq!(era("m"), Some(json!("modern 2026-07-28")), "{report}");
    let out = workbench_in(&dir)
        .args(["status", "--config", "config.json"])
        .env("XDG_RUNTIME_DIR", &run)
        .output()
        .unwrap();
    let human = String::from_utf8_lossy(&out.stdout);
    assert!(
        human.contains("dev/m running (modern 2026-07-28) pid "),
        "{human}"
    );
    end_all(&dir, &run, vec![a]);
}

#[test]
fn status_without_a_fleet_exits_1_with_one_line() {
    let (dir, run) = case(
        "shared-no-fleet",
        &shared_config(fake("fake.json"), json!({})),
    );
    let out = workbench_in(&dir)
        .args(["status", "--config", "config.json"])
        .env("XDG_RUNTIME_DIR", &run)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("no shared fleet runs for"), "{stderr}");
    // A config that does not share servers has no fleet to show: it says so,
    // and how to turn sharing on.
    let mut alone = shared_config(fake("fake.json"), json!({}));
    alone["shareServers"] = json!(false);
    fs::write(dir.join("config.json"), alone.to_string()).unwrap();
    let out = workbench_in(&dir)
        .args(["status", "--config", "config.json"])
        .env("XDG_RUNTIME_DIR", &run)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("does not share servers (\"shareServers\" is not true)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("set \"shareServers\": true at the top level of the config"),
        "{stderr}"
    );
    let _ = fs::remove_dir_all(&dir);
}

/// A fleet with no session says how long its linger has left.
#[test]
fn status_of_a_fleet_without_sessions_says_when_it_ends() {
    let config = shared_config(fake("fake.json"), json!({"shareLingerMs": 600_000}));
    let (dir, run) = case("shared-linger-status", &config);
    let mut a = session(&dir, &run, &[]);
    a.open_ok(1, "dev");
    let attached = status(&dir, &run).1;
    assert_eq!(attached["sessions"].as_array().map(Vec::len), Some(1));
    assert!(attached.get("endsInMs").is_none(), "{attached}");
    a.end(Duration::from_secs(10));
    let report = status_until(&dir, &run, |r| r["sessions"] == json!([]));
    let ends = report["endsInMs"].as_u64().unwrap_or_default();
    assert!(ends > 0 && ends <= 600_000, "{report}");
    let out = workbench_in(&dir)
        .args(["status", "--config", "config.json"])
        .env("XDG_RUNTIME_DIR", &run)
        .output()
        .unwrap();
    let human = String::from_utf8_lossy(&out.stdout);
    assert!(human.contains("\nno sessions; ends in "), "{human}");
    assert!(human.contains(" s unless one attaches\n"), "{human}");
    // Not waiting out the linger: the fleet stops on SIGTERM.
    signal(report["pid"].as_u64().unwrap() as u32, "TERM");
    let ended = wait_until(Duration::from_secs(10), || status(&dir, &run).0 == Some(1));
    assert!(ended, "{}", fleet_log(&run));
    assert!(
        leftover_processes(&dir).is_empty(),
        "{:?}",
        leftover_processes(&dir)
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_runtime_folder_others_may_enter_is_refused_and_the_session_served_alone() {
    let (dir, run) = case(
        "shared-open-folder",
        &shared_config(fake("fake.json"), json!({})),
    );
    let folder = run.join("mcp-workbench");
    fs::create_dir(&folder).unwrap();
    Command::new("chmod")
        .arg("755")
        .arg(&folder)
        .status()
        .unwrap();
    let mut a = session(&dir, &run, &[]);
    a.open_ok(1, "dev");
    a.expect_log("not a folder of this user's alone");
    assert!(
        fs::read_dir(&folder).unwrap().next().is_none(),
        "no fleet in it"
    );
    a.finish_clean(Duration::from_secs(10));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_peer_of_another_user_is_refused() {
    // Only root can act as another user here.
    if status_field(std::process::id(), "Uid").is_none_or(|uid| !uid.starts_with("0\t")) {
        eprintln!("skipped: not root");
        return;
    }
    let (dir, run) = case(
        "shared-other-user",
        &shared_config(fake("fake.json"), json!({})),
    );
    let mut a = session(&dir, &run, &[]);
    a.open_ok(1, "dev");
    let folder = run.join("mcp-workbench");
    let socket = fs::read_dir(&folder)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "sock"))
        .unwrap();
    // Let user 65534 reach the socket, as a mistaken chmod would.
    Command::new("chmod")
        .arg("711")
        .args([&run, &folder, &dir])
        .status()
        .unwrap();
    Command::new("chmod")
        .arg("777")
        .arg(&socket)
        .status()
        .unwrap();
    // It connects, says hello, and prints how many bytes it got back.
    let probe = format!(
        "import os, socket\n\
         os.setgid(65534); os.setuid(65534)\n\
         s = socket.socket(socket.AF_UNIX)\n\
         s.connect({:?})\n\
         try:\n    \
             s.sendall(b'{{\"version\":\"{}\",\"role\":\"status\",\"pid\":1}}\\n')\n    \
             print(len(s.recv(100000)))\n\
         except (BrokenPipeError, ConnectionResetError):\n    \
             print(0)\n",
        socket.to_str().unwrap(),
        env!("CARGO_PKG_VERSION")
    );
    let out = Command::new("python3")
        .args(["-c", &probe])
        .output()
        .unwrap();
    Command::new("chmod")
        .arg("700")
        .args([&folder])
        .status()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "0",
        "closed without a word"
    );
    assert!(fleet_log(&run).contains("refused a connection from uid 65534"));
    end_all(&dir, &run, vec![a]);
}

#[test]
fn progress_and_cancellation_stay_in_their_session() {
    let script = json!({"tools": [
        tool("long", json!({"delayMs": 30000, "reply": {"content": []}})),
        tool("work", json!({"progress": [{"progress": 1}], "progressIntervalMs": 1000, "reply": {"content": []}}))
    ]});
    let (dir, run) = case(
        "shared-progress",
        &shared_config(fake("work.json"), json!({})),
    );
    fs::write(dir.join("work.json"), script.to_string()).unwrap();
    let mut a = session(&dir, &run, &[]);
    let mut b = session(&dir, &run, &[]);
    a.open_ok(1, "dev");
    b.open_ok(1, "dev");
    // The same request id and the same progress token in both sessions.
    let call = |tool: &str| {
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "use_tool",
        "arguments": {"tool": {"toolbox": "dev", "server": "s", "tool": tool}},
        "_meta": {"progressToken": "p"}}})
    };
    a.send(call("long"));
    assert!(wait_until(Duration::from_secs(10), || fleet_log(&run)
        .contains(r#""params":{"name":"long""#)));
    // a cancels its request 9 while b's request 9 runs: b is answered, a is not.
    b.send(call("work"));
    a.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}),
    );
    let progress = b.recv();
    assert_eq!(progress["method"], "notifications/progress", "{progress}");
    assert_eq!(progress["params"]["progressToken"], "p");
    let answer = b.recv();
    assert_eq!(answer["id"], 9, "{answer}");
    assert!(!is_error(&answer), "{answer}");
    assert!(
        fleet_log(&run).contains("notifications/cancelled"),
        "a's cancel reached the server"
    );
    let rest = a.lines_until_quiet(Duration::from_millis(1000));
    assert!(
        rest.is_empty(),
        "a's cancelled call gets no answer, nor b's progress: {rest:?}"
    );
    end_all(&dir, &run, vec![a, b]);
}

#[test]
fn each_session_sees_native_tools_of_the_toolboxes_it_opened_and_every_reload() {
    let config = shared_config(fake("fake.json"), json!({"mode": "dynamic"}));
    let (dir, run) = case("shared-dynamic", &config);
    let mut a = session(&dir, &run, &[]);
    let mut b = session(&dir, &run, &[]);
    a.open_ok(1, "dev");
    let natives = |wb: &mut Workbench| {
        let list = wb.request(50, "tools/list", json!({}));
        list["result"]["tools"].as_array().unwrap().len()
    };
    let (a_tools, b_tools) = (natives(&mut a), natives(&mut b));
    assert_eq!(
        a_tools,
        b_tools + 3,
        "a sees echo, say and slow; b only the meta-tools"
    );
    let b_lines = b.lines_until_quiet(Duration::from_millis(300));
    assert_eq!(list_changed(&b_lines), 0, "a's open changes nothing for b");
    // A reload reaches every session, each with its own list_changed.
    let mut changed = config.clone();
    changed["toolboxes"]["dev"]["description"] = json!("changed");
    save_config(&dir, &changed);
    for wb in [&mut a, &mut b] {
        let mut lines = Vec::new();
        wb.wait_list_changed(&mut lines);
        lines.extend(wb.lines_until_quiet(Duration::from_millis(1500)));
        assert_eq!(list_changed(&lines), 0, "one list_changed only: {lines:?}");
    }
    end_all(&dir, &run, vec![a, b]);
}

#[test]
fn use_tool_without_open_makes_the_sessions_own_copy_and_holds_it() {
    let mut server = fake("fake.json");
    server["env"] = json!({"MARKER": "${MARK}"});
    let (dir, run) = case("shared-use-unopened", &shared_config(server, json!({})));
    let mut a = session(&dir, &run, &[("MARK", "one")]);
    let mut b = session(&dir, &run, &[("MARK", "two")]);
    a.use_tool(1, "dev", "s", "echo", json!({}));
    assert_eq!(text(&a.recv()), "MARKER=one");
    // b's expansion differs: its call starts its own copy, never a's process.
    b.use_tool(1, "dev", "s", "echo", json!({}));
    assert_eq!(text(&b.recv()), "MARKER=two");
    assert_eq!(starts(&dir, "starts.log").len(), 2, "one per expansion");
    // Each session holds the toolbox its call opened.
    let report = status_until(&dir, &run, |r| {
        r["sessions"].as_array().is_some_and(|s| s.len() == 2)
            && r["servers"].as_array().is_some_and(|s| s.len() == 2)
    });
    for session in report["sessions"].as_array().unwrap() {
        assert_eq!(session["toolboxes"], json!(["dev"]), "{report}");
    }
    // The one catalog of the fleet, searched with each session's expansion.
    for wb in [&mut a, &mut b] {
        wb.call(2, "find_tools", json!({"query": "echo"}));
        let found = wb.recv()["result"]["structuredContent"].clone();
        assert_eq!(found["tools"][0]["tool"], "echo", "{found}");
        assert!(found.get("not_indexed").is_none(), "{found}");
    }
    // a leaves: its hold goes, and with it its copy's server.
    a.end(Duration::from_secs(10));
    let report = status_until(&dir, &run, |r| {
        r["servers"].as_array().is_some_and(|s| s.len() == 1)
    });
    assert_eq!(report["servers"].as_array().unwrap().len(), 1, "{report}");
    end_all(&dir, &run, vec![a, b]);
}

/// A session that leaves while its `use_tool` starts a server (of a toolbox
/// it never opened) leaves nothing running: the start's toolbox closes.
#[test]
fn a_session_leaving_while_use_tool_starts_its_server_leaves_none_running() {
    let mut script = script();
    script["initializeDelayMs"] = json!(1500);
    let config = shared_config(fake("fake.json"), json!({}));
    let dir = case_dir("shared-use-leaves", &config, &[("fake.json", script)]);
    let run = dir.join("run");
    fs::create_dir(&run).unwrap();
    let mut a = session(&dir, &run, &[]);
    let b = session(&dir, &run, &[]);
    a.use_tool(1, "dev", "s", "echo", json!({}));
    // Leave once the server is starting (its start is counted first thing).
    assert!(wait_until(Duration::from_secs(10), || !starts(
        &dir,
        "starts.log"
    )
    .is_empty()));
    a.child.kill().unwrap();
    a.child.wait().unwrap();
    // Wait for the start to be over, then for nothing to run.
    let over = wait_until(Duration::from_secs(15), || {
        let log = fleet_log(&run);
        log.contains("started for a call") || log.contains("the session it started for left")
    });
    assert!(over, "{}", fleet_log(&run));
    let report = status_until(&dir, &run, |r| {
        r["sessions"].as_array().is_some_and(|s| s.len() == 1)
            && r["servers"].as_array().is_some_and(|s| s.is_empty())
    });
    assert_eq!(
        report["servers"],
        json!([]),
        "{report}\n{}",
        fleet_log(&run)
    );
    end_all(&dir, &run, vec![a, b]);
}

#[test]
fn a_servers_log_messages_go_to_the_fleets_log_not_to_a_session() {
    let script = json!({"tools": [tool("talk", json!({
        "stdout": [{"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "info", "data": "said-by-the-server"}}],
        "reply": {"content": []}
    }))]});
    let (dir, run) = case("shared-logs", &shared_config(fake("talk.json"), json!({})));
    fs::write(dir.join("talk.json"), script.to_string()).unwrap();
    // At info, the fleet does not log the server's lines themselves.
    let mut a = session(&dir, &run, &[("RUST_LOG", "info")]);
    a.open_ok(1, "dev");
    a.use_tool(2, "dev", "s", "talk", json!({}));
    // The server writes its log before its answer: what a host would get of
    // it comes before the answer, or just after.
    let mut lines = Vec::new();
    a.answer(2, &mut lines);
    lines.extend(a.lines_until_quiet(Duration::from_millis(500)));
    assert!(
        lines.iter().all(|l| l["method"] != "notifications/message"),
        "no host gets it: {lines:?}"
    );
    let logged = wait_until(Duration::from_secs(5), || {
        fleet_log(&run).contains("said-by-the-server")
    });
    assert!(logged, "the fleet's log has it");
    end_all(&dir, &run, vec![a]);
}

#[test]
fn a_large_result_reaches_its_session_whole() {
    // Larger than a socket takes at once: part goes straight out, the rest
    // through the session's writer.
    let script = json!({"tools": [tool("big", json!({"textBytes": 3_000_000}))]});
    let (dir, run) = case("shared-large", &shared_config(fake("big.json"), json!({})));
    fs::write(dir.join("big.json"), script.to_string()).unwrap();
    let mut a = session(&dir, &run, &[("RUST_LOG", "info")]);
    a.open_ok(1, "dev");
    for id in [2, 3] {
        a.use_tool(id, "dev", "s", "big", json!({}));
        let answer = a.recv();
        assert_eq!(answer["id"], id);
        assert_eq!(text(&answer).len(), 3_000_000, "whole and in order");
    }
    end_all(&dir, &run, vec![a]);
}
