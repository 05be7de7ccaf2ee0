//! What a valid config says: `Config`, its toolboxes and servers, their
//! settings, and the defaults and limits the settings are measured against.
//!
//! Plain data: no parsing, no checking and no IO happen here (`validate`
//! builds these values; everything else reads them).

use super::expand::Template;
use std::path::PathBuf;
use std::time::Duration;

pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_millis(30_000);
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_millis(60_000);
/// `maxCallTimeoutMs` defaults to this many times `callTimeoutMs`: progress keeps
/// a call alive, but not forever (MCP 2025-06-18, basic/lifecycle, "Timeouts").
pub const MAX_CALL_TIMEOUT_FACTOR: u32 = 10;
/// `shareLingerMs` by default: a shared fleet outlives its last session by 30 s.
pub const DEFAULT_SHARE_LINGER: Duration = Duration::from_secs(30);

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
    /// A remote server (`url`, docs/reference.md §3.6): reached over HTTP
    /// instead of started as a child; `command`, `args`, `env` and `cwd`
    /// are then empty.
    pub remote: Option<RemoteConfig>,
}

/// How a remote server is reached, as written (references unexpanded).
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteConfig {
    pub kind: RemoteKind,
    pub url: Template,
    /// `headers`, in config order; their expanded values are secrets.
    pub headers: Vec<(String, Template)>,
    pub oauth: Option<OAuthConfig>,
}

/// Which HTTP transport a remote server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteKind {
    /// Streamable HTTP (revisions 2025-03-26 and later): `"type": "http"`.
    StreamableHttp,
    /// The legacy HTTP+SSE transport (revision 2024-11-05): `"type": "sse"`.
    Sse,
}

impl RemoteKind {
    /// How `check` and `status` name it.
    pub fn name(self) -> &'static str {
        match self {
            RemoteKind::StreamableHttp => "Streamable HTTP",
            RemoteKind::Sse => "legacy SSE",
        }
    }
}

/// `oauth`: a client registered beforehand, and what to ask for.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OAuthConfig {
    pub client_id: Option<String>,
    /// Expanded at use; a secret.
    pub client_secret: Option<Template>,
    pub scopes: Vec<String>,
    /// The loopback port the sign-in's redirect comes back to; `None`: any free one.
    pub callback_port: Option<u16>,
}

/// A tool's replacement text (`toolOverrides.NAME`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOverride {
    pub description: Option<String>,
    pub title: Option<String>,
}

/// The smallest `maxResultChars`: room for a head, a tail and the marker.
pub const MIN_RESULT_CHARS: u64 = 500;

/// Which of a server's tools a toolbox exposes.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolFilter {
    All,
    /// Exactly these names (possibly none).
    Only(Vec<String>),
}
