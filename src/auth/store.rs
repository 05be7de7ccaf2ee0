//! The tokens and client registrations kept for every process of the user,
//! in the state folder (`sys::user_dir`): `oauth/tokens/<key>.json`, one per
//! authorization server, resource and client (`key`: 32 hex digits of the
//! SHA-256 of the three), and `oauth/clients/<issuer key>.json`, the clients
//! this workbench registered at each authorization server, by redirect URI.
//! Folders 0700, files 0600, every write atomic (`sys::write_atomically`).
//! A folder found open to other users is made 0700 with a warning naming
//! it; a link in its place or another user's folder is refused (its tokens
//! are not used, nothing is written there), as the shared fleet's runtime
//! folder is. A file is read without following a link: a link is taken as
//! no tokens, with a warning, and the next sign-in writes a file in its place.
//!
//! Nothing here is ever logged, and no message quotes a file's content: a
//! message names the file. A server's tokens are found by looking through
//! the tokens folder for the resource that covers the server's URL (a
//! handful of small files), so no other index has to be kept in step.
//! Changing a token file is for the holder of its lock (`lock`).

use super::lock::{Held, Locks};
use super::metadata;
use crate::net::Url;
use crate::pins::sha256;
use crate::sys::{self, Secured, UserDir};
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch, now.
pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// How a client authenticates at the token endpoint (RFC 8414 §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum AuthMethod {
    /// A public client: `client_id` in the body.
    None,
    ClientSecretBasic,
    ClientSecretPost,
}

/// One sign-in's tokens, and what refreshing them needs.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Tokens {
    pub issuer: String,
    /// What the grant is for (RFC 8707), sent again with each refresh.
    pub resource: String,
    pub token_endpoint: String,
    pub client_id: String,
    /// The client was registered here (dynamic registration), not configured.
    #[serde(default)]
    pub registered: bool,
    /// A registered client's secret, if it got one (a configured client's
    /// secret stays in the config).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    pub auth_method: AuthMethod,
    pub access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Unix seconds.
    pub obtained_at: u64,
    /// Obtained by a refresh (not by a sign-in).
    #[serde(default)]
    pub refreshed: bool,
    /// Unix seconds; `None`: the server did not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// Never shows a token or a secret.
impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("refresh_token", &self.refresh_token.is_some())
            .field("obtained_at", &self.obtained_at)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

impl Tokens {
    /// The `Authorization` header's value.
    pub(crate) fn bearer(&self) -> String {
        format!("Bearer {}", self.access_token)
    }

    /// Whether the access token expired by `now`.
    pub(crate) fn expired(&self, now: u64) -> bool {
        self.expires_at.is_some_and(|at| now >= at)
    }

    /// Whether it is time to refresh ahead of expiry (`token::refresh_at`).
    pub(crate) fn due(&self, now: u64) -> bool {
        self.expires_at
            .is_some_and(|at| now >= super::token::refresh_at(self.obtained_at, at))
    }
}

/// A client this workbench registered at an authorization server.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Registration {
    pub redirect_uri: String,
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    pub auth_method: AuthMethod,
    pub registered_at: u64,
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("redirect_uri", &self.redirect_uri)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Clients {
    issuer: String,
    clients: Vec<Registration>,
}

/// The `oauth` folder of the user's state folder, and the in-process
/// table of the files held in it (`lock`).
#[derive(Debug, Clone)]
pub(crate) struct Store {
    dir: PathBuf,
    locks: Locks,
}

impl Store {
    /// The store in the state folder the environment `env` names, holding
    /// its files through `locks` (the process's `SignIns`').
    pub(crate) fn open(
        env: &dyn Fn(&str) -> Option<OsString>,
        locks: Locks,
    ) -> Result<Store, String> {
        let dir = sys::user_dir(UserDir::State, env)?.join("oauth");
        Ok(Store { dir, locks })
    }

    /// A store in `dir`, with a lock table of its own (the tests').
    #[cfg(test)]
    pub(crate) fn at(dir: PathBuf) -> Store {
        Store {
            dir,
            locks: Locks::default(),
        }
    }

