//! The fleet: the toolboxes and their servers, and everything that happens
//! to them outside a call: opens, closes, restarts, sleeps, reloads and
//! re-lists (`lifecycle`, on each toolbox's worker), decided by one loop that
//! owns the fleet's timers (`main_loop`).
//!
//! The fleet serves host sessions it knows by `SessionId`: one session in a
//! workbench of its own, or every session attached to a shared fleet
//! (docs/reference.md §8). It never calls into a session: its threads send
//! each session `Fact`s on the session's own channel, and the session's loop
//! decides what the host hears. It imports nothing of the host side and
//! renders no meta-tool result. A session holds the toolbox copies it opened
//! (`holds`); a copy closes when no session holds it. Calls do not pass
//! through the fleet's threads: a session resolves them in the registry and
//! writes them to the child itself (`forward`).

pub(crate) mod event;
pub(crate) mod facts;
pub(crate) mod forward;
pub(crate) mod holds;
pub(crate) mod launch;
pub(crate) mod lifecycle;
pub(crate) mod main_loop;
pub(crate) mod queues;
pub(crate) mod reload;
pub(crate) mod timers;
pub(crate) mod toolbox;
pub(crate) mod visible;

use crate::catalog::Catalog;
use crate::config::expand::Vars;
use crate::config::{Config, ServerConfig, ToolboxConfig};
use crate::lock;
use crate::pins::store::Pins;
use crate::pins::ServerPins;
use crate::protocol::awaiting::Key;
use crate::protocol::jsonrpc::RequestId;
use crate::protocol::mcp::ToolEntry;
use crate::sys::Stamp;
use crate::wire::{SessionId, SessionIds};
use event::Event;
use facts::{Asked, Fact, Mailbox};
use forward::{ForwardedCall, Unsent};
use holds::Holds;
use launch::Launcher;
use queues::{Op, Queues};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use toolbox::{Part, Registry, Slot, Toolboxes, Variant};

/// A shared fleet's session's copies of a toolbox, and the environment
/// they expand with.
pub(crate) type SessionCopies<'a> = (&'a [(Variant, Part)], &'a Arc<Vars>);

/// The state the fleet's threads share: the registry, the launcher, the
/// lifecycle queues, the tool catalog, the loop's channel, the sessions
/// served and what each holds.
pub(crate) struct Fleet {
    registry: Registry,
    launcher: Launcher,
    queues: Queues,
    /// With `pinTools`: the config's pins (docs/reference.md §10).
    pins: Option<Pins>,
    /// Every listing seen, per server definition: what `find_tools` searches.
    /// One per process, shared by every session it serves.
    catalog: Catalog,
    /// The fleet loop's events.
    events: crossbeam_channel::Sender<Event>,
    /// The sessions served, each with its channel of facts: one, or every
    /// session of a shared fleet (§8).
    sessions: Mutex<HashMap<SessionId, Mailbox>>,
    /// Which sessions hold which toolbox copies open.
    holds: Holds,
    /// The ids of the sessions it serves.
    session_ids: SessionIds,
}

impl Fleet {
    /// The fleet of `config`; `events`: its loop's channel (see
    /// `main_loop::start`, which builds it).
    fn new(config: &Config, launcher: Launcher, events: crossbeam_channel::Sender<Event>) -> Fleet {
        Fleet {
            registry: Registry::new(config),
            launcher,
            queues: Queues::default(),
            pins: open_pins(config),
            catalog: Catalog::default(),
            events,
            sessions: Mutex::default(),
            holds: Holds::default(),
            session_ids: SessionIds::default(),
        }
    }

    /// An id for a new session of this fleet, never given before.
    pub(crate) fn new_session_id(&self) -> SessionId {
        self.session_ids.next()
    }

    /// Serves `session` from now on, until it `leave`s: its facts go to `mailbox`.
    pub(crate) fn attach(&self, session: SessionId, mailbox: Mailbox) {
        lock(&self.sessions).insert(session, mailbox);
    }

