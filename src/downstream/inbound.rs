//! The pump's state, owned by its thread alone (`pump.rs`), and what it does
//! with what the transport hands it: a message (a response: forwarded
//! results go straight to the host from here; a ping; progress; a log
//! message; a list change), a diagnostic line (stderr: logged, its last lines
//! kept), a deadline, the end. What other threads must know of it, it
//! publishes: failures carry the last stderr lines, a list change sets the
//! handle's flag and is reported on the changes channel, the end leaves the
//! last stderr lines on the handle.
//!
//! A line that is not UTF-8 is read with its invalid bytes replaced by
//! U+FFFD, so its answer is not lost.

use super::era;
use super::handle::Downstream;
use super::log_budget::LogBudget;
use super::outcome::{Failure, Reply};
use super::pending::{self, Entry};
use super::result_cap;
use super::tail::Tail;
use super::transport::Sink;
use crate::protocol::framing;
use crate::protocol::jsonrpc::{self, ErrorObject, Incoming, Read, RequestId};
use crate::protocol::mcp::{method, TextResult};
use crate::sys::Exit;
use crate::wire::outbox::Outbox;
use crate::wire::trace::Dir;
use crossbeam_channel::Sender;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Instant;

pub(super) struct Inbound {
    conn: Arc<Downstream>,
    /// Where the child's log messages go (the session that started it).
    outbox: Arc<Outbox>,
    /// Told (without blocking) when the child says its tools changed.
    changes: Option<Sender<Arc<Downstream>>>,
    /// The last stderr lines.
    tail: Tail,
    /// Stdout lines that are not JSON-RPC, logged within a budget.
    noise: LogBudget,
    stderr_budget: LogBudget,
}

impl Sink for Inbound {
    fn message(&mut self, line: &[u8]) {
        self.on_line(line);
    }

    fn diagnostic(&mut self, line: &[u8]) {
        self.keep_stderr_line(line);
    }

    /// Request `id` failed in the transport alone (a remote server's HTTP
    /// error, a cut connection): its caller gets `why` (a forwarded call as
    /// its `isError` result), the other requests go on.
    #[cfg(feature = "remote")]
    fn failed(&mut self, id: i64, why: &str) {
        let (entry, drained) = self.conn.flight.complete(id);
        match entry {
            None => log::debug!(
                "[{}] late failure of request {id}: {why}",
                self.conn.label()
            ),
            Some(Entry::Discard) => log::debug!("[{}] {why}", self.conn.label()),
            Some(Entry::Wait(wait)) => {
                log::warn!("[{}] {why}", self.conn.label());
                let _ = wait
                    .tx
                    .send(Err(Failure::down(why.to_string(), self.tail.text())));
            }
            Some(Entry::Call(call)) => {
                log::warn!("[{}] {why}", self.conn.label());
                let spec = self.conn.spec();
                let text = format!(
                    "Server '{}' in toolbox '{}' failed while running tool '{}': {why}",
                    spec.server, spec.toolbox, call.tool
                );
                call.reply.send(&jsonrpc::result_line(
                    &call.upstream_id,
                    &TextResult::error(&text),
                ));
            }
        }
        if drained {
            self.conn.stop_drained();
        }
    }
}

impl Inbound {
    pub(super) fn new(
        conn: Arc<Downstream>,
        outbox: Arc<Outbox>,
        changes: Option<Sender<Arc<Downstream>>>,
    ) -> Inbound {
        Inbound {
            conn,
            outbox,
            changes,
            tail: Tail::default(),
            noise: LogBudget::new("stdout"),
            stderr_budget: LogBudget::new("stderr"),
        }
    }

    /// The handle this pump serves.
    pub(super) fn conn(&self) -> &Arc<Downstream> {
        &self.conn
    }

    /// A stderr line: logged within the flood budget, and kept for error
    /// messages.
    pub(super) fn keep_stderr_line(&mut self, line: &[u8]) {
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end();
        if text.is_empty() {
            return;
        }
        if self.stderr_budget.allow(self.conn.label()) {
            log::info!("[{}] {text}", self.conn.label());
        }
        self.tail.keep(text);
    }

    /// The child died or closed its stdout: fail what is in flight, once, with
    /// `why` and its last stderr lines. A stop in progress has done it already.
    pub(super) fn went_down(&mut self, why: String) {
        let tail = self.tail.text();
        // Published before the table of calls closes: a request that finds
        // it closed (a handshake racing the child's exit) tells the same
        // last lines as the calls failed here.
        self.conn.publish_last_words(tail.clone());
        let spec = self.conn.spec();
        let (server, toolbox) = (&spec.server, &spec.toolbox);
        let closed = self.conn.fail_in_flight(&why, &tail, |tool| {
            format!("Server '{server}' in toolbox '{toolbox}' failed while running tool '{tool}': {why}{tail}")
        });
        if closed {
            log::warn!("[{}] {why}", self.conn.label());
        }
    }

