//! Secret-looking values of a workbench config, masked for printing (the
//! dry run of `import` shows the config it would write, never a token).
//! Masked: every `env` and `headers` value that is more than `${VAR}`
//! references (with at most a short word such as `Bearer` before them); any
//! string under a key that names a token, secret, key, password or auth;
//! an argument after such a flag (`--api-key X`, `--token=X`) or that looks
//! like a token itself; a URL's password and query values. The rest is
//! shown as it is. No IO.

use crate::config::ordered_json::Node;

/// What a masked value is shown as.
pub(crate) const MASK: &str = "<masked>";

/// `config` (a workbench config) with its secret-looking values masked.
pub(crate) fn config(config: &Node) -> Node {
    walk(config, None)
}

fn walk(node: &Node, key: Option<&str>) -> Node {
    match node {
        Node::Object(entries) => Node::Object(
            entries
                .iter()
                .map(|(k, v)| {
                    let value = match (k.as_str(), v) {
                        ("env" | "headers", Node::Object(vars)) => Node::Object(
                            vars.iter()
                                .map(|(name, value)| (name.clone(), template_value(value)))
                                .collect(),
                        ),
                        ("args", Node::Array(args)) => Node::Array(mask_args(args)),
                        ("url" | "httpUrl" | "serverUrl", Node::String(url)) => {
                            Node::String(mask_url(url))
                        }
                        _ => walk(v, Some(k)),
                    };
                    (k.clone(), value)
                })
                .collect(),
        ),
        Node::Array(items) => Node::Array(items.iter().map(|i| walk(i, key)).collect()),
        Node::String(_) if key.is_some_and(secret_key) => template_value(node),
        other => other.clone(),
    }
}

/// Whether a key or a flag names a secret.
pub(crate) fn secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    [
        "token",
        "secret",
        "key",
        "password",
        "passwd",
        "auth",
        "credential",
        "cookie",
        "session",
    ]
    .iter()
    .any(|word| key.contains(word))
}

/// A value shown only when it is `${VAR}` references, with at most a short
/// word before them (`Bearer ${TOKEN}`).
fn template_value(node: &Node) -> Node {
    match node {
        Node::String(text) if only_references(text) => node.clone(),
        Node::String(_) | Node::Number(_) => Node::String(MASK.to_string()),
        other => other.clone(),
    }
}

fn only_references(text: &str) -> bool {
    let mut literal = String::new();
    let mut rest = text;
    let mut references = 0;
    while let Some(at) = rest.find("${") {
        literal.push_str(&rest[..at]);
        match rest[at..].find('}') {
            Some(end) => {
                references += 1;
                rest = &rest[at + end + 1..];
            }
            None => return false,
        }
    }
    literal.push_str(rest);
    references > 0
        && literal.len() <= 12
        && literal
            .chars()
            .all(|c| c.is_ascii_alphabetic() || c == ' ' || c == ':')
}

fn mask_args(args: &[Node]) -> Vec<Node> {
    let mut out = Vec::with_capacity(args.len());
    let mut after_secret_flag = false;
    for arg in args {
        let Node::String(text) = arg else {
            out.push(arg.clone());
            after_secret_flag = false;
            continue;
        };
        let masked = if after_secret_flag && !text.starts_with('-') {
            template_value(arg)
        } else if text.contains("://") {
            Node::String(mask_url(text))
        } else if let Some((flag, value)) = text.split_once('=') {
            if flag.starts_with('-') && secret_key(flag) || looks_like_token(value) {
                match template_value(&Node::String(value.to_string())) {
                    Node::String(v) => Node::String(format!("{flag}={v}")),
                    other => other,
                }
            } else {
                arg.clone()
            }
        } else if looks_like_token(text) {
            template_value(arg)
        } else {
            arg.clone()
        };
        after_secret_flag = text.starts_with('-') && !text.contains('=') && secret_key(text);
        out.push(masked);
    }
    out
}

/// What API keys look like (`net::url::looks_like_key`).
fn looks_like_token(text: &str) -> bool {
    crate::net::url::looks_like_key(text)
}

