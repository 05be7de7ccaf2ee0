//! The timer thread of a child: fails forwarded calls at their deadline (an
//! `isError` result upstream, `notifications/cancelled` downstream). It sleeps
//! until the earliest deadline; `forward_call` wakes it only when a call has an
//! earlier deadline than the one it sleeps towards, so calls cost it nothing.

use super::*;

impl Downstream {
    pub(super) fn run_timer(&self) {
        let mut shared = lock(&self.shared);
        loop {
            if shared.pending.closed().is_some() {
                return;
            }
            let expired = shared.pending.take_expired(Instant::now());
            if !expired.is_empty() {
                let drained = shared.pending.take_drained();
                drop(shared);
                for (id, call) in expired {
                    self.time_out(id, call);
                }
                if drained {
                    self.stop_drained();
                }
                shared = lock(&self.shared);
                continue;
            }
            shared.armed = shared.pending.next_deadline();
            shared = match shared.armed {
                None => self
                    .timer_wake
                    .wait(shared)
                    .unwrap_or_else(|p| p.into_inner()),
                Some(at) => {
                    self.timer_wake
                        .wait_timeout(shared, at.saturating_duration_since(Instant::now()))
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
            };
        }
    }

    /// A forwarded call passed its deadline: tell the child to stop working on
    /// it (MCP 2025-11-25, basic/utilities/cancellation) and answer the host.
    fn time_out(&self, id: i64, call: Call) {
        let (ms, key) = if call.hit_cap() {
            (self.spec.max_call_timeout.as_millis(), "maxCallTimeoutMs")
        } else {
            (self.spec.call_timeout.as_millis(), "callTimeoutMs")
        };
        let cancel = json!({"requestId": id, "reason": format!("timed out after {ms} ms")});
        let line = jsonrpc::notification_line(method::CANCELLED, Some(&cancel));
        let _ = self.write(line);
        let text = format!(
            "Tool '{}' in server '{}' (toolbox '{}') timed out after {ms} ms ({key})",
            call.tool, self.spec.server, self.spec.toolbox
        );
        self.fail(Entry::Call(call), Failure::Timeout, &text);
    }
}
