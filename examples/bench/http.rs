//! The remote path: `bench serve-http [--spin N]`, the same downstream
//! server as `bench serve` over Streamable HTTP (one JSON body per request,
//! keep-alive, a thread per connection, a session id), and the driver's own
//! minimal HTTP client that calls it directly, so that the workbench's
//! remote path and the direct one differ only by the workbench. The server
//! prints `port N` on stdout once it listens.

use crate::serve;
use serde_json::Value;
use std::io::{self, BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::thread;

pub fn run(args: &[String]) -> io::Result<()> {
    let mut spin = 0;
    for pair in args.chunks(2) {
        match (pair[0].as_str(), pair.get(1).and_then(|v| v.parse().ok())) {
            ("--spin", Some(n)) => spin = n,
            _ => return Err(io::Error::other(format!("serve-http: bad option {pair:?}"))),
        }
    }
    let listener = TcpListener::bind("127.0.0.1:0")?;
    println!("port {}", listener.local_addr()?.port());
    io::stdout().flush()?;
    // Ends with its stdin, as `bench serve` does.
    thread::spawn(|| {
        let _ = io::copy(&mut io::stdin(), &mut io::sink());
        std::process::exit(0);
    });
    for stream in listener.incoming() {
        let stream = stream?;
        thread::spawn(move || {
            let _ = connection(stream, spin);
        });
    }
    Ok(())
}

/// Requests on one connection, answered until it closes.
fn connection(stream: TcpStream, spin: u64) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut out = stream.try_clone()?;
    let mut input = BufReader::new(stream);
    let tools = vec![serve::definition(0)];
    loop {
        let Some((method, body)) = read_message(&mut input)? else {
            return Ok(());
        };
        if method != "POST" {
            out.write_all(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")?;
            continue;
        }
        let Ok(msg) = serde_json::from_slice::<Value>(&body) else {
            out.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")?;
            continue;
        };
        let mut answer = Vec::new();
        if msg["method"] == "tools/call" {
            std::hint::black_box(serve::spin(spin));
        }
        serve::answer_one(&tools, &msg, &mut answer)?;
        if answer.is_empty() {
            out.write_all(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")?;
            continue;
        }
        answer.pop(); // its newline
        let session = if msg["method"] == "initialize" {
            "Mcp-Session-Id: bench-session\r\n"
        } else {
            ""
        };
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{session}Content-Length: {}\r\n\r\n",
            answer.len()
        );
        let mut response = head.into_bytes();
        response.extend_from_slice(&answer);
        out.write_all(&response)?;
    }
}

/// One HTTP message's start-line word (the method, or `HTTP/1.1` for a
/// response) and its body (`Content-Length` only); `None` at the end.
fn read_message(input: &mut impl BufRead) -> io::Result<Option<(String, Vec<u8>)>> {
    let mut line = String::new();
    if input.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let first = line.split(' ').next().unwrap_or("").to_string();
    let mut len = 0;
    loop {
        line.clear();
        input.read_line(&mut line)?;
        let text = line.trim_end();
        if text.is_empty() {
            break;
        }
        if let Some((name, value)) = text.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                len = value.trim().parse().map_err(io::Error::other)?;
            }
        }
    }
    let mut body = vec![0; len];
    input.read_exact(&mut body)?;
    Ok(Some((first, body)))
}

/// The driver's keep-alive connection to `serve-http`.
pub struct Client {
    out: TcpStream,
    input: BufReader<TcpStream>,
    port: u16,
    session: Option<String>,
}

impl Client {
    pub fn connect(port: u16) -> io::Result<Client> {
        let out = TcpStream::connect(("127.0.0.1", port))?;
        out.set_nodelay(true)?;
        let input = BufReader::new(out.try_clone()?);
        Ok(Client {
            out,
            input,
            port,
            session: None,
        })
    }

    /// POSTs one message; the response's body.
    pub fn post(&mut self, body: &[u8]) -> io::Result<Vec<u8>> {
        let session = self
            .session
            .as_ref()
            .map_or(String::new(), |s| format!("Mcp-Session-Id: {s}\r\n"));
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\n{session}Content-Length: {}\r\n\r\n",
            self.port,
            body.len()
        );
        let mut request = head.into_bytes();
        request.extend_from_slice(body);
        self.out.write_all(&request)?;
        let (_, body) = read_message(&mut self.input)?
            .ok_or_else(|| io::Error::other("serve-http closed the connection"))?;
        Ok(body)
    }

    /// The handshake, as the workbench does it.
    pub fn initialize(&mut self) -> io::Result<()> {
        self.post(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#)?;
        self.session = Some("bench-session".to_string());
        self.post(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)?;
        Ok(())
    }
}

/// The port `serve-http` printed first.
pub fn port_of(line: &[u8]) -> io::Result<u16> {
    std::str::from_utf8(line)
        .ok()
        .and_then(|l| l.strip_prefix("port "))
        .and_then(|p| p.trim().parse().ok())
        .ok_or_else(|| io::Error::other("serve-http did not print its port"))
}
