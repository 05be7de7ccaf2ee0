//! `mcp-workbench pins [list | diff [SCOPE] | approve SCOPE [--yes]]`
//! (docs/reference.md §2, §10): what is pinned for a config, what changed,
//! and a person's approval of what a serving workbench held back.
//!
//! `approve` shows, then accepts, the definitions the serving workbench
//! recorded as pending when it held a tool back: exactly what the model was
//! kept from, with no server started (a server's start may need the host's
//! environment, and may have effects). It accepts only once a person says
//! yes on a terminal, or with `--yes`: a model with a shell tool has no
//! terminal, so it cannot approve its own rug pull. A running workbench
//! reads the file again within a second or two (`fleet::main_loop`).
//! Prints on stdout; serves no host.

use super::printer::Printer;
use crate::cli::PinsAction;
use crate::config::{suggest, Config};
use crate::pins::store::Store;
use crate::pins::{changed_fields, Change, PinFile, Scope, ToolPin, FIELDS};
use serde_json::Value;
use std::ffi::OsString;
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

/// How `approve` asks a person to confirm: the question in, the answer out;
/// `None` when there is no terminal to ask on.
pub(crate) type Ask<'a> = &'a mut dyn FnMut(&str) -> Option<bool>;

/// `pins` as the command runs it: the state folder from the environment,
/// the report on `stdout`, the question of `approve` asked on the terminal.
pub(super) fn main(
    config: &Config,
    action: &PinsAction,
    stdin: &io::Stdin,
    stdout: &Printer,
) -> ExitCode {
    let env = |name: &str| std::env::var_os(name);
    let mut ask = |question: &str| ask(stdin, stdout, question);
    ExitCode::from(run(config, action, &env, &mut &*stdout, &mut ask))
}

