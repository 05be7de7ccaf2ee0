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
//! The rest of the pump, one job each: `start.rs` (a server's transport,
//! then its opening), `outcome.rs` (what a request comes to: `Reply`,
//! `Failure`, `Refused`, `Idle`), `stop.rs` (how long a stop takes),
//! `call.rs` (a forwarded call's line), `tail.rs` (the last stderr lines),
//! `log_budget.rs` (flood control of logs), `era.rs` (which era a server
//! speaks), `result_cap.rs` (`maxResultChars`).
//!
//! Below the pump, `transport/`: the seam (`transport/mod.rs`, below), what
//! a start needs (`spec.rs`: the command or the url, and the limits), and
//! one folder per kind of transport: `stdio/` (a child's pipes: `child.rs`
//! spawns the child on its pump's thread, `owner.rs` spawns, reaps and
//! kills the tree on drop, `input.rs` its stdin, `lines.rs` its stdout and
//! stderr cut into lines, `missing.rs` where a start that found no program
//! looked) and `http/` (a remote server, feature `remote`: `remote.rs` what
//! both HTTP transports share, `streamable.rs` Streamable HTTP, `sse.rs` the
//! legacy transport, `post.rs` one exchange, `policy.rs` what a POST's
//! answer asks for next, `peek.rs` what a message says); `reach.rs` is how to reach a remote server, as the config says.
//! No file of the pump imports `net` or `auth`: the network and the sign-in
//! are the transports' own.
//!
//! The hot path: `forward_call` runs on the caller's thread, registers the
//! call (one hold of `flight`'s lock) and writes its line through the
//! transport's `Outlet` (for a child: one non-blocking write to its stdin,
//! what the pipe does not take queued for the pump); the answer goes from
//! the pump's thread straight to the session's `Outbox`.
//!
//! How a second transport plugs in (a remote server over Streamable HTTP or
//! legacy SSE, or a WebSocket, say): implement the two traits of
//! `transport/mod.rs` in a file of its own, as `stdio/child.rs` does for
//! pipes, with a constructor like `child::opener` returning an `Opener` (a
//! closure that opens the connection on the pump's thread and returns both
//! halves); `start` (`start.rs`) picks the constructor by the server's
//! `Spec` (a `command`, or a `url`) and hands the opener to `pump::launch`,
//! and nothing else changes: the handshake, the calls, cancellation, the
//! stop and the fleet see only the handle; no transport knows the pump.
//! What the pump expects:
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
pub(crate) mod era;
mod flight;
mod handle;
mod handshake;
mod inbound;
mod log_budget;
mod outcome;
mod pending;
mod pump;
pub(crate) mod result_cap;
mod start;
mod stop;
mod tail;
mod transport;

pub(crate) use handle::Downstream;
pub(crate) use handshake::list_tools;
pub(crate) use outcome::{Idle, Refused};
pub(crate) use start::{start, Started};
pub(crate) use stop::STOP_LIMIT;
pub(crate) use transport::reach::Remote;
pub(crate) use transport::spec::{Lookup, Spec};

// The child's stdin is a plain pipe here. Tests, though not under
// `cfg(test)` alone, which is all clippy takes for tests.
#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
