//! HTTP/1.1 framing (RFC 9112) as pure functions over bytes: a request's
//! head, a response's head (status line and fields, with limits on line
//! length, field count and size), and its body's framing (`Content-Length`,
//! `chunked`, or until the connection closes), decoded incrementally so that
//! a blocking reader and the pump's non-blocking one share it. No IO here:
//! the fuzz target reaches every parser directly.

/// The longest line of a response head.
pub const MAX_LINE: usize = 8 * 1024;
/// The most header fields a response may have.
pub const MAX_HEADERS: usize = 100;
/// The largest response head, status line and fields together.
pub const MAX_HEAD: usize = 64 * 1024;
/// The longest chunk-size line (with its extensions) and trailer line.
const MAX_CHUNK_LINE: usize = 4 * 1024;
/// The largest trailer section of a chunked body.
const MAX_TRAILER: usize = 16 * 1024;

/// What the workbench says it is in its requests.
pub const USER_AGENT: &str = concat!("mcp-workbench/", env!("CARGO_PKG_VERSION"));

/// A request's head: the request line (`target` as given: origin-form, or
/// absolute-form through a proxy), `Host`, `User-Agent`, `headers` in order,
/// and `Content-Length` when there is a body. A header whose name is not a
/// token or whose value holds a line break or NUL is refused: the error
/// names the header, never its value (values may be secrets).
pub fn request_head(
    method: &str,
    target: &str,
    host: &str,
    headers: &[(&str, &str)],
    body_len: Option<usize>,
) -> Result<Vec<u8>, String> {
    let mut head = Vec::with_capacity(256);
    head.extend_from_slice(method.as_bytes());
    head.push(b' ');
    head.extend_from_slice(target.as_bytes());
    head.extend_from_slice(b" HTTP/1.1\r\nHost: ");
    head.extend_from_slice(host.as_bytes());
    head.extend_from_slice(b"\r\nUser-Agent: ");
    head.extend_from_slice(USER_AGENT.as_bytes());
    head.extend_from_slice(b"\r\n");
    for (name, value) in headers {
        if name.is_empty() || !name.bytes().all(is_token) {
            return Err(format!("'{name}' is not a valid header name"));
        }
        if value.bytes().any(|b| matches!(b, b'\r' | b'\n' | 0)) {
            return Err(format!(
                "the value of header '{name}' holds a line break or a NUL"
            ));
        }
        head.extend_from_slice(name.as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value.trim().as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    if let Some(len) = body_len {
        head.extend_from_slice(format!("Content-Length: {len}\r\n").as_bytes());
    }
    head.extend_from_slice(b"\r\n");
    Ok(head)
}

/// A response's status line and header fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// The minor version: `HTTP/1.0` or `HTTP/1.1`.
    pub minor: u8,
    pub status: u16,
    pub reason: String,
    /// In the order received; names as sent.
    pub headers: Vec<(String, String)>,
}

/// How a response's body is delimited (RFC 9112 §6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body (a `HEAD` request, 1xx, 204, 304).
    Empty,
    Length(u64),
    Chunked,
    /// Until the server closes the connection.
    Close,
}

impl Head {
    /// The first field named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Every value of the fields named `name`, split at commas.
    fn list<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .flat_map(|(_, v)| v.split(','))
            .map(str::trim)
            .filter(|v| !v.is_empty())
    }

    /// How the body that follows is delimited, for a request of `method`.
    pub fn framing(&self, method: &str) -> Result<Framing, String> {
        if method.eq_ignore_ascii_case("HEAD") || matches!(self.status, 100..=199 | 204 | 304) {
            return Ok(Framing::Empty);
        }
        if let Some(last) = self.list("transfer-encoding").last() {
            return Ok(if last.eq_ignore_ascii_case("chunked") {
                Framing::Chunked
            } else {
                Framing::Close
            });
        }
        let mut length: Option<u64> = None;
        for value in self.list("content-length") {
            let parsed = value
                .bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| value.parse::<u64>().ok())
                .flatten()
                .ok_or_else(|| format!("invalid Content-Length '{}'", clip(value)))?;
            if length.is_some_and(|l| l != parsed) {
                return Err("conflicting Content-Length values".to_string());
            }
            length = Some(parsed);
        }
        // A field without a value counts as none.
        Ok(length.map_or(Framing::Close, Framing::Length))
    }

    /// Whether the connection may carry another request after this
    /// response (given a body that ends by its framing).
    pub fn keep_alive(&self) -> bool {
        let mut close = false;
        let mut keep = false;
        for token in self.list("connection") {
            close |= token.eq_ignore_ascii_case("close");
            keep |= token.eq_ignore_ascii_case("keep-alive");
        }
        let chunked_and_length =
            self.header("transfer-encoding").is_some() && self.header("content-length").is_some();
        !close && !chunked_and_length && (self.minor >= 1 || keep)
    }
}

