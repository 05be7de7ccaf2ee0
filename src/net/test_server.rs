//! A scripted HTTP/1.1 server on loopback, for the tests of the remote
//! transports and the network layer: each connection on a thread of its
//! own, keep-alive, each request handed to the test's handler with a
//! `Responder` that writes what the script says (a JSON body, an event
//! stream written as it goes, a status, raw bytes, a cut). Plain or TLS
//! (the throwaway certificate of `testdata/tls/`). It records every request
//! it read. Self-contained (std, serde_json, rustls), so that the
//! integration tests can include it as it is.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use serde_json::Value;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// A request the server read.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Which connection it came on (1 for the first).
    pub connection: usize,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Null` when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The JSON-RPC method of the body, if any.
    pub fn rpc_method(&self) -> Option<String> {
        self.json()["method"].as_str().map(str::to_string)
    }
}

/// Writes a response for the handler.
pub struct Responder<'a> {
    out: &'a mut dyn Write,
    /// Close the connection once the handler returns.
    close: bool,
    chunked: bool,
}

impl Responder<'_> {
    /// A whole response with `Content-Length`.
    pub fn send(&mut self, status: u16, headers: &[(&str, &str)], body: &[u8]) {
        let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
        for (n, v) in headers {
            head.push_str(&format!("{n}: {v}\r\n"));
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        let _ = self.out.write_all(head.as_bytes());
        let _ = self.out.write_all(body);
        let _ = self.out.flush();
    }

    /// A JSON body.
    pub fn json(&mut self, status: u16, headers: &[(&str, &str)], body: &Value) {
        let mut all = vec![("Content-Type", "application/json")];
        all.extend_from_slice(headers);
        self.send(status, &all, body.to_string().as_bytes());
    }

    /// `202 Accepted` without a body.
    pub fn accepted(&mut self) {
        self.send(202, &[], b"");
    }

    /// The head of an event stream (chunked); events follow with `event`.
    pub fn events(&mut self, headers: &[(&str, &str)]) {
        let mut head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n".to_string();
        for (n, v) in headers {
            head.push_str(&format!("{n}: {v}\r\n"));
        }
        head.push_str("\r\n");
        self.chunked = true;
        let _ = self.out.write_all(head.as_bytes());
        let _ = self.out.flush();
    }

    /// One event (`data` may hold JSON); `name` for a named event.
    pub fn event(&mut self, name: Option<&str>, data: &str) -> io::Result<()> {
        let mut text = String::new();
        if let Some(name) = name {
            text.push_str(&format!("event: {name}\n"));
        }
        for line in data.lines() {
            text.push_str(&format!("data: {line}\n"));
        }
        text.push('\n');
        self.chunk(text.as_bytes())
    }

    /// One chunk of the body as it is.
    pub fn chunk(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out
            .write_all(format!("{:x}\r\n", bytes.len()).as_bytes())?;
        self.out.write_all(bytes)?;
        self.out.write_all(b"\r\n")?;
        self.out.flush()
    }

    /// The end of a chunked body.
    pub fn end(&mut self) {
        let _ = self.out.write_all(b"0\r\n\r\n");
        let _ = self.out.flush();
        self.chunked = false;
    }

    /// Bytes as they are.
    pub fn raw(&mut self, bytes: &[u8]) {
        let _ = self.out.write_all(bytes);
        let _ = self.out.flush();
    }

    /// Closes the connection after the handler (mid-body: a cut).
    pub fn close(&mut self) {
        self.close = true;
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        307 => "Temporary Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        _ => "Status",
    }
}

pub type Handler = Arc<dyn Fn(&Seen, &mut Responder<'_>) + Send + Sync>;

/// A running server; it stops taking connections when dropped.
pub struct Server {
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
    connections: Arc<AtomicUsize>,
    open: Arc<AtomicUsize>,
    tls: bool,
}

impl Server {
    /// Serves plain HTTP on a free loopback port.
    pub fn start(handler: impl Fn(&Seen, &mut Responder<'_>) + Send + Sync + 'static) -> Server {
        Server::run(Arc::new(handler), false)
    }

    /// Serves HTTPS with the test leaf certificate.
    pub fn start_tls(
        handler: impl Fn(&Seen, &mut Responder<'_>) + Send + Sync + 'static,
    ) -> Server {
        Server::run(Arc::new(handler), true)
    }

    fn run(handler: Handler, tls: bool) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = Server {
            addr,
            seen: Arc::default(),
            stop: Arc::default(),
            connections: Arc::default(),
            open: Arc::default(),
            tls,
        };
        let (seen, stop, count, open) = (
            Arc::clone(&server.seen),
            Arc::clone(&server.stop),
            Arc::clone(&server.connections),
            Arc::clone(&server.open),
        );
        let config = tls.then(server_config);
        thread::spawn(move || {
            for stream in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let n = count.fetch_add(1, Ordering::SeqCst) + 1;
                let (handler, seen, config, open) = (
                    Arc::clone(&handler),
                    Arc::clone(&seen),
                    config.clone(),
                    Arc::clone(&open),
                );
                open.fetch_add(1, Ordering::SeqCst);
                thread::spawn(move || {
                    let _ = stream.set_nodelay(true);
                    match config {
                        Some(config) => {
                            let conn = rustls::ServerConnection::new(config).unwrap();
                            let tls = rustls::StreamOwned::new(conn, stream);
                            serve(tls, n, &handler, &seen);
                        }
                        None => serve(stream, n, &handler, &seen),
                    }
                    open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        server
    }

    /// `http(s)://127.0.0.1:PORT` and `path`.
    pub fn url(&self, path: &str) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}{path}", self.addr.port())
    }

    /// Every request read so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// How many connections were accepted.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// How many connections are open now (the server's side).
    pub fn open_connections(&self) -> usize {
        self.open.load(Ordering::SeqCst)
    }

    /// Waits up to `limit` for `done` to hold over the requests seen.
    pub fn wait_for(&self, limit: Duration, done: impl Fn(&[Seen]) -> bool) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            if done(&self.seen()) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

/// One connection: requests read and answered until it ends.
fn serve<S: Read + Write>(
    stream: S,
    connection: usize,
    handler: &Handler,
    seen: &Mutex<Vec<Seen>>,
) {
    let mut reader = BufReader::new(stream);
    loop {
        let Some(request) = read_request(&mut reader, connection) else {
            return;
        };
        seen.lock().unwrap().push(request.clone());
        let mut responder = Responder {
            out: reader.get_mut(),
            close: false,
            chunked: false,
        };
        handler(&request, &mut responder);
        if responder.close {
            return;
        }
    }
}

fn read_request<R: BufRead>(reader: &mut R, connection: usize) -> Option<Seen> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let target = parts.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (n, v) = line.split_once(':')?;
        headers.push((n.trim().to_string(), v.trim().to_string()));
    }
    let len = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    Some(Seen {
        method,
        target,
        headers,
        body,
        connection,
    })
}

/// The folder of the test certificates.
pub fn tls_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/tls")
}

fn server_config() -> Arc<rustls::ServerConfig> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let dir = tls_dir();
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(dir.join("leaf.pem"))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let key = PrivateKeyDer::from_pem_file(dir.join("leaf.key")).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    Arc::new(config)
}

/// Shuts a plain stream down both ways (a handler that cuts by hand).
pub fn shut(stream: &TcpStream) {
    let _ = stream.shutdown(Shutdown::Both);
}
