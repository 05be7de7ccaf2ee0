//! The host side: the session loop that reads the host's lines, hears the
//! fleet's facts and answers both (`server`), what it waits on (`inbox`),
//! the session's state (`session`), and what splits a shared server between
//! sessions (`split`).

pub mod inbox;
pub mod server;
pub(crate) mod session;
pub(crate) mod split;
