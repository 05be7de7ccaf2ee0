//! The loopback redirect's listener (RFC 8252 §7.3): a `TcpListener` on
//! `127.0.0.1`, on the configured port or a free one, that serves the
//! browser's requests on the thread that waits for the sign-in, until a
//! redirect with this sign-in's code comes, the server refuses, the deadline
//! passes or the caller stops it. Every socket is non-blocking and polled
//! every 50 ms: the connections are served side by side, each request head
//! has a deadline of its own, and the stop flag and the sign-in's deadline
//! are checked on every round, so no local client, however slow, holds the
//! others or the wait. Each answer is a tiny page saying what happened.
//! Nothing but `/callback` is served.

use super::flow::{self, Expect, Redirect};
use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// How often the wait looks for connections, bytes, its deadline and its
/// stop flag.
const POLL: Duration = Duration::from_millis(50);
/// How long one request's head may take to arrive, from its connection.
const HEAD: Duration = Duration::from_secs(5);
/// The longest request head read.
const HEAD_MAX: usize = 16 * 1024;
/// How many connections are read at once; a new one past this closes the
/// oldest.
const CONNECTIONS: usize = 16;

/// The listener of one sign-in.
#[derive(Debug)]
pub(crate) struct Loopback {
    listener: TcpListener,
    port: u16,
}

/// A connection whose request head is still arriving.
struct Pending {
    stream: TcpStream,
    head: Vec<u8>,
    until: Instant,
}

impl Loopback {
    /// Listens on `127.0.0.1:port`, or on a free port.
    pub(crate) fn bind(port: Option<u16>) -> Result<Loopback, String> {
        let address = SocketAddrV4::new(Ipv4Addr::LOCALHOST, port.unwrap_or(0));
        let listener = TcpListener::bind(address).map_err(|e| match port {
            Some(port) => format!(
                "cannot listen on 127.0.0.1:{port} for the sign-in's redirect ({e}); \
                 is another sign-in running? (oauth.callbackPort)"
            ),
            None => format!("cannot listen on 127.0.0.1 for the sign-in's redirect ({e})"),
        })?;
        listener
            .set_nonblocking(true)
            .map_err(|e| format!("cannot listen for the sign-in's redirect ({e})"))?;
        let port = listener
            .local_addr()
            .map_err(|e| format!("cannot listen for the sign-in's redirect ({e})"))?
            .port();
        Ok(Loopback { listener, port })
    }

    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// Serves the browser until this sign-in's code comes (`Ok`), the server
    /// refuses or `until` passes (`Err`), or `stop` is set (`Err` too).
    pub(crate) fn wait(
        &self,
        expect: &Expect,
        until: Instant,
        stop: &AtomicBool,
    ) -> Result<String, String> {
        let mut pending: Vec<Pending> = Vec::new();
        loop {
            if stop.load(Ordering::SeqCst) {
                return Err("the sign-in was completed another way".to_string());
            }
            let now = Instant::now();
            if now >= until {
                return Err("the sign-in's redirect did not come in time".to_string());
            }
            self.accept(&mut pending, now)?;
            let mut i = 0;
            while i < pending.len() {
                match read_head(&mut pending[i]) {
                    Progress::More if now < pending[i].until => i += 1,
                    Progress::More | Progress::Gone => drop(pending.swap_remove(i)),
                    Progress::Whole => {
                        let mut done = pending.swap_remove(i);
                        if let Some(end) = serve(&mut done.stream, &done.head, expect) {
                            return end;
                        }
                    }
                }
            }
            thread::sleep(POLL);
        }
    }

    /// Takes every connection waiting, each made non-blocking with its
    /// head's deadline.
    fn accept(&self, pending: &mut Vec<Pending>, now: Instant) -> Result<(), String> {
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    if stream.set_nonblocking(true).is_err() {
                        continue;
                    }
                    if pending.len() >= CONNECTIONS {
                        pending.remove(0);
                    }
                    pending.push(Pending {
                        stream,
                        head: Vec::new(),
                        until: now + HEAD,
                    });
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(format!("the sign-in's listener failed ({e})")),
            }
        }
    }
}

