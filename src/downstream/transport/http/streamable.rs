//! The Streamable HTTP transport (MCP basic/transports, revisions
//! 2025-03-26 to 2025-11-25, and the 2026-07-28 one for a modern-only
//! server), as the `Protocol` of `remote.rs`.
//!
//! Each message is a POST on a thread of its own (`Accept: application/json,
//! text/event-stream`, the config's headers, `Authorization` from the
//! credentials); its response, one JSON body or an event stream of messages
//! ending with the response, goes to the pump in order. The session:
//! `Mcp-Session-Id` from the initialize response (visible ASCII, or the
//! initialize fails) is sent back on every request, `MCP-Protocol-Version` (read from the initialize result the
//! pump is handed) once initialized; a 404 to a request that carried the
//! session means it expired: the initialize and `notifications/initialized`
//! seen are sent again, once, and the request after them. Once per request,
//! and once per session: a session made again is renewed only after it
//! answered a request, so a server that forgets every session costs one
//! renewal per open. The GET stream
//! for what the server sends by itself is opened once after
//! `notifications/initialized` (405: none) and read by the pump. A stop
//! DELETEs the session on a short-lived thread nobody waits for.
//!
//! A request goes out only once the `notifications/initialized` sent
//! before it was accepted (some servers refuse a request before it);
//! otherwise nothing waits for anything: requests run side by side. A modern line (its `_meta` names
//! the 2026-07-28 version) carries that revision's headers (`peek.rs`),
//! and has no session, no GET stream, and no `notifications/cancelled`:
//! closing the request's connection cancels it.

use super::super::spec::Spec;
use super::super::{Opener, WriteError};
use super::peek::{self, Outgoing};
use super::policy::{self, Asked, Next, Tried};
use super::post;
use super::remote::{self, Common, Event, Gate, Protocol};
use crate::auth::{SignInNeeded, SignIns};
use crate::lock;
use crate::net::client::Exchange;
use crate::net::sse;
use crate::protocol::mcp::method;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long the DELETE that ends a session may take.
const DELETE_LIMIT: Duration = Duration::from_secs(2);
/// What every POST accepts.
const ACCEPT: &str = "application/json, text/event-stream";

/// The `Mcp-Session-Id` a response gave, refused unless it is visible ASCII
/// (0x21 to 0x7E, basic/transports "Session Management"): it is sent back in
/// every request. The id itself is not shown.
fn session_id(common: &Common, exchange: &Exchange) -> Result<Option<String>, String> {
    match exchange.header("mcp-session-id") {
        Some(id) if !id.bytes().all(|b| matches!(b, 0x21..=0x7e)) => Err(format!(
            "{} sent a session id (Mcp-Session-Id) with bytes other than visible ASCII (0x21 to 0x7E): refused",
            common.shown
        )),
        id => Ok(id.map(str::to_string)),
    }
}

/// How to open `spec`'s server over Streamable HTTP (`Opener`).
pub(in crate::downstream) fn opener(
    spec: &Spec,
    sign_ins: &SignIns,
) -> Result<impl Opener, String> {
    remote::opener(spec, sign_ins, |common| Streamable {
        common,
        session: Mutex::new(Session::default()),
        gate: Gate::default(),
        reinit: Mutex::new(()),
        stream_opened: AtomicBool::new(false),
    })
}

pub(super) struct Streamable {
    common: Common,
    session: Mutex<Session>,
    /// Requests wait for `notifications/initialized` to be accepted.
    gate: Gate,
    /// Held while the session is made again after a 404.
    reinit: Mutex<()>,
    /// The GET stream was asked for once.
    stream_opened: AtomicBool,
}