/// A URL with its password, its query's values, and its path segments and
/// bare query words that look like keys masked (`/api/mcp/sk-.../mcp`, the
/// Zapier and Composio style).
fn mask_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let (authority, path) = match rest.find(['/', '?', '#']) {
        Some(at) => rest.split_at(at),
        None => (rest, ""),
    };
    let authority = match authority.rsplit_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((name, _)) => format!("{name}:{MASK}@{host}"),
            None => format!("{MASK}@{host}"),
        },
        None => authority.to_string(),
    };
    let (path, rest) = match path.find(['?', '#']) {
        Some(at) => path.split_at(at),
        None => (path, ""),
    };
    let path: Vec<&str> = path
        .split('/')
        .map(|segment| match looks_like_token(segment) {
            true => MASK,
            false => segment,
        })
        .collect();
    let path = format!("{}{rest}", path.join("/"));
    let path = match path.split_once('?') {
        Some((before, query)) => {
            let (query, fragment) = query
                .split_once('#')
                .map_or((query, None), |(q, f)| (q, Some(f)));
            let masked: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((name, value)) if !only_references(value) => format!("{name}={MASK}"),
                    None if looks_like_token(pair) => MASK.to_string(),
                    _ => pair.to_string(),
                })
                .collect();
            let fragment = fragment.map(|f| format!("#{f}")).unwrap_or_default();
            format!("{before}?{}{fragment}", masked.join("&"))
        }
        None => path.to_string(),
    };
    let scheme = if scheme.is_empty() {
        String::new()
    } else {
        format!("{scheme}://")
    };
    format!("{scheme}{authority}{path}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(json: &str) -> String {
        let node: Node = serde_json::from_str(json).unwrap();
        serde_json::to_string(&config(&node)).unwrap()
    }

    #[test]
    fn secrets_are_masked_and_references_shown() {
        assert_eq!(
            masked(
                r#"{"env":{"A":"${A}","B":"plain","C":"sk1${A}","E":"x${A}","D":3},"headers":{"Authorization":"Bearer ${T}","X":"Bearer abc"}}"#
            ),
            r#"{"env":{"A":"${A}","B":"<masked>","C":"<masked>","E":"x${A}","D":"<masked>"},"headers":{"Authorization":"Bearer ${T}","X":"<masked>"}}"#
        );
        assert_eq!(
            masked(
                r#"{"args":["-y","@scope/pkg","--api-key","k1","--token=t1","--x","keep","ghp_1234567890abcdefghij","--secret=${S}","http://u:p@h/x?k=v&r=${R}"]}"#
            ),
            r#"{"args":["-y","@scope/pkg","--api-key","<masked>","--token=<masked>","--x","keep","<masked>","--secret=${S}","http://u:<masked>@h/x?k=<masked>&r=${R}"]}"#
        );
        assert_eq!(
            masked(
                r#"{"oauth":{"clientId":"id","clientSecret":"s3"},"apiKey":"k","description":"d","n":{"password":["p"]}}"#
            ),
            r#"{"oauth":{"clientId":"id","clientSecret":"<masked>"},"apiKey":"<masked>","description":"d","n":{"password":["<masked>"]}}"#
        );
        assert_eq!(
            masked(r#"{"url":"https://mcp.example.com/mcp?apiKey=abc#frag"}"#),
            r#"{"url":"https://mcp.example.com/mcp?apiKey=<masked>#frag"}"#
        );
        // A key in the path, or a bare query word, as Zapier and Composio
        // write them; package-like and short segments stay.
        assert_eq!(
            masked(
                r#"{"url":"https://mcp.zapier.example/api/mcp/sk4eC39aZZ00yy11xx22ww/mcp?pk9ZyQQ88ww77ee66rr55&v=${V}","args":["https://h.example/s/NzE3ODYxMjM0NTY3ODkwMTIz==/sse"]}"#
            ),
            r#"{"url":"https://mcp.zapier.example/api/mcp/<masked>/mcp?<masked>&v=${V}","args":["https://h.example/s/<masked>/sse"]}"#
        );
    }
}
