//! The opening of a connection, on the thread that starts the server: the
//! legacy handshake (`initialize`, then `notifications/initialized`), or, for
//! a server that refuses it naming only modern versions, the modern era's
//! `server/discover` (docs/reference.md §7, the era bridge); then every page
//! of `tools/list`, which a re-list runs again. The decisions are `era.rs`'s;
//! this file sends and reads, through the handle's blocking `request`, on
//! the thread that starts (or re-lists) the server, never the pump's. What
//! the opening found is published once on the handle (`Opened`).

use super::era::{self, DiscoverResult, Era, Modern, Next};
use super::handle::{Downstream, Opened};
use super::outcome::{Failure, Why};
use crate::protocol::mcp::{self, method, InitializeResult, ListToolsResult, ToolEntry, ToolHead};
use serde_json::{json, Map, Value};
use std::time::Instant;

/// Opens the connection in the era `known` (found earlier in the run for
/// this server definition), or with `initialize` at our latest version,
/// publishes what it found, and lists the tools.
pub(super) fn open(
    conn: &Downstream,
    known: Option<&Era>,
    deadline: Instant,
) -> Result<(Era, Vec<ToolEntry>), Failure> {
    let opening = Opening { conn, deadline };
    let opened = match known {
        Some(Era::Modern(version)) => opening.discover(version)?,
        Some(Era::Legacy { offered, .. }) => opening.legacy(offered)?,
        None => opening.legacy(mcp::LATEST_VERSION)?,
    };
    let era = opened.era.clone();
    conn.set_opened(opened);
    let tools = list_tools(conn, deadline)?;
    Ok((era, tools))
}

/// One opening's requests, all due by one deadline.
struct Opening<'a> {
    conn: &'a Downstream,
    deadline: Instant,
}

