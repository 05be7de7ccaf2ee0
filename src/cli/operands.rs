//! The words after a command that takes some: `pins`' action and scope,
//! `learned`'s action, `login`'s and `logout`'s `TOOLBOX/SERVER`,
//! `install`'s host. Each error names the word. No IO.

use super::command::PinsAction;
use crate::config::suggest;
use crate::hosts::{Host, ALL};

/// The one `TOOLBOX/SERVER` after `word` (`login`, `logout`); `purpose`
/// finishes "the remote server to ..." when it is missing.
pub(super) fn target(word: &str, purpose: &str, words: &[String]) -> Result<String, String> {
    match words {
        [one] => match one.split_once('/') {
            Some((toolbox, server))
                if !toolbox.is_empty() && !server.is_empty() && !server.contains('/') =>
            {
                Ok(one.clone())
            }
            _ => Err(format!(
                "{word}: '{one}' is not TOOLBOX/SERVER (a toolbox's name and one of its servers' names)"
            )),
        },
        [] => Err(format!(
            "{word} needs TOOLBOX/SERVER: the remote server to {purpose}"
        )),
        [_, extra, ..] => Err(format!("{word}: unexpected argument '{extra}'")),
    }
}

/// The word after `install`: the host.
pub(super) fn install_host(words: &[String]) -> Result<Host, String> {
    match words {
        [] => Err(format!("install needs a host: {}", host_names())),
        [name] => Host::parse(name).ok_or_else(|| format!("install: {}", Host::unknown(name))),
        [_, extra, ..] => Err(format!("install: unexpected argument '{extra}'")),
    }
}

/// Every host's name, the last after "or".
fn host_names() -> String {
    let names: Vec<&str> = ALL.iter().map(|h| h.name()).collect();
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The words after `learned`: whether it is `clear`.
pub(super) fn learned_action(words: &[String]) -> Result<bool, String> {
    match words {
        [] => Ok(false),
        [list] if list == "list" => Ok(false),
        [clear] if clear == "clear" => Ok(true),
        [word] => Err(match suggest::closest(word, &["list", "clear"]) {
            Some(close) => format!("learned: unknown action '{word}'; did you mean '{close}'?"),
            None => format!("learned: unknown action '{word}' (list or clear)"),
        }),
        [_, extra, ..] => Err(format!("learned: unexpected argument '{extra}'")),
    }
}

/// The words after `pins`; `yes`: `--yes` was given.
pub(super) fn pins_action(words: &[String], yes: bool) -> Result<PinsAction, String> {
    const ACTIONS: [&str; 3] = ["list", "diff", "approve"];
    let action = match words {
        [] => PinsAction::List,
        [list] if list == "list" => PinsAction::List,
        [diff] if diff == "diff" => PinsAction::Diff(None),
        [diff, scope] if diff == "diff" => PinsAction::Diff(Some(scope.clone())),
        [approve, scope] if approve == "approve" => PinsAction::Approve {
            scope: scope.clone(),
            yes,
        },
        [approve] if approve == "approve" => {
            return Err(
                "pins approve needs TOOLBOX, TOOLBOX/SERVER or TOOLBOX/SERVER/TOOL".to_string(),
            )
        }
        [word, ..] if !ACTIONS.contains(&word.as_str()) => {
            return Err(match suggest::closest(word, &ACTIONS) {
                Some(close) => format!("pins: unknown action '{word}'; did you mean '{close}'?"),
                None => format!("pins: unknown action '{word}' (list, diff or approve)"),
            })
        }
        [_, _, extra, ..] | [_, extra] => {
            return Err(format!("pins: unexpected argument '{extra}'"))
        }
        [_] => return Err("pins: expected list, diff or approve".to_string()),
    };
    if yes && !matches!(action, PinsAction::Approve { .. }) {
        return Err("--yes applies to pins approve".to_string());
    }
    Ok(action)
}

/// The words after `call`: the tool, then its ARGS words; with `--batch`
/// (`batch`), none: the calls come on stdin.
pub(super) fn call_operands(
    words: &[String],
    batch: bool,
) -> Result<(Option<String>, Vec<String>), String> {
    match (words.split_first(), batch) {
        (Some((target, _)), true) => Err(format!(
            "call --batch takes its calls on stdin, not '{target}'"
        )),
        (None, false) => Err("call needs TOOLBOX/SERVER/TOOL: the tool to call".to_string()),
        (Some((target, args)), false) => Ok((Some(target.clone()), args.to_vec())),
        (None, true) => Ok((None, Vec::new())),
    }
}
