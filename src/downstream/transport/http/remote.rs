//! What the two remote transports share (Streamable HTTP, `streamable.rs`; the
//! legacy HTTP+SSE transport, `sse.rs`), behind the `Transport`/`Outlet`
//! seam: the pump's half (`Remote`), the shared half (`Handle`), and what
//! request threads hand the pump (`Mailbox`).
//!
//! Threads: the pump is the server's one thread while it is open. Each
//! message goes out on a thread of its own (`Common::spawn`), which ends
//! with its exchange, so a server costs at most one more thread per message
//! in flight and none while it sleeps. What those threads read (a response,
//! the events of a response stream, a failure of their request alone) goes
//! to the pump through the mailbox, in order, and the pump hands it on as it
//! does a child's stdout. The server's long-lived event stream (the GET
//! stream, or the legacy transport's one stream) is opened on a short-lived
//! thread and then read by the pump itself: on Unix its socket is in the
//! pump's one wait (`sys::NetWait`, with the mailbox's waker) and read
//! without blocking; on Windows a reader thread reads it and posts its
//! events, the one exception.
//!
//! Nothing waits on the network holding a lock, and no stop waits on a
//! request thread: every exchange registers its connection's `Cut` in
//! `Cuts`, and a stop, a kill, a call's time-out or its cancellation shut
//! the sockets concerned down, which ends the reads blocked on them.

use super::super::spec::Spec;
use super::super::{Flow, Opener, Outlet, Ready, Sink, Transport, WriteError};
use crate::auth::{Access, SignIns};
use crate::lock;
use crate::net::client::{Body, Chunk};
use crate::net::conn::Cut;
use crate::net::pool::Pool;
use crate::net::sse;
use crate::net::{Agent, Url};
use crate::sys::{Exit, NetWait, Waker};
use crossbeam_channel::{unbounded, Receiver, Sender};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// The largest message a server may send (a JSON body or one event).
pub(super) const MAX_MESSAGE: usize = 128 << 20;
/// How much longer than its longest call a request thread waits for its
/// answer before it gives up by itself (the pump times calls out first).
const THREAD_MARGIN: Duration = Duration::from_secs(5);
/// The most reads of the event stream in one turn of the pump.
const STREAK: usize = 16;
/// A request thread's stack: it parses JSON (serde recurses) and little
/// else; the default 2 MiB would cost a larger mapping at every message.
const THREAD_STACK: usize = 256 * 1024;
/// How soon an event stream that ended is opened again, at first, and at most.
const REOPEN_FIRST: Duration = Duration::from_secs(1);
const REOPEN_MOST: Duration = Duration::from_secs(60);

/// What request threads and the stream's opener hand the pump.
pub(super) enum Event {
    /// One JSON-RPC message from the server.
    Message(Vec<u8>),
    /// Request `id` failed alone: the text its caller gets.
    Failed(i64, String),
    /// An event stream whose head was read (Unix: the pump reads it).
    #[cfg_attr(windows, expect(dead_code, reason = "a reader thread reads it"))]
    Stream(Stream),
    /// An event of the stream, read by its reader thread (Windows).
    #[cfg_attr(unix, expect(dead_code, reason = "the pump reads the stream"))]
    Read(sse::Event),
    /// The stream ended, read by its reader thread (Windows): why.
    #[cfg_attr(unix, expect(dead_code, reason = "the pump reads the stream"))]
    StreamEnded(String),
    /// No stream: why (naming the URL), and whether it may be tried again.
    NoStream { why: String, again: bool },
}

/// An event stream for the pump to read, with its entry in `Cuts`.
pub(super) struct Stream {
    pub body: Body,
    pub token: u64,
}

/// Where request threads post what the pump must handle.
#[derive(Clone)]
pub(super) struct Mailbox {
    tx: Sender<Event>,
    waker: Waker,
}

impl Mailbox {
    pub(super) fn post(&self, event: Event) {
        if self.tx.send(event).is_ok() {
            self.waker.wake();
        }
    }
}

/// The connections of a server's exchanges in progress, to shut down
/// from any thread: all of them (a stop), or those of one request (its
/// time-out or cancellation).
#[derive(Default)]
pub(super) struct Cuts(Mutex<CutTable>);

#[derive(Default)]
struct CutTable {
    next: u64,
    live: Vec<Live>,
    /// Shut: new exchanges are refused.
    closed: bool,
}

