//! The host side: the session loop that reads the host's lines, hears the
//! fleet's facts and answers both (`server`), what it waits on (`inbox`),
//! and the session's state (`session`).

pub mod inbox;
pub mod server;
pub(crate) mod session;