    /// Takes the locks of file `path` of this store (`lock`).
    pub(crate) fn lock(&self, path: &Path) -> Result<Held, String> {
        self.locks.take(path)
    }

    #[cfg(all(test, unix))]
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where tokens are kept.
    pub(crate) fn tokens_dir(&self) -> PathBuf {
        self.dir.join("tokens")
    }

    /// The token file of a grant.
    pub(crate) fn path(&self, issuer: &str, resource: &str, client_id: &str) -> PathBuf {
        let key = sha256::hex(format!("{issuer}\n{resource}\n{client_id}").as_bytes());
        self.tokens_dir().join(format!("{}.json", &key[..32]))
    }

    /// The tokens in `path`; `None` when there are none. A file that does
    /// not read (a link among them) is `None` too (it is replaced at the next
    /// sign-in), with a warning that names it; so is a folder refused.
    pub(crate) fn read(&self, path: &Path) -> Option<Tokens> {
        if let Some(dir) = path.parent() {
            if let Err(e) = private(dir) {
                log::warn!("{e}: the tokens in it are not used");
                return None;
            }
        }
        read_tokens(path)
    }

    /// Writes `tokens` to `path`, user-only and atomically.
    pub(crate) fn write(&self, path: &Path, tokens: &Tokens) -> Result<(), String> {
        let bytes = serde_json::to_vec_pretty(tokens).unwrap_or_default();
        write_private(path, &bytes)
    }

    /// Deletes the tokens in `path`; whether there were any.
    pub(crate) fn delete(&self, path: &Path) -> Result<bool, String> {
        match std::fs::remove_file(path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(format!("cannot delete {}: {e}", path.display())),
        }
    }

    /// Every token file whose resource covers `server` and whose client is
    /// `client_id` (a configured client) or one registered here (`None`),
    /// the best first: the most specific resource, then the newest.
    pub(crate) fn find(&self, server: &Url, client_id: Option<&str>) -> Vec<(PathBuf, Tokens)> {
        let dir = self.tokens_dir();
        if let Err(e) = private(&dir) {
            log::warn!("{e}: the tokens in it are not used");
            return Vec::new();
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut found: Vec<(PathBuf, Tokens)> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .filter_map(|p| read_tokens(&p).map(|t| (p, t)))
            .filter(|(_, t)| metadata::covers(&t.resource, server))
            .filter(|(_, t)| match client_id {
                Some(id) => t.client_id == id,
                None => t.registered,
            })
            .collect();
        found.sort_by(|(_, a), (_, b)| {
            (b.resource.len(), b.obtained_at).cmp(&(a.resource.len(), a.obtained_at))
        });
        found
    }

    fn clients_path(&self, issuer: &str) -> PathBuf {
        let key = sha256::hex(issuer.as_bytes());
        self.dir
            .join("clients")
            .join(format!("{}.json", &key[..32]))
    }

    /// The clients registered at `issuer`, the newest first.
    pub(crate) fn registrations(&self, issuer: &str) -> Vec<Registration> {
        let path = self.clients_path(issuer);
        if let Some(Err(e)) = path.parent().map(private) {
            log::warn!("{e}: the clients registered in it are not used");
            return Vec::new();
        }
        let mut clients = read_bytes(&path)
            .and_then(|bytes| serde_json::from_slice::<Clients>(&bytes).ok())
            .filter(|c| c.issuer == issuer)
            .map(|c| c.clients)
            .unwrap_or_default();
        clients.sort_by_key(|c| std::cmp::Reverse(c.registered_at));
        clients
    }

    /// Remembers a client registered at `issuer`, in place of one with the
    /// same redirect URI.
    pub(crate) fn remember(&self, issuer: &str, registration: Registration) -> Result<(), String> {
        let path = self.clients_path(issuer);
        let _held = self.lock(&path)?;
        let mut clients = self.registrations(issuer);
        clients.retain(|c| c.redirect_uri != registration.redirect_uri);
        clients.insert(0, registration);
        let file = Clients {
            issuer: issuer.to_string(),
            clients,
        };
        write_private(&path, &serde_json::to_vec_pretty(&file).unwrap_or_default())
    }

    /// Forgets a client registered at `issuer` (the server no longer knows it).
    pub(crate) fn forget(&self, issuer: &str, client_id: &str) -> Result<(), String> {
        let path = self.clients_path(issuer);
        let _held = self.lock(&path)?;
        let mut clients = self.registrations(issuer);
        let before = clients.len();
        clients.retain(|c| c.client_id != client_id);
        if clients.len() == before {
            return Ok(());
        }
        let file = Clients {
            issuer: issuer.to_string(),
            clients,
        };
        write_private(&path, &serde_json::to_vec_pretty(&file).unwrap_or_default())
    }
}

/// The tokens in file `path` of a folder already checked (`Store::read`).
fn read_tokens(path: &Path) -> Option<Tokens> {
    let bytes = read_bytes(path)?;
    match serde_json::from_slice(&bytes) {
        Ok(tokens) => Some(tokens),
        Err(_) => {
            log::warn!(
                "{} does not hold tokens this version reads: a sign-in replaces it",
                path.display()
            );
            None
        }
    }
}

/// The bytes of file `path`, not through a link; `None` when it is missing,
/// or with a warning naming it when it does not read.
fn read_bytes(path: &Path) -> Option<Vec<u8>> {
    match sys::read_private(path) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) if e.kind() == io::ErrorKind::InvalidData => {
            log::warn!("{e}; taken as absent, the next write replaces it");
            None
        }
        Err(e) => {
            log::warn!("cannot read {}: {e}", path.display());
            None
        }
    }
}

