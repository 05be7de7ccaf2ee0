//! `mcp-workbench tools` (docs/reference.md §13): every tool of every
//! enabled toolbox, one line each (`TOOLBOX/SERVER/TOOL  first sentence`),
//! in config order, from the tool catalog, as `find_tools` sees it; the
//! toolboxes the catalog lacks are listed first by starting their servers
//! through `index`'s own path. `tools QUERY`: what `find_tools` returns for
//! QUERY, best first (its search, called, not copied). `tools T/S/N`: that
//! tool as a person reads it. `--json`: the same as JSON.
//!
//! Exit 0; 2 for a tool name that is not one (with "did you mean"); 1 when
//! the output cannot be written.

use super::index;
use crate::config::Config;
use crate::script::lookup::{unknown, Known, Named};
use crate::script::render;
use serde_json::Value;
use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

/// `find_tools`' own default.
const DEFAULT_LIMIT: usize = 8;

/// Runs `tools` on `config` (file `path`).
pub(super) fn run(
    config: &Config,
    path: &Path,
    query: Option<&str>,
    json: bool,
    limit: Option<usize>,
    out: &mut impl Write,
) -> ExitCode {
    let known = Known::load(config, path);
    let printed = match query {
        Some(name) if is_tool_name(name) => match describe(config, path, known, name, json) {
            Ok(text) => writeln!(out, "{text}"),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
        Some(query) => search(&known, query, json, limit.unwrap_or(DEFAULT_LIMIT), out),
        None => list(config, path, known, json, out),
    };
    match printed {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(1),
    }
}

/// `TOOLBOX/SERVER/TOOL`: two slashes, no space.
fn is_tool_name(query: &str) -> bool {
    query.matches('/').count() >= 2 && !query.contains(char::is_whitespace)
}

/// Lists the servers of `toolboxes` into the catalog, as `index` does,
/// and reads the catalog again.
fn index_these(config: &Config, path: &Path, toolboxes: &[String]) -> Known {
    let mut some = config.clone();
    some.toolboxes.retain(|t| toolboxes.contains(&t.name));
    eprintln!(
        "listing the tools of {} (not in the catalog yet: their servers start once)",
        toolboxes.join(", ")
    );
    let _ = index::run(&some, path, &mut io::sink());
    Known::load(config, path)
}

fn list(
    config: &Config,
    path: &Path,
    mut known: Known,
    json: bool,
    out: &mut impl Write,
) -> io::Result<()> {
    let (_, unindexed) = known.every_tool();
    if !unindexed.is_empty() {
        known = index_these(config, path, &unindexed);
    }
    let (tools, unindexed) = known.every_tool();
    if json {
        let tools: Vec<String> = tools.iter().map(render::definition_json).collect();
        let unindexed: Vec<Value> = unindexed.into_iter().map(Value::from).collect();
        return writeln!(
            out,
            "{{\"tools\":[{}],\"not_indexed\":{}}}",
            tools.join(","),
            Value::from(unindexed)
        );
    }
    for tool in &tools {
        writeln!(out, "{}", render::line(tool))?;
    }
    for toolbox in unindexed {
        eprintln!("{toolbox}: some servers could not be listed (`mcp-workbench index` says why)");
    }
    Ok(())
}

fn search(
    known: &Known,
    query: &str,
    json: bool,
    limit: usize,
    out: &mut impl Write,
) -> io::Result<()> {
    let answer = known.search(query, limit);
    if json {
        return writeln!(out, "{answer}");
    }
    let answer: Value = serde_json::from_str(&answer).unwrap_or_default();
    let text = |v: &Value, k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    if let Some(Value::Array(tools)) = answer.get("tools") {
        for tool in tools {
            let name = format!(
                "{}/{}/{}",
                text(tool, "toolbox"),
                text(tool, "server"),
                text(tool, "tool")
            );
            match render::first_sentence(&text(tool, "description")) {
                "" => writeln!(out, "{name}")?,
                sentence => writeln!(out, "{name}  {sentence}")?,
            }
        }
    }
    if let Some(note) = answer.get("note").and_then(Value::as_str) {
        eprintln!("{note}");
    }
    Ok(())
}

/// The tool `name` described; a usage error when it is not one.
fn describe(
    config: &Config,
    path: &Path,
    known: Known,
    name: &str,
    json: bool,
) -> Result<String, String> {
    let mut known = known;
    let mut named = known.resolve(name)?;
    if let Named::Unlisted {
        toolbox,
        known: names,
        ..
    } = &named
    {
        if names.is_empty() {
            known = index_these(config, path, std::slice::from_ref(toolbox));
            named = known.resolve(name)?;
        }
    }
    match named {
        Named::Listed(tool) if json => Ok(render::definition_json(&tool)),
        Named::Listed(tool) => Ok(render::describe(&tool).trim_end().to_string()),
        Named::Unlisted {
            toolbox,
            server,
            tool,
            known,
        } => {
            let names: Vec<&str> = known.iter().map(String::as_str).collect();
            Err(unknown(
                &format!("tool '{tool}' in server '{server}' (toolbox '{toolbox}')"),
                &tool,
                &names,
            ))
        }
    }
}
