//! The toolboxes and what is open: which servers run for which toolbox, their
//! (filtered) tools, and the lookup behind `use_tool`.
//!
//! No IO here, and nothing of the lifecycle: starting and stopping processes
//! is `launch`'s job, and the order of opens and closes is the fleet's, which
//! keys its queues by a toolbox's `Slot`. The whole state is one snapshot,
//! `Toolboxes`, replaced as a whole under a short lock (copy on write): a call
//! reads it with one lock, as it read one toolbox's before, and never waits
//! for an open; a reloaded config swaps the set of toolboxes the same way.

use crate::config::expand::Vars;
use crate::config::suggest;
use crate::config::OpenToolboxResult;
use crate::config::{Config, ServerConfig, ToolboxConfig};
use crate::downstream::Downstream;
use crate::fleet::visible::{visible, Visible};
use crate::lock;
use crate::pins::{self, ServerPins};
use crate::protocol::mcp::ToolEntry;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Every configured toolbox and what is open, as one snapshot; and the
/// numbers of its toolbox copies and their listings.
pub(crate) struct Registry {
    current: Mutex<Arc<Toolboxes>>,
    /// The next toolbox copy's `Slot::id`.
    slots: AtomicU64,
    /// The next listing's number (`RunningServer::listing`).
    listings: AtomicU64,
}

/// A snapshot of the registry: the toolboxes in config order, then the ones a
/// reload removed whose servers are still being stopped.
#[derive(Clone)]
pub(crate) struct Toolboxes {
    entries: Vec<Toolbox>,
    /// `dynamicNameMaxLength`: dynamic mode's budget for native tool names.
    pub native_name_max: usize,
    /// `openToolboxResult`.
    pub open_setting: OpenToolboxResult,
}

/// Which copy of a toolbox: `BASE` in a workbench of its own; in a shared
/// fleet (§8), one per distinct expansion of its servers' definitions.
pub(crate) type Variant = u64;

/// The toolbox as configured, expanded with the workbench's own environment.
pub(crate) const BASE: Variant = 0;

/// Which of a toolbox's servers a copy runs. A shared fleet's session whose
/// toolbox mixes shared servers with `"shareServers": false` ones uses two
/// copies (§8): one of the shared servers, which sessions that start them
/// alike share, and one of its own servers; elsewhere a copy runs them all.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Part {
    All,
    Shared,
    Own,
}

impl Part {
    /// Whether this part runs `server`.
    pub(crate) fn has(self, server: &ServerConfig) -> bool {
        match self {
            Part::All => true,
            Part::Shared => server.shared,
            Part::Own => !server.shared,
        }
    }

    /// `config` with only the servers of this part.
    pub(crate) fn of(self, config: &ToolboxConfig) -> ToolboxConfig {
        let mut part = config.clone();
        part.servers.retain(|server| self.has(server));
        part
    }
}

/// One toolbox: its identity, its definition and what of it is open.
#[derive(Clone)]
pub(crate) struct Toolbox {
    pub slot: Arc<Slot>,
    pub config: Arc<ToolboxConfig>,
    /// `BASE`, or the variant a shared fleet's session made (`add_variant`).
    pub variant: Variant,
    /// Which of the configured servers it runs: `config` has only those.
    pub part: Part,
    /// The environment its `${VAR}`s expand with: the process's own when `None`.
    pub env: Option<Arc<Vars>>,
    pub open: Option<Arc<OpenToolbox>>,
    /// A reload removed it: no name lookup finds it, and its lifecycle queue
    /// drops it once the operations queued before the reload are done.
    pub removed: bool,
}

/// What lasts of a toolbox across reloads while it is configured: its
/// identity. A toolbox removed by a reload and one added again under its
/// name are two slots.
pub(crate) struct Slot {
    /// Unique in its registry: the fleet keys its queues by it.
    pub id: u64,
    pub name: String,
}

/// An open toolbox: one state per configured server, in config order.
#[derive(Clone)]
pub(crate) struct OpenToolbox {
    pub servers: Vec<ServerState>,
}