impl Opening<'_> {
    /// `initialize` offering `first`; a refusal that names the server's
    /// versions is retried once with an older legacy one, or switches to the
    /// modern era, or fails naming them (`era::after_refusal`).
    fn legacy(&self, first: &'static str) -> Result<Opened, Failure> {
        let mut offered = first;
        let mut retried = false;
        loop {
            let (error, tail) = match self.initialize(offered) {
                Ok(init) => {
                    return Ok(Opened {
                        era: Era::Legacy {
                            offered,
                            version: init.protocol_version,
                        },
                        modern: None,
                        logging: init.capabilities.logging.is_some(),
                        instructions: init.instructions,
                    })
                }
                Err(Failure {
                    why: Why::Rpc(error),
                    tail,
                }) => (error, tail),
                Err(other) => return Err(other),
            };
            let Some(supported) = era::supported_versions(&error) else {
                return Err(Failure::rpc(error, tail));
            };
            match era::after_refusal(offered, &supported, retried) {
                Next::Legacy(older) => {
                    log::info!(
                        "[{}] refused protocol version {offered} (it supports {}): offering {older}",
                        self.conn.label(),
                        supported.join(", ")
                    );
                    offered = older;
                    retried = true;
                }
                Next::Modern(version) => {
                    log::info!(
                        "[{}] refused initialize (it supports {}): speaking the modern era, {version}",
                        self.conn.label(),
                        supported.join(", ")
                    );
                    return self.discover(version).map_err(|failure| match failure.why {
                        Why::Rpc(e) => Failure::down(
                            format!(
                                "refused initialize (it supports {}), then answered server/discover with error {}: {}",
                                supported.join(", "),
                                e.code,
                                e.text()
                            ),
                            failure.tail,
                        ),
                        why => Failure {
                            why,
                            tail: failure.tail,
                        },
                    });
                }
                Next::Fail(why) => return Err(Failure::down(why, tail)),
            }
        }
    }

    /// The legacy handshake at `version`: the server's result (its version
    /// one of ours) once `notifications/initialized` is sent.
    fn initialize(&self, version: &str) -> Result<InitializeResult, Failure> {
        let params = json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": mcp::NAME, "version": mcp::VERSION},
        });
        let reply = self
            .conn
            .request(method::INITIALIZE, &params, self.deadline)?;
        let init: InitializeResult = serde_json::from_str(reply.raw.get()).map_err(|e| {
            Failure::down(
                format!("sent an invalid initialize result: {e}"),
                reply.tail.clone(),
            )
        })?;
        if !mcp::SUPPORTED_VERSIONS.contains(&init.protocol_version.as_str()) {
            return Err(Failure::down(
                format!(
                    "answered with protocol version '{}', which the workbench does not support (supported: {})",
                    init.protocol_version,
                    mcp::SUPPORTED_VERSIONS.join(", ")
                ),
                reply.tail,
            ));
        }
        self.conn.notify(method::INITIALIZED);
        Ok(init)
    }

    /// The modern opening at `version`: `server/discover` (MCP 2026-07-28,
    /// server/discover). A `-32022` naming another modern version we speak
    /// is retried once with it. From then on every request carries the era's
    /// `_meta`.
    fn discover(&self, version: &'static str) -> Result<Opened, Failure> {
        let mut modern = Modern::new(version);
        let mut retried = false;
        let found = loop {
            let params = modern.params(Map::new(), None);
            let (error, tail) = match self.conn.request(method::DISCOVER, &params, self.deadline) {
                Ok(reply) => break reply,
                Err(Failure {
                    why: Why::Rpc(error),
                    tail,
                }) => (error, tail),
                Err(other) => return Err(other),
            };
            let Some(supported) = era::supported_versions(&error) else {
                return Err(Failure::rpc(error, tail));
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
                _ => return Err(Failure::down(era::refused_every_version(&supported), tail)),
            }
        };
        let tail = found.tail;
        let discovered: DiscoverResult = serde_json::from_str(found.raw.get()).map_err(|e| {
            Failure::down(
                format!("sent an invalid server/discover result: {e}"),
                tail.clone(),
            )
        })?;
        if let Some(other) = discovered.result_type.filter(|t| t != "complete") {
            return Err(Failure::down(
                format!("answered server/discover with resultType '{other}'"),
                tail,
            ));
        }
        if !discovered.supported_versions.is_empty()
            && !discovered
                .supported_versions
                .iter()
                .any(|v| v == modern.version())
        {
            return Err(Failure::down(
                era::refused_every_version(&discovered.supported_versions),
                tail,
            ));
        }
        Ok(Opened {
            era: Era::Modern(modern.version()),
            modern: Some(modern),
            logging: discovered.capabilities.logging.is_some(),
            instructions: discovered.instructions,
        })
    }
}

/// All pages of `tools/list`, following `nextCursor`.
pub(crate) fn list_tools(conn: &Downstream, deadline: Instant) -> Result<Vec<ToolEntry>, Failure> {
    conn.clear_tools_changed();
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = std::collections::HashSet::new();
    loop {
        let mut params = Map::new();
        if let Some(c) = &cursor {
            params.insert("cursor".into(), json!(c));
        }
        let params = match conn.modern() {
            Some(modern) => modern.params(params, conn.log_level()),
            None => Value::Object(params),
        };
        let reply = conn.request(method::TOOLS_LIST, &params, deadline)?;
        let tail = reply.tail;
        if conn.modern().is_some() {
            if let Some(other) = era::incomplete(reply.raw.get()) {
                return Err(Failure::down(
                    format!("answered tools/list with resultType '{other}'"),
                    tail,
                ));
            }
        }
        let page: ListToolsResult = serde_json::from_str(reply.raw.get()).map_err(|e| {
            Failure::down(
                format!("sent an invalid tools/list result: {e}"),
                tail.clone(),
            )
        })?;
        for tool in page.tools {
            match serde_json::from_str::<ToolHead>(tool.get()) {
                Ok(head) => tools.push(ToolEntry {
                    name: head.name,
                    raw: tool,
                }),
                Err(e) => log::warn!("[{}] skipping a tool without a name: {e}", conn.label()),
            }
        }
        match page.next_cursor {
            Some(next) if !seen.insert(next.clone()) => {
                return Err(Failure::down(
                    format!("repeated the tools/list cursor {next:?}"),
                    tail,
                ))
            }
            Some(next) => cursor = Some(next),
            None => return Ok(tools),
        }
    }
}
