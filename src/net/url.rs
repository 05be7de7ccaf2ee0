//! An `http`/`https` URL as the remote transports and the sign-in use it:
//! parsed once into scheme, host, port and target, so that origins can be
//! compared (redirects, where `Authorization` may go), references resolved
//! (`Location`, an SSE `endpoint`, OAuth metadata paths) and queries built.
//! Only what an HTTP client needs: no user info, no other schemes.

use std::fmt;

/// A parsed `http://` or `https://` URL, without its fragment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    https: bool,
    /// Lower-cased; an IPv6 address without its brackets.
    host: String,
    port: u16,
    /// The path and query, starting with `/`.
    target: String,
}

impl Url {
    /// Parses an absolute `http` or `https` URL.
    pub fn parse(text: &str) -> Result<Url, String> {
        let text = text.trim();
        let (scheme, rest) = text
            .split_once("://")
            .ok_or_else(|| format!("'{text}' is not an absolute URL (http:// or https://)"))?;
        let https = match scheme.to_ascii_lowercase().as_str() {
            "https" => true,
            "http" => false,
            other => return Err(format!("unsupported URL scheme '{other}' (http or https)")),
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
        })
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

impl fmt::Display for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.origin(), self.target)
    }
}

/// Splits `host[:port]` (`[v6]:port` for IPv6).
fn split_host_port(authority: &str) -> Result<(String, Option<u16>), String> {
    if authority.is_empty() {
        return Err("the URL has no host".to_string());
    }
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest
            .split_once(']')
            .ok_or_else(|| format!("'{authority}': an IPv6 address needs its closing ']'"))?;
        let port = match after {
            "" => None,
            p => Some(
                p.strip_prefix(':')
                    .ok_or_else(|| format!("'{authority}': unexpected text after ']'"))?,
            ),
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
        return Err(format!("'{host}' is not a valid host name"));
    }
    let port = match port {
        None | Some("") => None,
        Some(p) => Some(
            p.parse::<u16>()
                .ok()
                .filter(|p| *p != 0)
                .ok_or_else(|| format!("'{p}' is not a valid port"))?,
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
        assert_eq!(u.to_string(), "https://mcp.example.com/mcp?x=1");
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
    fn joins_references_as_a_browser_would() {
        let base = Url::parse("https://a.example/mcp/sse?x=1").unwrap();
        let j = |r: &str| base.join(r).unwrap().to_string();
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
