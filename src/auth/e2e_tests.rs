//! The sign-in end to end against a real authorization server over real
//! HTTP: `testdata/oauth/authorization-server.py` (Python's standard library,
//! started here), with rotating single-use refresh tokens that revoke their
//! family when reused, over the workbench's own HTTP client (`net`).
//!
//! - a sign-in (probe, discovery, registration, the authorization page
//!   followed as a browser would, the redirect, the exchange), a protected
//!   call with the token, a refresh after the server expired it, and the
//!   family revoked when a spent refresh token comes back, which `Access`
//!   turns into a sign-in-needed error;
//! - two processes (this test binary run twice more) answering the same
//!   401 at once: one refresh reaches the server.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::print_stdout
)]

use super::access::Access;
use super::http::{Http, Response};
use super::login::Terminal;
use super::store::Store;
use super::Client;
use crate::net::client::{self, Request};
use crate::net::pool::Pool;
use crate::net::{Agent, Url};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One request through the workbench's own HTTP client, its redirect not
/// followed: the tests play the browser, which follows the authorization
/// page's redirect to the loopback listener itself.
struct Plain;

impl Http for Plain {
    fn fetch(
        &self,
        method: &str,
        url: &Url,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
        timeout: Duration,
    ) -> Result<Response, String> {
        let request = Request {
            method,
            url,
            headers,
            body,
        };
        let deadline = Instant::now() + timeout;
        let (agent, pool) = (Agent::default(), Pool::default());
        let mut exchange = client::send(&agent, &pool, &request, deadline, &mut |_| true)
            .map_err(|e| format!("{url}: {e}"))?;
        let body = exchange
            .body
            .read_to_end(1 << 20)
            .map_err(|e| format!("{url}: {e}"))?;
        Ok(Response {
            status: exchange.head.status,
            headers: std::mem::take(&mut exchange.head.headers),
            body,
        })
    }
}

/// The test authorization server, killed on drop; its log shown when the
/// test fails.
struct Server {
    child: Child,
    base: String,
    log: PathBuf,
}

impl Server {
    fn start(name: &str, args: &[&str]) -> Server {
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/oauth/authorization-server.py");
        let log = std::env::temp_dir().join(format!("auth-e2e-{name}-{}.log", std::process::id()));
        let mut child = Command::new("python3")
            .arg(script)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("python3 runs the test authorization server");
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let port: Value = serde_json::from_str(&first).expect("the server says its port");
        Server {
            child,
            base: format!("http://127.0.0.1:{}", port["port"]),
            log,
        }
    }

    fn url(&self, path: &str) -> Url {
        Url::parse(&format!("{}{path}", self.base)).unwrap()
    }

    fn stats(&self) -> Value {
        let r = Plain
            .fetch(
                "GET",
                &self.url("/stats"),
                &[],
                None,
                Duration::from_secs(5),
            )
            .unwrap();
        serde_json::from_slice(&r.body).unwrap()
    }

    fn post(&self, path: &str, headers: &[(&str, &str)], body: &str) -> Response {
        Plain
            .fetch(
                "POST",
                &self.url(path),
                headers,
                Some(body.as_bytes()),
                Duration::from_secs(10),
            )
            .unwrap()
    }

    /// Calls `echo` on the protected endpoint with `authorization`.
    fn call(&self, authorization: Option<&str>) -> Response {
        let mut headers = vec![("Content-Type", "application/json")];
        if let Some(value) = authorization {
            headers.push(("Authorization", value));
        }
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}});
        self.post("/mcp", &headers, &call.to_string())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            eprintln!("--- the authorization server's log:\n{log}");
        }
        let _ = std::fs::remove_file(&self.log);
    }
}