/// Checks one of the store's folders (`sys::secure_dir`): a folder open to
/// others is made private, with a warning saying so; an error refuses it.
fn private(dir: &Path) -> Result<(), String> {
    match sys::secure_dir(dir) {
        Ok(Secured::Tightened(mode)) => {
            log::warn!(
                "{} was open to other users (mode {mode:o}): its mode is now 0700, the user's alone",
                dir.display()
            );
            Ok(())
        }
        Ok(Secured::Absent | Secured::Private) => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        sys::private_dir(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        private(dir)?;
    }
    sys::write_atomically(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A store in a scratch folder of its own.
    pub(crate) fn scratch(name: &str) -> Store {
        let dir = std::env::temp_dir().join(format!("auth-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Store::at(dir)
    }

    pub(crate) fn tokens(resource: &str, client_id: &str) -> Tokens {
        Tokens {
            issuer: "https://as.example".into(),
            resource: resource.into(),
            token_endpoint: "https://as.example/token".into(),
            client_id: client_id.into(),
            registered: true,
            client_secret: None,
            auth_method: AuthMethod::None,
            access_token: "access-1".into(),
            refresh_token: Some("refresh-1".into()),
            obtained_at: 1_000,
            refreshed: false,
            expires_at: Some(4_600),
            scope: None,
        }
    }

    #[test]
    fn tokens_are_written_privately_found_by_resource_and_deleted() {
        let store = scratch("store");
        let server = Url::parse("https://mcp.example.com/v1/mcp").unwrap();
        let wide = tokens("https://mcp.example.com", "c1");
        let exact = Tokens {
            obtained_at: 5,
            ..tokens("https://mcp.example.com/v1/mcp", "c1")
        };
        let other = tokens("https://mcp.example.com/v2", "c1");
        let configured = Tokens {
            registered: false,
            ..tokens("https://mcp.example.com/v1/mcp", "mine")
        };
        for t in [&wide, &exact, &other, &configured] {
            store
                .write(&store.path(&t.issuer, &t.resource, &t.client_id), t)
                .unwrap();
        }
        let found = store.find(&server, None);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].1, exact);
        assert_eq!(found[1].1, wide);
        let mine = store.find(&server, Some("mine"));
        assert_eq!(mine.len(), 1);
        assert_eq!(mine[0].1, configured);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&found[0].0), 0o600);
            assert_eq!(mode(&store.tokens_dir()), 0o700);
        }
        assert!(store.delete(&found[0].0).unwrap());
        assert!(!store.delete(&found[0].0).unwrap());
        assert_eq!(store.find(&server, None)[0].1, wide);
        std::fs::write(&found[1].0, b"{not json").unwrap();
        assert!(store.find(&server, None).is_empty());
        let debug = format!("{wide:?}");
        assert!(
            !debug.contains("access-1") && !debug.contains("refresh-1"),
            "{debug}"
        );
    }

    #[test]
    fn registrations_are_remembered_per_issuer_and_redirect() {
        let store = scratch("clients");
        let reg = |uri: &str, id: &str, at: u64| Registration {
            redirect_uri: uri.into(),
            client_id: id.into(),
            client_secret: None,
            auth_method: AuthMethod::None,
            registered_at: at,
        };
        store
            .remember(
                "https://as.example",
                reg("http://127.0.0.1:1/callback", "a", 1),
            )
            .unwrap();
        store
            .remember(
                "https://as.example",
                reg("http://127.0.0.1:2/callback", "b", 2),
            )
            .unwrap();
        store
            .remember(
                "https://as.example",
                reg("http://127.0.0.1:1/callback", "c", 3),
            )
            .unwrap();
        let ids: Vec<_> = store
            .registrations("https://as.example")
            .into_iter()
            .map(|r| r.client_id)
            .collect();
        assert_eq!(ids, ["c", "b"]);
        assert!(store.registrations("https://other.example").is_empty());
        store.forget("https://as.example", "c").unwrap();
        assert_eq!(store.registrations("https://as.example").len(), 1);
    }

    /// A store with one grant's tokens written, and their file.
    #[cfg(unix)]
    fn one_grant(name: &str) -> (Store, Url, Tokens, PathBuf) {
        let store = scratch(name);
        let server = Url::parse("https://mcp.example.com/v1/mcp").unwrap();
        let t = tokens("https://mcp.example.com", "c1");
        let path = store.path(&t.issuer, &t.resource, &t.client_id);
        store.write(&path, &t).unwrap();
        (store, server, t, path)
    }

    #[cfg(unix)]
    #[test]
    fn a_tokens_folder_open_to_others_is_made_private() {
        use std::os::unix::fs::PermissionsExt;
        let (store, server, t, path) = one_grant("loose");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let set = |p: &Path, m: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
        };

        // A tokens folder others may enter is tightened, then used.
        set(&store.tokens_dir(), 0o755);
        assert_eq!(store.find(&server, None).len(), 1);
        assert_eq!(mode(&store.tokens_dir()), 0o700);
        set(&store.tokens_dir(), 0o770);
        assert_eq!(store.read(&path), Some(t.clone()));
        assert_eq!(mode(&store.tokens_dir()), 0o700);
        let _ = std::fs::remove_dir_all(store.dir());
    }

    #[cfg(unix)]
    #[test]
    fn links_are_not_followed_nor_written_through() {
        use std::os::unix::fs::symlink;
        let (store, server, t, path) = one_grant("links");

        // A token file that is a link is not followed: no tokens.
        let elsewhere = store.dir().join("elsewhere.json");
        std::fs::rename(&path, &elsewhere).unwrap();
        symlink(&elsewhere, &path).unwrap();
        assert_eq!(store.read(&path), None);
        assert!(store.find(&server, None).is_empty());
        // A sign-in's write replaces the link, not what it points to.
        let newer = Tokens {
            obtained_at: 7,
            ..t.clone()
        };
        store.write(&path, &newer).unwrap();
        assert!(!std::fs::symlink_metadata(&path).unwrap().is_symlink());
        assert_eq!(store.read(&path), Some(newer));
        let kept: Tokens = serde_json::from_slice(&std::fs::read(&elsewhere).unwrap()).unwrap();
        assert_eq!(kept, t);

        // A tokens folder that is a link is refused, to read and to write.
        let moved = store.dir().join("moved");
        std::fs::rename(store.tokens_dir(), &moved).unwrap();
        symlink(&moved, store.tokens_dir()).unwrap();
        assert!(store.find(&server, None).is_empty());
        assert_eq!(store.read(&path), None);
        let refused = store.write(&path, &t).unwrap_err();
        assert!(
            refused.contains("refusing") && refused.contains("link"),
            "{refused}"
        );
        assert!(!refused.contains("access-1"), "{refused}");
        let _ = std::fs::remove_dir_all(store.dir());
    }
}
