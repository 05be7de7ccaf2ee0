//! The fleet: the toolboxes and their servers, and everything that happens
//! to them outside a call: opens, closes, restarts, sleeps, reloads and
//! re-lists (`lifecycle`, on each toolbox's worker), decided by one loop that
//! owns the fleet's timers (`main_loop`).
//!
//! The fleet serves host sessions through `SessionLink` alone, and imports
//! no session code: one session in a workbench of its own, or every session
//! attached to a shared fleet (docs/reference.md §8), each known by its
//! outbox. A session holds the toolboxes it opened; a toolbox closes when no
//! session holds it. Calls do not pass through the fleet: a session resolves
//! them in the registry and writes them to the child itself (`forward`).

pub(crate) mod event;
pub(crate) mod forward;
pub(crate) mod join;
pub(crate) mod launch;
pub(crate) mod lifecycle;
pub(crate) mod main_loop;
pub(crate) mod queues;
pub(crate) mod reload;
pub(crate) mod timers;
pub(crate) mod toolbox;
pub(crate) mod visible;

use crate::catalog::Catalog;
use crate::config::{Config, ServerConfig, ToolboxConfig};
use crate::fleet::launch::Launcher;
use crate::fleet::toolbox::{Registry, Slot, Toolboxes};
use crate::lock;
use crate::pins::store::Pins;
use crate::pins::ServerPins;
use crate::protocol::jsonrpc::RequestId;
use crate::protocol::mcp::ToolEntry;
use crate::sys::Stamp;
use crate::tools::meta_tools::Outcome;
use crate::wire::outbox::Outbox;
use crossbeam_channel::Sender;
use event::Event;
use queues::Queues;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};

/// What the fleet needs of a host session. Each call is quick: it may write
/// one line to the host, and waits for nothing else. A session is known by
/// its outbox (`reply`), which calls and queued requests carry.
pub(crate) trait SessionLink: Send + Sync {
    /// Where the session's answers go; also its identity.
    fn outbox(&self) -> &Arc<Outbox>;
    /// Host request `id` waits in the fleet (a queued open, close or call).
    fn wait(&self, id: &RequestId);
    /// Whether the host cancelled `id`, which waits in the fleet.
    fn cancelled(&self, id: &RequestId) -> bool;
    /// `id` is done waiting: whether it is to be answered (not cancelled).
    fn finish(&self, id: &RequestId) -> bool;
    /// Sends `outcome` as the `CallToolResult` of `id`.
    fn answer(&self, id: &RequestId, outcome: &Outcome);
    /// Whether the session holds toolbox `slot` open.
    fn holds(&self, slot: &Slot) -> bool;
    /// Takes (`true`) or releases the session's hold on toolbox `slot`.
    fn hold(&self, slot: &Slot, held: bool);
    /// What is open changed (an open, close, restart or re-list): the
    /// session's tools may have changed.
    fn tools_changed(&self, toolboxes: &Toolboxes);
    /// A reload was applied: `configs` are the configured toolboxes now.
    fn config_changed(&self, configs: &[&ToolboxConfig], toolboxes: &Toolboxes);
}

/// The state the fleet's threads share: the registry, the launcher, the
/// lifecycle queues, the tool catalog, the loop's channel and the sessions served.
pub(crate) struct Fleet {
    pub registry: Registry,
    pub launcher: Launcher,
    pub queues: Queues,
    /// With `pinTools`: the config's pins (docs/reference.md §10).
    pub pins: Option<Pins>,
    /// Every listing seen, per server definition: what `find_tools` searches.
    /// One per process, shared by every session it serves.
    pub catalog: Catalog,
    /// The fleet loop's events.
    events: Sender<Event>,
    /// The sessions served: one, or every session of a shared fleet (§8).
    sessions: Mutex<Vec<Weak<dyn SessionLink>>>,
}

impl Fleet {
    /// The fleet of `config`; `events`: its loop's channel (see
    /// `main_loop::start`, which builds it).
    fn new(config: &Config, launcher: Launcher, events: Sender<Event>) -> Fleet {
        Fleet {
            registry: Registry::new(config),
            launcher,
            queues: Queues::default(),
            pins: open_pins(config),
            catalog: Catalog::default(),
            events,
            sessions: Mutex::new(Vec::new()),
        }
    }

    /// Serves `session` from now on, until it is dropped (or `leave` is called).
    pub(crate) fn attach(&self, session: Weak<dyn SessionLink>) {
        let mut sessions = lock(&self.sessions);
        sessions.retain(|s| s.strong_count() > 0);
        sessions.push(session);
    }

    /// Stops serving the session of `reply`: it is gone. Its calls in flight
    /// are cancelled downstream, and its holds released: a toolbox no other
    /// session holds is closed.
    pub(crate) fn leave(self: &Arc<Self>, reply: &Arc<Outbox>) {
        let session = self.session_of(reply);
        lock(&self.sessions)
            .retain(|s| s.upgrade().is_some_and(|s| !Arc::ptr_eq(s.outbox(), reply)));
        for conn in self.launcher.live_conns() {
            conn.withdraw(reply, None);
        }
        let Some(session) = session else {
            return;
        };
        let held: Vec<Arc<Slot>> = self
            .registry
            .current()
            .all()
            .filter(|t| session.holds(&t.slot))
            .map(|t| Arc::clone(&t.slot))
            .collect();
        for slot in held {
            lifecycle::submit(
                self,
                &slot,
                queues::Op::Close {
                    id: None,
                    reply: Arc::clone(reply),
                    share: None,
                },
            );
        }
    }

    /// Every session served.
    pub(crate) fn sessions(&self) -> Vec<Arc<dyn SessionLink>> {
        lock(&self.sessions)
            .iter()
            .filter_map(Weak::upgrade)
            .collect()
    }

    /// The session whose outbox is `reply`, while it is served.
    pub(crate) fn session_of(&self, reply: &Arc<Outbox>) -> Option<Arc<dyn SessionLink>> {
        lock(&self.sessions)
            .iter()
            .filter_map(Weak::upgrade)
            .find(|s| Arc::ptr_eq(s.outbox(), reply))
    }

    /// How many sessions hold toolbox `slot` open.
    pub(crate) fn holders(&self, slot: &Slot) -> usize {
        self.sessions().iter().filter(|s| s.holds(slot)).count()
    }

    /// Answers `id` of session `reply` with `outcome`, unless it cancelled it
    /// or is gone.
    pub(crate) fn answer(&self, reply: &Arc<Outbox>, id: &RequestId, outcome: &Outcome) {
        if let Some(session) = self.session_of(reply) {
            if session.finish(id) {
                session.answer(id, outcome);
            }
        }
    }

    /// Tells every session what is open changed.
    pub(crate) fn tools_changed(&self) {
        let toolboxes = self.registry.current();
        for session in self.sessions() {
            session.tools_changed(&toolboxes);
        }
    }

    /// With `pinTools`, records a listing of `server` of `toolbox` and
    /// returns its pins to judge it by (see `visible`).
    pub(crate) fn pins_for(
        &self,
        toolbox: &str,
        server: &ServerConfig,
        tools: &[ToolEntry],
    ) -> Option<Arc<ServerPins>> {
        Some(self.pins.as_ref()?.listed(toolbox, server, tools))
    }

    /// With `pinTools`: reads the pins file again if it changed (an
    /// approval), judges every open server again, and tells the session if
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
