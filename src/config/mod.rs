//! Reads and validates the workbench config (docs/reference.md, "Config file").
//!
//! Validation walks the whole document and collects every problem with its JSON
//! path, so a user fixes all of them in one round. Unknown keys are warnings, not
//! errors (Claude Desktop configs carry extra keys), reported with or without
//! errors, with a suggestion when a known key is close. Environment references
//! are parsed here but resolved only when a toolbox is opened (see `expand`);
//! `cwd` and `command` are anchored to the config file's folder.
//! Only `load` does IO (it reads the one file); `parse` is pure and never logs
//! expanded values.

pub(crate) mod expand;
pub(crate) mod ordered_json;
pub mod relative_args;
pub(crate) mod suggest;

use crate::config::ordered_json::Node;
use crate::sys::Stamp;
use expand::{Anchor, Template};
use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_millis(30_000);
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_millis(60_000);
/// `maxCallTimeoutMs` defaults to this many times `callTimeoutMs`: progress keeps
/// a call alive, but not forever (MCP 2025-06-18, basic/lifecycle, "Timeouts").
pub const MAX_CALL_TIMEOUT_FACTOR: u32 = 10;
/// `shareLingerMs` by default: a shared fleet outlives its last session by 30 s.
pub const DEFAULT_SHARE_LINGER: Duration = Duration::from_secs(30);
/// Upper bound for configured timeouts: one day.
const MAX_TIMEOUT_MS: u64 = 86_400_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Proxy,
    Dynamic,
}

/// `openToolboxResult` in the config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OpenToolboxResult {
    /// Compact for the hosts known to cut long results, full for the others.
    #[default]
    Auto,
    Full,
    Compact,
}

impl OpenToolboxResult {
    pub fn parse(text: &str) -> Option<OpenToolboxResult> {
        match text {
            "auto" => Some(OpenToolboxResult::Auto),
            "full" => Some(OpenToolboxResult::Full),
            "compact" => Some(OpenToolboxResult::Compact),
            _ => None,
        }
    }
}

/// The longest dynamic-mode native tool name any host accepts.
pub(crate) const NATIVE_NAME_MAX_LEN: usize = 64;
/// The default `dynamicNameMaxLength`: 64 minus Claude Code's `mcp__workbench__`.
pub(crate) const NATIVE_NAME_DEFAULT_LEN: usize = 48;
/// The smallest `dynamicNameMaxLength` that still leaves a readable name: a
/// cut toolbox and server part, some of the tool's name, and the hash suffix.
pub(crate) const NATIVE_NAME_MIN_LEN: usize = 24;

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub mode: Mode,
    /// `dynamicNameMaxLength`: dynamic mode's budget for native tool names.
    pub dynamic_name_max_length: usize,
    /// `openToolboxResult`: the form of `open_toolbox` results.
    pub open_toolbox_result: OpenToolboxResult,
    /// `shareServers`: every host session of this config shares one fleet (§8).
    pub share_servers: bool,
    /// `shareLingerMs`: how long a shared fleet outlives its last session.
    pub share_linger: Duration,
    /// In the order of the config file.
    pub toolboxes: Vec<ToolboxConfig>,
    /// `pinTools`: hold back tool definitions that changed since they were
    /// pinned (docs/reference.md §10).
    pub pin_tools: bool,
    /// The config file's canonical path (set by `load`; `None` for a config
    /// parsed from bytes): what the pins are kept for.
    pub file: Option<PathBuf>,
}

/// Equal definitions run the same processes: a reloaded config restarts only
/// the servers whose definition is not equal.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolboxConfig {
    pub name: String,
    pub description: String,
    /// In the order of the config file.
    pub servers: Vec<ServerConfig>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    pub name: String,
    /// JSON path of this server's object, for messages.
    pub json_path: String,
    /// Anchored: a relative path with a separator is taken from the config's folder.
    pub command: Template,
    pub args: Vec<Template>,
    pub env: Vec<(String, Template)>,
    /// Anchored: a relative path is taken from the config's folder.
    pub cwd: Option<Template>,
    pub tool_filter: ToolFilter,
    pub startup_timeout: Duration,
    pub call_timeout: Duration,
    /// `maxCallTimeoutMs`: the longest a call may run however much progress it
    /// reports (default `MAX_CALL_TIMEOUT_FACTOR` × `callTimeoutMs`).
    pub max_call_timeout: Duration,
    /// `idleTimeoutMs` (the server's, else the top level's): how long the
    /// server may go without a call before it is stopped; `None`: never.
    pub idle_timeout: Option<Duration>,
    pub disabled: bool,
    pub inherit_env: bool,
    /// False for `"shareServers": false`: a process per host session even
    /// when the config shares a fleet.
    pub shared: bool,
    /// `toolOverrides`: what the model sees instead of the server's own
    /// description or title, by tool name, in config order.
    pub tool_overrides: Vec<(String, ToolOverride)>,
    /// `maxResultChars` (the server's, else the top level's): longer text
    /// results are cut (docs/reference.md §10); `None`: never.
    pub max_result_chars: Option<usize>,
}

/// A tool's replacement text (`toolOverrides.NAME`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOverride {
    pub description: Option<String>,
    pub title: Option<String>,
}

/// The smallest `maxResultChars`: room for a head, a tail and the marker.
pub const MIN_RESULT_CHARS: u64 = 500;
/// The largest `maxResultChars`.
const MAX_RESULT_CHARS: u64 = 1 << 40;

