//! A host session's end of a shared fleet (docs/reference.md §8): the
//! process the host started, relaying the host's MCP lines to the fleet
//! (which runs the session) and the fleet's lines back, as they are.
//!
//! It keeps just enough to survive the fleet: the requests in flight, the
//! host's `initialize`, `notifications/initialized` and `logging/setLevel`,
//! and the toolboxes the host opened. When the fleet dies, every request in
//! flight is answered at once with an error; the host's next line starts
//! (or finds) a new fleet, which hears the handshake again and re-opens
//! those toolboxes before the line goes on.
//!
//! Threads: main reads the host and writes to the fleet; `fleet reader`
//! writes the fleet's lines to the host (through the outbox).

use super::endpoint::Endpoint;
use super::wire::{Answer, Hello};
use crate::lock;
use crate::protocol::framing::LineReader;
use crate::protocol::jsonrpc::{self, ErrorObject, Incoming, Members, Read, RequestId};
use crate::protocol::mcp::{self, method, TextResult};
use crate::sys::{self, local::Stream};
use crate::wire::outbox::Outbox;
use std::collections::{BTreeSet, HashMap};
use std::io::{self, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How long a new fleet may take to listen.
const START_LIMIT: Duration = Duration::from_secs(10);
/// The start of the ids of the requests the front makes itself; a secret
/// of this front follows (`own_prefix`), so no host id is ever taken for one.
const OWN_ID: &str = "mcp-workbench/front/";

/// The session's front.
pub(crate) struct Front {
    endpoint: Endpoint,
    config: PathBuf,
    host: Arc<Outbox>,
    state: Arc<Mutex<State>>,
    /// The fleet connection's write half, while one is up.
    fleet: Option<Stream>,
    /// Host lines not yet written to the fleet: pipelined lines that arrive
    /// together leave together (one write, one wake-up of the fleet).
    gathered: Vec<u8>,
    /// What the host said that a new fleet must hear again.
    replay: Replay,
    /// How the ids of the front's own requests start: `OWN_ID` and a
    /// secret of this process, which the host never sees (the fleet's
    /// answers to them go nowhere), so cannot send.
    own: Arc<str>,
    /// The fleet this front started, to be reaped when it ends.
    started: Vec<Child>,
}

/// What the reader thread and the main thread share.
#[derive(Default)]
struct State {
    /// The fleet connection serves; false once the reader saw it end.
    up: bool,
    /// The host's requests in flight: whether each is a `tools/call`.
    in_flight: HashMap<RequestId, bool>,
    /// The host left: the connection's end is ours, not the fleet's.
    leaving: bool,
}

#[derive(Default)]
struct Replay {
    initialize: Option<Vec<u8>>,
    initialized: bool,
    set_level: Option<Vec<u8>>,
    toolboxes: BTreeSet<String>,
}

impl Front {
    /// The front of the config at `config`; answers go to `host`.
    pub(crate) fn new(config: &Path, host: Arc<Outbox>) -> io::Result<Front> {
        Ok(Front {
            endpoint: Endpoint::of(config)?,
            config: config.to_path_buf(),
            host,
            state: Arc::default(),
            fleet: None,
            gathered: Vec::new(),
            replay: Replay::default(),
            own: own_prefix().into(),
            started: Vec::new(),
        })
    }

    /// Attaches to the fleet, starting it if none runs.
    pub(crate) fn attach(&mut self) -> io::Result<()> {
        // Reaps the fleets this front started that have ended.
        self.started
            .retain_mut(|c| matches!(c.try_wait(), Ok(None)));
        let mut last = None;
        // A fleet ending as we connect closes on us: the next try starts one.
        for _ in 0..3 {
            match self.connect_or_start() {
                Ok(stream) => return self.serve_with(stream),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("no fleet")))
    }

    /// A welcomed connection to the fleet.
    fn connect_or_start(&mut self) -> io::Result<Stream> {
        if let Ok(stream) = self.endpoint.connect() {
            return greet(stream);
        }
        let _lock = self.endpoint.lock()?;
        if let Ok(stream) = self.endpoint.connect() {
            return greet(stream);
        }
        let mut child = self.start_fleet()?;
        let deadline = Instant::now() + START_LIMIT;
        loop {
            if let Ok(stream) = self.endpoint.connect() {
                self.started.push(child);
                return greet(stream);
            }
            if let Ok(Some(status)) = child.try_wait() {
                return Err(io::Error::other(format!(
                    "the shared fleet exited at start ({status}); its log is {}",
                    self.endpoint.log.display()
                )));
            }
            if Instant::now() >= deadline {
                self.started.push(child);
                return Err(io::Error::other(format!(
                    "the shared fleet did not listen within {} s; its log is {}",
                    START_LIMIT.as_secs(),
                    self.endpoint.log.display()
                )));
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Starts `mcp-workbench fleet --config PATH`, detached, in the config's
    /// folder, logging to the endpoint's log.
    fn start_fleet(&self) -> io::Result<Child> {
        // A new fleet's log replaces its dead predecessor's.
        let log = std::fs::File::create(&self.endpoint.log)?;
        let config = plain(std::fs::canonicalize(&self.config)?);
        // Not the host's folder, which differs from session to session.
        let folder = config.parent().unwrap_or(Path::new("/")).to_path_buf();
        let mut cmd = Command::new(std::env::current_exe()?);
        cmd.arg("fleet")
            .arg("--config")
            .arg(&config)
            .current_dir(folder)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        log::debug!("starting the shared fleet of {}", self.config.display());
        sys::spawn_detached(&mut cmd)
    }

    /// Makes `stream` the fleet connection: the reader thread starts, and a
    /// new fleet hears what the host said before.
    fn serve_with(&mut self, stream: Stream) -> io::Result<()> {
        let reader = stream.try_clone()?;
        {
            let mut state = lock(&self.state);
            state.up = true;
        }
        let (state, host, own) = (
            Arc::clone(&self.state),
            Arc::clone(&self.host),
            Arc::clone(&self.own),
        );
        thread::Builder::new()
            .name("fleet reader".into())
            .spawn(move || relay_back(reader, &state, &host, &own))?;
        self.fleet = Some(stream);
        self.replay_to_fleet()
    }

    /// A new fleet session hears the handshake again and re-opens the
    /// toolboxes the host had open. Nothing waits for the answers (the
    /// front drops them): the fleet reads a session's lines in order, and
    /// queues a toolbox's operations in order, so the host's next line
    /// finds the session initialized and a call to a re-opening toolbox
    /// waits for that open in the fleet, while a `ping` is answered at once.
    fn replay_to_fleet(&mut self) -> io::Result<()> {
        let Some(initialize) = self.replay.initialize.clone() else {
            return Ok(());
        };
        self.own_request(&initialize, "initialize")?;
        if self.replay.initialized {
            let line = jsonrpc::notification_line::<()>(method::INITIALIZED, None);
            self.write(&line)?;
        }
        if let Some(set_level) = self.replay.set_level.clone() {
            self.own_request(&set_level, "setLevel")?;
        }
        for toolbox in self.replay.toolboxes.clone() {
            let params = serde_json::json!({
                "name": "open_toolbox",
                "arguments": {"toolbox_name": toolbox}
            });
            let id = self.own_id(&format!("open/{toolbox}"));
            self.write(&jsonrpc::request_line(&id, method::TOOLS_CALL, &params))?;
        }
        Ok(())
    }

    /// Sends the host's request `line` again under an id of the front's.
    fn own_request(&mut self, line: &[u8], what: &str) -> io::Result<()> {
        let id = self.own_id(what);
        let Ok(Read::One(Incoming::Request { method, params, .. })) = jsonrpc::read(line) else {
            return Err(io::Error::other("a kept request no longer reads"));
        };
        let line = jsonrpc::request_line(&id, &method, &params);
        self.write(&line)
    }

    /// The id of the front's own request `what`.
    #[allow(clippy::expect_used, reason = "a string is an id")]
    fn own_id(&self, what: &str) -> RequestId {
        let id = serde_json::Value::String(format!("{}{what}", self.own));
        RequestId::from_json(&id).expect("a string is an id")
    }

    fn write(&mut self, line: &[u8]) -> io::Result<()> {
        match &mut self.fleet {
            Some(stream) => stream.write_all(line),
            None => Err(io::Error::other("no fleet")),
        }
    }

    /// Relays the host's lines until stdin ends.
    pub(crate) fn run(mut self, input: impl io::Read) -> io::Result<()> {
        let mut reader = LineReader::new(BufReader::with_capacity(1 << 16, input));
        while let Some(line) = reader.next_line()? {
            self.host_line(line);
            if !reader.has_buffered() {
                self.send_gathered();
            }
        }
        lock(&self.state).leaving = true;
        if let Some(stream) = &self.fleet {
            stream.shutdown();
        }
        Ok(())
    }

    /// One host line: noted, then sent on (after a new fleet if the last
    /// one ended).
    fn host_line(&mut self, line: &[u8]) {
        let noted = self.note(line);
        let requests = match self.track(noted) {
            Ok(()) => return self.gather(line),
            Err(untracked) => untracked,
        };
        // The fleet ended: what was gathered for it was answered with it.
        self.gathered.clear();
        self.fleet = None;
        // A new fleet hears what the host said before this line; the host's
        // own `initialize`, if this is it, goes after the replay as itself.
        let first = self.replay.initialize.as_deref() == Some(line);
        let initialize = if first {
            self.replay.initialize.take()
        } else {
            None
        };
        let attached = self.attach();
        if first {
            self.replay.initialize = initialize;
        }
        let (lost, why) = match attached {
            Ok(()) => match self.track(requests) {
                Ok(()) => return self.gather(line),
                Err(untracked) => (untracked, "the shared fleet ended".to_string()),
            },
            Err(e) => {
                log::error!("cannot reach the shared fleet: {e}");
                (requests, e.to_string())
            }
        };
        for (id, call) in lost {
            answer_lost(&self.host, &id, call, &why);
        }
    }

    /// `line` waits to go to the fleet with the lines read with it.
    fn gather(&mut self, line: &[u8]) {
        self.gathered.extend_from_slice(line);
        self.gathered.push(b'\n');
    }

    /// Counts `requests` in flight, if the fleet connection is up: checked
    /// and done under one lock, so the reader answers them if it ends.
    /// Otherwise they come back.
    fn track(&self, requests: Vec<(RequestId, bool)>) -> Result<(), Vec<(RequestId, bool)>> {
        let mut state = lock(&self.state);
        if !state.up {
            return Err(requests);
        }
        state.in_flight.extend(requests);
        Ok(())
    }

    /// Writes the gathered host lines to the fleet.
    fn send_gathered(&mut self) {
        if self.gathered.is_empty() {
            return;
        }
        let lines = std::mem::take(&mut self.gathered);
        if let Err(e) = self.write(&lines) {
            // The reader sees the end too, and answers what is in flight.
            log::warn!("the shared fleet's connection broke: {e}");
            if let Some(stream) = &self.fleet {
                stream.shutdown();
            }
        }
        self.gathered = lines;
        self.gathered.clear();
    }

    /// Notes what a new fleet must hear again; the requests of `line`, with
    /// whether each is a `tools/call`.
    fn note(&mut self, line: &[u8]) -> Vec<(RequestId, bool)> {
        let mut requests = Vec::new();
        let items: Vec<Incoming> = match jsonrpc::read(line) {
            Ok(Read::One(incoming)) => vec![incoming],
            Ok(Read::Batch(items)) => items
                .into_iter()
                .filter_map(|item| match jsonrpc::read(item.get().as_bytes()) {
                    Ok(Read::One(incoming)) => Some(incoming),
                    _ => None,
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        for incoming in items {
            match incoming {
                Incoming::Request { id, method, params } => {
                    match method.as_ref() {
                        method::INITIALIZE if self.replay.initialize.is_none() => {
                            self.replay.initialize = Some(line.to_vec())
                        }
                        method::SET_LEVEL => self.replay.set_level = Some(line.to_vec()),
                        method::TOOLS_CALL => self.note_toolbox(params.as_deref()),
                        _ => {}
                    }
                    requests.push((id, method == method::TOOLS_CALL));
                }
                Incoming::Notification { method, .. } if method == method::INITIALIZED => {
                    self.replay.initialized = true
                }
                _ => {}
            }
        }
        requests
    }

    /// `open_toolbox` and `close_toolbox` change what a new fleet re-opens.
    fn note_toolbox(&mut self, params: Option<&serde_json::value::RawValue>) {
        let Some(params) = params.and_then(|p| Members::read(p).ok()) else {
            return;
        };
        let open = match params.string("name").as_deref() {
            Some("open_toolbox") => true,
            Some("close_toolbox") => false,
            _ => return, // use_tool and the rest: nothing to keep
        };
        let Some(toolbox) = params
            .get("arguments")
            .and_then(|a| Members::read(a).ok())
            .and_then(|a| a.string("toolbox_name"))
        else {
            return;
        };
        if open {
            self.replay.toolboxes.insert(toolbox);
        } else {
            self.replay.toolboxes.remove(&toolbox);
        }
    }
}

/// `path` without the `\\?\` that Windows' canonical form puts before a
/// drive letter: cmd.exe (so `npx.cmd`) cannot run in such a folder, and
/// processes started there inherit it. The fleet canonicalizes the path
/// again for its endpoint, which is then the same.
fn plain(path: PathBuf) -> PathBuf {
    let drive = path
        .to_str()
        .and_then(|text| text.strip_prefix(r"\\?\"))
        .filter(|rest| rest.as_bytes().get(1) == Some(&b':'))
        .map(PathBuf::from);
    drive.unwrap_or(path)
}

/// `OWN_ID` and 128 bits this process draws: std's `RandomState` is seeded
/// from the system's randomness (a secret, not a key: no crate for it).
fn own_prefix() -> String {
    use std::hash::{BuildHasher, Hasher};
    let draw = || {
        std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish()
    };
    format!("{OWN_ID}{:016x}{:016x}/", draw(), draw())
}

/// Sends the hello and reads the welcome.
fn greet(mut stream: Stream) -> io::Result<Stream> {
    let hello = Hello {
        version: mcp::VERSION.into(),
        role: "session".into(),
        pid: std::process::id(),
        env: std::env::vars().collect(),
    };
    match exchange(&mut stream, &hello)? {
        Answer::Welcome { pid } => {
            log::debug!("attached to the shared fleet (pid {pid})");
            Ok(stream)
        }
        Answer::Refused { reason } => Err(io::Error::other(reason)),
        Answer::Status(_) => Err(io::Error::other("the fleet answered out of turn")),
    }
}

/// Writes `hello` and reads the one-line answer, leaving nothing buffered:
/// the answer is read a byte at a time (a few dozen bytes, once).
pub(super) fn exchange(stream: &mut Stream, hello: &Hello) -> io::Result<Answer> {
    let mut line = serde_json::to_vec(hello).map_err(io::Error::other)?;
    line.push(b'\n');
    stream.write_all(&line)?;
    stream.set_read_timeout(Some(START_LIMIT))?;
    let mut answer = Vec::new();
    let mut byte = [0u8];
    loop {
        match io::Read::read(stream, &mut byte)? {
            0 => return Err(io::Error::other("the fleet closed the connection")),
            _ if byte[0] == b'\n' => break,
            _ => answer.push(byte[0]),
        }
    }
    stream.set_read_timeout(None)?;
    serde_json::from_slice(&answer).map_err(io::Error::other)
}

/// The `fleet reader` thread: the fleet's lines go to the host as they
/// are, except answers to the front's own requests. When the fleet ends,
/// every request in flight is answered with an error at once.
fn relay_back(stream: Stream, state: &Mutex<State>, host: &Outbox, own: &str) {
    let mut reader = LineReader::new(BufReader::with_capacity(1 << 16, stream));
    // Lines read together go to the host together.
    let mut gathered = Vec::new();
    while let Ok(Some(line)) = reader.next_line() {
        let mut ids = Vec::new();
        match jsonrpc::read_kept(line) {
            Ok(Read::One(Incoming::Response { id: Some(id), .. })) => ids.push(id),
            Ok(Read::Batch(items)) => {
                for item in items {
                    if let Ok(Read::One(Incoming::Response { id: Some(id), .. })) =
                        jsonrpc::read_kept(item.get().as_bytes())
                    {
                        ids.push(id);
                    }
                }
            }
            _ => {}
        }
        let own_answer = matches!(ids.as_slice(), [RequestId::Str(raw)]
            if raw.get().strip_prefix('"').is_some_and(|s| s.starts_with(own)));
        if own_answer {
            log::debug!("the fleet answered the front's {:?}", ids[0]);
        } else {
            let mut state_now = lock(state);
            for id in &ids {
                state_now.in_flight.remove(id);
            }
            drop(state_now);
            gathered.extend_from_slice(line);
            gathered.push(b'\n');
        }
        if !reader.has_buffered() && !gathered.is_empty() {
            host.send(&gathered);
            gathered.clear();
        }
    }
    if !gathered.is_empty() {
        host.send(&gathered);
    }
    let lost: Vec<(RequestId, bool)> = {
        let mut state = lock(state);
        state.up = false;
        if state.leaving {
            return;
        }
        state.in_flight.drain().collect()
    };
    log::warn!(
        "the shared fleet ended; {} request(s) in flight get an error, and the next one starts a new fleet",
        lost.len()
    );
    for (id, call) in lost {
        answer_lost(host, &id, call, "the shared fleet ended");
    }
}

/// The answer to a request the fleet will not answer: an `isError` result
/// for a tool call (a model can act on it), else a JSON-RPC error.
fn answer_lost(host: &Outbox, id: &RequestId, call: bool, why: &str) {
    let text = format!(
        "The workbench's shared fleet of servers stopped before answering ({why}); \
         call again: the next request starts it again"
    );
    let line = if call {
        jsonrpc::result_line(id, &TextResult::error(&text))
    } else {
        jsonrpc::error_line(Some(id), &ErrorObject::new(jsonrpc::INTERNAL_ERROR, text))
    };
    host.send(&line);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fleet_gets_paths_without_the_verbatim_prefix_before_a_drive() {
        let plain_of = |p: &str| plain(PathBuf::from(p));
        assert_eq!(
            plain_of(r"\\?\C:\cfg\config.json"),
            PathBuf::from(r"C:\cfg\config.json")
        );
        // A share has no other canonical form: kept.
        assert_eq!(
            plain_of(r"\\?\UNC\host\share\c.json"),
            PathBuf::from(r"\\?\UNC\host\share\c.json")
        );
        assert_eq!(
            plain_of("/home/me/config.json"),
            PathBuf::from("/home/me/config.json")
        );
    }
}
