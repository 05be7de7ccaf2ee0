//! Hand-written command-line parsing (contract §2). No IO besides reading one
//! environment variable for the default config path.

use std::ffi::OsString;
use std::path::PathBuf;

pub const USAGE: &str = "\
mcp-workbench: one stdio MCP server that groups MCP servers into toolboxes

Usage:
  mcp-workbench [--config PATH] [--trace FILE]
      serve MCP over stdio (the default); --trace writes every message that crosses
      the workbench to FILE as JSON lines
  mcp-workbench check [--config PATH] [--json]
      validate the config, start every server once, print a report
  mcp-workbench --help | --version

The config path is --config, else $WORKBENCH_CONFIG, else ./workbench-config.json.
Logs go to stderr; set RUST_LOG (error, warn, info, debug) to choose how much.
Exit codes: 0 clean shutdown, 1 runtime failure, 2 usage or config error.
";

#[derive(Debug, PartialEq)]
pub enum Command {
    Serve {
        config: PathBuf,
        trace: Option<PathBuf>,
    },
    Check {
        config: PathBuf,
        json: bool,
    },
    Help,
    Version,
}

/// Parses the arguments after the program name.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, String> {
    let mut check = false;
    let mut json = false;
    let mut config: Option<PathBuf> = None;
    let mut trace: Option<PathBuf> = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let Some(text) = arg.to_str() else {
            return Err(format!("unexpected argument {arg:?}"));
        };
        match text {
            "-h" | "--help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            "check" if !check && config.is_none() && trace.is_none() => check = true,
            "--json" if check && !json => json = true,
            "--config" | "--trace" => {
                let value = args.next().ok_or(format!("{text} needs a path"))?;
                let slot = if text == "--config" {
                    &mut config
                } else {
                    &mut trace
                };
                set_once(slot, text, PathBuf::from(value))?;
            }
            _ => match text.split_once('=') {
                Some((flag @ ("--config" | "--trace"), value)) if !value.is_empty() => {
                    let slot = if flag == "--config" {
                        &mut config
                    } else {
                        &mut trace
                    };
                    set_once(slot, flag, PathBuf::from(value))?;
                }
                _ => return Err(format!("unexpected argument '{text}'")),
            },
        }
    }
    let config = config.unwrap_or_else(default_config_path);
    match (check, trace) {
        (true, Some(_)) => Err("--trace applies to serving, not to check".to_string()),
        (true, None) => Ok(Command::Check { config, json }),
        (false, trace) => Ok(Command::Serve { config, trace }),
    }
}

fn set_once(slot: &mut Option<PathBuf>, flag: &str, value: PathBuf) -> Result<(), String> {
    if slot.replace(value).is_some() {
        return Err(format!("{flag} was given twice"));
    }
    Ok(())
}

fn default_config_path() -> PathBuf {
    match std::env::var_os("WORKBENCH_CONFIG") {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => PathBuf::from("workbench-config.json"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(args: &[&str]) -> Result<Command, String> {
        parse(args.iter().map(OsString::from))
    }

    #[test]
    fn commands() {
        assert_eq!(
            parse_str(&["--config", "a.json", "--trace=t.jsonl"]),
            Ok(Command::Serve {
                config: "a.json".into(),
                trace: Some("t.jsonl".into()),
            })
        );
        assert_eq!(
            parse_str(&["check", "--config=b.json", "--json"]),
            Ok(Command::Check {
                config: "b.json".into(),
                json: true,
            })
        );
        assert!(parse_str(&["--json"]).is_err());
        assert!(parse_str(&["check", "--trace", "t"]).is_err());
        assert_eq!(parse_str(&["--version"]), Ok(Command::Version));
        assert_eq!(parse_str(&["check", "--help"]), Ok(Command::Help));
        assert!(parse_str(&["--config"]).is_err());
        assert!(parse_str(&["--config", "a", "--config", "b"]).is_err());
        assert!(parse_str(&["serve"]).is_err());
        assert!(parse_str(&["check", "check"]).is_err());
    }
}
