//! The upstream MCP server (docs/reference.md §4): the session's loop. It
//! reads the host's lines and the fleet's facts, and is the one place that
//! answers the host: lifecycle and protocol requests, meta-tool results,
//! `notifications/tools/list_changed`.
//!
//! Like rust-analyzer's main loop, it waits in one place for the next of
//! two kinds of input (`inbox`): the host's lines, and the facts the fleet's
//! threads send this session (`fleet::facts::Fact`). It handles each at
//! once and never waits for anything else: `use_tool` is
//! validated and written to the child without blocking (`fleet::forward`),
//! and the child's own thread writes the answer to the host; `open_toolbox`
//! and `close_toolbox` take seconds, so they wait in their toolbox's
//! lifecycle queue and come back as facts, which this loop turns into
//! answers if they are still wanted. stdin EOF stops every child and
//! returns. A changed config file (or SIGUSR1) is applied live by the fleet
//! (`fleet::main_loop`), which tells the session.
//!
//! Params arrive as JSON text; each handler reads only the members it needs,
//! and tool arguments are forwarded as the host's bytes, never parsed.

use crate::auth::SignIns;
use crate::config::{Config, Mode};
use crate::fleet::facts::Fact;
use crate::fleet::forward::{self, ForwardedCall, Unsent};
use crate::fleet::launch::Launcher;
use crate::fleet::toolbox::ToolId;
use crate::fleet::{main_loop, Fleet};
use crate::host::inbox::{HostInput, Inbox, Next};
use crate::host::session::{Found, Parts, Session, Waiting};
use crate::protocol::batch::Slot;
use crate::protocol::framing;
use crate::protocol::jsonrpc::{self, ErrorObject, Incoming, Members, Read, RequestId};
use crate::protocol::mcp::{self, method};
use crate::sys::{self, Stamp};
use crate::tools::{self, Outcome};
use crate::tools::{close_toolbox, dynamic, find_tools, open_toolbox, use_tool};
use crate::wire::outbox::Outbox;
use crate::wire::trace::Dir;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The host session's loop: one `Session`, served by one `Fleet`.
pub struct Server {
    session: Session,
    fleet: Arc<Fleet>,
    /// The host's lines and the fleet's facts: `run` takes it (the loop
    /// borrows its lines while it handles them).
    inbox: Option<Inbox>,
    /// The config the workbench started with (what `watch_config` compares
    /// the file with first).
    config: Config,
    /// The last `find_tools` search, until the next tool call tells whether
    /// it showed what the model wanted (`find_tools::learn`).
    searched: Option<Box<find_tools::Searched>>,
    /// The last `find_tools` index, reused while what it was built from is
    /// unchanged.
    index: Option<Arc<find_tools::Built>>,
}

#[derive(Serialize)]
struct InitializeResult<'a> {
    #[serde(rename = "protocolVersion")]
    protocol_version: &'a str,
    capabilities: Value,
    #[serde(rename = "serverInfo")]
    server_info: Value,
    instructions: String,
}

impl Server {
    /// The session of a fleet of its own, writing to the host on `output`,
    /// whose remote servers never start a sign-in: what the fuzz target
    /// (`.fuzz/fuzz_targets/dispatch.rs`) serves.
    pub fn with_output(
        config: Config,
        output: Box<dyn io::Write + Send>,
        input: HostInput,
    ) -> io::Result<Server> {
        let outbox = Arc::new(Outbox::new(output));
        Server::new(config, outbox, input, SignIns::default())
    }

    /// The session of a fleet of its own, writing to the host through
    /// `outbox`, its remote servers signing in and talking through
    /// `sign_ins`.
    pub(crate) fn new(
        config: Config,
        outbox: Arc<Outbox>,
        input: HostInput,
        sign_ins: SignIns,
    ) -> io::Result<Server> {
        let dynamic = config.mode == Mode::Dynamic;
        // Unbounded, but each child has at most one report in it: it reports
        // again only after the re-lister has listed its tools.
        let (changes, changed) = crossbeam_channel::unbounded();
        let launcher = Launcher::new(Arc::clone(&outbox), dynamic.then_some(changes), sign_ins);
        let fleet = main_loop::start(&config, launcher, dynamic.then_some(changed));
        let session = Session::new(&config, Arc::clone(&outbox), fleet.new_session_id());
        Server::attach(fleet, config, session, input)
    }