/// Parses a response head at the start of `buf`: `None` while it is
/// incomplete, else the head and how many bytes it took. Lines may end in
/// CRLF or a bare LF; an obsolete folded line is joined to the one before
/// (RFC 9112 §5.2).
pub fn parse_head(buf: &[u8]) -> Result<Option<(Head, usize)>, String> {
    let mut pos = 0;
    let mut head: Option<Head> = None;
    loop {
        let Some(nl) = buf[pos..].iter().position(|&b| b == b'\n') else {
            if buf.len() - pos > MAX_LINE {
                return Err(format!(
                    "a line of its head is longer than {MAX_LINE} bytes"
                ));
            }
            if buf.len() > MAX_HEAD {
                return Err(format!("its head is larger than {MAX_HEAD} bytes"));
            }
            return Ok(None);
        };
        let line = &buf[pos..pos + nl];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() > MAX_LINE {
            return Err(format!(
                "a line of its head is longer than {MAX_LINE} bytes"
            ));
        }
        pos += nl + 1;
        if pos > MAX_HEAD {
            return Err(format!("its head is larger than {MAX_HEAD} bytes"));
        }
        if line.contains(&b'\r') || line.contains(&0) {
            return Err("its head holds a stray CR or NUL".to_string());
        }
        let Some(head) = head.as_mut() else {
            // A server may send empty lines before the status line.
            if !line.is_empty() {
                head = Some(status_line(line)?);
            }
            continue;
        };
        if line.is_empty() {
            return Ok(Some((std::mem::replace(head, empty_head()), pos)));
        }
        if matches!(line[0], b' ' | b'\t') {
            let Some((_, value)) = head.headers.last_mut() else {
                return Err("its first header line is a continuation".to_string());
            };
            let more = String::from_utf8_lossy(line);
            value.push(' ');
            value.push_str(more.trim());
            continue;
        }
        if head.headers.len() == MAX_HEADERS {
            return Err(format!("it has more than {MAX_HEADERS} header fields"));
        }
        let colon = line
            .iter()
            .position(|&b| b == b':')
            .ok_or("a header line has no ':'")?;
        let name = &line[..colon];
        if name.is_empty() || !name.iter().copied().all(is_token) {
            return Err("a header field has an invalid name".to_string());
        }
        let value = String::from_utf8_lossy(&line[colon + 1..]);
        head.headers.push((
            String::from_utf8_lossy(name).into_owned(),
            value.trim_matches([' ', '\t']).to_string(),
        ));
    }
}

fn empty_head() -> Head {
    Head {
        minor: 1,
        status: 0,
        reason: String::new(),
        headers: Vec::new(),
    }
}

/// `HTTP/1.x NNN reason`.
fn status_line(line: &[u8]) -> Result<Head, String> {
    let bad = || format!("its status line is not HTTP/1.x: '{}'", clip_bytes(line));
    let rest = line.strip_prefix(b"HTTP/1.").ok_or_else(bad)?;
    let (&minor, rest) = rest.split_first().ok_or_else(bad)?;
    if !minor.is_ascii_digit() {
        return Err(bad());
    }
    let rest = rest.strip_prefix(b" ").ok_or_else(bad)?;
    if rest.len() < 3 || !rest[..3].iter().all(u8::is_ascii_digit) {
        return Err(bad());
    }
    let status = rest[..3]
        .iter()
        .fold(0u16, |n, d| n * 10 + u16::from(d - b'0'));
    if status < 100 {
        return Err(bad());
    }
    let reason = match &rest[3..] {
        [] => "",
        [b' ', reason @ ..] => std::str::from_utf8(reason).unwrap_or(""),
        _ => return Err(bad()),
    };
    Ok(Head {
        minor: minor - b'0',
        status,
        reason: reason.trim().to_string(),
        headers: Vec::new(),
    })
}

