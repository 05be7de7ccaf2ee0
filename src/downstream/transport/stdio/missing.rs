//! What a start says when the system found no program to run: where it
//! looked. A bare name (`npx`) was looked for in the folders of the child's
//! `PATH`, which it names (their count and the first few when there are
//! many); a command with a folder in it was one file, whose absolute path it
//! names (a relative command is taken from the config's folder,
//! docs/reference.md §3.3). A file that is there but still "not found" is
//! a script whose interpreter (its `#!` line) or a binary whose loader is
//! missing, and it says so.
//!
//! Nothing expanded from a `${...}` reference is shown: such a command's
//! path, or a `PATH` the server's `env` sets with references, is described
//! without its value. The folders of the workbench's own `PATH` are shown.

use super::super::spec::{Lookup, Spec};
use std::ffi::OsStr;
use std::io;
use std::path::{is_separator, Path, PathBuf};

/// The most `PATH` folders named one by one; a longer `PATH` is given by
/// its count and its first `FIRST` folders.
const LISTED: usize = 6;
const FIRST: usize = 4;

/// Where the start looked for the program.
pub(super) struct Missing {
    program: String,
    /// The command as the config writes it.
    written: String,
    /// The child's `PATH`, if it has one.
    path: Option<String>,
    lookup: Lookup,
}

impl Missing {
    pub(super) fn of(spec: &Spec) -> Missing {
        let path = spec
            .env
            .iter()
            .find(|(name, _)| is_path_variable(name))
            .map(|(_, value)| value.clone());
        Missing {
            program: spec.program.clone(),
            written: spec.command_display.clone(),
            path,
            lookup: spec.lookup.clone(),
        }
    }

    /// `error` as it goes on: a "not found" explained by where the start
    /// looked; any other error as it is.
    pub(super) fn explain(&self, error: io::Error) -> io::Error {
        if error.kind() != io::ErrorKind::NotFound {
            return error;
        }
        io::Error::new(io::ErrorKind::NotFound, self.looked(&|p| p.is_file()))
    }

    /// Where it looked, with `is_file` telling which files exist.
    fn looked(&self, is_file: &dyn Fn(&Path) -> bool) -> String {
        if !self.program.chars().any(is_separator) && !has_drive(&self.program) {
            return self.searched(is_file);
        }
        let file = Path::new(&self.program);
        let shown = if self.lookup.command_secret {
            "the file the command names (its path holds a ${...} reference and is not shown)"
                .to_string()
        } else {
            format!("{}", file.display())
        };
        if is_file(file) {
            return not_runnable(&shown);
        }
        let relative = Path::new(&self.written).is_relative()
            && !self.written.starts_with('~')
            && !self.written.starts_with('$');
        let taken = if relative && !self.lookup.command_secret {
            " (a relative command is taken from the config file's folder)"
        } else {
            ""
        };
        format!("{shown} does not exist{taken}")
    }

    /// A bare name: the folders of `PATH` it was looked for in.
    fn searched(&self, is_file: &dyn Fn(&Path) -> bool) -> String {
        let name = &self.program;
        let folders: Vec<PathBuf> = self
            .path
            .as_deref()
            .map(|p| std::env::split_paths(OsStr::new(p)).collect())
            .unwrap_or_default();
        let folders: Vec<PathBuf> = folders
            .into_iter()
            .filter(|f| !f.as_os_str().is_empty())
            .collect();
        let advice = "write the command's absolute path, or set PATH in the server's \"env\" \
            (hosts started from a desktop often pass a short PATH)";
        if folders.is_empty() {
            return format!("'{name}' was looked for in PATH, which is empty or unset; {advice}");
        }
        let advice = match self.lookup.path_secret {
            Some(_) => "write the command's absolute path, or check what that PATH expands to",
            None => advice,
        };
        if let Some(found) = folders.iter().map(|f| f.join(name)).find(|p| is_file(p)) {
            return not_runnable(&found.display().to_string());
        }
        let extensions = if cfg!(windows) {
            " (with each PATHEXT extension)"
        } else {
            ""
        };
        let count = folders.len();
        let which = if let Some(json_path) = &self.lookup.path_secret {
            format!(
                "any of the {count} folders of the PATH set by {json_path} (not shown: it holds \
                 a ${{...}} reference)"
            )
        } else if count <= LISTED {
            format!("any folder of PATH ({})", list(&folders))
        } else {
            format!(
                "any of the {count} folders of PATH ({}, ...)",
                list(&folders[..FIRST])
            )
        };
        format!("no '{name}'{extensions} in {which}; {advice}")
    }
}

