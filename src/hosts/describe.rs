//! The description of an imported server's toolbox: what a model reads to
//! choose it (docs/decisions.md, "Import: a toolbox per server"). Made of
//! the server's name, the host's own description of it (Gemini CLI has
//! one), the package it runs or the site it reaches, the project folder a
//! host enables it for when that is one project only, the first sentence
//! of its `instructions` and its tool names, when it could be started and
//! listed. Never an argument, a variable's value or a header: only names.
//! No IO.

use super::entry::{Entry, Transport};

/// What starting the server showed.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Listing {
    pub instructions: Option<String>,
    pub tools: Vec<String>,
}

/// At most this many tool names are spelt out.
const TOOLS_SHOWN: usize = 8;
/// An instruction sentence is cut to this many characters.
const SENTENCE_MAX: usize = 200;

/// The description of `name`'s toolbox; `projects`: the folders (as
/// shown) of the projects its hosts enable it for, none when a host enables
/// it for every project.
pub(crate) fn description(
    name: &str,
    entry: &Entry,
    own: Option<&str>,
    projects: &[String],
    listing: Option<&Listing>,
) -> String {
    let what = match (
        &entry.transport,
        own.map(str::trim).filter(|d| !d.is_empty()),
    ) {
        (_, Some(own)) => format!("{name}: {}", sentence(own)),
        (Transport::Stdio { command, args, .. }, None) => match package(command, args) {
            Some(package) => format!("The {name} MCP server ({package})."),
            None => format!("The {name} MCP server."),
        },
        (Transport::Remote { url, .. }, None) => match site(url) {
            Some(site) => format!("The {name} MCP server at {site}."),
            None => format!("The {name} MCP server (remote)."),
        },
    };
    let mut parts = vec![what];
    match projects {
        [] => {}
        [one] => parts.push(format!("For the project in {one} only.")),
        [first @ .., last] => parts.push(format!(
            "For the projects in {} and {last} only.",
            first.join(", ")
        )),
    }
    if let Some(listing) = listing {
        if let Some(first) = listing
            .instructions
            .as_deref()
            .map(sentence)
            .filter(|s| !s.is_empty())
        {
            parts.push(first);
        }
        if !listing.tools.is_empty() {
            let shown: Vec<&str> = listing
                .tools
                .iter()
                .take(TOOLS_SHOWN)
                .map(String::as_str)
                .collect();
            let more = listing.tools.len().saturating_sub(TOOLS_SHOWN);
            parts.push(match more {
                0 => format!("Tools: {}.", shown.join(", ")),
                n => format!("Tools: {}, and {n} more.", shown.join(", ")),
            });
        }
    }
    parts.join(" ")
}

/// The first sentence of `text`, on one line, at most `SENTENCE_MAX`
/// characters, ending in a full stop. Markdown headings are not sentences:
/// instructions often open with one (`# Everything Server`).
fn sentence(text: &str) -> String {
    let flat: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .flat_map(str::split_whitespace)
        .collect::<Vec<_>>()
        .join(" ");
    let end = flat
        .char_indices()
        .find(|(i, c)| matches!(c, '.' | '!' | '?') && flat[i + 1..].starts_with(' '))
        .map_or(flat.len(), |(i, c)| i + c.len_utf8());
    let mut first: String = flat[..end].chars().take(SENTENCE_MAX).collect();
    if first.chars().count() < flat[..end].chars().count() {
        first.push('…');
    }
    if !first.is_empty() && !first.ends_with(['.', '!', '?', '…']) {
        first.push('.');
    }
    first
}

