//! The MCP hosts the workbench moves in from and installs into, as one
//! table (`ROWS`, one row per host): the name on the command line, the
//! product's name for messages, the file format and its server lists, the
//! files per system (a `paths` function per host), how its server entries
//! map onto the config's keys, and how a running one is named. Adding a host
//! is a row here and a function in `paths`; nothing else matches on a host.
//! No IO.

use super::paths::{self, Places, Scope};
use super::vars::Syntax;
use crate::config::suggest;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    VsCode,
    Codex,
    Gemini,
    Windsurf,
}

/// Every host, in the order the reports list them (the order of `ROWS`).
pub(crate) const ALL: [Host; 7] = [
    Host::ClaudeDesktop,
    Host::ClaudeCode,
    Host::Cursor,
    Host::VsCode,
    Host::Codex,
    Host::Gemini,
    Host::Windsurf,
];

/// One host's row.
pub(crate) struct Row {
    /// The name on the command line (`install claude-code`, `--from cursor`).
    pub name: &'static str,
    /// The product's own name, for sentences.
    pub title: &'static str,
    pub format: Format,
    /// The user-level file: the one `install` edits (`paths`).
    pub user_file: fn(&Places) -> PathBuf,
    /// A project's own file, under the working directory (its parts).
    pub project_file: Option<&'static [&'static str]>,
    /// How `import` knows a file named on the command line is this host's.
    pub known_by: KnownBy,
    /// How its server entries map onto the config's keys.
    pub keys: Keys,
    /// Words a running host's process is named by (Linux `/proc/PID/comm`,
    /// at most 15 bytes): what `install` looks for to say "restart it".
    pub process_names: &'static [&'static str],
}

/// A host file's format and where its servers are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// JSON (comments allowed): the key of the server list at the top;
    /// `projects`: per-project lists too, in `projects.<folder>.mcpServers`
    /// (Claude Code's `~/.claude.json`); `inputs`: VS Code's `inputs`.
    Json {
        list: &'static str,
        projects: bool,
        inputs: bool,
    },
    /// Codex's TOML: `[mcp_servers.NAME]` tables.
    Toml,
}

/// How a file named on the command line is told to be a host's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KnownBy {
    /// Its name ends so.
    Suffix(&'static str),
    /// Its name, in a folder of that name where one is given.
    Name(Option<&'static str>, &'static str),
    /// A JSON file with this host's server list at the top.
    ListKey,
    /// Any other JSON file (the generic `mcpServers` shape).
    Otherwise,
}

/// How a host's server entries map onto the config's keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Keys {
    /// How the host writes `$` in its strings.
    pub syntax: Syntax,
    /// The keys of a URL in an entry without `type`, tried in order (the
    /// first present, else the last), each with whether it is the legacy
    /// SSE transport.
    pub untyped_urls: &'static [(&'static str, bool)],
    /// The host's own keys and what each sets.
    pub own: &'static [(&'static str, Own)],
    /// The keys of the workbench's own entry, in order (`command` and `args`
    /// always; `type` is `stdio`, `env` empty).
    pub writes: &'static [&'static str],
}

/// What a host's own key sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Own {
    /// `toolFilters`: an array of strings.
    ToolFilters,
    /// `callTimeoutMs`: milliseconds.
    CallTimeoutMs,
    /// The host's description of the server.
    Description,
    /// §11's `oauth`, for a remote server.
    OAuth,
}

const URL: &[(&str, bool)] = &[("url", false)];
const PLAIN: &[&str] = &["command", "args"];