/// What a browser does with the authorization page: follows the server's
/// redirect to the loopback listener.
fn browse(page: &str) {
    let page = Url::parse(page).unwrap();
    let answer = Plain
        .fetch("GET", &page, &[], None, Duration::from_secs(10))
        .unwrap();
    assert_eq!(
        answer.status,
        302,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    let back = Url::parse(answer.header("Location").unwrap()).unwrap();
    let page = Plain
        .fetch("GET", &back, &[], None, Duration::from_secs(10))
        .unwrap();
    assert!(String::from_utf8_lossy(&page.body).contains("You can close this tab"));
}

/// Signs in to `server`'s MCP endpoint with a store at `store`.
fn sign_in(server: &Server, store: &Store) {
    let terminal = Terminal::with(Arc::new(Plain), store.clone());
    let login = terminal
        .begin(&server.url("/mcp"), &Client::default())
        .unwrap()
        .expect("the server asks for a sign-in");
    let page = login.url();
    let browser = std::thread::spawn(move || browse(&page));
    let code = login
        .wait(
            Instant::now() + Duration::from_secs(20),
            &AtomicBool::new(false),
        )
        .unwrap();
    browser.join().unwrap();
    let signed = login.finish(&code).unwrap();
    assert_eq!(signed.issuer, server.base);
    assert!(signed.refreshable);
}

fn access(server: &Server, store: &Store) -> Access {
    super::tests::fresh(
        &server.url("/mcp"),
        &Client::default(),
        Arc::new(Plain),
        store.clone(),
        |_| Ok(()),
        false,
    )
}

#[test]
fn sign_in_call_refresh_and_a_revoked_family() {
    let server = Server::start("flow", &[]);
    let store = super::store::tests::scratch("e2e-flow");
    assert_eq!(server.call(None).status, 401);
    sign_in(&server, &store);
    let stats = server.stats();
    assert_eq!(
        (
            stats["registrations"].as_u64(),
            stats["code_exchanges"].as_u64()
        ),
        (Some(1), Some(1))
    );

    let signed_in = store.find(&server.url("/mcp"), None).remove(0).1;
    let a = access(&server, &store);
    let first = a.authorization().expect("a token after the sign-in");
    let answer = server.call(Some(&first));
    assert_eq!(answer.status, 200);
    let result: Value = serde_json::from_slice(&answer.body).unwrap();
    assert_eq!(result["result"]["content"][0]["text"], "hi");

    // The server expires every access token: a 401, one refresh, a retry.
    assert_eq!(server.post("/expire", &[], "").status, 204);
    let refused = server.call(Some(&first));
    assert_eq!(refused.status, 401);
    let retry = a
        .unauthorized(Some(&first), refused.header("WWW-Authenticate"))
        .unwrap();
    assert_ne!(retry, first);
    assert_eq!(server.call(Some(&retry)).status, 200);
    assert_eq!(server.stats()["refresh_requests"], 1);
    let rotated = store.find(&server.url("/mcp"), None).remove(0).1;
    assert_ne!(
        rotated.refresh_token, signed_in.refresh_token,
        "rotated, and stored"
    );

    // The spent refresh token comes back (another client that kept it): the
    // server revokes the whole family.
    let replay = format!(
        "grant_type=refresh_token&refresh_token={}&client_id={}",
        signed_in.refresh_token.as_deref().unwrap(),
        signed_in.client_id
    );
    let form = [("Content-Type", "application/x-www-form-urlencoded")];
    assert_eq!(server.post("/token", &form, &replay).status, 400);
    assert_eq!(server.stats()["revoked_families"], 1);

    // The workbench's access token is dead now, moments after its refresh:
    // no second refresh, a sign-in is needed.
    let refused = server.call(Some(&retry));
    assert_eq!(refused.status, 401);
    let needed = a
        .unauthorized(Some(&retry), refused.header("WWW-Authenticate"))
        .unwrap_err();
    assert!(
        needed
            .message
            .contains("refused a token issued moments ago"),
        "{}",
        needed.message
    );
    assert_eq!(
        server.stats()["refresh_requests"],
        2,
        "the workbench's one, and the replay"
    );

    // A minute later, its refresh token is refused too (the family is
    // revoked): the tokens are deleted, and nothing loops.
    let (path, mut later) = store.find(&server.url("/mcp"), None).remove(0);
    later.obtained_at -= 60;
    store.write(&path, &later).unwrap();
    let needed = a
        .unauthorized(Some(&retry), refused.header("WWW-Authenticate"))
        .unwrap_err();
    assert!(
        needed.message.contains("invalid_grant"),
        "{}",
        needed.message
    );
    assert!(
        needed.message.contains("mcp-workbench login T/S"),
        "{}",
        needed.message
    );
    assert!(store.find(&server.url("/mcp"), None).is_empty());
    assert_eq!(a.authorization(), None);
    assert!(a.unauthorized(None, None).is_err());
    assert_eq!(server.stats()["refresh_requests"], 3);
}

#[test]
fn two_processes_answering_one_401_refresh_once() {
    // The token endpoint takes half a second: the second process comes
    // while the first one's refresh is under way.
    let server = Server::start("processes", &["--token-delay", "0.5"]);
    let store = super::store::tests::scratch("e2e-processes");
    sign_in(&server, &store);
    let (_, tokens) = store.find(&server.url("/mcp"), None).remove(0);
    assert_eq!(server.post("/expire", &[], "").status, 204);
    let children: Vec<Child> = (0..2)
        .map(|_| {
            Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "auth::e2e_tests::child_refresher",
                    "--ignored",
                    "--nocapture",
                ])
                .env(CHILD_STORE, store.dir())
                .env(CHILD_SERVER, server.url("/mcp").to_string())
                .env(CHILD_SENT, tokens.bearer())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let results: Vec<String> = children
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            text.lines()
                .find_map(|l| l.strip_prefix("RESULT:"))
                .unwrap_or_else(|| panic!("a child said nothing: {text}"))
                .to_string()
        })
        .collect();
    assert!(results[0].starts_with("Ok(\"Bearer at-"), "{results:?}");
    assert_eq!(results[0], results[1], "both use the one new token");
    assert_eq!(
        server.stats()["refresh_requests"],
        1,
        "one refresh reached the server"
    );
}

