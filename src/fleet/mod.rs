//! The fleet: the toolboxes and their servers, and everything that happens
//! to them outside a call: opens, closes, restarts, sleeps, reloads and
//! re-lists (`lifecycle`, on each toolbox's worker), decided by one loop that
//! owns the fleet's timers (`main_loop`).
//!
//! The fleet serves a host session through `SessionLink` alone, and imports
//! no session code: the next step (one fleet for several sessions,
//! docs/reference.md §8) replaces the one link with a list. Calls do not pass
//! through the fleet: a session resolves them in the registry and writes
//! them to the child itself (`forward`).

pub(crate) mod event;
pub(crate) mod lifecycle;
pub(crate) mod main_loop;
pub(crate) mod queues;
pub(crate) mod reload;
pub(crate) mod timers;

use crate::config::{Config, ToolboxConfig};
use crate::jsonrpc::RequestId;
use crate::launch::Launcher;
use crate::meta_tools::Outcome;
use crate::toolbox::{Registry, Toolboxes};
use crossbeam_channel::Sender;
use event::Event;
use queues::Queues;
use std::path::PathBuf;
use std::sync::{Arc, Weak};

/// What the fleet needs of a host session. Each call is quick: it may write
/// one line to the host, and waits for nothing else.
pub(crate) trait SessionLink: Send + Sync {
    /// Host request `id` waits in the fleet (a queued open, close or call).
    fn wait(&self, id: &RequestId);
    /// Whether the host cancelled `id`, which waits in the fleet.
    fn cancelled(&self, id: &RequestId) -> bool;
    /// `id` is done waiting: whether it is to be answered (not cancelled).
    fn finish(&self, id: &RequestId) -> bool;
    /// Sends `outcome` as the `CallToolResult` of `id`.
    fn answer(&self, id: &RequestId, outcome: &Outcome);
    /// What is open changed (an open, close, restart or re-list): the
    /// session's tools may have changed.
    fn tools_changed(&self, toolboxes: &Toolboxes);
    /// A reload was applied: `configs` are the configured toolboxes now.
    fn config_changed(&self, configs: &[&ToolboxConfig], toolboxes: &Toolboxes);
}

/// The state the fleet's threads share: the registry, the launcher, the
/// lifecycle queues, the loop's channel and the session served.
pub(crate) struct Fleet {
    pub registry: Registry,
    pub launcher: Launcher,
    pub queues: Queues,
    /// The fleet loop's events.
    events: Sender<Event>,
    session: Weak<dyn SessionLink>,
}

impl Fleet {
    /// The fleet of `config`; `events`: its loop's channel (see
    /// `main_loop::start`, which builds it).
    fn new(
        config: &Config,
        launcher: Launcher,
        events: Sender<Event>,
        session: Weak<dyn SessionLink>,
    ) -> Fleet {
        Fleet {
            registry: Registry::new(config),
            launcher,
            queues: Queues::default(),
            events,
            session,
        }
    }

    /// The session served, while it lasts.
    pub(crate) fn session(&self) -> Option<Arc<dyn SessionLink>> {
        self.session.upgrade()
    }

    /// Answers `id` with `outcome`, unless the host cancelled it.
    pub(crate) fn answer(&self, id: &RequestId, outcome: &Outcome) {
        if let Some(session) = self.session() {
            if session.finish(id) {
                session.answer(id, outcome);
            }
        }
    }

    /// Tells the session what is open changed.
    pub(crate) fn tools_changed(&self) {
        if let Some(session) = self.session() {
            session.tools_changed(&self.registry.current());
        }
    }

    /// Sends `event` to the fleet loop.
    pub(crate) fn event(&self, event: Event) {
        let _ = self.events.send(event);
    }

    /// Applies config file `path` again whenever it changes, and at once on
    /// SIGUSR1; `applied` is the config running now.
    pub(crate) fn watch_config(&self, path: PathBuf, applied: Config) {
        self.event(Event::WatchConfig {
            path,
            applied,
            events: self.events.clone(),
        });
    }
}
