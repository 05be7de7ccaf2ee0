//! A remote server's credentials as its transport uses them (`Access`): the
//! `Authorization` value for the next request, refreshed ahead of expiry,
//! and what to do after a 401: refresh once, or say that a person must sign
//! in (`SignInNeeded`), starting that sign-in in the background when this
//! process serves hosts (`background`).
//!
//! One `Shared` per server definition (its URL and configured client) for
//! the whole process, from the registry its `SignIns` owns (`Registry`):
//! every copy of the server in every toolbox and session uses the same one,
//! so a shared fleet refreshes each token once for all its sessions. Across processes the token file's lock
//! (`lock`) and a re-read under it do the same: whoever comes second finds
//! the new token and sends no refresh of its own.

use super::background;
use super::challenge::{self, Bearer};
use super::endpoint::{Failure, Grant};
use super::http::Http;
use super::metadata;
use super::signin;
use super::store::{self, Store, Tokens};
use super::Client;
use crate::net::Url;
use crate::pins::sha256;
use crate::sys::Stamp;
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// A 401 to an access token a refresh gave less than this long ago (and
/// not expired) is not answered with another refresh: the server refuses
/// the tokens it gives, and refreshing again would only loop.
const FRESH: u64 = 5;

/// A person must sign in (or the sign-in cannot be refreshed now): the whole
/// text of the server's error, naming toolbox and server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SignInNeeded {
    pub message: String,
}

/// A remote server's credentials, as one copy of it uses them.
#[derive(Clone)]
pub(crate) struct Access {
    toolbox: String,
    server: String,
    shared: Arc<Shared>,
}

type Open = dyn Fn(&str) -> io::Result<()> + Send + Sync;

/// What every copy of one server definition shares.
struct Shared {
    server: Url,
    client: Client,
    http: Arc<dyn Http>,
    /// `Err`: there is no state folder to keep tokens in (why).
    store: Result<Store, String>,
    known: Mutex<Known>,
    /// The sign-in running in the background, if any.
    pending: Mutex<Option<Pending>>,
    /// Opens the browser (`sys::open_browser`).
    open: Box<Open>,
    /// Whether sign-ins start in the background (the process serves hosts).
    serving: bool,
    /// The id of the next background sign-in.
    next_sign_in: AtomicU64,
}

/// The token file in use and what it held when last read.
#[derive(Default)]
struct Known {
    path: Option<PathBuf>,
    stamp: Option<Stamp>,
    tokens: Option<Tokens>,
}

struct Pending {
    id: u64,
    message: String,
    until: Instant,
}

/// What renewing gave.
enum Renewal {
    Token(String),
    /// A sign-in is needed (and why, when there is more to say).
    SignIn(Option<String>),
    /// No answer now; the tokens are kept.
    Failed(String),
}

/// Every server definition's `Shared`, by its key: what a `SignIns` keeps.
#[derive(Default)]
pub(super) struct Registry(Mutex<HashMap<String, Arc<Shared>>>);

/// What a `Shared` is made with, besides its server and client.
pub(super) struct Means {
    pub http: Arc<dyn Http>,
    /// `Err`: there is no state folder to keep tokens in (why).
    pub store: Result<Store, String>,
    pub open: Box<Open>,
    pub serving: bool,
}

impl Access {
    /// The credentials of the server at `resource` with client `client`, as
    /// server `server` of toolbox `toolbox` uses them: shared with every
    /// other copy of that definition in `registry`, made with `means()`
    /// by the first.
    pub(super) fn new(
        registry: &Registry,
        means: impl FnOnce() -> Means,
        (resource, client): (&Url, &Client),
        toolbox: &str,
        server: &str,
    ) -> Access {
        let key = sha256::hex(
            format!(
                "{}\n{:?}\n{:?}\n{:?}\n{:?}",
                resource.as_sent(),
                client.client_id,
                client.client_secret,
                client.scopes,
                client.callback_port
            )
            .as_bytes(),
        );
        let shared = crate::lock(&registry.0)
            .entry(key)
            .or_insert_with(|| Arc::new(Shared::new(resource.clone(), client.clone(), means())))
            .clone();
        Access {
            toolbox: toolbox.to_string(),
            server: server.to_string(),
            shared,
        }
    }

    /// The `Authorization` value to send now, refreshed first when the
    /// token is about to expire; `None` when there is none (send without).
    pub(crate) fn authorization(&self) -> Option<String> {
        let (_, tokens) = self.shared.current()?;
        let now = store::now();
        if !tokens.due(now) {
            return Some(tokens.bearer());
        }
        match self
            .shared
            .renew(Some(&tokens.bearer()), false, &self.label())
        {
            Renewal::Token(value) => Some(value),
            Renewal::SignIn(_) => None,
            Renewal::Failed(why) => {
                log::warn!("[{}] cannot refresh the sign-in: {why}", self.label());
                (!tokens.expired(now)).then(|| tokens.bearer())
            }
        }
    }