const CHILD_STORE: &str = "MCP_WORKBENCH_TEST_CHILD_STORE";
const CHILD_SERVER: &str = "MCP_WORKBENCH_TEST_CHILD_SERVER";
const CHILD_SENT: &str = "MCP_WORKBENCH_TEST_CHILD_SENT";

/// One of the processes of the test above (does nothing when run alone).
#[test]
#[ignore = "run by two_processes_answering_one_401_refresh_once"]
fn child_refresher() {
    let (Ok(dir), Ok(server), Ok(sent)) = (
        std::env::var(CHILD_STORE),
        std::env::var(CHILD_SERVER),
        std::env::var(CHILD_SENT),
    ) else {
        return;
    };
    let a = super::tests::fresh(
        &Url::parse(&server).unwrap(),
        &Client::default(),
        Arc::new(Plain),
        Store::at(PathBuf::from(dir)),
        |_| Ok(()),
        false,
    );
    let result = a.unauthorized(Some(&sent), None).map_err(|e| e.message);
    println!("RESULT:{result:?}");
}

/// The sign-in against the TypeScript SDK's example server and its demo
/// authorization server (`@modelcontextprotocol/sdk`,
/// `dist/esm/examples/server/simpleStreamableHttp.js --oauth`, which listens
/// on `MCP_PORT` and `MCP_AUTH_PORT`, 3000 and 3001 by default), when
/// `MCP_WORKBENCH_TS_SDK_MCP` names its MCP endpoint:
///
/// ```text
/// MCP_PORT=38123 MCP_AUTH_PORT=38124 node .../simpleStreamableHttp.js --oauth &
/// MCP_WORKBENCH_TS_SDK_MCP=http://localhost:38123/mcp \
///     cargo test --features test-fake --lib typescript_sdk -- --ignored
/// ```
#[test]
#[ignore = "needs the TypeScript SDK's example server running (see its comment)"]
fn typescript_sdk_demo_server() {
    let Ok(mcp) = std::env::var("MCP_WORKBENCH_TS_SDK_MCP") else {
        return;
    };
    let mcp = Url::parse(&mcp).unwrap();
    let store = super::store::tests::scratch("e2e-typescript");
    let terminal = Terminal::with(Arc::new(Plain), store.clone());
    let login = terminal
        .begin(&mcp, &Client::default())
        .unwrap()
        .expect("the server asks for a sign-in");
    let page = login.url();
    let browser = std::thread::spawn(move || browse(&page));
    let code = login
        .wait(
            Instant::now() + Duration::from_secs(20),
            &AtomicBool::new(false),
        )
        .unwrap();
    browser.join().unwrap();
    login.finish(&code).unwrap();
    let a = super::tests::fresh(
        &mcp,
        &Client::default(),
        Arc::new(Plain),
        store,
        |_| Ok(()),
        false,
    );
    let token = a.authorization().unwrap();
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let answer = Plain
        .fetch(
            "POST",
            &mcp,
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
                ("Authorization", &token),
            ],
            Some(initialize.to_string().as_bytes()),
            Duration::from_secs(10),
        )
        .unwrap();
    assert_eq!(
        answer.status,
        200,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
}
