//! The user's own folders, per system (docs/reference.md §2 and §10), and
//! files only the user can read:
//! - config (`user_config`, the config every command uses when none is named):
//!   `$XDG_CONFIG_HOME/mcp-workbench/config.json`, else
//!   `~/.config/mcp-workbench/config.json`; macOS `~/Library/Application
//!   Support/mcp-workbench/config.json`; Windows
//!   `%APPDATA%\mcp-workbench\config.json`;
//! - state (pins): `$XDG_STATE_HOME/mcp-workbench`, else
//!   `~/.local/state/mcp-workbench`; macOS `~/Library/Application
//!   Support/mcp-workbench`; Windows `%LOCALAPPDATA%\mcp-workbench\state`;
//! - cache (cut results): `$XDG_CACHE_HOME/mcp-workbench`, else
//!   `~/.cache/mcp-workbench`; macOS `~/Library/Caches/mcp-workbench`;
//!   Windows `%LOCALAPPDATA%\mcp-workbench\cache`.
//!
//! On Unix the folders are created 0700 and the files 0600; on Windows the
//! user's `%LOCALAPPDATA%` admits only that user already. `XDG_*` variables
//! are honoured on macOS too when set (the tests point them at a scratch
//! folder on every Unix). A folder that must stay private and may have been
//! made by someone else (the sign-in's tokens) is checked as the shared
//! fleet's runtime folder is (`secure_dir`), and its files are read without
//! following a link (`read_private`).

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

const APP: &str = "mcp-workbench";

/// The system whose conventions the user's folders (and the hosts' files,
/// `hosts::paths`) follow: passed in, so the tests of every system can check
/// every system's paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Os {
    Linux,
    Mac,
    Windows,
}

impl Os {
    /// The system this runs on (Unix other than macOS follows Linux).
    pub(crate) fn current() -> Os {
        if cfg!(windows) {
            Os::Windows
        } else if cfg!(target_os = "macos") {
            Os::Mac
        } else {
            Os::Linux
        }
    }

    /// Whether `path` is absolute on this system, read as it writes paths.
    pub(crate) fn is_absolute(self, path: &Path) -> bool {
        let text = path.to_string_lossy();
        let bytes = text.as_bytes();
        match self {
            Os::Windows => {
                path.is_absolute()
                    || text.starts_with(r"\\")
                    || bytes.len() >= 3
                        && bytes[0].is_ascii_alphabetic()
                        && bytes[1] == b':'
                        && matches!(bytes[2], b'\\' | b'/')
            }
            _ => text.starts_with('/'),
        }
    }
}

/// The user's own config file on `os` (docs/reference.md §2), from the
/// environment `env`; the error says which variables it is made of, all unset.
/// Variables that are not absolute paths count as unset (as the XDG spec says).
pub(crate) fn user_config(
    os: Os,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Result<PathBuf, String> {
    let set = |name: &str| {
        env(name)
            .filter(|v| !v.is_empty() && os.is_absolute(Path::new(v)))
            .map(PathBuf::from)
    };
    let folder = match os {
        Os::Windows => set("APPDATA")
            .or_else(|| set("USERPROFILE").map(|home| home.join("AppData").join("Roaming")))
            .ok_or("neither APPDATA nor USERPROFILE is set")?,
        Os::Mac => set("HOME")
            .map(|home| home.join("Library").join("Application Support"))
            .ok_or("HOME is not set")?,
        Os::Linux => set("XDG_CONFIG_HOME")
            .or_else(|| set("HOME").map(|home| home.join(".config")))
            .ok_or("neither XDG_CONFIG_HOME nor HOME is set")?,
    };
    Ok(folder.join(APP).join("config.json"))
}

/// Which of the user's folders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UserDir {
    State,
    Cache,
}

