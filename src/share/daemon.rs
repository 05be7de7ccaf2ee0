//! The shared fleet's process (docs/reference.md §8): `mcp-workbench fleet`,
//! started detached by the first session of a config with
//! `"shareServers": true`. It listens on the config's endpoint, checks that
//! each peer is this user, and serves every connection as a host session of
//! its own (`Server::attach`) on one `Fleet`. It ends `shareLingerMs` after
//! its last session left, or on SIGTERM/SIGINT/SIGHUP, stopping its servers
//! by the usual sequence; its watchdog covers its death by SIGKILL.
//!
//! Threads besides the fleet's own: `accept`, and per session its loop
//! (`session N`; on Windows with a `host reader`) and its writer (`session
//! N out`), so a session that stops reading holds up nobody but itself. A session
//! whose unread output passes `OUT_LIMIT` is dropped.

use super::endpoint::Endpoint;
use super::wire::{Answer, Hello, ServerStatus, SessionStatus, Status};
use crate::auth::SignIns;
use crate::config::{Config, Mode, ServerConfig};
use crate::fleet::launch::Launcher;
use crate::fleet::toolbox::{ServerState, Toolbox, Toolboxes};
use crate::fleet::{main_loop, Fleet};
use crate::host::inbox::HostInput;
use crate::host::server::Server;
use crate::host::session::{Card, Peer, Session};
use crate::host::split;
use crate::lock;
use crate::protocol::framing::LineReader;
use crate::protocol::mcp;
use crate::sys::{self, local::Stream, Stamp};
use crate::wire::outbox::Outbox;
use std::collections::{HashSet, VecDeque};
use std::io::{self, BufReader, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread;
use std::time::Instant;

/// Unread output a session may have queued before it is dropped.
const OUT_LIMIT: usize = 256 << 20;
/// A part of a line this long (a result) is sent from where it is, not
/// gathered into the line.
const UNCOPIED: usize = 64 << 10;

/// Serves the fleet of the config at `path` (`config`, read after its stamp
/// `seen` was taken) until it lingered long enough without a session, or a
/// signal ends it. Its remote servers sign in and talk through `sign_ins`.
pub(crate) fn run(
    path: PathBuf,
    config: Config,
    seen: Option<Stamp>,
    sign_ins: SignIns,
) -> io::Result<()> {
    let endpoint = Endpoint::of(&path)?;
    let listener = endpoint.bind()?;
    log::info!(
        "fleet of {} listening on {} (pid {})",
        path.display(),
        endpoint.socket.display(),
        std::process::id()
    );
    let dynamic = config.mode == Mode::Dynamic;
    let (changes, changed) = crossbeam_channel::unbounded();
    // Children's log notifications have no one host to go to: they go to
    // the fleet's log (its stderr), one JSON line each.
    let logs = Arc::new(Outbox::new(Box::new(io::stderr())));
    let launcher = Launcher::new(logs, dynamic.then_some(changes), sign_ins);
    let fleet = main_loop::start(&config, launcher, dynamic.then_some(changed));
    fleet.watch_config(path.clone(), config.clone(), seen);
    let daemon = Arc::new(Daemon {
        fleet,
        config,
        path,
        endpoint,
        started: Instant::now(),
        sessions: Mutex::new(Some(Vec::new())),
        emptied: Mutex::new(Instant::now()),
        left: Condvar::new(),
        next_id: AtomicU64::new(1),
    });
    let ending = Arc::clone(&daemon);
    // The main thread waits in `linger`: this thread ends the process.
    sys::on_shutdown_signal("signals", move |_| {
        ending.stop();
        std::process::exit(0);
    });
    let accepting = Arc::clone(&daemon);
    thread::Builder::new()
        .name("accept".into())
        .spawn(move || loop {
            match listener.accept() {
                Ok(stream) => accepting.admit(stream),
                Err(e) => log::warn!("cannot accept a session: {e}"),
            }
        })?;
    daemon.linger();
    Ok(())
}

struct Daemon {
    fleet: Arc<Fleet>,
    /// The config the fleet started with (reloads reach the registry; new
    /// sessions take the registry's toolboxes).
    config: Config,
    path: PathBuf,
    endpoint: Endpoint,
    started: Instant,
    /// The sessions attached, for `status` and the linger; `None` once the
    /// fleet decided to end (a session that comes then is turned away).
    sessions: Mutex<Option<Vec<Arc<Card>>>>,
    /// When the last session left (the start, before the first came): the
    /// linger runs from there while no session is attached.
    emptied: Mutex<Instant>,
    left: Condvar,
    next_id: AtomicU64,
}

impl Daemon {
    /// Takes a connection: this user's, else closed at once.
    fn admit(self: &Arc<Self>, stream: Stream) {
        if let Err(why) = stream.peer_check() {
            return log::warn!("refused a connection {why}");
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let daemon = Arc::clone(self);
        let spawned = thread::Builder::new()
            .name(format!("session {id}"))
            .spawn(move || {
                if let Err(e) = daemon.serve(id, stream) {
                    log::debug!("session {id} ended: {e}");
                }
            });
        if let Err(e) = spawned {
            log::error!("cannot create a session thread: {e}");
        }
    }

    /// Serves connection `stream`: a hello, then a session or a status report.
    fn serve(self: &Arc<Self>, id: u64, stream: Stream) -> io::Result<()> {
        let mut reader = LineReader::new(BufReader::new(stream.try_clone()?));
        let Some(line) = reader.next_line()? else {
            return Ok(());
        };
        let hello: Hello = serde_json::from_slice(line).map_err(io::Error::other)?;
        let mut stream = stream;
        if hello.version != mcp::VERSION {
            let reason = format!(
                "this fleet runs mcp-workbench {}, the session {}",
                mcp::VERSION,
                hello.version
            );
            return send(&mut stream, &Answer::Refused { reason });
        }
        if hello.role == "status" {
            return send(&mut stream, &Answer::Status(self.status()));
        }
        let out = Writer::start(id, stream.try_clone()?)?;
        let outbox = Arc::new(Outbox::new(Box::new(out)));
        let config = self.current_config();
        let card = Arc::new(Card {
            id: self.fleet.new_session_id(),
            pid: hello.pid,
            client: OnceLock::new(),
        });
        let peer = Peer::new(Arc::clone(&card), hello.env, &config);
        let session = Session::attached(&config, Arc::clone(&outbox), peer);
        // Counted before it is welcomed, so the linger cannot end the fleet
        // under a welcomed session; once the fleet decided to end, refused,
        // and its front starts the next fleet.
        match &mut *lock(&self.sessions) {
            Some(sessions) => sessions.push(Arc::clone(&card)),
            None => {
                let reason = "this fleet is ending".to_string();
                return send(&mut stream, &Answer::Refused { reason });
            }
        }
        let welcome = Answer::Welcome {
            pid: std::process::id(),
        };
        let result = send(&mut stream, &welcome).and_then(|()| {
            log::info!("session {id} attached (pid {})", hello.pid);
            let input = reader.into_inner();
            #[cfg(unix)]
            let input = HostInput::polled(input);
            #[cfg(not(unix))]
            let input = HostInput::reader(input);
            let server = Server::attach(Arc::clone(&self.fleet), config, session, input)?;
            server.run()
        });
        stream.shutdown();
        if let Some(sessions) = &mut *lock(&self.sessions) {
            sessions.retain(|s| s.id != card.id);
            if sessions.is_empty() {
                *lock(&self.emptied) = Instant::now();
            }
        }
        self.left.notify_all();
        log::info!("session {id} left");
        result
    }

    /// The config as it is now: the registry has the reloaded toolboxes.
    fn current_config(&self) -> Config {
        let toolboxes = self.fleet.toolboxes();
        Config {
            toolboxes: toolboxes.configs().into_iter().cloned().collect(),
            ..self.config.clone()
        }
    }

    /// Waits until no session was attached for `shareLingerMs`, then stops
    /// every server, and `run` returns (`mcp-workbench fleet` exits 0).
    /// The decision and the endpoint's removal happen under the start lock,
    /// and no session attaches after it: a session either finds this fleet
    /// or starts the next one.
    fn linger(&self) {
        let linger = self.config.share_linger;
        let attached = |s: &mut Option<Vec<Arc<Card>>>| s.as_ref().is_some_and(|s| !s.is_empty());
        loop {
            let mut sessions = lock(&self.sessions);
            while attached(&mut sessions) {
                sessions = self.left.wait(sessions).unwrap_or_else(|p| p.into_inner());
            }
            let (sessions, waited) = self
                .left
                .wait_timeout_while(sessions, linger, |s| !attached(s))
                .unwrap_or_else(|p| p.into_inner());
            drop(sessions);
            if !waited.timed_out() {
                continue;
            }
            let _lock = self.endpoint.lock();
            let mut sessions = lock(&self.sessions);
            if attached(&mut sessions) {
                continue;
            }
            *sessions = None;
            drop(sessions);
            log::info!("no session for {} ms: the fleet ends", linger.as_millis());
            self.endpoint.unlink();
            break;
        }
        self.stop();
    }

    /// Removes the endpoint and stops every server.
    fn stop(&self) {
        self.endpoint.unlink();
        self.fleet.shutdown();
    }

    fn status(&self) -> Status {
        let sessions = lock(&self.sessions).clone().unwrap_or_default();
        // With no session, the linger runs: the fleet ends then unless one attaches.
        let ends_in_ms = sessions.is_empty().then(|| {
            let ends = *lock(&self.emptied) + self.config.share_linger;
            let left = ends.saturating_duration_since(Instant::now());
            u64::try_from(left.as_millis()).unwrap_or(u64::MAX)
        });
        let toolboxes = self.fleet.toolboxes();
        let mut servers = Vec::new();
        for toolbox in toolboxes.all() {
            let Some(open) = &toolbox.open else { continue };
            let holders = self.fleet.holders(&toolbox.slot);
            let holders: Vec<u32> = sessions
                .iter()
                .filter(|s| holders.contains(&s.id))
                .map(|s| s.pid)
                .collect();
            for (config, state) in toolbox.config.servers.iter().zip(&open.servers) {
                let (state, pid, era) = match state {
                    ServerState::Running(r) => {
                        let era = r
                            .conn
                            .era()
                            .map(|e| format!("{} {}", e.name(), e.version()));
                        let pid = config.remote.is_none().then(|| r.conn.pid());
                        ("running", pid, era)
                    }
                    ServerState::Asleep(_) => ("asleep", None, None),
                    _ => continue,
                };
                servers.push(ServerStatus {
                    toolbox: toolbox.config.name.clone(),
                    server: config.name.clone(),
                    pid,
                    state: state.into(),
                    era,
                    rss_kb: pid.and_then(sys::rss_kb),
                    sessions: holders.clone(),
                    transport: config.remote.as_ref().map(|r| r.kind.name().into()),
                    url: config.remote.as_ref().map(|r| r.url.source().into()),
                    separate: separate(&toolboxes, toolbox, config, &sessions, &self.fleet),
                });
            }
        }
        Status {
            pid: std::process::id(),
            version: mcp::VERSION.into(),
            uptime_ms: self.started.elapsed().as_millis() as u64,
            config: self.path.display().to_string(),
            ends_in_ms,
            sessions: sessions
                .iter()
                .map(|s| SessionStatus {
                    pid: s.pid,
                    client: s.client.get().cloned().flatten(),
                    toolboxes: held_names(&toolboxes, &self.fleet.held_by(s.id)),
                })
                .collect(),
            servers,
        }
    }
}

/// When another open copy of `toolbox` runs `server` too: the sessions
/// that hold it, and why theirs is separate (`host::split::why_separate`,
/// between the environments the two copies were made with).
fn separate(
    toolboxes: &Toolboxes,
    toolbox: &Toolbox,
    server: &ServerConfig,
    sessions: &[Arc<Card>],
    fleet: &Fleet,
) -> Option<String> {
    let own = toolbox.env.as_deref()?;
    let other = toolboxes.all().find(|other| {
        other.variant != toolbox.variant
            && other.config.name == toolbox.config.name
            && other.open.is_some()
            && other.config.servers.iter().any(|s| s.name == server.name)
    })?;
    let why = split::why_separate(&toolbox.config.name, server, own, other.env.as_deref()?)?;
    let holders = fleet.holders(&other.slot);
    let pids: Vec<String> = sessions
        .iter()
        .filter(|s| holders.contains(&s.id))
        .map(|s| s.pid.to_string())
        .collect();
    Some(format!(
        "sessions [{}] hold a separate copy: {why}",
        pids.join(", ")
    ))
}

/// The names of the toolboxes whose copies are `held`, in config order.
fn held_names(toolboxes: &Toolboxes, held: &HashSet<u64>) -> Vec<String> {
    let holds = |name: &str| {
        toolboxes
            .all()
            .any(|t| t.config.name == name && held.contains(&t.slot.id))
    };
    toolboxes
        .names()
        .into_iter()
        .filter(|name| holds(name))
        .map(str::to_string)
        .collect()
}

/// Writes one JSON line.
fn send(stream: &mut Stream, answer: &Answer) -> io::Result<()> {
    let mut line = serde_json::to_vec(answer).map_err(io::Error::other)?;
    line.push(b'\n');
    stream.write_all(&line)
}

/// A session's output. The outbox's line goes straight to the socket when
/// the socket takes it whole and nothing waits before it (one non-blocking
/// send, no thread hop: the hot path); the rest waits in a queue that the
/// session's writer thread drains, so no thread of the fleet waits on a
/// session that does not read. Past `OUT_LIMIT` queued bytes the session is
/// cut off.
struct Writer {
    line: Vec<u8>,
    out: Arc<(Mutex<Queue>, Condvar)>,
    stream: Stream,
}

#[derive(Default)]
struct Queue {
    lines: VecDeque<Vec<u8>>,
    bytes: usize,
    /// The writer thread is writing a line it took from the queue.
    busy: bool,
    closed: bool,
}

impl Writer {
    fn start(id: u64, stream: Stream) -> io::Result<Writer> {
        let out: Arc<(Mutex<Queue>, Condvar)> = Arc::default();
        let (queue, mut socket) = (Arc::clone(&out), stream.try_clone()?);
        thread::Builder::new()
            .name(format!("session {id} out"))
            .spawn(move || loop {
                let line = {
                    let (lock_, wake) = &*queue;
                    let mut q = lock(lock_);
                    q.busy = false;
                    while q.lines.is_empty() && !q.closed {
                        q = wake.wait(q).unwrap_or_else(|p| p.into_inner());
                    }
                    let Some(line) = q.lines.pop_front() else {
                        return; // closed
                    };
                    q.bytes -= line.len();
                    q.busy = true;
                    line
                };
                if socket.write_all(&line).is_err() {
                    socket.shutdown();
                    let (lock_, _) = &*queue;
                    let mut q = lock(lock_);
                    q.closed = true;
                    q.lines.clear();
                    return;
                }
            })?;
        Ok(Writer {
            line: Vec::new(),
            out,
            stream,
        })
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        let (queue, wake) = &*self.out;
        lock(queue).closed = true;
        wake.notify_one();
    }
}

impl Write for Writer {
    /// Small parts gather into the line; a large one (a result) goes out at
    /// once with what precedes it, without being copied.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.len() < UNCOPIED {
            self.line.extend_from_slice(buf);
        } else {
            let head = std::mem::take(&mut self.line);
            self.send(&[&head, buf])?;
        }
        Ok(buf.len())
    }

    /// The outbox flushes once per line, under its lock: the line goes out.
    fn flush(&mut self) -> io::Result<()> {
        let line = std::mem::take(&mut self.line);
        self.send(&[&line])
    }
}

