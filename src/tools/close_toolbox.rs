//! The `close_toolbox` meta-tool as the host sees it: its definition, the
//! checking of its arguments, and its answer, made by the session from what
//! closing its copies of the toolbox did (`fleet::facts::Closed`: one copy,
//! or two for a toolbox whose servers are partly shared, §8). No IO here:
//! the fleet's `lifecycle` does the closing.

use super::args::{self, finish, unknown_keys};
use super::outcome::{not_configured, Outcome};
use crate::config::ToolboxConfig;
use crate::fleet::facts::Closed;
use crate::fleet::toolbox::Toolboxes;
use crate::protocol::jsonrpc::Members;
use serde_json::{json, Map, Value};

pub(crate) const NAME: &str = "close_toolbox";

/// The `tools/list` entry (without the host hints, which `tools_list` adds),
/// naming `toolboxes`.
pub(super) fn definition(toolboxes: &[&ToolboxConfig]) -> Value {
    json!({
        "name": NAME,
        "description": "Close an open toolbox and stop its servers. Other toolboxes keep running.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "toolbox_name": args::toolbox_name_schema(toolboxes, "Name of the toolbox to close"),
            },
            "required": ["toolbox_name"],
            "additionalProperties": false,
        },
    })
}

/// The argument of `close_toolbox`: the `toolbox_name`, and nothing else.
pub(crate) fn arguments(args: &Members) -> Result<String, String> {
    check(&args::outline(args, &[]))
}

fn check(args: &Map<String, Value>) -> Result<String, String> {
    let mut problems = Vec::new();
    let name = args::toolbox_name(args, &mut problems);
    unknown_keys(args, &["toolbox_name"], "", &mut problems);
    finish(problems, name)
}

/// The answer to `close_toolbox` of toolbox `name`; `toolboxes` name the
/// configured ones for a toolbox that is not.
pub(crate) fn answer(name: &str, closed: &[Closed], toolboxes: &Toolboxes) -> Outcome {
    if closed.contains(&Closed::NotConfigured) {
        return Outcome::error(not_configured(toolboxes, name));
    }
    if closed.iter().all(|c| *c == Closed::NotOpen) {
        return Outcome::error(format!("Toolbox '{name}' is not open"));
    }
    let stopped = closed
        .iter()
        .map(|c| match c {
            Closed::Stopped(n) => *n,
            _ => 0,
        })
        .sum();
    let others = closed
        .iter()
        .map(|c| match c {
            Closed::Released(n) => *n,
            _ => 0,
        })
        .max()
        .unwrap_or(0);
    Outcome::ok(text(name, stopped, others))
}

/// The text of a closed toolbox; `others`: the other sessions of a shared
/// fleet that still hold it (§8), for which nothing stopped and it stays open.
fn text(toolbox: &str, stopped: usize, others: usize) -> String {
    let servers = format!(
        "Toolbox '{toolbox}' closed ({stopped} server{} stopped)",
        if stopped == 1 { "" } else { "s" }
    );
    match others {
        0 => servers,
        1 => format!("{servers}: 1 other session holds it, so it stays open for them"),
        n => format!("{servers}: {n} other sessions hold it, so it stays open for them"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::args::map;

    #[test]
    fn toolbox_name_messages() {
        assert_eq!(check(&map(json!({"toolbox_name":"dev"}))).unwrap(), "dev");
        let cases = [
            (json!({}), "Invalid parameters: toolbox_name: Required"),
            (
                json!({"toolbox_name":" "}),
                "Invalid parameters: toolbox_name cannot be empty",
            ),
            (
                json!({"toolbox_name":"a","extra_field":1}),
                "Invalid parameters: Unrecognized key: 'extra_field'",
            ),
            (
                json!({"toolbox_name":3}),
                "Invalid parameters: toolbox_name: Expected string, received number",
            ),
            (
                json!({"toolbox_name":"x".repeat(65)}),
                "Invalid parameters: toolbox_name: String must contain at most 64 character(s)",
            ),
            (
                json!({"toolbox_name":"dev","tools":["a"]}),
                "Invalid parameters: Unrecognized key: 'tools'",
            ),
        ];
        for (input, message) in cases {
            assert_eq!(check(&map(input)).unwrap_err(), message);
        }
    }
}