#[derive(Clone)]
pub(crate) enum ServerState {
    /// Shared: a new snapshot of the toolbox keeps its running servers as they are.
    Running(Arc<RunningServer>),
    /// Stopped after `idleTimeoutMs` without a call: `open_toolbox` answers
    /// from this last listing, and the next call starts it again.
    Asleep(Arc<RunningServer>),
    /// Its definition changed in a reloaded config (or it was added), or its
    /// toolbox was opened by a call to another of its servers: it starts at
    /// its next use (`None`: it never ran). The old process, if any, finishes
    /// its calls in flight and stops; its listing serves dynamic mode's names
    /// meanwhile.
    Reconfigured(Option<Arc<RunningServer>>),
    /// Start-up failed; the text is the reason.
    Failed(String),
    Disabled,
}

impl ServerState {
    /// The server's last listing, whether its process runs or not.
    pub(crate) fn listing(&self) -> Option<&Arc<RunningServer>> {
        match self {
            ServerState::Running(r) | ServerState::Asleep(r) => Some(r),
            ServerState::Reconfigured(r) => r.as_ref(),
            ServerState::Failed(_) | ServerState::Disabled => None,
        }
    }
}

pub(crate) struct RunningServer {
    pub conn: Arc<Downstream>,
    /// What the model may see (`visible`): filtered, pins and overrides
    /// applied, in the server's order.
    pub tools: Vec<ToolEntry>,
    names: HashSet<String>,
    /// With pins, the server's own listing, all of it: what is judged
    /// again when the pins change (without, nothing is kept twice).
    listed: Option<Arc<Vec<ToolEntry>>>,
    /// What was kept from the model, and why (for warnings and errors).
    pub kept_back: Visible,
    /// Increases with every listing, so the newer of two states of one
    /// connection can be told apart.
    listing: u64,
}

impl RunningServer {
    /// A running server's state: of `listing` (numbered `number` by the
    /// registry: `Registry::next_listing`), what `server`'s model may see
    /// (`visible`), with `pins` when tools are pinned.
    pub(crate) fn state(
        number: u64,
        conn: Arc<Downstream>,
        listing: Vec<ToolEntry>,
        server: &ServerConfig,
        pins: Option<&ServerPins>,
    ) -> ServerState {
        ServerState::Running(Arc::new(RunningServer::build(
            conn, listing, server, pins, number,
        )))
    }

    fn build(
        conn: Arc<Downstream>,
        listing: Vec<ToolEntry>,
        server: &ServerConfig,
        pins: Option<&ServerPins>,
        number: u64,
    ) -> RunningServer {
        let listed = pins.is_some().then(|| Arc::new(listing.clone()));
        let mut seen = visible(listing, server, pins);
        let tools = std::mem::take(&mut seen.tools);
        RunningServer {
            conn,
            names: tools.iter().map(|t| t.name.clone()).collect(),
            tools,
            listed,
            kept_back: seen,
            listing: number,
        }
    }

    /// The same listing judged again with `pins` (they changed): `None`
    /// when what the model sees stays the same, or the listing was not
    /// kept (it was judged without pins).
    pub(crate) fn rejudged(
        &self,
        server: &ServerConfig,
        pins: Option<&ServerPins>,
    ) -> Option<RunningServer> {
        let listing = self.listed.as_ref()?;
        let again = RunningServer::build(
            Arc::clone(&self.conn),
            Vec::clone(listing),
            server,
            pins,
            self.listing,
        );
        let same = again.kept_back.held == self.kept_back.held
            && again.tools.len() == self.tools.len()
            && again
                .tools
                .iter()
                .zip(&self.tools)
                .all(|(a, b)| a.raw.get() == b.raw.get());
        (!same).then_some(again)
    }

