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
    /// A remote server's transport (`Streamable HTTP`, `legacy SSE`): it has
    /// no process, so no pid and no memory of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    /// A remote server's url as written in the config (never expanded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// When other sessions hold another copy of this server: why (which of
    /// what it starts with differs, by name: `host::split`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub separate: Option<String>,
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
            let process = match (&s.transport, &s.url) {
                (Some(transport), Some(url)) => {
                    format!("remote, no process ({transport} {url})")
                }
                _ => format!(
                    "pid {} rss {}",
                    s.pid.map_or("-".into(), |p| p.to_string()),
                    s.rss_kb.map_or("-".into(), |kb| format!("{kb} KiB")),
                ),
            };
            out += &format!(
                "  {}/{} {}{} {process} held by sessions [{}]{}\n",
                s.toolbox,
                s.server,
                s.state,
                s.era
                    .as_deref()
                    .map_or(String::new(), |era| format!(" ({era})")),
                sessions.join(", "),
                s.separate
                    .as_deref()
                    .map_or(String::new(), |why| format!("; {why}")),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_server_is_shown_without_a_process() {
        let server = |name: &str, pid, transport: Option<&str>| ServerStatus {
            toolbox: "t".into(),
            server: name.into(),
            pid,
            state: "running".into(),
            era: None,
            rss_kb: pid.map(|_| 100),
            sessions: vec![7],
            transport: transport.map(str::to_string),
            url: transport.map(|_| "https://h.example/mcp?k=${K}".to_string()),
            separate: None,
        };
        let status = Status {
            pid: 1,
            version: "0".into(),
            uptime_ms: 0,
            config: "c.json".into(),
            sessions: Vec::new(),
            ends_in_ms: None,
            servers: vec![
                server("child", Some(42), None),
                server("far", None, Some("Streamable HTTP")),
            ],
        };
        let text = status.human();
        assert!(
            text.contains("  t/child running pid 42 rss 100 KiB held by sessions [7]\n"),
            "{text}"
        );
        assert!(
            text.contains("  t/far running remote, no process (Streamable HTTP https://h.example/mcp?k=${K}) held by sessions [7]\n"),
            "{text}"
        );
        let json = serde_json::to_value(&status).unwrap();
        assert_eq!(json["servers"][1]["transport"], "Streamable HTTP");
        assert_eq!(json["servers"][1]["pid"], serde_json::Value::Null);
        assert!(json["servers"][0].get("transport").is_none(), "{json}");
    }
}
