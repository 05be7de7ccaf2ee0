//! `mcp-workbench login TOOLBOX/SERVER [--no-browser]` and `logout
//! TOOLBOX/SERVER` (docs/reference.md §2, §7.5): signing in to a remote
//! server from a terminal, and forgetting its tokens.
//!
//! `login` prints the sign-in page, opens the browser on it (not with
//! `--no-browser`) and waits for whichever comes first: the browser's
//! redirect to the loopback listener, or the redirect's address (or the
//! bare code) pasted on stdin, for where the browser cannot reach this
//! machine (SSH, a container). Then it says where the tokens are. Exit 0
//! when signed in (or when the server needs no sign-in), 1 when the sign-in
//! failed, 2 when the target is not a remote server of the config.
//! Prints on stdout; starts no server and serves no host.

use crate::auth::login::{Login, Terminal};
use crate::auth::{Client, Redirect};
use crate::config::expand::Vars;
use crate::config::{suggest, Config, ServerConfig};
use crate::fleet::launch;
use crate::net::Url;
use std::io::{self, BufRead, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Opens the browser on a page.
pub(crate) type Open<'a> = &'a dyn Fn(&str) -> io::Result<()>;

/// How long `login` waits for the person.
const WAIT: Duration = Duration::from_secs(10 * 60);

/// What `login` waits for.
pub(crate) enum Event {
    /// A line typed or pasted on stdin.
    Line(String),
    /// The loopback listener's end: the code, or why there is none.
    Browser(Result<String, String>),
}

/// `login` as the command runs it.
pub(super) fn login(
    config: &Config,
    target: &str,
    no_browser: bool,
    stdin: io::Stdin,
    out: &mut impl Write,
) -> ExitCode {
    let terminal = match Terminal::of(&crate::auth::SignIns::default()) {
        Ok(terminal) => terminal,
        Err(e) => {
            let _ = writeln!(out, "error: {e}");
            return ExitCode::from(1);
        }
    };
    let (tx, rx) = mpsc::channel();
    read_lines(stdin, tx.clone());
    let open = |url: &str| crate::sys::open_browser(url);
    let opener: Option<Open> = (!no_browser).then_some(&open);
    ExitCode::from(run_login(
        config,
        target,
        &terminal,
        None,
        opener,
        (tx, rx),
        out,
    ))
}

/// `logout` as the command runs it.
pub(super) fn logout(config: &Config, target: &str, out: &mut impl Write) -> ExitCode {
    let code = match Terminal::of(&crate::auth::SignIns::default()) {
        Ok(terminal) => run_logout(config, target, &terminal, None, out),
        Err(e) => {
            let _ = writeln!(out, "error: {e}");
            1
        }
    };
    ExitCode::from(code)
}

/// Sends stdin's lines as `Event::Line`, on a thread of their own (it ends
/// with stdin, or with the process).
fn read_lines(stdin: io::Stdin, tx: Sender<Event>) {
    let spawned = std::thread::Builder::new()
        .name("login input".into())
        .spawn(move || {
            for line in stdin.lock().lines() {
                let Ok(line) = line else { return };
                if tx.send(Event::Line(line)).is_err() {
                    return;
                }
            }
        });
    if let Err(e) = spawned {
        log::warn!("cannot read pasted addresses ({e})");
    }
}

/// Signs in to `target` of `config` through `terminal`; `env` expands the
/// config's references (`None`: the process's environment), `open` opens
/// the browser (`None`: `--no-browser`), `events` bring pasted lines. The
/// exit code.
pub(crate) fn run_login(
    config: &Config,
    target: &str,
    terminal: &Terminal,
    env: Option<&Vars>,
    open: Option<Open>,
    events: (Sender<Event>, Receiver<Event>),
    out: &mut dyn Write,
) -> u8 {
    let (url, shown, client) = match reach(config, target, env) {
        Ok(found) => found,
        Err(e) => return fail(out, 2, &e),
    };
    let login = match terminal.begin(&url, &client) {
        Ok(Some(login)) => Arc::new(login),
        Ok(None) => {
            let _ = writeln!(
                out,
                "{target} answers without asking for a sign-in: nothing to do"
            );
            return 0;
        }
        Err(e) => return fail(out, 1, &format!("cannot sign in to {target}: {e}")),
    };
    let page = login.url();
    let _ = writeln!(
        out,
        "Sign in to {target} ({shown}) on this page:\n\n  {page}\n"
    );
    match open.map(|open| open(&page)) {
        Some(Ok(())) => {
            let _ = writeln!(out, "A browser window was opened on it.");
        }
        Some(Err(e)) => {
            let _ = writeln!(
                out,
                "No browser could be opened ({e}): open the page yourself."
            );
        }
        None => {}
    }
    let _ = writeln!(
        out,
        "Waiting for the browser to come back to 127.0.0.1:{}. Where the browser cannot reach this \
         machine (SSH, a container), paste the address it ends on here and press Enter.",
        login.port()
    );
    let _ = out.flush();
    match wait(&login, events, out) {
        Ok(code) => match login.finish(&code) {
            Ok(signed) => {
                let lasts = match (signed.expires_in, signed.refreshable) {
                    (Some(s), true) => format!(
                        "; the access token lasts {}, and is refreshed as needed",
                        span(s)
                    ),
                    (Some(s), false) => format!(
                        "; the access token lasts {}, and cannot be refreshed",
                        span(s)
                    ),
                    (None, _) => String::new(),
                };
                let scope = signed
                    .scope
                    .map(|s| format!("; scope: {s}"))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "Signed in to {target} ({}{lasts}{scope}); tokens stored in {}",
                    signed.issuer,
                    terminal.folder().display()
                );
                0
            }
            Err(e) => fail(out, 1, &format!("the sign-in to {target} failed: {e}")),
        },
        Err(e) => fail(out, 1, &format!("the sign-in to {target} failed: {e}")),
    }
}