    /// A session of `fleet` (a shared fleet's, §8, or its own).
    pub(crate) fn attach(
        fleet: Arc<Fleet>,
        config: Config,
        session: Session,
        input: HostInput,
    ) -> io::Result<Server> {
        let (inbox, mailbox) = Inbox::new(input)?;
        fleet.attach(session.id, mailbox);
        Ok(Server {
            session,
            fleet,
            inbox: Some(inbox),
            config,
            searched: None,
            index: None,
        })
    }

    /// Applies the config file `path` again whenever it changes, and at once
    /// on SIGUSR1 (`reload`); `seen` is the stamp taken before the config
    /// the workbench started with was read (`config::Loaded::stamp`).
    pub fn watch_config(&self, path: PathBuf, seen: Option<Stamp>) {
        self.fleet.watch_config(path, self.config.clone(), seen);
    }

    /// Keeps the tool catalog of config file `path` in the user's cache
    /// folder (docs/reference.md §9), read now and written at every listing.
    pub fn keep_catalog(&self, path: &std::path::Path) {
        self.fleet.keep_catalog(path);
    }

    /// Serves until EOF on the host's input, then stops every child; a shared
    /// fleet's session only leaves the fleet.
    pub fn run(mut self) -> io::Result<()> {
        let mut inbox = self
            .inbox
            .take()
            .ok_or_else(|| io::Error::other("run twice"))?;
        let result = loop {
            match inbox.next() {
                Next::Line(line) => self.handle_line(line),
                Next::Fact(fact) => self.on_fact(fact),
                Next::End(result) => break result,
            }
        };
        if self.session.peer.is_some() {
            self.session.outbox.close();
            self.fleet.leave(self.session.id);
            return result;
        }
        log::info!("the host closed stdin; stopping");
        self.shutdown();
        result
    }

    /// SIGTERM, SIGINT and SIGHUP stop every child like stdin EOF does, then
    /// exit 0. The signals are blocked in every thread (see `main`); this one
    /// thread receives them with sigwait, so no work runs in a signal handler.
    /// A second signal hurries the stop sequence (no grace waits) but never
    /// skips the kill; nor does a signal during a shutdown begun by stdin EOF.
    pub fn watch_signals(&self) {
        let fleet = Arc::clone(&self.fleet);
        sys::on_shutdown_signal("signals", move |_| {
            sys::on_shutdown_signal("signals (again)", |_| sys::hurry());
            fleet.shutdown();
            std::process::exit(0);
        });
    }

    fn shutdown(&mut self) {
        self.fleet.shutdown();
    }

    fn handle_line(&mut self, line: &[u8]) {
        if log::log_enabled!(log::Level::Debug) {
            log::debug!("<- host {}", framing::preview(line));
        }
        if let Some(trace) = self.session.outbox.trace() {
            trace.record(Dir::HostToWorkbench, None, line);
        }
        match jsonrpc::read(line) {
            Ok(Read::One(incoming)) => self.dispatch(incoming),
            Ok(Read::Batch(items)) => self.batch(items),
            Err(e) => {
                let error = ErrorObject::new(jsonrpc::PARSE_ERROR, format!("Parse error: {e}"));
                self.session.outbox.send(&jsonrpc::error_line(None, &error));
            }
        }
    }

