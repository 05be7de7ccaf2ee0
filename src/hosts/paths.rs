//! Where each host keeps its MCP servers, on Linux, macOS and Windows: the
//! user's own file (what `install` writes) and the files `import` reads (the
//! user's, and a project's in the working directory). Everything comes from
//! the folders and variables passed in (`Places`), never from the process's
//! own environment, so tests point every host at a sandbox. No IO.

use super::host::Host;
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

    /// The host's user-level file: the one `install` edits.
    pub(crate) fn user_file(&self, host: Host) -> PathBuf {
        match host {
            Host::ClaudeDesktop => self.app_config("Claude").join("claude_desktop_config.json"),
            Host::ClaudeCode => self.claude_dir.join(".claude.json"),
            Host::Cursor => self.home.join(".cursor").join("mcp.json"),
            Host::VsCode => self.app_config("Code").join("User").join("mcp.json"),
            Host::Codex => self.codex_home.join("config.toml"),
            Host::Gemini => self.home.join(".gemini").join("settings.json"),
            Host::Windsurf => self
                .home
                .join(".codeium")
                .join("windsurf")
                .join("mcp_config.json"),
        }
    }

    /// Every file `import` reads for `host`: the user's, then the project's
    /// in the working directory where the host has one.
    pub(crate) fn files(&self, host: Host) -> Vec<(PathBuf, Scope)> {
        let mut files = vec![(self.user_file(host), Scope::User)];
        let project = match host {
            Host::ClaudeCode => Some(self.cwd.join(".mcp.json")),
            Host::Cursor => Some(self.cwd.join(".cursor").join("mcp.json")),
            Host::VsCode => Some(self.cwd.join(".vscode").join("mcp.json")),
            _ => None,
        };
        // Run from the home folder, Cursor's project file is the user's own.
        if let Some(file) = project.filter(|f| *f != files[0].0) {
            files.push((file, Scope::Project(self.cwd.clone())));
        }
        files
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

#[cfg(test)]
mod tests {
    use super::*;

    fn places(os: Os, vars: &'static [(&'static str, &'static str)]) -> Places {
        let env = move |name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(*v))
        };
        Places::new(os, &env, PathBuf::from("/code/proj")).unwrap()
    }

    #[test]
    fn every_host_on_every_system() {
        let linux = places(Os::Linux, &[("HOME", "/h")]);
        let mac = places(Os::Mac, &[("HOME", "/h")]);
        let user = |p: &Places, host| p.user_file(host).display().to_string();
        let expect = [
            (
                Host::ClaudeDesktop,
                "/h/.config/Claude/claude_desktop_config.json",
                "/h/Library/Application Support/Claude/claude_desktop_config.json",
            ),
            (Host::ClaudeCode, "/h/.claude.json", "/h/.claude.json"),
            (Host::Cursor, "/h/.cursor/mcp.json", "/h/.cursor/mcp.json"),
            (
                Host::VsCode,
                "/h/.config/Code/User/mcp.json",
                "/h/Library/Application Support/Code/User/mcp.json",
            ),
            (
                Host::Codex,
                "/h/.codex/config.toml",
                "/h/.codex/config.toml",
            ),
            (
                Host::Gemini,
                "/h/.gemini/settings.json",
                "/h/.gemini/settings.json",
            ),
            (
                Host::Windsurf,
                "/h/.codeium/windsurf/mcp_config.json",
                "/h/.codeium/windsurf/mcp_config.json",
            ),
        ];
        if cfg!(windows) {
            return; // the paths above are Unix paths
        }
        for (host, on_linux, on_mac) in expect {
            assert_eq!(user(&linux, host), on_linux);
            assert_eq!(user(&mac, host), on_mac);
        }
        let xdg = places(
            Os::Linux,
            &[
                ("HOME", "/h"),
                ("XDG_CONFIG_HOME", "/x"),
                ("CODEX_HOME", "/c"),
                ("CLAUDE_CONFIG_DIR", "/cc"),
            ],
        );
        assert_eq!(user(&xdg, Host::VsCode), "/x/Code/User/mcp.json");
        assert_eq!(
            user(&xdg, Host::ClaudeDesktop),
            "/x/Claude/claude_desktop_config.json"
        );
        assert_eq!(user(&xdg, Host::Codex), "/c/config.toml");
        assert_eq!(user(&xdg, Host::ClaudeCode), "/cc/.claude.json");
        let projects: Vec<String> = linux
            .files(Host::VsCode)
            .into_iter()
            .map(|(p, _)| p.display().to_string())
            .collect();
        assert_eq!(
            projects,
            [
                "/h/.config/Code/User/mcp.json",
                "/code/proj/.vscode/mcp.json"
            ]
        );
        assert_eq!(
            linux.files(Host::ClaudeCode)[1].0,
            Path::new("/code/proj/.mcp.json")
        );
        assert_eq!(
            linux.files(Host::Cursor)[1].0,
            Path::new("/code/proj/.cursor/mcp.json")
        );
        assert_eq!(linux.files(Host::Codex).len(), 1);
        let at_home = Places::new(
            Os::Linux,
            &|n: &str| (n == "HOME").then(|| "/h".into()),
            PathBuf::from("/h"),
        )
        .unwrap();
        assert_eq!(
            at_home.files(Host::Cursor).len(),
            1,
            "the user's file is not read twice"
        );
        assert_eq!(
            linux.show(Path::new("/h/.cursor/mcp.json")),
            "~/.cursor/mcp.json"
        );
        assert_eq!(linux.show(Path::new("/elsewhere")), "/elsewhere");
    }

    #[test]
    fn windows_uses_appdata_and_userprofile() {
        let win = places(
            Os::Windows,
            &[
                ("USERPROFILE", r"C:\Users\me"),
                ("APPDATA", r"C:\Users\me\AppData\Roaming"),
                ("HOME", "/ignored"),
            ],
        );
        if !cfg!(windows) {
            // Backslashes are not separators here: the parts are joined with '/'.
            assert!(win
                .user_file(Host::ClaudeDesktop)
                .starts_with(r"C:\Users\me\AppData\Roaming"));
            return;
        }
        assert_eq!(
            win.user_file(Host::ClaudeDesktop),
            Path::new(r"C:\Users\me\AppData\Roaming\Claude\claude_desktop_config.json")
        );
        assert_eq!(
            win.user_file(Host::VsCode),
            Path::new(r"C:\Users\me\AppData\Roaming\Code\User\mcp.json")
        );
        assert_eq!(
            win.user_file(Host::Cursor),
            Path::new(r"C:\Users\me\.cursor\mcp.json")
        );
    }

    #[test]
    fn a_missing_home_is_named() {
        let none = |_: &str| None;
        let error = Places::new(Os::Linux, &none, PathBuf::from("/")).unwrap_err();
        assert!(error.starts_with("HOME is not set"), "{error}");
        let error = Places::new(Os::Windows, &none, PathBuf::from("/")).unwrap_err();
        assert!(error.starts_with("USERPROFILE is not set"), "{error}");
    }
}
