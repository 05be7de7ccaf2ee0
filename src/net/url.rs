//! An `http`/`https` URL as the remote transports and the sign-in use it:
//! parsed once into scheme, host, port and target, so that origins can be
//! compared (redirects, where `Authorization` may go), references resolved
//! (`Location`, an SSE `endpoint`, OAuth metadata paths) and queries built.
//! Only what an HTTP client needs: no user info, no other schemes.
//!
//! A URL is shown (`Display`) the way a person may read it: the values its
//! config's `${VAR}` references expanded to put back as those references
//! (`hiding`), query values and key-like path segments masked. What goes on
//! the wire is `as_sent`.

use super::text::shown;
use std::fmt;

/// What a masked part of a URL is shown as.
pub(crate) const MASK: &str = "<masked>";

/// A parsed `http://` or `https://` URL, without its fragment.
#[derive(Debug, Clone)]
pub struct Url {
    https: bool,
    /// Lower-cased; an IPv6 address without its brackets.
    host: String,
    port: u16,
    /// The path and query, starting with `/`.
    target: String,
    /// Secret texts in the URL and what to show instead (`hiding`); they
    /// follow every URL made from this one (`join`, `with_query`,
    /// `with_target`).
    hidden: Vec<(String, String)>,
}

impl PartialEq for Url {
    fn eq(&self, other: &Url) -> bool {
        (self.https, &self.host, self.port, &self.target)
            == (other.https, &other.host, other.port, &other.target)
    }
}

impl Eq for Url {}