    /// A JSON-RPC batch: only with 2025-03-26, which requires receiving them;
    /// later revisions removed batching (2025-06-18 changelog). The answers
    /// go out together as one array (see `batch`).
    fn batch(&mut self, items: Vec<&RawValue>) {
        let refuse = |reason| jsonrpc::error_line(None, &ErrorObject::invalid_request(reason));
        if self.session.version != Some("2025-03-26") {
            let line = refuse("JSON-RPC batches exist only in protocol version 2025-03-26");
            return self.session.outbox.send(&line);
        }
        if items.is_empty() {
            return self.session.outbox.send(&refuse("an empty batch"));
        }
        let answered = |id: Option<&RequestId>, reason: &str| {
            let mut line = jsonrpc::error_line(id, &ErrorObject::invalid_request(reason));
            line.pop(); // the array gets one newline at its end
            Slot::Ready(line)
        };
        let mut slots = Vec::new();
        let mut dispatch = Vec::new();
        for item in items {
            let incoming = match jsonrpc::read(item.get().as_bytes()) {
                Ok(Read::One(incoming)) => incoming,
                _ => Incoming::invalid(None, "a message must be a JSON object"),
            };
            match incoming {
                Incoming::Request { id, method, .. } if method == method::INITIALIZE => {
                    slots.push(answered(
                        Some(&id),
                        "initialize must not be part of a batch",
                    ));
                }
                Incoming::Request { ref id, .. } => {
                    slots.push(Slot::Expect(id.clone()));
                    dispatch.push(incoming);
                }
                Incoming::Invalid { id, reason } => slots.push(answered(id.as_ref(), &reason)),
                Incoming::Notification { .. } | Incoming::Response { .. } => {
                    dispatch.push(incoming)
                }
            }
        }
        self.session.outbox.open_batch(slots);
        for incoming in dispatch {
            self.dispatch(incoming);
        }
    }

    fn dispatch(&mut self, incoming: Incoming) {
        match incoming {
            Incoming::Request { id, method, params } => match members(&params) {
                Ok(params) => self.request(id, &method, params),
                Err(e) => {
                    let error = invalid_params(&e.to_string());
                    self.session
                        .outbox
                        .send(&jsonrpc::error_line(Some(&id), &error));
                }
            },
            Incoming::Notification { method, params } => {
                self.notification(&method, members(&params).unwrap_or_default())
            }
            Incoming::Response { id, .. } => {
                log::debug!("ignoring a response from the host ({id:?})")
            }
            Incoming::Invalid { id, reason } => {
                let error = ErrorObject::invalid_request(&reason);
                self.session
                    .outbox
                    .send(&jsonrpc::error_line(id.as_ref(), &error));
            }
        }
    }

    fn notification(&mut self, method: &str, params: Members) {
        match method {
            method::INITIALIZED => self.session.initialized = true,
            method::CANCELLED => {
                let Some(id) = params.get("requestId").and_then(RequestId::from_raw) else {
                    return log::debug!("ignoring a cancellation without a valid requestId");
                };
                let reason = params.string("reason");
                self.session.outbox.forget(&id);
                let found = match self.session.cancel(&id) {
                    // It waits in the fleet: it never runs if it has not begun.
                    Some(asked) => {
                        self.fleet.withdraw(asked);
                        true
                    }
                    None => self.fleet.cancel(self.session.id, &id, reason.as_deref()),
                };
                log::debug!(
                    "host cancelled request {id} ({})",
                    if found { "forwarded" } else { "not in flight" }
                );
            }
            _ => log::debug!("ignoring notification {method}"),
        }
    }

    /// `params` are the request's params as the host wrote them: each handler
    /// reads the members it needs, and tool arguments are forwarded as bytes.
    fn request(&mut self, id: RequestId, method: &str, params: Members) {
        let answer = match method {
            method::INITIALIZE => self.initialize(&id, &params),
            method::PING => Ok(jsonrpc::result_line(&id, &Map::new())),
            method::TOOLS_LIST => self.tools_list(&id, &params),
            method::TOOLS_CALL => return self.tools_call(id, &params),
            method::SET_LEVEL => self.set_level(&id, &params),
            _ => Err(ErrorObject::new(
                jsonrpc::METHOD_NOT_FOUND,
                format!("Method not found: {}", shorten(method, 100)),
            )),
        };
        let line = match answer {
            Ok(line) => line,
            Err(error) => jsonrpc::error_line(Some(&id), &error),
        };
        self.session.outbox.send(&line);
    }

