//! The upstream writer: the one place that writes to the host (stdout).
//!
//! Any thread may send; each message is one complete line written with a single
//! `write_all` and a flush under a mutex, so lines never interleave. Forwarded
//! results are written by the thread that read them from the child, with no
//! hand-off to another thread on the way (see ARCHITECTURE.md, hot path).

use crate::jsonrpc::{self, RequestId};
use crate::{framing, trace};
use serde_json::value::RawValue;
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
        self.send_parts(&[line]);
    }

    /// Writes a result line around a child's raw result without copying the
    /// result into a new buffer (a 16 MiB result costs no 16 MiB allocation).
    pub fn send_raw_result(&self, id: &RequestId, result: &RawValue) {
        let (head, tail) = jsonrpc::raw_result_parts(id);
        self.send_parts(&[&head, result.get().as_bytes(), tail]);
    }

    /// Writes the pieces of one line (the last ends in `\n`) under one lock.
    fn send_parts(&self, parts: &[&[u8]]) {
        if log::log_enabled!(log::Level::Debug) || trace::enabled() {
            let line = parts.concat();
            log::debug!("-> host {}", framing::preview(&line));
            trace::record(trace::Dir::WorkbenchToHost, None, &line);
        }
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        let written = parts
            .iter()
            .try_for_each(|part| out.write_all(part))
            .and_then(|()| out.flush());
        if let Err(e) = written {
            if !self.broken.swap(true, Ordering::Relaxed) {
                log::error!("cannot write to the host: {e}");
            }
        }
    }
}
