//! The toolboxes and what is open: which servers run for which toolbox, their
//! (filtered) tools, and the lookup behind `use_tool`.
//!
//! No IO here: starting and stopping processes is `launch`'s job, and the order
//! of opens and closes is `lifecycle`'s. Each toolbox has an `open` snapshot,
//! swapped atomically and read with a short lock by calls, which therefore
//! never wait for an open.

use crate::config::{ToolFilter, ToolboxConfig};
use crate::downstream::Downstream;
use crate::lock;
use crate::mcp::ToolEntry;
use crate::naming;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Every configured toolbox, in config order.
pub struct Registry {
    slots: Vec<Slot>,
    /// Dynamic mode's budget for native tool names (`dynamicNameMaxLength`).
    native_name_max: usize,
}

pub struct Slot {
    pub config: ToolboxConfig,
    open: Mutex<Option<Arc<OpenToolbox>>>,
    restarts: Mutex<HashMap<String, Restarts>>,
}

/// An open toolbox: one state per configured server, in config order.
#[derive(Clone)]
pub struct OpenToolbox {
    pub servers: Vec<ServerState>,
}

#[derive(Clone)]
pub enum ServerState {
    /// Shared: a new snapshot of the toolbox keeps its running servers as they are.
    Running(Arc<RunningServer>),
    /// Start-up failed; the text is the reason.
    Failed(String),
    Disabled,
}

pub struct RunningServer {
    pub conn: Arc<Downstream>,
    /// After `toolFilters`, in the server's order.
    pub tools: Vec<ToolEntry>,
    names: HashSet<String>,
    /// Tools the server has that `toolFilters` removed (for error messages).
    filtered_out: HashSet<String>,
    /// Filter entries that named no tool of the server.
    pub unknown_filters: Vec<String>,
    /// Increases with every listing, so the newer of two states of one
    /// connection can be told apart.
    listing: u64,
}

static LISTINGS: AtomicU64 = AtomicU64::new(0);

impl RunningServer {
    /// A running server's state, with its tools filtered.
    pub fn state(
        conn: Arc<Downstream>,
        all_tools: Vec<ToolEntry>,
        filter: &ToolFilter,
    ) -> ServerState {
        let all_names: Vec<String> = match filter {
            ToolFilter::All => Vec::new(),
            ToolFilter::Only(_) => all_tools.iter().map(|t| t.name.clone()).collect(),
        };
        let (tools, unknown_filters) = apply_filter(all_tools, filter);
        let names: HashSet<String> = tools.iter().map(|t| t.name.clone()).collect();
        let filtered_out = all_names
            .into_iter()
            .filter(|n| !names.contains(n))
            .collect();
        ServerState::Running(Arc::new(RunningServer {
            conn,
            tools,
            names,
            filtered_out,
            unknown_filters,
            listing: LISTINGS.fetch_add(1, Ordering::Relaxed),
        }))
    }

    pub fn has_tool(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    /// The `use_tool` error for a tool this server does not offer.
    fn missing_tool(&self, id: &ToolId) -> String {
        let base = format!(
            "Tool '{}' not found in server '{}' (toolbox '{}')",
            id.tool, id.server, id.toolbox
        );
        if self.filtered_out.contains(&id.tool) {
            format!(
                "{base}: the server has it, but it is filtered out by the workbench config \
                 (toolFilters of this server); use one of the tools open_toolbox listed"
            )
        } else {
            base
        }
    }
}

/// Keeps the tools `filter` selects, in the server's order; also returns the
/// filter entries that matched nothing.
pub fn apply_filter(tools: Vec<ToolEntry>, filter: &ToolFilter) -> (Vec<ToolEntry>, Vec<String>) {
    match filter {
        ToolFilter::All => (tools, Vec::new()),
        ToolFilter::Only(wanted) => {
            let unknown = wanted
                .iter()
                .filter(|w| !tools.iter().any(|t| &t.name == *w))
                .cloned()
                .collect();
            let kept = tools
                .into_iter()
                .filter(|t| wanted.contains(&t.name))
                .collect();
            (kept, unknown)
        }
    }
}

/// Where a `use_tool` call goes.
pub struct Route {
    /// Indices of the toolbox in the registry and of the server in its config.
    pub toolbox: usize,
    pub server: usize,
    /// The connection the server was opened with. If it has died since, it
    /// refuses the call, which then waits for a restart (`forward`).
    pub conn: Arc<Downstream>,
}

/// Restart history of one server, for the backoff of a server that keeps dying.
#[derive(Default, Clone, Copy)]
struct Restarts {
    last_start: Option<Instant>,
    quick_deaths: u32,
}

/// A server that dies within this time of its start counts as dying quickly.
const QUICK_DEATH: Duration = Duration::from_secs(10);
const BACKOFF_FIRST: Duration = Duration::from_millis(250);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// The `{toolbox, server, tool}` identifier of `use_tool`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolId {
    pub toolbox: String,
    pub server: String,
    pub tool: String,
}

