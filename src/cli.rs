//! Hand-written command-line parsing (docs/reference.md, "Command line").
//! Flags and the `check` word may come in any order; each may be given once.
//! Picks the config file (`--config`, `$WORKBENCH_CONFIG`,
//! `./workbench-config.json` where it exists, else the user's own,
//! `sys::user_config`) and says where it came from (`ConfigSource`).
//! No IO: the environment (`WORKBENCH_CONFIG`, the home folder) and whether
//! `./workbench-config.json` exists come through lookups the caller passes.

use crate::config::suggest;
use crate::hosts::Host;
use crate::sys::{self, Os};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

pub const USAGE: &str = "\
mcp-workbench: one stdio MCP server that groups MCP servers into toolboxes

Usage:
  mcp-workbench [--config PATH] [--trace FILE]
      serve MCP over stdio (the default); --trace writes every message that crosses
      the workbench to FILE as JSON lines
  mcp-workbench check [--config PATH] [--json]
      validate the config, start every server once, print a report
  mcp-workbench status [--config PATH] [--json]
      the shared fleet of that config (\"shareServers\": true): its sessions and
      servers; exits 1 when none runs
  mcp-workbench index [--config PATH]
      start every server once and list its tools into the tool catalog that
      find_tools searches (in your cache folder); one line per server
  mcp-workbench pins [--config PATH] [list | diff [SCOPE] | approve SCOPE [--yes]]
      with \"pinTools\": true, list the pinned tool definitions (approved, changed,
      new), show what changed (SCOPE: TOOLBOX[/SERVER[/TOOL]]), or show it and
      approve it once you confirm on the terminal (--yes: without asking; never
      give --yes to a model)
  mcp-workbench learned [--config PATH] [list | clear]
      what find_tools learned from use (a search's words and the tool the model
      then called instead): list it, or forget it all
  mcp-workbench login TOOLBOX/SERVER [--config PATH] [--no-browser]
      sign in to a remote server: opens the sign-in page in your browser (not
      with --no-browser; the page is printed either way) and waits for it; where
      the browser cannot reach this machine, paste the address it ends on
  mcp-workbench logout TOOLBOX/SERVER [--config PATH]
      forget the tokens stored for a remote server
  mcp-workbench import [--config PATH] [--from HOST|FILE]... [--write] [--no-start]
      bring the MCP servers of your hosts into toolboxes, one toolbox per server
      (HOST: claude-desktop, claude-code, cursor, vscode, codex, gemini, windsurf;
      every installed one unless --from names some, or a FILE of theirs). Prints
      the config it would write, secrets masked, and what it could not map;
      --write merges it into the config (the old one kept as a backup) and checks
      the result; --no-start describes the toolboxes without starting the
      servers to list their tools
  mcp-workbench install HOST [--config PATH] [--replace [--include-projects]] [--undo]
      add the workbench (this binary, with --config and the config's absolute
      path) to HOST's own config, with a timestamped backup beside it; --replace
      also takes out of HOST the servers the workbench's config now holds
      (per-project ones too with --include-projects);
      --undo reverses the install, keeping what HOST wrote since
  mcp-workbench tools [QUERY | TOOLBOX/SERVER/TOOL] [--config PATH] [--json] [--limit N]
      every tool of every toolbox, one line each, from the tool catalog; QUERY:
      the tools find_tools finds for it, best first; TOOLBOX/SERVER/TOOL: that
      tool described (its arguments, an example call); --json for scripts
  mcp-workbench call TOOLBOX/SERVER/TOOL [ARGS | -] [--config PATH] [--json] [--batch] [--timeout MS]
      call a tool from a script as use_tool does (same servers, pins, caps): ARGS
      is a JSON object, key=value words, or - (stdin); prints the result's text
      (--json: the whole result); --batch reads JSON Lines of
      {\"tool\", \"arguments\"} and prints one result per line in order; exit 1
      for an error result or a failed call, 2 when nothing was called
  mcp-workbench --help | --version

The config path is --config, else $WORKBENCH_CONFIG, else ./workbench-config.json
where it exists, else your own config: $XDG_CONFIG_HOME/mcp-workbench/config.json
(~/.config/...; macOS: ~/Library/Application Support/mcp-workbench/config.json;
Windows: %APPDATA%\\mcp-workbench\\config.json), which import --write creates.
Relative paths in the config are taken from the config file's folder; a path
that starts with ~/ is taken from your home folder ($HOME; %USERPROFILE% on Windows).
Logs go to stderr; set RUST_LOG (error, warn, info, debug) to choose how much.
Exit codes: 0 clean shutdown, 1 runtime failure, 2 usage or config error.
";

/// The one line printed with a usage error, before the hint to `--help`:
/// every command, serving (no command word) first.
pub const USAGE_LINE: &str =
    "usage: mcp-workbench [--config PATH] [--trace FILE] (serve MCP over stdio) | mcp-workbench check|index|status|pins|learned|login|logout|import|install|tools|call [--config PATH] [OPTIONS]";

/// The config file of the working directory, used where it exists.
pub const DEFAULT_CONFIG: &str = "workbench-config.json";

/// Where the config path came from: messages about a missing file, the
/// start-up log line and `check` say so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigSource {
    Flag,
    /// `$WORKBENCH_CONFIG`.
    Environment,
    /// Neither was given, and `./workbench-config.json` exists.
    WorkingDir,
    /// Neither was given, and there is no `./workbench-config.json`: the
    /// user's own config (`sys::user_config`).
    User,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ConfigPath {
    pub path: PathBuf,
    pub source: ConfigSource,
}

impl ConfigPath {
    /// Where the path came from, for a person who did not name it (`None`
    /// for `--config`): the start-up log line and `check`'s first line.
    pub fn origin(&self) -> Option<&'static str> {
        match self.source {
            ConfigSource::Flag => None,
            ConfigSource::Environment => Some("the path in WORKBENCH_CONFIG"),
            ConfigSource::WorkingDir => Some(
                "./workbench-config.json of the working directory, which comes before your own config",
            ),
            ConfigSource::User => Some(
                "your own config: neither --config, WORKBENCH_CONFIG nor ./workbench-config.json names another",
            ),
        }
    }
}

