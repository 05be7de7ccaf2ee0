//! `Access` as a transport uses it, against a fake authorization server:
//! the token to send, refresh ahead of expiry and after a 401, rotation
//! stored before use, one refresh however many callers race (threads of
//! one `Access`, or two `Access`es standing for two processes), a refused
//! refresh ending in a sign-in, a failed one keeping the tokens, no loop on
//! a fresh token, and the background sign-in of a serving process.

#![allow(clippy::unwrap_used)]

use super::access::{Access, Means};
use super::http::fake::{json, peers, Fake, Seen};
use super::http::Http;
use super::http::Response;
use super::store::tests::{scratch, tokens};
use super::store::{self, Store, Tokens};
use super::{Client, SignIns};
use crate::net::{url, Url};
use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

/// Credentials of a fresh `SignIns` (a registry of their own) with the
/// tests' HTTP peer, store and browser `open`; `serving`: sign-ins start in
/// the background. Toolbox `T`, server `S`.
pub(crate) fn fresh(
    server: &Url,
    client: &Client,
    http: Arc<dyn Http>,
    store: Store,
    open: impl Fn(&str) -> std::io::Result<()> + Send + Sync + 'static,
    serving: bool,
) -> Access {
    let means = Means {
        http,
        store: Ok(store),
        open: Box::new(open),
        serving,
    };
    SignIns::default().access_with(server, client, means)
}

const SERVER: &str = "https://mcp.example.com/mcp";

fn server() -> Url {
    Url::parse(SERVER).unwrap()
}

/// A store holding `tokens` for the server (expiring at `expires_at`).
fn stored(name: &str, expires_at: Option<u64>) -> (Store, Tokens) {
    let store = scratch(name);
    let now = store::now();
    let t = Tokens {
        issuer: "https://as.example".into(),
        obtained_at: now - 3600,
        expires_at,
        ..tokens(SERVER, "client-1")
    };
    store
        .write(&store.path(&t.issuer, &t.resource, &t.client_id), &t)
        .unwrap();
    (store, t)
}

/// A token endpoint that rotates: each refresh answers `access-N` and
/// `refresh-N` for the N-th request.
fn rotating() -> impl Fn(&Seen) -> Result<Response, String> + Send + Sync + 'static {
    let n = AtomicUsize::new(1);
    move |_| {
        let n = n.fetch_add(1, Ordering::SeqCst) + 1;
        json(
            200,
            json!({"access_token": format!("access-{n}"), "refresh_token": format!("refresh-{n}"), "expires_in": 3600}),
        )
    }
}

fn access(fake: &Arc<Fake>, store: &Store, serving: bool) -> Access {
    fresh(
        &server(),
        &Client::default(),
        fake.clone(),
        store.clone(),
        |_| Ok(()),
        serving,
    )
}

fn read_back(store: &Store) -> Tokens {
    store.find(&server(), None).remove(0).1
}

#[test]
fn nothing_stored_means_no_header() {
    let (fake, _) = peers(rotating());
    let a = access(&fake, &scratch("nothing"), false);
    assert_eq!(a.authorization(), None);
    let needed = a.unauthorized(None, None).unwrap_err();
    assert_eq!(
        needed.message,
        "Sign-in needed for server 'S' (toolbox 'T'): run mcp-workbench login T/S in a terminal"
    );
    assert!(fake.to("/token").is_empty());
}

#[test]
fn a_valid_token_is_sent_as_is() {
    let (fake, _) = peers(rotating());
    let (store, _) = stored("valid", Some(store::now() + 3600));
    let a = access(&fake, &store, false);
    assert_eq!(a.authorization().as_deref(), Some("Bearer access-1"));
    assert!(fake.to("/token").is_empty());
}

#[test]
fn a_token_about_to_expire_is_refreshed_first_and_the_rotation_stored() {
    let (fake, _) = peers(rotating());
    let (store, _) = stored("ahead", Some(store::now() + 30));
    let a = access(&fake, &store, false);
    assert_eq!(a.authorization().as_deref(), Some("Bearer access-2"));
    let sent = fake.to("/token");
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].field("grant_type").as_deref(),
        Some("refresh_token")
    );
    assert_eq!(sent[0].field("refresh_token").as_deref(), Some("refresh-1"));
    assert_eq!(sent[0].field("resource").as_deref(), Some(SERVER));
    assert_eq!(sent[0].field("client_id").as_deref(), Some("client-1"));
    // On disk before the value came back.
    assert_eq!(
        read_back(&store).refresh_token.as_deref(),
        Some("refresh-2")
    );
    assert_eq!(a.authorization().as_deref(), Some("Bearer access-2"));
    assert_eq!(fake.to("/token").len(), 1);
}

#[test]
fn a_401_refreshes_once_and_a_401_to_the_fresh_token_asks_for_a_sign_in() {
    let (fake, _) = peers(rotating());
    let (store, _) = stored("after-401", Some(store::now() + 3600));
    let a = access(&fake, &store, false);
    let retry = a.unauthorized(Some("Bearer access-1"), None).unwrap();
    assert_eq!(retry, "Bearer access-2");
    assert_eq!(
        read_back(&store).refresh_token.as_deref(),
        Some("refresh-2")
    );
    // The server refuses the token it just issued: no second refresh.
    let needed = a.unauthorized(Some("Bearer access-2"), None).unwrap_err();
    assert!(
        needed
            .message
            .contains("refused a token issued moments ago"),
        "{}",
        needed.message
    );
    assert_eq!(fake.to("/token").len(), 1);
}