/// The package a launcher runs (`npx -y @scope/pkg@1`: `@scope/pkg`), or
/// the program's own name when it is not a launcher or an interpreter.
fn package(command: &str, args: &[String]) -> Option<String> {
    let program = command
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(command)
        .trim_end_matches(".exe")
        .trim_end_matches(".cmd");
    let launcher = matches!(
        program,
        "npx" | "bunx" | "pnpx" | "uvx" | "pipx" | "pnpm" | "yarn" | "uv" | "deno" | "bun"
    );
    if launcher {
        let word = args
            .iter()
            .find(|a| !a.starts_with('-') && !matches!(a.as_str(), "dlx" | "run" | "tool" | "x"))?;
        let name = match word.rfind('@') {
            Some(at) if at > 0 => &word[..at],
            _ => word.as_str(),
        };
        return plain_name(name).then(|| name.to_string());
    }
    let interpreter = matches!(
        program,
        "node"
            | "python"
            | "python3"
            | "sh"
            | "bash"
            | "cmd"
            | "docker"
            | "podman"
            | "java"
            | "ruby"
    );
    (!interpreter && plain_name(program)).then(|| program.to_string())
}

/// A package or program name: short, no path, no value.
fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 80
        && !name.starts_with(['.', '/', '$', '~'])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '@' | '/' | '-' | '_' | '.'))
}

/// The host a URL reaches (`https://mcp.linear.app/mcp`: `mcp.linear.app`),
/// without credentials or port; `None` when it holds a `${VAR}`.
fn site(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?;
    let host = host.split(':').next()?;
    (!host.is_empty() && !host.contains('$')).then(|| host.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio(command: &str, args: &[&str]) -> Entry {
        let mut e = Entry::stdio(command.into());
        if let Transport::Stdio { args: a, .. } = &mut e.transport {
            *a = args.iter().map(|s| s.to_string()).collect();
        }
        e
    }

    #[test]
    fn a_heading_is_not_the_first_sentence() {
        assert_eq!(
            sentence("# Everything Server\n\nTests every feature. More."),
            "Tests every feature."
        );
    }

    #[test]
    fn from_names_instructions_and_tools() {
        let fs = stdio(
            "npx",
            &[
                "-y",
                "@modelcontextprotocol/server-filesystem@1.2",
                "/secret/path",
            ],
        );
        assert_eq!(
            description("files", &fs, None, &[], None),
            "The files MCP server (@modelcontextprotocol/server-filesystem)."
        );
        let listing = Listing {
            instructions: Some("Reads and writes files.\nUse absolute paths. More.".into()),
            tools: (1..=10).map(|i| format!("t{i}")).collect(),
        };
        assert_eq!(
            description("files", &fs, None, &[], Some(&listing)),
            "The files MCP server (@modelcontextprotocol/server-filesystem). Reads and writes files. Tools: t1, t2, t3, t4, t5, t6, t7, t8, and 2 more."
        );
        let remote = Entry::remote("https://user:pw@mcp.linear.app:443/mcp?key=x".into(), false);
        assert_eq!(
            description("linear", &remote, None, &[], None),
            "The linear MCP server at mcp.linear.app."
        );
        let hidden = Entry::remote("https://${HOST}/mcp".into(), false);
        assert_eq!(
            description("x", &hidden, None, &[], None),
            "The x MCP server (remote)."
        );
        assert_eq!(
            description(
                "g",
                &stdio("node", &["server.js"]),
                Some("Searches the web"),
                &[],
                None
            ),
            "g: Searches the web."
        );
        assert_eq!(
            description(
                "p",
                &stdio("/opt/bin/mcp-server-git", &["--token", "x"]),
                None,
                &[],
                None
            ),
            "The p MCP server (mcp-server-git)."
        );
        assert_eq!(
            description("d", &stdio("docker", &["run", "img"]), None, &[], None),
            "The d MCP server."
        );
        let projects = ["~/code/app".to_string()];
        assert_eq!(
            description("db", &stdio("db-server", &[]), None, &projects, Some(&listing)),
            "The db MCP server (db-server). For the project in ~/code/app only. Reads and writes files. Tools: t1, t2, t3, t4, t5, t6, t7, t8, and 2 more."
        );
        let two = ["~/a".to_string(), "~/b".to_string(), "/c".to_string()];
        assert_eq!(
            description("db", &stdio("db-server", &[]), None, &two, None),
            "The db MCP server (db-server). For the projects in ~/a, ~/b and /c only."
        );
        let long = "x".repeat(300);
        assert!(sentence(&long).ends_with('…'));
    }
}