/// The config when neither `--config` nor `$WORKBENCH_CONFIG` names one:
/// `./workbench-config.json` where it `exists`, else the user's own on `os`;
/// the error, when the user's folder is unknown, says what was tried.
fn unnamed_config(
    os: Os,
    env: &dyn Fn(&str) -> Option<OsString>,
    exists: &dyn Fn(&Path) -> bool,
) -> Result<ConfigPath, String> {
    let here = PathBuf::from(DEFAULT_CONFIG);
    if exists(&here) {
        return Ok(ConfigPath {
            path: here,
            source: ConfigSource::WorkingDir,
        });
    }
    match sys::user_config(os, env) {
        Ok(path) => Ok(ConfigPath {
            path,
            source: ConfigSource::User,
        }),
        Err(why) => Err(format!(
            "no config: neither --config nor WORKBENCH_CONFIG was given, there is no \
             ./{DEFAULT_CONFIG}, and your own config cannot be found ({why}); pass --config PATH"
        )),
    }
}

#[derive(Debug, PartialEq)]
pub enum Command {
    Serve {
        config: ConfigPath,
        trace: Option<PathBuf>,
    },
    Check {
        config: ConfigPath,
        json: bool,
    },
    Index {
        config: ConfigPath,
    },
    Status {
        config: ConfigPath,
        json: bool,
    },
    /// The shared fleet's own process, which a serving workbench starts
    /// (docs/reference.md §8); not for people to run.
    Fleet {
        config: ConfigPath,
    },
    Pins {
        config: ConfigPath,
        action: PinsAction,
    },
    /// What `find_tools` learned from use: list it, or `clear` it.
    Learned {
        config: ConfigPath,
        clear: bool,
    },
    /// Sign in to remote server `target` (`TOOLBOX/SERVER`).
    Login {
        config: ConfigPath,
        target: String,
        no_browser: bool,
    },
    /// Forget the tokens of remote server `target` (`TOOLBOX/SERVER`).
    Logout {
        config: ConfigPath,
        target: String,
    },
    /// Bring the hosts' servers into toolboxes (docs/reference.md §12).
    Import {
        config: ConfigPath,
        /// `--from`: what to read; empty: every host's files.
        from: Vec<ImportFrom>,
        /// `--write`: merge into the config; else print what would be written.
        write: bool,
        /// Start the servers to list their tools for the descriptions
        /// (not with `--no-start`).
        start: bool,
    },
    /// Put the workbench into a host's config.
    Install {
        config: ConfigPath,
        host: Host,
        /// `--replace`: also take out the servers the config now holds.
        replace: bool,
        /// `--undo`: reverse the install.
        undo: bool,
        /// `--include-projects`: `--replace` takes per-project entries out too.
        include_projects: bool,
    },
    /// Every tool, a search (`query`), or one tool (`query` is
    /// `TOOLBOX/SERVER/TOOL`): docs/reference.md §13.
    Tools {
        config: ConfigPath,
        query: Option<String>,
        json: bool,
        limit: Option<usize>,
    },
    /// Call one tool (`target`, with the `args` words) or, with `batch`,
    /// the JSON Lines of stdin: docs/reference.md §13.
    Call {
        config: ConfigPath,
        target: Option<String>,
        args: Vec<String>,
        json: bool,
        batch: bool,
        /// `--timeout MS`: this call's `callTimeoutMs`.
        timeout: Option<u64>,
        trace: Option<PathBuf>,
    },
    Help,
    Version,
}

/// What `import --from` names: a host's files, or one file.
#[derive(Debug, Clone, PartialEq)]
pub enum ImportFrom {
    Host(Host),
    File(PathBuf),
}

/// What `pins` does.
#[derive(Debug, PartialEq)]
pub enum PinsAction {
    List,
    /// What waits for approval, in `TOOLBOX[/SERVER[/TOOL]]` or everywhere.
    Diff(Option<String>),
    /// `TOOLBOX[/SERVER[/TOOL]]`; `yes`: without asking (`--yes`).
    Approve {
        scope: String,
        yes: bool,
    },
}

const FLAGS: &[&str] = &[
    "--config",
    "--trace",
    "--json",
    "--yes",
    "--no-browser",
    "--from",
    "--write",
    "--no-start",
    "--replace",
    "--include-projects",
    "--undo",
    "--help",
    "--version",
];

