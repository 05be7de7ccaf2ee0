//! One downstream MCP server, as a handle and a pump (docs: ARCHITECTURE.md,
//! "Threads").
//!
//! The handle (`handle.rs`, `Downstream`) is what other threads hold and
//! call: forward a call, cancel, withdraw, retire, stop, and read what was
//! published. The pump (`pump.rs`) is the server's one thread, named
//! `[toolbox/server]`: it waits on the server's transport, reads its
//! messages, answers forwarded calls straight to the host, fails what ran
//! out, and runs the stop sequence. The state only it writes (the last
//! stderr lines, log budgets, line buffers, the stop phase) is its own
//! (`inbound.rs`), kept without a lock; what others must know of it is
//! published narrowly: in the failures it makes (with the stderr tail), a
//! flag and a time for list changes, the stderr tail once at its end. What
//! both sides share is the table of requests in flight, one lock
//! (`flight.rs` over `pending.rs`). The opening (`handshake.rs`) runs on
//! the thread that starts the server, through the handle, and publishes its
//! era once (`handle::Opened`).
//!
//! The rest, one job each: `start.rs` (a server's transport, then its
//! opening), `transport.rs` (the seam, below), `child.rs`
//! (the stdio transport: spawns the child on its pump's thread), `missing.rs`
//! (where a start that found no program looked), `owner.rs`
//! (spawns, reaps, kills the tree on drop), `input.rs` (the child's stdin:
//! non-blocking writes from any thread, a bounded queue for the rest),
//! `lines.rs` (stdout and stderr cut into lines), `call.rs` (a forwarded
//! call's line), `tail.rs` (the last stderr lines), `log_budget.rs` (flood
//! control of logs), `era.rs` (which era a server speaks), `result_cap.rs`
//! (`maxResultChars`).
//!
//! The hot path: `forward_call` runs on the caller's thread, registers the
//! call (one hold of `flight`'s lock) and writes its line through the
//! transport's `Outlet` (for a child: one non-blocking write to its stdin,
//! what the pipe does not take queued for the pump); the answer goes from
//! the pump's thread straight to the session's `Outbox`.
//!
//! How a second transport plugs in (a remote server over Streamable HTTP or
//! legacy SSE, say): implement the two traits of `transport.rs` in a file of
//! its own, as `child.rs` does for pipes, and a constructor beside
//! `child::spawn` that calls `pump::launch` with a closure opening the
//! connection on the pump's thread and returning both halves; `start`
//! (`start.rs`) picks the constructor by the server's `Spec` (a `command`,
//! or a `url`), and nothing else changes: the handshake, the calls, cancellation,
//! the stop and the fleet see only the handle. What the pump expects:
//! - `Transport::wait` is the only place its thread blocks, and it must end
//!   on a wake-up (`Outlet::wake`), the timeout, output, room for queued
//!   input, and the end; an HTTP transport waits on its sockets and its own
//!   waker in one poll (`sys` has the per-system wait).
//! - Framing is the transport's: `read` hands the pump one JSON-RPC message
//!   per `Sink::message`, as a line without its newline (an HTTP response
//!   body or an SSE event's `data` becomes one such line); it reads only
//!   what is ready, never blocking. `Flow::Closed` says the messages ended
//!   while the transport lives (a closed SSE stream that will not resume).
//! - Input: `Outlet::send` takes one whole line from any thread without
//!   blocking, or refuses it (`WriteError`); what cannot go at once is
//!   queued for the pump, which `read` sends when `Ready::room` says so (an
//!   HTTP transport turns each line into a POST, and each POST's response
//!   into messages).
//! - The end: `Ready::ended` and `ended()` say the transport ended by
//!   itself and how (`sys::Exit`; a connection would add its own cause),
//!   and the pump then fails what is in flight. The stop steps are
//!   `close_input` (HTTP: end the session), `ask_to_end` (false where there
//!   is no such step), `kill` (drop the connection), then `finish`.
//! - A transport without stderr never calls `Sink::diagnostic`: errors then
//!   carry no "Last stderr lines". `Outlet::pid` is 0 without a process.

mod call;
mod child;
pub(crate) mod era;
mod flight;
mod handle;
mod handshake;
#[cfg(feature = "remote")]
mod http;
mod inbound;
mod input;
mod lines;
mod log_budget;
mod missing;
mod owner;
#[cfg(feature = "remote")]
mod peek;
mod pending;
#[cfg(feature = "remote")]
mod post;
mod pump;
#[cfg(feature = "remote")]
mod remote;
pub(crate) mod result_cap;
#[cfg(feature = "remote")]
mod sse;
mod start;
mod tail;
mod transport;

pub(crate) use handle::Downstream;
pub(crate) use handshake::list_tools;
pub(crate) use missing::Lookup;
pub(crate) use pump::STOP_GRACE;
pub(crate) use start::start;

use crate::protocol::jsonrpc::ErrorObject;
use crate::protocol::mcp::ToolEntry;
use era::Era;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The longest a stop waits for the pump to run the stop sequence.
pub(crate) const STOP_LIMIT: Duration = Duration::from_secs(2 * STOP_GRACE.as_secs() + 2);