    fn initialize(&mut self, id: &RequestId, params: &Members) -> Result<Vec<u8>, ErrorObject> {
        let Some(requested) = params.string("protocolVersion") else {
            return Err(invalid_params("protocolVersion must be a string"));
        };
        for field in ["capabilities", "clientInfo"] {
            if params.get(field).is_some_and(|v| !v.get().starts_with('{')) {
                return Err(invalid_params(&format!("{field} must be an object")));
            }
        }
        let version = mcp::negotiate(&requested);
        if self.session.version.is_some() {
            return Err(ErrorObject::new(
                jsonrpc::INVALID_REQUEST,
                "Invalid Request: initialize was already received in this session",
            ));
        }
        self.session.version = Some(version);
        let client = params
            .get("clientInfo")
            .and_then(|info| Members::read(info).ok())
            .and_then(|info| info.string("name"));
        if let Some(peer) = &self.session.peer {
            let _ = peer.card.client.set(client.clone());
        }
        self.session.client = client;
        let toolboxes = self.fleet.toolboxes();
        log::debug!(
            "open_toolbox results in the {:?} form for client {:?}",
            self.session.open_form(toolboxes.open_setting),
            self.session.client
        );
        // listChanged in both modes: a reloaded config changes the meta-tools.
        let result = InitializeResult {
            protocol_version: version,
            capabilities: serde_json::json!({
                "logging": {},
                "tools": {"listChanged": true}
            }),
            server_info: serde_json::json!({"name": mcp::NAME, "version": mcp::VERSION}),
            instructions: tools::instructions(&toolboxes.configs()),
        };
        Ok(jsonrpc::result_line(id, &result))
    }

    /// `logging/setLevel` (server/utilities/logging): applied to every child
    /// that declared `logging`, now and when it starts later.
    fn set_level(&self, id: &RequestId, params: &Members) -> Result<Vec<u8>, ErrorObject> {
        let level = params.string("level");
        let Some(level) = level.filter(|l| mcp::LOG_LEVELS.contains(&l.as_str())) else {
            return Err(invalid_params(&format!(
                "level must be one of {}",
                mcp::LOG_LEVELS.join(", ")
            )));
        };
        // A shared fleet's children log to the fleet's own log, not to a host.
        if self.session.peer.is_none() {
            self.fleet.set_log_level(&level);
        }
        Ok(jsonrpc::result_line(id, &Map::new()))
    }

    fn structured(&self) -> bool {
        self.session.structured()
    }

    #[allow(clippy::expect_used, reason = "the tool list is JSON")]
    fn tools_list(&self, id: &RequestId, params: &Members) -> Result<Vec<u8>, ErrorObject> {
        if params.get("cursor").is_some_and(|c| c.get() != "null") {
            return Err(invalid_params("Invalid cursor: the tool list has one page"));
        }
        let meta_tools = &self.session.meta_tools()[usize::from(self.structured())];
        let native = self.session.native();
        let separator = if native.listing().is_empty() { "" } else { "," };
        let list = format!(
            "{{\"tools\":[{meta_tools}{separator}{}]}}",
            native.listing()
        );
        let list = RawValue::from_string(list).expect("the tool list is JSON");
        Ok(jsonrpc::raw_result_line(id, &list))
    }

