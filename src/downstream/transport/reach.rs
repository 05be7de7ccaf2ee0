//! How to reach a remote server (`Remote`), as the config gave it with its
//! references expanded: the url, the headers, the OAuth client. Plain data
//! carried in the `Spec` in every build; only the remote transports and the
//! sign-in (feature `remote`) parse the url or use the client.

/// How to reach a remote server, with references expanded
/// (docs/reference.md §11). Its `Debug` shows no expanded value.
#[derive(Clone)]
pub(crate) struct Remote {
    /// The URL, expanded: may hold a secret, so never shown.
    pub url: String,
    /// The URL as written in the config (unexpanded): what messages show.
    pub url_display: String,
    /// The values the url's `${VAR}` references expanded to, with the
    /// references: a `Url` made from `url` shows them as written (only the
    /// remote transports and the sign-in make one).
    #[cfg_attr(not(feature = "remote"), allow(dead_code))]
    pub hidden: Vec<(String, String)>,
    pub kind: crate::config::RemoteKind,
    /// Header names and expanded values (the values are secrets).
    pub headers: Vec<(String, String)>,
    /// The configured OAuth client (`oauth`), expanded.
    pub oauth: crate::auth::Client,
}

impl Remote {
    /// The URL, parsed: every message made from it, or from a URL derived
    /// from it, shows the url's references as written. The error names the
    /// url as written (a parser's reason may quote an expanded value).
    #[cfg(feature = "remote")]
    pub(crate) fn parsed_url(&self) -> Result<crate::net::Url, String> {
        crate::net::Url::parse(&self.url)
            .map(|url| url.hiding(self.hidden.iter().cloned()))
            .map_err(|e| match self.hidden.is_empty() {
                true => format!("its url '{}' cannot be used: {e}", self.url_display),
                false => format!(
                    "its url '{}' does not expand to a usable http:// or https:// URL",
                    self.url_display
                ),
            })
    }

    /// Everything that tells two reaches apart (the transport, the expanded
    /// url, the headers and the OAuth client): what a copy key, the era's
    /// definition and the catalog key hash. Secrets: hash it, never show it.
    pub(crate) fn identity(&self) -> RemoteIdentity<'_> {
        let client = &self.oauth;
        (
            self.kind.name(),
            &self.url,
            &self.headers,
            (
                client.client_id.as_deref(),
                client.client_secret.as_deref(),
                &client.scopes,
                client.callback_port,
            ),
        )
    }
}

/// `Remote::identity`: hashable and ordered.
pub(crate) type RemoteIdentity<'a> = (
    &'static str,
    &'a String,
    &'a Vec<(String, String)>,
    (
        Option<&'a str>,
        Option<&'a str>,
        &'a Vec<String>,
        Option<u16>,
    ),
);

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("Remote")
            .field("url", &self.url_display)
            .field("kind", &self.kind)
            .field("headers", &names)
            .field("client_id", &self.oauth.client_id)
            .finish_non_exhaustive()
    }
}
