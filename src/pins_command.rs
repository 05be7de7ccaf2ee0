//! `mcp-workbench pins [list | approve TOOLBOX[/SERVER[/TOOL]]]`
//! (docs/reference.md §2, §10): what is pinned for a config, and the
//! approval of what a serving workbench held back.
//!
//! `approve` accepts the definitions the serving workbench recorded as
//! pending when it held a tool back: exactly what the model was kept from,
//! with no server started (a server's start may need the host's
//! environment, and may have effects). A running workbench reads the file
//! again within a second or two (`fleet::main_loop`). Prints on stdout;
//! serves no host.

use crate::cli::PinsAction;
use crate::config::Config;
use crate::pins::store::Store;
use crate::pins::{changed_fields, PinFile, Scope, ToolPin, FIELDS};
use serde_json::Value;
use std::ffi::OsString;
use std::io::Write;

/// Runs `action` for `config`, the state folder taken from `env`; the exit code.
pub fn run(
    config: &Config,
    action: &PinsAction,
    env: &dyn Fn(&str) -> Option<OsString>,
    out: &mut dyn Write,
) -> u8 {
    match try_run(config, action, env, out) {
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
        PinsAction::Approve(text) => {
            let scope = Scope::parse(text)?;
            let (done, _, _) = store.update(|file| {
                let done = file.approve(&scope);
                let changed = !done.is_empty();
                (done, changed)
            })?;
            if done.is_empty() {
                writeln!(
                    out,
                    "nothing waits for approval in {text} (pins list shows what is pinned)"
                )
                .map_err(io)?;
                return Ok(1);
            }
            for tool in &done {
                show_change(&tool.key, tool.old.as_ref(), &tool.new, out).map_err(io)?;
            }
            writeln!(
                out,
                "approved {} tool{}; a running workbench applies it within a few seconds",
                done.len(),
                if done.len() == 1 { "" } else { "s" }
            )
            .map_err(io)?;
            Ok(0)
        }
    }
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
fn show_change(
    key: &str,
    old: Option<&Value>,
    new: &Value,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let empty = Value::Object(Default::default());
    let old_value = old.unwrap_or(&empty);
    let fields = changed_fields(old_value, new);
    match old {
        Some(_) => writeln!(out, "{key}: changed ({})", fields.join(", "))?,
        None => writeln!(out, "{key}: new tool")?,
    }
    for field in FIELDS.iter().filter(|f| fields.contains(f)) {
        writeln!(out, "  {field}")?;
        if old.is_some() {
            writeln!(out, "    old: {}", text(old_value.get(*field)))?;
        }
        writeln!(out, "    new: {}", text(new.get(*field)))?;
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