    /// Stops serving `session`: it is gone. Its calls in flight are
    /// cancelled downstream, its queued requests dropped, and its holds
    /// released: a toolbox copy no other session holds is closed.
    pub(crate) fn leave(self: &Arc<Self>, session: SessionId) {
        lock(&self.sessions).remove(&session);
        self.queues.withdraw_session(session);
        for conn in self.launcher.live_conns() {
            conn.withdraw(session, None);
        }
        let held = self.holds.held_by(session);
        let toolboxes = self.registry.current();
        for toolbox in toolboxes.all().filter(|t| held.contains(&t.slot.id)) {
            let op = Op::Close {
                session,
                answer: None,
            };
            lifecycle::submit(self, &toolbox.slot, op);
        }
    }

    /// Whether `session` is still served.
    fn serves(&self, session: SessionId) -> bool {
        lock(&self.sessions).contains_key(&session)
    }

    /// Tells `session` `fact`, if it is still served.
    fn tell(&self, session: SessionId, fact: Fact) {
        if let Some(mailbox) = lock(&self.sessions).get(&session) {
            mailbox.send(fact);
        }
    }

    /// Tells every session what is open changed.
    fn tools_changed(&self) {
        self.tell_all(|| Fact::ToolsChanged);
    }

    /// Tells every session the fact `fact` makes.
    fn tell_all(&self, fact: impl Fn() -> Fact) {
        for mailbox in lock(&self.sessions).values() {
            mailbox.send(fact());
        }
    }

    /// The toolboxes and what is open, as they are now.
    pub(crate) fn toolboxes(&self) -> Arc<Toolboxes> {
        self.registry.current()
    }

    /// The copies of toolbox `name` a session uses: the one copy, or in a
    /// shared fleet the session's `copies` expanded with its `env`, made if
    /// they are not there yet (§8). Empty when `name` is not configured.
    pub(crate) fn copies(&self, name: &str, copies: Option<SessionCopies<'_>>) -> Vec<Arc<Slot>> {
        match copies {
            None => self
                .registry
                .current()
                .find(name)
                .map(|t| Arc::clone(&t.slot))
                .into_iter()
                .collect(),
            Some((copies, env)) => copies
                .iter()
                .filter_map(|&copy| self.registry.add_variant(name, copy, env))
                .map(|t| t.slot)
                .collect(),
        }
    }

    /// Opens `copies` of a toolbox for the session of `asked` (one fact per
    /// copy, `Fact::Opened`, in the order given).
    pub(crate) fn open(self: &Arc<Self>, asked: Asked, copies: &[Arc<Slot>]) {
        for (part, slot) in copies.iter().enumerate() {
            lifecycle::submit(self, slot, Op::Open { asked, part });
        }
    }

    /// Closes `copies` of a toolbox for the session of `asked` (one fact per
    /// copy, `Fact::Closed`).
    pub(crate) fn close(self: &Arc<Self>, asked: Asked, copies: &[Arc<Slot>]) {
        for (part, slot) in copies.iter().enumerate() {
            let op = Op::Close {
                session: asked.session,
                answer: Some((asked.seq, part)),
            };
            lifecycle::submit(self, slot, op);
        }
    }

    /// The hot path: resolves `call` in the registry and writes it to its
    /// child (see `forward`).
    pub(crate) fn forward<A: std::ops::Deref<Target = serde_json::value::RawValue>>(
        &self,
        call: ForwardedCall<A>,
    ) -> Result<(), Unsent> {
        forward::forward(&self.registry, call)
    }

    /// Queues `call` (request `seq` of its session), which its server could
    /// not take, for one start of that server (`Fact::Restarted`).
    pub(crate) fn restart_for(self: &Arc<Self>, seq: Key, call: ForwardedCall) {
        lifecycle::restart_for(self, seq, call);
    }

    /// In a shared fleet: makes the copy `copy` of toolbox `name` for a
    /// session with environment `env`, if it is not there yet.
    pub(crate) fn make_copy(&self, name: &str, copy: (Variant, Part), env: &Arc<Vars>) {
        self.registry.add_variant(name, copy, env);
    }