struct Live {
    token: u64,
    /// The request the exchange carries, if it is one.
    id: Option<i64>,
    cut: Option<Cut>,
    /// Shut down on purpose: its failure is no news.
    cut_on_purpose: bool,
}

impl Cuts {
    /// A new exchange, for request `id` if it carries one; `None` once shut.
    pub(super) fn register(&self, id: Option<i64>) -> Option<u64> {
        let mut table = lock(&self.0);
        if table.closed {
            return None;
        }
        table.next += 1;
        let token = table.next;
        table.live.push(Live {
            token,
            id,
            cut: None,
            cut_on_purpose: false,
        });
        Some(token)
    }

    /// The exchange's connection: false (and the connection shut down) when
    /// the exchange was cut on purpose meanwhile.
    pub(super) fn attach(&self, token: u64, cut: Cut) -> bool {
        let mut table = lock(&self.0);
        let closed = table.closed;
        match table.live.iter_mut().find(|l| l.token == token) {
            Some(live) if !live.cut_on_purpose && !closed => {
                live.cut = Some(cut);
                true
            }
            _ => {
                cut.cut();
                false
            }
        }
    }

    /// Whether the exchange was cut on purpose (or everything was shut).
    pub(super) fn on_purpose(&self, token: u64) -> bool {
        let table = lock(&self.0);
        table.closed
            || table
                .live
                .iter()
                .any(|l| l.token == token && l.cut_on_purpose)
    }

    /// The exchange is over.
    pub(super) fn done(&self, token: u64) {
        lock(&self.0).live.retain(|l| l.token != token);
    }

    /// Shuts down the exchanges of request `id` (timed out or cancelled).
    pub(super) fn cancel(&self, id: i64) {
        let mut table = lock(&self.0);
        for live in table.live.iter_mut().filter(|l| l.id == Some(id)) {
            live.cut_on_purpose = true;
            if let Some(cut) = &live.cut {
                cut.cut();
            }
        }
    }

    /// Shuts every exchange down, and refuses new ones.
    pub(super) fn close(&self) {
        let mut table = lock(&self.0);
        table.closed = true;
        for live in &table.live {
            if let Some(cut) = &live.cut {
                cut.cut();
            }
        }
    }
}

/// What both transports keep of a server, shared by the pump, the handle
/// and the request threads.
pub(super) struct Common {
    /// `toolbox/server`, for logs and thread names.
    pub label: String,
    /// The URL, expanded: never shown.
    pub url: Url,
    /// The URL as written in the config: what messages show.
    pub shown: String,
    /// The config's headers, expanded (values are secrets).
    pub headers: Vec<(String, String)>,
    /// The network the requests go through (the process's `SignIns`').
    pub net: Agent,
    pub pool: Pool,
    pub cuts: Cuts,
    pub mailbox: Mailbox,
    /// The server's credentials, shared with every copy of its definition.
    pub credentials: Access,
    /// The longest a request thread waits for its answer.
    pub limit: Duration,
    /// The longest the head of the event stream may take.
    pub stream_limit: Duration,
    closed: AtomicBool,
}

impl Common {
    /// Whether the transport was closed (the first step of a stop).
    pub(super) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Closes the transport: no more messages, every exchange shut down.
    pub(super) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.cuts.close();
    }

    /// Runs `job` on a thread of its own, named `[toolbox/server] what`.
    pub(super) fn spawn(&self, what: &str, job: impl FnOnce() + Send + 'static) -> io::Result<()> {
        thread::Builder::new()
            .name(format!("[{}] {what}", self.label))
            .stack_size(THREAD_STACK)
            .spawn(job)
            .map(drop)
    }

    /// Request `id` (if the message was one) failed with `why`, unless its
    /// exchange was cut on purpose: its caller is told; a notification's
    /// failure is logged.
    pub(super) fn fail(&self, id: Option<i64>, token: u64, why: String) {
        if self.cuts.on_purpose(token) {
            log::debug!("[{}] cut on purpose: {why}", self.label);
            return;
        }
        match id {
            Some(id) => self.mailbox.post(Event::Failed(id, why)),
            None => log::warn!("[{}] {why}", self.label),
        }
    }

    /// The config's headers with `Authorization` from the credentials when
    /// they have one (it replaces a configured one), then `more`.
    pub(super) fn request_headers<'a>(
        &'a self,
        authorization: Option<&'a str>,
        more: &'a [(&'a str, String)],
    ) -> Vec<(&'a str, &'a str)> {
        let mut headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .filter(|(name, _)| {
                authorization.is_none() || !name.eq_ignore_ascii_case("authorization")
            })
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        if let Some(value) = authorization {
            headers.push(("Authorization", value));
        }
        headers.extend(more.iter().map(|(n, v)| (*n, v.as_str())));
        headers
    }

    /// Hands the event stream `body` over: to the pump, which reads it (Unix),
    /// or to a reader on this thread, which posts its events (Windows).
    pub(super) fn hand_over(&self, mut body: Body, token: u64) {
        if let Err(e) = body.without_deadline() {
            self.cuts.done(token);
            return self.mailbox.post(Event::NoStream {
                why: format!("{}: its event stream cannot be read: {e}", self.shown),
                again: true,
            });
        }
        #[cfg(unix)]
        self.mailbox.post(Event::Stream(Stream { body, token }));
        #[cfg(windows)]
        {
            let mut parser = sse::Parser::new(MAX_MESSAGE);
            let mut data = Vec::new();
            let why = loop {
                data.clear();
                match body.read(&mut data) {
                    Ok(Chunk::Data) => {
                        let fed = parser.feed(&data, |event| {
                            self.mailbox.post(Event::Read(event));
                        });
                        if let Err(e) = fed {
                            break e;
                        }
                    }
                    Ok(Chunk::Pending) => {}
                    Ok(Chunk::End) => break "the connection ended".to_string(),
                    Err(e) => break e.to_string(),
                }
            };
            self.cuts.done(token);
            self.mailbox.post(Event::StreamEnded(why));
        }
    }
}