    /// The transport ended (`exit`): leaves the last stderr lines on the
    /// handle, for failures told from now on (unless `went_down` left them
    /// already).
    pub(super) fn finished(&mut self, exit: &Exit) {
        self.conn.publish_last_words(self.tail.text());
        if self.conn.stop_asked() {
            // A remote server has no process to have ended one way or another.
            if self.conn.pid() == 0 {
                log::info!("[{}] stopped", self.conn.label());
            } else {
                log::info!("[{}] stopped ({exit})", self.conn.label());
            }
        }
    }

    /// Fails the forwarded calls and waiting requests past their deadline.
    pub(super) fn expire(&mut self, now: Instant) {
        let (calls, waits, drained) = self.conn.flight.take_expired(now);
        // Waits first: a call's answer goes to a host that may be slow.
        if !waits.is_empty() {
            let tail = self.tail.text();
            for wait in waits {
                let _ = wait.tx.send(Err(Failure::timeout(tail.clone())));
            }
        }
        for (id, call) in calls {
            self.time_out(id, call);
        }
        if drained {
            self.conn.stop_drained();
        }
    }

    /// A forwarded call passed its deadline: tell the child to stop working on
    /// it (MCP 2025-11-25, basic/utilities/cancellation) and answer the host.
    fn time_out(&self, id: i64, call: pending::Call) {
        let spec = self.conn.spec();
        let (ms, key) = if call.hit_cap() {
            (call.max.as_millis(), "maxCallTimeoutMs")
        } else {
            (call.timeout.as_millis(), "callTimeoutMs")
        };
        self.conn
            .tell_cancelled(id, Some(&format!("timed out after {ms} ms")));
        let mut text = format!(
            "Tool '{}' in server '{}' (toolbox '{}') timed out after {ms} ms ({key})",
            call.tool, spec.server, spec.toolbox
        );
        if let Some(remote) = &spec.remote {
            // As written in the config: the expanded url may hold a secret.
            text.push_str(&format!(": no answer from {}", remote.url_display));
        }
        let result = TextResult::error(&text);
        call.reply
            .send(&jsonrpc::result_line(&call.upstream_id, &result));
    }

    pub(super) fn on_line(&mut self, line: &[u8]) {
        if log::log_enabled!(log::Level::Debug) {
            log::debug!("[{}] -> {}", self.conn.label(), framing::preview(line));
        }
        if let Some(trace) = self.outbox.trace() {
            trace.record(Dir::ChildToWorkbench, Some(self.conn.label()), line);
        }
        // JSON text must be UTF-8 (RFC 8259 §8.1; MCP basic/transports §stdio).
        // A line that is JSON but for invalid bytes, usually inside a string, is
        // read with each invalid sequence replaced by U+FFFD: its response is
        // delivered, rather than dropped and reported as timed out. Only this
        // rare path copies the line.
        let repaired: String;
        let read = match jsonrpc::read_kept(line) {
            Err(_) if std::str::from_utf8(line).is_err() => {
                repaired = String::from_utf8_lossy(line).into_owned();
                let read = jsonrpc::read_kept(repaired.as_bytes());
                if read.is_ok() {
                    log::warn!(
                        "[{}] a stdout line is not UTF-8; its invalid bytes were replaced by U+FFFD",
                        self.conn.label()
                    );
                }
                read
            }
            read => read,
        };
        let why = match read {
            Ok(Read::One(Incoming::Request { id, method, .. })) => {
                return self.answer_request(&method, &id)
            }
            Ok(Read::One(Incoming::Notification { method, params })) => {
                return match &*method {
                    method::PROGRESS => self.on_progress(params.as_deref()),
                    method::MESSAGE => self.on_log_message(params.as_deref()),
                    method::TOOLS_LIST_CHANGED => self.on_tools_changed(),
                    _ => log::debug!("[{}] ignoring notification {method}", self.conn.label()),
                };
            }
            Ok(Read::One(Incoming::Response { id, reply })) => {
                return self.on_response(id.as_ref(), reply);
            }
            Ok(Read::One(Incoming::Invalid { reason, .. })) => reason,
            Ok(Read::Batch(_)) => "a batch (the workbench sends none)".to_string(),
            Err(e) => e.to_string(),
        };
        if self.noise.allow(self.conn.label()) {
            log::warn!(
                "[{}] skipping a stdout line that is not JSON-RPC ({why}): {}",
                self.conn.label(),
                framing::preview(line)
            );
        }
    }

    /// Server-to-client requests: `ping` is answered, the rest refused (we
    /// declare no client capabilities; MCP 2025-11-25, client/roots, "Error Handling").
    fn answer_request(&self, method: &str, id: &RequestId) {
        let line = if method == method::PING {
            jsonrpc::result_line(id, &json!({}))
        } else {
            let error = ErrorObject::new(
                jsonrpc::METHOD_NOT_FOUND,
                format!("Method not found: {method}"),
            );
            jsonrpc::error_line(Some(id), &error)
        };
        if let Err(e) = self.conn.send(line) {
            log::debug!("[{}] cannot answer {method}: {e}", self.conn.label());
        }
    }