/// Where a connection's request head stands after reading what has come.
enum Progress {
    /// Not whole yet.
    More,
    /// Whole (or as long as it may be, or its writer is done).
    Whole,
    /// The connection failed.
    Gone,
}

/// Reads what `conn` has for now, without blocking.
fn read_head(conn: &mut Pending) -> Progress {
    let mut buf = [0u8; 2048];
    loop {
        if conn.head.windows(4).any(|w| w == b"\r\n\r\n") || conn.head.len() >= HEAD_MAX {
            return Progress::Whole;
        }
        match conn.stream.read(&mut buf) {
            Ok(0) => return Progress::Whole,
            Ok(n) => conn.head.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Progress::More,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Progress::Gone,
        }
    }
}

/// Answers one browser request; what it ended, if it ended the sign-in.
fn serve(stream: &mut TcpStream, head: &[u8], expect: &Expect) -> Option<Result<String, String>> {
    let target = request_target(head)?;
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    if path != "/callback" {
        respond(
            stream,
            "404 Not Found",
            "Not found",
            "There is nothing here.",
        );
        return None;
    }
    match flow::redirect(query, expect) {
        Redirect::Code(code) => {
            respond(
                stream,
                "200 OK",
                "Signed in",
                "mcp-workbench is signed in. You can close this tab.",
            );
            Some(Ok(code))
        }
        Redirect::Refused(why) => {
            respond(stream, "200 OK", "Sign-in failed", &why);
            Some(Err(why))
        }
        Redirect::Stray(why) => {
            respond(
                stream,
                "400 Bad Request",
                "Not this sign-in",
                &format!("This page does not complete the sign-in: {why}."),
            );
            None
        }
    }
}

/// The request target of a `GET`'s head.
fn request_target(head: &[u8]) -> Option<String> {
    let line = head.split(|&b| b == b'\n').next()?;
    let line = String::from_utf8_lossy(line);
    let mut words = line.split_whitespace();
    match (words.next(), words.next()) {
        (Some("GET"), Some(target)) => Some(target.to_string()),
        _ => None,
    }
}

