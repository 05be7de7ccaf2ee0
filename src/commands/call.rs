//! `mcp-workbench call TOOLBOX/SERVER/TOOL [ARGS]` (docs/reference.md §13):
//! one tool call from a script, through a session that enforces every rule
//! of `use_tool` (`script::client`): the shared fleet's with
//! `"shareServers": true` (a session that cannot reach or start it is served
//! alone, said on stderr), else one of this process's own, which starts only
//! that tool's server and stops it before the exit.
//!
//! Before anything is called, the name and the arguments are checked
//! (`script::lookup`, `script::args`; a server the catalog never listed is
//! listed first, as `index` does): a usage error exits 2. The result's
//! text goes to stdout (`--json`: the whole result as one line); exit 0, or
//! 1 for an `isError` result or a failed call (the text on stderr). A
//! `use_tool` answer that the tool does not exist is a usage error too.
//! `--batch` is `call_batch`'s, which `commands::run` picks instead.

use super::prepare;
use crate::cli::CallArgs;
use crate::config::Config;
use crate::script::args;
use crate::script::client::Client;
use crate::script::lookup::{unknown, Known, Named};
use crate::script::render;
use crate::wire::trace::Trace;
use serde_json::value::RawValue;
use std::io::{self, IsTerminal, Read, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

/// Runs `call` on `config` (file `path`); `shared`: through its fleet.
pub(super) fn run(
    config: Config,
    path: &Path,
    shared: bool,
    asked: CallArgs,
    stdin: io::Stdin,
    out: &mut impl Write,
) -> ExitCode {
    let known = Known::load(&config, path);
    let Some(target) = asked.target.as_deref() else {
        return usage("call needs TOOLBOX/SERVER/TOOL");
    };
    let piped = !stdin.is_terminal();
    let read = || {
        let mut text = String::new();
        stdin
            .lock()
            .read_to_string(&mut text)
            .map(|_| text)
            .map_err(|e| format!("cannot read stdin: {e}"))
    };
    let arguments = match args::from_words(&asked.args, piped, read) {
        Ok(arguments) => arguments,
        Err(e) => return usage(&e),
    };
    let known = listed(known, &config, path, shared, target);
    let call = match checked(&known, target, &arguments) {
        Ok(call) => call,
        Err(e) => return usage(&e),
    };
    let mut client = match open(config.clone(), path, shared, &asked) {
        Ok(client) => client,
        Err(e) => {
            eprintln!("error: cannot start a session: {e}");
            return ExitCode::from(1);
        }
    };
    let answer = one_call(&mut client, &call, &arguments.raw, asked.timeout);
    client.close();
    let result = match answer {
        Ok(result) => result,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
    };
    let (text, is_error) = render::result_text(&result);
    if is_error {
        // The catalog as the call left it: the server was listed by now.
        if let Some(message) = not_found(&Known::load(&config, path), &call, &text) {
            return usage(&message);
        }
    }
    let printed = match (asked.json, is_error) {
        (true, _) => writeln!(out, "{}", result.get()),
        (false, false) => out.write_all(text.as_bytes()),
        (false, true) => {
            eprint!("{text}");
            Ok(())
        }
    };
    match (printed, is_error) {
        (Ok(()), false) => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    }
}

/// `known`, or, when the catalog never listed the server `target` names
/// and no fleet runs it, the catalog after listing that one server (once:
/// from then on the catalog has it), so its arguments can be checked
/// before the call.
pub(super) fn listed(
    known: Known,
    config: &Config,
    path: &Path,
    shared: bool,
    target: &str,
) -> Known {
    let Ok(Named::Unlisted {
        toolbox,
        server,
        known: names,
        ..
    }) = known.resolve(target)
    else {
        return known;
    };
    if shared || !names.is_empty() {
        return known;
    }
    let mut one = config.clone();
    one.toolboxes.retain(|t| t.name == toolbox);
    for t in &mut one.toolboxes {
        t.servers.retain(|s| s.name == server);
    }
    super::index::quietly(&one, path);
    Known::load(config, path)
}

/// A usage error: said on stderr, exit 2.
fn usage(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}

/// A call whose name the config has.
pub(super) struct Call {
    pub(super) toolbox: String,
    pub(super) server: String,
    pub(super) tool: String,
}

/// `target` with `arguments`, checked: the name against the config and the
/// catalog, the arguments against the tool's `inputSchema` where the
/// catalog has it.
pub(super) fn checked(
    known: &Known,
    target: &str,
    arguments: &args::Arguments,
) -> Result<Call, String> {
    match known.resolve(target)? {
        Named::Listed(tool) => {
            let missing = args::missing(&tool.tool.input_schema, &arguments.keys);
            if let Some(first) = missing.first() {
                let more = match missing.len() {
                    1 => String::new(),
                    n => format!(" (and {} more: {})", n - 1, missing[1..].join(", ")),
                };
                return Err(format!(
                    "{target} requires the argument '{first}'{more}; `mcp-workbench tools {target}` describes them"
                ));
            }
            Ok(Call {
                toolbox: tool.toolbox,
                server: tool.server,
                tool: tool.tool.name,
            })
        }
        // A listed server without that tool: unknown, unless it may be held
        // back by a pin, which the session says (exit 1).
        Named::Unlisted {
            toolbox,
            server,
            tool,
            known: names,
        } if !names.is_empty() && !known.pinned() => {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let what = format!("tool '{tool}' in server '{server}' (toolbox '{toolbox}')");
            Err(unknown(&what, &tool, &names))
        }
        Named::Unlisted {
            toolbox,
            server,
            tool,
            ..
        } => Ok(Call {
            toolbox,
            server,
            tool,
        }),
    }
}

/// A session for the calls: the shared fleet's, or this process's own,
/// with `--trace` on.
pub(super) fn open(
    config: Config,
    path: &Path,
    shared: bool,
    asked: &CallArgs,
) -> io::Result<Client> {
    if shared {
        match Client::shared(path) {
            Ok(client) => return Ok(client),
            Err(e) => {
                log::error!("cannot use the shared fleet: {e}");
                log::warn!("calling through a session of this process's own");
                prepare::watchdog();
            }
        }
    }
    let trace = match &asked.trace {
        Some(path) => Some(Arc::new(Trace::start(path).map_err(|e| {
            io::Error::other(format!(
                "cannot write the trace file {}: {e}",
                path.display()
            ))
        })?)),
        None => None,
    };
    Client::local(config, path, trace)
}

/// Calls `call` with `arguments` (within `time_limit` ms when given) and
/// waits for its result.
fn one_call(
    client: &mut Client,
    call: &Call,
    arguments: &RawValue,
    time_limit: Option<u64>,
) -> Result<Box<RawValue>, String> {
    let gone = |e: io::Error| format!("the session ended: {e}");
    let id = client
        .use_tool(
            &call.toolbox,
            &call.server,
            &call.tool,
            arguments,
            time_limit,
        )
        .map_err(gone)?;
    loop {
        match client.next_answer(None) {
            Some(answer) if answer.id == id => return answer.result,
            Some(_) => continue,
            None => return Err("the session ended before the call was answered".to_string()),
        }
    }
}

/// The usage error for a `use_tool` answer `text` saying the tool does not
/// exist, with "did you mean" from the catalog as it is now.
pub(super) fn not_found(known: &Known, call: &Call, text: &str) -> Option<String> {
    let prefix = format!("Tool '{}' not found in server '{}'", call.tool, call.server);
    if !text.starts_with(&prefix) {
        return None;
    }
    let name = format!("{}/{}/{}", call.toolbox, call.server, call.tool);
    let names = match known.resolve(&name) {
        Ok(Named::Unlisted { known, .. }) => known,
        _ => Vec::new(),
    };
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let what = format!(
        "tool '{}' in server '{}' (toolbox '{}')",
        call.tool, call.server, call.toolbox
    );
    Some(unknown(&what, &call.tool, &names))
}
