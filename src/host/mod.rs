//! The host side: the session loop that reads the host's lines and answers
//! them (`server`), the session's state (`session`), the one writer to the
//! host (`outbox`) and the `--trace` file (`trace`).

pub mod outbox;
pub mod server;
pub(crate) mod session;
pub mod trace;