/// Which of a server's tools a toolbox exposes.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolFilter {
    All,
    /// Exactly these names (possibly none).
    Only(Vec<String>),
}

/// One problem or warning, and where it is in the file (a JSON path such as
/// `toolboxes.dev.mcpServers.fs.command`; empty for the whole document).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Problem {
    pub path: String,
    pub message: String,
    /// For an unknown key close to a known one (`toolFilter`), that known
    /// key: a warning when serving (hosts' configs carry extra keys), an
    /// error for `check` (`Loaded::near_misses`), since the typo changes what
    /// the config means.
    #[serde(skip)]
    pub near_miss: Option<String>,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// A config that could not be used: every problem found, each with its path,
/// and the warnings found on the way (a misspelt key often explains an error).
#[derive(Debug)]
pub struct ConfigError {
    /// The file as the user named it.
    pub file: PathBuf,
    pub problems: Vec<Problem>,
    pub warnings: Vec<Problem>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.file.display();
        match &self.problems[..] {
            // The file as a whole: it cannot be read, or is not JSON.
            [one] if one.path.is_empty() => writeln!(f, "error: {file}: {}", one.message)?,
            problems => {
                let n = problems.len();
                writeln!(
                    f,
                    "error: invalid config {file} ({n} problem{}):",
                    plural(n)
                )?;
                for problem in problems {
                    writeln!(f, "  {file}: {problem}")?;
                }
            }
        }
        let n = self.warnings.len();
        if n > 0 {
            writeln!(f, "and {n} warning{}:", plural(n))?;
            for warning in &self.warnings {
                writeln!(f, "  {file}: {warning}")?;
            }
        }
        Ok(())
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A loaded config plus the warnings found on the way.
#[derive(Debug)]
pub struct Loaded {
    pub config: Config,
    pub warnings: Vec<Problem>,
    /// The file's stamp, taken before it was read (`load`; `None` from
    /// `parse`): what the config watch compares the file with first, so a
    /// change made after the read is seen.
    pub stamp: Option<Stamp>,
}

impl Loaded {
    /// For `check`: the unknown keys that are a near miss of a known one, as
    /// the problems of a config error (the other warnings with them), since
    /// such a typo changes what the config means; `None` when there is none.
    /// Serving only warns of them.
    pub fn near_misses(&self, file: &Path) -> Option<ConfigError> {
        let (misses, warnings): (Vec<&Problem>, Vec<&Problem>) =
            self.warnings.iter().partition(|w| w.near_miss.is_some());
        let problems: Vec<Problem> = misses
            .into_iter()
            .map(|miss| Problem {
                path: miss.path.clone(),
                message: format!(
                    "unknown key; did you mean '{}'? (serving only warns of it; check \
                     fails, since the typo changes what the config means)",
                    miss.near_miss.as_deref().unwrap_or_default()
                ),
                near_miss: None,
            })
            .collect();
        (!problems.is_empty()).then(|| ConfigError {
            file: file.to_path_buf(),
            problems,
            warnings: warnings.into_iter().cloned().collect(),
        })
    }
}

/// Reads and validates the config file at `file`. Relative paths in it are
/// taken from the file's folder.
pub fn load(file: &Path) -> Result<Loaded, ConfigError> {
    let fail = |message: String| ConfigError {
        file: file.to_path_buf(),
        problems: vec![Problem {
            path: String::new(),
            message,
            near_miss: None,
        }],
        warnings: Vec::new(),
    };
    let stamp = Stamp::of(file);
    let bytes = std::fs::read(file).map_err(|e| fail(format!("cannot read the file: {e}")))?;
    let absolute = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    let folder = absolute.parent().unwrap_or(Path::new("/"));
    let mut loaded = parse(&bytes, file, folder)?;
    loaded.config.file = Some(std::fs::canonicalize(file).unwrap_or(absolute.clone()));
    loaded.stamp = stamp;
    Ok(loaded)
}

/// Validates the bytes of a config file; `file` is its name for messages and
/// `folder` the absolute folder that relative paths are taken from. No IO.
pub fn parse(bytes: &[u8], file: &Path, folder: &Path) -> Result<Loaded, ConfigError> {
    let root: Node = serde_json::from_slice(bytes).map_err(|e| ConfigError {
        file: file.to_path_buf(),
        problems: vec![Problem {
            path: String::new(),
            message: format!(
                "line {} column {}: invalid JSON: {}",
                e.line(),
                e.column(),
                strip_position(&e.to_string())
            ),
            near_miss: None,
        }],
        warnings: Vec::new(),
    })?;
    let mut checker = Checker {
        folder: folder.to_path_buf(),
        ..Checker::default()
    };
    let config = checker.config(&root);
    if checker.errors.is_empty() {
        Ok(Loaded {
            config,
            warnings: checker.warnings,
            stamp: None,
        })
    } else {
        Err(ConfigError {
            file: file.to_path_buf(),
            problems: checker.errors,
            warnings: checker.warnings,
        })
    }
}

/// serde_json appends " at line L column C"; the message already says where.
fn strip_position(message: &str) -> &str {
    message.find(" at line ").map_or(message, |i| &message[..i])
}

/// A valid toolbox or server name: 1 to 64 of `[A-Za-z0-9_-]`, without `__`.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        && !name.contains("__")
}

/// The path of `key` below `parent`, quoting keys that are not plain names.
fn child_path(parent: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    match (parent.is_empty(), plain) {
        (true, true) => key.to_string(),
        (false, true) => format!("{parent}.{key}"),
        (_, false) => format!("{parent}[{key:?}]"),
    }
}

