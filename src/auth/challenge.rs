//! The `WWW-Authenticate` header of a 401 (RFC 9110 §11.6.1): one or more
//! challenges, each a scheme and either a token68 or comma-separated
//! `name=value` parameters whose values are tokens or quoted strings. MCP
//! reads the `Bearer` challenge (RFC 6750 §3): its `resource_metadata`
//! (RFC 9728 §5.1), `scope` and `error`.
//!
//! Pure and total: any bytes give some answer, never a panic (the fuzz
//! target calls `parse`). No IO.

/// One challenge of the header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    /// As written (schemes compare without case).
    pub scheme: String,
    /// Parameter names lower-cased, values unquoted, in order.
    pub params: Vec<(String, String)>,
    pub token68: Option<String>,
}

impl Challenge {
    /// The first parameter `name` (lower-case).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What a `Bearer` challenge tells a client about signing in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bearer {
    /// The protected-resource metadata's URL (RFC 9728 §5.1).
    pub resource_metadata: Option<String>,
    /// The scopes the resource asks for, space-separated.
    pub scope: Option<String>,
    /// `invalid_token`, `insufficient_scope`, ...
    pub error: Option<String>,
}

/// The first `Bearer` challenge of a `WWW-Authenticate` value, if any.
pub fn bearer(header: &[u8]) -> Option<Bearer> {
    let challenge = parse(header)
        .into_iter()
        .find(|c| c.scheme.eq_ignore_ascii_case("bearer"))?;
    let get = |name: &str| challenge.param(name).map(str::to_string);
    Some(Bearer {
        resource_metadata: get("resource_metadata"),
        scope: get("scope"),
        error: get("error"),
    })
}

/// Every challenge of a `WWW-Authenticate` value, in order.
pub fn parse(header: &[u8]) -> Vec<Challenge> {
    let text = String::from_utf8_lossy(header);
    let mut scan = Scanner {
        chars: text.chars().collect(),
        pos: 0,
    };
    let mut challenges: Vec<Challenge> = Vec::new();
    loop {
        scan.skip(|c| c == ',' || is_space(c));
        if scan.done() {
            return challenges;
        }
        let name = scan.token();
        if name.is_empty() {
            // Not a token: skip the word.
            scan.pos += 1;
            scan.skip(|c| c != ',' && !is_space(c));
            continue;
        }
        let spaced = scan.skip(is_space);
        match (scan.peek(), challenges.last_mut()) {
            // `name=value`: a parameter of the challenge before.
            (Some('='), Some(current)) => {
                scan.pos += 1;
                scan.skip(is_space);
                let value = scan.value();
                current.params.push((name.to_ascii_lowercase(), value));
            }
            (Some('='), None) => {
                scan.skip(|c| c != ',');
            }
            _ => {
                let mut challenge = Challenge {
                    scheme: name,
                    params: Vec::new(),
                    token68: None,
                };
                if spaced && !matches!(scan.peek(), None | Some(',')) && scan.at_token68() {
                    let start = scan.pos;
                    scan.skip(|c| c != ',' && !is_space(c));
                    challenge.token68 = Some(scan.chars[start..scan.pos].iter().collect());
                }
                challenges.push(challenge);
            }
        }
    }
}

struct Scanner {
    chars: Vec<char>,
    pos: usize,
}

impl Scanner {
    fn done(&self) -> bool {
        self.pos >= self.chars.len()
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    /// Skips what `f` accepts; whether anything was skipped.
    fn skip(&mut self, f: impl Fn(char) -> bool) -> bool {
        let start = self.pos;
        while self.peek().is_some_and(&f) {
            self.pos += 1;
        }
        self.pos > start
    }

    fn token(&mut self) -> String {
        let start = self.pos;
        self.skip(is_tchar);
        self.chars[start..self.pos].iter().collect()
    }

    /// A quoted string (unescaped) or a token.
    fn value(&mut self) -> String {
        if self.peek() != Some('"') {
            return self.token();
        }
        self.pos += 1;
        let mut out = String::new();
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                '"' => break,
                '\\' => {
                    if let Some(next) = self.peek() {
                        out.push(next);
                        self.pos += 1;
                    }
                }
                c => out.push(c),
            }
        }
        out
    }

    /// Whether what follows is a token68 rather than the first `name=value`:
    /// token68 characters with `=` only as padding at the end, and no `=`
    /// after it.
    fn at_token68(&self) -> bool {
        let rest = &self.chars[self.pos..];
        let end = rest
            .iter()
            .position(|&c| c == ',' || is_space(c))
            .unwrap_or(rest.len());
        let word = &rest[..end];
        let body = word.iter().take_while(|&&c| c != '=').count();
        if body == 0
            || !word[..body]
                .iter()
                .all(|&c| c.is_ascii_alphanumeric() || "-._~+/".contains(c))
        {
            return false;
        }
        if body < word.len() {
            return word[body..].iter().all(|&c| c == '=');
        }
        rest[end..].iter().find(|&&c| !is_space(c)) != Some(&'=')
    }
}

fn is_space(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// RFC 9110 §5.6.2's `tchar`.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bearer_challenge_with_quoted_and_bare_values() {
        let found = bearer(
            br#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="files:read files:write", error=invalid_token"#,
        )
        .unwrap();
        assert_eq!(
            found.resource_metadata.as_deref(),
            Some("https://mcp.example.com/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(found.scope.as_deref(), Some("files:read files:write"));
        assert_eq!(found.error.as_deref(), Some("invalid_token"));
    }

    #[test]
    fn several_challenges_and_the_bearer_one_among_them() {
        let all = parse(
            br#"Basic realm="a, b", Newauth YWxhZGRpbjpvcGVuc2VzYW1l==, bearer error="x\"y""#,
        );
        assert_eq!(all.len(), 3);
        assert_eq!(all[0].param("realm"), Some("a, b"));
        assert_eq!(
            all[1].token68.as_deref(),
            Some("YWxhZGRpbjpvcGVuc2VzYW1l==")
        );
        assert_eq!(all[2].param("error"), Some("x\"y"));
        assert_eq!(bearer(b"Basic realm=x, Bearer").unwrap(), Bearer::default());
        assert!(bearer(b"Basic realm=x").is_none());
        let spaced = parse(b"Bearer  realm = \"r\" ,scope=a");
        assert_eq!(spaced[0].param("realm"), Some("r"));
        assert_eq!(spaced[0].param("scope"), Some("a"));
    }

    #[test]
    fn garbage_gives_an_answer_without_panicking() {
        for bad in [
            &b""[..],
            b",,,",
            b"=",
            b"Bearer \"unterminated",
            b"Bearer x=\"\\",
            b"\xff\xfe Bearer a=b",
            b"Bearer ===",
            b"Bearer a",
        ] {
            let _ = parse(bad);
            let _ = bearer(bad);
        }
        assert_eq!(
            bearer(b"\xff Bearer error=e").and_then(|b| b.error),
            Some("e".to_string())
        );
    }
}