/// Asks a person on the terminal (`pins approve`); `None` when stdin is not
/// one (a model's shell tool, a script, a pipe): no one there to say yes.
fn ask(stdin: &io::Stdin, mut stdout: &Printer, question: &str) -> Option<bool> {
    if !stdin.is_terminal() {
        return None;
    }
    let _ = write!(stdout, "{question}");
    let _ = stdout.flush();
    let mut answer = String::new();
    stdin.read_line(&mut answer).ok()?;
    Some(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// Runs `action` for `config`, the state folder taken from `env`; the exit code.
pub(crate) fn run(
    config: &Config,
    action: &PinsAction,
    env: &dyn Fn(&str) -> Option<OsString>,
    out: &mut dyn Write,
    ask: Ask,
) -> u8 {
    match try_run(config, action, env, out, ask) {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(out, "error: {e}");
            1
        }
    }
}

fn try_run(
    config: &Config,
    action: &PinsAction,
    env: &dyn Fn(&str) -> Option<OsString>,
    out: &mut dyn Write,
    ask: Ask,
) -> Result<u8, String> {
    let file = config
        .file
        .as_ref()
        .ok_or("the config has no file to key the pins by")?;
    let store = Store::for_config(file, env)?;
    let io = |e: std::io::Error| e.to_string();
    if !config.pin_tools {
        writeln!(
            out,
            "note: {} does not set \"pinTools\": true; nothing new is pinned",
            file.display()
        )
        .map_err(io)?;
    }
    match action {
        PinsAction::List => {
            let pins = store.load()?;
            list(config, &pins, &store, out).map_err(io)?;
            Ok(0)
        }
        PinsAction::Diff(text) => {
            let scope = text.as_deref().map(Scope::parse).transpose()?;
            let pins = store.load()?;
            let shown = pins.waiting(scope.as_ref());
            if let Some(unknown) = scope.as_ref().and_then(|s| unknown(config, &pins, s)) {
                writeln!(out, "{unknown}").map_err(io)?;
                return Ok(1);
            }
            if shown.is_empty() {
                let place = text.as_deref().unwrap_or("any toolbox");
                writeln!(out, "nothing waits for approval in {place}").map_err(io)?;
            }
            for change in &shown {
                show_change(change, out).map_err(io)?;
            }
            Ok(0)
        }
        PinsAction::Approve { scope: text, yes } => {
            let scope = Scope::parse(text)?;
            let pins = store.load()?;
            let shown = pins.waiting(Some(&scope));
            if let Some(unknown) = unknown(config, &pins, &scope) {
                writeln!(out, "{unknown}").map_err(io)?;
                return Ok(1);
            }
            if shown.is_empty() {
                writeln!(
                    out,
                    "nothing waits for approval in {text} (pins list shows what is pinned)"
                )
                .map_err(io)?;
                return Ok(1);
            }
            for change in &shown {
                show_change(change, out).map_err(io)?;
            }
            let count = plural(shown.len(), "tool");
            if !yes {
                out.flush().map_err(io)?;
                match ask(&format!("Approve {count}? [y/N] ")) {
                    Some(true) => {}
                    Some(false) => {
                        writeln!(out, "nothing approved").map_err(io)?;
                        return Ok(1);
                    }
                    None => {
                        writeln!(
                            out,
                            "nothing approved: approving needs a person's yes on a terminal, \
                             and this has none; review the change above and run the command \
                             in a terminal (--yes approves without asking: never give it to \
                             a model)"
                        )
                        .map_err(io)?;
                        return Ok(1);
                    }
                }
            }
            let (done, _, _) = store.update(|file| {
                let done = file.approve(&shown);
                let changed = !done.is_empty();
                (done, changed)
            })?;
            if done.len() < shown.len() {
                writeln!(
                    out,
                    "{} changed again since it was shown, and stays held back (pins diff \
                     shows it now)",
                    plural(shown.len() - done.len(), "tool")
                )
                .map_err(io)?;
            }
            if done.is_empty() {
                return Ok(1);
            }
            writeln!(
                out,
                "approved {}; a running workbench applies it within a few seconds",
                plural(done.len(), "tool")
            )
            .map_err(io)?;
            Ok(0)
        }
    }
}

/// Why `scope` names nothing, if it does not: a toolbox or server that is
/// neither in the config nor in the pins file, or a tool the pins file does
/// not hold for that server; with the closest name when one is a likely
/// typo (`notes/memroy`: did you mean 'memory'?), else the names there are.
fn unknown(config: &Config, pins: &PinFile, scope: &Scope) -> Option<String> {
    // The pins file's keys too: a toolbox removed from the config keeps its pins.
    let pinned: Vec<(&str, &str)> = pins
        .servers
        .keys()
        .filter_map(|k| k.split_once('/'))
        .collect();
    let mut toolboxes: Vec<&str> = config.toolboxes.iter().map(|t| t.name.as_str()).collect();
    toolboxes.extend(pinned.iter().map(|(t, _)| *t));
    dedup(&mut toolboxes);
    let toolbox = scope.toolbox.as_str();
    if !toolboxes.contains(&toolbox) {
        let what = format!("no toolbox '{toolbox}' in {}", config_name(config));
        return Some(not_found(what, toolbox, &toolboxes, "its toolboxes"));
    }
    let server = scope.server.as_deref()?;
    let mut servers: Vec<&str> = config
        .toolboxes
        .iter()
        .filter(|t| t.name == toolbox)
        .flat_map(|t| t.servers.iter().map(|s| s.name.as_str()))
        .collect();
    servers.extend(
        pinned
            .iter()
            .filter(|(t, _)| *t == toolbox)
            .map(|(_, s)| *s),
    );
    dedup(&mut servers);
    if !servers.contains(&server) {
        let what = format!("no server '{server}' in toolbox '{toolbox}'");
        return Some(not_found(what, server, &servers, "its servers"));
    }
    let tool = scope.tool.as_deref()?;
    // A server never pinned has no tools to name: "nothing waits" says enough.
    let pinned = pins.servers.get(&format!("{toolbox}/{server}"))?;
    let tools: Vec<&str> = pinned.tools.keys().map(String::as_str).collect();
    if tools.contains(&tool) {
        return None;
    }
    let what = format!("no tool '{tool}' pinned for server '{server}' in toolbox '{toolbox}'");
    Some(not_found(what, tool, &tools, "its pinned tools"))
}

/// `what`, then the closest of `known` to `name` if one is a likely typo,
/// else the first few of `known`.
fn not_found(what: String, name: &str, known: &[&str], whose: &str) -> String {
    const SHOWN: usize = 10;
    if let Some(close) = suggest::closest(name, known) {
        return format!("{what}; did you mean '{close}'?");
    }
    match known.len() {
        0 => what,
        n if n <= SHOWN => format!("{what} ({whose}: {})", known.join(", ")),
        n => format!(
            "{what} ({whose}: {}, and {} more)",
            known[..SHOWN].join(", "),
            n - SHOWN
        ),
    }
}

/// Drops the repeats of `names`, keeping the first of each, in order.
fn dedup(names: &mut Vec<&str>) {
    let mut seen = std::collections::HashSet::new();
    names.retain(|n| seen.insert(*n));
}

/// The config file's path, or "the config".
fn config_name(config: &Config) -> String {
    config
        .file
        .as_ref()
        .map_or("the config".to_string(), |f| f.display().to_string())
}

/// `1 tool`, `2 tools`.
fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// Every pinned server of the config and each tool's state.
fn list(
    config: &Config,
    pins: &PinFile,
    store: &Store,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(out, "pins file: {}", store.path.display())?;
    if pins.servers.is_empty() {
        writeln!(
            out,
            "nothing is pinned yet: a server is pinned at its first listing"
        )?;
    }
    for (key, server) in &pins.servers {
        let configured = key.split_once('/').is_some_and(|(t, s)| {
            config
                .toolboxes
                .iter()
                .any(|tb| tb.name == t && tb.servers.iter().any(|srv| srv.name == s))
        });
        let note = if configured {
            ""
        } else {
            " (not in the config now)"
        };
        writeln!(out, "{key}{note}")?;
        let width = server.tools.keys().map(|k| k.len()).max().unwrap_or(0);
        for (tool, pin) in &server.tools {
            writeln!(out, "  {tool:width$}  {}", state(pin))?;
        }
    }
    Ok(())
}

/// `approved`, `changed (fields)` or `new`.
fn state(pin: &ToolPin) -> String {
    match (&pin.approved, &pin.pending) {
        (Some(_), None) => "approved".to_string(),
        (Some(old), Some(pending)) => format!(
            "changed ({}): held back until approved",
            changed_fields(old, &pending.definition).join(", ")
        ),
        (None, _) => "new: held back until approved".to_string(),
    }
}

/// The old and the new text of each field that changed, one above the other.
fn show_change(change: &Change, out: &mut dyn Write) -> std::io::Result<()> {
    let key = change.key();
    let empty = Value::Object(Default::default());
    let old = change.old.as_ref().unwrap_or(&empty);
    let fields = changed_fields(old, &change.new);
    match change.old {
        Some(_) => writeln!(out, "{key}: changed ({})", fields.join(", "))?,
        None => writeln!(out, "{key}: new tool")?,
    }
    for field in FIELDS.iter().filter(|f| fields.contains(f)) {
        writeln!(out, "  {field}")?;
        if change.old.is_some() {
            writeln!(out, "    old: {}", text(old.get(*field)))?;
        }
        writeln!(out, "    new: {}", text(change.new.get(*field)))?;
    }
    Ok(())
}

/// A field's value: a string as its text, anything else as compact JSON.
fn text(value: Option<&Value>) -> String {
    match value {
        None => "(none)".to_string(),
        Some(Value::String(s)) => s.replace('\n', "\n         "),
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pins::fingerprint;
    use serde_json::value::RawValue;
    use std::path::Path;

    /// A person's answer: approve takes `y`, anything else keeps the hold.
    #[test]
    fn approve_asks_and_takes_only_a_yes() {
        let dir = std::env::temp_dir().join(format!("pins-ask-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let state = dir.clone().into_os_string();
        let env = move |name: &str| {
            (name == "XDG_STATE_HOME" || name == "LOCALAPPDATA").then(|| state.clone())
        };
        let text = r#"{"toolboxes": {"t": {"description": "d", "mcpServers": {"s": {"command": "x"}}}}, "pinTools": true}"#;
        let mut config = crate::config::parse(text.as_bytes(), Path::new("c.json"), &dir)
            .unwrap()
            .config;
        config.file = Some(dir.join("c.json"));
        let store = Store::for_config(&dir.join("c.json"), &env).unwrap();
        let print = |description: &str| {
            let raw = format!(r#"{{"name":"n","description":"{description}"}}"#);
            fingerprint("n", &RawValue::from_string(raw).unwrap())
        };
        for listing in ["old", "new"] {
            store
                .update(|f| ((), f.record("t/s", "d", &[print(listing)]).1))
                .unwrap();
        }
        let approve = PinsAction::Approve {
            scope: "t/s".into(),
            yes: false,
        };
        let run_with = |answer: Option<bool>| {
            let mut out = Vec::new();
            let mut asked = Vec::new();
            let mut ask = |question: &str| {
                asked.push(question.to_string());
                answer
            };
            let code = run(&config, &approve, &env, &mut out, &mut ask);
            (code, String::from_utf8(out).unwrap(), asked)
        };
        for answer in [None, Some(false)] {
            let (code, out, asked) = run_with(answer);
            assert_eq!(code, 1, "{out}");
            assert!(out.contains("t/s/n: changed (description)"), "{out}");
            assert!(out.contains("nothing approved"), "{out}");
            assert_eq!(asked, ["Approve 1 tool? [y/N] "]);
            assert!(store.load().unwrap().servers["t/s"].tools["n"]
                .pending
                .is_some());
        }
        let (code, out, _) = run_with(Some(true));
        assert_eq!(code, 0, "{out}");
        assert!(
            out.ends_with("approved 1 tool; a running workbench applies it within a few seconds\n"),
            "{out}"
        );
        assert!(store.load().unwrap().servers["t/s"].tools["n"]
            .pending
            .is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A scope that names nothing says which part is unknown, with the
    /// closest name, rather than that nothing waits.
    #[test]
    fn an_unknown_scope_says_which_name_and_suggests_the_closest() {
        let dir = std::env::temp_dir().join(format!("pins-scope-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let state = dir.clone().into_os_string();
        let env = move |name: &str| {
            (name == "XDG_STATE_HOME" || name == "LOCALAPPDATA").then(|| state.clone())
        };
        let text = r#"{"toolboxes": {"notes": {"description": "d", "mcpServers": {
            "memory": {"command": "x"}, "files": {"command": "y"}}}}, "pinTools": true}"#;
        let mut config = crate::config::parse(text.as_bytes(), Path::new("c.json"), &dir)
            .unwrap()
            .config;
        config.file = Some(dir.join("c.json"));
        let store = Store::for_config(&dir.join("c.json"), &env).unwrap();
        let print = |name: &str| {
            let raw = format!(r#"{{"name":"{name}","description":"d"}}"#);
            fingerprint(name, &RawValue::from_string(raw).unwrap())
        };
        let listing = [print("read_graph"), print("create_entities")];
        store
            .update(|f| ((), f.record("notes/memory", "d", &listing).1))
            .unwrap();
        let run_with = |action: PinsAction| {
            let mut out = Vec::new();
            let mut ask = |_: &str| Some(true);
            let code = run(&config, &action, &env, &mut out, &mut ask);
            (code, String::from_utf8(out).unwrap())
        };
        let approve = |scope: &str| {
            run_with(PinsAction::Approve {
                scope: scope.into(),
                yes: false,
            })
        };
        assert_eq!(
            approve("notes/memroy"),
            (
                1,
                "no server 'memroy' in toolbox 'notes'; did you mean 'memory'?\n".into()
            )
        );
        assert_eq!(
            approve("note/memory"),
            (
                1,
                format!(
                    "no toolbox 'note' in {}; did you mean 'notes'?\n",
                    dir.join("c.json").display()
                )
            )
        );
        assert_eq!(
            approve("notes/memory/reed_graph"),
            (
                1,
                "no tool 'reed_graph' pinned for server 'memory' in toolbox 'notes'; \
                 did you mean 'read_graph'?\n"
                    .into()
            )
        );
        assert_eq!(
            run_with(PinsAction::Diff(Some("notes/db".into()))),
            (
                1,
                "no server 'db' in toolbox 'notes' (its servers: memory, files)\n".into()
            )
        );
        // Names that exist, with nothing held back: nothing waits.
        let (code, out) = approve("notes/memory/read_graph");
        assert_eq!(code, 1);
        assert!(
            out.starts_with("nothing waits for approval in notes/memory/read_graph"),
            "{out}"
        );
        let (code, out) = approve("notes/files");
        assert_eq!(code, 1);
        assert!(out.starts_with("nothing waits for approval"), "{out}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
