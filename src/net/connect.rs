//! Making a connection to a URL's server: the route (`proxy.rs`), the host
//! name resolved, every address tried in turn within the connect limit, a
//! `CONNECT` tunnel through a proxy for `https`, then the TLS handshake.
//! Blocking, on the thread of the request that needs it; never on a pump.

use super::agent::Agent;
use super::conn::Conn;
use super::error::NetError;
use super::http;
use super::proxy::{self, Proxy, Route};
use super::{tls, Url};
use std::io::Read;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// The longest a connection may take to be made, whatever the request's
/// own limit.
const CONNECT_LIMIT: Duration = Duration::from_secs(15);

/// The pool's key for `url`'s connections: its origin and its route.
pub(crate) fn key(url: &Url) -> String {
    url.origin()
}

/// A new connection to `url`'s server, made by `deadline`, through the
/// proxy the environment names for it, if any; TLS with `agent`'s config.
pub(crate) fn connect(agent: &Agent, url: &Url, deadline: Instant) -> Result<Conn, NetError> {
    let route = proxy::route(url, |name| std::env::var(name).ok()).map_err(NetError::Proxy)?;
    connect_routed(agent, url, &route, deadline)
}

/// `connect` by `route`.
fn connect_routed(
    agent: &Agent,
    url: &Url,
    route: &Route,
    deadline: Instant,
) -> Result<Conn, NetError> {
    let limit = deadline
        .saturating_duration_since(Instant::now())
        .min(CONNECT_LIMIT);
    let (mut sock, via_proxy) = match route {
        Route::Direct => (tcp(url.host(), url.port(), limit)?, None),
        Route::Proxy(proxy) => {
            let sock = tcp(&proxy.host, proxy.port, limit).map_err(|e| {
                NetError::Proxy(format!(
                    "the proxy {} cannot be reached: {e}",
                    proxy.display()
                ))
            })?;
            if url.is_https() {
                (tunnel(sock, url, proxy, deadline)?, None)
            } else {
                (sock, Some(proxy.authorization.clone()))
            }
        }
    };
    let _ = sock.set_nodelay(true);
    let remaining = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1));
    sock.set_read_timeout(Some(remaining))
        .map_err(NetError::Io)?;
    sock.set_write_timeout(Some(remaining))
        .map_err(NetError::Io)?;
    let tls = if url.is_https() {
        Some(tls::handshake(
            &mut sock,
            url.host(),
            &agent.tls()?,
            remaining,
        )?)
    } else {
        None
    };
    let mut conn = Conn::new(sock, tls, key(url));
    conn.via_proxy = via_proxy;
    Ok(conn)
}

/// A TCP connection to `host:port`: each address in turn, within `limit`
/// in all.
fn tcp(host: &str, port: u16, limit: Duration) -> Result<TcpStream, NetError> {
    let started = Instant::now();
    let addrs: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| NetError::Dns(e.to_string()))?
        .collect();
    if addrs.is_empty() {
        return Err(NetError::Dns("no address".to_string()));
    }
    let mut last = NetError::Refused;
    for addr in addrs {
        let left = limit.saturating_sub(started.elapsed());
        if left.is_zero() {
            return Err(NetError::ConnectTimeout(limit));
        }
        match TcpStream::connect_timeout(&addr, left) {
            Ok(sock) => return Ok(sock),
            Err(e) => {
                last = match e.kind() {
                    std::io::ErrorKind::ConnectionRefused => NetError::Refused,
                    std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => {
                        NetError::ConnectTimeout(limit)
                    }
                    _ => NetError::Connect(e),
                }
            }
        }
    }
    Err(last)
}