    /// After a 401 to a request that carried `sent`: the value to retry
    /// with (refreshed at most once, across the process and its siblings),
    /// or why it cannot be retried.
    pub(crate) fn unauthorized(
        &self,
        sent: Option<&str>,
        www_authenticate: Option<&str>,
    ) -> Result<String, SignInNeeded> {
        if let Err(why) = metadata::secure(&self.shared.server) {
            return Err(self.cannot(&why));
        }
        let challenge = www_authenticate.and_then(|h| challenge::bearer(h.as_bytes()));
        let step_up = challenge
            .as_ref()
            .is_some_and(|c| c.error.as_deref() == Some("insufficient_scope"));
        let why = if step_up {
            Some("the server asks for more access than was granted".to_string())
        } else {
            match self.shared.renew(sent, true, &self.label()) {
                Renewal::Token(value) => return Ok(value),
                Renewal::Failed(why) => {
                    return Err(SignInNeeded {
                        message: format!(
                            "Cannot refresh the sign-in of server '{}' (toolbox '{}'): {why}; \
                             the sign-in is kept, and the next request tries again",
                            self.server, self.toolbox
                        ),
                    })
                }
                Renewal::SignIn(why) => why,
            }
        };
        Err(self.sign_in_needed(challenge.as_ref(), why))
    }

    fn label(&self) -> String {
        format!("{}/{}", self.toolbox, self.server)
    }

    fn cannot(&self, why: &str) -> SignInNeeded {
        SignInNeeded {
            message: format!(
                "Sign-in needed for server '{}' (toolbox '{}'), but it cannot be done: {why}",
                self.server, self.toolbox
            ),
        }
    }

    /// The sign-in-needed error; in a process serving hosts, with the
    /// sign-in started in the background (once until it ends).
    fn sign_in_needed(&self, challenge: Option<&Bearer>, why: Option<String>) -> SignInNeeded {
        let (toolbox, server) = (&self.toolbox, &self.server);
        // What came before, said after the contract's words, the page last.
        let (aside, sentence) = match why {
            Some(w) => (format!(" ({w})"), format!(" {}.", capitalized(&w))),
            None => (String::new(), String::new()),
        };
        if !self.shared.serving {
            return SignInNeeded {
                message: format!(
                    "Sign-in needed for server '{server}' (toolbox '{toolbox}'): \
                     run mcp-workbench login {toolbox}/{server} in a terminal{aside}"
                ),
            };
        }
        let shared = &self.shared;
        let mut pending = crate::lock(&shared.pending);
        if let Some(running) = pending.as_ref().filter(|p| p.until > Instant::now()) {
            return SignInNeeded {
                message: running.message.clone(),
            };
        }
        let store = match &shared.store {
            Ok(store) => store.clone(),
            Err(e) => return self.cannot(&format!("there is no folder to keep tokens in ({e})")),
        };
        let begun = match signin::begin(&*shared.http, &store, &shared.server, &shared.client, challenge) {
            Ok(begun) => begun,
            Err(e) => {
                return SignInNeeded {
                    message: format!(
                        "Sign-in needed for server '{server}' (toolbox '{toolbox}'), but it cannot start: {e} \
                         (once that is fixed, run: mcp-workbench login {toolbox}/{server})"
                    ),
                }
            }
        };
        let id = shared.next_sign_in.fetch_add(1, Ordering::Relaxed);
        let finished = Arc::clone(shared);
        let done = move |outcome: Result<(PathBuf, Tokens), String>| {
            if let Ok((path, _)) = outcome {
                finished.point_to(&path);
            }
            let mut pending = crate::lock(&finished.pending);
            if pending.as_ref().is_some_and(|p| p.id == id) {
                *pending = None;
            }
        };
        let started = background::start(
            begun,
            Arc::clone(&shared.http),
            store,
            format!("sign-in {toolbox}/{server}"),
            &*shared.open,
            done,
        );
        // The page names the server's url as its resource: where that url
        // holds a secret, the model is not shown it; `login` shows it to the
        // person in a terminal.
        let page = |url: &str| {
            match shared.server.hide(url) == url {
            true => format!(" The sign-in page: {url}"),
            false => format!(
                " The sign-in page is not shown here, as its address holds the server's url, which holds \
                 a secret: mcp-workbench login {toolbox}/{server} shows it in a terminal."
            ),
        }
        };
        let message = match started {
            Ok(started) if started.opened => format!(
                "Sign-in needed for server '{server}' (toolbox '{toolbox}'): a browser window was opened; \
                 finish signing in there, then open the toolbox again (or run: mcp-workbench login {toolbox}/{server}).\
                 {sentence}{}",
                page(&started.url)
            ),
            Ok(started) => format!(
                "Sign-in needed for server '{server}' (toolbox '{toolbox}'): open the page below in a browser on \
                 this machine and sign in, then open the toolbox again (or run: mcp-workbench login {toolbox}/{server}).\
                 {sentence}{}",
                page(&started.url)
            ),
            Err(e) => return self.cannot(&e),
        };
        *pending = Some(Pending {
            id,
            message: message.clone(),
            until: Instant::now() + background::TIMEOUT,
        });
        SignInNeeded { message }
    }
}