#[test]
fn racing_callers_of_one_access_send_one_refresh() {
    race("race-threads", |first, _, _| vec![first.copy(); 8]);
}

#[test]
fn two_processes_on_one_store_send_one_refresh() {
    // Two `Access`es that share nothing in memory stand for two processes:
    // only the token file's lock and the re-read under it keep them apart.
    race("race-processes", |_, fake, store| {
        (0..8).map(|_| access(fake, store, false)).collect()
    });
}

/// Callers made by `make` all answer a 401 to the same expired token at
/// once; the token endpoint holds the first refresh until every caller has
/// started.
fn race<F>(name: &str, make: F)
where
    F: FnOnce(&Access, &Arc<Fake>, &Store) -> Vec<Access>,
{
    let started = Arc::new(AtomicUsize::new(0));
    let release = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
    let (fake, _) = {
        let (started, release) = (started.clone(), release.clone());
        let next = rotating();
        peers(move |seen| {
            let deadline = Instant::now() + Duration::from_secs(20);
            let (lock, cv) = &*release;
            let mut go = lock.lock().unwrap();
            while !*go && started.load(Ordering::SeqCst) < 8 && Instant::now() < deadline {
                go = cv.wait_timeout(go, Duration::from_millis(10)).unwrap().0;
            }
            *go = true;
            next(seen)
        })
    };
    let (store, _) = stored(name, Some(store::now() - 1));
    let first = access(&fake, &store, false);
    let callers = make(&first, &fake, &store);
    let barrier = Arc::new(Barrier::new(callers.len()));
    let threads: Vec<_> = callers
        .into_iter()
        .map(|a| {
            let (barrier, started) = (barrier.clone(), started.clone());
            std::thread::spawn(move || {
                barrier.wait();
                started.fetch_add(1, Ordering::SeqCst);
                a.unauthorized(Some("Bearer access-1"), None)
            })
        })
        .collect();
    for t in threads {
        assert_eq!(t.join().unwrap().as_deref(), Ok("Bearer access-2"));
    }
    assert_eq!(fake.to("/token").len(), 1, "one refresh reached the server");
    assert_eq!(
        read_back(&store).refresh_token.as_deref(),
        Some("refresh-2")
    );
}

#[test]
fn a_refused_refresh_deletes_the_tokens_and_asks_for_a_sign_in() {
    let (fake, _) = peers(|_| {
        json(
            400,
            json!({"error": "invalid_grant", "error_description": "family revoked"}),
        )
    });
    let (store, _) = stored("refused", Some(store::now() - 1));
    let a = access(&fake, &store, false);
    let needed = a.unauthorized(Some("Bearer access-1"), None).unwrap_err();
    assert!(
        needed.message.starts_with(
            "Sign-in needed for server 'S' (toolbox 'T'): run mcp-workbench login T/S in a terminal \
             (the sign-in could not be refreshed: the token endpoint https://as.example/token refused"
        ),
        "{}",
        needed.message
    );
    assert!(
        needed.message.contains("invalid_grant (family revoked)"),
        "{}",
        needed.message
    );
    assert!(
        needed.message.ends_with("invalid_grant (family revoked))"),
        "{}",
        needed.message
    );
    assert!(
        store.find(&server(), None).is_empty(),
        "the refused tokens are gone"
    );
    assert_eq!(a.authorization(), None);
    // Nothing loops: the next 401 asks for a sign-in without a request.
    assert!(a.unauthorized(None, None).is_err());
    assert_eq!(fake.to("/token").len(), 1);
}

#[test]
fn a_failed_refresh_keeps_the_tokens() {
    let (fake, _) =
        peers(|_| Err("cannot connect to https://as.example/token: connection refused".into()));
    let (store, before) = stored("failed", Some(store::now() - 1));
    let a = access(&fake, &store, false);
    let needed = a.unauthorized(Some("Bearer access-1"), None).unwrap_err();
    assert!(
        needed
            .message
            .starts_with("Cannot refresh the sign-in of server 'S' (toolbox 'T')"),
        "{}",
        needed.message
    );
    assert!(
        needed.message.contains("connection refused"),
        "{}",
        needed.message
    );
    assert_eq!(read_back(&store), before);
    assert_eq!(fake.to("/token").len(), 1);
}

#[test]
fn tokens_written_by_another_process_are_picked_up() {
    let (fake, _) = peers(rotating());
    let (store, t) = stored("picked-up", Some(store::now() + 3600));
    let a = access(&fake, &store, false);
    assert_eq!(a.authorization().as_deref(), Some("Bearer access-1"));
    let path = store.path(&t.issuer, &t.resource, &t.client_id);
    let newer = Tokens {
        access_token: "from-elsewhere".into(),
        ..t
    };
    store.write(&path, &newer).unwrap();
    assert_eq!(a.authorization().as_deref(), Some("Bearer from-elsewhere"));
    // A 401 to the old value is answered with the new one, without a refresh.
    assert_eq!(
        a.unauthorized(Some("Bearer access-1"), None).as_deref(),
        Ok("Bearer from-elsewhere")
    );
    assert!(fake.to("/token").is_empty());
}

