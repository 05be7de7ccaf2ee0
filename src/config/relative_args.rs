//! Arguments that look like relative paths, in a server with no `cwd`: the
//! server takes them from its working directory, which is then the
//! workbench's, which the host picks (GUI hosts start it in `/`), not from the
//! config's folder as `cwd` and `command` are. So `check`, run from the
//! config's folder, would pass where the host fails; `check` and the start-up
//! log warn about them instead, saying what they resolve to.
//!
//! An argument looks like a relative path when it starts with `./` or `../`
//! (or is `.` or `..`), or names a file or folder that is in the config's
//! folder; `--flag=VALUE` is judged by its VALUE. Arguments with a `${...}`
//! reference are left alone (their values are never shown). The only IO is
//! the `exists` the caller passes.

use crate::config::{Config, Problem};
use std::path::Path;

/// One warning per such argument, with its JSON path. `folder` is the
/// config's folder, `cwd` the workbench's working directory.
pub fn warnings(
    config: &Config,
    folder: &Path,
    cwd: &Path,
    exists: &dyn Fn(&Path) -> bool,
) -> Vec<Problem> {
    let mut out = Vec::new();
    let servers = config.toolboxes.iter().flat_map(|t| &t.servers);
    for server in servers.filter(|s| s.cwd.is_none() && !s.disabled) {
        for (i, arg) in server.args.iter().enumerate() {
            if arg.has_references() {
                continue;
            }
            let Some(value) = path_part(arg.source()) else {
                continue;
            };
            if !looks_relative(value, folder, exists) {
                continue;
            }
            out.push(Problem {
                path: format!("{}.args[{i}]", server.json_path),
                message: format!(
                    "'{value}' looks like a relative path, and the server has no \"cwd\": it is \
                     taken from the workbench's working directory ({} here; GUI hosts start the \
                     workbench in '/'), not from the config's folder. Set \"cwd\": \".\" to take \
                     it from the config's folder ({}), or write an absolute path",
                    cwd.join(value).display(),
                    folder.display()
                ),
                near_miss: None,
            });
        }
    }
    out
}

/// The part of an argument that may be a path: the whole of it, or the value
/// of `--flag=VALUE`; none for a bare flag.
fn path_part(arg: &str) -> Option<&str> {
    if arg.starts_with('-') {
        return arg.split_once('=').map(|(_, value)| value);
    }
    Some(arg)
}

fn looks_relative(value: &str, folder: &Path, exists: &dyn Fn(&Path) -> bool) -> bool {
    let not_a_path = value.is_empty()
        || value.starts_with(['~', '@', '-'])
        || value.contains("://")
        || value.contains(char::is_whitespace)
        || Path::new(value).is_absolute()
        || value.starts_with(['/', '\\']);
    if not_a_path {
        return false;
    }
    let explicit = [".", ".."].contains(&value)
        || ["./", "../", ".\\", "..\\"]
            .iter()
            .any(|p| value.starts_with(p));
    explicit || exists(&folder.join(value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config;
    use std::path::PathBuf;

    fn warnings_for(servers: &str, present: &[&str]) -> Vec<String> {
        let text =
            format!(r#"{{"toolboxes": {{"t": {{"description": "d", "mcpServers": {servers}}}}}}}"#);
        let folder = PathBuf::from("/cfg");
        let loaded = config::parse(text.as_bytes(), Path::new("c.json"), &folder).unwrap();
        let present: Vec<PathBuf> = present.iter().map(|p| folder.join(p)).collect();
        warnings(&loaded.config, &folder, Path::new("/home/me"), &|p| {
            present.iter().any(|q| q == p)
        })
        .iter()
        .map(|w| w.to_string())
        .collect()
    }

    #[test]
    fn relative_looking_args_without_cwd_are_named_with_where_they_resolve() {
        let found = warnings_for(
            r#"{"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "files", "./data", "--root=../up", "--verbose", "stdio", "https://x/y", "/abs", "${HOME}/x"]}}"#,
            &["files"],
        );
        assert_eq!(found.len(), 3, "{found:#?}");
        let here = Path::new("/home/me").join("files");
        assert_eq!(
            found[0],
            format!(
                "toolboxes.t.mcpServers.fs.args[2]: 'files' looks like a relative path, and the \
                 server has no \"cwd\": it is taken from the workbench's working directory ({} \
                 here; GUI hosts start the workbench in '/'), not from the config's folder. Set \
                 \"cwd\": \".\" to take it from the config's folder (/cfg), or write an \
                 absolute path",
                here.display()
            )
        );
        assert!(found[1].starts_with("toolboxes.t.mcpServers.fs.args[3]: './data' "));
        assert!(found[2].starts_with("toolboxes.t.mcpServers.fs.args[4]: '../up' "));
    }

    #[test]
    fn a_cwd_or_a_disabled_server_silences_them() {
        let servers = r#"{"a": {"command": "x", "args": ["./data"], "cwd": "."},
                          "b": {"command": "x", "args": ["./data"], "disabled": true}}"#;
        assert!(warnings_for(servers, &[]).is_empty());
    }
}
