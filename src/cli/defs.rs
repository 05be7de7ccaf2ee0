//! Every command and every flag, defined once (after ripgrep's
//! `crates/core/flags/defs.rs`): a flag's names, its value, the commands it
//! applies to and how its usage shows it; a command's word, the words it
//! takes, its usage and help lines, and how it is built from what the
//! arguments gave. `parse` reads arguments against these tables and
//! `usage` renders `--help` from them: adding a command or a flag is one
//! entry here. No IO.

use super::command::{CallArgs, Command};
use super::config::ConfigPath;
use super::given::Given;
use super::operands::{call_operands, install_host, learned_action, pins_action, target};

/// One flag.
pub(super) struct Flag {
    /// The long name, `--...`: the one messages use.
    pub name: &'static str,
    /// A short name (`-y`), where there is one.
    pub short: Option<&'static str>,
    pub takes: Takes,
    /// Whether it may be given more than once.
    pub repeats: bool,
    pub applies: Applies,
    /// The flag it needs, and the error without it.
    pub needs: Option<(&'static str, &'static str)>,
    /// A flag it cannot be combined with.
    pub excludes: Option<&'static str>,
    pub shown: Shown,
}

/// What a flag takes.
#[derive(Clone, Copy)]
pub(super) enum Takes {
    /// Nothing: it is on or not.
    Switch,
    /// A path (`~/` taken from the home folder), shown as this name.
    Path(&'static str),
    /// A host's name or a file (`--from`), shown as this name.
    HostOrFile(&'static str),
    /// A whole number above 0, shown as this name.
    Number(&'static str),
    /// Nothing, and the parse ends with this command (`--help`).
    Ends(fn() -> Command),
}

/// Which commands a flag applies to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Applies {
    /// Every one.
    All,
    /// These words, and how the error names them.
    To(&'static [&'static str], &'static str),
    /// Serving, and these words: checked once the config is known, and
    /// the error names the command given and how the serving list reads.
    Serving(&'static [&'static str], &'static str),
}

/// Where a command's usage line shows a flag.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Shown {
    /// In the command's own list: `[--json]`.
    Own,
    /// Inside the brackets of that flag's: `[--replace [--include-projects]]`.
    Within(&'static str),
    /// In the command's words (`pins`' `approve SCOPE [--yes]`).
    InWords,
    /// On the last line of the usage, alone: `--help | --version`.
    Alone,
}

/// One command.
pub(super) struct Def {
    /// The word that names it (serving's, `SERVE`, is never typed).
    pub word: &'static str,
    pub kind: Kind,
    /// Whether words follow it (`pins diff`, `install cursor`).
    pub takes_words: bool,
    /// Its usage line: the words before the flags, and after.
    pub before: &'static str,
    pub after: &'static str,
    /// What it does, a line each, under its usage line in `--help`.
    pub help: &'static [&'static str],
    pub build: fn(&Given, ConfigPath) -> Result<Command, String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Serving: what runs when no word is given.
    Default,
    /// A command of the usage.
    Listed,
    /// Not for people to run (`fleet`): not in the usage, never suggested.
    Hidden,
}

/// Serving's word (never typed: `serve` is no command).
pub(super) const SERVE: &str = "serve";

/// The flags, in the order their errors are checked and suggested.
pub(super) const FLAGS: &[Flag] = &[
    Flag {
        name: "--config",
        short: None,
        takes: Takes::Path("PATH"),
        repeats: false,
        applies: Applies::All,
        needs: None,
        excludes: None,
        shown: Shown::Own,
    },
    Flag {
        name: "--trace",
        short: None,
        takes: Takes::Path("FILE"),
        repeats: false,
        applies: Applies::Serving(&["call"], "serving and call"),
        needs: None,
        excludes: None,
        shown: Shown::Own,
    },
    Flag {
        name: "--yes",
        short: Some("-y"),
        applies: Applies::To(&["pins"], "pins approve"),
        shown: Shown::InWords,
        ..switch()
    },
    Flag {
        name: "--no-browser",
        applies: Applies::To(&["login"], "login"),
        ..switch()
    },
    Flag {
        name: "--json",
        applies: Applies::To(
            &["check", "status", "tools", "call"],
            "check, status, tools and call",
        ),
        ..switch()
    },
    Flag {
        name: "--limit",
        takes: Takes::Number("N"),
        applies: Applies::To(&["tools"], "tools"),
        ..switch()
    },
    Flag {
        name: "--batch",
        applies: Applies::To(&["call"], "call"),
        ..switch()
    },
    Flag {
        name: "--timeout",
        takes: Takes::Number("MS"),
        applies: Applies::To(&["call"], "call"),
        ..switch()
    },
    Flag {
        name: "--from",
        short: None,
        takes: Takes::HostOrFile("HOST|FILE"),
        repeats: true,
        applies: Applies::To(&["import"], "import"),
        needs: None,
        excludes: None,
        shown: Shown::Own,
    },
    Flag {
        name: "--write",
        applies: Applies::To(&["import"], "import"),
        ..switch()
    },
    Flag {
        name: "--no-start",
        applies: Applies::To(&["import"], "import"),
        ..switch()
    },
    Flag {
        name: "--replace",
        applies: Applies::To(&["install"], "install"),
        excludes: Some("--undo"),
        ..switch()
    },
    Flag {
        name: "--undo",
        applies: Applies::To(&["install"], "install"),
        ..switch()
    },
    Flag {
        name: "--include-projects",
        applies: Applies::To(&["install"], "install"),
        needs: Some(("--replace", "install --replace")),
        shown: Shown::Within("--replace"),
        ..switch()
    },
    Flag {
        name: "--help",
        short: Some("-h"),
        takes: Takes::Ends(|| Command::Help),
        shown: Shown::Alone,
        ..switch()
    },
    Flag {
        name: "--version",
        short: Some("-V"),
        takes: Takes::Ends(|| Command::Version),
        shown: Shown::Alone,
        ..switch()
    },
];

/// A switch that applies everywhere, shown in its commands' lists: what
/// the entries above start from.
const fn switch() -> Flag {
    Flag {
        name: "",
        short: None,
        takes: Takes::Switch,
        repeats: false,
        applies: Applies::All,
        needs: None,
        excludes: None,
        shown: Shown::Own,
    }
}

/// The commands, in the order of the usage.
pub(super) const COMMANDS: &[Def] = &[
    Def {
        word: SERVE,
        kind: Kind::Default,
        help: &[
            "serve MCP over stdio (the default); --trace writes every message that crosses",
            "the workbench to FILE as JSON lines",
        ],
        build: |given, config| {
            Ok(Command::Serve {
                config,
                trace: given.path("--trace"),
            })
        },
        ..command()
    },
    Def {
        word: "check",
        help: &["validate the config, start every server once, print a report"],
        build: |given, config| {
            Ok(Command::Check {
                config,
                json: given.has("--json"),
            })
        },
        ..command()
    },
    Def {
        word: "status",
        help: &[
            "the shared fleet of that config (\"shareServers\": true): its sessions and",
            "servers; exits 1 when none runs",
        ],
        build: |given, config| {
            Ok(Command::Status {
                config,
                json: given.has("--json"),
            })
        },
        ..command()
    },
    Def {
        word: "index",
        help: &[
            "start every server once and list its tools into the tool catalog that",
            "find_tools searches (in your cache folder); one line per server",
        ],
        build: |_, config| Ok(Command::Index { config }),
        ..command()
    },
    Def {
        word: "pins",
        takes_words: true,
        after: "[list | diff [SCOPE] | approve SCOPE [--yes]]",
        help: &[
            "with \"pinTools\": true, list the pinned tool definitions (approved, changed,",
            "new), show what changed (SCOPE: TOOLBOX[/SERVER[/TOOL]]), or show it and",
            "approve it once you confirm on the terminal (--yes: without asking; never",
            "give --yes to a model)",
        ],
        build: |given, config| {
            Ok(Command::Pins {
                config,
                action: pins_action(&given.words, given.has("--yes"))?,
            })
        },
        ..command()
    },
    Def {
        word: "learned",
        takes_words: true,
        after: "[list | clear]",
        help: &[
            "what find_tools learned from use (a search's words and the tool the model",
            "then called instead): list it, or forget it all",
        ],
        build: |given, config| {
            Ok(Command::Learned {
                config,
                clear: learned_action(&given.words)?,
            })
        },
        ..command()
    },
    Def {
        word: "login",
        takes_words: true,
        before: "TOOLBOX/SERVER",
        help: &[
            "sign in to a remote server: opens the sign-in page in your browser (not",
            "with --no-browser; the page is printed either way) and waits for it; where",
            "the browser cannot reach this machine, paste the address it ends on",
        ],
        build: |given, config| {
            Ok(Command::Login {
                config,
                target: target("login", "sign in to", &given.words)?,
                no_browser: given.has("--no-browser"),
            })
        },
        ..command()
    },
    Def {
        word: "logout",
        takes_words: true,
        before: "TOOLBOX/SERVER",
        help: &["forget the tokens stored for a remote server"],
        build: |given, config| {
            Ok(Command::Logout {
                config,
                target: target("logout", "forget the tokens of", &given.words)?,
            })
        },
        ..command()
    },
    Def {
        word: "import",
        help: &[
            "bring the MCP servers of your hosts into toolboxes, one toolbox per server",
            "(HOST: claude-desktop, claude-code, cursor, vscode, codex, gemini, windsurf;",
            "every installed one unless --from names some, or a FILE of theirs). Prints",
            "the config it would write, secrets masked, and what it could not map;",
            "--write merges it into the config (the old one kept as a backup) and checks",
            "the result; --no-start describes the toolboxes without starting the",
            "servers to list their tools",
        ],
        build: |given, config| {
            Ok(Command::Import {
                config,
                from: given.sources(),
                write: given.has("--write"),
                start: !given.has("--no-start"),
            })
        },
        ..command()
    },
    Def {
        word: "install",
        takes_words: true,
        before: "HOST",
        help: &[
            "add the workbench (this binary, with --config and the config's absolute",
            "path) to HOST's own config, with a timestamped backup beside it; --replace",
            "also takes out of HOST the servers the workbench's config now holds",
            "(per-project ones too with --include-projects);",
            "--undo reverses the install, keeping what HOST wrote since",
        ],
        build: |given, config| {
            Ok(Command::Install {
                config,
                host: install_host(&given.words)?,
                replace: given.has("--replace"),
                undo: given.has("--undo"),
                include_projects: given.has("--include-projects"),
            })
        },
        ..command()
    },
    Def {
        word: "tools",
        takes_words: true,
        before: "[QUERY | TOOLBOX/SERVER/TOOL]",
        help: &[
            "every tool of every toolbox, one line each, from the tool catalog; QUERY:",
            "the tools find_tools finds for it, best first; TOOLBOX/SERVER/TOOL: that",
            "tool described (its arguments, an example call); --json for scripts",
        ],
        build: |given, config| {
            Ok(Command::Tools {
                config,
                query: (!given.words.is_empty()).then(|| given.words.join(" ")),
                json: given.has("--json"),
                limit: given
                    .number("--limit")
                    .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
            })
        },
        ..command()
    },
    Def {
        word: "call",
        takes_words: true,
        before: "TOOLBOX/SERVER/TOOL [ARGS | -]",
        help: &[
            "call a tool from a script as use_tool does (same servers, pins, caps): ARGS",
            "is a JSON object, key=value words, or - (stdin); prints the result's text",
            "(--json: the whole result); --batch reads JSON Lines of",
            "{\"tool\", \"arguments\"} and prints one result per line in order; exit 1",
            "for an error result or a failed call, 2 when nothing was called",
        ],
        build: |given, config| {
            let (target, args) = call_operands(&given.words, given.has("--batch"))?;
            let call = CallArgs {
                target,
                args,
                json: given.has("--json"),
                batch: given.has("--batch"),
                timeout: given.number("--timeout"),
                trace: given.path("--trace"),
            };
            Ok(Command::Call { config, call })
        },
        ..command()
    },
    Def {
        word: "fleet",
        kind: Kind::Hidden,
        build: |_, config| Ok(Command::Fleet { config }),
        ..command()
    },
];

/// A listed command without words, help or flags of its own: what the
/// entries above start from.
const fn command() -> Def {
    Def {
        word: "",
        kind: Kind::Listed,
        takes_words: false,
        before: "",
        after: "",
        help: &[],
        build: |_, _| Err("internal error: a command without a build".to_string()),
    }
}

impl Flag {
    /// Whether the flag applies to the command `word`.
    pub(super) fn applies_to(&self, word: &str) -> bool {
        match self.applies {
            Applies::All => true,
            Applies::To(words, _) => words.contains(&word),
            Applies::Serving(words, _) => word == SERVE || words.contains(&word),
        }
    }

    /// Whether `text` names the flag.
    pub(super) fn is(&self, text: &str) -> bool {
        self.name == text || self.short == Some(text)
    }
}

/// The flag `text` names.
pub(super) fn flag(text: &str) -> Option<&'static Flag> {
    FLAGS.iter().find(|f| f.is(text))
}

/// The command a person may type as `word`.
pub(super) fn command_word(word: &str) -> Option<&'static Def> {
    COMMANDS
        .iter()
        .find(|c| c.word == word && c.kind != Kind::Default)
}

/// The command of `word` (`None`: serving).
pub(super) fn command_of(word: Option<&str>) -> &'static Def {
    let word = word.unwrap_or(SERVE);
    COMMANDS
        .iter()
        .find(|c| c.word == word)
        .unwrap_or(&COMMANDS[0])
}
