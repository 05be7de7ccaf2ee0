//! What the fleet tells a host session, on the session's own channel: one
//! closed enum of facts, sent by the fleet's threads and read only by the
//! session's loop, which alone decides what the host hears of them. No IO,
//! no threads, no rendering: the texts here are reasons, and the session
//! puts them in its answers.

use super::forward::ForwardedCall;
use super::toolbox::OpenToolbox;
use crate::config::ToolboxConfig;
use crate::protocol::awaiting::Key;
use crate::sys::Waker;
use crossbeam_channel::Sender;
use std::sync::Arc;

/// A fact for one session. A request that waited in the fleet is named by
/// the session's own number for it (`Asked::seq`).
pub(crate) enum Fact {
    /// Copy `part` of a toolbox the session asked to open was opened, or why not.
    Opened {
        seq: Key,
        part: usize,
        found: OpenFound,
    },
    /// Copy `part` of a toolbox the session asked to close was closed.
    Closed {
        seq: Key,
        part: usize,
        closed: Closed,
    },
    /// The server these calls waited for was started again (`Ok`: the
    /// session forwards them now), or why it could not be.
    Restarted {
        calls: Vec<(Key, ForwardedCall)>,
        started: Result<(), String>,
    },
    /// A request could not wait in the fleet (no thread for its toolbox's
    /// worker): why.
    Failed { seq: Key, why: String },
    /// What is open changed (an open, close, restart, sleep or re-list):
    /// the session's tools may have changed.
    ToolsChanged,
    /// A reload was applied: the toolboxes configured now.
    ConfigChanged(Arc<[ToolboxConfig]>),
}

/// Where a session's facts go: its channel, and the waker of its loop's
/// wait where the loop waits on more than the channel (`host::inbox`).
/// Sending never blocks.
pub(crate) struct Mailbox {
    facts: Sender<Fact>,
    wake: Option<Waker>,
}

impl Mailbox {
    pub(crate) fn new(facts: Sender<Fact>, wake: Option<Waker>) -> Mailbox {
        Mailbox { facts, wake }
    }

    /// Tells the session `fact` (nothing, if its loop is gone).
    pub(crate) fn send(&self, fact: Fact) {
        if self.facts.send(fact).is_ok() {
            if let Some(wake) = &self.wake {
                wake.wake();
            }
        }
    }
}

/// A host request that waits in the fleet: the session that asked, and the
/// session's number for it, its key in the session's table of requests
/// awaiting an answer (`protocol::awaiting`: the host may use a request id
/// again once it was answered or cancelled; this number is never used
/// again). The fleet holds only this name of a request, in the queues'
/// operations; the session's table holds the request and answers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Asked {
    pub session: crate::wire::SessionId,
    pub seq: Key,
}

/// What opening one copy found.
pub(crate) struct Opened {
    /// The copy's definition (only the servers of its part).
    pub config: Arc<ToolboxConfig>,
    /// Each of its servers' state, in `config` order.
    pub open: OpenToolbox,
    /// Servers that had stopped and were started again: each one's name and why it had stopped.
    pub restarted: Vec<(String, String)>,
    /// None of its enabled servers started: the copy stayed closed.
    pub failed: bool,
}

/// Why a copy was not opened.
#[derive(Debug)]
pub(crate) enum NotOpened {
    /// The toolbox is not configured (a reload removed it).
    NotConfigured,
    /// The reason, for the host (an unset variable, a session that left).
    Refused(String),
}

/// What opening one copy found, or why it could not be opened.
pub(crate) type OpenFound = Result<Opened, NotOpened>;

/// What closing one copy did.
#[derive(Debug, PartialEq)]
pub(crate) enum Closed {
    /// It was open for this session: this many servers stopped.
    Stopped(usize),
    /// This session's hold is released; this many other sessions still hold it.
    Released(usize),
    NotOpen,
    /// The toolbox is not configured (a reload removed it).
    NotConfigured,
}
