//! The timer thread of a child: fails forwarded calls at their deadline (an
//! `isError` result upstream, `notifications/cancelled` downstream). It sleeps
//! until the earliest deadline; `forward_call` wakes it only when a call has an
//! earlier deadline than the one it sleeps towards, so calls cost it nothing.

use super::*;

impl Downstream {
    pub(super) fn run_timer(&self) {
        let mut shared = lock(&self.shared);
        loop {
            if shared.down.is_some() {
                return;
            }
            let now = Instant::now();
            let expired: Vec<i64> = shared
                .pending
                .iter()
                .filter_map(|(id, p)| match p {
                    Pending::Call(call) if call.deadline <= now => Some(*id),
                    _ => None,
                })
                .collect();
            if !expired.is_empty() {
                let calls: Vec<(i64, Pending)> = expired
                    .into_iter()
                    .filter_map(|id| shared.pending.remove(&id).map(|p| (id, p)))
                    .collect();
                drop(shared);
                for (id, call) in calls {
                    self.time_out(id, call);
                }
                shared = lock(&self.shared);
                continue;
            }
            shared.armed = shared
                .pending
                .values()
                .filter_map(|p| match p {
                    Pending::Call(call) => Some(call.deadline),
                    Pending::Wait(_) | Pending::Discard => None,
                })
                .min();
            shared = match shared.armed {
                None => self
                    .timer_wake
                    .wait(shared)
                    .unwrap_or_else(|p| p.into_inner()),
                Some(at) => {
                    self.timer_wake
                        .wait_timeout(shared, at.saturating_duration_since(now))
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
            };
        }
    }

    /// A forwarded call passed its deadline: tell the child to stop working on
    /// it (basic/utilities/cancellation) and answer the host.
    fn time_out(&self, id: i64, pending: Pending) {
        let Pending::Call(call) = &pending else {
            return;
        };
        let ms = self.spec.call_timeout.as_millis();
        let cancel = json!({"requestId": id, "reason": format!("timed out after {ms} ms")});
        let line = jsonrpc::notification_line(method::CANCELLED, Some(&cancel));
        let _ = self.write(&line);
        let text = format!(
            "Tool '{}' in server '{}' (toolbox '{}') timed out after {ms} ms (callTimeoutMs)",
            call.tool, self.spec.server, self.spec.toolbox
        );
        self.fail(pending, Failure::Timeout, &text);
    }
}