#[derive(Default)]
struct Checker {
    /// The absolute folder of the config file.
    folder: PathBuf,
    /// The top level's `idleTimeoutMs`: the default of every server.
    idle_timeout: Option<Duration>,
    /// The top level's `maxResultChars`: the default of every server.
    max_result_chars: Option<usize>,
    errors: Vec<Problem>,
    warnings: Vec<Problem>,
}

impl Checker {
    fn error(&mut self, path: &str, message: impl fmt::Display) {
        self.errors.push(Problem {
            path: path.to_string(),
            message: message.to_string(),
            near_miss: None,
        });
    }

    fn warning(&mut self, path: String, message: impl fmt::Display) {
        self.warnings.push(Problem {
            path,
            message: message.to_string(),
            near_miss: None,
        });
    }

    /// The entries of an object; reports duplicates, keys outside `known`, and a
    /// non-object value.
    fn object<'a>(
        &mut self,
        node: &'a Node,
        path: &str,
        known: &[&str],
    ) -> Option<&'a [(String, Node)]> {
        let Node::Object(entries) = node else {
            self.error(path, format!("expected an object, found {}", node.kind()));
            return None;
        };
        for (i, (key, _)) in entries.iter().enumerate() {
            if entries[..i].iter().any(|(k, _)| k == key) {
                self.error(&child_path(path, key), "duplicate key");
            } else if !known.is_empty() && !known.contains(&key.as_str()) {
                let close = suggest::closest(key, known);
                let hint = if path.is_empty() && SERVER_LISTS.contains(&key.as_str()) {
                    "; servers belong in a toolbox: toolboxes.NAME.mcpServers".to_string()
                } else if let Some(close) = close {
                    format!("; did you mean '{close}'?")
                } else {
                    format!(" (known keys: {})", known.join(", "))
                };
                self.warning(child_path(path, key), format!("unknown key ignored{hint}"));
                if let Some(warning) = self.warnings.last_mut() {
                    warning.near_miss = close.map(str::to_string);
                }
            }
        }
        Some(entries)
    }

    fn string(&mut self, node: &Node, path: &str) -> Option<String> {
        match node {
            Node::String(s) => Some(s.clone()),
            other => {
                self.error(path, format!("expected a string, found {}", other.kind()));
                None
            }
        }
    }

    fn template(&mut self, node: &Node, path: &str) -> Option<Template> {
        let text = self.string(node, path)?;
        match Template::parse(&text) {
            Ok(t) => Some(t),
            Err(e) => {
                self.error(path, e);
                None
            }
        }
    }

    /// A template that holds a path: `~user` is refused (only `~` is expanded).
    fn path_template(&mut self, node: &Node, path: &str) -> Option<Template> {
        let template = self.template(node, path)?;
        match expand::unsupported_tilde(template.source()) {
            Some(problem) => {
                self.error(path, problem);
                None
            }
            None => Some(template),
        }
    }

    fn boolean(&mut self, node: &Node, path: &str) -> bool {
        match node {
            Node::Bool(b) => *b,
            other => {
                self.error(
                    path,
                    format!("expected true or false, found {}", other.kind()),
                );
                false
            }
        }
    }

    fn timeout(&mut self, node: &Node, path: &str, default: Duration) -> Duration {
        match node {
            Node::Number(n)
                if n.as_u64()
                    .is_some_and(|ms| (1..=MAX_TIMEOUT_MS).contains(&ms)) =>
            {
                Duration::from_millis(n.as_u64().unwrap_or_default())
            }
            other => {
                self.error(
                    path,
                    format!(
                        "expected a whole number of milliseconds from 1 to {MAX_TIMEOUT_MS}, found {}",
                        match other {
                            Node::Number(n) => n.to_string(),
                            _ => other.kind().to_string(),
                        }
                    ),
                );
                default
            }
        }
    }

    /// `idleTimeoutMs`: 0 is never, like an absent key.
    fn idle_timeout(&mut self, node: &Node, path: &str) -> Option<Duration> {
        match node {
            Node::Number(n) if n.as_u64().is_some_and(|ms| ms <= MAX_TIMEOUT_MS) => {
                Some(Duration::from_millis(n.as_u64().unwrap_or_default())).filter(|d| !d.is_zero())
            }
            other => {
                self.error(
                    path,
                    format!(
                        "expected a whole number of milliseconds from 0 (never) to {MAX_TIMEOUT_MS}, found {}",
                        match other {
                            Node::Number(n) => n.to_string(),
                            _ => other.kind().to_string(),
                        }
                    ),
                );
                None
            }
        }
    }

    /// `maxResultChars`: a whole number from `MIN_RESULT_CHARS`.
    fn result_chars(&mut self, node: &Node, path: &str) -> Option<usize> {
        match node {
            Node::Number(n)
                if n.as_u64()
                    .is_some_and(|v| (MIN_RESULT_CHARS..=MAX_RESULT_CHARS).contains(&v)) =>
            {
                n.as_u64().and_then(|v| usize::try_from(v).ok())
            }
            other => {
                self.error(
                    path,
                    format!(
                        "expected a whole number of characters from {MIN_RESULT_CHARS}, found {}",
                        match other {
                            Node::Number(n) => n.to_string(),
                            _ => other.kind().to_string(),
                        }
                    ),
                );
                None
            }
        }
    }

    /// `toolOverrides`: `{"tool": {"description": "...", "title": "..."}}`.
    fn overrides(&mut self, node: &Node, path: &str) -> Vec<(String, ToolOverride)> {
        let mut out = Vec::new();
        let Some(entries) = self.object(node, path, &[]) else {
            return out;
        };
        for (name, value) in entries {
            let p = child_path(path, name);
            let Some(fields) = self.object(value, &p, &["description", "title"]) else {
                continue;
            };
            let mut over = ToolOverride::default();
            for (key, text) in fields {
                let slot = match key.as_str() {
                    "description" => &mut over.description,
                    "title" => &mut over.title,
                    _ => continue,
                };
                *slot = self.string(text, &child_path(&p, key));
            }
            if over.description.is_none() && over.title.is_none() {
                self.warning(
                    p,
                    "names neither \"description\" nor \"title\": nothing is replaced",
                );
            }
            out.push((name.clone(), over));
        }
        out
    }

    fn config(&mut self, root: &Node) -> Config {
        let mut config = Config {
            mode: Mode::Proxy,
            dynamic_name_max_length: NATIVE_NAME_DEFAULT_LEN,
            open_toolbox_result: OpenToolboxResult::Auto,
            share_servers: false,
            share_linger: DEFAULT_SHARE_LINGER,
            toolboxes: Vec::new(),
            pin_tools: false,
            file: None,
        };
        let known = [
            "mode",
            "toolboxes",
            "dynamicNameMaxLength",
            "openToolboxResult",
            "idleTimeoutMs",
            "shareServers",
            "shareLingerMs",
            "pinTools",
            "maxResultChars",
        ];
        let Some(entries) = self.object(root, "", &known) else {
            return config;
        };
        // The servers' defaults, wherever they are in the file.
        if let Some((key, value)) = entries.iter().find(|(k, _)| k == "idleTimeoutMs") {
            self.idle_timeout = self.idle_timeout(value, key);
        }
        if let Some((key, value)) = entries.iter().find(|(k, _)| k == "maxResultChars") {
            self.max_result_chars = self.result_chars(value, key);
        }
        let mut saw_toolboxes = false;
        for (key, value) in entries {
            match key.as_str() {
                "mode" => match value {
                    Node::String(m) if m == "proxy" => config.mode = Mode::Proxy,
                    Node::String(m) if m == "dynamic" => config.mode = Mode::Dynamic,
                    other => self.error(
                        "mode",
                        format!("expected \"proxy\" or \"dynamic\", found {}", show(other)),
                    ),
                },
                "dynamicNameMaxLength" => match value {
                    Node::Number(n)
                        if n.as_u64().is_some_and(|v| {
                            (NATIVE_NAME_MIN_LEN as u64..=NATIVE_NAME_MAX_LEN as u64).contains(&v)
                        }) =>
                    {
                        config.dynamic_name_max_length =
                            n.as_u64().map_or(NATIVE_NAME_DEFAULT_LEN, |v| v as usize);
                    }
                    other => self.error(
                        key,
                        format!(
                            "expected a whole number from {} to {}, found {}",
                            NATIVE_NAME_MIN_LEN,
                            NATIVE_NAME_MAX_LEN,
                            match other {
                                Node::Number(n) => n.to_string(),
                                _ => other.kind().to_string(),
                            }
                        ),
                    ),
                },
                "openToolboxResult" => match value {
                    Node::String(s) if OpenToolboxResult::parse(s).is_some() => {
                        config.open_toolbox_result =
                            OpenToolboxResult::parse(s).unwrap_or_default();
                    }
                    other => self.error(
                        key,
                        format!(
                            "expected \"auto\", \"full\" or \"compact\", found {}",
                            show(other)
                        ),
                    ),
                },
                "shareServers" => config.share_servers = self.boolean(value, key),
                "shareLingerMs" => {
                    config.share_linger = self.timeout(value, key, DEFAULT_SHARE_LINGER)
                }
                "pinTools" => config.pin_tools = self.boolean(value, key),
                "toolboxes" => {
                    saw_toolboxes = true;
                    self.toolboxes(value, &mut config.toolboxes);
                }
                _ => {}
            }
        }
        if !saw_toolboxes {
            match entries
                .iter()
                .find(|(k, _)| SERVER_LISTS.contains(&k.as_str()))
            {
                Some((key, servers)) => {
                    // The error says it all; the unknown-key warning would repeat it.
                    self.warnings.retain(|w| w.path != *key);
                    self.error("toolboxes", host_config_hint(key, servers));
                }
                None => self.error("toolboxes", "required object is missing"),
            }
        }
        config
    }

    fn toolboxes(&mut self, node: &Node, out: &mut Vec<ToolboxConfig>) {
        let Some(entries) = self.object(node, "toolboxes", &[]) else {
            return;
        };
        if entries.is_empty() {
            self.warning(
                "toolboxes".to_string(),
                "no toolboxes are defined yet: the workbench serves no tools until toolboxes are added to the file (it is read again when it changes)",
            );
        }
        for (name, value) in entries {
            let path = child_path("toolboxes", name);
            if !valid_name(name) {
                self.error(&path, NAME_RULE);
            }
            if let Some(toolbox) = self.toolbox(name, value, &path) {
                out.push(toolbox);
            }
        }
    }

    fn toolbox(&mut self, name: &str, node: &Node, path: &str) -> Option<ToolboxConfig> {
        let entries = self.object(node, path, &["description", "mcpServers"])?;
        let mut description = None;
        let mut servers = None;
        for (key, value) in entries {
            let key_path = child_path(path, key);
            match key.as_str() {
                "description" => {
                    description = self.string(value, &key_path);
                    if description.as_deref().is_some_and(|d| d.trim().is_empty()) {
                        self.error(&key_path, "must not be empty");
                    }
                }
                "mcpServers" => servers = Some(self.servers(value, &key_path)),
                _ => {}
            }
        }
        if !entries.iter().any(|(k, _)| k == "description") {
            self.error(
                &child_path(path, "description"),
                "required string is missing",
            );
        }
        if servers.is_none() {
            self.error(
                &child_path(path, "mcpServers"),
                "required object is missing",
            );
        }
        let servers = servers?;
        if servers.is_empty() && self.errors.is_empty() {
            self.warning(
                child_path(path, "mcpServers"),
                "toolbox has no servers; opening it returns no tools",
            );
        }
        Some(ToolboxConfig {
            name: name.to_string(),
            description: description?,
            servers,
        })
    }

    fn servers(&mut self, node: &Node, path: &str) -> Vec<ServerConfig> {
        let mut out = Vec::new();
        let Some(entries) = self.object(node, path, &[]) else {
            return out;
        };
        for (name, value) in entries {
            let server_path = child_path(path, name);
            if !valid_name(name) {
                self.error(&server_path, NAME_RULE);
            }
            if let Some(server) = self.server(name, value, &server_path) {
                out.push(server);
            }
        }
        out
    }

    #[allow(clippy::expect_used, reason = "an empty template parses")]
    fn server(&mut self, name: &str, node: &Node, path: &str) -> Option<ServerConfig> {
        let entries = self.object(node, path, SERVER_KEYS)?;
        let errors_before = self.errors.len();
        let mut server = ServerConfig {
            name: name.to_string(),
            json_path: path.to_string(),
            command: Template::parse("").expect("an empty template parses"),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            tool_filter: ToolFilter::All,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            max_call_timeout: Duration::ZERO,
            idle_timeout: self.idle_timeout,
            disabled: false,
            inherit_env: false,
            shared: true,
            tool_overrides: Vec::new(),
            max_result_chars: self.max_result_chars,
        };
        let mut has_command = false;
        for (key, value) in entries {
            let p = child_path(path, key);
            match key.as_str() {
                "command" => {
                    has_command = true;
                    if let Some(t) = self.path_template(value, &p) {
                        if t.source().trim().is_empty() {
                            self.error(&p, "must not be empty");
                        }
                        server.command = t.anchored(Anchor::Program(self.folder.clone()));
                    }
                }
                "args" => server.args = self.template_list(value, &p),
                "env" => server.env = self.env(value, &p),
                "cwd" => {
                    server.cwd = self
                        .path_template(value, &p)
                        .map(|t| t.anchored(Anchor::Dir(self.folder.clone())))
                }
                "toolFilters" => server.tool_filter = self.filters(value, &p),
                "startupTimeoutMs" => {
                    server.startup_timeout = self.timeout(value, &p, DEFAULT_STARTUP_TIMEOUT)
                }
                "callTimeoutMs" => {
                    server.call_timeout = self.timeout(value, &p, DEFAULT_CALL_TIMEOUT)
                }
                "maxCallTimeoutMs" => {
                    server.max_call_timeout = self.timeout(value, &p, Duration::ZERO)
                }
                "idleTimeoutMs" => server.idle_timeout = self.idle_timeout(value, &p),
                "disabled" => server.disabled = self.boolean(value, &p),
                "inheritEnv" => server.inherit_env = self.boolean(value, &p),
                "shareServers" => server.shared = self.boolean(value, &p),
                "toolOverrides" => server.tool_overrides = self.overrides(value, &p),
                "maxResultChars" => server.max_result_chars = self.result_chars(value, &p),
                "type" => match value {
                    Node::String(t) if t == "stdio" => {}
                    other => self.error(
                        &p,
                        format!(
                            "transport {} is not supported: only \"stdio\" servers can be used",
                            show(other)
                        ),
                    ),
                },
                _ => {}
            }
        }
        if !has_command {
            self.error(&child_path(path, "command"), "required string is missing");
        }
        if server.max_call_timeout.is_zero() {
            server.max_call_timeout = server.call_timeout * MAX_CALL_TIMEOUT_FACTOR;
        } else if server.max_call_timeout < server.call_timeout {
            self.error(
                &child_path(path, "maxCallTimeoutMs"),
                "must not be less than callTimeoutMs",
            );
        }
        (self.errors.len() == errors_before).then_some(server)
    }

    fn template_list(&mut self, node: &Node, path: &str) -> Vec<Template> {
        let Node::Array(items) = node else {
            self.error(
                path,
                format!("expected an array of strings, found {}", node.kind()),
            );
            return Vec::new();
        };
        items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| self.template(item, &format!("{path}[{i}]")))
            .collect()
    }

    fn env(&mut self, node: &Node, path: &str) -> Vec<(String, Template)> {
        let Some(entries) = self.object(node, path, &[]) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (key, value) in entries {
            let p = child_path(path, key);
            if key.is_empty() || key.contains('=') || key.contains('\0') {
                self.error(&p, "not a valid environment variable name");
            }
            if let Some(t) = self.template(value, &p) {
                out.push((key.clone(), t));
            }
        }
        out
    }

    fn filters(&mut self, node: &Node, path: &str) -> ToolFilter {
        let Node::Array(items) = node else {
            self.error(
                path,
                format!(
                    "expected an array of tool names (or [\"*\"]), found {}",
                    node.kind()
                ),
            );
            return ToolFilter::All;
        };
        let mut names = Vec::new();
        for (i, item) in items.iter().enumerate() {
            if let Some(name) = self.string(item, &format!("{path}[{i}]")) {
                names.push(name);
            }
        }
        if names.iter().any(|n| n == "*") {
            ToolFilter::All
        } else {
            ToolFilter::Only(names)
        }
    }
}

