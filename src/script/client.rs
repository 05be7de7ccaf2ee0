//! An MCP client of one host session, which `call` sends `use_tool` through
//! (docs/reference.md §13): the config's shared fleet, attached to as a
//! host's front attaches (`share::front`, starting the fleet when none
//! runs), or a `host::server::Server` of this process on a thread. Either
//! way the session is the one a host would get, spoken to over in-memory
//! pipes: the session enforces every rule of `use_tool`, and this file
//! only writes requests and hands back their answers by id.
//!
//! Threads: `script session` runs the session (its loop, or the front's
//! relay); `script answers` reads the session's lines. Closing the client
//! ends the session's input, so the session stops what it started (a
//! fleet's servers stay with the fleet). Renders nothing.

use crate::auth::SignIns;
use crate::config::Config;
use crate::host::inbox::HostInput;
use crate::host::server::Server;
use crate::protocol::mcp;
use crate::share::front::Front;
use crate::wire::outbox::Outbox;
use crate::wire::trace::Trace;
use crossbeam_channel::Receiver;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::io::{self, BufRead, BufReader, PipeWriter, Write};
use std::path::Path;
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Instant;

/// A session and the way to it.
pub(crate) struct Client {
    to_session: Option<PipeWriter>,
    answers: Receiver<Answer>,
    session: Option<JoinHandle<io::Result<()>>>,
    next: u64,
}

/// The answer to request `id`: its result's JSON as the session wrote it,
/// or the JSON-RPC error's message.
pub(crate) struct Answer {
    pub id: u64,
    pub result: Result<Box<RawValue>, String>,
}

#[derive(Deserialize)]
struct Line {
    id: Option<Value>,
    result: Option<Box<RawValue>>,
    error: Option<ErrorObject>,
}

#[derive(Deserialize)]
struct ErrorObject {
    code: i64,
    message: String,
}

impl Client {
    /// A session of this process's own on `config` (file `path`), its
    /// messages written to `trace` when there is one: its servers start
    /// here, for this client only, and stop when it closes. Its sign-ins
    /// never open a browser: a script has no person at it.
    pub(crate) fn local(
        config: Config,
        path: &Path,
        trace: Option<Arc<Trace>>,
    ) -> io::Result<Client> {
        let (from_client, to_session) = io::pipe()?;
        let (from_session, to_client) = io::pipe()?;
        let input = HostInput::reader(BufReader::new(from_client));
        let outbox = Arc::new(Outbox::traced(Box::new(to_client), trace));
        let server = Server::new(config, outbox, input, SignIns::default())?;
        server.keep_catalog(path);
        // A signal stops the servers, then ends the process.
        server.watch_signals();
        let session = thread::Builder::new()
            .name("script session".into())
            .spawn(move || server.run())?;
        Client::begin(to_session, from_session, session)
    }

    /// A session of the shared fleet of the config at `path`, started when
    /// none runs; the error when it cannot be reached or started.
    pub(crate) fn shared(path: &Path) -> io::Result<Client> {
        let (from_client, to_session) = io::pipe()?;
        let (from_session, to_client) = io::pipe()?;
        let mut front = Front::new(path, Arc::new(Outbox::new(Box::new(to_client))))?;
        front.attach()?;
        let session = thread::Builder::new()
            .name("script session".into())
            .spawn(move || front.run(from_client))?;
        Client::begin(to_session, from_session, session)
    }

    /// Starts reading the session's answers, and says hello: `initialize`
    /// and `notifications/initialized`, written without waiting (the
    /// session reads its lines in order).
    fn begin(
        to_session: PipeWriter,
        from_session: io::PipeReader,
        session: JoinHandle<io::Result<()>>,
    ) -> io::Result<Client> {
        let (tx, answers) = crossbeam_channel::unbounded();
        thread::Builder::new()
            .name("script answers".into())
            .spawn(move || {
                for line in BufReader::new(from_session).split(b'\n') {
                    let Ok(line) = line else { break };
                    if let Some(answer) = answer(&line) {
                        if tx.send(answer).is_err() {
                            break;
                        }
                    }
                }
            })?;
        let mut client = Client {
            to_session: Some(to_session),
            answers,
            session: Some(session),
            next: 0,
        };
        let hello = serde_json::json!({
            "protocolVersion": mcp::LATEST_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "mcp-workbench call", "version": mcp::VERSION},
        });
        client.request(mcp::method::INITIALIZE, &hello.to_string())?;
        client.notify(mcp::method::INITIALIZED, "{}")?;
        Ok(client)
    }

    /// Writes request `method` with `params` (JSON text); its id.
    pub(crate) fn request(&mut self, method: &str, params: &str) -> io::Result<u64> {
        self.next += 1;
        let id = self.next;
        self.write(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{method}\",\"params\":{params}}}\n"
        ))?;
        Ok(id)
    }

    /// `tools/call` of `use_tool` for `toolbox`/`server`/`tool` with
    /// `arguments` (a JSON object's text, sent as it is), within
    /// `time_limit` ms in place of the server's `callTimeoutMs` when given
    /// (the session enforces it: `mcp::TIME_LIMIT_META`); its id.
    pub(crate) fn use_tool(
        &mut self,
        toolbox: &str,
        server: &str,
        tool: &str,
        arguments: &RawValue,
        time_limit: Option<u64>,
    ) -> io::Result<u64> {
        let id = serde_json::json!({"toolbox": toolbox, "server": server, "tool": tool});
        let meta = match time_limit {
            Some(ms) => format!(",\"_meta\":{{\"{}\":{ms}}}", mcp::TIME_LIMIT_META),
            None => String::new(),
        };
        let params = format!(
            "{{\"name\":\"use_tool\",\"arguments\":{{\"tool\":{id},\"arguments\":{}}}{meta}}}",
            arguments.get()
        );
        self.request("tools/call", &params)
    }

    fn notify(&mut self, method: &str, params: &str) -> io::Result<()> {
        self.write(&format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"{method}\",\"params\":{params}}}\n"
        ))
    }

    fn write(&mut self, line: &str) -> io::Result<()> {
        match &mut self.to_session {
            Some(pipe) => pipe.write_all(line.as_bytes()),
            None => Err(io::Error::other("the session is closed")),
        }
    }

    /// The next answer, waiting until `deadline` at most (`None`: for as
    /// long as it takes); `None` when the deadline passed, or the session
    /// ended .
    pub(crate) fn next_answer(&self, deadline: Option<Instant>) -> Option<Answer> {
        match deadline {
            Some(deadline) => self.answers.recv_deadline(deadline).ok(),
            None => self.answers.recv().ok(),
        }
    }

    /// Ends the session's input and waits for the session to end: a
    /// session of this process's own has stopped its servers then.
    pub(crate) fn close(mut self) {
        self.to_session = None;
        if let Some(session) = self.session.take() {
            match session.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => log::warn!("the session ended with an error: {e}"),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    }
}

/// The answer a session's line carries (not the answers to `initialize`,
/// whose id is 1, nor notifications).
fn answer(line: &[u8]) -> Option<Answer> {
    let line: Line = serde_json::from_slice(line).ok()?;
    let id = line.id?.as_u64()?;
    let result = match (line.result, line.error) {
        (Some(result), _) => Ok(result),
        (None, Some(error)) => Err(format!("{} (JSON-RPC error {})", error.message, error.code)),
        (None, None) => Err("an answer without a result".to_string()),
    };
    Some(Answer { id, result })
}
