//! Which way a request goes: straight to its server, or through the proxy
//! the environment names (`HTTPS_PROXY` for `https`, `HTTP_PROXY` for `http`,
//! lower-case spellings too, the lower-case one first as curl reads them;
//! `NO_PROXY` lists the hosts that bypass it). Loopback hosts never go
//! through a proxy. An `https` URL goes through a `CONNECT` tunnel, a plain
//! `http` one in absolute form; a proxy's `user:password` becomes a
//! `Proxy-Authorization: Basic` header, never shown. No IO here.

use super::Url;

/// How to reach a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    Direct,
    /// Through this proxy.
    Proxy(Proxy),
}

/// An HTTP proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Proxy {
    pub(crate) host: String,
    pub(crate) port: u16,
    /// `Basic ...`, from the proxy URL's user and password.
    pub(crate) authorization: Option<String>,
}

impl Proxy {
    /// `host:port`, what messages show of it (never its credentials).
    pub(crate) fn display(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// The route to `url` given the environment `var` reads (`std::env::var`
/// but for tests); an unusable proxy variable is an error naming it.
pub(crate) fn route(url: &Url, var: impl Fn(&str) -> Option<String>) -> Result<Route, String> {
    if url.is_loopback() {
        return Ok(Route::Direct);
    }
    let names: &[&str] = if url.is_https() {
        &["https_proxy", "HTTPS_PROXY"]
    } else {
        &["http_proxy", "HTTP_PROXY"]
    };
    let Some((name, value)) = names
        .iter()
        .find_map(|n| var(n).filter(|v| !v.trim().is_empty()).map(|v| (*n, v)))
    else {
        return Ok(Route::Direct);
    };
    let no_proxy = var("no_proxy")
        .or_else(|| var("NO_PROXY"))
        .unwrap_or_default();
    if bypasses(url, &no_proxy) {
        return Ok(Route::Direct);
    }
    parse_proxy(&value)
        .map(Route::Proxy)
        .map_err(|e| format!("the proxy in {name} cannot be used: {e}"))
}

/// Whether `NO_PROXY`'s list names `url`'s host: `*`, the host itself, a
/// domain it is in (`example.com` or `.example.com`), with or without a port.
fn bypasses(url: &Url, list: &str) -> bool {
    let host = url.host();
    list.split(',').map(str::trim).any(|entry| {
        if entry == "*" {
            return true;
        }
        let (name, port) = match entry.rsplit_once(':') {
            Some((name, port)) if !name.contains(':') || name.ends_with(']') => (name, Some(port)),
            _ => (entry, None),
        };
        if port.is_some_and(|p| p.parse::<u16>() != Ok(url.port())) {
            return false;
        }
        let name = name
            .trim_start_matches('[')
            .trim_end_matches(']')
            .trim_start_matches('.')
            .to_ascii_lowercase();
        !name.is_empty()
            && (host == name
                || host
                    .strip_suffix(name.as_str())
                    .is_some_and(|before| before.ends_with('.')))
    })
}

/// `[http://][user:password@]host[:port][/]`: the port defaults to 80.
/// The user info ends at the last `@`, so a pasted password with an
/// unescaped `@`, `/`, `?`, `#` or `:` stays whole; what follows the address
/// (a path, a query) is ignored. No message quotes any part of the user info:
/// the address quoted by `Url::parse` is the text after the last `@`.
fn parse_proxy(value: &str) -> Result<Proxy, String> {
    let value = value.trim();
    let (before, address) = match value.rsplit_once('@') {
        Some((before, address)) => (Some(before), address),
        None => (None, value),
    };
    // The scheme is read from the text before the user info (or from the
    // whole value without one), and only when it has a scheme's syntax, so
    // that a `://` inside a password is not taken for one.
    let (scheme, credentials, address) = match before {
        Some(before) => match split_scheme(before) {
            Some((scheme, credentials)) => (Some(scheme), Some(credentials), address),
            None => (None, Some(before), address),
        },
        None => match split_scheme(address) {
            Some((scheme, address)) => (Some(scheme), None, address),
            None => (None, None, address),
        },
    };
    if let Some(scheme) = scheme.filter(|s| !s.eq_ignore_ascii_case("http")) {
        return Err(format!(
            "its scheme is '{scheme}' (only http:// proxies are supported)"
        ));
    }
    let address = address.split(['/', '?', '#']).next().unwrap_or("");
    let url = Url::parse(&format!("http://{address}")).map_err(|e| e.to_string())?;
    let authorization = credentials.map(|c| {
        let (user, password) = c.split_once(':').unwrap_or((c, ""));
        let pair = format!("{}:{}", userinfo_decode(user), userinfo_decode(password));
        format!("Basic {}", super::base64::standard(pair.as_bytes()))
    });
    Ok(Proxy {
        host: url.host().to_string(),
        port: url.port(),
        authorization,
    })
}

/// `scheme://rest` split in two when the text before `://` has the syntax
/// of a scheme (RFC 3986 section 3.1: a letter, then letters, digits, `+`,
/// `-` or `.`).
fn split_scheme(text: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = text.split_once("://")?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)))
        .then_some((scheme, rest))
}

