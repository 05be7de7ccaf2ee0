//! One host session's state, owned by its loop (`server`): what the host
//! negotiated (protocol version, `clientInfo`, `notifications/initialized`),
//! its outbox, the tool list it sees (the meta-tools and, in dynamic mode,
//! the native tools) with its `notifications/tools/list_changed`, and its
//! requests that wait in the fleet (a queued open, close or call).
//!
//! Plain fields with one owner: no thread and no lock here, and nothing
//! waits for anything but the host's stdout lock.

use super::split;
use crate::config::expand::Vars;
use crate::config::{Config, Mode, ToolboxConfig};
use crate::fleet::facts::{Asked, Closed, OpenFound};
use crate::fleet::toolbox::{Part, Toolboxes, Variant, BASE};
use crate::protocol::awaiting::{Awaiting, Key};
use crate::protocol::jsonrpc::{self, RequestId};
use crate::protocol::mcp::{self, method};
use crate::tools::dynamic::NativeTable;
use crate::tools::open_result;
use crate::tools::{self, Outcome};
use crate::wire::outbox::Outbox;
use crate::wire::SessionId;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

pub(crate) struct Session {
    pub id: SessionId,
    pub outbox: Arc<Outbox>,
    /// `mode` as the session started: dynamic mode has native tools.
    mode: Mode,
    /// The host sent `notifications/initialized`: list_changed may be sent.
    pub initialized: bool,
    /// The negotiated protocol version, once `initialize` was answered.
    pub version: Option<&'static str>,
    /// The host's `clientInfo.name`, once `initialize` was answered.
    pub client: Option<String>,
    /// The meta-tools' `tools/list` entries, comma-separated, [without, with]
    /// `outputSchema`: built at start and again when the config is reloaded.
    meta_tools: [String; 2],
    /// Dynamic mode's native tools (empty in proxy mode).
    native: NativeTable,
    /// Requests waiting in the fleet, by the session's number for each (the
    /// table is never closed: once the loop ends, the host hears no more).
    waiting: Awaiting<Waiting>,
    /// A shared fleet's session (§8): who it is, and its copies of the toolboxes.
    pub peer: Option<Peer>,
}

/// A host request that waits in the fleet, and what its answer needs.
pub(crate) enum Waiting {
    /// `open_toolbox`: the answer's form, the tools asked for in full, the
    /// toolbox as configured when it went to two copies, and what each
    /// copy found so far.
    Open {
        id: RequestId,
        name: String,
        form: open_result::Form,
        requested: Option<Vec<String>>,
        base: Option<Arc<ToolboxConfig>>,
        parts: Parts<OpenFound>,
    },
    /// `close_toolbox`, and what closing each copy did so far.
    Close {
        id: RequestId,
        name: String,
        parts: Parts<Closed>,
    },
    /// A call that waits for a start of its server.
    Call { id: RequestId },
}

impl Waiting {
    pub(crate) fn id(&self) -> &RequestId {
        match self {
            Waiting::Open { id, .. } | Waiting::Close { id, .. } | Waiting::Call { id } => id,
        }
    }
}

/// What one copy of a toolbox reported to an open or a close.
pub(crate) enum Found {
    Open(OpenFound),
    Close(Closed),
}

/// What each of a request's copies reported, until all have.
pub(crate) struct Parts<T>(Vec<Option<T>>);

impl<T> Parts<T> {
    pub(crate) fn new(n: usize) -> Parts<T> {
        Parts((0..n).map(|_| None).collect())
    }

    /// Reports part `index`: whether every part has reported now.
    pub(crate) fn put(&mut self, index: usize, found: T) -> bool {
        if let Some(slot) = self.0.get_mut(index) {
            *slot = Some(found);
        }
        self.0.iter().all(Option::is_some)
    }

    /// Every part, in order.
    pub(crate) fn into_all(self) -> Vec<T> {
        self.0.into_iter().flatten().collect()
    }
}

/// What a shared fleet knows of a session besides its MCP state (§8).
pub(crate) struct Peer {
    /// What `status` shows of the session, read by the fleet's other threads.
    pub card: Arc<Card>,
    /// The front's environment: this session's `${VAR}`s expand with it.
    pub env: Arc<Vars>,
    /// The copies of each toolbox this session uses, by name.
    copies: HashMap<String, Vec<Copy>>,
}

/// What `status` shows of a shared fleet's session.
pub(crate) struct Card {
    pub id: SessionId,
    /// The front process's pid.
    pub pid: u32,
    /// The host's `clientInfo.name`, once `initialize` was answered.
    pub client: OnceLock<Option<String>>,
}

/// One copy of a toolbox a session uses: which, and the servers it runs.
#[derive(Clone)]
pub(crate) struct Copy {
    pub variant: Variant,
    pub part: Part,
    servers: Vec<String>,
}

impl Peer {
    pub(crate) fn new(card: Arc<Card>, env: Vars, config: &Config) -> Peer {
        let mut peer = Peer {
            card,
            env: Arc::new(env),
            copies: HashMap::new(),
        };
        peer.configure(&config.toolboxes.iter().collect::<Vec<_>>());
        peer
    }

