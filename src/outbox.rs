//! The upstream writer: the one place that writes to the host (stdout).
//!
//! Any thread may send; each message is one complete line written with a single
//! `write_all` and a flush under a mutex, so lines never interleave. Forwarded
//! results are written by the thread that read them from the child, with no
//! hand-off to another thread on the way (see ARCHITECTURE.md, hot path).

use crate::{framing, trace};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

pub struct Outbox {
    out: Mutex<Box<dyn Write + Send>>,
    broken: AtomicBool,
}

impl Outbox {
    pub fn new(out: Box<dyn Write + Send>) -> Outbox {
        Outbox {
            out: Mutex::new(out),
            broken: AtomicBool::new(false),
        }
    }

    /// Writes one line (ending in `\n`). A host that stopped reading loses the
    /// message; the failure is logged once and shutdown follows from stdin EOF.
    pub fn send(&self, line: &[u8]) {
        if log::log_enabled!(log::Level::Debug) {
            log::debug!("-> host {}", framing::preview(line));
        }
        if trace::enabled() {
            trace::record(trace::Dir::WorkbenchToHost, None, line);
        }
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = framing::write_line(&mut *out, line) {
            if !self.broken.swap(true, Ordering::Relaxed) {
                log::error!("cannot write to the host: {e}");
            }
        }
    }
}