#[derive(Default, Clone)]
struct Session {
    /// `Mcp-Session-Id`, once the server gave one.
    id: Option<String>,
    /// The version the initialize result agreed on.
    version: Option<String>,
    /// The server speaks the modern era (2026-07-28).
    modern: bool,
    /// Made again after a 404, and no request answered in it since: a 404
    /// now is not renewed (one renewal per open for a server that forgets
    /// every session; a session that served requests is renewed again).
    renewed: bool,
    /// What to send again when the session expires.
    initialize: Option<Arc<Vec<u8>>>,
    initialized: Option<Arc<Vec<u8>>>,
}

impl Protocol for Streamable {
    fn common(&self) -> &Common {
        &self.common
    }

    fn send(this: &Arc<Self>, line: Vec<u8>) -> Result<(), WriteError> {
        let common = &this.common;
        if common.is_closed() {
            return Err(WriteError::Closed);
        }
        let out = Outgoing::of(&line);
        {
            let mut session = lock(&this.session);
            session.modern |= out.modern.is_some();
            match out.method.as_deref() {
                Some(method::CANCELLED) if session.modern => {
                    drop(session);
                    if let Some(id) = out.cancels {
                        common.cuts.cancel(id);
                    }
                    return Ok(());
                }
                Some(method::INITIALIZE) => session.initialize = Some(Arc::new(line.clone())),
                Some(method::INITIALIZED) => session.initialized = Some(Arc::new(line.clone())),
                _ => {}
            }
        }
        let passage = this.gate.enter(&out);
        let token = common
            .cuts
            .register(out.id.filter(|_| out.is_request))
            .ok_or(WriteError::Closed)?;
        let me = Arc::clone(this);
        common
            .spawn("post", move || {
                passage.wait();
                let initialized = me.post(&line, &out, token);
                drop(passage);
                if initialized {
                    Self::open_stream(&me);
                }
                me.common.cuts.done(token);
                if let Some(id) = out.cancels {
                    // After the cancellation went out: the request's own
                    // connection is shut down.
                    me.common.cuts.cancel(id);
                }
            })
            .map_err(|e| {
                common.cuts.done(token);
                WriteError::Io(e)
            })
    }

    fn on_event(_this: &Arc<Self>, _event: &sse::Event) -> Result<(), String> {
        Ok(())
    }

    fn open_stream(this: &Arc<Self>) {
        let me = Arc::clone(this);
        let spawned = this.common.spawn("stream", move || me.get_stream());
        if let Err(e) = spawned {
            log::warn!("[{}] cannot open its event stream: {e}", this.common.label);
        }
    }

    fn stream_is_the_connection(&self) -> bool {
        false
    }

    fn close(&self) {
        self.common.close();
        let session = lock(&self.session).clone();
        let Some(id) = session.id.clone().filter(|_| !session.modern) else {
            return;
        };
        // DELETE ends the session (basic/transports, "Session Management"),
        // on a short-lived thread of its own: no stop waits for it.
        let url = self.common.url.clone();
        let authorization = self.common.credentials.authorization();
        let headers: Vec<(String, String)> = self
            .common
            .request_headers(
                authorization.as_deref(),
                &self.session_headers(&session, false),
            )
            .into_iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .chain([("Mcp-Session-Id".to_string(), id)])
            .collect();
        let label = self.common.label.clone();
        let net = self.common.net.clone();
        let spawned = self.common.spawn("close", move || {
            let headers: Vec<(&str, &str)> = headers
                .iter()
                .map(|(n, v)| (n.as_str(), v.as_str()))
                .collect();
            let pool = crate::net::pool::Pool::default();
            let request = crate::net::client::Request {
                method: "DELETE",
                url: &url,
                headers: &headers,
                body: None,
            };
            let deadline = Instant::now() + DELETE_LIMIT;
            match crate::net::client::send(&net, &pool, &request, deadline, &mut |_| true) {
                Ok(exchange) => {
                    log::debug!("[{label}] DELETE of the session: {}", exchange.status())
                }
                Err(e) => log::debug!("[{label}] DELETE of the session: {e}"),
            }
        });
        if let Err(e) = spawned {
            log::debug!("[{}] cannot end the session: {e}", self.common.label);
        }
    }
}

