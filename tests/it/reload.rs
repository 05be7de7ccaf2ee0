//! The config applies live: a file renamed over the config (as editors save)
//! or SIGUSR1 loads it again; added, removed and changed toolboxes and
//! servers apply without tearing down what did not change or what is in
//! flight; a config with errors changes nothing.
//!
//! Every wait for an event has a deadline of seconds (the file is polled
//! every second); no assertion bounds how fast anything happens.

use crate::harness::{
    alive, counted, fake, gone, is_error, list_changed, save_config as save, signal, starts, text,
    tool, wait_until, Workbench, EVENT_WAIT,
};
use serde_json::{json, Value};
use std::fs;
use std::time::Duration;

/// A script that appends its pid to `log` at every start, with an `echo`
/// tool, an `env` tool that shows `VALUE`, and a `slow` one.
fn script(log: &str) -> Value {
    counted(
        log,
        json!([
            tool("echo", json!({})),
            tool("env", json!({"env": ["VALUE"]})),
            tool("slow", json!({"delayMs": 2000}))
        ]),
    )
}

const RELOADED: &str = "config reloaded:";
const REFUSED: &str = "the config was not reloaded";

/// Saves `config` and sends SIGUSR1; waits until the workbench logged
/// `outcome` for the `n`-th time.
fn reload(wb: &Workbench, config: &Value, outcome: &str, n: usize) {
    save(&wb.dir, config);
    signal(wb.pid(), "USR1");
    assert!(
        wb.wait_log(outcome, n, EVENT_WAIT),
        "no {outcome:?} in the log"
    );
}

fn toolbox_enum(list: &Value) -> Value {
    list["result"]["tools"][0]["inputSchema"]["properties"]["toolbox_name"]["enum"].clone()
}

/// The file watch alone (no signal): a toolbox added, one removed (its
/// server stopped), one described anew; one `list_changed`.
#[test]
fn a_saved_config_adds_removes_and_describes_toolboxes_with_one_list_changed() {
    let config = json!({"toolboxes": {
        "keep": {"description": "old words", "mcpServers": {"k": fake("k.json")}},
        "gone": {"description": "d", "mcpServers": {"g": fake("g.json")}}}});
    let files = [("k.json", script("k.log")), ("g.json", script("g.log"))];
    let mut wb = Workbench::start("reload-toolboxes", config, &files, &[]);
    let mut others = Vec::new();
    wb.open(1, "keep", &mut others);
    wb.open(2, "gone", &mut others);
    let gone_pid = starts(&wb.dir, "g.log")[0];

    let new = json!({"toolboxes": {
        "keep": {"description": "new words", "mcpServers": {"k": fake("k.json")}},
        "added": {"description": "fresh", "mcpServers": {"a": fake("k.json")}}}});
    save(&wb.dir, &new);
    wb.wait_list_changed(&mut others);
    // The log names what was added as well as what changed and went.
    wb.expect_log("config reloaded: 2 toolboxes; added: [added]; changed: [keep]; removed: [gone]");

    // json! sorts keys: the config lists added, then keep.
    let list = wb.request(3, "tools/list", json!({}));
    assert_eq!(toolbox_enum(&list), json!(["added", "keep"]));
    let description = list["result"]["tools"][0]["description"].as_str().unwrap();
    assert!(
        description.contains("Toolboxes: added (fresh); keep (new words)."),
        "{description}"
    );
    let removed = wb.open(4, "gone", &mut others);
    assert!(is_error(&removed));
    assert_eq!(
        text(&removed),
        "Toolbox 'gone' not found in configuration. Available toolboxes: added, keep"
    );
    assert!(gone(gone_pid), "the removed toolbox's server still runs");
    let kept = wb.open(5, "keep", &mut others);
    assert_eq!(
        kept["result"]["structuredContent"]["description"],
        "new words"
    );
    assert_eq!(
        starts(&wb.dir, "k.log").len(),
        1,
        "an unchanged server keeps its process"
    );
    let added = wb.open(6, "added", &mut others);
    assert_eq!(added["result"]["structuredContent"]["servers_connected"], 1);
    others.extend(wb.lines_until_quiet(Duration::from_millis(2500)));
    assert_eq!(
        list_changed(&others),
        0,
        "one list_changed only: {others:?}"
    );
    assert_eq!(wb.finish().0, Some(0));
}