/// Parses the arguments after the program name; `env` looks up environment
/// variables, `exists` whether a file (`./workbench-config.json`) exists.
/// The error is one line that names the offending argument.
pub fn parse(
    args: impl IntoIterator<Item = OsString>,
    env: &dyn Fn(&str) -> Option<OsString>,
    exists: &dyn Fn(&Path) -> bool,
) -> Result<Command, String> {
    let args: Vec<OsString> = args.into_iter().collect();
    if let Some(word) = script_word(&args) {
        return parse_script(word, args, env, exists);
    }
    let mut word: Option<&'static str> = None;
    // The words after `pins`, `learned` or `install`.
    let mut pins = Vec::new();
    let mut json = false;
    let mut yes = false;
    let mut no_browser = false;
    let mut from = Vec::new();
    let (mut write, mut no_start, mut replace, mut undo) = (false, false, false, false);
    let mut include_projects = false;
    let mut config: Option<PathBuf> = None;
    let mut trace: Option<PathBuf> = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let Some(text) = arg.to_str() else {
            return Err(format!("unexpected argument {arg:?}"));
        };
        let (flag, inline) = match text.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, Some(value)),
            _ => (text, None),
        };
        match (flag, inline) {
            ("-h" | "--help", None) => return Ok(Command::Help),
            ("-V" | "--version", None) => return Ok(Command::Version),
            (w, None)
                if matches!(
                    word,
                    Some("pins" | "learned" | "install" | "login" | "logout")
                ) && !w.starts_with('-') =>
            {
                pins.push(w.to_string())
            }
            (
                w @ ("check" | "index" | "status" | "fleet" | "pins" | "learned" | "import"
                | "install" | "login" | "logout"),
                None,
            ) => {
                let w = WORDS
                    .iter()
                    .copied()
                    .find(|known| *known == w)
                    .unwrap_or("check");
                if let Some(first) = word.replace(w) {
                    return Err(if first == w {
                        format!("{w} was given twice")
                    } else {
                        format!("{first} and {w} cannot be combined")
                    });
                }
            }
            ("--json", None) => set_flag(&mut json, "--json")?,
            ("--yes" | "-y", None) => set_flag(&mut yes, "--yes")?,
            ("--no-browser", None) => set_flag(&mut no_browser, "--no-browser")?,
            ("--write", None) => set_flag(&mut write, "--write")?,
            ("--no-start", None) => set_flag(&mut no_start, "--no-start")?,
            ("--replace", None) => set_flag(&mut replace, "--replace")?,
            ("--undo", None) => set_flag(&mut undo, "--undo")?,
            ("--include-projects", None) => set_flag(&mut include_projects, "--include-projects")?,
            ("--from", _) => {
                let value = match inline {
                    Some(value) => OsString::from(value),
                    None => args.next().ok_or("--from needs a host or a file")?,
                };
                let text = value.to_str().unwrap_or_default();
                if value.is_empty() {
                    return Err("--from needs a host or a file".to_string());
                }
                from.push(match Host::parse(text) {
                    Some(host) => ImportFrom::Host(host),
                    None => ImportFrom::File(
                        expand_home(value, env).map_err(|e| format!("--from: {e}"))?,
                    ),
                });
            }
            ("--config" | "--trace", _) => {
                let value = match inline {
                    Some(value) => OsString::from(value),
                    None => args.next().ok_or(format!("{flag} needs a path"))?,
                };
                if value.is_empty() {
                    return Err(format!("{flag} needs a path"));
                }
                let path = expand_home(value, env).map_err(|e| format!("{flag}: {e}"))?;
                let slot = if flag == "--config" {
                    &mut config
                } else {
                    &mut trace
                };
                if slot.replace(path).is_some() {
                    return Err(format!("{flag} was given twice"));
                }
            }
            _ => return Err(unexpected(text, flag)),
        }
    }
    if yes && word != Some("pins") {
        return Err("--yes applies to pins approve".to_string());
    }
    if no_browser && word != Some("login") {
        return Err("--no-browser applies to login".to_string());
    }
    if json && !matches!(word, Some("check" | "status")) {
        return Err("--json applies to check and status".to_string());
    }
    for (given, flag) in [
        (!from.is_empty(), "--from"),
        (write, "--write"),
        (no_start, "--no-start"),
    ] {
        if given && word != Some("import") {
            return Err(format!("{flag} applies to import"));
        }
    }
    for (given, flag) in [
        (replace, "--replace"),
        (undo, "--undo"),
        (include_projects, "--include-projects"),
    ] {
        if given && word != Some("install") {
            return Err(format!("{flag} applies to install"));
        }
    }
    if replace && undo {
        return Err("--replace and --undo cannot be combined".to_string());
    }
    if include_projects && !replace {
        return Err("--include-projects applies to install --replace".to_string());
    }
    let config = choose_config(config, env, exists)?;
    match (word, trace) {
        (Some(word), Some(_)) => Err(format!("--trace applies to serving, not to {word}")),
        (Some("pins"), None) => Ok(Command::Pins {
            config,
            action: pins_action(pins, yes)?,
        }),
        (Some("learned"), None) => Ok(Command::Learned {
            config,
            clear: learned_action(&pins)?,
        }),
        (Some("login"), None) => Ok(Command::Login {
            config,
            target: target("login", &pins)?,
            no_browser,
        }),
        (Some("logout"), None) => Ok(Command::Logout {
            config,
            target: target("logout", &pins)?,
        }),
        (Some("status"), None) => Ok(Command::Status { config, json }),
        (Some("import"), None) => Ok(Command::Import {
            config,
            from,
            write,
            start: !no_start,
        }),
        (Some("install"), None) => Ok(Command::Install {
            config,
            host: install_host(&pins)?,
            replace,
            undo,
            include_projects,
        }),
        (Some("fleet"), None) => Ok(Command::Fleet { config }),
        (Some("index"), None) => Ok(Command::Index { config }),
        (Some(_), None) => Ok(Command::Check { config, json }),
        (None, trace) => Ok(Command::Serve { config, trace }),
    }
}