impl Registry {
    pub fn new(toolboxes: Vec<ToolboxConfig>) -> Registry {
        Registry {
            slots: toolboxes
                .into_iter()
                .map(|config| Slot {
                    config,
                    open: Mutex::new(None),
                    restarts: Mutex::new(HashMap::new()),
                })
                .collect(),
            native_name_max: naming::DEFAULT_MAX_LEN,
        }
    }

    /// Sets dynamic mode's budget for native tool names.
    pub fn with_native_name_max(mut self, max: usize) -> Registry {
        self.native_name_max = max;
        self
    }

    pub fn native_name_max(&self) -> usize {
        self.native_name_max
    }

    pub fn slots(&self) -> &[Slot] {
        &self.slots
    }

    pub fn find(&self, name: &str) -> Option<&Slot> {
        self.slots.iter().find(|s| s.config.name == name)
    }

    pub fn names(&self) -> Vec<&str> {
        self.slots.iter().map(|s| s.config.name.as_str()).collect()
    }

    /// The connection that serves `id`, or the `use_tool` error text
    /// (docs/reference.md §5.2).
    pub fn resolve(&self, id: &ToolId) -> Result<Route, String> {
        let toolbox = self
            .slots
            .iter()
            .position(|s| s.config.name == id.toolbox)
            .ok_or_else(|| format!("Toolbox '{}' not found", id.toolbox))?;
        let slot = &self.slots[toolbox];
        let open = slot.snapshot().ok_or_else(|| not_open(&id.toolbox))?;
        let index = slot
            .config
            .servers
            .iter()
            .position(|s| s.name == id.server)
            .ok_or_else(|| unknown_server(&slot.config, id))?;

        match &open.servers[index] {
            ServerState::Running(running) if !running.has_tool(&id.tool) => {
                Err(running.missing_tool(id))
            }
            ServerState::Running(running) => Ok(Route {
                toolbox,
                server: index,
                conn: Arc::clone(&running.conn),
            }),
            ServerState::Failed(why) => Err(format!(
                "Tool '{}' cannot run: server '{}' in toolbox '{}' failed to start (call \
                 open_toolbox with toolbox_name '{}' to try again): {why}",
                id.tool, id.server, id.toolbox, id.toolbox
            )),
            ServerState::Disabled => Err(format!(
                "Server '{}' in toolbox '{}' is disabled in the configuration",
                id.server, id.toolbox
            )),
        }
    }
}

impl Registry {
    /// The toolbox and server index that `conn` serves, if any.
    pub fn find_conn(&self, conn: &Arc<Downstream>) -> Option<(&Slot, usize)> {
        self.slots.iter().find_map(|slot| {
            let open = slot.snapshot()?;
            let index = open.servers.iter().position(|s| match s {
                ServerState::Running(r) => Arc::ptr_eq(&r.conn, conn),
                _ => false,
            })?;
            Some((slot, index))
        })
    }

    /// The index of toolbox `name`.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.slots.iter().position(|s| s.config.name == name)
    }

    /// The connections of every open toolbox (for cancellation lookups).
    pub fn running_conns(&self) -> Vec<Arc<Downstream>> {
        self.slots
            .iter()
            .filter_map(Slot::snapshot)
            .flat_map(|open| open.running_conns())
            .collect()
    }
}

impl OpenToolbox {
    pub fn running_conns(&self) -> Vec<Arc<Downstream>> {
        self.servers
            .iter()
            .filter_map(|s| match s {
                ServerState::Running(r) => Some(Arc::clone(&r.conn)),
                _ => None,
            })
            .collect()
    }
}

impl Slot {
    pub fn snapshot(&self) -> Option<Arc<OpenToolbox>> {
        lock(&self.open).clone()
    }

    pub fn set_open(&self, open: Option<Arc<OpenToolbox>>) -> Option<Arc<OpenToolbox>> {
        std::mem::replace(&mut *lock(&self.open), open)
    }

    /// Installs `open`, keeping the current state of each server whose
    /// connection is unchanged and whose listing is newer: a re-list may have
    /// updated its tools while `open` was being built.
    pub fn install(&self, mut open: OpenToolbox) {
        let mut current = lock(&self.open);
        if let Some(current) = current.as_ref() {
            for (new, now) in open.servers.iter_mut().zip(&current.servers) {
                if let (ServerState::Running(n), ServerState::Running(c)) = (&*new, now) {
                    if Arc::ptr_eq(&n.conn, &c.conn) && c.listing > n.listing {
                        *new = now.clone();
                    }
                }
            }
        }
        *current = Some(Arc::new(open));
    }

    /// Replaces the snapshot with what `f` makes of it, when `f` returns one.
    pub fn update(
        &self,
        f: impl FnOnce(Option<&Arc<OpenToolbox>>) -> Option<Arc<OpenToolbox>>,
    ) -> bool {
        let mut current = lock(&self.open);
        match f(current.as_ref()) {
            Some(new) => {
                *current = Some(new);
                true
            }
            None => false,
        }
    }

