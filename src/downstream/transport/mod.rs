//! The seam between a server's pump and the bytes it speaks over: a
//! transport carries JSON-RPC messages both ways and can end. A child's
//! stdio pipes and its exit are one (`stdio/`); a remote server's HTTP
//! requests and event stream are another (`http/`: `remote.rs`, with
//! `streamable.rs` and `sse.rs`; the `//!` header of `downstream/mod.rs`
//! says how one plugs in). No IO here: the two traits, what a wait found,
//! and why a line was not taken (`WriteError`). Re-exports nothing: the
//! pump names a transport by its path.
//!
//! A transport has two halves. `Transport` is the pump's: owned by the
//! pump's thread alone, it is where that thread waits, what it reads
//! messages from, and what the stop sequence acts on. `Outlet` is the
//! shared one: other threads write to the server through it without
//! blocking (the hot path), wake the pump, and give up on a server whose
//! pump is held up.

#[cfg(feature = "remote")]
pub(super) mod http;
pub(super) mod reach;
pub(super) mod spec;
pub(super) mod stdio;

use crate::sys::Exit;
use std::io;
use std::sync::Arc;
use std::time::Duration;

/// Bytes a child may leave unread before further lines to it are refused. A
/// single line is always accepted when nothing is queued, whatever its size.
pub(super) const QUEUE_LIMIT: usize = 8 << 20;

/// Why a line was not taken.
#[derive(Debug)]
pub(crate) enum WriteError {
    /// Stdin was closed (the server is being stopped).
    Closed,
    /// The child has not read what was already sent (`queued` bytes).
    Full { queued: usize },
    /// The pipe failed (the child closed its stdin or died).
    Io(io::Error),
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::Closed => write!(f, "its stdin is closed"),
            WriteError::Full { queued } => write!(
                f,
                "it is not reading its stdin ({queued} bytes sent to it are still unread)"
            ),
            WriteError::Io(e) => write!(f, "cannot write to its stdin: {e}"),
        }
    }
}

/// What a transport hands the pump as it reads.
pub(super) trait Sink {
    /// One JSON-RPC message: one line of newline-delimited JSON, without its
    /// terminator (a transport that frames otherwise, such as SSE, delivers
    /// each message as if it were a line).
    fn message(&mut self, line: &[u8]);
    /// One line of what the server says beside the protocol (a child's
    /// stderr): logged, and its last lines kept for error messages.
    fn diagnostic(&mut self, line: &[u8]);
    /// Request `id` failed in the transport alone (an HTTP error status, a
    /// connection cut): its caller gets `why`, and nothing else is affected.
    /// Only remote transports have such failures.
    #[cfg(feature = "remote")]
    fn failed(&mut self, id: i64, why: &str);
}

/// What one `Transport::wait` found.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Ready {
    /// Messages (or their end) can be read.
    pub messages: bool,
    /// Diagnostics (or their end) can be read.
    pub diagnostics: bool,
    /// Queued input can be written.
    pub room: bool,
    /// The transport ended by itself (the process exited): `ended` says how.
    pub ended: bool,
}

/// Whether the stream of messages goes on after a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flow {
    Open,
    /// The server closed it (a child's stdout reached EOF) while the
    /// transport itself may still be there: past a grace the pump calls it
    /// the end.
    Closed,
}

/// The pump's half, owned by its thread. Never blocks but in `wait`.
pub(super) trait Transport {
    /// Waits until something in `Ready` happened, a wake-up came
    /// (`Outlet::wake`), or `timeout` passed (`None`: no limit). The only
    /// place the pump's thread waits.
    fn wait(&mut self, timeout: Option<Duration>) -> io::Result<Ready>;
    /// Reads what `ready` says is there, handing every complete message and
    /// diagnostic line to `sink`, and writes queued input if there is room.
    fn read(&mut self, ready: &Ready, sink: &mut impl Sink) -> Flow;
    /// Once ended: reads what the server sent before it went, for a moment
    /// at most.
    fn read_last_words(&mut self, sink: &mut impl Sink);
    /// How the transport ended by itself, if it did.
    fn ended(&self) -> Option<Exit>;
    /// Why the transport ended by itself, as the calls in flight are told;
    /// `None` when it did not (or a stop ended it).
    fn end_reason(&self) -> Option<String> {
        self.ended()
            .map(|exit| format!("the server process ended ({exit})"))
    }
    /// The first step of a stop: no more input (a child reads EOF).
    fn close_input(&mut self);
    /// The second step: asks the server to end (SIGTERM); false when the
    /// transport has no such step (the pump goes on to `kill`).
    fn ask_to_end(&mut self) -> bool;
    /// The last step: ends the server now (kills the process tree).
    fn kill(&mut self);
    /// Gives the transport up: ends what is left of it, and reaps. How it
    /// ended, as seen before.
    fn finish(&mut self) -> Exit;
}

/// How a transport is opened: a job the pump runs first on its own thread
/// (a child is spawned by the thread that watches it), returning both
/// halves. A transport's constructor returns one (any such closure is one);
/// `start` hands it to `pump::launch`, so no transport knows the pump.
pub(super) trait Opener: Send + 'static {
    type Transport: Transport;
    fn open(self) -> io::Result<(Self::Transport, Arc<dyn Outlet>)>;
}

impl<T, F> Opener for F
where
    T: Transport,
    F: FnOnce() -> io::Result<(T, Arc<dyn Outlet>)> + Send + 'static,
{
    type Transport = T;
    fn open(self) -> io::Result<(T, Arc<dyn Outlet>)> {
        self()
    }
}

/// The shared half, used from any thread.
pub(crate) trait Outlet: Send + Sync {
    /// Sends one whole line (a JSON-RPC message and its newline) without
    /// blocking, or refuses all of it; what cannot go at once is queued for
    /// the pump to send.
    fn send(&self, line: Vec<u8>) -> Result<(), WriteError>;
    /// Whether sending failed for good (the child closed its stdin, or died).
    fn is_broken(&self) -> bool;
    /// Ends the pump's wait early (a stop, an earlier deadline).
    fn wake(&self);
    /// How the server ended by itself, if it did, seen from any thread.
    fn ended(&self) -> Option<Exit>;
    /// Ends the server from outside the pump, for a pump held up writing
    /// to a host that does not read.
    fn kill(&self);
    /// The pid of the server's first process; 0 without one.
    fn pid(&self) -> u32;
}