/// The folder, from the environment `env`; `None` when the variables it is
/// made of are unset (the error says which).
pub(crate) fn user_dir(
    which: UserDir,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Result<PathBuf, String> {
    let set = |name: &str| {
        env(name)
            .filter(|v| !v.is_empty() && Path::new(v).is_absolute())
            .map(PathBuf::from)
    };
    if cfg!(windows) {
        let base = set("LOCALAPPDATA").ok_or("LOCALAPPDATA is not set")?;
        let leaf = match which {
            UserDir::State => "state",
            UserDir::Cache => "cache",
        };
        return Ok(base.join(APP).join(leaf));
    }
    let xdg = match which {
        UserDir::State => "XDG_STATE_HOME",
        UserDir::Cache => "XDG_CACHE_HOME",
    };
    if let Some(base) = set(xdg) {
        return Ok(base.join(APP));
    }
    let home = set("HOME").ok_or(format!("neither {xdg} nor HOME is set"))?;
    let below: &[&str] = match (cfg!(target_os = "macos"), which) {
        (true, UserDir::State) => &["Library", "Application Support"],
        (true, UserDir::Cache) => &["Library", "Caches"],
        (false, UserDir::State) => &[".local", "state"],
        (false, UserDir::Cache) => &[".cache"],
    };
    Ok(below.iter().fold(home, |p, part| p.join(part)).join(APP))
}

/// Creates `dir` and its parents; the ones created here only the user can enter.
pub(crate) fn private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// What `secure_dir` found of a folder.
#[cfg(feature = "remote")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Secured {
    /// It does not exist.
    Absent,
    /// It was the user's alone.
    Private,
    /// It was the user's but open to others (this mode): it is 0700 now.
    #[cfg_attr(not(unix), allow(dead_code))]
    Tightened(u32),
}

/// Makes sure `dir`, if it exists, is a folder only this user can enter:
/// a link, a file or a folder of another user is refused (an error naming
/// it); a folder of the user's that others may enter is made 0700, which
/// `Tightened` reports for the caller to say. On Windows only a link or a
/// file is refused (`%LOCALAPPDATA%` admits only the user).
#[cfg(feature = "remote")]
pub(crate) fn secure_dir(dir: &Path) -> io::Result<Secured> {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Secured::Absent),
        Err(e) => return Err(e),
    };
    if meta.file_type().is_symlink() || !meta.is_dir() {
        return Err(io::Error::other(format!(
            "refusing {}: it is a {}, not a folder; remove it",
            dir.display(),
            if meta.file_type().is_symlink() {
                "link"
            } else {
                "file"
            }
        )));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let uid = super::local::user_id();
        if meta.uid() != uid {
            return Err(io::Error::other(format!(
                "refusing {}: it belongs to uid {}, not to this user (uid {uid}); remove it",
                dir.display(),
                meta.uid()
            )));
        }
        let mode = meta.mode() & 0o7777;
        if mode & 0o077 != 0 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
            return Ok(Secured::Tightened(mode));
        }
    }
    Ok(Secured::Private)
}

/// The bytes of the regular file `path`, never through a link: a link or
/// anything but a file is an `InvalidData` error saying so.
#[cfg(feature = "remote")]
pub(crate) fn read_private(path: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let not_a_file = |what: &str| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{} is a {what}, not a file: it is not followed",
                path.display()
            ),
        )
    };
    let meta = std::fs::symlink_metadata(path)?;
    if meta.file_type().is_symlink() {
        return Err(not_a_file("link"));
    }
    if !meta.is_file() {
        return Err(not_a_file("folder or device"));
    }
    let mut options = OpenOptions::new();
    options.read(true);
    // A link put in its place since is not followed either, and a pipe does
    // not block the open.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NOFOLLOW | libc::O_NONBLOCK,
    );
    let mut file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(not_a_file("folder or device"));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Opens a new file `path` for writing that only the user can read; fails if it exists.