impl Url {
    /// Parses an absolute `http` or `https` URL.
    pub fn parse(text: &str) -> Result<Url, String> {
        let text = text.trim();
        let (scheme, rest) = text.split_once("://").ok_or_else(|| {
            format!(
                "'{}' is not an absolute URL (http:// or https://)",
                shown(text, 100)
            )
        })?;
        let https = match scheme.to_ascii_lowercase().as_str() {
            "https" => true,
            "http" => false,
            other => {
                return Err(format!(
                    "unsupported URL scheme '{}' (http or https)",
                    shown(other, 40)
                ))
            }
        };
        let rest = rest.split('#').next().unwrap_or("");
        let split = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, target) = rest.split_at(split);
        if authority.contains('@') {
            return Err("a URL with a user name or password is not supported".to_string());
        }
        let (host, port) = split_host_port(authority)?;
        let port = match port {
            Some(port) => port,
            None if https => 443,
            None => 80,
        };
        let target = if target.starts_with('/') {
            target.to_string()
        } else {
            format!("/{target}")
        };
        if target.bytes().any(|b| b <= b' ' || b == 0x7f) {
            return Err("a URL must not contain spaces or control characters".to_string());
        }
        Ok(Url {
            https,
            host,
            port,
            target,
            hidden: Vec::new(),
        })
    }

    /// This URL, each `(secret, shown)` pair's secret (and its
    /// percent-encoded form) shown as `shown` wherever the URL or one made
    /// from it is displayed: a config's expanded `${VAR}` values, shown as
    /// the references.
    pub fn hiding(mut self, pairs: impl IntoIterator<Item = (String, String)>) -> Url {
        for (secret, shown) in pairs {
            if secret.is_empty() {
                continue;
            }
            let encoded = encode(&secret);
            if encoded != secret {
                self.hidden.push((encoded, shown.clone()));
            }
            self.hidden.push((secret, shown));
        }
        // The longest first, so that no secret is shown half replaced.
        self.hidden
            .sort_by_key(|(secret, _)| std::cmp::Reverse(secret.len()));
        self.hidden.dedup();
        self
    }

    /// The whole URL as it goes on the wire (a proxy's request line, a
    /// browser's address, a `resource` parameter): never for a message.
    pub fn as_sent(&self) -> String {
        format!("{}{}", self.origin(), self.target)
    }

    /// The URL on this one's origin with `target` (a path, maybe with a
    /// query) as its path, keeping what it hides.
    pub fn with_target(&self, target: &str) -> Result<Url, String> {
        self.keep_hidden(Url::parse(&format!("{}{target}", self.origin())))
    }

    fn keep_hidden(&self, url: Result<Url, String>) -> Result<Url, String> {
        url.map(|mut url| {
            url.hidden = self.hidden.clone();
            url
        })
        .map_err(|e| self.hide(&e))
    }

    /// `text` with this URL's secrets replaced by what is shown of them.
    pub fn hide(&self, text: &str) -> String {
        let mut text = text.to_string();
        for (secret, shown) in &self.hidden {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), shown);
            }
        }
        text
    }

    pub fn is_https(&self) -> bool {
        self.https
    }

    /// The host name or address (an IPv6 address without brackets).
    pub fn host(&self) -> &str {
        &self.host
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The path and query, as sent in a request line.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The path alone, without the query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("/")
    }

    /// The query, without its `?`, if there is one.
    pub fn query(&self) -> Option<&str> {
        self.target.split_once('?').map(|(_, q)| q)
    }

    /// `scheme://host[:port]`, the port left out when it is the scheme's
    /// default: two URLs may share credentials only when this is equal.
    pub fn origin(&self) -> String {
        let scheme = if self.https { "https" } else { "http" };
        let default = if self.https { 443 } else { 80 };
        if self.port == default {
            format!("{scheme}://{}", self.host_for_authority())
        } else {
            format!("{scheme}://{}:{}", self.host_for_authority(), self.port)
        }
    }

    /// `origin` for a message, its secrets hidden.
    pub fn shown_origin(&self) -> String {
        self.hide(&self.origin())
    }

    /// The `Host` header's value.
    pub fn authority(&self) -> String {
        let default = if self.https { 443 } else { 80 };
        if self.port == default {
            self.host_for_authority()
        } else {
            format!("{}:{}", self.host_for_authority(), self.port)
        }
    }

    /// `host:port` with the port always written (a `CONNECT` request's target).
    pub fn authority_with_port(&self) -> String {
        format!("{}:{}", self.host_for_authority(), self.port)
    }

    fn host_for_authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        }
    }

    /// Whether the host is a loopback address or `localhost`, where plain
    /// `http` is fine.
    pub fn is_loopback(&self) -> bool {
        let host = self.host.as_str();
        host == "localhost"
            || host.ends_with(".localhost")
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }

    /// Resolves a reference against this URL (RFC 3986 §5.2, without dot
    /// segments): an absolute URL, a network-path (`//host/...`), an
    /// absolute path, a query, or a path relative to this one's folder.
    pub fn join(&self, reference: &str) -> Result<Url, String> {
        self.keep_hidden(self.join_plain(reference))
    }

    fn join_plain(&self, reference: &str) -> Result<Url, String> {
        let reference = reference.trim();
        if reference.contains("://") && reference.find("://") < reference.find(['/', '?']) {
            return Url::parse(reference);
        }
        let scheme = if self.https { "https" } else { "http" };
        if let Some(rest) = reference.strip_prefix("//") {
            return Url::parse(&format!("{scheme}://{rest}"));
        }
        let base = self.origin();
        if reference.starts_with('/') {
            return Url::parse(&format!("{base}{reference}"));
        }
        if reference.starts_with('?') {
            return Url::parse(&format!("{base}{}{reference}", self.path()));
        }
        if reference.is_empty() {
            return Ok(self.clone());
        }
        let path = self.path();
        let folder = &path[..path.rfind('/').map_or(0, |i| i + 1)];
        Url::parse(&format!("{base}{folder}{reference}"))
    }

    /// This URL with `pairs` appended to its query, each percent-encoded.
    pub fn with_query(&self, pairs: &[(&str, &str)]) -> Url {
        let mut url = self.clone();
        for (i, (key, value)) in pairs.iter().enumerate() {
            let sep = if i == 0 && !url.target.contains('?') {
                '?'
            } else {
                '&'
            };
            url.target.push(sep);
            url.target.push_str(&encode(key));
            url.target.push('=');
            url.target.push_str(&encode(value));
        }
        url
    }
}