    /// A child's progress for a forwarded call goes to the host with the host's
    /// token, and restarts the call's deadline (basic/utilities/progress,
    /// basic/lifecycle, "Timeouts", MCP 2025-11-25). Progress for anything else is dropped.
    fn on_progress(&self, params: Option<&RawValue>) {
        let Some(mut params) =
            params.and_then(|p| serde_json::from_str::<Map<String, Value>>(p.get()).ok())
        else {
            return;
        };
        let Some(id) = params.get("progressToken").and_then(Value::as_i64) else {
            return;
        };
        let host_token = self.conn.flight.progress(id);
        if let Some((token, reply)) = host_token {
            params.insert("progressToken".into(), token);
            reply.send(&jsonrpc::notification_line(method::PROGRESS, Some(&params)));
        }
    }

    /// A child's log message goes to the host with the logger named after the
    /// toolbox and server (`toolbox/server` or `toolbox/server/logger`).
    fn on_log_message(&self, params: Option<&RawValue>) {
        let Some(mut params) =
            params.and_then(|p| serde_json::from_str::<Map<String, Value>>(p.get()).ok())
        else {
            return;
        };
        let logger = match params.get("logger").and_then(Value::as_str) {
            Some(own) => format!("{}/{own}", self.conn.label()),
            None => self.conn.label().to_string(),
        };
        params.insert("logger".into(), Value::String(logger));
        self.outbox
            .send(&jsonrpc::notification_line(method::MESSAGE, Some(&params)));
    }

    fn on_response(&self, id: Option<&RequestId>, reply: jsonrpc::Reply) {
        let Some(&RequestId::Int(id)) = id else {
            log::warn!("[{}] response with an unknown id {id:?}", self.conn.label());
            return;
        };
        let (pending, drained) = self.conn.flight.complete(id);
        let Some(pending) = pending else {
            log::debug!("[{}] late or unknown response {id}", self.conn.label());
            return;
        };
        match (pending, reply) {
            (Entry::Discard, _) => {}
            (Entry::Wait(wait), reply) => {
                let tail = self.tail.text();
                let _ = wait.tx.send(match reply {
                    Ok(raw) => Ok(Reply {
                        raw: raw.into_owned(),
                        tail,
                    }),
                    Err(e) => Err(Failure::rpc(e, tail)),
                });
            }
            // Without maxResultChars and in the legacy era, one branch: the
            // child's bytes as they are.
            (Entry::Call(call), Ok(result)) => {
                if self.conn.spec().max_result_chars.is_none() && self.conn.modern().is_none() {
                    call.reply.send_raw_result(&call.upstream_id, &result)
                } else {
                    self.on_checked_result(&call, &result)
                }
            }
            (Entry::Call(call), Err(e)) => {
                let text = format!(
                    "Tool '{}' in server '{}' (toolbox '{}') failed with error {}: {}",
                    call.tool,
                    self.conn.spec().server,
                    self.conn.spec().toolbox,
                    e.code,
                    e.text()
                );
                call.reply.send(&jsonrpc::result_line(
                    &call.upstream_id,
                    &TextResult::error(&text),
                ));
            }
        }
        if drained {
            self.conn.stop_drained();
        }
    }

    /// A call result that is read before it goes to the host: a modern
    /// child's passes when it is complete (MCP 2026-07-28: a missing
    /// `resultType` means complete), but one that asks for input
    /// (`input_required`) cannot be answered: the workbench declares no client
    /// capability, so it becomes an `isError` result. Then `maxResultChars`
    /// may cut it (`result_cap`).
    fn on_checked_result(&self, call: &pending::Call, result: &RawValue) {
        let spec = self.conn.spec();
        if self.conn.modern().is_some() {
            if let Some(kind) = era::incomplete(result.get()) {
                let text = format!(
                    "Tool '{}' in server '{}' (toolbox '{}') answered with resultType '{kind}': it asks for input, which the workbench cannot give (it declares no client capabilities)",
                    call.tool, spec.server, spec.toolbox
                );
                return call.reply.send(&jsonrpc::result_line(
                    &call.upstream_id,
                    &TextResult::error(&text),
                ));
            }
        }
        let cut = spec
            .max_result_chars
            .and_then(|cap| result_cap::apply(result, cap, self.conn.label()));
        match cut {
            Some(cut) => call.reply.send_raw_result(&call.upstream_id, &cut),
            None => call.reply.send_raw_result(&call.upstream_id, result),
        }
    }

    /// The child's tools changed: the first notice since the last listing
    /// is reported to the re-lister (dynamic mode); later ones only move the
    /// time of the last change, which the re-lister's debounce reads.
    fn on_tools_changed(&self) {
        if !self.conn.note_tools_changed(Instant::now()) {
            return;
        }
        if let Some(changes) = &self.changes {
            let _ = changes.send(Arc::clone(&self.conn));
        }
    }
}
