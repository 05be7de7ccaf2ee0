//! `--trace FILE`: every message that crosses the workbench, as JSON lines
//! `{"seq":N,"dir":"host->wb"|"wb->host"|"wb->child"|"child->wb","server":"toolbox/server"|null,"msg":...}`
//! in the order the workbench saw them (one lock orders all four directions).
//! `wb->host` lines are recorded while the `Outbox` holds the stdout lock, so
//! they are in the order the host receives them.
//! `msg` is the message itself, or a string when the line was not JSON.
//! `scripts/trace-to-transcript` turns a trace into a transcript case.
//!
//! The `Trace` is made by what sets it up (`serve`) and carried to the
//! writers in the `Outbox` (the host's lines, and the children's through
//! their handles and pumps); no statics. When tracing is off, each hook
//! checks that the outbox has none.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::Mutex;

/// The trace file and its sequence numbers, behind the one lock that orders
/// all four directions.
pub(crate) struct Trace(Mutex<Tracer>);

struct Tracer {
    out: BufWriter<File>,
    seq: u64,
}

#[derive(Clone, Copy)]
pub enum Dir {
    HostToWorkbench,
    WorkbenchToHost,
    WorkbenchToChild,
    ChildToWorkbench,
}

impl Trace {
    /// A trace into `path` (truncated).
    pub(crate) fn start(path: &Path) -> io::Result<Trace> {
        let out = BufWriter::new(File::create(path)?);
        Ok(Trace(Mutex::new(Tracer { out, seq: 0 })))
    }

    /// Records one line (with or without its `\n`).
    pub(crate) fn record(&self, dir: Dir, server: Option<&str>, line: &[u8]) {
        record(&self.0, dir, server, line)
    }
}

fn record(tracer: &Mutex<Tracer>, dir: Dir, server: Option<&str>, line: &[u8]) {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let msg = match serde_json::from_slice::<&serde_json::value::RawValue>(line) {
        Ok(raw) => raw.get().to_string(),
        Err(_) => serde_json::to_string(&String::from_utf8_lossy(line)).unwrap_or_default(),
    };
    let dir = match dir {
        Dir::HostToWorkbench => "host->wb",
        Dir::WorkbenchToHost => "wb->host",
        Dir::WorkbenchToChild => "wb->child",
        Dir::ChildToWorkbench => "child->wb",
    };
    let server = serde_json::to_string(&server).unwrap_or_default();
    let mut tracer = crate::lock(tracer);
    tracer.seq += 1;
    let seq = tracer.seq;
    let written = writeln!(
        tracer.out,
        "{{\"seq\":{seq},\"dir\":\"{dir}\",\"server\":{server},\"msg\":{msg}}}"
    )
    .and_then(|()| tracer.out.flush());
    if let Err(e) = written {
        log::warn!("cannot write the trace: {e}");
    }
}
