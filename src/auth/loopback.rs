//! The loopback redirect's listener (RFC 8252 §7.3): a `TcpListener` on
//! `127.0.0.1`, on the configured port or a free one, that serves the
//! browser's requests one at a time on the thread that waits for the
//! sign-in, until a redirect with this sign-in's code comes, the server
//! refuses, the deadline passes or the caller stops it. Each answer is a
//! tiny page saying what happened. Nothing but `/callback` is served.

use super::flow::{self, Expect, Redirect};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// How often the wait looks for a connection, its deadline and its stop flag.
const POLL: Duration = Duration::from_millis(50);
/// How long one browser request may take to arrive.
const READ: Duration = Duration::from_secs(5);

/// The listener of one sign-in.
#[derive(Debug)]
pub(crate) struct Loopback {
    listener: TcpListener,
    port: u16,
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
        loop {
            if stop.load(Ordering::SeqCst) {
                return Err("the sign-in was completed another way".to_string());
            }
            if Instant::now() >= until {
                return Err("the sign-in's redirect did not come in time".to_string());
            }
            match self.listener.accept() {
                Ok((stream, _)) => {
                    if let Some(done) = serve(stream, expect) {
                        return done;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => thread::sleep(POLL),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(format!("the sign-in's listener failed ({e})")),
            }
        }
    }
}

/// Answers one browser request; what it ended, if it ended the sign-in.
fn serve(mut stream: TcpStream, expect: &Expect) -> Option<Result<String, String>> {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(READ));
    let target = read_target(&mut stream)?;
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    if path != "/callback" {
        respond(
            &mut stream,
            "404 Not Found",
            "Not found",
            "There is nothing here.",
        );
        return None;
    }
    match flow::redirect(query, expect) {
        Redirect::Code(code) => {
            respond(
                &mut stream,
                "200 OK",
                "Signed in",
                "mcp-workbench is signed in. You can close this tab.",
            );
            Some(Ok(code))
        }
        Redirect::Refused(why) => {
            respond(&mut stream, "200 OK", "Sign-in failed", &why);
            Some(Err(why))
        }
        Redirect::Stray(why) => {
            respond(
                &mut stream,
                "400 Bad Request",
                "Not this sign-in",
                &format!("This page does not complete the sign-in: {why}."),
            );
            None
        }
    }
}

/// The request target of a `GET` (the head only; at most 16 KiB).
fn read_target(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = head.split(|&b| b == b'\n').next()?;
    let line = String::from_utf8_lossy(line);
    let mut words = line.split_whitespace();
    match (words.next(), words.next()) {
        (Some("GET"), Some(target)) => Some(target.to_string()),
        _ => None,
    }
}

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
}