    fn tools_call(&mut self, id: RequestId, params: &Members) {
        let Some(name) = params.string("name") else {
            let error = invalid_params("name must be a string");
            return self
                .session
                .outbox
                .send(&jsonrpc::error_line(Some(&id), &error));
        };
        // The call's arguments: absent or null is `{}`.
        let arguments = match params.get("arguments") {
            None => None,
            Some(raw) if raw.get() == "null" => None,
            Some(raw) if raw.get().starts_with('{') => Some(raw),
            Some(_) => {
                let error = invalid_params("arguments must be an object");
                return self
                    .session
                    .outbox
                    .send(&jsonrpc::error_line(Some(&id), &error));
            }
        };
        let meta = params.get("_meta");
        // The hot path: a plain, valid use_tool call, read in one pass.
        if name == tools::USE_TOOL {
            if let Some((tool_id, arguments)) = arguments.and_then(use_tool::plain_call) {
                return self.forward(id, tool_id, arguments, meta);
            }
        }
        // Otherwise a meta-tool's arguments are read member by member (for
        // the validators' messages); a native tool's are only forwarded.
        let meta_tool = [
            tools::USE_TOOL,
            tools::OPEN_TOOLBOX,
            tools::CLOSE_TOOLBOX,
            tools::FIND_TOOLS,
        ]
        .contains(&name.as_str());
        let args = match arguments.filter(|_| meta_tool).map(Members::read) {
            None => Members::default(),
            Some(Ok(args)) => args,
            Some(Err(e)) => {
                let error = invalid_params(&format!("arguments: {e}"));
                return self
                    .session
                    .outbox
                    .send(&jsonrpc::error_line(Some(&id), &error));
            }
        };
        match name.as_str() {
            tools::USE_TOOL => match use_tool::arguments(&args) {
                Ok(tool_id) => {
                    // Validation made it absent or an object.
                    let arguments = args.get("arguments").unwrap_or(jsonrpc::empty_object());
                    self.forward(id, tool_id, arguments, meta);
                }
                Err(text) => self.send_outcome(&id, &Outcome::error(text)),
            },
            tools::OPEN_TOOLBOX | tools::CLOSE_TOOLBOX => {
                let parsed = match name.as_str() {
                    tools::OPEN_TOOLBOX => open_toolbox::arguments(&args),
                    _ => close_toolbox::arguments(&args).map(|toolbox| (toolbox, None)),
                };
                let (toolbox, requested) = match parsed {
                    Ok(parsed) => parsed,
                    Err(text) => return self.send_outcome(&id, &Outcome::error(text)),
                };
                let all = self.fleet.toolboxes();
                // One copy, or in a shared fleet the session's copies (§8).
                let wanted = self.session.copies_of(&toolbox);
                let peer = self.session.peer.as_ref();
                let copies = self
                    .fleet
                    .copies(&toolbox, peer.map(|peer| (&wanted[..], &peer.env)));
                let Some(base) = all.find(&toolbox).filter(|_| !copies.is_empty()) else {
                    let text = tools::not_configured(&all, &toolbox);
                    return self.send_outcome(&id, &Outcome::error(text));
                };
                let n = copies.len();
                // With two copies the answer describes the toolbox as configured.
                let base = (n > 1).then(|| Arc::clone(&base.config));
                if name == tools::OPEN_TOOLBOX {
                    let form = self.session.open_form(all.open_setting);
                    let waiting = Waiting::Open {
                        id,
                        name: toolbox,
                        form,
                        requested,
                        base,
                        parts: Parts::new(n),
                    };
                    let asked = self.session.park(waiting);
                    self.fleet.open(asked, &copies);
                } else {
                    let waiting = Waiting::Close {
                        id,
                        name: toolbox,
                        parts: Parts::new(n),
                    };
                    let asked = self.session.park(waiting);
                    self.fleet.close(asked, &copies);
                }
            }
            tools::FIND_TOOLS => {
                let toolboxes = self.fleet.toolboxes();
                let scope = find_tools::Scope {
                    toolboxes: &toolboxes,
                    env: self.session.peer.as_ref().map(|peer| &peer.env),
                    pins: self.fleet.pins(),
                };
                let (outcome, searched) =
                    find_tools::find_tools(self.fleet.catalog(), &scope, &mut self.index, &args);
                self.searched = searched.map(Box::new);
                self.send_outcome(&id, &outcome);
            }
            other => match self.session.native().lookup(other) {
                // A native tool (dynamic mode) is use_tool with its identifier.
                Some(tool_id) => {
                    let tool_id = tool_id.clone();
                    let arguments = arguments.unwrap_or(jsonrpc::empty_object());
                    self.forward(id, tool_id, arguments, meta);
                }
                // Dynamic mode: a stale native name (its toolbox closed since
                // the host listed it) gets a result the model can act on.
                None if self.session.is_dynamic() => {
                    let all = self.fleet.toolboxes();
                    let held = self.fleet.held_by(self.session.id);
                    let text = dynamic::native_not_found(&all, other, &|t| {
                        all.all()
                            .any(|c| c.config.name == t.config.name && held.contains(&c.slot.id))
                    });
                    self.send_outcome(&id, &Outcome::error(text));
                }
                None => {
                    let error = invalid_params(&format!("Unknown tool: {other}"));
                    self.session
                        .outbox
                        .send(&jsonrpc::error_line(Some(&id), &error));
                }
            },
        }
    }