/// Waits for the code: from the loopback listener, on a thread of its own,
/// or pasted.
fn wait(
    login: &Arc<Login>,
    (tx, rx): (Sender<Event>, Receiver<Event>),
    out: &mut dyn Write,
) -> Result<String, String> {
    let until = Instant::now() + WAIT;
    let stop = Arc::new(AtomicBool::new(false));
    let listening = {
        let (login, stop) = (Arc::clone(login), Arc::clone(&stop));
        std::thread::Builder::new()
            .name("login redirect".into())
            .spawn(move || {
                let _ = tx.send(Event::Browser(login.wait(until, &stop)));
            })
    };
    if let Err(e) = listening {
        return Err(format!("cannot wait for the browser ({e})"));
    }
    let code = loop {
        let left = until.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(Event::Browser(done)) => break done,
            Ok(Event::Line(line)) => match login.pasted(&line) {
                Redirect::Code(code) => break Ok(code),
                Redirect::Refused(why) => break Err(why),
                Redirect::Stray(_) if line.trim().is_empty() => {}
                Redirect::Stray(why) => {
                    let _ = writeln!(
                        out,
                        "That does not complete the sign-in: {why}. Paste the whole address again, or finish in the browser."
                    );
                    let _ = out.flush();
                }
            },
            Err(RecvTimeoutError::Timeout) => {
                break Err("nothing came back within 10 minutes".into())
            }
            Err(RecvTimeoutError::Disconnected) => break Err("the wait ended".into()),
        }
    };
    stop.store(true, Ordering::SeqCst);
    code
}

/// Forgets the tokens of `target` of `config`. The exit code.
pub(crate) fn run_logout(
    config: &Config,
    target: &str,
    terminal: &Terminal,
    env: Option<&Vars>,
    out: &mut dyn Write,
) -> u8 {
    let (url, _, client) = match reach(config, target, env) {
        Ok(found) => found,
        Err(e) => return fail(out, 2, &e),
    };
    match terminal.logout(&url, &client) {
        Ok(issuers) if issuers.is_empty() => {
            let _ = writeln!(out, "No sign-in is stored for {target}: nothing to delete");
            0
        }
        Ok(issuers) => {
            for issuer in issuers {
                let _ = writeln!(
                    out,
                    "Signed out of {target}: deleted its tokens from {issuer} (in {})",
                    terminal.folder().display()
                );
            }
            0
        }
        Err(e) => fail(out, 1, &format!("cannot sign out of {target}: {e}")),
    }
}