/// A user name or password as written in a URL: percent-escapes decoded
/// (a `+` stays a `+`), or the text as it is when they do not decode.
fn userinfo_decode(text: &str) -> String {
    super::url::decode(&text.replace('+', "%2B")).unwrap_or_else(|| text.to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        }
    }

    fn route_of(url: &str, pairs: &[(&str, &str)]) -> Route {
        route(&Url::parse(url).unwrap(), env(pairs)).unwrap()
    }

    #[test]
    fn the_scheme_picks_the_variable_and_loopback_goes_direct() {
        let vars = [
            ("HTTPS_PROXY", "http://user:p%40ss@proxy.corp:3128"),
            ("http_proxy", "plain.corp"),
        ];
        let Route::Proxy(p) = route_of("https://mcp.example.com/mcp", &vars) else {
            panic!("proxied")
        };
        assert_eq!((p.host.as_str(), p.port), ("proxy.corp", 3128));
        assert_eq!(p.authorization.as_deref(), Some("Basic dXNlcjpwQHNz"));
        assert_eq!(p.display(), "proxy.corp:3128");
        let Route::Proxy(p) = route_of("http://mcp.example.com/mcp", &vars) else {
            panic!("proxied")
        };
        assert_eq!(
            (p.host.as_str(), p.port, p.authorization),
            ("plain.corp", 80, None)
        );
        assert_eq!(route_of("https://127.0.0.1:8443/", &vars), Route::Direct);
        assert_eq!(route_of("http://localhost/", &vars), Route::Direct);
        assert_eq!(route_of("https://mcp.example.com/", &[]), Route::Direct);
    }

    #[test]
    fn no_proxy_names_hosts_domains_and_ports() {
        let with = |no: &'static str| [("HTTPS_PROXY", "proxy:1"), ("NO_PROXY", no)];
        let direct = |url: &str, no: &'static str| route_of(url, &with(no)) == Route::Direct;
        assert!(direct("https://mcp.example.com/", "example.com"));
        assert!(direct("https://mcp.example.com/", ".example.com"));
        assert!(direct("https://example.com/", "other.org, example.com"));
        assert!(!direct("https://notexample.com/", "example.com"));
        assert!(direct("https://a.example.com:8443/", "example.com:8443"));
        assert!(!direct("https://a.example.com/", "example.com:8443"));
        assert!(direct("https://anything/", "*"));
        assert!(direct("https://10.0.0.5/", "10.0.0.5"));
    }

    #[test]
    fn an_unusable_proxy_is_an_error_naming_its_variable() {
        let e = route(
            &Url::parse("https://x.example/").unwrap(),
            env(&[("https_proxy", "socks5://p:1")]),
        )
        .unwrap_err();
        assert!(e.contains("https_proxy") && e.contains("socks5"), "{e}");
    }

    #[test]
    fn a_password_with_unescaped_separators_stays_whole_and_is_never_shown() {
        for password in [
            "Pw9x#Tail",
            "Pw9x/Tail",
            "Pw9x?Tail",
            "Pw9x@Tail",
            "Pw9x:Tail",
            "a://b+c",
        ] {
            let value = format!("http://user:{password}@127.0.0.1:3128");
            let p = parse_proxy(&value).unwrap();
            assert_eq!((p.host.as_str(), p.port), ("127.0.0.1", 3128), "{value}");
            let pair = format!("user:{password}");
            let basic = format!("Basic {}", crate::net::base64::standard(pair.as_bytes()));
            assert_eq!(p.authorization, Some(basic), "{value}");
        }
        // No scheme, and a `://` inside the password: not taken for a scheme.
        let p = parse_proxy("user:x://Pw9x#Tail@proxy.corp:8080/").unwrap();
        assert_eq!((p.host.as_str(), p.port), ("proxy.corp", 8080));
    }

    #[test]
    fn no_error_of_a_proxy_url_quotes_its_user_info() {
        let secret = "Pw9xSecret";
        for value in [
            "http://user:Pw9xSecret#Tail@127.0.0.1:P",
            "http://user:Pw9xSecret#Tail@127.0.0.1:99999",
            "http://user:Pw9xSecret/Tail@",
            "http://user:Pw9xSecret@[::1",
            "http://user:Pw9xSecret@[::1]x",
            "http://user:Pw9xSecret@bad host:1",
            "http://user:Pw9xSecret?@:1",
            "socks5://user:Pw9xSecret@proxy:1",
            "user:Pw9xSecret:1",
            "us er:Pw9xSecret://x@pro xy:1",
        ] {
            let e = route(
                &Url::parse("https://x.example/").unwrap(),
                env(&[("HTTPS_PROXY", value)]),
            );
            if let Err(e) = e {
                assert!(!e.contains(secret) && !e.contains("Tail"), "{value}: {e}");
            }
        }
    }
}