/// RFC 9110's `tchar`.
fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn clip(text: &str) -> String {
    super::text::shown(text, 40)
}

fn clip_bytes(bytes: &[u8]) -> String {
    super::text::shown_bytes(bytes, 40)
}

/// A body being decoded by its framing, as its bytes arrive.
#[derive(Debug)]
pub struct BodyDecoder {
    framing: Framing,
    /// `Length`: bytes still to come.
    left: u64,
    chunked: Chunked,
    done: bool,
}

impl BodyDecoder {
    pub fn new(framing: Framing) -> BodyDecoder {
        let left = match framing {
            Framing::Length(n) => n,
            _ => 0,
        };
        BodyDecoder {
            framing,
            left,
            chunked: Chunked::default(),
            done: matches!(framing, Framing::Empty | Framing::Length(0)),
        }
    }

    /// Decodes what it can of `input`, appending the body's bytes to `out`;
    /// how many bytes of `input` it took. Once the body is complete it takes
    /// no more (what follows belongs to the next response).
    pub fn decode(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<usize, String> {
        if self.done {
            return Ok(0);
        }
        match self.framing {
            Framing::Empty => Ok(0),
            Framing::Close => {
                out.extend_from_slice(input);
                Ok(input.len())
            }
            Framing::Length(_) => {
                let take = usize::try_from(self.left)
                    .unwrap_or(usize::MAX)
                    .min(input.len());
                out.extend_from_slice(&input[..take]);
                self.left -= take as u64;
                self.done = self.left == 0;
                Ok(take)
            }
            Framing::Chunked => {
                let used = self.chunked.decode(input, out)?;
                self.done = self.chunked.is_done();
                Ok(used)
            }
        }
    }

    /// Whether the whole body has been decoded.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The connection closed: the end of a body that runs until then, and
    /// an error for one that had more to come.
    pub fn at_eof(&mut self) -> Result<(), String> {
        if self.done || self.framing == Framing::Close {
            self.done = true;
            return Ok(());
        }
        Err("the connection ended before the whole body came".to_string())
    }
}

/// The `chunked` transfer coding (RFC 9112 §7.1), decoded incrementally.
#[derive(Debug, Default)]
pub struct Chunked {
    state: ChunkState,
    /// The line being read (a chunk size, a trailer field).
    line: Vec<u8>,
    trailer: usize,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum ChunkState {
    #[default]
    Size,
    /// Chunk data, so many bytes left.
    Data(u64),
    /// The CRLF after a chunk's data; whether its CR was seen.
    DataEnd(bool),
    Trailer,
    Done,
}

impl Chunked {
    /// Decodes what it can of `input`, appending the chunks' data to `out`;
    /// how many bytes it took (none past the end of the body).
    pub fn decode(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<usize, String> {
        let mut pos = 0;
        while pos < input.len() {
            match self.state {
                ChunkState::Done => break,
                ChunkState::Data(left) => {
                    let take = usize::try_from(left)
                        .unwrap_or(usize::MAX)
                        .min(input.len() - pos);
                    out.extend_from_slice(&input[pos..pos + take]);
                    pos += take;
                    let left = left - take as u64;
                    self.state = if left == 0 {
                        ChunkState::DataEnd(false)
                    } else {
                        ChunkState::Data(left)
                    };
                }
                ChunkState::DataEnd(cr) => {
                    let b = input[pos];
                    pos += 1;
                    self.state = match (cr, b) {
                        (false, b'\r') => ChunkState::DataEnd(true),
                        (_, b'\n') => ChunkState::Size,
                        _ => return Err("a chunk's data is not followed by CRLF".to_string()),
                    };
                }
                ChunkState::Size | ChunkState::Trailer => {
                    let Some(line) = self.take_line(input, &mut pos)? else {
                        break;
                    };
                    self.state = if self.state == ChunkState::Size {
                        match chunk_size(&line)? {
                            0 => ChunkState::Trailer,
                            n => ChunkState::Data(n),
                        }
                    } else if line.is_empty() {
                        ChunkState::Done
                    } else {
                        self.trailer += line.len();
                        if self.trailer > MAX_TRAILER {
                            return Err(format!(
                                "its chunked trailer is larger than {MAX_TRAILER} bytes"
                            ));
                        }
                        ChunkState::Trailer
                    };
                }
            }
        }
        Ok(pos)
    }

    /// Whether the last chunk and the trailer have been read.
    pub fn is_done(&self) -> bool {
        self.state == ChunkState::Done
    }

    /// Moves bytes of `input` from `pos` into the line being read; the whole
    /// line, without its CRLF (or LF), once its end came.
    fn take_line(&mut self, input: &[u8], pos: &mut usize) -> Result<Option<Vec<u8>>, String> {
        let rest = &input[*pos..];
        let (part, end) = match rest.iter().position(|&b| b == b'\n') {
            Some(nl) => (&rest[..nl], Some(nl + 1)),
            None => (rest, None),
        };
        if self.line.len() + part.len() > MAX_CHUNK_LINE {
            return Err(format!(
                "a chunk-size or trailer line is longer than {MAX_CHUNK_LINE} bytes"
            ));
        }
        self.line.extend_from_slice(part);
        *pos += end.unwrap_or(rest.len());
        if end.is_none() {
            return Ok(None);
        }
        let mut line = std::mem::take(&mut self.line);
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        Ok(Some(line))
    }
}

/// A chunk-size line's size: hex digits, then optional extensions.
fn chunk_size(line: &[u8]) -> Result<u64, String> {
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    let rest = &line[digits..];
    let rest_ok = rest.iter().all(|&b| b == b' ' || b == b'\t')
        || rest
            .iter()
            .position(|&b| b == b';')
            .is_some_and(|i| rest[..i].iter().all(|&b| b == b' ' || b == b'\t'));
    if digits == 0 || digits > 16 || !rest_ok {
        return Err(format!("invalid chunk size '{}'", clip_bytes(line)));
    }
    let hex = std::str::from_utf8(&line[..digits]).map_err(|e| e.to_string())?;
    u64::from_str_radix(hex, 16).map_err(|e| e.to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn head(text: &str) -> Head {
        parse_head(text.as_bytes()).unwrap().unwrap().0
    }

    #[test]
    fn a_request_head_has_its_line_host_and_length_and_refuses_line_breaks() {
        let h = request_head(
            "POST",
            "/mcp",
            "example.com:8080",
            &[("Accept", "application/json")],
            Some(7),
        )
        .unwrap();
        let text = String::from_utf8(h).unwrap();
        assert!(text.starts_with("POST /mcp HTTP/1.1\r\nHost: example.com:8080\r\n"));
        assert!(text.contains("\r\nAccept: application/json\r\n"));
        assert!(text.ends_with("Content-Length: 7\r\n\r\n"));
        let e = request_head("GET", "/", "h", &[("X-Key", "se\r\ncret")], None).unwrap_err();
        assert!(e.contains("X-Key") && !e.contains("se"), "{e}");
        assert!(request_head("GET", "/", "h", &[("Bad Name", "v")], None).is_err());
    }

    #[test]
    fn a_response_head_is_parsed_once_complete() {
        let text =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nmcp-session-id:  abc \r\n\r\n{}";
        let bytes = text.as_bytes();
        for cut in 0..bytes.len() - 2 {
            assert_eq!(parse_head(&bytes[..cut]).unwrap(), None, "at {cut}");
        }
        let (h, used) = parse_head(bytes).unwrap().unwrap();
        assert_eq!(used, bytes.len() - 2);
        assert_eq!((h.status, h.minor, h.reason.as_str()), (200, 1, "OK"));
        assert_eq!(h.header("MCP-Session-Id"), Some("abc"));
        assert_eq!(h.header("content-type"), Some("application/json"));
        let bare = head("HTTP/1.0 404\nA: 1\n continued\n\n");
        assert_eq!(
            (bare.status, bare.minor, bare.reason.as_str()),
            (404, 0, "")
        );
        assert_eq!(bare.header("a"), Some("1 continued"));
    }

    #[test]
    fn a_bad_or_oversized_head_is_refused() {
        for bad in [
            "HTTP/2 200 OK\r\n\r\n",
            "HTTP/1.1 20 OK\r\n\r\n",
            "HTTP/1.1 200OK\r\n\r\n",
            "SSH-2.0-OpenSSH\r\n\r\n",
            "HTTP/1.1 200 OK\r\nNo colon\r\n\r\n",
            "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n",
            "HTTP/1.1 200 OK\r\nA: x\ry\r\n\r\n",
        ] {
            assert!(parse_head(bad.as_bytes()).is_err(), "{bad:?}");
        }
        let long = format!("HTTP/1.1 200 OK\r\nA: {}", "x".repeat(MAX_LINE + 1));
        assert!(parse_head(long.as_bytes()).is_err());
        let many: String = (0..=MAX_HEADERS).map(|i| format!("H{i}: v\r\n")).collect();
        let many = format!("HTTP/1.1 200 OK\r\n{many}\r\n");
        assert!(parse_head(many.as_bytes()).is_err());
    }

    #[test]
    fn framing_follows_rfc_9112() {
        let f = |text: &str, method: &str| head(text).framing(method);
        assert_eq!(
            f("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", "GET"),
            Ok(Framing::Length(5))
        );
        assert_eq!(
            f("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", "HEAD"),
            Ok(Framing::Empty)
        );
        assert_eq!(
            f("HTTP/1.1 202 Accepted\r\n\r\n", "POST"),
            Ok(Framing::Close)
        );
        assert_eq!(f("HTTP/1.1 204 No\r\n\r\n", "POST"), Ok(Framing::Empty));
        assert_eq!(
            f(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 3\r\n\r\n",
                "GET"
            ),
            Ok(Framing::Chunked)
        );
        assert_eq!(
            f("HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\n\r\n", "GET"),
            Ok(Framing::Length(3))
        );
        assert!(f(
            "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
            "GET"
        )
        .is_err());
        assert!(f("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "GET").is_err());
        assert!(head("HTTP/1.1 200 OK\r\n\r\n").keep_alive());
        assert!(!head("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n").keep_alive());
        assert!(!head("HTTP/1.0 200 OK\r\n\r\n").keep_alive());
        assert!(head("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\n\r\n").keep_alive());
    }

    #[test]
    fn a_chunked_body_decodes_in_any_pieces() {
        let wire = b"4;ext=1\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nTrailer: x\r\n\r\nNEXT";
        let body = wire.len() - 4;
        for step in 1..wire.len() {
            let mut d = BodyDecoder::new(Framing::Chunked);
            let mut out = Vec::new();
            let mut pos = 0;
            while pos < wire.len() && !d.is_done() {
                let end = (pos + step).min(wire.len());
                pos += d.decode(&wire[pos..end], &mut out).unwrap();
            }
            assert!(d.is_done(), "step {step}");
            assert_eq!(pos, body, "step {step}");
            assert_eq!(out, b"Wikipedia in\r\n\r\nchunks.", "step {step}");
        }
    }

    #[test]
    fn a_bad_chunked_body_is_refused() {
        for bad in [
            &b"x\r\n"[..],
            b"4\r\nWikiXX",
            b"11111111111111111\r\n",
            b"4 x\r\n",
        ] {
            let mut c = Chunked::default();
            assert!(c.decode(bad, &mut Vec::new()).is_err(), "{bad:?}");
        }
        let mut c = Chunked::default();
        let long = vec![b'1'; MAX_CHUNK_LINE + 10];
        assert!(c.decode(&long, &mut Vec::new()).is_err());
    }

    #[test]
    fn a_length_body_stops_at_its_length_and_eof_ends_only_a_close_body() {
        let mut d = BodyDecoder::new(Framing::Length(3));
        let mut out = Vec::new();
        assert_eq!(d.decode(b"abcdef", &mut out), Ok(3));
        assert!(d.is_done());
        assert_eq!(out, b"abc");
        let mut d = BodyDecoder::new(Framing::Length(3));
        assert!(d.at_eof().is_err());
        let mut d = BodyDecoder::new(Framing::Close);
        assert_eq!(d.decode(b"abc", &mut out), Ok(3));
        assert!(d.at_eof().is_ok() && d.is_done());
    }
}
