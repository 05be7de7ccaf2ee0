//! The remote transports (feature `remote`): a server reached over HTTP.
//! `remote.rs` is what both share behind the seam (the pump's half, the
//! shared half, the request threads' mailbox); `streamable.rs` is MCP's
//! Streamable HTTP, `sse.rs` the legacy HTTP+SSE transport; `post.rs` one
//! exchange on a request's own thread, `policy.rs` what a POST's answer
//! asks for next, `peek.rs` what an outgoing message says. The HTTP itself
//! is `net`'s, the sign-in `auth`'s. The module list only.

mod peek;
mod policy;
mod post;
mod remote;
pub(in crate::downstream) mod sse;
pub(in crate::downstream) mod streamable;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
