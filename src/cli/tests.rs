//! The command line's tests: what each argument list parses to, each
//! error's words, and the usage rendered from the definitions.

use super::*;
use crate::hosts::Host;
use crate::sys::{self, Os};
use std::ffi::OsString;
use std::path::Path;

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
        (
            &["index", "--json"],
            "--json applies to check, status, tools and call",
        ),
        (
            &["index", "--trace", "t"],
            "--trace applies to serving and call, not to index",
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
        "--json applies to check, status, tools and call"
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
        "--json applies to check, status, tools and call"
    );
    assert_eq!(
        err(&["pins", "--trace", "t"]),
        "--trace applies to serving and call, not to pins"
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
    let (usage, usage_line) = (usage(), usage_line());
    for word in commands {
        assert!(named(&usage_line, word), "{word} is not in {usage_line:?}");
        if word != "serve" {
            assert!(
                usage.contains(&format!("  mcp-workbench {word} ")),
                "--help does not describe {word}"
            );
        }
    }
    assert!(usage_line.lines().count() == 1);
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
        "--json applies to check, status, tools and call"
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
    assert_eq!(
        err(&["--json"]),
        "--json applies to check, status, tools and call"
    );
    assert_eq!(
        err(&["fleet", "--json"]),
        "--json applies to check, status, tools and call"
    );
    assert_eq!(
        err(&["check", "status"]),
        "check and status cannot be combined"
    );
    assert_eq!(
        err(&["status", "--trace", "t"]),
        "--trace applies to serving and call, not to status"
    );
    assert_eq!(
        err(&["stauts"]),
        "unexpected argument 'stauts'; did you mean 'status'?"
    );
    assert_eq!(
        err(&["check", "--trace", "t"]),
        "--trace applies to serving and call, not to check"
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

/// The help rendered from the definitions is the text the `cli-help`
/// transcript holds, byte for byte.
#[test]
fn the_help_is_the_transcripts() {
    let expected = include_str!("../../testdata/transcripts/cli-help/expected.jsonl");
    assert_eq!(usage(), expected);
}

/// Every flag shows in the usage line of each command it applies to, once.
#[test]
fn every_flag_shows_where_it_applies() {
    let help = usage();
    for command in super::defs::COMMANDS {
        if command.kind == super::defs::Kind::Hidden {
            continue;
        }
        let line = help
            .lines()
            .find(|l| {
                let text = l.trim_start();
                let rest = text.strip_prefix("mcp-workbench").unwrap_or("");
                match command.kind {
                    super::defs::Kind::Default => rest.starts_with(" [--config"),
                    _ => rest.starts_with(&format!(" {} ", command.word)),
                }
            })
            .unwrap_or_else(|| panic!("no usage line for {}", command.word));
        for flag in super::defs::FLAGS {
            let count = line.matches(&format!("[{}", flag.name)).count();
            let want = usize::from(
                flag.applies_to(command.word) && flag.shown != super::defs::Shown::Alone,
            );
            assert_eq!(count, want, "{} in {line:?}", flag.name);
        }
    }
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
            call: CallArgs {
                target: Some("t/s/n".into()),
                args: vec!["a=1".into(), "b=x y".into()],
                json: true,
                batch: false,
                timeout: Some(50),
                trace: None,
            },
        })
    );
    assert_eq!(
        parse_str(&["--config", "c.json", "call", "t/s/n", "-"]),
        Ok(Command::Call {
            config: flag("c.json"),
            call: CallArgs {
                target: Some("t/s/n".into()),
                args: vec!["-".into()],
                json: false,
                batch: false,
                timeout: None,
                trace: None,
            },
        })
    );
    assert_eq!(
        parse_str(&["call", "--batch", "--config=c.json"]),
        Ok(Command::Call {
            config: flag("c.json"),
            call: CallArgs {
                target: None,
                args: Vec::new(),
                json: false,
                batch: true,
                timeout: None,
                trace: None,
            },
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
        err(&["call", "t/s/n", "--limit", "5"]),
        "--limit applies to tools"
    );
    assert_eq!(
        err(&["call", "t/s/n", "--timeout", "0"]),
        "--timeout needs a whole number above 0, not '0'"
    );
    assert_eq!(
        err(&["call", "t/s/n", "--jsn"]),
        "unknown option '--jsn'; did you mean '--json'?"
    );
    assert_eq!(
        err(&["tools", "--trace", "f"]),
        "--trace applies to serving and call, not to tools"
    );
    assert_eq!(
        err(&["tool"]),
        "unexpected argument 'tool'; did you mean 'tools'?"
    );
}
