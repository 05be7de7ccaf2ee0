//! The upstream writer: the one place that writes to the host (stdout).
//!
//! Any thread may send; each message is one complete line written with a single
//! `write_all` and a flush under a mutex, so lines never interleave. Forwarded
//! results are written by the thread that read them from the child, with no
//! hand-off to another thread on the way (see ARCHITECTURE.md, hot path).

use crate::lock;
use crate::protocol::batch::{Batches, Slot};
use crate::protocol::framing;
use crate::protocol::jsonrpc::{self, Incoming, Read, RequestId};
use crate::wire::trace::{Dir, Trace};
use serde_json::value::RawValue;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pub(crate) struct Outbox {
    /// The `--trace` file, if any.
    trace: Option<Arc<Trace>>,
    out: Mutex<Box<dyn Write + Send>>,
    broken: AtomicBool,
    /// Set at shutdown: nothing more is written, so no thread that stops the
    /// children can block on a host that no longer reads.
    closed: AtomicBool,
    /// Batches waiting for answers (2025-03-26 only); checked with one atomic
    /// load per message when there are none.
    batches: Mutex<Batches>,
    batching: AtomicBool,
}

impl Outbox {
    pub(crate) fn new(out: Box<dyn Write + Send>) -> Outbox {
        Outbox::traced(out, None)
    }

    /// An outbox whose lines, and the lines of the children writing to it,
    /// go to `trace` too (`--trace`).
    pub(crate) fn traced(out: Box<dyn Write + Send>, trace: Option<Arc<Trace>>) -> Outbox {
        Outbox {
            trace,
            out: Mutex::new(out),
            broken: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            batches: Mutex::new(Batches::default()),
            batching: AtomicBool::new(false),
        }
    }

    /// Writes one line (ending in `\n`). A host that stopped reading loses the
    /// message; the failure is logged once and shutdown follows from stdin EOF.
    pub(crate) fn send(&self, line: &[u8]) {
        if self.batching.load(Ordering::SeqCst) {
            if let Some(id) = response_id(line) {
                if self.held_for_batch(&id, line) {
                    return;
                }
            }
        }
        self.send_parts(&[line]);
    }

    /// Writes a result line around a child's raw result without copying the
    /// result into a new buffer (a 16 MiB result costs no 16 MiB allocation).
    pub(crate) fn send_raw_result(&self, id: &RequestId, result: &RawValue) {
        let (head, tail) = jsonrpc::raw_result_parts(id);
        if self.batching.load(Ordering::SeqCst)
            && self.held_for_batch(
                id,
                &[head.as_slice(), result.get().as_bytes(), tail].concat(),
            )
        {
            return;
        }
        self.send_parts(&[&head, result.get().as_bytes(), tail]);
    }

    /// Writes nothing from now on (shutdown).
    /// The `--trace` file the lines of this outbox's host and children go to.
    pub(crate) fn trace(&self) -> Option<&Arc<Trace>> {
        self.trace.as_ref()
    }

    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
    }

    /// Starts a batch (see `batch`): its answers are held back until all of
    /// them are there, then written as one array.
    pub(crate) fn open_batch(&self, slots: Vec<Slot>) {
        let mut batches = lock(&self.batches);
        self.batching.store(true, Ordering::SeqCst);
        let complete = batches.open(slots);
        self.batching.store(!batches.is_empty(), Ordering::SeqCst);
        drop(batches);
        if let Some(line) = complete {
            self.send_parts(&[&line]);
        }
    }

    /// A request that will get no answer (cancelled): its batch stops waiting.
    pub(crate) fn forget(&self, id: &RequestId) {
        if !self.batching.load(Ordering::SeqCst) {
            return;
        }
        let mut batches = lock(&self.batches);
        let complete = batches.forget(id);
        self.batching.store(!batches.is_empty(), Ordering::SeqCst);
        drop(batches);
        if let Some(line) = complete {
            self.send_parts(&[&line]);
        }
    }

    /// Whether `line`, the response to `id`, belongs to a batch (and was kept,
    /// or written with its completed batch).
    fn held_for_batch(&self, id: &RequestId, line: &[u8]) -> bool {
        let mut batches = lock(&self.batches);
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let Some(complete) = batches.capture(id, line) else {
            return false;
        };
        self.batching.store(!batches.is_empty(), Ordering::SeqCst);
        drop(batches);
        if let Some(batch) = complete {
            self.send_parts(&[&batch]);
        }
        true
    }

    /// Writes the pieces of one line (the last ends in `\n`) under one lock.
    /// The trace records the line under that lock too, so its `wb->host`
    /// entries are in the order the host receives the lines.
    fn send_parts(&self, parts: &[&[u8]]) {
        if self.closed.load(Ordering::Relaxed) {
            return;
        }
        let mut out = lock(&self.out);
        if log::log_enabled!(log::Level::Debug) || self.trace.is_some() {
            let line = parts.concat();
            log::debug!("-> host {}", framing::preview(&line));
            if let Some(trace) = &self.trace {
                trace.record(Dir::WorkbenchToHost, None, &line);
            }
        }
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

/// The id of a response line (`None` for notifications and requests).
fn response_id(line: &[u8]) -> Option<RequestId> {
    match jsonrpc::read(line) {
        Ok(Read::One(Incoming::Response { id, .. })) => id,
        _ => None,
    }
}
