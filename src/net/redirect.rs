//! Where a redirect leads (RFC 9110 §15.4), for the transports and `fetch`
//! alike: only within the same origin, so that credentials never follow a
//! redirect to another server. No IO here.

use super::Url;

/// The most redirects one request follows.
pub(crate) const MAX_REDIRECTS: usize = 5;

/// The method and URL a response of `status` with `location` sends a
/// request of `method` to `from` on: `Ok(None)` when it is no redirect, an
/// error when it cannot be followed (no `Location`, another origin).
pub(crate) fn next(
    status: u16,
    location: Option<&str>,
    method: &str,
    from: &Url,
) -> Result<Option<(String, Url)>, String> {
    if !matches!(status, 301 | 302 | 303 | 307 | 308) {
        return Ok(None);
    }
    let location = location
        .filter(|l| !l.trim().is_empty())
        .ok_or_else(|| format!("it answered {status} (a redirect) without a Location"))?;
    let to = from
        .join(location)
        .map_err(|e| format!("it answered {status} with an unusable Location: {e}"))?;
    if to.origin() != from.origin() {
        return Err(format!(
            "it redirected to another origin ({}), which the workbench does not follow",
            to.shown_origin()
        ));
    }
    let method = match status {
        303 if method != "HEAD" => "GET",
        301 | 302 if method == "POST" => "GET",
        _ => method,
    };
    Ok(Some((method.to_string(), to)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn same_origin_redirects_are_followed_and_others_refused() {
        let from = Url::parse("https://a.example/mcp").unwrap();
        let (method, to) = next(307, Some("/v2/mcp"), "POST", &from).unwrap().unwrap();
        assert_eq!(
            (method.as_str(), to.to_string().as_str()),
            ("POST", "https://a.example/v2/mcp")
        );
        let (method, _) = next(303, Some("/x"), "POST", &from).unwrap().unwrap();
        assert_eq!(method, "GET");
        let (method, _) = next(302, Some("/x"), "POST", &from).unwrap().unwrap();
        assert_eq!(method, "GET");
        assert_eq!(next(200, None, "GET", &from).unwrap(), None);
        let e = next(308, Some("https://b.example/mcp"), "POST", &from).unwrap_err();
        assert!(e.contains("https://b.example"), "{e}");
        assert!(next(307, Some("http://a.example/mcp"), "POST", &from).is_err());
        assert!(next(307, Some("https://a.example:444/"), "POST", &from).is_err());
        assert!(next(301, None, "GET", &from).is_err());
    }
}
