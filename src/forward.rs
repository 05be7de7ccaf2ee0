//! The hot path of `use_tool` and of dynamic mode's native tools: resolve the
//! identifier, write the call to the child, return. The child's reader thread
//! answers the host; nothing here waits for a child.
//!
//! A call whose server died (whether the workbench had noticed yet or not),
//! fell asleep or was reconfigured joins its toolbox's lifecycle queue for
//! one start of that server.

use crate::downstream::{Downstream, Refused};
use crate::jsonrpc::RequestId;
use crate::lifecycle::{self, Op, Workbench};
use crate::meta_tools::Outcome;
use crate::toolbox::{Route, ToolId};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::ops::Deref;
use std::sync::Arc;

/// A validated call on its way to a child. On the hot path its arguments are
/// borrowed from the host's line (`&RawValue`); a call that waits for a
/// restart owns a copy (the default).
pub struct ForwardedCall<A = Box<RawValue>> {
    pub id: RequestId,
    pub tool_id: ToolId,
    /// The tool's input as the host's own bytes.
    pub arguments: A,
    /// The host's `_meta` without its progress token.
    pub meta: Map<String, Value>,
    pub progress_token: Option<Value>,
    /// Restarts this call has waited for: a server that dies again before
    /// taking it gets one more, then the call fails.
    pub restarts: u8,
}

impl<A: Deref<Target = RawValue>> ForwardedCall<A> {
    /// The call with its own copy of the arguments, to outlive the host's line.
    fn into_owned(self) -> ForwardedCall {
        ForwardedCall {
            id: self.id,
            tool_id: self.tool_id,
            arguments: self.arguments.to_owned(),
            meta: self.meta,
            progress_token: self.progress_token,
            restarts: self.restarts,
        }
    }
}

/// Forwards `call` (on the main thread).
pub fn forward<A: Deref<Target = RawValue>>(wb: &Arc<Workbench>, call: ForwardedCall<A>) {
    let conn = match wb.registry.resolve(&call.tool_id) {
        Ok(Route::Conn(conn)) => conn,
        // Asleep or reconfigured: start it.
        Ok(Route::Start) => return restart(wb, call.into_owned()),
        Err(text) => return wb.send_outcome(&call.id, &Outcome::error(text)),
    };
    match send(&call, &conn) {
        Ok(()) => {}
        // It died, whether the workbench had noticed or not: restart it.
        Err(Refused::Down(_)) => restart(wb, call.into_owned()),
        Err(Refused::Busy(why)) => busy(wb, &call, &why),
    }
}

/// Queues `call` for one start of its server, in its toolbox's queue.
fn restart(wb: &Arc<Workbench>, mut call: ForwardedCall) {
    let slot = match wb.registry.current().find(&call.tool_id.toolbox) {
        Some(toolbox) => Arc::clone(&toolbox.slot),
        None => {
            let text = format!("Toolbox '{}' not found", call.tool_id.toolbox);
            return wb.send_outcome(&call.id, &Outcome::error(text));
        }
    };
    call.restarts += 1;
    let op = Op::Restart {
        server: call.tool_id.server.clone(),
        calls: vec![call],
    };
    lifecycle::submit(wb, &slot, op);
}

/// Forwards `call` to `conn`, which was just (re)started for it. A server
/// that is down again already (another queued call may have ended it) gets
/// one more restart for this call; after that the call fails.
pub fn after_restart(wb: &Arc<Workbench>, call: ForwardedCall, conn: &Downstream) {
    match send(&call, conn) {
        Ok(()) => {}
        Err(Refused::Busy(why)) => busy(wb, &call, &why),
        Err(Refused::Down(_)) if call.restarts < 2 => restart(wb, call),
        Err(Refused::Down(why)) => {
            let ToolId {
                toolbox, server, ..
            } = &call.tool_id;
            let text = format!(
                "Server '{server}' in toolbox '{toolbox}' stopped again right after it was \
                 restarted ({why}); the next call starts it again"
            );
            wb.send_outcome(&call.id, &Outcome::error(text));
        }
    }
}

/// Writes the call to the child; a refused call is the caller's to answer.
fn send<A: Deref<Target = RawValue>>(
    call: &ForwardedCall<A>,
    conn: &Downstream,
) -> Result<(), Refused> {
    let token = call.progress_token.as_ref();
    conn.forward_call(
        call.id.clone(),
        &call.tool_id.tool,
        &call.arguments,
        &call.meta,
        token,
    )
}

fn busy<A>(wb: &Workbench, call: &ForwardedCall<A>, why: &str) {
    let ToolId {
        toolbox,
        server,
        tool,
    } = &call.tool_id;
    let text = format!(
        "Tool '{tool}' in server '{server}' (toolbox '{toolbox}') was not called: the server \
         is not keeping up ({why}). Try again later, or close and reopen toolbox '{toolbox}'"
    );
    wb.send_outcome(&call.id, &Outcome::error(text));
}