/// The config `--config` named, else `$WORKBENCH_CONFIG`'s, else
/// `unnamed_config`.
fn choose_config(
    config: Option<PathBuf>,
    env: &dyn Fn(&str) -> Option<OsString>,
    exists: &dyn Fn(&Path) -> bool,
) -> Result<ConfigPath, String> {
    Ok(match config {
        Some(path) => ConfigPath {
            path,
            source: ConfigSource::Flag,
        },
        None => match env("WORKBENCH_CONFIG") {
            Some(path) if !path.is_empty() => ConfigPath {
                path: expand_home(path, env).map_err(|e| format!("WORKBENCH_CONFIG: {e}"))?,
                source: ConfigSource::Environment,
            },
            _ => unnamed_config(Os::current(), env, exists)?,
        },
    })
}

// --- `tools` and `call` (docs/reference.md §13): their words and flags ---

/// The flags of `tools` and `call` that take a value.
const SCRIPT_VALUED: &[&str] = &["--config", "--trace", "--limit", "--timeout"];

/// `tools` or `call` when it is the first word (the values of flags skipped).
fn script_word(args: &[OsString]) -> Option<&'static str> {
    let mut args = args.iter().filter_map(|a| a.to_str());
    while let Some(arg) = args.next() {
        if SCRIPT_VALUED.contains(&arg) {
            args.next();
        } else if arg == "-" || !arg.starts_with('-') {
            return ["tools", "call"].into_iter().find(|w| *w == arg);
        }
    }
    None
}

/// The arguments of `tools` (`word` "tools") or `call`: the words after it
/// are the query or tool and its ARGS, each flag given once.
fn parse_script(
    word: &'static str,
    args: Vec<OsString>,
    env: &dyn Fn(&str) -> Option<OsString>,
    exists: &dyn Fn(&Path) -> bool,
) -> Result<Command, String> {
    let (mut json, mut batch, mut seen_word) = (false, false, false);
    let (mut config, mut trace, mut limit, mut timeout) = (None, None, None, None);
    let mut words = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let Some(text) = arg.to_str() else {
            return Err(format!("unexpected argument {arg:?}"));
        };
        let (flag, inline) = match text.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, Some(value.to_string())),
            _ => (text, None),
        };
        let mut value = || match inline.clone() {
            Some(value) => Ok(value),
            None => args
                .next()
                .and_then(|v| v.into_string().ok())
                .ok_or(format!("{flag} needs a value")),
        };
        match flag {
            "-h" | "--help" => return Ok(Command::Help),
            w if w == word && !seen_word => seen_word = true,
            "--json" => set_flag(&mut json, "--json")?,
            "--batch" if word == "call" => set_flag(&mut batch, "--batch")?,
            "--config" | "--trace" if flag == "--config" || word == "call" => {
                let path = value()?;
                if path.is_empty() {
                    return Err(format!("{flag} needs a path"));
                }
                let path = expand_home(path.into(), env).map_err(|e| format!("{flag}: {e}"))?;
                let slot = if flag == "--config" {
                    &mut config
                } else {
                    &mut trace
                };
                if slot.replace(path).is_some() {
                    return Err(format!("{flag} was given twice"));
                }
            }
            "--limit" | "--timeout" if (flag == "--limit") == (word == "tools") => {
                let text = value()?;
                let n = text
                    .parse::<u64>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or(format!("{flag} needs a whole number above 0, not '{text}'"))?;
                let slot = if flag == "--limit" {
                    &mut limit
                } else {
                    &mut timeout
                };
                if slot.replace(n).is_some() {
                    return Err(format!("{flag} was given twice"));
                }
            }
            "-" => words.push(text.to_string()),
            _ if !text.starts_with('-') => words.push(text.to_string()),
            "--limit" => return Err("--limit applies to tools".to_string()),
            "--batch" | "--timeout" | "--trace" => return Err(format!("{flag} applies to call")),
            _ => {
                let known = [
                    "--config",
                    "--json",
                    "--limit",
                    "--batch",
                    "--timeout",
                    "--trace",
                ];
                return Err(match suggest::closest(flag, &known) {
                    Some(close) => {
                        format!("{word}: unknown option '{text}'; did you mean '{close}'?")
                    }
                    None => format!("{word}: unknown option '{text}'"),
                });
            }
        }
    }
    let config = choose_config(config, env, exists)?;
    if word == "tools" {
        let query = (!words.is_empty()).then(|| words.join(" "));
        let limit = limit.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        return Ok(Command::Tools {
            config,
            query,
            json,
            limit,
        });
    }
    let mut words = words.into_iter();
    let target = words.next();
    let args: Vec<String> = words.collect();
    match (&target, batch) {
        (Some(target), true) => Err(format!(
            "call --batch takes its calls on stdin, not '{target}'"
        )),
        (None, false) => Err("call needs TOOLBOX/SERVER/TOOL: the tool to call".to_string()),
        _ => Ok(Command::Call {
            config,
            target,
            args,
            json,
            batch,
            timeout,
            trace,
        }),
    }
}

