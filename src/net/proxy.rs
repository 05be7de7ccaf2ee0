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
fn parse_proxy(value: &str) -> Result<Proxy, String> {
    let value = value.trim();
    let rest = match value.split_once("://") {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => rest,
        Some((scheme, _)) => {
            return Err(format!(
                "its scheme is '{scheme}' (only http:// proxies are supported)"
            ))
        }
        None => value,
    };
    let rest = rest.split(['/', '?', '#']).next().unwrap_or("");
    let (credentials, address) = match rest.rsplit_once('@') {
        Some((credentials, address)) => (Some(credentials), address),
        None => (None, rest),
    };
    let url = Url::parse(&format!("http://{address}")).map_err(|e| e.to_string())?;
    let authorization = credentials.map(|c| {
        let (user, password) = c.split_once(':').unwrap_or((c, ""));
        let pair = format!(
            "{}:{}",
            super::url::decode(user).unwrap_or_else(|| user.to_string()),
            super::url::decode(password).unwrap_or_else(|| password.to_string())
        );
        format!("Basic {}", super::base64::standard(pair.as_bytes()))
    });
    Ok(Proxy {
        host: url.host().to_string(),
        port: url.port(),
        authorization,
    })
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
}
