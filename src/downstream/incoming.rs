//! What a child's stdout line means, handled on the child's thread: it
//! answers the child's requests (`ping`; everything else is refused), passes
//! its progress and log notifications to the host, and completes pending
//! requests. Forwarded results go straight to the host from here. A line that
//! is not UTF-8 is read with its invalid bytes replaced by U+FFFD, so its
//! answer is not lost.

use super::*;
use crate::downstream::result_cap;
use crate::protocol::jsonrpc::{Incoming, Read};

impl Downstream {
    pub(super) fn on_line(&self, line: &[u8], noise: &mut LogBudget) {
        if log::log_enabled!(log::Level::Debug) {
            log::debug!("[{}] -> {}", self.label, framing::preview(line));
        }
        if trace::enabled() {
            trace::record(trace::Dir::ChildToWorkbench, Some(&self.label), line);
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
                        self.label
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
                    _ => log::debug!("[{}] ignoring notification {method}", self.label),
                };
            }
            Ok(Read::One(Incoming::Response { id, reply })) => {
                return self.on_response(id.as_ref(), reply);
            }
            Ok(Read::One(Incoming::Invalid { reason, .. })) => reason,
            Ok(Read::Batch(_)) => "a batch (the workbench sends none)".to_string(),
            Err(e) => e.to_string(),
        };
        if noise.allow(&self.label) {
            log::warn!(
                "[{}] skipping a stdout line that is not JSON-RPC ({why}): {}",
                self.label,
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
        if let Err(e) = self.write(line) {
            log::debug!("[{}] cannot answer {method}: {e}", self.label);
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
        let host_token = lock(&self.shared)
            .pending
            .progress(id, self.spec.call_timeout);
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
            Some(own) => format!("{}/{own}", self.label),
            None => self.label.clone(),
        };
        params.insert("logger".into(), Value::String(logger));
        self.outbox
            .send(&jsonrpc::notification_line(method::MESSAGE, Some(&params)));
    }

    fn on_response(&self, id: Option<&RequestId>, reply: jsonrpc::Reply) {
        let Some(&RequestId::Int(id)) = id else {
            log::warn!("[{}] response with an unknown id {id:?}", self.label);
            return;
        };
        let (pending, drained) = {
            let mut shared = lock(&self.shared);
            (shared.pending.complete(id), shared.pending.take_drained())
        };
        let Some(pending) = pending else {
            log::debug!("[{}] late or unknown response {id}", self.label);
            return;
        };
        match (pending, reply) {
            (Entry::Discard, _) => {}
            (Entry::Wait(tx), reply) => {
                let _ = tx.send(reply.map(Cow::into_owned).map_err(Failure::Rpc));
            }
            // Without maxResultChars and in the legacy era, one branch: the
            // child's bytes as they are.
            (Entry::Call(call), Ok(result)) => {
                if self.spec.max_result_chars.is_none() && self.modern.get().is_none() {
                    call.reply.send_raw_result(&call.upstream_id, &result)
                } else {
                    self.on_checked_result(&call, &result)
                }
            }
            (Entry::Call(call), Err(e)) => {
                let text = format!(
                    "Tool '{}' in server '{}' (toolbox '{}') failed with error {}: {}",
                    call.tool,
                    self.spec.server,
                    self.spec.toolbox,
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
            self.stop_drained();
        }
    }

    /// A call result that is read before it goes to the host: a modern
    /// child's passes when it is complete (MCP 2026-07-28: a missing
    /// `resultType` means complete), but one that asks for input
    /// (`input_required`) cannot be answered: the workbench declares no client
    /// capability, so it becomes an `isError` result. Then `maxResultChars`
    /// may cut it (`result_cap`).
    fn on_checked_result(&self, call: &pending::Call, result: &RawValue) {
        if self.modern.get().is_some() {
            if let Some(kind) = super::era::incomplete(result.get()) {
                let text = format!(
                    "Tool '{}' in server '{}' (toolbox '{}') answered with resultType '{kind}': it asks for input, which the workbench cannot give (it declares no client capabilities)",
                    call.tool, self.spec.server, self.spec.toolbox
                );
                return call.reply.send(&jsonrpc::result_line(
                    &call.upstream_id,
                    &TextResult::error(&text),
                ));
            }
        }
        let cut = self
            .spec
            .max_result_chars
            .and_then(|cap| result_cap::apply(result, cap, &self.label));
        match cut {
            Some(cut) => call.reply.send_raw_result(&call.upstream_id, &cut),
            None => call.reply.send_raw_result(&call.upstream_id, result),
        }
    }

    /// The child's tools changed: the first notice since the last listing
    /// is reported to the re-lister (dynamic mode); later ones only move the
    /// time of the last change, which the re-lister's debounce reads.
    fn on_tools_changed(&self) {
        *lock(&self.last_change) = Instant::now();
        if self.tools_changed.swap(true, Ordering::SeqCst) {
            return;
        }
        if let (Some(changes), Some(me)) = (&self.changes, self.me.upgrade()) {
            let _ = changes.send(me);
        }
    }
}