pub(crate) fn private_file(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// Writes `bytes` to `path` atomically: a private file next to it, synced,
/// then renamed over it. A crash leaves the old file or the new one.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    replace(path, bytes, false, &mut || Ok(true)).map(|_| ())
}

/// As `write_atomically`, but the new file keeps the permissions of the one
/// it replaces (a file of the user's that others may read, such as a host's
/// config); a new file is still the user's alone.
pub(crate) fn write_atomically_keeping_mode(path: &Path, bytes: &[u8]) -> io::Result<()> {
    replace(path, bytes, true, &mut || Ok(true)).map(|_| ())
}

/// As `write_atomically_keeping_mode`, but `still` is asked once the new
/// file is written, just before the rename: when it says no (the file was
/// changed meanwhile), nothing is replaced and the answer is `false`.
pub(crate) fn write_atomically_unless(
    path: &Path,
    bytes: &[u8],
    still: &mut dyn FnMut() -> io::Result<bool>,
) -> io::Result<bool> {
    replace(path, bytes, true, still)
}

fn replace(
    path: &Path,
    bytes: &[u8],
    keep_mode: bool,
    still: &mut dyn FnMut() -> io::Result<bool>,
) -> io::Result<bool> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&temp);
    let written = private_file(&temp).and_then(|mut file| {
        file.write_all(bytes)?;
        file.sync_all()?;
        match std::fs::metadata(path) {
            Ok(old) if keep_mode => std::fs::set_permissions(&temp, old.permissions()),
            _ => Ok(()),
        }
    });
    let renamed = written.and_then(|()| match still()? {
        true => rename(&temp, path).map(|()| true),
        false => Ok(false),
    });
    if !matches!(renamed, Ok(true)) {
        let _ = std::fs::remove_file(&temp);
    }
    renamed
}

