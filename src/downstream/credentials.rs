//! A remote server's credentials, as its transport asks for them: the
//! `Authorization` value to send, and what to do after a 401. This is the
//! stand-in until sign-in (`auth::Access`, with the same two calls) is
//! wired in: nothing is stored, so requests go without, and a 401 is a
//! clear failure saying the server needs a sign-in.

use super::Remote;

/// Why a request cannot go on without a person signing in: the whole text
/// the caller is told.
#[derive(Debug)]
pub(super) struct SignInNeeded {
    pub message: String,
}

pub(super) struct Credentials {
    /// The URL as written, for messages.
    shown: String,
}

impl Credentials {
    pub(super) fn new(remote: &Remote) -> Credentials {
        Credentials {
            shown: remote.url_display.clone(),
        }
    }

    /// The `Authorization` value to send now; `None`: send without.
    pub(super) fn authorization(&self) -> Option<String> {
        None
    }

    /// After a 401 to a request that carried `sent`: the value to retry
    /// with, or why a person must sign in first.
    pub(super) fn unauthorized(
        &self,
        _sent: Option<&str>,
        _www_authenticate: Option<&str>,
    ) -> Result<String, SignInNeeded> {
        Err(SignInNeeded {
            message: format!(
                "{} answered 401 Unauthorized: it needs a sign-in (not wired yet)",
                self.shown
            ),
        })
    }
}