/// The hosts, in `Host`'s order.
const ROWS: [Row; 7] = [
    Row {
        name: "claude-desktop",
        title: "Claude Desktop",
        format: json("mcpServers"),
        user_file: paths::claude_desktop,
        project_file: None,
        known_by: KnownBy::Name(None, "claude_desktop_config.json"),
        keys: Keys {
            syntax: Syntax::Literal,
            untyped_urls: URL,
            own: &[],
            writes: PLAIN,
        },
        process_names: &["claude-desktop", "Claude"],
    },
    Row {
        name: "claude-code",
        title: "Claude Code",
        format: Format::Json {
            list: "mcpServers",
            projects: true,
            inputs: false,
        },
        user_file: paths::claude_code,
        project_file: Some(&[".mcp.json"]),
        known_by: KnownBy::Otherwise,
        keys: Keys {
            syntax: Syntax::Posix,
            untyped_urls: URL,
            own: &[],
            writes: &["type", "command", "args", "env"],
        },
        process_names: &["claude"],
    },
    Row {
        name: "cursor",
        title: "Cursor",
        format: json("mcpServers"),
        user_file: paths::cursor,
        project_file: Some(&[".cursor", "mcp.json"]),
        known_by: KnownBy::Name(Some(".cursor"), "mcp.json"),
        keys: Keys {
            syntax: Syntax::Editor,
            untyped_urls: URL,
            own: &[("auth", Own::OAuth)],
            writes: PLAIN,
        },
        process_names: &["cursor", "Cursor"],
    },
    Row {
        name: "vscode",
        title: "VS Code",
        format: Format::Json {
            list: "servers",
            projects: false,
            inputs: true,
        },
        user_file: paths::vscode,
        project_file: Some(&[".vscode", "mcp.json"]),
        known_by: KnownBy::ListKey,
        keys: Keys {
            syntax: Syntax::Editor,
            untyped_urls: URL,
            own: &[],
            writes: &["type", "command", "args"],
        },
        process_names: &["code", "Code"],
    },
    Row {
        name: "codex",
        title: "Codex",
        format: Format::Toml,
        user_file: paths::codex,
        project_file: None,
        known_by: KnownBy::Suffix(".toml"),
        keys: Keys {
            syntax: Syntax::Literal,
            untyped_urls: URL,
            own: &[],
            writes: PLAIN,
        },
        process_names: &["codex"],
    },
    Row {
        name: "gemini",
        title: "Gemini CLI",
        format: json("mcpServers"),
        user_file: paths::gemini,
        project_file: None,
        known_by: KnownBy::Name(Some(".gemini"), "settings.json"),
        keys: Keys {
            syntax: Syntax::Dollar,
            untyped_urls: &[("httpUrl", false), ("url", true)],
            own: &[
                ("includeTools", Own::ToolFilters),
                ("timeout", Own::CallTimeoutMs),
                ("description", Own::Description),
            ],
            writes: PLAIN,
        },
        process_names: &["gemini"],
    },
    Row {
        name: "windsurf",
        title: "Windsurf",
        format: json("mcpServers"),
        user_file: paths::windsurf,
        project_file: None,
        known_by: KnownBy::Name(None, "mcp_config.json"),
        keys: Keys {
            syntax: Syntax::Editor,
            untyped_urls: &[("serverUrl", false), ("url", false)],
            own: &[],
            writes: PLAIN,
        },
        process_names: &["windsurf", "Windsurf"],
    },
];

/// A JSON host with one list at the top.
const fn json(list: &'static str) -> Format {
    Format::Json {
        list,
        projects: false,
        inputs: false,
    }
}