impl Streamable {
    /// `MCP-Protocol-Version` once initialized (legacy era), and
    /// `Mcp-Session-Id` when `with_id`.
    fn session_headers(&self, session: &Session, with_id: bool) -> Vec<(&'static str, String)> {
        let mut headers = Vec::new();
        if session.modern {
            return headers;
        }
        if let Some(version) = &session.version {
            headers.push(("MCP-Protocol-Version", version.clone()));
        }
        if with_id {
            if let Some(id) = &session.id {
                headers.push(("Mcp-Session-Id", id.clone()));
            }
        }
        headers
    }

    /// POSTs `line` and hands what comes back to the pump; on a thread of
    /// its own. True when it was the legacy era's `notifications/initialized`
    /// and the server took it: the GET stream is opened, once. What each
    /// answer asks for next is `policy::next`'s.
    fn post(&self, line: &[u8], out: &Outgoing, token: u64) -> bool {
        let common = &self.common;
        let deadline = Instant::now() + common.limit;
        let expect = out.id.filter(|_| out.is_request);
        let initialize = out.method.as_deref() == Some(method::INITIALIZE);
        let mut authorization = common.credentials.authorization();
        let mut tried = Tried::default();
        loop {
            let session = lock(&self.session).clone();
            let mut more = vec![
                ("Accept", ACCEPT.to_string()),
                ("Content-Type", "application/json".to_string()),
            ];
            if !initialize {
                more.extend(self.session_headers(&session, true));
            }
            more.extend(out.modern_headers());
            let headers = common.request_headers(authorization.as_deref(), &more);
            let sent = post::send(common, "POST", &headers, Some(line), token, deadline);
            let exchange = match sent {
                Ok(exchange) => exchange,
                Err(why) => {
                    common.fail(expect, token, why);
                    return false;
                }
            };
            let asked = Asked {
                initialize,
                in_session: session.id.is_some(),
                session_renewed: session.renewed,
            };
            let again = match policy::next(exchange.status(), &asked, &tried) {
                Next::Deliver => return self.deliver(exchange, &session, out, token),
                Next::Refuse => {
                    let mut deliver = |message| common.mailbox.post(Event::Message(message));
                    if let Some(why) = post::refusal(common, exchange, expect, &mut deliver, true) {
                        common.fail(expect, token, why);
                    }
                    return false;
                }
                Next::RenewSession => {
                    tried.renewed_session = true;
                    drop(exchange);
                    self.renew_session(session.id.as_deref(), deadline)
                }
                Next::NewToken => {
                    tried.signed_in = true;
                    let challenge = exchange.header("www-authenticate").map(str::to_string);
                    drop(exchange);
                    common
                        .credentials
                        .unauthorized(authorization.as_deref(), challenge.as_deref())
                        .map(|value| authorization = Some(value))
                        .map_err(|SignInNeeded { message }| message)
                }
            };
            if let Err(why) = again {
                common.fail(expect, token, why);
                return false;
            }
        }
    }

    /// A 2xx answer to `out`, sent in `session`: the session it names (an
    /// initialize's), then its messages to the pump. True as `post` says.
    fn deliver(&self, exchange: Exchange, session: &Session, out: &Outgoing, token: u64) -> bool {
        let common = &self.common;
        let expect = out.id.filter(|_| out.is_request);
        let initialize = out.method.as_deref() == Some(method::INITIALIZE);
        let given = match initialize.then(|| session_id(common, &exchange)) {
            Some(Err(why)) => {
                common.fail(expect, token, why);
                return false;
            }
            Some(Ok(given)) => given,
            None => None,
        };
        let mut now = lock(&self.session);
        if initialize {
            now.id = given;
            now.renewed = false;
        } else if session.id.is_some() && now.id == session.id {
            // The session served a request: it may be renewed again.
            now.renewed = false;
        }
        drop(now);
        let mut deliver = |message: Vec<u8>| {
            if initialize {
                if let Some(version) = peek::initialized_version(&message) {
                    lock(&self.session).version = Some(version);
                }
            }
            common.mailbox.post(Event::Message(message));
        };
        if let Err(why) = post::read_answer(common, exchange, expect, &mut deliver) {
            common.fail(expect, token, why);
            return false;
        }
        out.method.as_deref() == Some(method::INITIALIZED)
            && !session.modern
            && !self.stream_opened.swap(true, Ordering::SeqCst)
    }