#[test]
fn a_changed_server_restarts_at_its_next_use_and_the_others_keep_their_processes() {
    let config = |value: &str| {
        let mut b = fake("b.json");
        b["env"] = json!({"VALUE": value});
        json!({"toolboxes": {"t": {"description": "d", "mcpServers": {"a": fake("a.json"), "b": b}}}})
    };
    let files = [("a.json", script("a.log")), ("b.json", script("b.log"))];
    let mut wb = Workbench::start("reload-servers", config("one"), &files, &[]);
    let mut others = Vec::new();
    wb.open(1, "t", &mut others);
    wb.use_tool(2, "t", "b", "env", json!({}));
    assert_eq!(text(&wb.answer(2, &mut others)), "VALUE=one");
    let (a, b) = (starts(&wb.dir, "a.log")[0], starts(&wb.dir, "b.log")[0]);

    reload(&wb, &config("two"), RELOADED, 1);
    // Nothing in flight: the old process stops at once.
    assert!(gone(b), "the changed server's old process still runs");
    assert!(alive(a));
    wb.use_tool(3, "t", "b", "env", json!({}));
    assert_eq!(text(&wb.answer(3, &mut others)), "VALUE=two");
    wb.use_tool(4, "t", "a", "echo", json!({}));
    assert_eq!(text(&wb.answer(4, &mut others)), "echo {}");
    assert_eq!(
        starts(&wb.dir, "a.log"),
        [a],
        "the unchanged server kept its process"
    );
    assert_eq!(starts(&wb.dir, "b.log").len(), 2);
    // The toolbox list did not change: no notification.
    others.extend(wb.lines_until_quiet(Duration::from_millis(500)));
    assert_eq!(list_changed(&others), 0, "{others:?}");
    assert_eq!(wb.finish().0, Some(0));
}

#[test]
fn calls_in_flight_finish_on_the_old_process_of_a_changed_or_removed_server() {
    let config = |value: &str, with_other: bool| {
        let mut s = fake("s.json");
        s["env"] = json!({"VALUE": value});
        let mut toolboxes = json!({"t": {"description": "d", "mcpServers": {"s": s}}});
        if with_other {
            toolboxes["other"] = json!({"description": "d", "mcpServers": {"o": fake("o.json")}});
        }
        json!({"toolboxes": toolboxes})
    };
    // Each server notes the requests it receives.
    let noting = |log: &str, received: &str| {
        let mut script = script(log);
        script["receivedTo"] = json!(received);
        script
    };
    let files = [
        ("s.json", noting("s.log", "s.received")),
        ("o.json", noting("o.log", "o.received")),
    ];
    let mut wb = Workbench::start("reload-in-flight", config("one", true), &files, &[]);
    let mut others = Vec::new();
    wb.open(1, "t", &mut others);
    wb.open(2, "other", &mut others);
    wb.use_tool(3, "t", "s", "slow", json!({}));
    wb.use_tool(4, "other", "o", "slow", json!({}));
    // Both calls are in flight (each server has its call; a call the
    // workbench had not read yet would find no toolbox 'other'): s changes,
    // and other's toolbox goes.
    let in_flight = |received: &str| {
        fs::read_to_string(wb.dir.join(received))
            .unwrap_or_default()
            .contains("\"slow\"")
    };
    assert!(
        wait_until(EVENT_WAIT, || in_flight("s.received")
            && in_flight("o.received")),
        "the slow calls did not reach their servers"
    );
    reload(&wb, &config("two", false), RELOADED, 1);
    wb.use_tool(5, "t", "s", "env", json!({}));
    assert_eq!(
        text(&wb.answer(5, &mut others)),
        "VALUE=two",
        "the new process"
    );
    // The slow calls end in either order.
    while ![3, 4]
        .iter()
        .all(|id| others.iter().any(|l| l["id"] == *id))
    {
        others.push(wb.recv());
    }
    for id in [3, 4] {
        let answer = others.iter().find(|l| l["id"] == id).unwrap();
        assert!(!is_error(answer), "{answer}");
        assert_eq!(text(answer), "slow {}");
    }
    // Then the old processes stop.
    assert!(gone(starts(&wb.dir, "s.log")[0]));
    assert!(gone(starts(&wb.dir, "o.log")[0]));
    assert_eq!(wb.finish().0, Some(0));
}