/// How long a request waits for `notifications/initialized` to be accepted.
const GATE_LIMIT: Duration = Duration::from_secs(10);

/// Requests wait until `notifications/initialized` was accepted: a POST per
/// message has no order of its own, and servers refuse a request before it
/// or register tools when it comes (server-everything does); nothing else
/// waits. Both HTTP transports use one.
#[derive(Default)]
pub(super) struct Gate(Mutex<Option<Receiver<()>>>);

/// What one message's thread does around its POST (`Gate::enter`).
pub(super) struct Passage {
    /// Waited on before the POST: open once `initialized` was accepted.
    after: Option<Receiver<()>>,
    /// Held by `initialized`'s own POST: dropping it (once answered) opens
    /// the gate.
    _done: Option<Sender<()>>,
}

impl Gate {
    /// The passage of message `out`, taken when it is sent (in order).
    pub(super) fn enter(&self, out: &super::peek::Outgoing) -> Passage {
        let mut gate = lock(&self.0);
        let after = gate.clone().filter(|_| out.is_request);
        let done =
            (out.method.as_deref() == Some(crate::protocol::mcp::method::INITIALIZED)).then(|| {
                let (tx, rx) = crossbeam_channel::bounded(0);
                *gate = Some(rx);
                tx
            });
        Passage { after, _done: done }
    }
}

impl Passage {
    /// Waits, on the message's own thread, until it may be posted.
    pub(super) fn wait(&self) {
        if let Some(after) = &self.after {
            let _ = after.recv_timeout(GATE_LIMIT);
        }
    }
}

/// A transport's own part: how it sends, and what its stream means.
pub(super) trait Protocol: Send + Sync + Sized + 'static {
    fn common(&self) -> &Common;
    /// Sends one line without blocking (`Outlet::send`).
    fn send(this: &Arc<Self>, line: Vec<u8>) -> Result<(), WriteError>;
    /// Whatever must happen once the transport is made (legacy: open the stream).
    fn start(_this: &Arc<Self>) {}
    /// An event of the stream that is not a message (legacy: `endpoint`);
    /// an error ends the transport.
    fn on_event(this: &Arc<Self>, event: &sse::Event) -> Result<(), String>;
    /// Opens the event stream (on a thread of its own).
    fn open_stream(this: &Arc<Self>);
    /// Whether the end of the stream ends the transport (legacy: it is the
    /// connection) rather than being opened again later.
    fn stream_is_the_connection(&self) -> bool;
    /// The first step of a stop: no more messages; the session ends.
    fn close(&self);
}