fn fail(out: &mut dyn Write, code: u8, message: &str) -> u8 {
    let _ = writeln!(out, "error: {message}");
    code
}

/// The remote server `TOOLBOX/SERVER` names: its URL (expanded, and as
/// written) and its OAuth client, expanded as a start would
/// (`launch::resolve`).
fn reach(
    config: &Config,
    target: &str,
    env: Option<&Vars>,
) -> Result<(Url, String, Client), String> {
    let (toolbox, server) = target.split_once('/').unwrap_or((target, ""));
    let entry = find(config, toolbox, server)?;
    let not_remote = || {
        format!(
            "server '{server}' (toolbox '{toolbox}') is not a remote server (it has a command, not a url): there is nothing to sign in to"
        )
    };
    if entry.remote.is_none() {
        return Err(not_remote());
    }
    let spec = launch::resolve(toolbox, entry, env).map_err(|errors| errors.join("; "))?;
    let remote = spec.remote.ok_or_else(not_remote)?;
    let url = remote.parsed_url().map_err(|_| {
        format!(
            "{}.url ('{}') is not a usable http:// or https:// URL",
            entry.json_path, remote.url_display
        )
    })?;
    Ok((url, remote.url_display, remote.oauth))
}

/// Server `server` of toolbox `toolbox`.
fn find<'a>(config: &'a Config, toolbox: &str, server: &str) -> Result<&'a ServerConfig, String> {
    let names: Vec<&str> = config.toolboxes.iter().map(|t| t.name.as_str()).collect();
    let Some(found) = config.toolboxes.iter().find(|t| t.name == toolbox) else {
        return Err(unknown("toolbox", toolbox, &names, "the config"));
    };
    let servers: Vec<&str> = found.servers.iter().map(|s| s.name.as_str()).collect();
    found
        .servers
        .iter()
        .find(|s| s.name == server)
        .ok_or_else(|| unknown("server", server, &servers, &format!("toolbox '{toolbox}'")))
}

fn unknown(what: &str, name: &str, known: &[&str], within: &str) -> String {
    let hint = match suggest::closest(name, known) {
        Some(close) => format!("; did you mean '{close}'?"),
        None if known.is_empty() => String::new(),
        None => format!(" ({}s: {})", what, known.join(", ")),
    };
    format!("there is no {what} '{name}' in {within}{hint}")
}