    pub(crate) fn has_tool(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    /// The `use_tool` error for a tool this server does not offer.
    pub(crate) fn missing_tool(&self, id: &ToolId) -> String {
        if self.kept_back.held.iter().any(|(n, _)| *n == id.tool) {
            return pins::refusal(&id.toolbox, &id.server, &id.tool);
        }
        let base = format!(
            "Tool '{}' not found in server '{}' (toolbox '{}')",
            id.tool, id.server, id.toolbox
        );
        if self.kept_back.filtered_out.contains(&id.tool) {
            format!(
                "{base}: the server has it, but it is filtered out by the workbench config \
                 (toolFilters of this server); use one of the tools open_toolbox listed"
            )
        } else {
            let names: Vec<&str> = self.tools.iter().map(|t| t.name.as_str()).collect();
            format!("{base}; {}", tool_choices(id, &names))
        }
    }
}

/// The most tool names an unknown tool's error lists.
const CHOICES: usize = 12;

/// What a model needs after naming a tool the server does not offer: the
/// likely typo's right name, and the names it may use, closest first (at
/// most `CHOICES`; `open_toolbox` lists every one).
fn tool_choices(id: &ToolId, names: &[&str]) -> String {
    if names.is_empty() {
        return "the server offers no tools".to_string();
    }
    let guess = suggest::closest(&id.tool, names).map_or("its".to_string(), |close| {
        format!("did you mean '{close}'? Its")
    });
    let ranked = suggest::by_closeness(&id.tool, names);
    let shown = ranked.len().min(CHOICES);
    let more = match ranked.len() - shown {
        0 => String::new(),
        n => format!(
            " (and {n} more: open_toolbox '{}' lists them all)",
            id.toolbox
        ),
    };
    format!(
        "{guess} tools, closest first: {}{more}",
        ranked[..shown].join(", ")
    )
}

/// Where a `use_tool` call goes.
pub(crate) enum Route {
    /// The connection the server was opened with. If it has died since, it
    /// refuses the call, which then waits for a restart (`forward`).
    Conn(Arc<Downstream>),
    /// The server is asleep, or its definition changed: the call waits in its
    /// toolbox's queue for a start.
    Start,
}

/// The `{toolbox, server, tool}` identifier of `use_tool`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolId {
    pub toolbox: String,
    pub server: String,
    pub tool: String,
}

impl Registry {
    pub(crate) fn new(config: &Config) -> Registry {
        let slots = AtomicU64::new(0);
        let toolboxes = Toolboxes {
            entries: config
                .toolboxes
                .iter()
                .map(|c| Toolbox::new(c.clone(), slots.fetch_add(1, Ordering::Relaxed)))
                .collect(),
            native_name_max: config.dynamic_name_max_length,
            open_setting: config.open_toolbox_result,
        };
        Registry {
            current: Mutex::new(Arc::new(toolboxes)),
            slots,
            listings: AtomicU64::new(0),
        }
    }

    /// A new toolbox copy of `config`, not open, with a slot of its own.
    pub(crate) fn toolbox_of(&self, config: ToolboxConfig) -> Toolbox {
        let id = self.slots.fetch_add(1, Ordering::Relaxed);
        Toolbox::new(config, id)
    }

    /// The number of the next listing: later listings have larger ones.
    pub(crate) fn next_listing(&self) -> u64 {
        self.listings.fetch_add(1, Ordering::Relaxed)
    }

    /// The current snapshot.
    pub(crate) fn current(&self) -> Arc<Toolboxes> {
        Arc::clone(&lock(&self.current))
    }

    /// Changes the snapshot with `f`, atomically (a copy if a reader holds it).
    pub(crate) fn update<R>(&self, f: impl FnOnce(&mut Toolboxes) -> R) -> R {
        let mut current = lock(&self.current);
        f(Arc::make_mut(&mut current))
    }

    /// Toolbox `slot` as it is now, removed or not; `None` once it is gone.
    pub(crate) fn toolbox(&self, slot: &Slot) -> Option<Toolbox> {
        self.current().of(slot).cloned()
    }