/// `std::fs::rename`, tried again for up to a second on Windows while it is
/// refused: there a file that another handle holds open (a reader in
/// another thread, a virus scanner; Wine) may not be replaced until that
/// handle closes, and a refused write of refreshed tokens would send a
/// second refresh.
fn rename(from: &Path, to: &Path) -> io::Result<()> {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(1);
    loop {
        match std::fs::rename(from, to) {
            Err(e)
                if cfg!(windows)
                    && e.kind() == io::ErrorKind::PermissionDenied
                    && std::time::Instant::now() < until =>
            {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_replaced_file_is_private_unless_its_mode_is_kept() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("wb-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("f.json");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        std::fs::write(&file, "old").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_atomically_keeping_mode(&file, b"kept").unwrap();
        assert_eq!(
            (std::fs::read_to_string(&file).unwrap(), mode(&file)),
            ("kept".into(), 0o644)
        );
        write_atomically(&file, b"private").unwrap();
        assert_eq!(mode(&file), 0o600);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn folders_follow_the_system_and_the_environment() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| OsString::from(*v))
            }
        };
        if cfg!(windows) {
            let e = env(&[("LOCALAPPDATA", r"C:\Users\u\AppData\Local")]);
            assert_eq!(
                user_dir(UserDir::State, &e).unwrap(),
                Path::new(r"C:\Users\u\AppData\Local\mcp-workbench\state")
            );
            return;
        }
        let xdg = env(&[
            ("XDG_STATE_HOME", "/x/state"),
            ("XDG_CACHE_HOME", "/x/cache"),
            ("HOME", "/h"),
        ]);
        assert_eq!(
            user_dir(UserDir::State, &xdg).unwrap(),
            Path::new("/x/state/mcp-workbench")
        );
        assert_eq!(
            user_dir(UserDir::Cache, &xdg).unwrap(),
            Path::new("/x/cache/mcp-workbench")
        );
        // A relative XDG value is ignored, as the spec says.
        let home = env(&[("XDG_STATE_HOME", "rel"), ("HOME", "/h")]);
        let (state, cache) = if cfg!(target_os = "macos") {
            (
                "/h/Library/Application Support/mcp-workbench",
                "/h/Library/Caches/mcp-workbench",
            )
        } else {
            ("/h/.local/state/mcp-workbench", "/h/.cache/mcp-workbench")
        };
        assert_eq!(user_dir(UserDir::State, &home).unwrap(), Path::new(state));
        assert_eq!(user_dir(UserDir::Cache, &home).unwrap(), Path::new(cache));
        assert_eq!(
            user_dir(UserDir::Cache, &env(&[])).unwrap_err(),
            "neither XDG_CACHE_HOME nor HOME is set"
        );
    }

    /// The user's config on each system, from the environment passed in.
    #[test]
    fn the_users_config_on_every_system() {
        let config = |os, vars: &[(&str, &str)]| {
            let env = |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| OsString::from(*v))
            };
            user_config(os, &env)
        };
        let file = |base: &str| Path::new(base).join("mcp-workbench").join("config.json");
        // Linux: XDG_CONFIG_HOME, else ~/.config; a relative XDG value is ignored.
        let linux = [("XDG_CONFIG_HOME", "/x"), ("HOME", "/h")];
        assert_eq!(config(Os::Linux, &linux), Ok(file("/x")));
        assert_eq!(config(Os::Linux, &[("HOME", "/h")]), Ok(file("/h/.config")));
        let relative = [("XDG_CONFIG_HOME", "x"), ("HOME", "/h")];
        assert_eq!(config(Os::Linux, &relative), Ok(file("/h/.config")));
        assert_eq!(
            config(Os::Linux, &[("XDG_CONFIG_HOME", ""), ("HOME", "h")]),
            Err("neither XDG_CONFIG_HOME nor HOME is set".into())
        );
        // macOS: Application Support, XDG_CONFIG_HOME or not.
        assert_eq!(
            config(Os::Mac, &linux),
            Ok(file("/h/Library/Application Support"))
        );
        assert_eq!(config(Os::Mac, &[]), Err("HOME is not set".into()));
        // Windows: %APPDATA%, else the profile's AppData\Roaming; HOME plays no part.
        let appdata = r"C:\Users\u\AppData\Roaming";
        let windows = [
            ("APPDATA", appdata),
            ("USERPROFILE", r"C:\Users\u"),
            ("HOME", "/h"),
        ];
        assert_eq!(config(Os::Windows, &windows), Ok(file(appdata)));
        assert_eq!(
            config(
                Os::Windows,
                &[("APPDATA", "rel"), ("USERPROFILE", r"C:\Users\u")]
            ),
            Ok(Path::new(r"C:\Users\u")
                .join("AppData")
                .join("Roaming")
                .join("mcp-workbench")
                .join("config.json"))
        );
        assert_eq!(
            config(Os::Windows, &[("HOME", "/h")]),
            Err("neither APPDATA nor USERPROFILE is set".into())
        );
    }

    #[test]
    fn absolute_paths_as_each_system_writes_them() {
        for (os, path, absolute) in [
            (Os::Windows, r"C:\Users\u", true),
            (Os::Windows, "c:/u", true),
            (Os::Windows, r"\\server\share", true),
            (Os::Windows, r"Users\u", false),
            (Os::Windows, "C:", false),
            (Os::Linux, "/h", true),
            (Os::Linux, "h", false),
            (Os::Mac, r"C:\Users", false),
        ] {
            assert_eq!(os.is_absolute(Path::new(path)), absolute, "{os:?} {path}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn private_files_and_folders_are_the_users_alone() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("dirs-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let inner = dir.join("a").join("b");
        private_dir(&inner).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&inner), 0o700);
        let file = inner.join("f.json");
        write_atomically(&file, b"one").unwrap();
        write_atomically(&file, b"two").unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"two");
        assert_eq!(mode(&file), 0o600);
        assert_eq!(
            std::fs::read_dir(&inner).unwrap().count(),
            1,
            "no temp left"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