    /// Which copies of each toolbox this session uses under `configs`: the
    /// sessions whose servers would start alike share one.
    fn configure(&mut self, configs: &[&ToolboxConfig]) {
        let id = self.card.id.get();
        self.copies = configs
            .iter()
            .map(|t| (t.name.clone(), copies(t, &self.env, id)))
            .collect();
    }
}

/// The copies of toolbox `config` for a session with environment `env`: one
/// of every server, or, when it mixes shared servers with ones that are not
/// (`"shareServers": false`), one of each kind, so the shared ones stay
/// shared with the sessions that start them alike (§8).
fn copies(config: &ToolboxConfig, env: &Vars, id: u64) -> Vec<Copy> {
    let shared = config.servers.iter().filter(|s| s.shared).count();
    let parts: &[Part] = match shared {
        n if n == 0 || n == config.servers.len() => &[Part::All],
        _ => &[Part::Shared, Part::Own],
    };
    parts
        .iter()
        .map(|&part| Copy {
            variant: split::variant(config, part, env, id),
            part,
            servers: config
                .servers
                .iter()
                .filter(|s| part.has(s))
                .map(|s| s.name.clone())
                .collect(),
        })
        .collect()
}

impl Session {
    /// Session `id` (its fleet's: `Fleet::new_session_id`), writing to
    /// the host through `outbox`.
    pub(crate) fn new(config: &Config, outbox: Arc<Outbox>, id: SessionId) -> Session {
        let configs: Vec<&ToolboxConfig> = config.toolboxes.iter().collect();
        Session {
            id,
            outbox,
            mode: config.mode,
            initialized: false,
            version: None,
            client: None,
            meta_tools: meta_tools_entries(&configs),
            native: NativeTable::default(),
            waiting: Awaiting::default(),
            peer: None,
        }
    }

    /// A shared fleet's session (§8), known to the fleet by its card's id.
    pub(crate) fn attached(config: &Config, outbox: Arc<Outbox>, peer: Peer) -> Session {
        let id = peer.card.id;
        Session {
            peer: Some(peer),
            ..Session::new(config, outbox, id)
        }
    }

    /// The copies of toolbox `name` this session uses: `BASE`, or in a
    /// shared fleet one or two (see `copies`).
    pub(crate) fn copies_of(&self, name: &str) -> Vec<(Variant, Part)> {
        let copies = self.peer.as_ref().and_then(|peer| {
            let found = peer.copies.get(name)?;
            Some(found.iter().map(|c| (c.variant, c.part)).collect())
        });
        copies.unwrap_or_else(|| vec![(BASE, Part::All)])
    }

    /// The copy of toolbox `name` that runs server `server` for this session
    /// (the first copy for a server it does not have: the error is the same).
    pub(crate) fn copy_of(&self, name: &str, server: &str) -> (Variant, Part) {
        let copy = self.peer.as_ref().and_then(|peer| {
            let copies = peer.copies.get(name)?;
            let copy = copies
                .iter()
                .find(|c| c.servers.iter().any(|s| s == server))
                .or(copies.first())?;
            Some((copy.variant, copy.part))
        });
        copy.unwrap_or((BASE, Part::All))
    }

    /// The session serves dynamic mode (native tools).
    pub(crate) fn is_dynamic(&self) -> bool {
        self.mode == Mode::Dynamic
    }

    pub(crate) fn native(&self) -> &NativeTable {
        &self.native
    }

    /// The meta-tools' `tools/list` entries: [without, with] `outputSchema`.
    pub(crate) fn meta_tools(&self) -> &[String; 2] {
        &self.meta_tools
    }

    /// The form of `open_toolbox` results for this host, under the config's
    /// `openToolboxResult`.
    pub(crate) fn open_form(&self, setting: crate::config::OpenToolboxResult) -> open_result::Form {
        open_result::form_for(setting, self.client.as_deref())
    }

    /// Whether results may carry `structuredContent` in this session (before
    /// `initialize`, the latest version is assumed).
    pub(crate) fn structured(&self) -> bool {
        mcp::has_structured_content(self.version.unwrap_or(mcp::LATEST_VERSION))
    }

    /// Sends a meta-tool outcome as the `CallToolResult` of request `id`.
    pub(crate) fn send_outcome(&self, id: &RequestId, outcome: &Outcome) {
        let result = outcome.result(self.structured());
        self.outbox.send(&jsonrpc::result_line(id, &result));
    }

    /// Parks request `waiting` while it waits in the fleet: what the fleet
    /// knows it by.
    pub(crate) fn park(&mut self, waiting: Waiting) -> Asked {
        let Ok(seq) = self.waiting.register(waiting);
        Asked {
            session: self.id,
            seq,
        }
    }

    /// Request `seq` is done waiting: what it waited with, unless the host
    /// cancelled it.
    pub(crate) fn finish(&mut self, seq: Key) -> Option<Waiting> {
        self.waiting.complete(seq)
    }