/// How to open `spec`'s remote server: the job the pump runs on its own
/// thread, which builds the transport with `make`; its network and
/// credentials are `sign_ins`'.
pub(super) fn opener<P: Protocol>(
    spec: &Spec,
    sign_ins: &SignIns,
    make: impl FnOnce(Common) -> P + Send + 'static,
) -> Result<impl Opener, String> {
    let remote = spec
        .remote
        .clone()
        .ok_or_else(|| "not a remote server".to_string())?;
    let url = remote.parsed_url()?;
    let label = format!("{}/{}", spec.toolbox, spec.server);
    let credentials = sign_ins.access(&url, &remote.oauth, &spec.toolbox, &spec.server);
    let net = sign_ins.net().clone();
    let limit = spec.max_call_timeout.max(spec.startup_timeout) + THREAD_MARGIN;
    let stream_limit = spec.startup_timeout;
    Ok(move || {
        let (wait, waker) = NetWait::new()?;
        let (tx, rx) = unbounded();
        let common = Common {
            label,
            url,
            shown: remote.url_display.clone(),
            headers: remote.headers.clone(),
            net,
            pool: Pool::default(),
            cuts: Cuts::default(),
            mailbox: Mailbox { tx, waker },
            credentials,
            limit,
            stream_limit,
            closed: AtomicBool::new(false),
        };
        let proto = Arc::new(make(common));
        P::start(&proto);
        let outlet: Arc<dyn Outlet> = Arc::new(Handle(Arc::clone(&proto)));
        Ok((Remote::new(proto, wait, rx), outlet))
    })
}

/// The shared half: sends through the transport's own part, wakes the
/// pump, shuts everything down.
struct Handle<P>(Arc<P>);

impl<P: Protocol> Outlet for Handle<P> {
    fn send(&self, line: Vec<u8>) -> Result<(), WriteError> {
        P::send(&self.0, line)
    }

    fn is_broken(&self) -> bool {
        false
    }

    fn wake(&self) {
        self.0.common().mailbox.waker.wake();
    }

    fn ended(&self) -> Option<Exit> {
        None
    }

    fn kill(&self) {
        self.0.common().close();
    }

    fn pid(&self) -> u32 {
        0
    }
}

/// Whether an event's data is empty or only whitespace (no message).
pub(super) fn is_blank(data: &[u8]) -> bool {
    data.iter().all(u8::is_ascii_whitespace)
}

/// The pump's half: its wait, the mailbox, the event stream.
pub(super) struct Remote<P> {
    proto: Arc<P>,
    wait: NetWait,
    rx: Receiver<Event>,
    /// The event stream the pump reads (Unix), with its parser.
    stream: Option<(Stream, sse::Parser)>,
    /// The stream may hold more than the last turn read.
    more: bool,
    /// When the stream is opened again.
    reopen: Option<Instant>,
    backoff: Duration,
    /// The stream delivered an event since it was opened.
    delivered: bool,
    /// The transport ended by itself: why.
    ended: Option<String>,
    /// A stop closed it.
    closed: bool,
}

impl<P: Protocol> Remote<P> {
    fn new(proto: Arc<P>, wait: NetWait, rx: Receiver<Event>) -> Remote<P> {
        Remote {
            proto,
            wait,
            rx,
            stream: None,
            more: false,
            reopen: None,
            backoff: REOPEN_FIRST,
            delivered: false,
            ended: None,
            closed: false,
        }
    }

    fn on_mail(&mut self, event: Event, sink: &mut impl Sink) {
        match event {
            Event::Message(line) => sink.message(&line),
            Event::Failed(id, why) => sink.failed(id, &why),
            Event::Stream(stream) => {
                if self.closed {
                    self.proto.common().cuts.done(stream.token);
                    return;
                }
                if let Some((old, _)) = self.stream.take() {
                    self.proto.common().cuts.done(old.token);
                }
                self.delivered = false;
                self.more = true; // the head's read may have brought events
                self.stream = Some((stream, sse::Parser::new(MAX_MESSAGE)));
                if let Some((stream, _)) = &mut self.stream {
                    if let Err(e) = stream.body.set_nonblocking(true) {
                        self.stream_ended(format!("its event stream cannot be read: {e}"), None);
                    }
                }
            }
            Event::Read(event) => self.on_stream_event(&event, sink),
            Event::StreamEnded(why) => self.stream_ended(why, None),
            Event::NoStream { why, again } => {
                if self.proto.stream_is_the_connection() {
                    self.end(why);
                } else if again {
                    log::info!("[{}] no event stream: {why}", self.proto.common().label);
                    self.schedule_reopen(None);
                } else {
                    log::debug!("[{}] no event stream: {why}", self.proto.common().label);
                }
            }
        }
    }

