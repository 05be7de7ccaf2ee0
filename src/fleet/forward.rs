//! The hot path of `use_tool` and of dynamic mode's native tools: resolve the
//! identifier, write the call to the child, return. The child's own thread
//! answers the host; nothing here waits for a child.
//!
//! Nothing here answers the host or restarts a server: a call that was not
//! written comes back to the caller (`Unsent`), which answers it or hands it
//! to the fleet (`Fleet::restart_for`) for a start of its server. On the way to the
//! child nothing is added to the registry's lookup and the child's write: no
//! channel, no other lock.

use crate::downstream::{Downstream, Refused};
use crate::fleet::toolbox::{Registry, Route, ToolId, Variant};
use crate::protocol::jsonrpc::RequestId;
use crate::wire::outbox::Outbox;
use crate::wire::SessionId;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;

/// A validated call on its way to a child. On the hot path its arguments are
/// borrowed from the host's line (`&RawValue`); a call that waits for a
/// restart owns a copy (the default).
pub(crate) struct ForwardedCall<A = Box<RawValue>> {
    pub id: RequestId,
    /// The session that sent it.
    pub session: SessionId,
    /// Where its answer goes: the session's outbox.
    pub reply: Arc<Outbox>,
    /// Which copy of the toolbox serves this session (`toolbox::Variant`).
    pub variant: Variant,
    pub tool_id: ToolId,
    /// The tool's input as the host's own bytes.
    pub arguments: A,
    /// The host's `_meta` without its progress token.
    pub meta: Map<String, Value>,
    pub progress_token: Option<Value>,
    /// This call's `callTimeoutMs`, when the host set one (`mcp::TIME_LIMIT_META`).
    pub time_limit: Option<Duration>,
    /// Restarts this call has waited for: a server that dies again before
    /// taking it gets one more, then the call fails.
    pub restarts: u8,
}

impl<A: Deref<Target = RawValue>> ForwardedCall<A> {
    /// The call with its own copy of the arguments, to outlive the host's line.
    fn into_owned(self) -> ForwardedCall {
        ForwardedCall {
            id: self.id,
            session: self.session,
            reply: self.reply,
            variant: self.variant,
            tool_id: self.tool_id,
            arguments: self.arguments.to_owned(),
            meta: self.meta,
            progress_token: self.progress_token,
            time_limit: self.time_limit,
            restarts: self.restarts,
        }
    }
}

/// A call `forward` did not write: its caller hands it on.
pub(crate) enum Unsent {
    /// Its server died (whether the workbench had noticed or not; `down`
    /// says why, when it had), sleeps or was reconfigured: the call, with its
    /// own copy of the arguments, waits for one start of it
    /// (`Fleet::restart_for`). Boxed: this path copies the arguments
    /// anyway, and the hot path's result stays small.
    Start {
        call: Box<ForwardedCall>,
        down: Option<String>,
    },
    /// The call fails: the `use_tool` error for request `id`.
    Fail(RequestId, String),
}

/// Forwards `call` (on the main thread): resolves its tool in `registry`
/// and writes it to the child. Nothing is answered here.
pub(crate) fn forward<A: Deref<Target = RawValue>>(
    registry: &Registry,
    call: ForwardedCall<A>,
) -> Result<(), Unsent> {
    let conn = match registry.resolve(&call.tool_id, call.variant) {
        Ok(Route::Conn(conn)) => conn,
        Ok(Route::Start) => {
            let call = Box::new(call.into_owned());
            return Err(Unsent::Start { call, down: None });
        }
        Err(text) => return Err(Unsent::Fail(call.id, text)),
    };
    match send(&call, &conn) {
        Ok(()) => Ok(()),
        Err(Refused::Down(why)) => {
            let call = Box::new(call.into_owned());
            Err(Unsent::Start {
                call,
                down: Some(why),
            })
        }
        Err(Refused::Busy(why)) => {
            let text = busy_text(&call.tool_id, &why);
            Err(Unsent::Fail(call.id, text))
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
        (call.session, &call.reply),
        &call.tool_id.tool,
        &call.arguments,
        &call.meta,
        token,
        call.time_limit,
    )
}

/// The error of a call its server did not take: it is not reading.
pub(crate) fn busy_text(tool_id: &ToolId, why: &str) -> String {
    let ToolId {
        toolbox,
        server,
        tool,
    } = tool_id;
    format!(
        "Tool '{tool}' in server '{server}' (toolbox '{toolbox}') was not called: the server \
         is not keeping up ({why}). Try again later, or close and reopen toolbox '{toolbox}'"
    )
}

/// The error of a call whose server died again right after its restart.
pub(crate) fn stopped_again(tool_id: &ToolId, why: &str) -> String {
    let ToolId {
        toolbox, server, ..
    } = tool_id;
    format!(
        "Server '{server}' in toolbox '{toolbox}' stopped again right after it was \
         restarted ({why}); the next call starts it again"
    )
}