/// Everything needed to start one server, with environment references resolved.
#[derive(Debug, Clone)]
pub(crate) struct Spec {
    pub toolbox: String,
    pub server: String,
    pub program: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: Option<String>,
    /// The command as written in the config (unexpanded, so safe to show).
    pub command_display: String,
    /// `cwd` as written in the config, with its JSON path (safe to show).
    pub cwd_display: Option<String>,
    /// What a start that finds no program may show of where it looked.
    pub lookup: Lookup,
    pub startup_timeout: Duration,
    pub call_timeout: Duration,
    /// The longest a call may run, however much progress it reports.
    pub max_call_timeout: Duration,
    /// `maxResultChars`: longer text results are cut (`result_cap`).
    pub max_result_chars: Option<usize>,
    /// A remote server's reach: `Some` for a `url` server, which has no
    /// program (`program`, `args`, `env` and `cwd` are then empty).
    pub remote: Option<Remote>,
}

/// How to reach a remote server, with references expanded
/// (docs/reference.md §11). Its `Debug` shows no expanded value.
#[derive(Clone)]
pub(crate) struct Remote {
    /// The URL, expanded: may hold a secret, so never shown.
    pub url: String,
    /// The URL as written in the config (unexpanded): what messages show.
    pub url_display: String,
    /// The values the url's `${VAR}` references expanded to, with the
    /// references: a `Url` made from `url` shows them as written (only the
    /// remote transports and the sign-in make one).
    #[cfg_attr(not(feature = "remote"), allow(dead_code))]
    pub hidden: Vec<(String, String)>,
    pub kind: crate::config::RemoteKind,
    /// Header names and expanded values (the values are secrets).
    pub headers: Vec<(String, String)>,
    /// The configured OAuth client (`oauth`), expanded.
    pub oauth: crate::auth::Client,
}

impl Remote {
    /// The URL, parsed: every message made from it, or from a URL derived
    /// from it, shows the url's references as written. The error names the
    /// url as written (a parser's reason may quote an expanded value).
    #[cfg(feature = "remote")]
    pub(crate) fn parsed_url(&self) -> Result<crate::net::Url, String> {
        crate::net::Url::parse(&self.url)
            .map(|url| url.hiding(self.hidden.iter().cloned()))
            .map_err(|e| match self.hidden.is_empty() {
                true => format!("its url '{}' cannot be used: {e}", self.url_display),
                false => format!(
                    "its url '{}' does not expand to a usable http:// or https:// URL",
                    self.url_display
                ),
            })
    }

    /// Everything that tells two reaches apart (the transport, the expanded
    /// url, the headers and the OAuth client): what a copy key, the era's
    /// definition and the catalog key hash. Secrets: hash it, never show it.
    pub(crate) fn identity(&self) -> RemoteIdentity<'_> {
        let client = &self.oauth;
        (
            self.kind.name(),
            &self.url,
            &self.headers,
            (
                client.client_id.as_deref(),
                client.client_secret.as_deref(),
                &client.scopes,
                client.callback_port,
            ),
        )
    }
}

/// `Remote::identity`: hashable and ordered.
pub(crate) type RemoteIdentity<'a> = (
    &'static str,
    &'a String,
    &'a Vec<(String, String)>,
    (
        Option<&'a str>,
        Option<&'a str>,
        &'a Vec<String>,
        Option<u16>,
    ),
);

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("Remote")
            .field("url", &self.url_display)
            .field("kind", &self.kind)
            .field("headers", &names)
            .field("client_id", &self.oauth.client_id)
            .finish_non_exhaustive()
    }
}

/// Why a request to a child produced no result.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub why: Why,
    /// The child's last stderr lines when it failed (`tail::Tail::text`):
    /// told with a timeout or the end, empty when none are known.
    pub tail: String,
}

#[derive(Debug, Clone)]
pub(crate) enum Why {
    /// The child answered with a JSON-RPC error.
    Rpc(ErrorObject),
    /// No answer before the deadline.
    Timeout,
    /// The child is gone, was stopped, or sent what cannot be read; the
    /// text says how.
    Down(String),
}

impl Failure {
    fn rpc(error: ErrorObject, tail: String) -> Failure {
        Failure {
            why: Why::Rpc(error),
            tail,
        }
    }

    fn timeout(tail: String) -> Failure {
        Failure {
            why: Why::Timeout,
            tail,
        }
    }

    fn down(why: String, tail: String) -> Failure {
        Failure {
            why: Why::Down(why),
            tail,
        }
    }
}

/// A request's answer, with the child's last stderr lines then (for a
/// failure found in the answer).
pub(crate) struct Reply {
    pub raw: Box<RawValue>,
    pub tail: String,
}

/// Whether a child is idle (`Downstream::idle_since`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Idle {
    /// A forwarded call is in flight.
    Busy,
    /// No call has been in flight since then.
    Since(Instant),
    /// It is gone, being stopped, or retiring.
    NotServing,
}

/// Why `forward_call` did not take a call.
#[derive(Debug)]
pub(crate) enum Refused {
    /// The child is gone or going: a restart may serve the call.
    Down(String),
    /// The child is alive but has not read what it was sent.
    Busy(String),
}

/// A started server: its connection and its tools (all pages, unfiltered).
pub(crate) struct Started {
    pub conn: Arc<Downstream>,
    pub tools: Vec<ToolEntry>,
    /// From spawn to the end of the tool listing.
    pub startup: Duration,
    /// The era the server speaks, and the revision agreed on.
    pub era: Era,
    /// The `instructions` of its opening result.
    pub instructions: Option<String>,
}

#[cfg(all(test, feature = "remote"))]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod remote_tests;

// The child's stdin is a plain pipe here. Tests, though not under
// `cfg(test)` alone, which is all clippy takes for tests.
#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
