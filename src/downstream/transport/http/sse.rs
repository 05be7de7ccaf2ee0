//! The legacy HTTP+SSE transport (MCP revision 2024-11-05,
//! basic/transports "HTTP with SSE"), deprecated since 2025-03-26 and kept
//! for servers not yet moved, as the `Protocol` of `remote.rs`.
//!
//! The transport GETs the configured URL at once: the event stream that
//! answers is the connection, read by the pump. Its first event, `endpoint`,
//! names where messages go (resolved against the URL; another origin is
//! refused). Each message is then a POST there, on a thread of its own,
//! which the server accepts (202); every response and notification comes on
//! the stream. Requests wait until `notifications/initialized` was accepted
//! (`remote::Gate`), as over Streamable HTTP. Messages sent before the endpoint is known wait for it, up to
//! a bound. When the stream ends, the transport has ended: what is in
//! flight fails with "the connection ended", and the next call connects
//! again.

use super::super::spec::Spec;
use super::super::{Opener, WriteError, QUEUE_LIMIT};
use super::peek::Outgoing;
use super::post;
use super::remote::{self, Common, Event, Gate, Protocol};
use crate::auth::SignInNeeded;
use crate::lock;
use crate::net::sse;
use crate::net::Url;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// How to open `spec`'s server over the legacy HTTP+SSE transport
/// (`Opener`).
pub(in crate::downstream) fn opener(
    spec: &Spec,
    sign_ins: &crate::auth::SignIns,
) -> Result<impl Opener, String> {
    remote::opener(spec, sign_ins, |common| Legacy {
        common,
        endpoint: Mutex::new(Endpoint::Waiting(Vec::new(), 0)),
        gate: Gate::default(),
    })
}

pub(super) struct Legacy {
    common: Common,
    endpoint: Mutex<Endpoint>,
    /// Requests wait for `notifications/initialized` to be accepted.
    gate: Gate,
}

enum Endpoint {
    /// Not known yet: the lines sent meanwhile, and their bytes.
    Waiting(Vec<Vec<u8>>, usize),
    Known(Arc<Url>),
}

impl Protocol for Legacy {
    fn common(&self) -> &Common {
        &self.common
    }

    fn send(this: &Arc<Self>, line: Vec<u8>) -> Result<(), WriteError> {
        if this.common.is_closed() {
            return Err(WriteError::Closed);
        }
        let to = {
            let mut endpoint = lock(&this.endpoint);
            match &mut *endpoint {
                Endpoint::Known(url) => Arc::clone(url),
                Endpoint::Waiting(lines, queued) => {
                    if *queued + line.len() > QUEUE_LIMIT {
                        return Err(WriteError::Full { queued: *queued });
                    }
                    *queued += line.len();
                    lines.push(line);
                    return Ok(());
                }
            }
        };
        Self::post_on_thread(this, line, to)
    }

    fn start(this: &Arc<Self>) {
        Self::open_stream(this);
    }

    /// `endpoint`: where messages go from now on; what waited goes there.
    fn on_event(this: &Arc<Self>, event: &sse::Event) -> Result<(), String> {
        if event.event != "endpoint" {
            return Ok(());
        }
        let common = &this.common;
        let reference = String::from_utf8_lossy(&event.data);
        let url = common
            .url
            .join(reference.trim())
            .map_err(|e| format!("its endpoint event cannot be used: {e}"))?;
        if url.origin() != common.url.origin() {
            return Err(format!(
                "its endpoint event names another origin ({}), which the workbench refuses",
                url.shown_origin()
            ));
        }
        let url = Arc::new(url);
        let waiting = std::mem::replace(
            &mut *lock(&this.endpoint),
            Endpoint::Known(Arc::clone(&url)),
        );
        log::debug!("[{}] its message endpoint is known", common.label);
        if let Endpoint::Waiting(lines, _) = waiting {
            for line in lines {
                let id = Outgoing::of(&line).id;
                if let Err(e) = Self::post_on_thread(this, line, Arc::clone(&url)) {
                    if let Some(id) = id {
                        common
                            .mailbox
                            .post(Event::Failed(id, format!("{}: {e}", common.shown)));
                    }
                }
            }
        }
        Ok(())
    }

