//! Hand-written command-line parsing (contract §2). No IO besides reading one
//! environment variable for the default config path.

use std::ffi::OsString;
use std::path::PathBuf;

pub const USAGE: &str = "\
mcp-workbench: one stdio MCP server that groups MCP servers into toolboxes

Usage:
  mcp-workbench [--config PATH]          serve MCP over stdio (the default)
  mcp-workbench check [--config PATH]    validate the config, start every server once, print a report
  mcp-workbench --help | --version

The config path is --config, else $WORKBENCH_CONFIG, else ./workbench-config.json.
Logs go to stderr; set RUST_LOG (error, warn, info, debug) to choose how much.
Exit codes: 0 clean shutdown, 1 runtime failure, 2 usage or config error.
";

#[derive(Debug, PartialEq)]
pub enum Command {
    Serve { config: PathBuf },
    Check { config: PathBuf },
    Help,
    Version,
}

/// Parses the arguments after the program name.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, String> {
    let mut check = false;
    let mut config: Option<PathBuf> = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let Some(text) = arg.to_str() else {
            return Err(format!("unexpected argument {arg:?}"));
        };
        match text {
            "-h" | "--help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            "check" if !check && config.is_none() => check = true,
            "--config" => {
                let value = args.next().ok_or("--config needs a path")?;
                set_once(&mut config, PathBuf::from(value))?;
            }
            _ => match text.strip_prefix("--config=") {
                Some(value) if !value.is_empty() => set_once(&mut config, PathBuf::from(value))?,
                _ => return Err(format!("unexpected argument '{text}'")),
            },
        }
    }
    let config = config.unwrap_or_else(default_config_path);
    Ok(if check {
        Command::Check { config }
    } else {
        Command::Serve { config }
    })
}

fn set_once(slot: &mut Option<PathBuf>, value: PathBuf) -> Result<(), String> {
    if slot.replace(value).is_some() {
        return Err("--config was given twice".to_string());
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
            parse_str(&["--config", "a.json"]),
            Ok(Command::Serve {
                config: "a.json".into()
            })
        );
        assert_eq!(
            parse_str(&["check", "--config=b.json"]),
            Ok(Command::Check {
                config: "b.json".into()
            })
        );
        assert_eq!(parse_str(&["--version"]), Ok(Command::Version));
        assert_eq!(parse_str(&["check", "--help"]), Ok(Command::Help));
        assert!(parse_str(&["--config"]).is_err());
        assert!(parse_str(&["--config", "a", "--config", "b"]).is_err());
        assert!(parse_str(&["serve"]).is_err());
        assert!(parse_str(&["check", "check"]).is_err());
    }
}