/// The URL for a message: its secrets as their references, its query's
/// values and its key-like path segments masked.
impl fmt::Display for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hidden = self.hide(&self.as_sent());
        let (before, query) = match hidden.split_once('?') {
            Some((before, query)) => (before, Some(query)),
            None => (hidden.as_str(), None),
        };
        let (origin, path) = before.split_at(
            before
                .find("://")
                .and_then(|s| before[s + 3..].find('/').map(|p| s + 3 + p))
                .unwrap_or(before.len()),
        );
        f.write_str(origin)?;
        for (i, segment) in path.split('/').enumerate() {
            if i > 0 {
                f.write_str("/")?;
            }
            f.write_str(if looks_like_key(segment) {
                MASK
            } else {
                segment
            })?;
        }
        if let Some(query) = query {
            f.write_str("?")?;
            for (i, pair) in query.split('&').enumerate() {
                if i > 0 {
                    f.write_str("&")?;
                }
                match pair.split_once('=') {
                    Some((name, value)) if shown_reference(value) => write!(f, "{name}={value}")?,
                    Some((name, _)) => write!(f, "{name}={MASK}")?,
                    None if looks_like_key(pair) => f.write_str(MASK)?,
                    None => f.write_str(pair)?,
                }
            }
        }
        Ok(())
    }
}

/// A value `hiding` put in: a config's reference, safe to show.
fn shown_reference(value: &str) -> bool {
    value.starts_with("${") && value.ends_with('}')
}

/// A long word of letters and digits, both, with no dot in it (base64's
/// `=` padding allowed): what API keys look like (`sk-...`, `ghp_...`), and
/// what package names, paths and words do not.
pub(crate) fn looks_like_key(text: &str) -> bool {
    let text = text.trim_end_matches('=');
    text.len() >= 20
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '+')
        && text.chars().any(|c| c.is_ascii_digit())
        && text.chars().any(|c| c.is_ascii_alphabetic())
}

/// Splits `host[:port]` (`[v6]:port` for IPv6).
fn split_host_port(authority: &str) -> Result<(String, Option<u16>), String> {
    if authority.is_empty() {
        return Err("the URL has no host".to_string());
    }
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or_else(|| {
            format!(
                "'{}': an IPv6 address needs its closing ']'",
                shown(authority, 100)
            )
        })?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or_else(|| {
                format!("'{}': unexpected text after ']'", shown(authority, 100))
            })?),
        };
        (host, port)
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err("the URL has no host".to_string());
    }
    if host
        .chars()
        .any(|c| !(c.is_ascii_alphanumeric() || "-._:%".contains(c)))
    {
        return Err(format!("'{}' is not a valid host name", shown(host, 100)));
    }
    let port = match port {
        None | Some("") => None,
        Some(p) => Some(
            p.parse::<u16>()
                .ok()
                .filter(|p| *p != 0)
                .ok_or_else(|| format!("'{}' is not a valid port", shown(p, 40)))?,
        ),
    };
    Ok((host.to_ascii_lowercase(), port))
}