    /// The connection that serves `id` in toolbox copy `variant`, or the
    /// `use_tool` error text (docs/reference.md §5.2).
    pub(crate) fn resolve(&self, id: &ToolId, variant: Variant) -> Result<Route, String> {
        let all = self.current();
        // A configured toolbox that is not open, or whose copy for this
        // session is not made yet: the call starts just the named server
        // (docs/reference.md §5), in this session's copy.
        let copy = all.find_variant(&id.toolbox, variant);
        let toolbox = match copy {
            Some(toolbox) => toolbox,
            None => all
                .find(&id.toolbox)
                .ok_or_else(|| unknown_toolbox(&all.names(), &id.toolbox))?,
        };
        let index = toolbox
            .config
            .servers
            .iter()
            .position(|s| s.name == id.server)
            .ok_or_else(|| unknown_server(&toolbox.config, id))?;
        let open = match (copy, &toolbox.open) {
            (Some(_), Some(open)) => open,
            _ if toolbox.config.servers[index].disabled => return Err(disabled(id)),
            _ => return Ok(Route::Start),
        };

        match &open.servers[index] {
            ServerState::Running(r) | ServerState::Asleep(r) if !r.has_tool(&id.tool) => {
                Err(r.missing_tool(id))
            }
            ServerState::Running(running) => Ok(Route::Conn(Arc::clone(&running.conn))),
            // Filters may have changed too: the tool is checked once it started.
            ServerState::Asleep(_) | ServerState::Reconfigured(_) => Ok(Route::Start),
            ServerState::Failed(why) => Err(format!(
                "Tool '{}' cannot run: server '{}' in toolbox '{}' failed to start (call \
                 open_toolbox with toolbox_name '{}' to try again): {why}",
                id.tool, id.server, id.toolbox, id.toolbox
            )),
            ServerState::Disabled => Err(disabled(id)),
        }
    }

    /// The toolbox and the config of the server that `conn` runs for, if any.
    pub(crate) fn find_conn(&self, conn: &Arc<Downstream>) -> Option<(Arc<Slot>, ServerConfig)> {
        let all = self.current();
        all.entries.iter().find_map(|toolbox| {
            let open = toolbox.open.as_ref()?;
            let index = open.servers.iter().position(|s| match s {
                ServerState::Running(r) => Arc::ptr_eq(&r.conn, conn),
                _ => false,
            })?;
            let server = toolbox.config.servers[index].clone();
            Some((Arc::clone(&toolbox.slot), server))
        })
    }

    /// Copy `variant` of toolbox `name`, running the servers of `part`,
    /// expanded with `env`, made if it is not there yet (a shared fleet's
    /// session opens it); `None` when `name` is not configured.
    pub(crate) fn add_variant(
        &self,
        name: &str,
        (variant, part): (Variant, Part),
        env: &Arc<Vars>,
    ) -> Option<Toolbox> {
        let now = self.current();
        if variant == BASE {
            return now.find(name).cloned();
        }
        // Found without a write: a copy of the snapshot only to add one.
        if let Some(found) = now.find_variant(name, variant) {
            return Some(found.clone());
        }
        drop(now);
        self.update(|all| {
            if let Some(found) = all.find_variant(name, variant) {
                return Some(found.clone());
            }
            let base = all.find(name)?;
            let mut copy = self.toolbox_of(part.of(&base.config));
            copy.variant = variant;
            copy.part = part;
            copy.env = Some(Arc::clone(env));
            all.entries.push(copy.clone());
            Some(copy)
        })
    }

    /// Sets what is open of `slot`; the previous state. Nothing happens to a
    /// toolbox that is gone.
    pub(crate) fn set_open(
        &self,
        slot: &Slot,
        open: Option<OpenToolbox>,
    ) -> Option<Arc<OpenToolbox>> {
        self.update(|all| {
            let toolbox = all.of_mut(slot)?;
            std::mem::replace(&mut toolbox.open, open.map(Arc::new))
        })
    }

