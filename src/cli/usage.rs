//! The `--help` text and the one usage line of a usage error, rendered from
//! the definitions (`defs`): each command's line shows the flags that apply
//! to it, as each flag's definition says. No IO.

use super::defs::{Def, Flag, Kind, Shown, Takes, COMMANDS, FLAGS};

const PROGRAM: &str = "mcp-workbench";

const TITLE: &str = "mcp-workbench: one stdio MCP server that groups MCP servers into toolboxes";

/// What `--help` says after the commands.
const FOOTER: &str = "\
The config path is --config, else $WORKBENCH_CONFIG, else ./workbench-config.json
where it exists, else your own config: $XDG_CONFIG_HOME/mcp-workbench/config.json
(~/.config/...; macOS: ~/Library/Application Support/mcp-workbench/config.json;
Windows: %APPDATA%\\mcp-workbench\\config.json), which import --write creates.
Relative paths in the config are taken from the config file's folder; a path
that starts with ~/ is taken from your home folder ($HOME; %USERPROFILE% on Windows).
Logs go to stderr; set RUST_LOG (error, warn, info, debug) to choose how much.
Exit codes: 0 clean shutdown, 1 runtime failure, 2 usage or config error.
";

/// The `--help` text: each command with its flags and what it does.
pub fn usage() -> String {
    let mut out = format!("{TITLE}\n\nUsage:\n");
    for command in COMMANDS.iter().filter(|c| c.kind != Kind::Hidden) {
        out.push_str(&format!("  {}\n", synopsis(command)));
        for line in command.help {
            out.push_str(&format!("      {line}\n"));
        }
    }
    let alone: Vec<&str> = FLAGS
        .iter()
        .filter(|f| f.shown == Shown::Alone)
        .map(|f| f.name)
        .collect();
    out.push_str(&format!("  {PROGRAM} {}\n\n{FOOTER}", alone.join(" | ")));
    out
}

/// The one line printed with a usage error, before the hint to `--help`:
/// every command, serving (no command word) first.
pub fn usage_line() -> String {
    let serving = COMMANDS.iter().find(|c| c.kind == Kind::Default);
    let words: Vec<&str> = COMMANDS
        .iter()
        .filter(|c| c.kind == Kind::Listed)
        .map(|c| c.word)
        .collect();
    let everywhere: String = FLAGS
        .iter()
        .filter(|f| f.shown == Shown::Own && f.applies == super::defs::Applies::All)
        .map(|f| format!(" {}", shown(f, "")))
        .collect();
    format!(
        "usage: {} (serve MCP over stdio) | {PROGRAM} {}{everywhere} [OPTIONS]",
        serving.map(synopsis).unwrap_or_default(),
        words.join("|"),
    )
}

/// A command's usage line: the program, its word, the words before the
/// flags, the flags, the words after.
fn synopsis(command: &Def) -> String {
    let mut parts = vec![PROGRAM];
    if command.kind != Kind::Default {
        parts.push(command.word);
    }
    parts.extend(Some(command.before).filter(|b| !b.is_empty()));
    let mut line = parts.join(" ");
    for flag in FLAGS.iter().filter(|f| f.shown == Shown::Own) {
        if flag.applies_to(command.word) {
            line.push(' ');
            line.push_str(&shown(flag, command.word));
        }
    }
    if !command.after.is_empty() {
        line.push(' ');
        line.push_str(command.after);
    }
    line
}

/// A flag as a usage line shows it, with the flags shown within it that
/// apply to `word`: `[--config PATH]`, `[--from HOST|FILE]...`,
/// `[--replace [--include-projects]]`.
fn shown(flag: &Flag, word: &str) -> String {
    let mut text = format!("[{}", flag.name);
    if let Takes::Path(value) | Takes::HostOrFile(value) | Takes::Number(value) = flag.takes {
        text.push(' ');
        text.push_str(value);
    }
    for inner in FLAGS.iter().filter(|f| f.shown == Shown::Within(flag.name)) {
        if inner.applies_to(word) {
            text.push(' ');
            text.push_str(&shown(inner, word));
        }
    }
    text.push(']');
    if flag.repeats {
        text.push_str("...");
    }
    text
}
