//! One host session: what the host negotiated (protocol version,
//! `clientInfo`, `notifications/initialized`), its outbox, the tool list it
//! sees (the meta-tools and, in dynamic mode, the native tools) with its
//! `notifications/tools/list_changed`, and its requests that wait in the
//! fleet (a queued open, close or call), with the ones it cancelled.
//!
//! The fleet reaches a session only through `fleet::SessionLink`, which this
//! implements. No thread and no child here; nothing here waits for anything
//! but the host's stdout lock.

use crate::config::expand::Vars;
use crate::config::{Config, Mode, ToolboxConfig};
use crate::fleet::launch;
use crate::fleet::toolbox::{Part, Slot, Toolboxes, Variant, BASE};
use crate::fleet::SessionLink;
use crate::lock;
use crate::protocol::jsonrpc::{self, RequestId};
use crate::protocol::mcp::{self, method};
use crate::tools::dynamic::NativeTable;
use crate::tools::meta_tools::{self, Outcome};
use crate::tools::open_result;
use crate::wire::outbox::Outbox;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

pub(crate) struct Session {
    pub outbox: Arc<Outbox>,
    /// `mode` as the session started: dynamic mode has native tools.
    mode: Mode,
    /// The host sent `notifications/initialized`: list_changed may be sent.
    pub initialized: AtomicBool,
    /// The negotiated protocol version, once `initialize` was answered.
    pub version: OnceLock<&'static str>,
    /// The host's `clientInfo.name`, once `initialize` was answered.
    pub client: OnceLock<Option<String>>,
    /// The meta-tools' `tools/list` entries, comma-separated, [without, with]
    /// `outputSchema`: built at start and again when the config is reloaded.
    meta_tools: Mutex<Arc<[String; 2]>>,
    /// Dynamic mode's native tools (empty in proxy mode).
    native: Mutex<Arc<NativeTable>>,
    /// Requests waiting in the fleet (queued opens, closes and calls): `true`
    /// once the host cancelled one.
    waiting: Mutex<HashMap<RequestId, bool>>,
    /// The toolboxes this session holds open (their `Slot::id`s).
    held: Mutex<HashSet<u64>>,
    /// A shared fleet's session (§8): who it is, and its copies of the toolboxes.
    pub peer: Option<Peer>,
}

/// What a shared fleet knows of a session besides its MCP state (§8).
pub(crate) struct Peer {
    /// The front process's pid (what `status` shows).
    pub pid: u32,
    /// The front's environment: this session's `${VAR}`s expand with it.
    pub env: Arc<Vars>,
    /// Unique in the fleet: what keeps a server with `"shareServers": false` its own.
    pub id: u64,
    /// The copies of each toolbox this session uses, by name.
    copies: Mutex<HashMap<String, Vec<Copy>>>,
}

/// One copy of a toolbox a session uses: which, and the servers it runs.
#[derive(Clone)]
pub(crate) struct Copy {
    pub variant: Variant,
    pub part: Part,
    servers: Vec<String>,
}

impl Peer {
    pub(crate) fn new(pid: u32, env: Vars, id: u64, config: &Config) -> Peer {
        let peer = Peer {
            pid,
            env: Arc::new(env),
            id,
            copies: Mutex::default(),
        };
        peer.configure(&config.toolboxes.iter().collect::<Vec<_>>());
        peer
    }