/// Percent-encodes everything but RFC 3986's unreserved characters
/// (`application/x-www-form-urlencoded` values and query components).
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Decodes a percent-encoded query component (`+` is a space), or `None`
/// when it is not valid UTF-8.
pub fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// The `key=value` pairs of a query or form body, decoded; pairs that do
/// not decode are left out.
pub fn query_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .filter_map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            Some((decode(key)?, decode(value)?))
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_parts_and_fills_the_default_port() {
        let u = Url::parse("https://MCP.example.com/mcp?x=1#frag").unwrap();
        assert!(u.is_https());
        assert_eq!(u.host(), "mcp.example.com");
        assert_eq!(u.port(), 443);
        assert_eq!(u.target(), "/mcp?x=1");
        assert_eq!(u.path(), "/mcp");
        assert_eq!(u.query(), Some("x=1"));
        assert_eq!(u.origin(), "https://mcp.example.com");
        assert_eq!(u.as_sent(), "https://mcp.example.com/mcp?x=1");
        assert_eq!(u.to_string(), "https://mcp.example.com/mcp?x=<masked>");
        let v = Url::parse("http://[::1]:8080").unwrap();
        assert_eq!(v.host(), "::1");
        assert_eq!(v.target(), "/");
        assert_eq!(v.authority(), "[::1]:8080");
        assert_eq!(u.authority_with_port(), "mcp.example.com:443");
        assert!(v.is_loopback());
        assert!(Url::parse("http://localhost:3000/mcp")
            .unwrap()
            .is_loopback());
        assert!(!Url::parse("http://example.com").unwrap().is_loopback());
    }

    #[test]
    fn refuses_what_an_http_client_cannot_use() {
        for bad in [
            "mcp.example.com/mcp",
            "ftp://x/",
            "https://",
            "https://user:pw@x/",
            "http://x:0/",
            "http://x:99999/",
            "http://x/a b",
            "http://[::1/",
            "http://exa mple.com/",
        ] {
            assert!(Url::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_url_is_shown_with_its_secrets_as_written() {
        let url = Url::parse(
            "https://h.example/mcp/pk9Path/x?api_key=k7Query&mode=full&sk4eC39aZZ00yy11xx22ww",
        )
        .unwrap()
        .hiding([
            ("pk9Path".to_string(), "${PATH_KEY}".to_string()),
            ("k7Query".to_string(), "${KEY}".to_string()),
        ]);
        assert_eq!(
            url.to_string(),
            "https://h.example/mcp/${PATH_KEY}/x?api_key=${KEY}&mode=<masked>&<masked>"
        );
        assert!(url.as_sent().contains("pk9Path") && url.as_sent().contains("k7Query"));
        // What is made from it hides the same, even percent-encoded.
        let derived = url
            .join("/.well-known/oauth-protected-resource/mcp/pk9Path")
            .unwrap();
        assert_eq!(
            derived.to_string(),
            "https://h.example/.well-known/oauth-protected-resource/mcp/${PATH_KEY}"
        );
        let page = url.with_query(&[("resource", &url.as_sent())]);
        assert!(!page.to_string().contains("k7Query"), "{page}");
        assert!(!page.hide(&page.as_sent()).contains("pk9Path"), "{page}");
        // A key-like path segment is masked even when nothing says it is one.
        assert_eq!(
            Url::parse("https://mcp.zapier.example/api/mcp/sk4eC39aZZ00yy11xx22ww/mcp")
                .unwrap()
                .to_string(),
            "https://mcp.zapier.example/api/mcp/<masked>/mcp"
        );
        // A reason never quotes what a host sent raw.
        let e = Url::parse("https://ho\x1bst/").unwrap_err();
        assert!(e.contains("\\x1b") && !e.contains('\x1b'), "{e}");
    }

    #[test]
    fn joins_references_as_a_browser_would() {
        let base = Url::parse("https://a.example/mcp/sse?x=1").unwrap();
        let j = |r: &str| base.join(r).unwrap().as_sent();
        assert_eq!(j("/messages?s=1"), "https://a.example/messages?s=1");
        assert_eq!(j("messages"), "https://a.example/mcp/messages");
        assert_eq!(j("?y=2"), "https://a.example/mcp/sse?y=2");
        assert_eq!(j("//b.example/x"), "https://b.example/x");
        assert_eq!(j("http://c.example:81/"), "http://c.example:81/");
        assert_eq!(
            base.join("https://a.example:443/z").unwrap().origin(),
            base.origin()
        );
    }

    #[test]
    fn queries_encode_and_decode() {
        let u = Url::parse("https://as.example/authorize")
            .unwrap()
            .with_query(&[("redirect_uri", "http://127.0.0.1:5/cb"), ("scope", "a b")]);
        assert_eq!(
            u.target(),
            "/authorize?redirect_uri=http%3A%2F%2F127.0.0.1%3A5%2Fcb&scope=a%20b"
        );
        let pairs = query_pairs(u.query().unwrap());
        assert_eq!(pairs[0].1, "http://127.0.0.1:5/cb");
        assert_eq!(pairs[1].1, "a b");
        assert_eq!(
            query_pairs("a=1+2&b=%zz&c"),
            [
                ("a".to_string(), "1 2".to_string()),
                ("c".to_string(), String::new())
            ]
        );
        assert_eq!(decode("%4"), Some("%4".to_string()));
    }
}