impl Writer {
    /// Sends `parts` straight to the socket when nothing waits before them
    /// and it takes them now (one non-blocking send, no thread hop: the hot
    /// path); queues what it does not take for the writer thread.
    fn send(&mut self, parts: &[&[u8]]) -> io::Result<()> {
        let total: usize = parts.iter().map(|p| p.len()).sum();
        if total == 0 {
            return Ok(());
        }
        let (queue, wake) = &*self.out;
        let mut q = lock(queue);
        if q.closed {
            return Err(io::Error::other("the session's connection is closed"));
        }
        let mut sent = 0;
        if q.lines.is_empty() && !q.busy {
            match self.stream.send_now(parts) {
                Ok(n) => sent = n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => {
                    q.closed = true;
                    self.stream.shutdown();
                    return Err(e);
                }
            }
            if sent == total {
                return Ok(());
            }
        }
        if q.bytes + total - sent > OUT_LIMIT {
            log::warn!("a session does not read its output: dropping it");
            q.closed = true;
            self.stream.shutdown();
            return Err(io::Error::other("the session does not read"));
        }
        let mut rest = Vec::with_capacity(total - sent);
        for part in parts {
            let skip = sent.min(part.len());
            rest.extend_from_slice(&part[skip..]);
            sent -= skip;
        }
        q.bytes += rest.len();
        q.lines.push_back(rest);
        wake.notify_one();
        Ok(())
    }
}