    /// The host withdrew request `asked`, which waits in the fleet: if it has
    /// not begun, it never runs.
    pub(crate) fn withdraw(&self, asked: Asked) {
        self.queues.withdraw(asked);
    }

    /// The host of `session` cancelled request `id`: passed on to the child
    /// running it, if any (one that is retiring still runs its calls).
    /// Whether one was.
    pub(crate) fn cancel(&self, session: SessionId, id: &RequestId, reason: Option<&str>) -> bool {
        self.launcher
            .live_conns()
            .iter()
            .any(|conn| conn.cancel(id, session, reason))
    }

    /// The toolbox copies (`Slot::id`s) `session` holds open.
    pub(crate) fn held_by(&self, session: SessionId) -> HashSet<u64> {
        self.holds.held_by(session)
    }

    /// The sessions that hold toolbox copy `slot` open.
    pub(crate) fn holders(&self, slot: &Slot) -> Vec<SessionId> {
        self.holds.sessions(slot.id)
    }

    /// Every listing seen: what `find_tools` searches.
    pub(crate) fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// With `pinTools`, the config's pins.
    pub(crate) fn pins(&self) -> Option<&Pins> {
        self.pins.as_ref()
    }

    /// `logging/setLevel`: applied to every child, now and when it starts later.
    pub(crate) fn set_log_level(&self, level: &str) {
        self.launcher.set_log_level(level);
    }

    /// Stops every child (once; a second call waits for the first), then
    /// lets the catalog's writes under way end (`Catalog::settle`, at most
    /// `catalog::SETTLE`): the process exits after this.
    pub(crate) fn shutdown(&self) {
        self.launcher.shutdown();
        self.catalog.settle(crate::catalog::SETTLE);
    }

    /// With `pinTools`, records a listing of `server` of `toolbox` and
    /// returns its pins to judge it by (see `visible`).
    fn pins_for(
        &self,
        toolbox: &str,
        server: &ServerConfig,
        tools: &[ToolEntry],
    ) -> Option<Arc<ServerPins>> {
        Some(self.pins.as_ref()?.listed(toolbox, server, tools))
    }

    /// With `pinTools`: reads the pins file again if it changed (an
    /// approval), judges every open server again, and tells the sessions if
    /// what the model sees changed. Run by the fleet loop's poll.
    pub(crate) fn refresh_pins(&self) {
        let Some(pins) = &self.pins else { return };
        if !pins.refresh() {
            return;
        }
        log::info!("the pins file changed; tools judged again");
        if self
            .registry
            .rejudge(|toolbox, server| pins.server(toolbox, server))
        {
            self.tools_changed();
        }
    }

    /// Tells every session the config now configures `toolboxes`.
    fn config_changed(&self, toolboxes: &[ToolboxConfig]) {
        let toolboxes: Arc<[ToolboxConfig]> = toolboxes.into();
        self.tell_all(|| Fact::ConfigChanged(Arc::clone(&toolboxes)));
    }

    /// Sends `event` to the fleet loop.
    pub(crate) fn event(&self, event: Event) {
        let _ = self.events.send(event);
    }

    /// Applies config file `path` again whenever it changes, and at once on
    /// SIGUSR1; `applied` is the config running now, read from the file
    /// after its stamp `seen` was taken (`config::Loaded`): a change made
    /// since, even before the loop gets this, is a change.
    pub(crate) fn watch_config(&self, path: PathBuf, applied: Config, seen: Option<Stamp>) {
        self.event(Event::WatchConfig {
            path,
            applied,
            seen,
            events: self.events.clone(),
        });
    }

    /// Keeps the tool catalog of config file `path` in the user's cache
    /// folder (docs/reference.md §9), read now and written at every listing.
    pub(crate) fn keep_catalog(&self, path: &std::path::Path) {
        self.catalog.attach(path);
    }
}

/// The pins of `config`, with `pinTools` and a config file.
fn open_pins(config: &Config) -> Option<Pins> {
    if !config.pin_tools {
        return None;
    }
    match &config.file {
        Some(file) => Pins::open(file),
        None => {
            log::error!(
                "pinTools: the config has no file to key the pins by; tools are not pinned"
            );
            None
        }
    }
}