    /// Installs `open` for `slot`, keeping the current state of each server
    /// whose connection is unchanged and whose listing is newer: a re-list may
    /// have updated its tools while `open` was being built.
    pub(crate) fn install(&self, slot: &Slot, mut open: OpenToolbox) {
        self.update(|all| {
            let Some(toolbox) = all.of_mut(slot) else {
                return;
            };
            if let Some(current) = &toolbox.open {
                for (new, now) in open.servers.iter_mut().zip(&current.servers) {
                    if let (ServerState::Running(n), ServerState::Running(c)) = (&*new, now) {
                        if Arc::ptr_eq(&n.conn, &c.conn) && c.listing > n.listing {
                            *new = now.clone();
                        }
                    }
                }
            }
            toolbox.open = Some(Arc::new(open));
        })
    }

    /// Replaces the state of the server that `conn` runs in toolbox `slot`
    /// with what `f` makes of it; false when `conn` no longer runs there.
    pub(crate) fn replace_running(
        &self,
        slot: &Slot,
        conn: &Arc<Downstream>,
        f: impl FnOnce(&Arc<RunningServer>) -> ServerState,
    ) -> bool {
        self.update(|all| {
            let Some(open) = all.of_mut(slot).and_then(|t| t.open.as_mut()) else {
                return false;
            };
            let Some(index) = open.servers.iter().position(|s| match s {
                ServerState::Running(r) => Arc::ptr_eq(&r.conn, conn),
                _ => false,
            }) else {
                return false;
            };
            let ServerState::Running(running) = &open.servers[index] else {
                return false;
            };
            let state = f(running);
            Arc::make_mut(open).servers[index] = state;
            true
        })
    }
}

impl Registry {
    /// Judges every open server's listing again with the pins `pins_of`
    /// gives for a toolbox and server (they changed: an approval); whether
    /// what the model sees changed anywhere.
    pub(crate) fn rejudge(&self, pins_of: impl Fn(&str, &str) -> Option<Arc<ServerPins>>) -> bool {
        self.update(|all| {
            let mut changed = false;
            for toolbox in &mut all.entries {
                let Some(open) = &mut toolbox.open else {
                    continue;
                };
                for (i, server) in toolbox.config.servers.iter().enumerate() {
                    let Some(running) = open.servers[i].listing() else {
                        continue;
                    };
                    let pins = pins_of(&toolbox.config.name, &server.name);
                    let Some(again) = running.rejudged(server, pins.as_deref()) else {
                        continue;
                    };
                    let again = Arc::new(again);
                    let state = match &open.servers[i] {
                        ServerState::Running(_) => ServerState::Running(again),
                        ServerState::Asleep(_) => ServerState::Asleep(again),
                        _ => ServerState::Reconfigured(Some(again)),
                    };
                    Arc::make_mut(open).servers[i] = state;
                    changed = true;
                }
            }
            changed
        })
    }
}

impl Toolboxes {
    /// The configured toolbox `name` (not one a reload removed).
    pub(crate) fn find(&self, name: &str) -> Option<&Toolbox> {
        self.find_variant(name, BASE)
    }

    /// Copy `variant` of the configured toolbox `name`, if it was made.
    pub(crate) fn find_variant(&self, name: &str, variant: Variant) -> Option<&Toolbox> {
        self.all()
            .find(|t| t.variant == variant && t.config.name == name)
    }

    /// The configured toolboxes, in config order (their `BASE` copies).
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Toolbox> {
        self.all().filter(|t| t.variant == BASE)
    }

    /// Every copy of every configured toolbox.
    pub(crate) fn all(&self) -> impl Iterator<Item = &Toolbox> {
        self.entries.iter().filter(|t| !t.removed)
    }

    pub(crate) fn names(&self) -> Vec<&str> {
        self.iter().map(|t| t.config.name.as_str()).collect()
    }

    pub(crate) fn configs(&self) -> Vec<&ToolboxConfig> {
        self.iter().map(|t| &*t.config).collect()
    }