    /// The first call after a search: if it reaches a tool the search did
    /// not show, the catalog learns what the search's words meant, and is
    /// written on a thread of its own (never the main thread's IO), which
    /// the shutdown waits for (`Fleet::shutdown`).
    fn learn_from(&mut self, tool_id: &ToolId) {
        let Some(searched) = self.searched.take() else {
            return;
        };
        let ToolId {
            toolbox,
            server,
            tool,
        } = tool_id;
        if !find_tools::learn(
            self.fleet.catalog(),
            self.index.as_deref(),
            &searched,
            toolbox,
            server,
            tool,
        ) {
            return;
        }
        log::debug!("find_tools learned that a search meant {toolbox}/{server}/{tool}");
        let fleet = Arc::clone(&self.fleet);
        let writing = fleet.catalog().writing();
        let spawned = std::thread::Builder::new()
            .name("catalog write".into())
            .spawn(move || {
                fleet.catalog().save();
                drop(writing);
            });
        if let Err(e) = spawned {
            log::warn!("cannot write what find_tools learned: {e}");
        }
    }

    /// The hot path: `forward` writes the call to the child; the child's
    /// own thread answers the host. `arguments` are the host's bytes,
    /// borrowed from its line (copied only for a call that waits for a restart).
    fn forward(
        &mut self,
        id: RequestId,
        tool_id: ToolId,
        arguments: &RawValue,
        meta: Option<&RawValue>,
    ) {
        // Nothing to do on the hot path unless a search waits to be judged.
        if self.searched.is_some() {
            self.learn_from(&tool_id);
        }
        // The host's progressToken is replaced by one the child's progress can be
        // matched by; other _meta keys (trace context and the like) pass through.
        let mut meta = match meta.filter(|m| m.get().starts_with('{')) {
            None => Map::new(),
            Some(raw) => match serde_json::from_str::<Map<String, Value>>(raw.get()) {
                Ok(meta) => meta,
                Err(e) => {
                    let error = invalid_params(&format!("_meta: {e}"));
                    return self
                        .session
                        .outbox
                        .send(&jsonrpc::error_line(Some(&id), &error));
                }
            },
        };
        let progress_token = meta.remove("progressToken");
        let time_limit = meta
            .remove(mcp::TIME_LIMIT_META)
            .map(|ms| match ms.as_u64() {
                Some(ms) if ms > 0 => Ok(Duration::from_millis(ms)),
                _ => Err(invalid_params(&format!(
                    "_meta: {} must be a whole number of milliseconds above 0",
                    mcp::TIME_LIMIT_META
                ))),
            });
        let time_limit = match time_limit.transpose() {
            Ok(limit) => limit,
            Err(error) => {
                return self
                    .session
                    .outbox
                    .send(&jsonrpc::error_line(Some(&id), &error))
            }
        };
        let call = ForwardedCall {
            id,
            session: self.session.id,
            reply: Arc::clone(&self.session.outbox),
            variant: self.session.copy_of(&tool_id.toolbox, &tool_id.server).0,
            tool_id,
            arguments,
            meta,
            progress_token,
            time_limit,
            restarts: 0,
        };
        match self.fleet.forward(call) {
            Ok(()) => {}
            Err(Unsent::Start { call, .. }) => {
                // In a shared fleet, a toolbox this session never opened has
                // no copy of its own yet: made now, expanded with the
                // session's environment (docs/reference.md §5.2, §8).
                if let Some(peer) = &self.session.peer {
                    let ToolId {
                        toolbox, server, ..
                    } = &call.tool_id;
                    let copy = self.session.copy_of(toolbox, server);
                    self.fleet.make_copy(toolbox, copy, &peer.env);
                }
                self.restart_for(*call);
            }
            Err(Unsent::Fail(id, text)) => self.send_outcome(&id, &Outcome::error(text)),
        }
    }

