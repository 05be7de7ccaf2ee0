//! Reads the arguments against the definitions (`defs`): flags and the
//! command word may come in any order, each once (`--from` as often as
//! wanted); then checks that each flag applies to the command, picks the
//! config, and builds the command. Every error is one line that names the
//! offending argument. No IO.

use super::command::{Command, ImportFrom};
use super::config::{choose, expand_home};
use super::defs::{self, Applies, Flag, Kind, Takes, COMMANDS, FLAGS, SERVE};
use super::given::{Given, Value};
use crate::config::suggest;
use crate::hosts::Host;
use std::ffi::OsString;
use std::path::Path;

/// Parses the arguments after the program name; `env` looks up environment
/// variables, `exists` whether a file (`./workbench-config.json`) exists.
/// The error is one line that names the offending argument.
pub fn parse(
    args: impl IntoIterator<Item = OsString>,
    env: &dyn Fn(&str) -> Option<OsString>,
    exists: &dyn Fn(&Path) -> bool,
) -> Result<Command, String> {
    let mut given = Given::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let Some(text) = arg.to_str() else {
            return Err(format!("unexpected argument {arg:?}"));
        };
        if let Some(ends) = read_one(text, &mut args, env, &mut given)? {
            return Ok(ends);
        }
    }
    check_flags(&given)?;
    let config = choose(given.path("--config"), env, exists)?;
    if let Some(word) = given.word {
        let serving = FLAGS.iter().filter_map(|f| match f.applies {
            Applies::Serving(_, only) if !f.applies_to(word) => Some((f, only)),
            _ => None,
        });
        if let Some((flag, only)) = serving.into_iter().find(|(f, _)| given.has(f.name)) {
            return Err(format!("{} applies to {only}, not to {word}", flag.name));
        }
    }
    (defs::command_of(given.word).build)(&given, config)
}

/// Reads the argument `text` (and the value after it, from `rest`) into
/// `given`; a flag that ends the parse (`--help`) gives its command.
fn read_one(
    text: &str,
    rest: &mut impl Iterator<Item = OsString>,
    env: &dyn Fn(&str) -> Option<OsString>,
    given: &mut Given,
) -> Result<Option<Command>, String> {
    let (name, inline) = match text.split_once('=') {
        Some((name, value)) if name.starts_with("--") => (name, Some(value)),
        _ => (text, None),
    };
    let flag = defs::flag(name);
    if let (Some(Takes::Ends(command)), None) = (flag.map(|f| f.takes), inline) {
        return Ok(Some(command()));
    }
    let takes_words = given
        .word
        .is_some_and(|word| defs::command_of(Some(word)).takes_words);
    // `-`: stdin (`call T/S/N -`), a word like any other.
    if takes_words && (!text.starts_with('-') || text == "-") {
        given.words.push(text.to_string());
        return Ok(None);
    }
    if let Some(command) = defs::command_word(text) {
        return set_word(given, command.word).map(|()| None);
    }
    match (flag, inline) {
        (Some(flag), None) if matches!(flag.takes, Takes::Switch) => {
            if given.has(flag.name) {
                return Err(format!("{} was given twice", flag.name));
            }
            given.flags.push((flag.name, Value::On));
        }
        (Some(flag), _)
            if matches!(
                flag.takes,
                Takes::Path(_) | Takes::HostOrFile(_) | Takes::Number(_)
            ) =>
        {
            let value = match inline {
                Some(value) => OsString::from(value),
                None => rest.next().ok_or_else(|| missing(flag))?,
            };
            let value = read_value(flag, name, value, env)?;
            if !flag.repeats && given.has(flag.name) {
                return Err(format!("{name} was given twice"));
            }
            given.flags.push((flag.name, value));
        }
        _ => return Err(unexpected(text, name)),
    }
    Ok(None)
}

/// The command word `word`, once, and alone.
fn set_word(given: &mut Given, word: &'static str) -> Result<(), String> {
    match given.word.replace(word) {
        Some(first) if first == word => Err(format!("{word} was given twice")),
        Some(first) => Err(format!("{first} and {word} cannot be combined")),
        None => Ok(()),
    }
}

/// The error for a flag given without its value.
fn missing(flag: &Flag) -> String {
    match flag.takes {
        Takes::HostOrFile(_) => format!("{} needs a host or a file", flag.name),
        Takes::Number(_) => format!("{} needs a whole number above 0", flag.name),
        _ => format!("{} needs a path", flag.name),
    }
}

/// The value `value` of `flag` (given as `name`).
fn read_value(
    flag: &Flag,
    name: &str,
    value: OsString,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Result<Value, String> {
    if value.is_empty() {
        return Err(missing(flag));
    }
    let path = |value| expand_home(value, env).map_err(|e| format!("{name}: {e}"));
    Ok(match flag.takes {
        Takes::Number(_) => {
            let text = value.to_string_lossy();
            let n = text.parse::<u64>().ok().filter(|n| *n > 0);
            Value::Number(n.ok_or(format!("{name} needs a whole number above 0, not '{text}'"))?)
        }
        Takes::HostOrFile(_) => match Host::parse(value.to_str().unwrap_or_default()) {
            Some(host) => Value::From(ImportFrom::Host(host)),
            None => Value::From(ImportFrom::File(path(value)?)),
        },
        _ => Value::Path(path(value)?),
    })
}

/// Each flag given applies to the command given, with the flags it needs
/// and none it excludes, in the order of `FLAGS` (serving's own flags are
/// checked once the config is known, in `parse`).
fn check_flags(given: &Given) -> Result<(), String> {
    let word = given.word.unwrap_or(SERVE);
    let given_flags = FLAGS.iter().filter(|f| given.has(f.name));
    for flag in given_flags.clone() {
        match flag.applies {
            Applies::To(_, only) if !flag.applies_to(word) => {
                return Err(format!("{} applies to {only}", flag.name))
            }
            _ => {}
        }
    }
    for flag in given_flags.clone() {
        if let Some(other) = flag.excludes.filter(|other| given.has(other)) {
            return Err(format!("{} and {other} cannot be combined", flag.name));
        }
    }
    for flag in given_flags {
        if let Some((_, only)) = flag.needs.filter(|(needed, _)| !given.has(needed)) {
            return Err(format!("{} applies to {only}", flag.name));
        }
    }
    Ok(())
}

/// The message for an argument that is neither a flag nor a command word.
fn unexpected(text: &str, name: &str) -> String {
    let (what, known): (&str, Vec<&str>) = if text.starts_with('-') {
        ("unknown option", FLAGS.iter().map(|f| f.name).collect())
    } else {
        let listed = COMMANDS.iter().filter(|c| c.kind == Kind::Listed);
        ("unexpected argument", listed.map(|c| c.word).collect())
    };
    match suggest::closest(name, &known) {
        Some(close) => format!("{what} '{text}'; did you mean '{close}'?"),
        None => format!("{what} '{text}'"),
    }
}