    fn open_stream(this: &Arc<Self>) {
        let me = Arc::clone(this);
        let spawned = this.common.spawn("stream", move || me.get_stream());
        if let Err(e) = spawned {
            this.common.mailbox.post(Event::NoStream {
                why: format!("cannot open its event stream: {e}"),
                again: false,
            });
        }
    }

    fn stream_is_the_connection(&self) -> bool {
        true
    }

    fn close(&self) {
        self.common.close();
    }
}

impl Legacy {
    fn post_on_thread(this: &Arc<Self>, line: Vec<u8>, to: Arc<Url>) -> Result<(), WriteError> {
        let out = Outgoing::of(&line);
        let passage = this.gate.enter(&out);
        let token = this
            .common
            .cuts
            .register(out.id.filter(|_| out.is_request))
            .ok_or(WriteError::Closed)?;
        let me = Arc::clone(this);
        this.common
            .spawn("post", move || {
                passage.wait();
                me.post(&line, &out, &to, token);
                drop(passage);
                me.common.cuts.done(token);
                if let Some(id) = out.cancels {
                    me.common.cuts.cancel(id);
                }
            })
            .map_err(|e| {
                this.common.cuts.done(token);
                WriteError::Io(e)
            })
    }

    /// POSTs `line` to the endpoint `to`: the server answers 202, and the
    /// response comes on the stream. On a thread of its own.
    fn post(&self, line: &[u8], out: &Outgoing, to: &Url, token: u64) {
        let common = &self.common;
        let deadline = Instant::now() + common.limit;
        let expect = out.id.filter(|_| out.is_request);
        let mut authorization = common.credentials.authorization();
        let mut signed_in = false;
        loop {
            let more = [("Content-Type", "application/json".to_string())];
            let headers = common.request_headers(authorization.as_deref(), &more);
            let mut url = to.clone();
            let sent = post::send_to(
                common,
                &mut url,
                "POST",
                &headers,
                Some(line),
                token,
                deadline,
            );
            let mut exchange = match sent {
                Ok(exchange) => exchange,
                Err(why) => return common.fail(expect, token, why),
            };
            match exchange.status() {
                200..=299 => {
                    // "Accepted", or nothing: the answer comes on the stream.
                    let _ = exchange.body.read_to_end(1 << 20);
                    return exchange.body.finish(&common.pool);
                }
                401 if !signed_in => {
                    signed_in = true;
                    let challenge = exchange.header("www-authenticate").map(str::to_string);
                    match common
                        .credentials
                        .unauthorized(authorization.as_deref(), challenge.as_deref())
                    {
                        Ok(value) => authorization = Some(value),
                        Err(SignInNeeded { message }) => {
                            return common.fail(expect, token, message)
                        }
                    }
                }
                _ => {
                    let mut deliver = |message| common.mailbox.post(Event::Message(message));
                    if let Some(why) = post::refusal(common, exchange, expect, &mut deliver, false)
                    {
                        common.fail(expect, token, why);
                    }
                    return;
                }
            }
        }
    }

    /// The event stream, which is the connection: handed to the pump, or
    /// why there is none. On a thread of its own.
    fn get_stream(&self) {
        let common = &self.common;
        let more = [("Accept", "text/event-stream".to_string())];
        let Some(exchange) = post::open_stream(common, &more, false) else {
            return;
        };
        let why = match post::refusal(common, exchange, None, &mut |_| {}, false) {
            Some(why) => {
                format!("{why} (the legacy HTTP+SSE transport opens an event stream there)")
            }
            None => format!("{} did not answer with an event stream", common.shown),
        };
        common.mailbox.post(Event::NoStream { why, again: false });
    }
}
