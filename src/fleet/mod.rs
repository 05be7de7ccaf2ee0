//! The fleet: the toolboxes' servers and everything that happens to them
//! outside a call (opens, closes, restarts, sleeps, reloads, re-lists), with
//! one loop (`main_loop`) that owns the fleet's timers.

pub mod main_loop;
pub mod reload;
pub mod timers;