    fn on_stream_event(&mut self, event: &sse::Event, sink: &mut impl Sink) {
        self.delivered = true;
        if event.event == "message" {
            // An event without data primes a stream for resumption
            // (2025-11-25): no message.
            if !is_blank(&event.data) {
                sink.message(&event.data);
            }
        } else if let Err(why) = P::on_event(&self.proto, event) {
            let shown = &self.proto.common().shown;
            self.end(format!("{shown}: {why}"));
        }
    }

    /// Reads what the stream has now, without blocking.
    fn read_stream(&mut self, sink: &mut impl Sink) {
        let mut data = Vec::new();
        for _ in 0..STREAK {
            let Some((stream, parser)) = &mut self.stream else {
                return;
            };
            data.clear();
            let mut events = Vec::new();
            let why = match stream.body.read(&mut data) {
                Ok(Chunk::Data) => parser.feed(&data, |e| events.push(e)).err(),
                Ok(Chunk::Pending) => return,
                Ok(Chunk::End) => Some("the connection ended".to_string()),
                Err(e) => Some(e.to_string()),
            };
            let retry = parser.retry();
            for event in &events {
                self.on_stream_event(event, sink);
            }
            if let Some(why) = why {
                self.stream_ended(why, retry);
                return;
            }
        }
        self.more = true;
    }

    /// The stream ended (`retry`: when the server asked to be reconnected).
    fn stream_ended(&mut self, why: String, retry: Option<Duration>) {
        if let Some((stream, _)) = self.stream.take() {
            self.proto.common().cuts.done(stream.token);
        }
        if self.closed {
            return;
        }
        if self.proto.stream_is_the_connection() {
            let shown = &self.proto.common().shown;
            return self.end(format!("{shown}: {why}"));
        }
        log::debug!(
            "[{}] its event stream ended: {why}",
            self.proto.common().label
        );
        self.schedule_reopen(retry);
    }

    fn schedule_reopen(&mut self, retry: Option<Duration>) {
        self.backoff = if self.delivered {
            REOPEN_FIRST
        } else {
            (self.backoff * 2).min(REOPEN_MOST)
        };
        self.delivered = false;
        let after = retry.unwrap_or(self.backoff).max(self.backoff);
        self.reopen = Some(Instant::now() + after);
    }

    /// The transport ended by itself: `why`, naming the URL.
    fn end(&mut self, why: String) {
        if self.ended.is_none() {
            self.ended = Some(why);
            self.proto.common().close();
        }
    }
}

impl<P: Protocol> Transport for Remote<P> {
    fn wait(&mut self, timeout: Option<Duration>) -> io::Result<Ready> {
        if self.ended.is_some() || self.closed {
            return Ok(Ready {
                ended: true,
                ..Ready::default()
            });
        }
        let now = Instant::now();
        let timeout = match self.reopen {
            _ if self.more => Some(Duration::ZERO),
            Some(at) => Some(
                timeout
                    .map_or(at, |t| (now + t).min(at))
                    .saturating_duration_since(now),
            ),
            None => timeout,
        };
        let socket = self.stream.as_ref().map(|(stream, _)| stream.body.socket());
        self.more |= self.wait.wait(socket, timeout)?;
        Ok(Ready {
            messages: true,
            ..Ready::default()
        })
    }

    fn read(&mut self, _ready: &Ready, sink: &mut impl Sink) -> Flow {
        while let Ok(event) = self.rx.try_recv() {
            self.on_mail(event, sink);
        }
        if std::mem::take(&mut self.more) {
            self.read_stream(sink);
        }
        if self.reopen.is_some_and(|at| Instant::now() >= at) {
            self.reopen = None;
            if !self.closed && !self.proto.common().is_closed() {
                P::open_stream(&self.proto);
            }
        }
        Flow::Open
    }

    fn read_last_words(&mut self, sink: &mut impl Sink) {
        while let Ok(event) = self.rx.try_recv() {
            if let Event::Message(line) = event {
                sink.message(&line);
            }
        }
    }

    fn ended(&self) -> Option<Exit> {
        None
    }

    fn end_reason(&self) -> Option<String> {
        self.ended.clone()
    }

    fn close_input(&mut self) {
        self.closed = true;
        self.proto.close();
        if let Some((stream, _)) = self.stream.take() {
            self.proto.common().cuts.done(stream.token);
        }
    }

    fn ask_to_end(&mut self) -> bool {
        false
    }

    fn kill(&mut self) {
        self.proto.common().close();
    }

    fn finish(&mut self) -> Exit {
        let common = self.proto.common();
        common.close();
        common.pool.clear();
        self.stream = None;
        Exit::Unknown
    }
}
