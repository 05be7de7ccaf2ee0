//! `mcp-workbench call --batch` (docs/reference.md §13): JSON Lines of
//! `{"tool": "TOOLBOX/SERVER/TOOL", "arguments": {...}}` on stdin, one line
//! out per line in, in the input's order: `{"tool", "result"}` or
//! `{"tool", "error"}`. Up to `IN_FLIGHT` calls run at once in one session;
//! they are written to it in the input's order, so each server gets its
//! calls in that order. A line that cannot be called (not JSON, an unknown
//! name, missing arguments) gets its error and the others go on. Exit 0
//! when every line got a result without `isError`, else 1.

use super::call::{self, Call};
use crate::cli::CallArgs;
use crate::config::Config;
use crate::script::args;
use crate::script::lookup::Known;
use crate::script::render;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, Write};
use std::path::Path;
use std::process::ExitCode;

/// At most this many calls in flight.
const IN_FLIGHT: usize = 8;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    tool: String,
    arguments: Option<Box<RawValue>>,
}

/// One input line: its tool's name, and the call with its arguments or why
/// it cannot be made.
type Todo = (String, Result<(Call, Box<RawValue>), String>);

/// One input line's outcome, once known.
enum Done {
    Result(Box<RawValue>),
    Error(String),
}

/// Runs the batch read from `lines`.
pub(super) fn run(
    config: Config,
    path: &Path,
    shared: bool,
    asked: &CallArgs,
    lines: impl BufRead,
    out: &mut impl Write,
) -> ExitCode {
    let known = Known::load(&config, path);
    let texts: Vec<String> = lines
        .split(b'\n')
        .map_while(Result::ok)
        .map(|line| String::from_utf8_lossy(&line).into_owned())
        .filter(|text| !text.trim().is_empty())
        .collect();
    // The servers the catalog never listed are listed first, once each.
    let mut known = known;
    for text in &texts {
        if let Ok(line) = serde_json::from_str::<Line>(text) {
            known = call::listed(known, &config, path, shared, &line.tool);
        }
    }
    // Every line, checked: its name, and the call or why it cannot be made.
    let todo: Vec<Todo> = texts
        .iter()
        .map(|text| checked_line(&known, text))
        .collect();
    let mut done: Vec<Option<Done>> = (0..todo.len()).map(|_| None).collect();
    let mut ready: VecDeque<usize> = VecDeque::new();
    for (i, (_, call)) in todo.iter().enumerate() {
        match call {
            Ok(_) => ready.push_back(i),
            Err(e) => done[i] = Some(Done::Error(e.clone())),
        }
    }
    let mut healthy = ready.len() == todo.len();
    let mut printed = 0;
    if !ready.is_empty() {
        match call::open(config, path, shared, asked) {
            Ok(mut client) => {
                let mut flight: HashMap<u64, usize> = HashMap::new();
                loop {
                    while flight.len() < IN_FLIGHT {
                        let Some(i) = ready.pop_front() else { break };
                        let Ok((call, arguments)) = &todo[i].1 else {
                            continue;
                        };
                        let (toolbox, server, tool) = (&call.toolbox, &call.server, &call.tool);
                        match client.use_tool(toolbox, server, tool, arguments, asked.timeout) {
                            Ok(id) => {
                                flight.insert(id, i);
                            }
                            Err(e) => {
                                done[i] = Some(Done::Error(format!("the session ended: {e}")))
                            }
                        }
                    }
                    printed = print_ready(&todo, &done, printed, out);
                    if flight.is_empty() {
                        break;
                    }
                    match client.next_answer(None) {
                        Some(answer) => {
                            if let Some(i) = flight.remove(&answer.id) {
                                done[i] = Some(match answer.result {
                                    Ok(result) => Done::Result(result),
                                    Err(e) => Done::Error(e),
                                });
                            }
                        }
                        None => {
                            // The session ended: what is in flight fails.
                            for (_, i) in flight.drain() {
                                let e = "the session ended before the call was answered";
                                done[i] = Some(Done::Error(e.to_string()));
                            }
                        }
                    }
                }
                client.close();
            }
            Err(e) => {
                for i in ready {
                    done[i] = Some(Done::Error(format!("cannot start a session: {e}")));
                }
            }
        }
    }
    print_ready(&todo, &done, printed, out);
    for outcome in done.iter().flatten() {
        healthy &= match outcome {
            Done::Result(result) => !render::result_text(result).1,
            Done::Error(_) => false,
        };
    }
    match healthy {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(1),
    }
}

/// One input line: its tool's name, and the call with its arguments or
/// why it cannot be made.
fn checked_line(known: &Known, text: &str) -> Todo {
    let line: Line = match serde_json::from_str(text) {
        Ok(line) => line,
        Err(e) => {
            let tool = serde_json::from_str::<Value>(text)
                .ok()
                .and_then(|v| v.get("tool").and_then(Value::as_str).map(str::to_string))
                .unwrap_or_default();
            let why = format!("not a line of the batch ({{\"tool\": \"TOOLBOX/SERVER/TOOL\", \"arguments\": {{...}}}}): {e}");
            return (tool, Err(why));
        }
    };
    let arguments = match &line.arguments {
        Some(raw) => args::object(raw.get(), "arguments", false),
        None => args::object("{}", "arguments", false),
    };
    let call = arguments.and_then(|arguments| {
        call::checked(known, &line.tool, &arguments).map(|call| (call, arguments.raw))
    });
    (line.tool, call)
}

/// Prints the lines from `from` on that are done, in order, up to the
/// first that is not; where it stopped.
fn print_ready(todo: &[Todo], done: &[Option<Done>], from: usize, out: &mut impl Write) -> usize {
    let mut at = from;
    while let Some(Some(outcome)) = done.get(at) {
        let tool = Value::from(todo[at].0.as_str());
        let line = match outcome {
            Done::Result(result) => format!("{{\"tool\":{tool},\"result\":{}}}", result.get()),
            Done::Error(e) => format!("{{\"tool\":{tool},\"error\":{}}}", Value::from(e.as_str())),
        };
        if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
            return done.len();
        }
        at += 1;
    }
    at
}