/// A file that is there, yet the system found nothing to run.
fn not_runnable(file: &str) -> String {
    format!(
        "{file} exists, but the system could not run it: the interpreter its first line \
         names (#!) or the loader it needs is missing"
    )
}

fn list(folders: &[PathBuf]) -> String {
    folders
        .iter()
        .map(|f| f.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `PATH`; on Windows any case of it (`Path`).
fn is_path_variable(name: &str) -> bool {
    if cfg!(windows) {
        name.eq_ignore_ascii_case("PATH")
    } else {
        name == "PATH"
    }
}

/// A Windows drive (`D:` or `D:\...`): a path, not a bare name.
fn has_drive(program: &str) -> bool {
    cfg!(windows) && program.as_bytes().get(1) == Some(&b':')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn missing(program: &str, written: &str, path: Option<&str>, lookup: Lookup) -> Missing {
        Missing {
            program: program.into(),
            written: written.into(),
            path: path.map(str::to_string),
            lookup,
        }
    }

    #[cfg(unix)]
    fn nothing(_: &Path) -> bool {
        false
    }

    /// What each case says; Unix paths (Windows splits PATH on `;`).
    #[cfg(unix)]
    #[test]
    fn a_missing_program_says_where_it_was_looked_for() {
        let advice = "write the command's absolute path, or set PATH in the server's \"env\" \
            (hosts started from a desktop often pass a short PATH)";
        let bare = missing(
            "npx",
            "npx",
            Some("/usr/local/bin:/usr/bin:/bin"),
            Lookup::default(),
        );
        assert_eq!(
            bare.looked(&nothing),
            format!("no 'npx' in any folder of PATH (/usr/local/bin, /usr/bin, /bin); {advice}")
        );
        let long: Vec<String> = (0..9).map(|i| format!("/p{i}")).collect();
        let long = missing("uvx", "uvx", Some(&long.join(":")), Lookup::default());
        assert_eq!(
            long.looked(&nothing),
            format!("no 'uvx' in any of the 9 folders of PATH (/p0, /p1, /p2, /p3, ...); {advice}")
        );
        let secret = Lookup {
            command_secret: false,
            path_secret: Some("toolboxes.t.mcpServers.s.env.PATH".into()),
        };
        let hidden = missing("npx", "npx", Some("/secret/a:/secret/b"), secret);
        let said = hidden.looked(&nothing);
        assert!(!said.contains("/secret"), "{said}");
        assert!(
            said.starts_with(
                "no 'npx' in any of the 2 folders of the PATH set by toolboxes.t.mcpServers.s.env.PATH"
            ),
            "{said}"
        );
        for path in [None, Some("")] {
            let unset = missing("npx", "npx", path, Lookup::default());
            assert_eq!(
                unset.looked(&nothing),
                format!("'npx' was looked for in PATH, which is empty or unset; {advice}")
            );
        }
        let relative = missing("/cfg/bin/server", "bin/server", None, Lookup::default());
        assert_eq!(
            relative.looked(&nothing),
            "/cfg/bin/server does not exist (a relative command is taken from the config file's folder)"
        );
        let absolute = missing("/opt/s", "/opt/s", None, Lookup::default());
        assert_eq!(absolute.looked(&nothing), "/opt/s does not exist");
        let expanded = Lookup {
            command_secret: true,
            path_secret: None,
        };
        let expanded = missing("/home/x/token/s", "${DIR}/s", None, expanded);
        let said = expanded.looked(&nothing);
        assert!(!said.contains("token"), "{said}");
        let there = missing("npx", "npx", Some("/a:/b"), Lookup::default());
        assert_eq!(
            there.looked(&|p| p == Path::new("/b/npx")),
            "/b/npx exists, but the system could not run it: the interpreter its first line \
             names (#!) or the loader it needs is missing"
        );
    }

    #[test]
    fn other_errors_pass_as_they_are() {
        let bare = missing("npx", "npx", Some(""), Lookup::default());
        let denied = bare.explain(io::Error::from(io::ErrorKind::PermissionDenied));
        assert_eq!(denied.kind(), io::ErrorKind::PermissionDenied);
        let missing = bare.explain(io::Error::from(io::ErrorKind::NotFound));
        assert!(
            missing.to_string().contains("looked for in PATH"),
            "{missing}"
        );
    }
}
