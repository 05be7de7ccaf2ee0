//! Opening the user's web browser on a URL: a sign-in's authorization page
//! (docs/reference.md §7.5). `$BROWSER` when set (a `:`-separated list of
//! commands, tried in order; `%s` stands for the URL, which is appended
//! otherwise: the convention of `xdg-open` and Python's `webbrowser`, and
//! how the tests point it at a scripted browser), else the system's opener:
//! `open` on macOS, `xdg-open` elsewhere on Unix (only in a graphical
//! session), `cmd /c start` on Windows.
//!
//! The opener is no server: it gets no stdio of ours (stdout is the host's
//! protocol), starts detached like the shared fleet (a session of its own,
//! default signals), and on Linux is a guest of the reaper (`reaper`), so a
//! browser it starts outlives the workbench. A thread named `browser` reaps
//! it. Whether a window really opened is not known: callers show the URL too.

use std::ffi::OsString;
use std::io;
use std::process::{Command, Stdio};

/// Starts the browser on `url`; an error when no opener could be started.
pub(crate) fn open_browser(url: &str) -> io::Result<()> {
    open_with(url, &|name| std::env::var_os(name))
}

/// `open_browser` with the environment `env`.
fn open_with(url: &str, env: &dyn Fn(&str) -> Option<OsString>) -> io::Result<()> {
    let mut last = io::Error::new(
        io::ErrorKind::NotFound,
        "no browser to open: BROWSER is not set and there is no graphical session",
    );
    for (program, args) in openers(url, env) {
        let mut cmd = command(&program, &args);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        match start(&mut cmd) {
            Ok(()) => return Ok(()),
            Err(e) => last = io::Error::new(e.kind(), format!("cannot run {program}: {e}")),
        }
    }
    Err(last)
}

/// The commands that may open `url`, in order, from the environment `env`.
fn openers(url: &str, env: &dyn Fn(&str) -> Option<OsString>) -> Vec<(String, Vec<String>)> {
    let browser = env("BROWSER")
        .and_then(|v| v.into_string().ok())
        .filter(|v| !v.trim().is_empty());
    if let Some(list) = browser {
        let entries: Vec<&str> = if cfg!(windows) {
            vec![list.as_str()]
        } else {
            list.split(':').collect()
        };
        return entries
            .iter()
            .filter_map(|entry| {
                let mut words = entry.split_whitespace().map(str::to_string);
                let program = words.next()?;
                let mut args: Vec<String> = words.collect();
                if args.iter().any(|a| a.contains("%s")) {
                    for arg in &mut args {
                        *arg = arg.replace("%s", url);
                    }
                } else {
                    args.push(url.to_string());
                }
                Some((program, args))
            })
            .collect();
    }
    if cfg!(windows) {
        return vec![("cmd".to_string(), vec![url.to_string()])];
    }
    if cfg!(target_os = "macos") {
        return vec![("open".to_string(), vec![url.to_string()])];
    }
    let graphical = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|name| env(name).is_some_and(|v| !v.is_empty()));
    match graphical {
        true => vec![("xdg-open".to_string(), vec![url.to_string()])],
        false => Vec::new(),
    }
}

#[cfg(unix)]
fn command(program: &str, args: &[String]) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(args);
    cmd
}

/// `cmd /c start "" "URL"`, written out whole: `start` takes its first
/// quoted argument as a window title, and only quotes keep `&` in a URL from
/// ending the command.
#[cfg(windows)]
fn command(program: &str, args: &[String]) -> Command {
    use std::os::windows::process::CommandExt;
    let mut cmd = Command::new(program);
    match (program, args) {
        ("cmd", [url]) => {
            cmd.raw_arg(format!("/c start \"\" \"{}\"", url.replace('"', "%22")));
        }
        _ => {
            cmd.args(args);
        }
    }
    cmd
}

/// Spawns the opener detached, and a thread that reaps it.
fn start(cmd: &mut Command) -> io::Result<()> {
    let mut child = {
        #[cfg(unix)]
        let _spawning = super::leaders::leaders();
        let child = super::sys::spawn_detached(cmd)?;
        #[cfg(target_os = "linux")]
        super::reaper::guest(child.id() as libc::pid_t);
        child
    };
    std::thread::Builder::new()
        .name("browser".into())
        .stack_size(64 * 1024)
        .spawn(move || {
            // The reaper (Linux) may have reaped it first: nothing to say.
            let _ = child.wait();
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<OsString> {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(*v))
        }
    }

    #[test]
    fn browser_variable_comes_first_with_the_url_in_place_or_appended() {
        let url = "https://as.example/authorize?a=1&b=2";
        let found = openers(url, &env(&[("BROWSER", "firefox --new-tab")]));
        assert_eq!(
            found,
            [(
                "firefox".to_string(),
                vec!["--new-tab".to_string(), url.to_string()]
            )]
        );
        if !cfg!(windows) {
            let found = openers(url, &env(&[("BROWSER", "w3m -o x=%s:lynx")]));
            assert_eq!(found[0].1, ["-o".to_string(), format!("x={url}")]);
            assert_eq!(found[1], ("lynx".to_string(), vec![url.to_string()]));
        }
    }

    #[cfg(unix)]
    #[test]
    fn the_browser_gets_the_url_and_a_missing_one_says_so() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("browser-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("browser.sh");
        let seen = dir.join("seen");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\nprintf '%s' \"$1\" > '{}.tmp' && mv '{0}.tmp' '{0}'\n",
                seen.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let browser = script.to_string_lossy().into_owned();
        let env = move |name: &str| (name == "BROWSER").then(|| OsString::from(&browser));
        let url = "http://127.0.0.1:1/x?a=1&b=2";
        open_with(url, &env).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !seen.exists() {
            assert!(
                std::time::Instant::now() < deadline,
                "the browser never ran"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(std::fs::read_to_string(&seen).unwrap(), url);
        let missing =
            |name: &str| (name == "BROWSER").then(|| OsString::from("/nonexistent/browser"));
        let error = open_with(url, &missing).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("cannot run /nonexistent/browser"),
            "{error}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(all(unix, not(target_os = "macos")))]
    #[test]
    fn xdg_open_only_in_a_graphical_session() {
        assert!(openers("https://x/", &env(&[])).is_empty());
        let found = openers("https://x/", &env(&[("WAYLAND_DISPLAY", "wayland-0")]));
        assert_eq!(found[0].0, "xdg-open");
    }
}