/// Writes the page without blocking: a few hundred bytes on a fresh
/// connection fit its send buffer, and a client that does not take them
/// loses them.
fn respond(stream: &mut TcpStream, status: &str, title: &str, text: &str) {
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body style=\"font-family: sans-serif; margin: 3em\"><h1>{title}</h1><p>{}</p></body></html>",
        escape(text)
    );
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes());
    let _ = stream.flush();
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn get(port: u16, target: &str) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(stream, "GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    }

    #[test]
    fn the_listener_ignores_strays_and_ends_with_the_code() {
        let loopback = Loopback::bind(None).unwrap();
        let port = loopback.port();
        let expect = Expect {
            state: "s1".into(),
            issuer: "https://as.example".into(),
            iss_required: false,
        };
        let stop = Arc::new(AtomicBool::new(false));
        let waiter = {
            let stop = stop.clone();
            thread::spawn(move || {
                loopback.wait(&expect, Instant::now() + Duration::from_secs(30), &stop)
            })
        };
        assert!(get(port, "/favicon.ico").starts_with("HTTP/1.1 404"));
        let stray = get(port, "/callback?code=c&state=wrong");
        assert!(
            stray.starts_with("HTTP/1.1 400") && stray.contains("not this sign-in"),
            "{stray}"
        );
        let done = get(port, "/callback?code=the-code&state=s1");
        assert!(done.contains("You can close this tab"), "{done}");
        assert_eq!(waiter.join().unwrap(), Ok("the-code".to_string()));
    }

    #[test]
    fn a_refusal_ends_it_and_so_does_a_stop() {
        let loopback = Loopback::bind(None).unwrap();
        let port = loopback.port();
        let expect = Expect {
            state: "s1".into(),
            issuer: "https://as.example".into(),
            iss_required: false,
        };
        let stop = AtomicBool::new(false);
        thread::scope(|scope| {
            let waiter = scope
                .spawn(|| loopback.wait(&expect, Instant::now() + Duration::from_secs(30), &stop));
            let page = get(port, "/callback?error=access_denied&state=s1");
            assert!(page.contains("access_denied"), "{page}");
            assert!(waiter
                .join()
                .unwrap()
                .unwrap_err()
                .contains("access_denied"));
        });
        stop.store(true, Ordering::SeqCst);
        let stopped = loopback.wait(&expect, Instant::now() + Duration::from_secs(30), &stop);
        assert!(stopped.unwrap_err().contains("another way"));
        let late = AtomicBool::new(false);
        assert!(loopback
            .wait(&expect, Instant::now(), &late)
            .unwrap_err()
            .contains("in time"));
        let taken = Loopback::bind(Some(port)).unwrap_err();
        assert!(taken.contains(&format!("127.0.0.1:{port}")), "{taken}");
    }

    fn expect() -> Expect {
        Expect {
            state: "s1".into(),
            issuer: "https://as.example".into(),
            iss_required: false,
        }
    }

    /// A local client that sends a request head one byte at a time, never
    /// ending it, until `done` is set, its connection is closed or 20 s pass.
    fn trickle(port: u16, done: Arc<AtomicBool>) -> thread::JoinHandle<()> {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        thread::spawn(move || {
            let head = b"GET /callback?code=slow&state=s1 HTTP/1.1\r\nX: ";
            let end = Instant::now() + Duration::from_secs(20);
            for byte in head.iter().chain(std::iter::repeat(&b'x')) {
                if done.load(Ordering::SeqCst) || Instant::now() > end {
                    return;
                }
                if stream.write_all(&[*byte]).is_err() {
                    return;
                }
                thread::sleep(Duration::from_millis(20));
            }
        })
    }

    #[test]
    fn a_silent_or_trickling_client_holds_neither_the_browser_nor_the_deadline() {
        let loopback = Loopback::bind(None).unwrap();
        let port = loopback.port();
        let done = Arc::new(AtomicBool::new(false));
        let silent = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let trickler = trickle(port, done.clone());
        let stop = AtomicBool::new(false);
        thread::scope(|scope| {
            // The wait ends well before a head's deadline (5 s) would free
            // the listener from the two slow clients.
            let waiter = scope
                .spawn(|| loopback.wait(&expect(), Instant::now() + Duration::from_secs(4), &stop));
            let mut browser = TcpStream::connect(("127.0.0.1", port)).unwrap();
            browser
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            write!(
                browser,
                "GET /callback?code=the-code&state=s1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            )
            .unwrap();
            assert_eq!(waiter.join().unwrap(), Ok("the-code".to_string()));
            let mut page = String::new();
            let _ = browser.read_to_string(&mut page);
            assert!(page.contains("You can close this tab"), "{page}");
        });

        // With the slow clients still connected, the deadline ends the wait
        // and so does the stop flag.
        let trickling = trickle(port, done.clone());
        let started = Instant::now();
        let late = loopback.wait(&expect(), started + Duration::from_millis(300), &stop);
        assert!(late.unwrap_err().contains("in time"));
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
        thread::scope(|scope| {
            let waiter = scope.spawn(|| {
                loopback.wait(&expect(), Instant::now() + Duration::from_secs(30), &stop)
            });
            stop.store(true, Ordering::SeqCst);
            assert!(waiter.join().unwrap().unwrap_err().contains("another way"));
        });
        done.store(true, Ordering::SeqCst);
        drop(silent);
        trickler.join().unwrap();
        trickling.join().unwrap();
    }
}
