//! What a Streamable HTTP POST's answer asks for next (MCP basic/transports,
//! "Session Management" and authorization's "Token Handling"): deliver it,
//! make the session again, ask the sign-in for a new token, or read and
//! tell the refusal. A pure function of the status, the request and what it
//! tried already; no IO, no lock (the POST's thread acts on the answer,
//! `streamable.rs`).
//!
//! The rules: a 2xx is delivered. A 404 to a request that carried the
//! session means it expired: it is made again, once per request, and not
//! when the session was already made again after a 404 and has answered
//! nothing since (a server that forgets every session costs one renewal per
//! open). A 401 asks for a new token once per request. Anything else, or a
//! 404 or 401 past those, is refused with what the server said.

/// What was sent, as the policy needs it.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Asked {
    /// The request was the initialize (it carries no session).
    pub initialize: bool,
    /// The request carried a session id.
    pub in_session: bool,
    /// That session was made again after a 404 and answered nothing since.
    pub session_renewed: bool,
}

/// What this request did already.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Tried {
    pub renewed_session: bool,
    pub signed_in: bool,
}

/// What to do with the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Next {
    /// A 2xx: the answer (a JSON body or an event stream) goes to the pump.
    Deliver,
    /// The session expired: initialize again, then send the request again.
    RenewSession,
    /// Unauthorized: ask the sign-in for a new token, then send again.
    NewToken,
    /// Give up: the refusal's body says why (`post::refusal`).
    Refuse,
}

/// What an answer of `status` to the request `asked` asks for next.
pub(super) fn next(status: u16, asked: &Asked, tried: &Tried) -> Next {
    match status {
        200..=299 => Next::Deliver,
        404 if asked.in_session
            && !asked.initialize
            && !tried.renewed_session
            && !asked.session_renewed =>
        {
            Next::RenewSession
        }
        401 if !tried.signed_in => Next::NewToken,
        _ => Next::Refuse,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_status_asks_for_what_the_table_says() {
        // (status, initialize, in_session, session_renewed, tried renewal, tried sign-in, next)
        let table = [
            (200, false, true, false, false, false, Next::Deliver),
            (202, false, false, false, false, false, Next::Deliver),
            (200, true, false, false, true, true, Next::Deliver),
            (299, false, true, true, true, true, Next::Deliver),
            (404, false, true, false, false, false, Next::RenewSession),
            (404, false, true, false, false, true, Next::RenewSession),
            (404, false, false, false, false, false, Next::Refuse),
            (404, true, true, false, false, false, Next::Refuse),
            (404, false, true, false, true, false, Next::Refuse),
            (404, false, true, true, false, false, Next::Refuse),
            (401, false, true, false, false, false, Next::NewToken),
            (401, true, false, false, false, false, Next::NewToken),
            (401, false, true, false, true, false, Next::NewToken),
            (401, false, true, false, false, true, Next::Refuse),
            (403, false, true, false, false, false, Next::Refuse),
            (400, false, true, false, false, false, Next::Refuse),
            (405, false, true, false, false, false, Next::Refuse),
            (500, false, true, false, false, false, Next::Refuse),
            (302, false, true, false, false, false, Next::Refuse),
        ];
        for (status, initialize, in_session, session_renewed, renewed, signed_in, want) in table {
            let asked = Asked {
                initialize,
                in_session,
                session_renewed,
            };
            let tried = Tried {
                renewed_session: renewed,
                signed_in,
            };
            assert_eq!(
                next(status, &asked, &tried),
                want,
                "{status} to {asked:?} after {tried:?}"
            );
        }
    }
}