#[test]
fn plain_http_to_another_machine_is_never_signed_in() {
    let (fake, _) = peers(rotating());
    let a = fresh(
        &Url::parse("http://mcp.example.com/mcp").unwrap(),
        &Client::default(),
        fake.clone(),
        scratch("plain"),
        |_| Ok(()),
        true,
    );
    let needed = a.unauthorized(None, None).unwrap_err();
    assert!(needed.message.contains("plain http"), "{}", needed.message);
    assert!(crate::lock(&fake.seen).is_empty());
}

/// What a browser does with the authorization page: the authorization
/// server approves at once and redirects to the loopback with the code.
pub(crate) fn browse(page: &str) {
    let page = Url::parse(page).unwrap();
    let pairs = url::query_pairs(page.query().unwrap());
    let get = |k: &str| pairs.iter().find(|(n, _)| n == k).unwrap().1.clone();
    let redirect = Url::parse(&get("redirect_uri")).unwrap();
    let target = format!(
        "{}?code=the-code&state={}&iss={}",
        redirect.path(),
        url::encode(&get("state")),
        url::encode("https://as.example")
    );
    let mut stream = TcpStream::connect(("127.0.0.1", redirect.port())).unwrap();
    write!(stream, "GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.contains("You can close this tab"), "{answer}");
}

#[test]
fn a_serving_process_signs_in_in_the_background_opening_the_browser_once() {
    let (fake, _) = peers(|seen| {
        assert_eq!(seen.field("code").as_deref(), Some("the-code"));
        json(
            200,
            json!({"access_token": "signed-in", "refresh_token": "r", "expires_in": 3600}),
        )
    });
    let store = scratch("background");
    let opened: Arc<Mutex<Vec<String>>> = Arc::default();
    let a = {
        let opened = opened.clone();
        fresh(
            &server(),
            &Client::default(),
            fake.clone(),
            store.clone(),
            move |url| {
                opened.lock().unwrap().push(url.to_string());
                Ok(())
            },
            true,
        )
    };
    let challenge = r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp""#;
    let first = a.unauthorized(None, Some(challenge)).unwrap_err();
    let second = a.copy().unauthorized(None, Some(challenge)).unwrap_err();
    assert_eq!(first, second, "the same sign-in, the browser opened once");
    let page = {
        let opened = opened.lock().unwrap();
        assert_eq!(opened.len(), 1);
        opened[0].clone()
    };
    assert!(first.message.starts_with(
        "Sign-in needed for server 'S' (toolbox 'T'): a browser window was opened; finish signing in there, \
         then open the toolbox again (or run: mcp-workbench login T/S). The sign-in page: https://as.example/authorize?"
    ), "{}", first.message);
    assert!(first.message.ends_with(&page));
    browse(&page);
    let deadline = Instant::now() + Duration::from_secs(20);
    while a.authorization().is_none() {
        assert!(
            Instant::now() < deadline,
            "the background sign-in stored no tokens"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(a.authorization().as_deref(), Some("Bearer signed-in"));
    assert_eq!(read_back(&store).access_token, "signed-in");
}

#[test]
fn a_serving_process_without_a_browser_shows_the_page() {
    let (fake, _) = peers(rotating());
    let a = fresh(
        &server(),
        &Client::default(),
        fake,
        scratch("no-browser"),
        |_| Err(std::io::Error::other("no graphical session")),
        true,
    );
    let needed = a.unauthorized(None, None).unwrap_err();
    assert!(needed.message.starts_with(
        "Sign-in needed for server 'S' (toolbox 'T'): open the page below in a browser on this machine and sign in"
    ), "{}", needed.message);
    assert!(
        needed
            .message
            .contains(" The sign-in page: https://as.example/authorize?"),
        "{}",
        needed.message
    );
}

/// Where the server's url holds a secret (a `${VAR}` in its path), the page,
/// whose `resource` names that url, is not shown to the model: `login`
/// shows it in a terminal.
#[test]
fn a_page_whose_address_holds_a_secret_is_not_shown() {
    let (fake, _) = peers(rotating());
    let secret_path = server().hiding([("mcp".to_string(), "${PATH_KEY}".to_string())]);
    let a = fresh(
        &secret_path,
        &Client::default(),
        fake,
        scratch("secret-page"),
        |_| Err(std::io::Error::other("no graphical session")),
        true,
    );
    let needed = a.unauthorized(None, None).unwrap_err();
    assert!(
        !needed.message.contains("authorize?") && !needed.message.contains("example.com%2Fmcp"),
        "{}",
        needed.message
    );
    assert!(
        needed
            .message
            .ends_with("mcp-workbench login T/S shows it in a terminal."),
        "{}",
        needed.message
    );
}