    /// The session `stale` expired (a 404): initializes again with the
    /// messages seen, unless another request did meanwhile.
    fn renew_session(&self, stale: Option<&str>, deadline: Instant) -> Result<(), String> {
        let common = &self.common;
        let _one = lock(&self.reinit);
        let (initialize, initialized) = {
            let mut session = lock(&self.session);
            if session.id.as_deref() != stale {
                return Ok(());
            }
            session.id = None;
            session.renewed = true;
            (session.initialize.clone(), session.initialized.clone())
        };
        let Some(initialize) = initialize else {
            return Err(format!(
                "{} answered 404: its session expired",
                common.shown
            ));
        };
        log::info!(
            "[{}] its session expired (404): initializing again",
            common.label
        );
        let expired =
            |why: String| format!("its session expired, and initializing again failed: {why}");
        let token = common.cuts.register(None).ok_or("stopped")?;
        let result = self.replay(&initialize, true, token, deadline);
        common.cuts.done(token);
        result.map_err(expired)?;
        if let Some(initialized) = initialized {
            let token = common.cuts.register(None).ok_or("stopped")?;
            let result = self.replay(&initialized, false, token, deadline);
            common.cuts.done(token);
            result.map_err(expired)?;
        }
        Ok(())
    }

    /// Sends `line` again (the initialize when `initialize`, else
    /// `notifications/initialized`) without handing its answer to the pump.
    fn replay(
        &self,
        line: &[u8],
        initialize: bool,
        token: u64,
        deadline: Instant,
    ) -> Result<(), String> {
        let common = &self.common;
        let session = lock(&self.session).clone();
        let mut more = vec![
            ("Accept", ACCEPT.to_string()),
            ("Content-Type", "application/json".to_string()),
        ];
        if !initialize {
            more.extend(self.session_headers(&session, true));
        }
        let authorization = common.credentials.authorization();
        let headers = common.request_headers(authorization.as_deref(), &more);
        let exchange = post::send(common, "POST", &headers, Some(line), token, deadline)?;
        if !(200..300).contains(&exchange.status()) {
            return Err(post::refusal(common, exchange, None, &mut |_| {}, true)
                .unwrap_or_else(|| "refused".to_string()));
        }
        if initialize {
            lock(&self.session).id = session_id(common, &exchange)?;
        }
        let expect = initialize.then(|| Outgoing::of(line).id).flatten();
        post::read_answer(common, exchange, expect, &mut |message| {
            if let Some(version) = peek::initialized_version(&message) {
                lock(&self.session).version = Some(version);
            }
        })
    }

    /// The GET stream for what the server sends by itself (basic/transports,
    /// "Listening for Messages from the Server"): handed to the pump, or why
    /// there is none. On a thread of its own.
    fn get_stream(&self) {
        let common = &self.common;
        let session = lock(&self.session).clone();
        let mut more = vec![("Accept", "text/event-stream".to_string())];
        more.extend(self.session_headers(&session, true));
        let Some(exchange) = post::open_stream(common, &more, true) else {
            return;
        };
        let why = format!(
            "GET answered {} {}",
            exchange.status(),
            exchange.head.reason
        );
        // 405: the server offers no stream (and says so for good).
        common.mailbox.post(Event::NoStream { why, again: false });
    }
}