const NAME_RULE: &str =
    "name must be 1 to 64 characters of A-Z, a-z, 0-9, '_' and '-', without '__'";

/// Top-level keys under which other hosts list servers: Claude Desktop, Cursor
/// and Claude Code use `mcpServers`, VS Code `servers`.
const SERVER_LISTS: &[&str] = &["mcpServers", "servers"];

/// The error for a host's config given to the workbench: how to wrap its
/// servers in a toolbox, with the server names it has.
fn host_config_hint(key: &str, servers: &Node) -> String {
    let names: Vec<String> = match servers {
        Node::Object(entries) => entries
            .iter()
            .take(3)
            .map(|(name, _)| format!("{name:?}: {{...}}"))
            .chain((entries.len() > 3).then(|| "...".to_string()))
            .collect(),
        _ => Vec::new(),
    };
    let listed = if names.is_empty() {
        "...".to_string()
    } else {
        names.join(", ")
    };
    format!(
        "required object is missing. This file looks like an MCP host's config (\"{key}\" at the top level); \
         the workbench groups servers into toolboxes. Wrap them in one:\n    \
         {{\"toolboxes\": {{\"main\": {{\"description\": \"What these servers are for\", \"mcpServers\": {{{listed}}}}}}}}}"
    )
}

const SERVER_KEYS: &[&str] = &[
    "command",
    "args",
    "env",
    "cwd",
    "toolFilters",
    "startupTimeoutMs",
    "callTimeoutMs",
    "maxCallTimeoutMs",
    "idleTimeoutMs",
    "disabled",
    "inheritEnv",
    "shareServers",
    "type",
    "toolOverrides",
    "maxResultChars",
];