// --- end of `tools` and `call` ---

/// The command words (`fleet`, last, is the shared fleet's own, not in the usage).
const WORDS: &[&str] = &[
    "check", "index", "status", "pins", "learned", "import", "install", "login", "logout", "tools",
    "call", "fleet",
];

/// The one `TOOLBOX/SERVER` after `login` or `logout`.
fn target(word: &str, words: &[String]) -> Result<String, String> {
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
        [] => Err(format!("{word} needs TOOLBOX/SERVER: the remote server to {}", match word {
            "login" => "sign in to",
            _ => "forget the tokens of",
        })),
        [_, extra, ..] => Err(format!("{word}: unexpected argument '{extra}'")),
    }
}

/// The word after `install`: the host.
fn install_host(words: &[String]) -> Result<Host, String> {
    match words {
        [] => Err("install needs a host: claude-desktop, claude-code, cursor, vscode, codex, gemini or windsurf".to_string()),
        [name] => Host::parse(name).ok_or_else(|| format!("install: {}", Host::unknown(name))),
        [_, extra, ..] => Err(format!("install: unexpected argument '{extra}'")),
    }
}

/// The words after `learned`: whether it is `clear`.
fn learned_action(words: &[String]) -> Result<bool, String> {
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
fn pins_action(words: Vec<String>, yes: bool) -> Result<PinsAction, String> {
    const ACTIONS: [&str; 3] = ["list", "diff", "approve"];
    let action = match &words[..] {
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

fn set_flag(seen: &mut bool, name: &str) -> Result<(), String> {
    if std::mem::replace(seen, true) {
        return Err(format!("{name} was given twice"));
    }
    Ok(())
}

/// The message for an argument that is neither a flag nor `check`.
fn unexpected(text: &str, flag: &str) -> String {
    let (what, known) = if text.starts_with('-') {
        ("unknown option", FLAGS)
    } else {
        ("unexpected argument", &WORDS[..WORDS.len() - 1])
    };
    match suggest::closest(flag, known) {
        Some(close) => format!("{what} '{text}'; did you mean '{close}'?"),
        None => format!("{what} '{text}'"),
    }
}

/// A path that starts with `~/` (or is `~`) is taken from the home folder
/// (`sys::HOME`): host configs pass arguments without a shell, so nothing
/// else expands it.
fn expand_home(path: OsString, env: &dyn Fn(&str) -> Option<OsString>) -> Result<PathBuf, String> {
    let Some(text) = path.to_str() else {
        return Ok(PathBuf::from(path));
    };
    if let Some(problem) = crate::config::expand::unsupported_tilde(text) {
        return Err(problem);
    }
    let Some(rest) = crate::config::expand::home_relative(text) else {
        return Ok(PathBuf::from(path));
    };
    match env(crate::sys::HOME) {
        Some(home) if !home.is_empty() => {
            let mut out = home;
            out.push(rest);
            Ok(PathBuf::from(out))
        }
        _ => Err(format!(
            "'{text}' starts with '~' but {} is not set; write the absolute path",
            crate::sys::HOME
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<OsString> {
        match name {
            "APPDATA" => Some(r"C:\Users\u\AppData\Roaming".into()),
            _ => (name == crate::sys::HOME).then(|| "/home/u".into()),
        }
    }

    fn parse_str(args: &[&str]) -> Result<Command, String> {
        parse(args.iter().map(OsString::from), &env, &|_| false)
    }

    fn flag(path: &str) -> ConfigPath {
        ConfigPath {
            path: path.into(),
            source: ConfigSource::Flag,
        }
    }

    #[test]
    fn commands() {
        assert_eq!(
            parse_str(&["--config", "a.json", "--trace=t.jsonl"]),
            Ok(Command::Serve {
                config: flag("a.json"),
                trace: Some("t.jsonl".into()),
            })
        );
        assert_eq!(
            parse_str(&["check", "--config=b.json", "--json"]),
            Ok(Command::Check {
                config: flag("b.json"),
                json: true,
            })
        );
        assert_eq!(
            parse_str(&["status", "--json", "--config", "c.json"]),
            Ok(Command::Status {
                config: flag("c.json"),
                json: true,
            })
        );
        assert_eq!(
            parse_str(&["fleet", "--config", "c.json"]),
            Ok(Command::Fleet {
                config: flag("c.json")
            })
        );
        assert_eq!(parse_str(&["--version"]), Ok(Command::Version));
        assert_eq!(
            parse_str(&["--config", "c.json", "index"]),
            Ok(Command::Index {
                config: flag("c.json")
            })
        );
        for (args, problem) in [
            (
                &["index", "check"][..],
                "index and check cannot be combined",
            ),
            (&["index", "--json"], "--json applies to check and status"),
            (
                &["index", "--trace", "t"],
                "--trace applies to serving, not to index",
            ),
            (&["index", "index"], "index was given twice"),
            (
                &["indx"],
                "unexpected argument 'indx'; did you mean 'index'?",
            ),
        ] {
            assert_eq!(parse_str(args), Err(problem.to_string()), "{args:?}");
        }
        assert_eq!(parse_str(&["check", "--help"]), Ok(Command::Help));
    }

    /// Without --config and WORKBENCH_CONFIG: ./workbench-config.json where
    /// it exists, else the user's own config; a missing home says what was
    /// tried (`sys::user_config` has each system's folders).
    #[test]
    fn an_unnamed_config_is_the_working_directorys_or_the_users_own() {
        let serve = |path: &str, source| {
            Ok(Command::Serve {
                config: ConfigPath {
                    path: path.into(),
                    source,
                },
                trace: None,
            })
        };
        let here = |path: &Path| path == Path::new(DEFAULT_CONFIG);
        assert_eq!(
            parse([], &env, &here),
            serve(DEFAULT_CONFIG, ConfigSource::WorkingDir)
        );
        let own = sys::user_config(Os::current(), &env).unwrap();
        assert_eq!(
            parse_str(&[]),
            serve(own.to_str().unwrap(), ConfigSource::User)
        );
        if cfg!(target_os = "linux") {
            assert_eq!(own, Path::new("/home/u/.config/mcp-workbench/config.json"));
        }
        let import = parse_str(&["import", "--write"]);
        assert!(
            matches!(&import, Ok(Command::Import { config, write: true, .. }) if config.path == own),
            "{import:?}"
        );
        assert_eq!(
            parse([OsString::from("check")], &|_| None, &|_| false),
            Err(format!(
                "no config: neither --config nor WORKBENCH_CONFIG was given, there is no \
                 ./workbench-config.json, and your own config cannot be found ({}); pass --config PATH",
                sys::user_config(Os::current(), &|_| None).unwrap_err()
            ))
        );
        // Named ones need no home, and --help none at all.
        assert!(parse(
            ["--config", "c.json"].map(OsString::from),
            &|_| None,
            &|_| false
        )
        .is_ok());
        assert_eq!(
            parse([OsString::from("--help")], &|_| None, &|_| false),
            Ok(Command::Help)
        );
    }

    #[test]
    fn learned_lists_or_clears() {
        let learned = |clear| {
            Ok(Command::Learned {
                config: flag("c.json"),
                clear,
            })
        };
        assert_eq!(
            parse_str(&["learned", "--config", "c.json"]),
            learned(false)
        );
        assert_eq!(
            parse_str(&["--config=c.json", "learned", "list"]),
            learned(false)
        );
        assert_eq!(
            parse_str(&["learned", "clear", "--config=c.json"]),
            learned(true)
        );
        let err = |args: &[&str]| parse_str(args).unwrap_err();
        assert_eq!(
            err(&["learned", "claer"]),
            "learned: unknown action 'claer'; did you mean 'clear'?"
        );
        assert_eq!(
            err(&["learned", "list", "x"]),
            "learned: unexpected argument 'x'"
        );
        assert_eq!(
            err(&["learned", "--json"]),
            "--json applies to check and status"
        );
    }

    #[test]
    fn pins_takes_an_action() {
        let pins = |action| {
            Ok(Command::Pins {
                config: flag("c.json"),
                action,
            })
        };
        assert_eq!(
            parse_str(&["pins", "--config", "c.json"]),
            pins(PinsAction::List)
        );
        assert_eq!(
            parse_str(&["--config=c.json", "pins", "list"]),
            pins(PinsAction::List)
        );
        assert_eq!(
            parse_str(&["pins", "approve", "dev/files/read", "--config", "c.json"]),
            pins(PinsAction::Approve {
                scope: "dev/files/read".into(),
                yes: false
            })
        );
        assert_eq!(
            parse_str(&["pins", "approve", "--yes", "dev/files", "--config=c.json"]),
            pins(PinsAction::Approve {
                scope: "dev/files".into(),
                yes: true
            })
        );
        assert_eq!(
            parse_str(&["pins", "diff", "--config=c.json"]),
            pins(PinsAction::Diff(None))
        );
        assert_eq!(
            parse_str(&["pins", "diff", "dev", "--config=c.json"]),
            pins(PinsAction::Diff(Some("dev".into())))
        );
        let err = |args: &[&str]| parse_str(args).unwrap_err();
        assert_eq!(
            err(&["pins", "diff", "--yes"]),
            "--yes applies to pins approve"
        );
        assert_eq!(err(&["check", "--yes"]), "--yes applies to pins approve");
        assert_eq!(
            err(&["pins", "dif"]),
            "pins: unknown action 'dif'; did you mean 'diff'?"
        );
        assert_eq!(
            err(&["pins", "aprove", "t"]),
            "pins: unknown action 'aprove'; did you mean 'approve'?"
        );
        assert_eq!(
            err(&["pins", "approve"]),
            "pins approve needs TOOLBOX, TOOLBOX/SERVER or TOOLBOX/SERVER/TOOL"
        );
        assert_eq!(
            err(&["pins", "approve", "t", "u"]),
            "pins: unexpected argument 'u'"
        );
        assert_eq!(err(&["pins", "list", "x"]), "pins: unexpected argument 'x'");
        assert_eq!(err(&["check", "pins"]), "check and pins cannot be combined");
        assert_eq!(
            err(&["pins", "--json"]),
            "--json applies to check and status"
        );
        assert_eq!(
            err(&["pins", "--trace", "t"]),
            "--trace applies to serving, not to pins"
        );
        assert_eq!(
            err(&["pin"]),
            "unexpected argument 'pin'; did you mean 'pins'?"
        );
    }

    /// The usage line after a bad flag names every command, and `--help`
    /// describes each one.
    #[test]
    fn the_usage_names_every_command() {
        let commands = [
            "serve", "check", "index", "status", "pins", "learned", "login", "logout", "import",
            "install", "tools", "call",
        ];
        let named = |text: &str, word: &str| {
            text.split(|c: char| !c.is_ascii_alphanumeric())
                .any(|w| w == word)
        };
        for word in commands {
            assert!(named(USAGE_LINE, word), "{word} is not in {USAGE_LINE:?}");
            if word != "serve" {
                assert!(
                    USAGE.contains(&format!("  mcp-workbench {word} ")),
                    "--help does not describe {word}"
                );
            }
        }
        assert!(USAGE_LINE.lines().count() == 1);
    }

    #[test]
    fn tools_and_call_take_their_words_and_flags() {
        assert_eq!(
            parse_str(&[
                "--config",
                "c.json",
                "tools",
                "read",
                "a",
                "file",
                "--limit=3"
            ]),
            Ok(Command::Tools {
                config: flag("c.json"),
                query: Some("read a file".into()),
                json: false,
                limit: Some(3),
            })
        );
        assert_eq!(
            parse_str(&[
                "call",
                "t/s/n",
                "a=1",
                "b=x y",
                "--json",
                "--config",
                "c.json",
                "--timeout",
                "50"
            ]),
            Ok(Command::Call {
                config: flag("c.json"),
                target: Some("t/s/n".into()),
                args: vec!["a=1".into(), "b=x y".into()],
                json: true,
                batch: false,
                timeout: Some(50),
                trace: None,
            })
        );
        assert_eq!(
            parse_str(&["call", "--batch", "--config=c.json"]),
            Ok(Command::Call {
                config: flag("c.json"),
                target: None,
                args: Vec::new(),
                json: false,
                batch: true,
                timeout: None,
                trace: None,
            })
        );
        let err = |args: &[&str]| parse_str(args).unwrap_err();
        assert_eq!(
            err(&["call"]),
            "call needs TOOLBOX/SERVER/TOOL: the tool to call"
        );
        assert_eq!(
            err(&["call", "--batch", "t/s/n"]),
            "call --batch takes its calls on stdin, not 't/s/n'"
        );
        assert_eq!(
            err(&["tools", "--timeout", "5"]),
            "--timeout applies to call"
        );
        assert_eq!(
            err(&["call", "t/s/n", "--timeout", "0"]),
            "--timeout needs a whole number above 0, not '0'"
        );
        assert_eq!(
            err(&["call", "t/s/n", "--jsn"]),
            "call: unknown option '--jsn'; did you mean '--json'?"
        );
        assert_eq!(
            err(&["tool"]),
            "unexpected argument 'tool'; did you mean 'tools'?"
        );
    }

    #[test]
    fn import_and_install() {
        assert_eq!(
            parse_str(&["import", "--config", "c.json"]),
            Ok(Command::Import {
                config: flag("c.json"),
                from: Vec::new(),
                write: false,
                start: true,
            })
        );
        assert_eq!(
            parse_str(&[
                "--from",
                "cursor",
                "import",
                "--from=~/x.json",
                "--write",
                "--no-start",
                "--config=c.json"
            ]),
            Ok(Command::Import {
                config: flag("c.json"),
                from: vec![
                    ImportFrom::Host(Host::Cursor),
                    ImportFrom::File("/home/u/x.json".into())
                ],
                write: true,
                start: false,
            })
        );
        assert_eq!(
            parse_str(&["install", "codex", "--replace", "--config", "c.json"]),
            Ok(Command::Install {
                config: flag("c.json"),
                host: Host::Codex,
                replace: true,
                undo: false,
                include_projects: false,
            })
        );
        assert_eq!(
            parse_str(&[
                "install",
                "claude-code",
                "--replace",
                "--include-projects",
                "--config",
                "c.json"
            ]),
            Ok(Command::Install {
                config: flag("c.json"),
                host: Host::ClaudeCode,
                replace: true,
                undo: false,
                include_projects: true,
            })
        );
        assert_eq!(
            parse_str(&["install", "claude-code", "--include-projects"]),
            Err("--include-projects applies to install --replace".to_string())
        );
        assert_eq!(
            parse_str(&["--undo", "install", "vscode", "--config", "c.json"]),
            Ok(Command::Install {
                config: flag("c.json"),
                host: Host::VsCode,
                replace: false,
                undo: true,
                include_projects: false,
            })
        );
        let err = |args: &[&str]| parse_str(args).unwrap_err();
        assert_eq!(
            err(&["install"]),
            "install needs a host: claude-desktop, claude-code, cursor, vscode, codex, gemini or windsurf"
        );
        assert_eq!(
            err(&["install", "cursr"]),
            "install: unknown host 'cursr'; did you mean 'cursor'?"
        );
        assert_eq!(
            err(&["install", "cursor", "codex"]),
            "install: unexpected argument 'codex'"
        );
        assert_eq!(
            err(&["install", "cursor", "--replace", "--undo"]),
            "--replace and --undo cannot be combined"
        );
        assert_eq!(
            err(&["install", "cursor", "--write"]),
            "--write applies to import"
        );
        assert_eq!(err(&["import", "--undo"]), "--undo applies to install");
        assert_eq!(
            err(&["check", "--from", "cursor"]),
            "--from applies to import"
        );
        assert_eq!(err(&["import", "--from"]), "--from needs a host or a file");
        assert_eq!(err(&["import", "cursor"]), "unexpected argument 'cursor'");
        assert_eq!(
            err(&["imprt"]),
            "unexpected argument 'imprt'; did you mean 'import'?"
        );
        assert_eq!(
            err(&["import", "--writ"]),
            "unknown option '--writ'; did you mean '--write'?"
        );
    }

    #[test]
    fn login_and_logout_take_one_remote_server() {
        assert_eq!(
            parse_str(&["login", "work/linear", "--no-browser", "--config=c.json"]),
            Ok(Command::Login {
                config: flag("c.json"),
                target: "work/linear".into(),
                no_browser: true,
            })
        );
        assert_eq!(
            parse_str(&["--config", "c.json", "logout", "work/linear"]),
            Ok(Command::Logout {
                config: flag("c.json"),
                target: "work/linear".into(),
            })
        );
        let err = |args: &[&str]| parse_str(args).unwrap_err();
        assert_eq!(
            err(&["login"]),
            "login needs TOOLBOX/SERVER: the remote server to sign in to"
        );
        assert_eq!(
            err(&["logout", "work"]),
            "logout: 'work' is not TOOLBOX/SERVER (a toolbox's name and one of its servers' names)"
        );
        assert_eq!(
            err(&["login", "a/b/c"]),
            "login: 'a/b/c' is not TOOLBOX/SERVER (a toolbox's name and one of its servers' names)"
        );
        assert_eq!(
            err(&["login", "a/b", "c/d"]),
            "login: unexpected argument 'c/d'"
        );
        assert_eq!(
            err(&["logout", "a/b", "--no-browser"]),
            "--no-browser applies to login"
        );
        assert_eq!(
            err(&["check", "--no-browser"]),
            "--no-browser applies to login"
        );
        assert_eq!(
            err(&["login", "a/b", "--json"]),
            "--json applies to check and status"
        );
        assert_eq!(
            err(&["logon"]),
            "unexpected argument 'logon'; did you mean 'login'?"
        );
    }

    #[test]
    fn flags_may_come_before_check() {
        let want = Ok(Command::Check {
            config: flag("x.json"),
            json: true,
        });
        assert_eq!(parse_str(&["--config", "x.json", "check", "--json"]), want);
        assert_eq!(parse_str(&["--json", "--config=x.json", "check"]), want);
    }

    #[test]
    fn errors_name_the_argument() {
        let err = |args: &[&str]| parse_str(args).unwrap_err();
        assert_eq!(
            err(&["--config", "a", "--config", "b"]),
            "--config was given twice"
        );
        assert_eq!(
            err(&["--trace=a", "--trace", "b"]),
            "--trace was given twice"
        );
        assert_eq!(err(&["check", "check"]), "check was given twice");
        assert_eq!(
            err(&["check", "--json", "--json"]),
            "--json was given twice"
        );
        assert_eq!(err(&["--json"]), "--json applies to check and status");
        assert_eq!(
            err(&["fleet", "--json"]),
            "--json applies to check and status"
        );
        assert_eq!(
            err(&["check", "status"]),
            "check and status cannot be combined"
        );
        assert_eq!(
            err(&["status", "--trace", "t"]),
            "--trace applies to serving, not to status"
        );
        assert_eq!(
            err(&["stauts"]),
            "unexpected argument 'stauts'; did you mean 'status'?"
        );
        assert_eq!(
            err(&["check", "--trace", "t"]),
            "--trace applies to serving, not to check"
        );
        assert_eq!(err(&["--config"]), "--config needs a path");
        assert_eq!(err(&["--config="]), "--config needs a path");
        assert_eq!(err(&["serve"]), "unexpected argument 'serve'");
        assert_eq!(
            err(&["chek"]),
            "unexpected argument 'chek'; did you mean 'check'?"
        );
        assert_eq!(
            err(&["--confg", "x"]),
            "unknown option '--confg'; did you mean '--config'?"
        );
        assert_eq!(err(&["--verbose"]), "unknown option '--verbose'");
    }

    #[test]
    fn home_is_expanded_in_paths() {
        assert_eq!(
            parse_str(&["--config", "~/wb.json"]),
            parse_str(&["--config", "/home/u/wb.json"])
        );
        assert_eq!(
            parse_str(&["--trace=~"]),
            parse_str(&["--trace", "/home/u"])
        );
        assert!(parse_str(&["--config", "~bob/wb.json"])
            .unwrap_err()
            .starts_with("--config: '~bob/wb.json': only '~' and '~/...' are expanded"));
        let no_home = |_: &str| None;
        assert_eq!(
            parse(["--config", "~/x"].map(OsString::from), &no_home, &|_| {
                false
            })
            .unwrap_err(),
            format!(
                "--config: '~/x' starts with '~' but {} is not set; write the absolute path",
                crate::sys::HOME
            )
        );
        let from_env = |name: &str| match name {
            "WORKBENCH_CONFIG" => Some(OsString::from("~/e.json")),
            _ if name == crate::sys::HOME => Some(OsString::from("/h")),
            _ => None,
        };
        assert_eq!(
            parse([OsString::from("check")], &from_env, &|_| true),
            Ok(Command::Check {
                config: ConfigPath {
                    path: "/h/e.json".into(),
                    source: ConfigSource::Environment
                },
                json: false
            })
        );
    }
}