/// `text` with its first letter upper-case.
fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

impl Shared {
    fn new(server: Url, client: Client, means: Means) -> Shared {
        Shared {
            server,
            client,
            http: means.http,
            store: means.store,
            known: Mutex::new(Known::default()),
            pending: Mutex::new(None),
            open: means.open,
            serving: means.serving,
            next_sign_in: AtomicU64::new(1),
        }
    }

    /// The tokens in use: the known file, read again when it changed, else
    /// the best file the store has for this server.
    fn current(&self) -> Option<(PathBuf, Tokens)> {
        let store = self.store.as_ref().ok()?;
        let mut known = crate::lock(&self.known);
        if let Some(path) = known.path.clone() {
            // The stamp before the read: a change after it shows next time.
            let stamp = Stamp::of(&path);
            if stamp.is_some() && stamp == known.stamp {
                if let Some(tokens) = &known.tokens {
                    return Some((path, tokens.clone()));
                }
            }
            if let Some(tokens) = stamp.and_then(|_| store.read(&path)) {
                *known = Known {
                    path: Some(path.clone()),
                    stamp,
                    tokens: Some(tokens.clone()),
                };
                return Some((path, tokens));
            }
            *known = Known::default();
        }
        let (path, _) = store
            .find(&self.server, self.client.client_id.as_deref())
            .into_iter()
            .next()?;
        let stamp = Stamp::of(&path);
        let tokens = store.read(&path)?;
        *known = Known {
            path: Some(path.clone()),
            stamp,
            tokens: Some(tokens.clone()),
        };
        Some((path, tokens))
    }

    /// Notes what token file `path` holds now (its lock is held).
    fn remember(&self, path: &Path, tokens: &Tokens) {
        *crate::lock(&self.known) = Known {
            path: Some(path.to_path_buf()),
            stamp: Stamp::of(path),
            tokens: Some(tokens.clone()),
        };
    }

    /// Uses token file `path` from now on (read at the next use).
    fn point_to(&self, path: &Path) {
        *crate::lock(&self.known) = Known {
            path: Some(path.to_path_buf()),
            ..Known::default()
        };
    }

    /// A token to use instead of `sent`: the one another thread or process
    /// got meanwhile, else a refresh, under the token file's locks.
    /// `after_401`: the server refused `sent`.
    fn renew(&self, sent: Option<&str>, after_401: bool, label: &str) -> Renewal {
        let Ok(store) = &self.store else {
            return Renewal::SignIn(None);
        };
        let Some((path, _)) = self.current() else {
            return Renewal::SignIn(None);
        };
        let _held = match store.lock(&path) {
            Ok(held) => held,
            Err(e) => return Renewal::Failed(e),
        };
        let Some(tokens) = store.read(&path) else {
            crate::lock(&self.known).tokens = None;
            return Renewal::SignIn(None);
        };
        self.remember(&path, &tokens);
        let now = store::now();
        let current = tokens.bearer();
        if sent != Some(current.as_str()) && !tokens.due(now) {
            // Refreshed (or signed in) elsewhere since `sent` was read.
            return Renewal::Token(current);
        }
        let fresh = tokens.refreshed && now.saturating_sub(tokens.obtained_at) < FRESH;
        if after_401 && fresh && !tokens.expired(now) {
            return Renewal::SignIn(Some("the server refused a token issued moments ago".into()));
        }
        let Some(refresh_token) = tokens.refresh_token.clone() else {
            return match after_401 || tokens.expired(now) {
                true => {
                    Renewal::SignIn(Some("the sign-in expired, and cannot be refreshed".into()))
                }
                false => Renewal::Token(current),
            };
        };
        let grant = match Grant::of(&tokens, self.client.client_secret.as_deref()) {
            Ok(grant) => grant,
            Err(e) => return Renewal::Failed(e),
        };
        log::info!("[{label}] refreshing the sign-in at {}", tokens.issuer);
        match grant.refresh(&*self.http, &refresh_token) {
            Ok(response) => {
                let renewed = Tokens {
                    refreshed: true,
                    ..grant.tokens(
                        response,
                        store::now(),
                        Some(refresh_token),
                        tokens.scope.clone(),
                    )
                };
                // Stored before it is used: a rotated refresh token must
                // survive this process.
                if let Err(e) = store.write(&path, &renewed) {
                    log::error!("[{label}] the refreshed sign-in is not stored: {e}");
                }
                self.remember(&path, &renewed);
                Renewal::Token(renewed.bearer())
            }
            Err(Failure::Refused(why)) => {
                if let Err(e) = store.delete(&path) {
                    log::warn!("[{label}] {e}");
                }
                *crate::lock(&self.known) = Known::default();
                Renewal::SignIn(Some(format!("the sign-in could not be refreshed: {why}")))
            }
            Err(Failure::Failed(why)) => Renewal::Failed(why),
        }
    }
}

#[cfg(test)]
impl Access {
    /// Another copy sharing these credentials, as the registry gives.
    pub(super) fn copy(&self) -> Access {
        self.clone()
    }
}