impl Host {
    /// The host's row.
    pub(crate) fn row(self) -> &'static Row {
        &ROWS[self as usize]
    }

    /// The name on the command line (`install claude-code`, `--from cursor`).
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// The product's own name, for sentences.
    pub(crate) fn title(self) -> &'static str {
        self.row().title
    }

    /// The host named `name`, or `None`.
    pub fn parse(name: &str) -> Option<Host> {
        ALL.into_iter().find(|h| h.name() == name)
    }

    /// The error for a word that names no host, with the closest name.
    pub fn unknown(name: &str) -> String {
        let names: Vec<&str> = ALL.iter().map(|h| h.name()).collect();
        match suggest::closest(name, &names) {
            Some(close) => format!("unknown host '{name}'; did you mean '{close}'?"),
            None => format!("unknown host '{name}' (one of: {})", names.join(", ")),
        }
    }

    /// The key of the server list in the host's JSON file (`None`: Codex's TOML).
    pub(crate) fn list_key(self) -> Option<&'static str> {
        match self.row().format {
            Format::Json { list, .. } => Some(list),
            Format::Toml => None,
        }
    }

    /// Whether the host's file holds per-project lists too
    /// (`projects.<folder>.mcpServers`).
    pub(crate) fn has_project_lists(self) -> bool {
        matches!(self.row().format, Format::Json { projects: true, .. })
    }

    /// How the host's server entries map onto the config's keys.
    pub(crate) fn keys(self) -> &'static Keys {
        &self.row().keys
    }

    /// Words a running host's process is named by: what `install` looks
    /// for to say "restart it".
    pub(crate) fn process_names(self) -> &'static [&'static str] {
        self.row().process_names
    }

    /// The host's user-level file: the one `install` edits.
    pub(crate) fn user_file(self, places: &Places) -> PathBuf {
        (self.row().user_file)(places)
    }

    /// Every file `import` reads for the host: the user's, then the
    /// project's in the working directory where the host has one.
    pub(crate) fn files(self, places: &Places) -> Vec<(PathBuf, Scope)> {
        let mut files = vec![(self.user_file(places), Scope::User)];
        let project = self.row().project_file.map(|parts| {
            parts
                .iter()
                .fold(places.cwd.clone(), |p, part| p.join(part))
        });
        // Run from the home folder, Cursor's project file is the user's own.
        if let Some(file) = project.filter(|f| *f != files[0].0) {
            files.push((file, Scope::Project(places.cwd.clone())));
        }
        files
    }

    /// The project `file` (absolute) is the host's project file of, where
    /// it is one (`.mcp.json`, `.cursor/mcp.json` but the user's own,
    /// `.vscode/mcp.json`): the folder that holds it.
    pub(crate) fn project_of(self, places: &Places, file: &Path) -> Option<PathBuf> {
        let parts = self.row().project_file?;
        let mut folder = file;
        for part in parts.iter().rev() {
            if folder.file_name().and_then(|n| n.to_str()) != Some(part) {
                return None;
            }
            folder = folder.parent()?;
        }
        (file != self.user_file(places)).then(|| folder.to_path_buf())
    }

    /// Which host wrote `file` (its `text`): by the file's name, else by
    /// its server list's key; the generic `mcpServers` shape is read as
    /// Claude Code reads it. `keys`: whether the text's top has that key.
    pub(crate) fn guess(file: &Path, has_key: &dyn Fn(&str) -> bool) -> Host {
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let in_folder = |folder: &str| {
            file.parent()
                .and_then(Path::file_name)
                .is_some_and(|f| f == folder)
        };
        let by_name = ALL.into_iter().find(|h| match h.row().known_by {
            KnownBy::Suffix(end) => name.ends_with(end),
            KnownBy::Name(folder, file) => name == file && folder.is_none_or(in_folder),
            KnownBy::ListKey | KnownBy::Otherwise => false,
        });
        let by_key = || {
            ALL.into_iter()
                .find(|h| h.row().known_by == KnownBy::ListKey && h.list_key().is_some_and(has_key))
        };
        let otherwise = || {
            ALL.into_iter()
                .find(|h| h.row().known_by == KnownBy::Otherwise)
        };
        by_name
            .or_else(by_key)
            .or_else(otherwise)
            .unwrap_or(Host::ClaudeCode)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosts::paths::Os;
    use std::ffi::OsString;

    #[test]
    fn names_round_trip_and_near_misses_are_suggested() {
        for host in ALL {
            assert_eq!(Host::parse(host.name()), Some(host));
        }
        assert_eq!(Host::parse("vs-code"), None);
        assert_eq!(
            Host::unknown("claude-cod"),
            "unknown host 'claude-cod'; did you mean 'claude-code'?"
        );
        assert!(Host::unknown("zed").starts_with("unknown host 'zed' (one of: claude-desktop,"));
    }

    #[test]
    fn the_rows_are_in_the_order_of_the_hosts() {
        for (i, host) in ALL.into_iter().enumerate() {
            assert_eq!(host as usize, i);
        }
        let otherwise = ROWS.iter().filter(|r| r.known_by == KnownBy::Otherwise);
        assert_eq!(otherwise.count(), 1, "one host reads any other JSON file");
    }

    fn places(os: Os, vars: &'static [(&'static str, &'static str)]) -> Places {
        let env = move |name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(*v))
        };
        Places::new(os, &env, PathBuf::from("/code/proj")).unwrap()
    }

    #[test]
    fn every_host_on_every_system() {
        let linux = places(Os::Linux, &[("HOME", "/h")]);
        let mac = places(Os::Mac, &[("HOME", "/h")]);
        let user = |p: &Places, host: Host| host.user_file(p).display().to_string();
        let expect = [
            (
                Host::ClaudeDesktop,
                "/h/.config/Claude/claude_desktop_config.json",
                "/h/Library/Application Support/Claude/claude_desktop_config.json",
            ),
            (Host::ClaudeCode, "/h/.claude.json", "/h/.claude.json"),
            (Host::Cursor, "/h/.cursor/mcp.json", "/h/.cursor/mcp.json"),
            (
                Host::VsCode,
                "/h/.config/Code/User/mcp.json",
                "/h/Library/Application Support/Code/User/mcp.json",
            ),
            (
                Host::Codex,
                "/h/.codex/config.toml",
                "/h/.codex/config.toml",
            ),
            (
                Host::Gemini,
                "/h/.gemini/settings.json",
                "/h/.gemini/settings.json",
            ),
            (
                Host::Windsurf,
                "/h/.codeium/windsurf/mcp_config.json",
                "/h/.codeium/windsurf/mcp_config.json",
            ),
        ];
        if cfg!(windows) {
            return; // the paths above are Unix paths
        }
        for (host, on_linux, on_mac) in expect {
            assert_eq!(user(&linux, host), on_linux);
            assert_eq!(user(&mac, host), on_mac);
        }
        let xdg = places(
            Os::Linux,
            &[
                ("HOME", "/h"),
                ("XDG_CONFIG_HOME", "/x"),
                ("CODEX_HOME", "/c"),
                ("CLAUDE_CONFIG_DIR", "/cc"),
            ],
        );
        assert_eq!(user(&xdg, Host::VsCode), "/x/Code/User/mcp.json");
        assert_eq!(
            user(&xdg, Host::ClaudeDesktop),
            "/x/Claude/claude_desktop_config.json"
        );
        assert_eq!(user(&xdg, Host::Codex), "/c/config.toml");
        assert_eq!(user(&xdg, Host::ClaudeCode), "/cc/.claude.json");
        let projects: Vec<String> = Host::VsCode
            .files(&linux)
            .into_iter()
            .map(|(p, _)| p.display().to_string())
            .collect();
        assert_eq!(
            projects,
            [
                "/h/.config/Code/User/mcp.json",
                "/code/proj/.vscode/mcp.json"
            ]
        );
        assert_eq!(
            Host::ClaudeCode.files(&linux)[1].0,
            Path::new("/code/proj/.mcp.json")
        );
        assert_eq!(
            Host::Cursor.files(&linux)[1].0,
            Path::new("/code/proj/.cursor/mcp.json")
        );
        assert_eq!(Host::Codex.files(&linux).len(), 1);
        let at_home = Places::new(
            Os::Linux,
            &|n: &str| (n == "HOME").then(|| "/h".into()),
            PathBuf::from("/h"),
        )
        .unwrap();
        assert_eq!(
            Host::Cursor.files(&at_home).len(),
            1,
            "the user's file is not read twice"
        );
        assert_eq!(
            linux.show(Path::new("/h/.cursor/mcp.json")),
            "~/.cursor/mcp.json"
        );
        assert_eq!(linux.show(Path::new("/elsewhere")), "/elsewhere");
    }

    #[test]
    fn windows_uses_appdata_and_userprofile() {
        let win = places(
            Os::Windows,
            &[
                ("USERPROFILE", r"C:\Users\me"),
                ("APPDATA", r"C:\Users\me\AppData\Roaming"),
                ("HOME", "/ignored"),
            ],
        );
        if !cfg!(windows) {
            // Backslashes are not separators here: the parts are joined with '/'.
            assert!(Host::ClaudeDesktop
                .user_file(&win)
                .starts_with(r"C:\Users\me\AppData\Roaming"));
            return;
        }
        assert_eq!(
            Host::ClaudeDesktop.user_file(&win),
            Path::new(r"C:\Users\me\AppData\Roaming\Claude\claude_desktop_config.json")
        );
        assert_eq!(
            Host::VsCode.user_file(&win),
            Path::new(r"C:\Users\me\AppData\Roaming\Code\User\mcp.json")
        );
        assert_eq!(
            Host::Cursor.user_file(&win),
            Path::new(r"C:\Users\me\.cursor\mcp.json")
        );
    }
}
