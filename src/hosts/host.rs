//! The MCP hosts the workbench moves in from and installs into: their names
//! on the command line, how they are called in messages, and the shape of
//! their server lists. No IO.

use crate::config::suggest;

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

/// Every host, in the order the reports list them.
pub(crate) const ALL: [Host; 7] = [
    Host::ClaudeDesktop,
    Host::ClaudeCode,
    Host::Cursor,
    Host::VsCode,
    Host::Codex,
    Host::Gemini,
    Host::Windsurf,
];

impl Host {
    /// The name on the command line (`install claude-code`, `--from cursor`).
    pub fn name(self) -> &'static str {
        match self {
            Host::ClaudeDesktop => "claude-desktop",
            Host::ClaudeCode => "claude-code",
            Host::Cursor => "cursor",
            Host::VsCode => "vscode",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
            Host::Windsurf => "windsurf",
        }
    }

    /// The product's own name, for sentences.
    pub(crate) fn title(self) -> &'static str {
        match self {
            Host::ClaudeDesktop => "Claude Desktop",
            Host::ClaudeCode => "Claude Code",
            Host::Cursor => "Cursor",
            Host::VsCode => "VS Code",
            Host::Codex => "Codex",
            Host::Gemini => "Gemini CLI",
            Host::Windsurf => "Windsurf",
        }
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
        match self {
            Host::Codex => None,
            Host::VsCode => Some("servers"),
            _ => Some("mcpServers"),
        }
    }

    /// Words a running host's process is named by (Linux `/proc/PID/comm`,
    /// at most 15 bytes): what `install` looks for to say "restart it".
    pub(crate) fn process_names(self) -> &'static [&'static str] {
        match self {
            Host::ClaudeDesktop => &["claude-desktop", "Claude"],
            Host::ClaudeCode => &["claude"],
            Host::Cursor => &["cursor", "Cursor"],
            Host::VsCode => &["code", "Code"],
            Host::Codex => &["codex"],
            Host::Gemini => &["gemini"],
            Host::Windsurf => &["windsurf", "Windsurf"],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