/// A lifetime in words: "45 seconds", "60 minutes", "12 hours".
/// A token's lifetime in words, to the nearest minute or hour: the seconds
/// left are a hair under what the server gave, which is a round number.
fn span(seconds: u64) -> String {
    match seconds {
        s if s < 120 => format!("{s} seconds"),
        s if s < 2 * 3600 => format!("{} minutes", (s + 30) / 60),
        s => format!("{} hours", (s + 1800) / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::http::fake::{json, peers, Fake};
    use crate::auth::store::tests::scratch;
    use serde_json::json;
    use std::path::Path;
    use std::sync::Mutex;

    /// A config with a stdio server `dev/files` and a remote one `work/remote`.
    fn config(url: &str) -> Config {
        let text = json!({"toolboxes": {
            "dev": {"description": "d", "mcpServers": {"files": {"command": "x"}}},
            "work": {"description": "w", "mcpServers": {"remote": {"url": url}}}
        }})
        .to_string();
        crate::config::parse(text.as_bytes(), Path::new("c.json"), Path::new("/c"))
            .unwrap()
            .config
    }

    /// No variable is set.
    fn no_env() -> Option<&'static Vars> {
        static EMPTY: Vars = Vars::new();
        Some(&EMPTY)
    }

    /// A fake resource server that asks for a sign-in, behind `peers`.
    fn fake() -> Arc<Fake> {
        let (peers, _) = peers(|_| {
            json(
                200,
                json!({"access_token": "a", "refresh_token": "r", "expires_in": 3600, "scope": "tools"}),
            )
        });
        Fake::new(move |seen| match seen.url.as_str() {
            "https://mcp.example.com/mcp" => Ok(crate::auth::http::Response {
                status: 401,
                headers: vec![("WWW-Authenticate".into(), "Bearer scope=\"tools\"".into())],
                body: Vec::new(),
            }),
            _ => crate::auth::http::Http::fetch(
                &*peers,
                &seen.method,
                &Url::parse(&seen.url).unwrap(),
                &[],
                None,
                Duration::ZERO,
            ),
        })
    }

    fn text(out: Vec<u8>) -> String {
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_browser_completes_the_sign_in() {
        let store = scratch("login-browser");
        let terminal = Terminal::with(fake(), store.clone());
        let open = |page: &str| {
            let page = page.to_string();
            std::thread::spawn(move || crate::auth::tests::browse(&page));
            Ok(())
        };
        let mut out = Vec::new();
        let code = run_login(
            &config("https://mcp.example.com/mcp"),
            "work/remote",
            &terminal,
            no_env(),
            Some(&open),
            mpsc::channel(),
            &mut out,
        );
        let out = text(out);
        assert_eq!(code, 0, "{out}");
        assert!(out.contains("Sign in to work/remote (https://mcp.example.com/mcp) on this page:\n\n  https://as.example/authorize?"), "{out}");
        assert!(out.contains("A browser window was opened on it."), "{out}");
        let folder = store.tokens_dir();
        assert!(out.ends_with(&format!(
            "Signed in to work/remote (https://as.example; the access token lasts 60 minutes, and is refreshed as needed; scope: tools); tokens stored in {}\n",
            folder.display()
        )), "{out}");
        let server = Url::parse("https://mcp.example.com/mcp").unwrap();
        assert_eq!(store.find(&server, None).len(), 1);

        // logout deletes it, and then there is nothing to delete.
        let mut out = Vec::new();
        assert_eq!(
            run_logout(
                &config("https://mcp.example.com/mcp"),
                "work/remote",
                &terminal,
                no_env(),
                &mut out
            ),
            0
        );
        assert_eq!(
            text(out),
            format!(
                "Signed out of work/remote: deleted its tokens from https://as.example (in {})\n",
                folder.display()
            )
        );
        assert!(store.find(&server, None).is_empty());
        let mut out = Vec::new();
        assert_eq!(
            run_logout(
                &config("https://mcp.example.com/mcp"),
                "work/remote",
                &terminal,
                no_env(),
                &mut out
            ),
            0
        );
        assert_eq!(
            text(out),
            "No sign-in is stored for work/remote: nothing to delete\n"
        );
    }

    #[test]
    fn a_pasted_address_completes_the_sign_in_without_a_browser() {
        let store = scratch("login-paste");
        let terminal = Terminal::with(fake(), store.clone());
        // The test reads the page the way a person would, from the output.
        let out = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        let paster = {
            let (out, tx) = (out.clone(), tx.clone());
            std::thread::spawn(move || {
                let deadline = Instant::now() + Duration::from_secs(20);
                let page = loop {
                    let text = String::from_utf8_lossy(&out.lock().unwrap()).into_owned();
                    if let Some(line) = text.lines().find(|l| l.starts_with("  https://")) {
                        break Url::parse(line.trim()).unwrap();
                    }
                    assert!(Instant::now() < deadline, "no sign-in page printed");
                    std::thread::sleep(Duration::from_millis(10));
                };
                let pairs = crate::net::url::query_pairs(page.query().unwrap());
                let get = |k: &str| pairs.iter().find(|(n, _)| n == k).unwrap().1.clone();
                tx.send(Event::Line("not an address".into())).unwrap();
                let redirect = format!(
                    "{}?code=pasted&state={}&iss=https%3A%2F%2Fas.example",
                    get("redirect_uri"),
                    crate::net::url::encode(&get("state"))
                );
                tx.send(Event::Line(redirect)).unwrap();
            })
        };
        struct Shared(Arc<Mutex<Vec<u8>>>);
        impl Write for Shared {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let code = run_login(
            &config("https://mcp.example.com/mcp"),
            "work/remote",
            &terminal,
            no_env(),
            None,
            (tx, rx),
            &mut Shared(out.clone()),
        );
        paster.join().unwrap();
        let out = String::from_utf8_lossy(&out.lock().unwrap()).into_owned();
        assert_eq!(code, 0, "{out}");
        assert!(!out.contains("browser window was opened"), "{out}");
        assert!(out.contains("That does not complete the sign-in: that is neither the redirect's URL nor a code."), "{out}");
        assert!(out.contains("Signed in to work/remote"), "{out}");
    }

    /// A url whose path and query hold expanded secrets: no message of
    /// `login` shows them, whether the server cannot be reached or has no
    /// metadata to say where to sign in.
    #[test]
    fn a_urls_secrets_are_never_shown() {
        let env: Vars = [
            ("PATH_KEY".to_string(), "pk9Secret4Path".to_string()),
            ("KEY".to_string(), "k7Secret2Query".to_string()),
        ]
        .into_iter()
        .collect();
        let written =
            |port: u16| format!("http://127.0.0.1:{port}/mcp/${{PATH_KEY}}?api_key=${{KEY}}");
        let login = |url: &str| {
            let terminal = Terminal::with(
                crate::auth::SignIns::default().http(),
                scratch("login-secret-url"),
            );
            let mut out = Vec::new();
            let code = run_login(
                &config(url),
                "work/remote",
                &terminal,
                Some(&env),
                None,
                mpsc::channel(),
                &mut out,
            );
            (code, text(out))
        };
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = closed.local_addr().unwrap().port();
        drop(closed);
        let (code, out) = login(&written(port));
        assert_eq!(code, 1, "{out}");
        assert!(out.contains("The request to"), "{out}");
        assert!(out.contains("/mcp/${PATH_KEY}"), "{out}");
        assert!(!out.contains("Secret"), "{out}");

        let server = crate::net::test_server::Server::start(|_, reply| {
            reply.send(401, &[("WWW-Authenticate", "Bearer")], b"")
        });
        let (code, out) = login(&written(Url::parse(&server.url("/")).unwrap().port()));
        assert_eq!(code, 1, "{out}");
        assert!(
            out.contains("/.well-known/oauth-protected-resource/mcp/${PATH_KEY}"),
            "{out}"
        );
        assert!(!out.contains("Secret"), "{out}");
    }

    /// What a token lasts is said to the nearest minute or hour: a token of
    /// 3,600 s read a second later still lasts 60 minutes (it said 59 on a
    /// slow machine).
    #[test]
    fn a_lifetime_is_said_to_the_nearest_unit() {
        assert_eq!(span(59), "59 seconds");
        assert_eq!(span(3599), "60 minutes");
        assert_eq!(span(3600), "60 minutes");
        assert_eq!(span(86_399), "24 hours");
    }

    #[test]
    fn what_cannot_be_signed_in_to() {
        let terminal = Terminal::with(fake(), scratch("login-refused"));
        let run = |target: &str, url: &str| {
            let mut out = Vec::new();
            let code = run_login(
                &config(url),
                target,
                &terminal,
                no_env(),
                None,
                mpsc::channel(),
                &mut out,
            );
            (code, text(out))
        };
        assert_eq!(
            run("dev/files", "https://mcp.example.com/mcp"),
            (2, "error: server 'files' (toolbox 'dev') is not a remote server (it has a command, not a url): there is nothing to sign in to\n".to_string())
        );
        assert_eq!(
            run("wrk/remote", "https://mcp.example.com/mcp"),
            (
                2,
                "error: there is no toolbox 'wrk' in the config; did you mean 'work'?\n"
                    .to_string()
            )
        );
        assert_eq!(
            run("work/nothing", "https://mcp.example.com/mcp"),
            (
                2,
                "error: there is no server 'nothing' in toolbox 'work' (servers: remote)\n"
                    .to_string()
            )
        );
        let (code, out) = run("work/remote", "https://${HOST}/mcp");
        assert_eq!(code, 2);
        assert!(
            out.contains(
                "environment variable 'HOST' is not set (toolboxes.work.mcpServers.remote.url)"
            ),
            "{out}"
        );
        let (code, out) = run("work/remote", "http://mcp.example.com/mcp");
        assert_eq!(code, 1);
        assert!(out.contains("plain http to another machine"), "{out}");
    }
}