    /// Which copies of each toolbox this session uses under `configs`: the
    /// sessions whose servers would start alike share one.
    fn configure(&self, configs: &[&ToolboxConfig]) {
        let copies = configs
            .iter()
            .map(|t| (t.name.clone(), copies(t, &self.env, self.id)))
            .collect();
        *lock(&self.copies) = copies;
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
            variant: variant(config, part, env, id),
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

/// The variant of the `part` of toolbox `config` for a session with
/// environment `env`: a hash of everything each of its servers would start
/// with under it (program, arguments, working folder and the whole child
/// environment: the allow-listed variables, all of them with `inheritEnv`,
/// and `env`; an unset variable counts as unset), and of the session's `id`
/// when a server is not shared. Two sessions share a process only if it
/// would see no difference: one session's credentials never serve another's
/// calls.
fn variant(config: &ToolboxConfig, part: Part, env: &Vars, id: u64) -> Variant {
    let mut hasher = std::hash::DefaultHasher::new();
    part.hash(&mut hasher);
    for server in config.servers.iter().filter(|s| part.has(s)) {
        match launch::resolve(&config.name, server, Some(env)) {
            Ok(spec) => (0u8, spec.program, spec.args, spec.env, spec.cwd).hash(&mut hasher),
            Err(unset) => (1u8, unset).hash(&mut hasher),
        }
        if !server.shared {
            id.hash(&mut hasher);
        }
    }
    hasher.finish().max(1) // never BASE
}

impl Session {
    pub(crate) fn new(config: &Config, outbox: Arc<Outbox>) -> Session {
        let configs: Vec<&ToolboxConfig> = config.toolboxes.iter().collect();
        Session {
            outbox,
            mode: config.mode,
            initialized: AtomicBool::new(false),
            version: OnceLock::new(),
            client: OnceLock::new(),
            meta_tools: Mutex::new(Arc::new(meta_tools_entries(&configs))),
            native: Mutex::new(Arc::default()),
            waiting: Mutex::new(HashMap::new()),
            held: Mutex::default(),
            peer: None,
        }
    }

    /// A shared fleet's session (§8).
    pub(crate) fn attached(config: &Config, outbox: Arc<Outbox>, peer: Peer) -> Session {
        Session {
            peer: Some(peer),
            ..Session::new(config, outbox)
        }
    }

    /// The copies of toolbox `name` this session uses: `BASE`, or in a
    /// shared fleet one or two (see `copies`).
    pub(crate) fn copies_of(&self, name: &str) -> Vec<(Variant, Part)> {
        let copies = self.peer.as_ref().and_then(|peer| {
            let all = lock(&peer.copies);
            let found = all.get(name)?;
            Some(found.iter().map(|c| (c.variant, c.part)).collect())
        });
        copies.unwrap_or_else(|| vec![(BASE, Part::All)])
    }

    /// The copy of toolbox `name` that runs server `server` for this session
    /// (the first copy for a server it does not have: the error is the same).
    pub(crate) fn copy_of(&self, name: &str, server: &str) -> (Variant, Part) {
        let copy = self.peer.as_ref().and_then(|peer| {
            let all = lock(&peer.copies);
            let copies = all.get(name)?;
            let copy = copies
                .iter()
                .find(|c| c.servers.iter().any(|s| s == server))
                .or(copies.first())?;
            Some((copy.variant, copy.part))
        });
        copy.unwrap_or((BASE, Part::All))
    }

    /// The names of the toolboxes this session holds, in config order.
    pub(crate) fn held_names(&self, toolboxes: &Toolboxes) -> Vec<String> {
        let held = lock(&self.held);
        let holds = |name: &str| {
            toolboxes
                .all()
                .any(|t| t.config.name == name && held.contains(&t.slot.id))
        };
        toolboxes
            .names()
            .into_iter()
            .filter(|name| holds(name))
            .map(str::to_string)
            .collect()
    }

    /// The session serves dynamic mode (native tools).
    pub(crate) fn is_dynamic(&self) -> bool {
        self.mode == Mode::Dynamic
    }

    pub(crate) fn native(&self) -> Arc<NativeTable> {
        Arc::clone(&lock(&self.native))
    }

    /// The meta-tools' `tools/list` entries: [without, with] `outputSchema`.
    pub(crate) fn meta_tools(&self) -> Arc<[String; 2]> {
        Arc::clone(&lock(&self.meta_tools))
    }

    /// The form of `open_toolbox` results for this host, under the config's
    /// `openToolboxResult`.
    pub(crate) fn open_form(&self, setting: open_result::Setting) -> open_result::Form {
        let client = self.client.get().and_then(Option::as_deref);
        open_result::form_for(setting, client)
    }

    /// Whether results may carry `structuredContent` in this session (before
    /// `initialize`, the latest version is assumed).
    pub(crate) fn structured(&self) -> bool {
        mcp::has_structured_content(self.version.get().copied().unwrap_or(mcp::LATEST_VERSION))
    }

    /// Sends a meta-tool outcome as the `CallToolResult` of request `id`.
    pub(crate) fn send_outcome(&self, id: &RequestId, outcome: &Outcome) {
        let result = outcome.result(self.structured());
        self.outbox.send(&jsonrpc::result_line(id, &result));
    }

    /// The host cancelled `id`: if it waits in the fleet, it will get no answer.
    pub(crate) fn cancel(&self, id: &RequestId) -> bool {
        match lock(&self.waiting).get_mut(id) {
            Some(cancelled) => {
                *cancelled = true;
                true
            }
            None => false,
        }
    }

    /// Dynamic mode: builds the native tools again; whether they changed.
    fn rebuild_native(&self, toolboxes: &Toolboxes) -> bool {
        if self.mode != Mode::Dynamic {
            return false;
        }
        let held = lock(&self.held).clone();
        let table = NativeTable::build(toolboxes, |t| held.contains(&t.slot.id));
        let mut current = lock(&self.native);
        let changed = current.listing() != table.listing();
        *current = Arc::new(table);
        changed
    }

    /// Tells the host its tool list changed, once it is initialized.
    fn list_changed(&self) {
        if self.initialized.load(Ordering::SeqCst) {
            let line = jsonrpc::notification_line::<()>(method::TOOLS_LIST_CHANGED, None);
            self.outbox.send(&line);
        }
    }
}

impl SessionLink for Session {
    fn outbox(&self) -> &Arc<Outbox> {
        &self.outbox
    }

    fn holds(&self, slot: &Slot) -> bool {
        lock(&self.held).contains(&slot.id)
    }

    fn hold(&self, slot: &Slot, held: bool) {
        let mut holds = lock(&self.held);
        if held {
            holds.insert(slot.id);
        } else {
            holds.remove(&slot.id);
        }
    }

    fn wait(&self, id: &RequestId) {
        lock(&self.waiting).insert(id.clone(), false);
    }

    fn cancelled(&self, id: &RequestId) -> bool {
        lock(&self.waiting).get(id) == Some(&true)
    }

    fn finish(&self, id: &RequestId) -> bool {
        lock(&self.waiting).remove(id) == Some(false)
    }

    fn answer(&self, id: &RequestId, outcome: &Outcome) {
        self.send_outcome(id, outcome);
    }

    /// In dynamic mode, rebuilds the native tools and, if they changed and
    /// the host is initialized, sends one `notifications/tools/list_changed`.
    fn tools_changed(&self, toolboxes: &Toolboxes) {
        if self.rebuild_native(toolboxes) {
            self.list_changed();
        }
    }

    /// The meta-tools (toolbox names and descriptions) built from `configs`
    /// and the native tools again; one `notifications/tools/list_changed` if
    /// either changed.
    fn config_changed(&self, configs: &[&ToolboxConfig], toolboxes: &Toolboxes) {
        if let Some(peer) = &self.peer {
            peer.configure(configs);
        }
        let entries = Arc::new(meta_tools_entries(configs));
        let meta = std::mem::replace(&mut *lock(&self.meta_tools), Arc::clone(&entries));
        let native = self.rebuild_native(toolboxes);
        if meta != entries || native {
            self.list_changed();
        }
    }
}

/// The meta-tools' `tools/list` entries, comma-separated: [without, with]
/// `outputSchema`.
fn meta_tools_entries(toolboxes: &[&ToolboxConfig]) -> [String; 2] {
    [false, true].map(|structured| {
        let list = meta_tools::tools_list(toolboxes, structured);
        let text = list["tools"].to_string();
        text[1..text.len() - 1].to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::config::one_server_toolbox as toolbox;

    fn vars(pairs: &[(&str, &str)]) -> Vars {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn sessions_share_a_server_only_if_it_would_start_alike() {
        // PATH is allow-listed on every system.
        let alice = vars(&[("PATH", "/bin"), ("GH_TOKEN", "alice")]);
        let bob = vars(&[("PATH", "/bin"), ("GH_TOKEN", "bob")]);
        let same = |server: &str, a: &Vars, b: &Vars| {
            let config = toolbox(server);
            variant(&config, Part::All, a, 1) == variant(&config, Part::All, b, 2)
        };
        // GH_TOKEN reaches the child only through inheritEnv or a reference.
        assert!(same(r#"{"command": "gh"}"#, &alice, &bob));
        assert!(!same(
            r#"{"command": "gh", "inheritEnv": true}"#,
            &alice,
            &bob
        ));
        assert!(!same(
            r#"{"command": "gh", "env": {"T": "${GH_TOKEN}"}}"#,
            &alice,
            &bob
        ));
        // The allow-listed variables always reach it.
        let elsewhere = vars(&[("PATH", "/usr/bin"), ("GH_TOKEN", "alice")]);
        assert!(!same(r#"{"command": "gh"}"#, &alice, &elsewhere));
        // A server that is not shared is each session's own.
        assert!(!same(
            r#"{"command": "gh", "shareServers": false}"#,
            &alice,
            &alice
        ));
    }
}