fn show(node: &Node) -> String {
    match node {
        Node::String(s) => format!("{s:?}"),
        other => other.kind().to_string(),
    }
}

/// Toolbox `t` (description `d`) of a config with one server `s`, written
/// as `server` (JSON), taken from the folder `/c`: for other modules' tests.
#[cfg(test)]
pub(crate) fn one_server_toolbox(server: &str) -> ToolboxConfig {
    let text = format!(
        r#"{{"toolboxes": {{"t": {{"description": "d", "mcpServers": {{"s": {server}}}}}}}}}"#
    );
    let (file, folder) = (Path::new("/c/c.json"), Path::new("/c"));
    let mut config = parse(text.as_bytes(), file, folder)
        .expect("a valid test config")
        .config;
    config.toolboxes.remove(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(problems: &[Problem]) -> Vec<String> {
        problems.iter().map(Problem::to_string).collect()
    }

    fn check(json: &str) -> Result<(Config, Vec<String>), Vec<String>> {
        match parse(json.as_bytes(), Path::new("c.json"), Path::new("/cfg")) {
            Ok(loaded) => Ok((loaded.config, strings(&loaded.warnings))),
            Err(e) => Err(strings(&e.problems)),
        }
    }

    #[test]
    fn a_host_config_gets_a_toolbox_to_wrap_it_in() {
        let error = parse(
            br#"{"mcpServers": {"fs": {"command": "npx"}, "git": {"command": "uvx"}}, "globalShortcut": ""}"#,
            Path::new("claude_desktop_config.json"),
            Path::new("/cfg"),
        )
        .unwrap_err();
        assert_eq!(error.problems.len(), 1, "{error}");
        let problem = &error.problems[0];
        assert_eq!(problem.path, "toolboxes");
        assert!(problem.message.starts_with("required object is missing. This file looks like an MCP host's config (\"mcpServers\" at the top level)"), "{problem}");
        assert!(
            problem.message.ends_with(
                r#"{"toolboxes": {"main": {"description": "What these servers are for", "mcpServers": {"fs": {...}, "git": {...}}}}}"#
            ),
            "{problem}"
        );
        // The other unknown key is still reported; mcpServers is not reported twice.
        assert_eq!(
            strings(&error.warnings),
            ["globalShortcut: unknown key ignored (known keys: mode, toolboxes, dynamicNameMaxLength, openToolboxResult, idleTimeoutMs, shareServers, shareLingerMs, pinTools, maxResultChars)"]
        );
        let text = error.to_string();
        assert!(
            text.contains("and 1 warning:\n  claude_desktop_config.json: globalShortcut"),
            "{text}"
        );
        // VS Code's shape, with more servers than the hint lists.
        let errors = check(r#"{"servers": {"a": {}, "b": {}, "c": {}, "d": {}}}"#).unwrap_err();
        assert!(
            errors[0].contains(r#"("servers" at the top level)"#),
            "{errors:?}"
        );
        assert!(
            errors[0].contains(r#""mcpServers": {"a": {...}, "b": {...}, "c": {...}, ...}"#),
            "{errors:?}"
        );
        // Beside toolboxes, a top-level server list is a warning that says where servers go.
        let (_, warnings) = check(
            r#"{"toolboxes": {"t": {"description": "d", "mcpServers": {}}}, "mcpServers": {}}"#,
        )
        .unwrap();
        assert_eq!(warnings[0], "mcpServers: unknown key ignored; servers belong in a toolbox: toolboxes.NAME.mcpServers");
    }

    #[test]
    fn unknown_keys_are_reported_with_errors_and_suggestions() {
        let error = parse(
            br#"{"toolboxes": {"dev": {"description": "d", "mcpServer": {"fs": {"command": "x"}}}}, "mdoe": "proxy"}"#,
            Path::new("c.json"),
            Path::new("/cfg"),
        )
        .unwrap_err();
        assert_eq!(
            strings(&error.problems),
            ["toolboxes.dev.mcpServers: required object is missing"]
        );
        assert_eq!(
            strings(&error.warnings),
            [
                "mdoe: unknown key ignored; did you mean 'mode'?",
                "toolboxes.dev.mcpServer: unknown key ignored; did you mean 'mcpServers'?",
            ]
        );
        let (_, warnings) = check(
            r#"{"toolboxes": {"t": {"description": "d", "mcpServers": {"s": {"command": "x", "toolFilter": [], "zzz": 1}}}}}"#,
        )
        .unwrap();
        assert_eq!(
            warnings[0],
            "toolboxes.t.mcpServers.s.toolFilter: unknown key ignored; did you mean 'toolFilters'?"
        );
        assert!(warnings[1].starts_with(
            "toolboxes.t.mcpServers.s.zzz: unknown key ignored (known keys: command, args,"
        ));
    }

    #[test]
    #[cfg(unix)]
    fn paths_are_taken_from_the_config_folder() {
        let (config, _) = check(
            r#"{"toolboxes": {"t": {"description": "d", "mcpServers": {
                "a": {"command": "bin/server", "cwd": "data"},
                "b": {"command": "npx", "args": ["rel/arg"]}}}}}"#,
        )
        .unwrap();
        let none = |_: &str| None;
        let a = &config.toolboxes[0].servers[0];
        assert_eq!(a.command.expand(&none).unwrap(), "/cfg/bin/server");
        assert_eq!(a.cwd.as_ref().unwrap().expand(&none).unwrap(), "/cfg/data");
        let b = &config.toolboxes[0].servers[1];
        assert_eq!(b.command.expand(&none).unwrap(), "npx");
        assert_eq!(
            b.args[0].expand(&none).unwrap(),
            "rel/arg",
            "args are not paths"
        );
        let errors = check(
            r#"{"toolboxes": {"t": {"description": "d", "mcpServers": {"a": {"command": "~bob/s", "cwd": "~root"}}}}}"#,
        )
        .unwrap_err();
        assert!(
            errors[0].starts_with(
                "toolboxes.t.mcpServers.a.command: '~bob/s': only '~' and '~/...' are expanded"
            ),
            "{errors:?}"
        );
        assert!(
            errors[1].starts_with("toolboxes.t.mcpServers.a.cwd: '~root'"),
            "{errors:?}"
        );
    }

    #[test]
    fn keeps_order_and_defaults() {
        let (config, warnings) = check(
            r#"{"toolboxes":{"zeta":{"description":"z","mcpServers":{
                "b":{"command":"x"},"a":{"command":"y","toolFilters":["*","t"],"extra":1}}},
               "alpha":{"description":"a","mcpServers":{}}}}"#,
        )
        .unwrap();
        let names: Vec<_> = config.toolboxes.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["zeta", "alpha"]);
        let servers: Vec<_> = config.toolboxes[0]
            .servers
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(servers, ["b", "a"]);
        assert_eq!(config.toolboxes[0].servers[1].tool_filter, ToolFilter::All);
        assert_eq!(
            config.toolboxes[0].servers[0].call_timeout,
            DEFAULT_CALL_TIMEOUT
        );
        assert!(warnings[0].starts_with("toolboxes.zeta.mcpServers.a.extra: unknown key"));
        assert!(warnings[1].contains("toolboxes.alpha.mcpServers: toolbox has no servers"));
    }

    #[test]
    fn reports_every_problem_with_its_path() {
        let errors = check(
            r#"{"mode":"fast","toolboxes":{"a__b":{"description":"","mcpServers":{
                "s":{"args":[1],"type":"http","env":{"K":"${"},"callTimeoutMs":0},
                "t":{"command":"ok","toolFilters":"read"}}},
               "c":{"mcpServers":[]}}}"#,
        )
        .unwrap_err();
        let expected = [
            "mode: expected \"proxy\" or \"dynamic\", found \"fast\"",
            "toolboxes.a__b: name must be",
            "toolboxes.a__b.description: must not be empty",
            "toolboxes.a__b.mcpServers.s.args[0]: expected a string, found a number",
            "toolboxes.a__b.mcpServers.s.type: transport \"http\" is not supported",
            "toolboxes.a__b.mcpServers.s.env.K: unclosed '${'",
            "toolboxes.a__b.mcpServers.s.callTimeoutMs: expected a whole number",
            "toolboxes.a__b.mcpServers.s.command: required string is missing",
            "toolboxes.a__b.mcpServers.t.toolFilters: expected an array",
            "toolboxes.c.mcpServers: expected an object, found an array",
            "toolboxes.c.description: required string is missing",
        ];
        assert_eq!(errors.len(), expected.len(), "{errors:#?}");
        for (got, want) in errors.iter().zip(expected) {
            assert!(got.starts_with(want), "{got:?} should start with {want:?}");
        }
    }

    #[test]
    fn dynamic_name_max_length() {
        let config = |extra: &str| {
            check(&format!(
                r#"{{{extra}"toolboxes":{{"t":{{"description":"d","mcpServers":{{}}}}}}}}"#
            ))
        };
        assert_eq!(
            config("").unwrap().0.dynamic_name_max_length,
            NATIVE_NAME_DEFAULT_LEN
        );
        assert_eq!(
            config(r#""dynamicNameMaxLength":64,"#)
                .unwrap()
                .0
                .dynamic_name_max_length,
            64
        );
        for bad in ["23", "65", "40.5", "\"48\""] {
            let errors = config(&format!(r#""dynamicNameMaxLength":{bad},"#)).unwrap_err();
            assert!(
                errors[0]
                    .starts_with("dynamicNameMaxLength: expected a whole number from 24 to 64"),
                "{errors:?}"
            );
        }
    }

    #[test]
    fn open_toolbox_result() {
        let config = |extra: &str| {
            check(&format!(
                r#"{{{extra}"toolboxes":{{"t":{{"description":"d","mcpServers":{{}}}}}}}}"#
            ))
        };
        let setting = |extra: &str| config(extra).unwrap().0.open_toolbox_result;
        assert_eq!(setting(""), OpenToolboxResult::Auto);
        assert_eq!(
            setting(r#""openToolboxResult":"compact","#),
            OpenToolboxResult::Compact
        );
        assert_eq!(
            setting(r#""openToolboxResult":"full","#),
            OpenToolboxResult::Full
        );
        let errors = config(r#""openToolboxResult":"short","#).unwrap_err();
        assert_eq!(
            errors,
            ["openToolboxResult: expected \"auto\", \"full\" or \"compact\", found \"short\""]
        );
    }

    #[test]
    fn idle_timeout_per_server_with_a_top_level_default() {
        let (config, _) = check(
            r#"{"toolboxes":{"t":{"description":"d","mcpServers":{
                "default":{"command":"x"},"own":{"command":"x","idleTimeoutMs":300},
                "never":{"command":"x","idleTimeoutMs":0}}}},
               "idleTimeoutMs":60000}"#,
        )
        .unwrap();
        let idle: Vec<_> = config.toolboxes[0]
            .servers
            .iter()
            .map(|s| s.idle_timeout.map(|d| d.as_millis()))
            .collect();
        assert_eq!(idle, [Some(60_000), Some(300), None]);
        let (config, _) =
            check(r#"{"toolboxes":{"t":{"description":"d","mcpServers":{"s":{"command":"x"}}}}}"#)
                .unwrap();
        assert_eq!(
            config.toolboxes[0].servers[0].idle_timeout, None,
            "never by default"
        );
        let errors = check(
            r#"{"idleTimeoutMs":-1,"toolboxes":{"t":{"description":"d","mcpServers":{
                "s":{"command":"x","idleTimeoutMs":"5m"}}}}}"#,
        )
        .unwrap_err();
        assert_eq!(
            errors,
            [
                "idleTimeoutMs: expected a whole number of milliseconds from 0 (never) to 86400000, found -1",
                "toolboxes.t.mcpServers.s.idleTimeoutMs: expected a whole number of milliseconds from 0 (never) to 86400000, found a string",
            ]
        );
    }

    #[test]
    fn names() {
        assert!(valid_name("dev-1_a"));
        assert!(!valid_name(""));
        assert!(!valid_name("a__b"));
        assert!(!valid_name("a.b"));
        assert!(!valid_name(&"x".repeat(65)));
        assert_eq!(child_path("toolboxes", "a b"), "toolboxes[\"a b\"]");
    }

    #[test]
    fn trust_and_size_keys() {
        let (config, warnings) = check(
            r#"{"pinTools":true,"maxResultChars":2000,"toolboxes":{"t":{"description":"d","mcpServers":{
                "a":{"command":"x"},
                "b":{"command":"x","maxResultChars":500,
                     "toolOverrides":{"q":{"description":"better","title":"Q"},"r":{}}}}}}}"#,
        )
        .unwrap();
        assert!(config.pin_tools);
        let servers = &config.toolboxes[0].servers;
        assert_eq!(servers[0].max_result_chars, Some(2000), "the top level's");
        assert_eq!(servers[1].max_result_chars, Some(500), "its own");
        assert_eq!(
            servers[1].tool_overrides[0],
            (
                "q".to_string(),
                ToolOverride {
                    description: Some("better".into()),
                    title: Some("Q".into())
                }
            )
        );
        assert_eq!(
            warnings,
            ["toolboxes.t.mcpServers.b.toolOverrides.r: names neither \"description\" nor \"title\": nothing is replaced"]
        );
        let (config, _) =
            check(r#"{"toolboxes":{"t":{"description":"d","mcpServers":{"s":{"command":"x"}}}}}"#)
                .unwrap();
        assert!(!config.pin_tools);
        assert_eq!(config.toolboxes[0].servers[0].max_result_chars, None);
        let errors = check(
            r#"{"pinTools":"yes","maxResultChars":10,"toolboxes":{"t":{"description":"d","mcpServers":{
                "s":{"command":"x","maxResultChars":"big","toolOverrides":{"q":{"description":1,"titel":"x"}}}}}}}"#,
        )
        .unwrap_err();
        assert_eq!(
            errors,
            [
                "maxResultChars: expected a whole number of characters from 500, found 10",
                "pinTools: expected true or false, found a string",
                "toolboxes.t.mcpServers.s.maxResultChars: expected a whole number of characters from 500, found a string",
                "toolboxes.t.mcpServers.s.toolOverrides.q.description: expected a string, found a number",
            ]
        );
    }
}