    /// Toolbox `slot`, removed or not.
    pub(crate) fn of(&self, slot: &Slot) -> Option<&Toolbox> {
        self.entries.iter().find(|t| std::ptr::eq(&*t.slot, slot))
    }

    pub(crate) fn of_mut(&mut self, slot: &Slot) -> Option<&mut Toolbox> {
        self.entries
            .iter_mut()
            .find(|t| std::ptr::eq(&*t.slot, slot))
    }

    /// Every entry, removed ones included (a reload rebuilds the list).
    pub(crate) fn entries_mut(&mut self) -> &mut Vec<Toolbox> {
        &mut self.entries
    }

    /// Drops toolbox `slot` for good; what was open of it.
    pub(crate) fn drop_toolbox(&mut self, slot: &Slot) -> Option<Arc<OpenToolbox>> {
        let index = self
            .entries
            .iter()
            .position(|t| std::ptr::eq(&*t.slot, slot))?;
        self.entries.remove(index).open
    }
}

impl Toolbox {
    /// A toolbox that is not open, in slot `id` (`Registry::toolbox_of`).
    fn new(config: ToolboxConfig, id: u64) -> Toolbox {
        Toolbox {
            slot: Arc::new(Slot {
                id,
                name: config.name.clone(),
            }),
            config: Arc::new(config),
            variant: BASE,
            part: Part::All,
            env: None,
            open: None,
            removed: false,
        }
    }
}

impl OpenToolbox {
    /// `servers_connected`: the servers running, or asleep (a call starts them).
    pub(crate) fn connected(&self) -> usize {
        self.servers
            .iter()
            .filter(|s| matches!(s, ServerState::Running(_) | ServerState::Asleep(_)))
            .count()
    }

    /// A toolbox opened by a call rather than by `open_toolbox`: none of its
    /// servers started yet; each starts at its first use, or all at the next
    /// `open_toolbox` (docs/reference.md §5, `use_tool`).
    pub(crate) fn unstarted(config: &ToolboxConfig) -> OpenToolbox {
        let servers = config
            .servers
            .iter()
            .map(|s| {
                if s.disabled {
                    ServerState::Disabled
                } else {
                    ServerState::Reconfigured(None)
                }
            })
            .collect();
        OpenToolbox { servers }
    }

    /// The connections of its servers that still have a process, or had one:
    /// what closing the toolbox stops (stopping a stopped one costs nothing).
    pub(crate) fn conns(&self) -> Vec<Arc<Downstream>> {
        self.servers
            .iter()
            .filter_map(|s| s.listing().map(|r| Arc::clone(&r.conn)))
            .collect()
    }

    /// How many of its servers run.
    pub(crate) fn running(&self) -> usize {
        self.servers
            .iter()
            .filter(|s| matches!(s, ServerState::Running(_)))
            .count()
    }
}

/// The open state of a toolbox whose definition changed from `old` to `new`:
/// a server whose definition is equal keeps its state (and its process); a
/// changed or added one starts at its next use, keeping its last listing; a
/// disabled one is disabled. Also returns the connections that no longer
/// serve: the caller retires them (they finish their calls, then stop).
pub(crate) fn realign(
    old: &ToolboxConfig,
    new: &ToolboxConfig,
    open: &OpenToolbox,
) -> (OpenToolbox, Vec<Arc<Downstream>>) {
    let mut retire = Vec::new();
    let mut servers = Vec::new();
    for server in &new.servers {
        let before = old
            .servers
            .iter()
            .position(|s| s.name == server.name)
            .map(|i| (&old.servers[i], &open.servers[i]));
        let state = match before {
            Some((definition, state)) if definition == server => state.clone(),
            _ if server.disabled => ServerState::Disabled,
            Some((_, state)) => ServerState::Reconfigured(state.listing().cloned()),
            None => ServerState::Reconfigured(None),
        };
        if let (Some((_, ServerState::Running(r))), false) =
            (before, matches!(state, ServerState::Running(_)))
        {
            retire.push(Arc::clone(&r.conn));
        }
        servers.push(state);
    }
    for (definition, state) in old.servers.iter().zip(&open.servers) {
        let kept = new.servers.iter().any(|s| s.name == definition.name);
        if let (ServerState::Running(r), false) = (state, kept) {
            retire.push(Arc::clone(&r.conn));
        }
    }
    (OpenToolbox { servers }, retire)
}