#[test]
fn a_config_with_errors_changes_nothing_and_is_logged_with_its_paths() {
    let config =
        json!({"toolboxes": {"t": {"description": "d", "mcpServers": {"s": fake("s.json")}}}});
    let mut wb = Workbench::start("reload-errors", config, &[("s.json", script("s.log"))], &[]);
    let mut others = Vec::new();
    wb.open(1, "t", &mut others);
    let broken = json!({"mdoe": "proxy", "toolboxes": {
        "t": {"description": "d", "mcpServers": {"s": {"args": ["s.json"]}}},
        "u": {"description": "d", "mcpServers": {}}}});
    reload(&wb, &broken, REFUSED, 1);
    // The lines after the first of the message may come a moment later.
    wb.expect_log("  config.json: toolboxes.t.mcpServers.s.command: required string is missing");
    wb.expect_log("  config.json: mdoe: unknown key ignored; did you mean 'mode'?");
    let list = wb.request(2, "tools/list", json!({}));
    assert_eq!(toolbox_enum(&list), json!(["t"]));
    wb.use_tool(3, "t", "s", "echo", json!({}));
    assert_eq!(text(&wb.answer(3, &mut others)), "echo {}");
    assert_eq!(starts(&wb.dir, "s.log").len(), 1);
    assert_eq!(list_changed(&others), 0, "{others:?}");

    // The watch goes on: a valid config applies.
    let fixed = json!({"toolboxes": {
        "t": {"description": "d", "mcpServers": {"s": fake("s.json")}},
        "u": {"description": "d", "mcpServers": {}}}});
    save(&wb.dir, &fixed);
    wb.wait_list_changed(&mut others);
    let list = wb.request(4, "tools/list", json!({}));
    assert_eq!(toolbox_enum(&list), json!(["t", "u"]));
    assert_eq!(wb.finish().0, Some(0));
}

/// Dynamic mode: a removed server's and a removed toolbox's native tools go,
/// with the meta-tools' change, in one `list_changed`.
#[test]
fn dynamic_mode_a_reload_changes_the_native_tools_in_one_list_changed() {
    let config = json!({"mode": "dynamic", "toolboxes": {
        "a": {"description": "d", "mcpServers": {"s1": fake("s1.json"), "s2": fake("s2.json")}},
        "b": {"description": "d", "mcpServers": {"s": fake("b.json")}}}});
    let script = |log: &str| counted(log, json!([tool("echo", json!({}))]));
    let files = [
        ("s1.json", script("s1.log")),
        ("s2.json", script("s2.log")),
        ("b.json", script("b.log")),
    ];
    let mut wb = Workbench::start("reload-dynamic", config, &files, &[]);
    let mut others = Vec::new();
    wb.open(1, "a", &mut others);
    wb.open(2, "b", &mut others);
    assert_eq!(list_changed(&others), 2);
    let new = json!({"mode": "dynamic", "toolboxes": {
        "a": {"description": "d", "mcpServers": {"s1": fake("s1.json")}},
        "c": {"description": "d", "mcpServers": {}}}});
    let mut others = Vec::new();
    reload(&wb, &new, RELOADED, 1);
    wb.wait_list_changed(&mut others);
    let list = wb.request(3, "tools/list", json!({}));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "open_toolbox",
            "use_tool",
            "find_tools",
            "close_toolbox",
            "a__s1_echo"
        ]
    );
    assert_eq!(toolbox_enum(&list), json!(["a", "c"]));
    assert!(gone(starts(&wb.dir, "s2.log")[0]));
    assert!(gone(starts(&wb.dir, "b.log")[0]));
    assert!(alive(starts(&wb.dir, "s1.log")[0]));
    others.extend(wb.lines_until_quiet(Duration::from_millis(2500)));
    assert_eq!(
        list_changed(&others),
        0,
        "one list_changed only: {others:?}"
    );
    assert_eq!(wb.finish().0, Some(0));
}

/// A config may start with no toolboxes (a warning, not an error) and get
/// them by a save while the workbench runs.
#[test]
fn an_empty_config_starts_and_takes_toolboxes_added_while_it_runs() {
    let files = [("k.json", script("k.log"))];
    let mut wb = Workbench::start("reload-from-empty", json!({"toolboxes": {}}), &files, &[]);
    let list = wb.request(1, "tools/list", json!({}));
    let open_schema = &list["result"]["tools"][0]["inputSchema"]["properties"]["toolbox_name"];
    assert!(open_schema.get("enum").is_none(), "no empty enum: {list}");
    let mut others = Vec::new();
    let missing = wb.open(2, "later", &mut others);
    assert!(is_error(&missing));
    assert_eq!(
        text(&missing),
        "Toolbox 'later' not found in configuration. The configuration has no toolboxes yet"
    );
    wb.expect_log("toolboxes: no toolboxes are defined yet");

    save(
        &wb.dir,
        &json!({"toolboxes": {"later": {"description": "added", "mcpServers": {"k": fake("k.json")}}}}),
    );
    wb.wait_list_changed(&mut others);
    let list = wb.request(3, "tools/list", json!({}));
    assert_eq!(toolbox_enum(&list), json!(["later"]));
    let opened = wb.open(4, "later", &mut others);
    assert_eq!(
        opened["result"]["structuredContent"]["servers_connected"], 1,
        "{opened}"
    );
    wb.use_tool(5, "later", "k", "echo", json!({"x": 1}));
    let called = wb.answer(5, &mut others);
    assert!(!is_error(&called), "{called}");
    assert_eq!(wb.finish().0, Some(0));
}
