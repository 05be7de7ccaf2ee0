//! Where each host keeps its MCP servers, on Linux, macOS and Windows: the
//! user's own file (what `install` writes) and the files `import` reads (the
//! user's, and a project's in the working directory). Everything comes from
//! the folders and variables passed in (`Places`), never from the process's
//! own environment, so tests point every host at a sandbox. No IO.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The system whose conventions the paths follow (`sys`'s, which the user's
/// own folders follow too).
pub(crate) use crate::sys::Os;

/// The folders host files are found from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Places {
    pub os: Os,
    /// `$HOME` (Windows: `%USERPROFILE%`).
    pub home: PathBuf,
    /// The working directory: a project's own files are looked for here.
    pub cwd: PathBuf,
    /// Windows: `%APPDATA%` (else `home\AppData\Roaming`).
    appdata: PathBuf,
    /// Linux: `$XDG_CONFIG_HOME` (else `~/.config`).
    xdg_config: PathBuf,
    /// `$CODEX_HOME` (else `~/.codex`).
    codex_home: PathBuf,
    /// `$CLAUDE_CONFIG_DIR` (else the home folder): where `.claude.json` is.
    claude_dir: PathBuf,
}

/// Whose file it is: the user's, or a project's (its folder).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Scope {
    User,
    Project(PathBuf),
}

impl Places {
    /// The places for system `os` from the environment `env`, with `cwd` as
    /// the working directory; the error says which variable is missing.
    pub(crate) fn new(
        os: Os,
        env: &dyn Fn(&str) -> Option<OsString>,
        cwd: PathBuf,
    ) -> Result<Places, String> {
        let var = |name: &str| {
            env(name)
                .filter(|v| os.is_absolute(Path::new(v)))
                .map(PathBuf::from)
        };
        // What `sys::HOME` names on that system.
        let home_var = match os {
            _ if os == Os::current() => crate::sys::HOME,
            Os::Windows => "USERPROFILE",
            _ => "HOME",
        };
        let home = var(home_var).ok_or(format!(
            "{home_var} is not set (or not an absolute path): the hosts' files are found from it"
        ))?;
        Ok(Places {
            os,
            appdata: var("APPDATA").unwrap_or_else(|| home.join("AppData").join("Roaming")),
            xdg_config: var("XDG_CONFIG_HOME").unwrap_or_else(|| home.join(".config")),
            codex_home: var("CODEX_HOME").unwrap_or_else(|| home.join(".codex")),
            claude_dir: var("CLAUDE_CONFIG_DIR").unwrap_or_else(|| home.clone()),
            home,
            cwd,
        })
    }

    /// The folder a desktop application keeps its settings in.
    fn app_config(&self, app: &str) -> PathBuf {
        match self.os {
            Os::Linux => self.xdg_config.join(app),
            Os::Mac => self
                .home
                .join("Library")
                .join("Application Support")
                .join(app),
            Os::Windows => self.appdata.join(app),
        }
    }

    /// `path` with the home folder written `~`, for reports.
    pub(crate) fn show(&self, path: &Path) -> String {
        match path.strip_prefix(&self.home) {
            Ok(rest) if rest.as_os_str().is_empty() => "~".to_string(),
            Ok(rest) => format!("~{}{}", std::path::MAIN_SEPARATOR, rest.display()),
            Err(_) => path.display().to_string(),
        }
    }
}

/// Each host's user-level file (what `install` edits), one function per
/// host, named in its row of `host::ROWS`.
pub(super) fn claude_desktop(p: &Places) -> PathBuf {
    p.app_config("Claude").join("claude_desktop_config.json")
}

pub(super) fn claude_code(p: &Places) -> PathBuf {
    p.claude_dir.join(".claude.json")
}

pub(super) fn cursor(p: &Places) -> PathBuf {
    p.home.join(".cursor").join("mcp.json")
}

pub(super) fn vscode(p: &Places) -> PathBuf {
    p.app_config("Code").join("User").join("mcp.json")
}

pub(super) fn codex(p: &Places) -> PathBuf {
    p.codex_home.join("config.toml")
}

pub(super) fn gemini(p: &Places) -> PathBuf {
    p.home.join(".gemini").join("settings.json")
}

pub(super) fn windsurf(p: &Places) -> PathBuf {
    p.home
        .join(".codeium")
        .join("windsurf")
        .join("mcp_config.json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_home_is_named() {
        let none = |_: &str| None;
        let error = Places::new(Os::Linux, &none, PathBuf::from("/")).unwrap_err();
        assert!(error.starts_with("HOME is not set"), "{error}");
        let error = Places::new(Os::Windows, &none, PathBuf::from("/")).unwrap_err();
        assert!(error.starts_with("USERPROFILE is not set"), "{error}");
    }
}