    /// What copy `part` of request `seq` found: the request, done waiting,
    /// once every copy it went to reported; `None` before, or when the host
    /// cancelled it.
    pub(crate) fn report(&mut self, seq: Key, part: usize, found: Found) -> Option<Waiting> {
        let complete = match (self.waiting.get_mut(seq)?, found) {
            (Waiting::Open { parts, .. }, Found::Open(found)) => parts.put(part, found),
            (Waiting::Close { parts, .. }, Found::Close(closed)) => parts.put(part, closed),
            _ => false,
        };
        complete.then(|| self.waiting.complete(seq)).flatten()
    }

    /// The host cancelled `id`: if it waits in the fleet, it will get no
    /// answer; what the fleet knows it by.
    pub(crate) fn cancel(&mut self, id: &RequestId) -> Option<Asked> {
        let (seq, _) = self.waiting.cancel(|w| w.id() == id)?;
        Some(Asked {
            session: self.id,
            seq,
        })
    }

    /// What is open changed: in dynamic mode, builds the native tools again
    /// from `toolboxes` (showing the copies this session holds, `held`) and,
    /// if they changed, sends one `notifications/tools/list_changed`.
    pub(crate) fn tools_changed(&mut self, toolboxes: &Toolboxes, held: &HashSet<u64>) {
        if self.rebuild_native(toolboxes, held) {
            self.list_changed();
        }
    }

    /// A reload was applied: the meta-tools (toolbox names and descriptions)
    /// built from `configs` and the native tools again; one
    /// `notifications/tools/list_changed` if either changed.
    pub(crate) fn config_changed(
        &mut self,
        configs: &[ToolboxConfig],
        toolboxes: &Toolboxes,
        held: &HashSet<u64>,
    ) {
        let configs: Vec<&ToolboxConfig> = configs.iter().collect();
        if let Some(peer) = &mut self.peer {
            peer.configure(&configs);
        }
        let entries = meta_tools_entries(&configs);
        let meta = std::mem::replace(&mut self.meta_tools, entries) != self.meta_tools;
        let native = self.rebuild_native(toolboxes, held);
        if meta || native {
            self.list_changed();
        }
    }

    /// Dynamic mode: builds the native tools again; whether they changed.
    fn rebuild_native(&mut self, toolboxes: &Toolboxes, held: &HashSet<u64>) -> bool {
        if self.mode != Mode::Dynamic {
            return false;
        }
        let table = NativeTable::build(toolboxes, |t| held.contains(&t.slot.id));
        let changed = self.native.listing() != table.listing();
        self.native = table;
        changed
    }

    /// Tells the host its tool list changed, once it is initialized.
    fn list_changed(&self) {
        if self.initialized {
            let line = jsonrpc::notification_line::<()>(method::TOOLS_LIST_CHANGED, None);
            self.outbox.send(&line);
        }
    }
}

/// The meta-tools' `tools/list` entries, comma-separated: [without, with]
/// `outputSchema`.
fn meta_tools_entries(toolboxes: &[&ToolboxConfig]) -> [String; 2] {
    [false, true].map(|structured| {
        let list = tools::tools_list(toolboxes, structured);
        let text = list["tools"].to_string();
        text[1..text.len() - 1].to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn session() -> Session {
        let text = br#"{"toolboxes":{}}"#;
        let config = crate::config::parse(text, Path::new("c.json"), Path::new("/c"))
            .unwrap()
            .config;
        Session::new(
            &config,
            Arc::new(Outbox::new(Box::new(std::io::sink()))),
            crate::wire::SessionIds::default().next(),
        )
    }

    fn close(id: i64, parts: usize) -> Waiting {
        Waiting::Close {
            id: RequestId::Int(id),
            name: "t".into(),
            parts: Parts::new(parts),
        }
    }

    #[test]
    fn a_waiting_request_is_answered_once_its_copies_all_reported() {
        let mut s = session();
        let asked = s.park(close(7, 2));
        assert_eq!(asked.session, s.id);
        let found = || Found::Close(Closed::NotOpen);
        assert!(s.report(asked.seq, 0, found()).is_none(), "one copy left");
        let done = s
            .report(asked.seq, 1, found())
            .expect("both copies reported");
        assert_eq!(done.id(), &RequestId::Int(7));
        assert!(s.report(asked.seq, 1, found()).is_none(), "answered once");
        assert!(s.finish(asked.seq).is_none());
    }

    #[test]
    fn a_cancelled_request_gets_no_answer_and_its_number_is_not_reused() {
        let mut s = session();
        let first = s.park(Waiting::Call {
            id: RequestId::Int(1),
        });
        let second = s.park(close(2, 1));
        assert_ne!(first.seq, second.seq);
        assert_eq!(s.cancel(&RequestId::Int(3)), None, "not waiting");
        assert_eq!(s.cancel(&RequestId::Int(2)), Some(second));
        assert!(s
            .report(second.seq, 0, Found::Close(Closed::NotOpen))
            .is_none());
        assert!(s.finish(first.seq).is_some());
        // The host may use id 2 again: a new number.
        let again = s.park(close(2, 1));
        assert!(again.seq > second.seq);
    }
}
