//! The opening of a connection, on the thread that starts the server: the
//! legacy handshake (`initialize`, then `notifications/initialized`), or, for
//! a server that refuses it naming only modern versions, the modern era's
//! `server/discover` (docs/reference.md §7, the era bridge); then every page
//! of `tools/list`. The decisions are `era.rs`'s; this file sends and reads.

use super::era::{self, DiscoverResult, Era, Modern, Next};
use super::*;
use crate::protocol::mcp::{self, InitializeResult, ListToolsResult, ToolHead};

impl Downstream {
    /// Opens the connection in the era `known` (found earlier in the run for
    /// this server definition), or with `initialize` at our latest version,
    /// and lists the tools.
    pub(super) fn handshake(
        &self,
        known: Option<&Era>,
        deadline: Instant,
    ) -> Result<(Era, Vec<ToolEntry>), Failure> {
        let era = match known {
            Some(Era::Modern(version)) => self.discover(version, deadline)?,
            Some(Era::Legacy { offered, .. }) => self.open(offered, deadline)?,
            None => self.open(mcp::LATEST_VERSION, deadline)?,
        };
        let tools = self.list_tools(deadline)?;
        Ok((era, tools))
    }

    /// `initialize` offering `first`; a refusal that names the server's
    /// versions is retried once with an older legacy one, or switches to the
    /// modern era, or fails naming them (`era::after_refusal`).
    fn open(&self, first: &'static str, deadline: Instant) -> Result<Era, Failure> {
        let mut offered = first;
        let mut retried = false;
        loop {
            let error = match self.initialize(offered, deadline) {
                Ok(version) => return Ok(Era::Legacy { offered, version }),
                Err(Failure::Rpc(error)) => error,
                Err(other) => return Err(other),
            };
            let Some(supported) = era::supported_versions(&error) else {
                return Err(Failure::Rpc(error));
            };
            match era::after_refusal(offered, &supported, retried) {
                Next::Legacy(older) => {
                    log::info!(
                        "[{}] refused protocol version {offered} (it supports {}): offering {older}",
                        self.label,
                        supported.join(", ")
                    );
                    offered = older;
                    retried = true;
                }
                Next::Modern(version) => {
                    log::info!(
                        "[{}] refused initialize (it supports {}): speaking the modern era, {version}",
                        self.label,
                        supported.join(", ")
                    );
                    return self.discover(version, deadline).map_err(|failure| match failure {
                        Failure::Rpc(e) => Failure::Down(format!(
                            "refused initialize (it supports {}), then answered server/discover with error {}: {}",
                            supported.join(", "),
                            e.code,
                            e.text()
                        )),
                        other => other,
                    });
                }
                Next::Fail(why) => return Err(Failure::Down(why)),
            }
        }
    }

    /// The legacy handshake at `version`: the version the server answers with
    /// (one of ours) once `notifications/initialized` is sent.
    fn initialize(&self, version: &str, deadline: Instant) -> Result<String, Failure> {
        let params = json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": mcp::NAME, "version": mcp::VERSION},
        });
        let raw = self.request(method::INITIALIZE, &params, deadline)?;
        let init: InitializeResult = serde_json::from_str(raw.get())
            .map_err(|e| Failure::Down(format!("sent an invalid initialize result: {e}")))?;
        if !mcp::SUPPORTED_VERSIONS.contains(&init.protocol_version.as_str()) {
            return Err(Failure::Down(format!(
                "answered with protocol version '{}', which the workbench does not support (supported: {})",
                init.protocol_version,
                mcp::SUPPORTED_VERSIONS.join(", ")
            )));
        }
        self.logging
            .store(init.capabilities.logging.is_some(), Ordering::Relaxed);
        self.notify(method::INITIALIZED);
        Ok(init.protocol_version)
    }

    /// The modern opening at `version`: `server/discover` (MCP 2026-07-28,
    /// server/discover). A `-32022` naming another modern version we speak
    /// is retried once with it. From then on every request carries the era's
    /// `_meta`.
    fn discover(&self, version: &'static str, deadline: Instant) -> Result<Era, Failure> {
        let mut modern = Modern::new(version);
        let mut retried = false;
        let found = loop {
            let params = modern.params(Map::new(), None);
            let error = match self.request(method::DISCOVER, &params, deadline) {
                Ok(raw) => break raw,
                Err(Failure::Rpc(error)) => error,
                Err(other) => return Err(other),
            };
            let Some(supported) = era::supported_versions(&error) else {
                return Err(Failure::Rpc(error));
            };
            let other = era::MODERN_VERSIONS
                .iter()
                .rev()
                .find(|v| **v != modern.version() && supported.iter().any(|s| s == *v));
            match other {
                Some(v) if !retried => {
                    modern = Modern::new(v);
                    retried = true;
                }
                _ => return Err(Failure::Down(era::refused_every_version(&supported))),
            }
        };
        let discovered: DiscoverResult = serde_json::from_str(found.get())
            .map_err(|e| Failure::Down(format!("sent an invalid server/discover result: {e}")))?;
        if let Some(other) = discovered.result_type.filter(|t| t != "complete") {
            return Err(Failure::Down(format!(
                "answered server/discover with resultType '{other}'"
            )));
        }
        if !discovered.supported_versions.is_empty()
            && !discovered
                .supported_versions
                .iter()
                .any(|v| v == modern.version())
        {
            return Err(Failure::Down(era::refused_every_version(
                &discovered.supported_versions,
            )));
        }
        self.logging
            .store(discovered.capabilities.logging.is_some(), Ordering::Relaxed);
        let version = modern.version();
        let _ = self.modern.set(modern);
        Ok(Era::Modern(version))
    }

    /// All pages of `tools/list`, following `nextCursor`.
    pub(crate) fn list_tools(&self, deadline: Instant) -> Result<Vec<ToolEntry>, Failure> {
        self.tools_changed.store(false, Ordering::Relaxed);
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        loop {
            let mut params = Map::new();
            if let Some(c) = &cursor {
                params.insert("cursor".into(), json!(c));
            }
            let params = match self.modern.get() {
                Some(modern) => modern.params(params, self.modern_log_level().as_deref()),
                None => Value::Object(params),
            };
            let raw = self.request(method::TOOLS_LIST, &params, deadline)?;
            if self.modern.get().is_some() {
                if let Some(other) = era::incomplete(raw.get()) {
                    return Err(Failure::Down(format!(
                        "answered tools/list with resultType '{other}'"
                    )));
                }
            }
            let page: ListToolsResult = serde_json::from_str(raw.get())
                .map_err(|e| Failure::Down(format!("sent an invalid tools/list result: {e}")))?;
            for tool in page.tools {
                match serde_json::from_str::<ToolHead>(tool.get()) {
                    Ok(head) => tools.push(ToolEntry {
                        name: head.name,
                        raw: tool,
                    }),
                    Err(e) => log::warn!("[{}] skipping a tool without a name: {e}", self.label),
                }
            }
            match page.next_cursor {
                Some(next) if !seen.insert(next.clone()) => {
                    return Err(Failure::Down(format!(
                        "repeated the tools/list cursor {next:?}"
                    )))
                }
                Some(next) => cursor = Some(next),
                None => return Ok(tools),
            }
        }
    }
}