/// The error for a toolbox name the config does not have, which every
/// meta-tool gives (`open_toolbox`, `close_toolbox`, `use_tool`,
/// docs/reference.md §5): the likely typo's right name, and the toolboxes
/// there are.
pub(crate) fn unknown_toolbox(names: &[&str], name: &str) -> String {
    let base = format!("Toolbox '{name}' not found in configuration.");
    if names.is_empty() {
        return format!("{base} The configuration has no toolboxes yet");
    }
    let guess = suggest::closest(name, names)
        .map_or(String::new(), |close| format!(" Did you mean '{close}'?"));
    format!("{base}{guess} Available toolboxes: {}", names.join(", "))
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

/// The `use_tool` error for a server the config disables.
fn disabled(id: &ToolId) -> String {
    format!(
        "Server '{}' in toolbox '{}' is disabled in the configuration",
        id.server, id.toolbox
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A config of toolbox `t` with `servers` (JSON text, in this order).
    fn one_toolbox(servers: &str) -> Config {
        let text =
            format!(r#"{{"toolboxes": {{"t": {{"description": "d", "mcpServers": {servers}}}}}}}"#);
        let path = std::path::Path::new("c.json");
        crate::config::parse(text.as_bytes(), path, path)
            .unwrap()
            .config
    }

    #[test]
    fn an_unknown_toolbox_gets_the_closest_name_and_the_toolboxes() {
        let names = ["dev", "production", "staging"];
        assert_eq!(
            unknown_toolbox(&names, "prodution"),
            "Toolbox 'prodution' not found in configuration. Did you mean 'production'? \
             Available toolboxes: dev, production, staging"
        );
        assert_eq!(
            unknown_toolbox(&names, "Dev"),
            "Toolbox 'Dev' not found in configuration. Did you mean 'dev'? \
             Available toolboxes: dev, production, staging"
        );
        assert_eq!(
            unknown_toolbox(&names, "billing"),
            "Toolbox 'billing' not found in configuration. Available toolboxes: dev, production, staging"
        );
        assert_eq!(
            unknown_toolbox(&[], "dev"),
            "Toolbox 'dev' not found in configuration. The configuration has no toolboxes yet"
        );
    }

    #[test]
    fn an_unknown_server_lists_the_toolboxs_servers() {
        let id = ToolId {
            toolbox: "t".into(),
            server: "db".into(),
            tool: "q".into(),
        };
        let empty = one_toolbox("{}");
        assert_eq!(
            unknown_server(&empty.toolboxes[0], &id),
            "Server 'db' not found in toolbox 't'; it has no servers"
        );
        let two = one_toolbox(r#"{"files": {"command": "x"}, "git": {"command": "y"}}"#);
        assert_eq!(
            unknown_server(&two.toolboxes[0], &id),
            "Server 'db' not found in toolbox 't'; its servers are: files, git"
        );
    }

    #[test]
    fn an_unknown_tool_gets_the_closest_name_and_the_servers_tools() {
        let id = |tool: &str| ToolId {
            toolbox: "notes".into(),
            server: "memory".into(),
            tool: tool.into(),
        };
        let names = [
            "create_entities",
            "search_nodes",
            "read_graph",
            "open_nodes",
        ];
        assert_eq!(
            tool_choices(&id("raed_graph"), &names),
            "did you mean 'read_graph'? Its tools, closest first: read_graph, open_nodes, \
             search_nodes, create_entities"
        );
        assert_eq!(
            tool_choices(&id("delete_everything"), &names[..2]),
            "its tools, closest first: create_entities, search_nodes"
        );
        assert_eq!(tool_choices(&id("x"), &[]), "the server offers no tools");
        let many: Vec<String> = (0..20).map(|i| format!("tool_{i:02}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(
            tool_choices(&id("tool_7"), &many),
            "did you mean 'tool_07'? Its tools, closest first: tool_07, tool_17, tool_00, \
             tool_01, tool_02, tool_03, tool_04, tool_05, tool_06, tool_08, tool_09, tool_10 \
             (and 8 more: open_toolbox 'notes' lists them all)"
        );
    }

    #[test]
    fn realign_keeps_equal_servers_and_marks_changed_and_added_ones() {
        let old = one_toolbox(
            r#"{"same": {"command": "a"}, "changed": {"command": "b"}, "gone": {"command": "c"},
                "failed": {"command": "d"}, "off": {"command": "e", "disabled": true}}"#,
        );
        let new = one_toolbox(
            r#"{"added": {"command": "f"}, "changed": {"command": "b", "args": ["x"]},
                "same": {"command": "a"}, "failed": {"command": "d", "idleTimeoutMs": 5},
                "off": {"command": "e"}}"#,
        );
        let open = OpenToolbox {
            servers: vec![
                ServerState::Failed("same".into()),
                ServerState::Reconfigured(None),
                ServerState::Failed("gone".into()),
                ServerState::Failed("failed".into()),
                ServerState::Disabled,
            ],
        };
        let (realigned, retire) = realign(&old.toolboxes[0], &new.toolboxes[0], &open);
        assert!(retire.is_empty());
        let shown: Vec<String> = realigned
            .servers
            .iter()
            .map(|s| match s {
                ServerState::Failed(why) => format!("failed {why}"),
                ServerState::Reconfigured(None) => "reconfigured".into(),
                ServerState::Disabled => "disabled".into(),
                _ => "other".into(),
            })
            .collect();
        // In the new order; an equal definition keeps its state, any change
        // (a timeout included) waits for the next use.
        assert_eq!(
            shown,
            [
                "reconfigured",
                "reconfigured",
                "failed same",
                "reconfigured",
                "reconfigured"
            ]
        );
    }

    #[test]
    fn a_call_to_a_toolbox_not_open_waits_for_a_start_of_its_server() {
        let registry = Registry::new(&one_toolbox(
            r#"{"on": {"command": "a"}, "off": {"command": "b", "disabled": true}}"#,
        ));
        let id = |server: &str| ToolId {
            toolbox: "t".into(),
            server: server.into(),
            tool: "x".into(),
        };
        assert!(matches!(
            registry.resolve(&id("on"), BASE),
            Ok(Route::Start)
        ));
        let off = registry.resolve(&id("off"), BASE).err().unwrap();
        assert_eq!(
            off,
            "Server 'off' in toolbox 't' is disabled in the configuration"
        );
        let unknown = registry.resolve(&id("nope"), BASE).err().unwrap();
        assert!(
            unknown.starts_with("Server 'nope' not found in toolbox 't'"),
            "{unknown}"
        );
        // A shared fleet's session whose copy is not made yet: a start too,
        // never the base copy's connection.
        assert!(matches!(registry.resolve(&id("on"), 7), Ok(Route::Start)));
        let open = OpenToolbox::unstarted(&registry.current().find("t").unwrap().config);
        assert!(matches!(
            open.servers.as_slice(),
            [ServerState::Reconfigured(None), ServerState::Disabled]
        ));
    }

    #[test]
    fn removed_toolboxes_are_not_found_but_kept_until_dropped() {
        let registry = Registry::new(&one_toolbox("{}"));
        let slot = Arc::clone(&registry.current().find("t").unwrap().slot);
        registry.update(|all| all.entries_mut()[0].removed = true);
        let all = registry.current();
        assert!(all.find("t").is_none());
        assert!(all.names().is_empty());
        assert!(all.of(&slot).is_some(), "its queue still finds it");
        registry.update(|all| all.drop_toolbox(&slot));
        assert!(registry.toolbox(&slot).is_none());
    }
}