/// Asks `proxy` (connected on `sock`) for a tunnel to `url`'s server.
fn tunnel(
    mut sock: TcpStream,
    url: &Url,
    proxy: &Proxy,
    deadline: Instant,
) -> Result<TcpStream, NetError> {
    let fail = |why: String| NetError::Proxy(format!("the proxy {} {why}", proxy.display()));
    let limit = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1));
    sock.set_read_timeout(Some(limit)).map_err(NetError::Io)?;
    sock.set_write_timeout(Some(limit)).map_err(NetError::Io)?;
    let authority = url.authority_with_port();
    let auth: Vec<(&str, &str)> = proxy
        .authorization
        .as_deref()
        .map(|a| vec![("Proxy-Authorization", a)])
        .unwrap_or_default();
    let head = http::request_head("CONNECT", &authority, &authority, &auth, None)
        .map_err(NetError::Request)?;
    std::io::Write::write_all(&mut sock, &head)
        .map_err(|e| fail(format!("cannot be written to: {e}")))?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        // Read a byte at a time past what the head needs: whatever follows
        // belongs to the tunnel.
        let n = sock.read(&mut chunk[..1]).map_err(|e| {
            fail(format!(
                "did not answer CONNECT: {}",
                NetError::reading(e, limit)
            ))
        })?;
        if n == 0 {
            return Err(fail(
                "closed the connection instead of answering CONNECT".to_string(),
            ));
        }
        buf.push(chunk[0]);
        if let Some((head, _)) = http::parse_head(&buf).map_err(|e| {
            fail(format!(
                "answered CONNECT with a response that is not HTTP: {e}"
            ))
        })? {
            if (200..300).contains(&head.status) {
                return Ok(sock);
            }
            return Err(fail(format!(
                "refused the tunnel: {} {}",
                head.status, head.reason
            )));
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::net::client::{self, Request};
    use crate::net::test_server::Server;
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;
    use std::thread;

    fn proxy_at(addr: std::net::SocketAddr, authorization: Option<&str>) -> Route {
        Route::Proxy(Proxy {
            host: "127.0.0.1".to_string(),
            port: addr.port(),
            authorization: authorization.map(str::to_string),
        })
    }

    /// A proxy that takes one connection: its request head goes to the
    /// test, and `then` runs on the connection.
    fn proxy(then: impl FnOnce(Vec<String>, TcpStream) + Send + 'static) -> std::net::SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        thread::spawn(move || {
            let (sock, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(sock.try_clone().unwrap());
            let mut head = Vec::new();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if line.trim().is_empty() {
                    break;
                }
                head.push(line.trim_end().to_string());
            }
            then(head, sock);
        });
        addr
    }

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(10)
    }

    #[test]
    fn https_goes_through_a_connect_tunnel_with_the_proxy_credentials() {
        let server = Server::start_tls(|_, reply| reply.send(200, &[], b"ok"));
        let target = server.addr;
        let (tx, rx) = crossbeam_channel::bounded(1);
        let addr = proxy(move |head, mut sock| {
            tx.send(head).unwrap();
            sock.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .unwrap();
            let upstream = TcpStream::connect(target).unwrap();
            let (mut up_read, mut up_write) = (upstream.try_clone().unwrap(), upstream);
            let mut down_read = sock.try_clone().unwrap();
            thread::spawn(move || std::io::copy(&mut down_read, &mut up_write));
            let _ = std::io::copy(&mut up_read, &mut sock);
        });
        let url = Url::parse(&format!("https://localhost:{}/mcp", target.port())).unwrap();
        // The test CA is not trusted here: the handshake with the server
        // behind the tunnel fails naming its certificate, which shows it
        // was reached.
        let e = connect_routed(
            &Agent::default(),
            &url,
            &proxy_at(addr, Some("Basic dTpw")),
            soon(),
        )
        .err()
        .unwrap()
        .to_string();
        assert!(e.contains("CN=localhost"), "{e}");
        let head = rx.recv().unwrap();
        assert_eq!(
            head[0],
            format!("CONNECT localhost:{} HTTP/1.1", target.port())
        );
        assert!(
            head.contains(&"Proxy-Authorization: Basic dTpw".to_string()),
            "{head:?}"
        );
    }

    #[test]
    fn a_refused_tunnel_names_the_proxy_and_its_answer() {
        let addr = proxy(|_, mut sock| {
            sock.write_all(b"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n")
                .unwrap();
        });
        let url = Url::parse("https://mcp.example.com/mcp").unwrap();
        let e = connect_routed(&Agent::default(), &url, &proxy_at(addr, None), soon())
            .err()
            .unwrap()
            .to_string();
        assert_eq!(
            e,
            format!(
                "the proxy 127.0.0.1:{} refused the tunnel: 407 Proxy Authentication Required",
                addr.port()
            )
        );
    }

    #[test]
    fn plain_http_through_a_proxy_names_the_whole_url() {
        let (tx, rx) = crossbeam_channel::bounded(1);
        let addr = proxy(move |head, mut sock| {
            tx.send(head).unwrap();
            sock.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                .unwrap();
        });
        let url = Url::parse("http://mcp.example.com/mcp?x=1").unwrap();
        let conn = connect_routed(
            &Agent::default(),
            &url,
            &proxy_at(addr, Some("Basic dTpw")),
            soon(),
        )
        .unwrap();
        let request = Request {
            method: "GET",
            url: &url,
            headers: &[],
            body: None,
        };
        let mut exchange = client::send_on(conn, &request, soon()).unwrap();
        assert_eq!(exchange.body.read_to_end(100).unwrap(), b"ok");
        let head = rx.recv().unwrap();
        assert_eq!(head[0], "GET http://mcp.example.com/mcp?x=1 HTTP/1.1");
        assert!(
            head.contains(&"Host: mcp.example.com".to_string()),
            "{head:?}"
        );
        assert!(
            head.contains(&"Proxy-Authorization: Basic dTpw".to_string()),
            "{head:?}"
        );
    }
}
