//! The sign-in a serving workbench runs by itself (docs/reference.md §7.5):
//! when a host's request finds a remote server without a usable token, the
//! browser opens on the authorization page and a thread named `sign-in
//! T/S` waits for the redirect, at most `TIMEOUT`, then stores the tokens;
//! the request is answered at once. Only a process serving hosts does this
//! (its `SignIns` made by `SignIns::serving`: the `serve` and `fleet`
//! commands); `check`, `index` and the rest never open a browser.

use super::http::Http;
use super::signin::Begun;
use super::store::{Store, Tokens};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a background sign-in waits for the person.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// What the person is told to do, with the authorization page's URL.
pub(crate) struct Started {
    /// The browser was started (whether a window opened is not known).
    pub opened: bool,
    pub url: String,
}

/// Opens the browser on `begun`'s page (through `open`) and waits for its
/// redirect on a thread named `name`; `done` gets the stored tokens or why
/// there are none.
pub(crate) fn start(
    begun: Begun,
    http: Arc<dyn Http>,
    store: Store,
    name: String,
    open: &dyn Fn(&str) -> std::io::Result<()>,
    done: impl FnOnce(Result<(PathBuf, Tokens), String>) + Send + 'static,
) -> Result<Started, String> {
    let url = begun.url.as_sent();
    let opened = match open(&url) {
        Ok(()) => true,
        Err(e) => {
            log::warn!("{name}: cannot open a browser ({e})");
            false
        }
    };
    let until = Instant::now() + TIMEOUT;
    std::thread::Builder::new()
        .name(name.clone())
        .spawn(move || {
            let stop = AtomicBool::new(false);
            let outcome = begun
                .wait(until, &stop)
                .and_then(|code| begun.finish(&*http, &store, &code));
            match &outcome {
                Ok(_) => log::info!("{name}: signed in at {}", begun.issuer()),
                Err(e) => log::warn!("{name}: no sign-in: {e}"),
            }
            done(outcome);
        })
        .map_err(|e| format!("cannot start the sign-in's thread ({e})"))?;
    Ok(Started { opened, url })
}