    /// Records that `server` is being started now.
    pub fn note_start(&self, server: &str) {
        lock(&self.restarts)
            .entry(server.to_string())
            .or_default()
            .last_start = Some(Instant::now());
    }

    /// How long to wait before starting `server` again after it died: nothing
    /// the first time, then doubling from 250 ms up to 5 s while it keeps dying
    /// within 10 s of its start.
    pub fn restart_delay(&self, server: &str) -> Duration {
        let mut restarts = lock(&self.restarts);
        let entry = restarts.entry(server.to_string()).or_default();
        let quick = entry.last_start.is_some_and(|t| t.elapsed() < QUICK_DEATH);
        entry.quick_deaths = if quick { entry.quick_deaths + 1 } else { 0 };
        match entry.quick_deaths {
            0 | 1 => Duration::ZERO,
            n => (BACKOFF_FIRST * 2u32.saturating_pow(n - 2)).min(BACKOFF_MAX),
        }
    }
}

/// The `use_tool` error for a server the toolbox does not have: it lists the
/// servers it has.
fn unknown_server(config: &ToolboxConfig, id: &ToolId) -> String {
    let servers: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
    let available = if servers.is_empty() {
        "it has no servers".to_string()
    } else {
        format!("its servers are: {}", servers.join(", "))
    };
    format!(
        "Server '{}' not found in toolbox '{}'; {available}",
        id.server, id.toolbox
    )
}

/// The `use_tool` error for a configured toolbox that is not open.
pub fn not_open(toolbox: &str) -> String {
    format!(
        "Toolbox '{toolbox}' is not open; call open_toolbox with toolbox_name '{toolbox}' first"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::value::RawValue;

    fn tool(name: &str) -> ToolEntry {
        ToolEntry {
            name: name.to_string(),
            raw: RawValue::from_string(format!("{{\"name\":\"{name}\"}}")).unwrap(),
        }
    }

    #[test]
    fn filters_keep_server_order_and_report_unknown_names() {
        let all = || vec![tool("a"), tool("b"), tool("c")];
        let (kept, unknown) = apply_filter(all(), &ToolFilter::All);
        assert_eq!(kept.len(), 3);
        assert!(unknown.is_empty());
        let filter = ToolFilter::Only(vec!["c".into(), "zz".into(), "a".into()]);
        let (kept, unknown) = apply_filter(all(), &filter);
        let names: Vec<_> = kept.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a", "c"]);
        assert_eq!(unknown, ["zz"]);
        let (kept, _) = apply_filter(all(), &ToolFilter::Only(vec![]));
        assert!(kept.is_empty());
    }

    #[test]
    fn an_unknown_server_lists_the_toolboxs_servers() {
        let registry = Registry::new(vec![ToolboxConfig {
            name: "t".into(),
            description: "d".into(),
            servers: Vec::new(),
        }]);
        let id = ToolId {
            toolbox: "t".into(),
            server: "db".into(),
            tool: "q".into(),
        };
        let mut config = registry.slots()[0].config.clone();
        assert_eq!(
            unknown_server(&config, &id),
            "Server 'db' not found in toolbox 't'; it has no servers"
        );
        let root: serde_json::Value = serde_json::json!({"toolboxes": {"t": {"description": "d",
            "mcpServers": {"files": {"command": "x"}, "git": {"command": "y"}}}}});
        let file = std::env::temp_dir().join(format!("toolbox-test-{}.json", std::process::id()));
        std::fs::write(&file, root.to_string()).unwrap();
        let loaded = crate::config::load(&file);
        let _ = std::fs::remove_file(&file);
        config.servers = loaded.unwrap().config.toolboxes.remove(0).servers;
        assert_eq!(
            unknown_server(&config, &id),
            "Server 'db' not found in toolbox 't'; its servers are: files, git"
        );
    }

    #[test]
    fn restart_backoff_grows_only_for_quick_deaths() {
        let registry = Registry::new(vec![ToolboxConfig {
            name: "t".into(),
            description: "d".into(),
            servers: Vec::new(),
        }]);
        let slot = registry.find("t").unwrap();
        assert_eq!(slot.restart_delay("s"), Duration::ZERO, "never started");
        slot.note_start("s");
        assert_eq!(slot.restart_delay("s"), Duration::ZERO, "first quick death");
        let delays: Vec<Duration> = (0..6)
            .map(|_| {
                slot.note_start("s");
                slot.restart_delay("s")
            })
            .collect();
        let ms: Vec<u128> = delays.iter().map(Duration::as_millis).collect();
        assert_eq!(ms, [250, 500, 1000, 2000, 4000, 5000]);
        // A server that ran for a while starts over.
        lock(&slot.restarts).get_mut("s").unwrap().last_start =
            Some(Instant::now() - QUICK_DEATH - Duration::from_secs(1));
        assert_eq!(slot.restart_delay("s"), Duration::ZERO);
    }
}
