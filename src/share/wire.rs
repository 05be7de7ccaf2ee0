//! What a session and the shared fleet say before MCP flows between them,
//! and the `status` report (docs/reference.md §8). One JSON object per line;
//! after the welcome, the connection carries the host's MCP lines as they
//! are. No IO.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The first line of a connection.
#[derive(Serialize, Deserialize)]
pub(crate) struct Hello {
    /// The workbench version of the sender: one fleet serves one version.
    pub version: String,
    /// `session` (MCP follows) or `status` (one report, then the end).
    pub role: String,
    /// The front process's pid.
    pub pid: u32,
    /// The front's environment: its `${VAR}`s expand with it.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// The fleet's answer to a hello.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Answer {
    Welcome { pid: u32 },
    Refused { reason: String },
    Status(Status),
}

/// `mcp-workbench status --json`.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Status {
    pub pid: u32,
    pub version: String,
    pub uptime_ms: u64,
    pub config: String,
    /// With no session attached: how long until the fleet ends by its
    /// linger (`shareLingerMs`), unless a session attaches first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ends_in_ms: Option<u64>,
    pub sessions: Vec<SessionStatus>,
    pub servers: Vec<ServerStatus>,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct SessionStatus {
    pub pid: u32,
    /// The host's `clientInfo.name`.
    pub client: Option<String>,
    pub toolboxes: Vec<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ServerStatus {
    pub toolbox: String,
    pub server: String,
    pub pid: Option<u32>,
    /// `running` or `asleep`.
    pub state: String,
    /// A running server's era and protocol version: `legacy 2025-11-25`,
    /// `modern 2026-07-28` (docs/reference.md §7.1.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub era: Option<String>,
    pub rss_kb: Option<u64>,
    /// The pids of the sessions holding its toolbox.
    pub sessions: Vec<u32>,
}

impl Status {
    /// The report for people: one line for the fleet, then one per session
    /// and per server.
    pub(crate) fn human(&self) -> String {
        let mut out = format!(
            "fleet pid {} (mcp-workbench {}), up {} s, config {}\n",
            self.pid,
            self.version,
            self.uptime_ms / 1000,
            self.config
        );
        match self.ends_in_ms {
            Some(ms) if self.sessions.is_empty() => {
                out += &format!(
                    "no sessions; ends in {} s unless one attaches\n",
                    ms.div_ceil(1000)
                )
            }
            _ => out += &format!("{} session(s)\n", self.sessions.len()),
        }
        for s in &self.sessions {
            out += &format!(
                "  pid {:<8} {:<20} toolboxes: {}\n",
                s.pid,
                s.client.as_deref().unwrap_or("(not initialized)"),
                if s.toolboxes.is_empty() {
                    "none".to_string()
                } else {
                    s.toolboxes.join(", ")
                }
            );
        }
        out += &format!("{} server(s)\n", self.servers.len());
        for s in &self.servers {
            let sessions: Vec<String> = s.sessions.iter().map(u32::to_string).collect();
            out += &format!(
                "  {}/{} {}{} pid {} rss {} held by sessions [{}]\n",
                s.toolbox,
                s.server,
                s.state,
                s.era
                    .as_deref()
                    .map_or(String::new(), |era| format!(" ({era})")),
                s.pid.map_or("-".into(), |p| p.to_string()),
                s.rss_kb.map_or("-".into(), |kb| format!("{kb} KiB")),
                sessions.join(", ")
            );
        }
        out
    }
}