    /// `call` waits in the fleet for one start of its server.
    fn restart_for(&mut self, call: ForwardedCall) {
        let asked = self.session.park(Waiting::Call {
            id: call.id.clone(),
        });
        self.fleet.restart_for(asked.seq, call);
    }

    /// What the fleet tells this session: the answers to requests that
    /// waited there, unless the host cancelled them, and changes to what the
    /// host's tool list shows.
    fn on_fact(&mut self, fact: Fact) {
        match fact {
            Fact::Opened { seq, part, found } => {
                let Some(Waiting::Open {
                    id,
                    name,
                    form,
                    requested,
                    base,
                    parts,
                }) = self.session.report(seq, part, Found::Open(found))
                else {
                    return;
                };
                let outcome = open_toolbox::answer(
                    base.as_deref(),
                    parts.into_all(),
                    (form, requested.as_deref()),
                    &self.fleet.toolboxes(),
                    &name,
                );
                self.send_outcome(&id, &outcome);
            }
            Fact::Closed { seq, part, closed } => {
                let Some(Waiting::Close { id, name, parts }) =
                    self.session.report(seq, part, Found::Close(closed))
                else {
                    return;
                };
                let outcome =
                    close_toolbox::answer(&name, &parts.into_all(), &self.fleet.toolboxes());
                self.send_outcome(&id, &outcome);
            }
            Fact::Restarted { calls, started } => {
                for (seq, call) in calls {
                    if self.session.finish(seq).is_some() {
                        self.forward_restarted(call, &started);
                    }
                }
            }
            Fact::Failed { seq, why } => {
                if let Some(waiting) = self.session.finish(seq) {
                    self.send_outcome(waiting.id(), &Outcome::error(why));
                }
            }
            Fact::ToolsChanged => {
                let held = self.fleet.held_by(self.session.id);
                self.session.tools_changed(&self.fleet.toolboxes(), &held);
            }
            Fact::ConfigChanged(configs) => {
                let held = self.fleet.held_by(self.session.id);
                let toolboxes = self.fleet.toolboxes();
                self.session.config_changed(&configs, &toolboxes, &held);
            }
        }
    }

    /// Forwards `call` now that its server was started again for it; or
    /// answers why it cannot run. A server that died again before taking it
    /// gets one more start; after that the call fails.
    fn forward_restarted(&mut self, call: ForwardedCall, started: &Result<(), String>) {
        if let Err(why) = started {
            return self.send_outcome(&call.id, &Outcome::error(why.clone()));
        }
        match self.fleet.forward(call) {
            Ok(()) => {}
            Err(Unsent::Start { call, .. }) if call.restarts < 2 => self.restart_for(*call),
            Err(Unsent::Start { call, down }) => {
                let why = down.unwrap_or_else(|| "it is not running".into());
                let text = forward::stopped_again(&call.tool_id, &why);
                self.send_outcome(&call.id, &Outcome::error(text));
            }
            Err(Unsent::Fail(id, text)) => self.send_outcome(&id, &Outcome::error(text)),
        }
    }

    fn send_outcome(&self, id: &RequestId, outcome: &Outcome) {
        self.session.send_outcome(id, outcome);
    }
}

/// The members of a message's params (none when it has no params).
fn members<'a>(params: &'a Option<Cow<'_, RawValue>>) -> Result<Members<'a>, serde_json::Error> {
    params
        .as_deref()
        .map_or_else(|| Ok(Members::default()), Members::read)
}

/// `text` cut to at most `max` characters, for echoing input in messages.
fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_string(),
    }
}

fn invalid_params(message: &str) -> ErrorObject {
    ErrorObject::new(
        jsonrpc::INVALID_PARAMS,
        format!("Invalid params: {message}"),
    )
}
