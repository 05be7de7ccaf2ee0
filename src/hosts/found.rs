//! What reading the hosts' files found: each server mapped onto the
//! workbench's keys with where it came from, each entry that could not be
//! mapped with why, and each file looked at with what became of it. Plain
//! data for the plan and the report. No IO.

use super::host::Host;
use super::json_entry::Mapped;
use std::path::PathBuf;

/// Where an entry was found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Origin {
    pub host: Host,
    pub file: PathBuf,
    /// The entry's path in the file (`mcpServers.github`,
    /// `projects["/home/u/app"].mcpServers.db`, `mcp_servers.github`).
    pub path: String,
    /// The project the entry belongs to: a project's own file, or Claude
    /// Code's list for one project.
    pub project: Option<PathBuf>,
    /// Read from a project's own file in the working directory (a clone may
    /// hold anything): its commands are not run for a description.
    pub project_file: bool,
}

/// A server that maps.
#[derive(Debug)]
pub(crate) struct Found {
    /// As the host names it.
    pub name: String,
    pub origin: Origin,
    pub mapped: Mapped,
}

/// An entry that does not map, and why.
#[derive(Debug)]
pub(crate) struct Skipped {
    pub origin: Origin,
    pub why: String,
}

/// What became of one file.
#[derive(Debug, PartialEq)]
pub(crate) enum Outcome {
    /// Not there: the host is not installed, or the project has none.
    Missing,
    /// Read; how many server entries it holds.
    Read(usize),
    /// There, but unreadable: the reason, with its line where there is one.
    Failed(String),
}

#[derive(Debug)]
pub(crate) struct FileRead {
    pub host: Host,
    pub file: PathBuf,
    pub outcome: Outcome,
}

/// Everything read.
#[derive(Debug, Default)]
pub(crate) struct Harvest {
    pub files: Vec<FileRead>,
    pub found: Vec<Found>,
    pub skipped: Vec<Skipped>,
}

/// The path of the member reached by `parts` from a file's top, as
/// `child_path` writes it.
pub(crate) fn path_of<S: AsRef<str>>(parts: &[S]) -> String {
    parts
        .iter()
        .fold(String::new(), |path, part| child_path(&path, part.as_ref()))
}

/// `parent.key` as a path in a file, with a key that is not a plain word
/// quoted (`projects["/home/u/app"]`).
pub(crate) fn child_path(parent: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match (parent.is_empty(), plain) {
        (true, true) => key.to_string(),
        (false, true) => format!("{parent}.{key}"),
        (_, false) => format!("{parent}[{}]", serde_json::Value::from(key)),
    }
}
