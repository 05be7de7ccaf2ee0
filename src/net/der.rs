//! Just enough DER (X.690) to name a certificate in an error message: its
//! subject's and issuer's common name (or organization) and its subject
//! alternative names. A refused certificate is described, not trusted, so
//! anything unexpected reads as "no name". No IO here.

/// What a message says of a certificate.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Names {
    pub subject: Option<String>,
    pub issuer: Option<String>,
    /// DNS names and IP addresses of the subject alternative names.
    pub alt: Vec<String>,
}

impl Names {
    /// `CN=x (names a, b; issued by CN=y)`, as much as is known. The names
    /// are what any host sent: shown as `text::shown` shows network text.
    pub(crate) fn describe(&self) -> String {
        let name = |text: &str| super::text::shown(text, MAX_NAME);
        let mut text = self
            .subject
            .as_deref()
            .map_or_else(|| "without a subject name".to_string(), name);
        let mut more = Vec::new();
        if !self.alt.is_empty() {
            let alt: Vec<String> = self.alt.iter().map(|a| name(a)).collect();
            more.push(format!("names {}", alt.join(", ")));
        }
        if let Some(issuer) = &self.issuer {
            more.push(format!("issued by {}", name(issuer)));
        }
        if !more.is_empty() {
            text.push_str(&format!(" ({})", more.join("; ")));
        }
        text
    }
}

const SEQUENCE: u8 = 0x30;
const OID_CN: &[u8] = &[0x55, 0x04, 0x03];
const OID_O: &[u8] = &[0x55, 0x04, 0x0a];
const OID_SAN: &[u8] = &[0x55, 0x1d, 0x11];
/// At most so many characters of each name are shown.
const MAX_NAME: usize = 100;
/// At most so many alternative names are listed.
const MAX_ALT: usize = 8;

/// The names of the X.509 certificate `der`, as far as they can be read.
pub(crate) fn names(der: &[u8]) -> Names {
    read_names(der).unwrap_or_default()
}

fn read_names(der: &[u8]) -> Option<Names> {
    let (cert, _) = tlv(der, SEQUENCE)?;
    let (tbs, _) = tlv(cert, SEQUENCE)?;
    let mut rest = tbs;
    if rest.first() == Some(&0xa0) {
        rest = any(rest)?.1; // [0] version
    }
    rest = any(rest)?.1; // serialNumber
    rest = any(rest)?.1; // signature
    let (issuer, after) = tlv(rest, SEQUENCE)?;
    rest = any(after)?.1; // validity
    let (subject, after) = tlv(rest, SEQUENCE)?;
    rest = any(after)?.1; // subjectPublicKeyInfo
    let mut alt = Vec::new();
    while let Some((tag, value, after)) = any_tagged(rest) {
        if tag == 0xa3 {
            alt = alt_names(value).unwrap_or_default();
        }
        rest = after;
    }
    Some(Names {
        subject: name(subject),
        issuer: name(issuer),
        alt,
    })
}

/// `CN=...` of a Name, else `O=...`.
fn name(mut rdns: &[u8]) -> Option<String> {
    let mut org = None;
    while let Some((set, after)) = tlv(rdns, 0x31) {
        rdns = after;
        let mut attrs = set;
        while let Some((attr, after)) = tlv(attrs, SEQUENCE) {
            attrs = after;
            let (oid, value) = tlv(attr, 0x06)?;
            let (_, text, _) = any_tagged(value)?;
            let text = String::from_utf8_lossy(text).into_owned();
            if oid == OID_CN {
                return Some(format!("CN={text}"));
            }
            if oid == OID_O {
                org = Some(format!("O={text}"));
            }
        }
    }
    org
}

/// The DNS names and IP addresses of the subject alternative names
/// extension, within the extensions' `[3]`.
fn alt_names(extensions: &[u8]) -> Option<Vec<String>> {
    let (mut list, _) = tlv(extensions, SEQUENCE)?;
    while let Some((ext, after)) = tlv(list, SEQUENCE) {
        list = after;
        let (oid, mut rest) = tlv(ext, 0x06)?;
        if oid != OID_SAN {
            continue;
        }
        if rest.first() == Some(&0x01) {
            rest = any(rest)?.1; // critical
        }
        let (octets, _) = tlv(rest, 0x04)?;
        let (mut general, _) = tlv(octets, SEQUENCE)?;
        let mut names = Vec::new();
        while let Some((tag, value, after)) = any_tagged(general) {
            general = after;
            match (tag, value.len()) {
                (0x82, _) => names.push(String::from_utf8_lossy(value).into_owned()),
                (0x87, 4) => names.push(format!(
                    "{}.{}.{}.{}",
                    value[0], value[1], value[2], value[3]
                )),
                (0x87, 16) => {
                    let mut octets = [0u8; 16];
                    octets.copy_from_slice(value);
                    names.push(std::net::Ipv6Addr::from(octets).to_string());
                }
                _ => {}
            }
            if names.len() == MAX_ALT {
                break;
            }
        }
        return Some(names);
    }
    Some(Vec::new())
}

/// The value of the element at the start of `bytes` if its tag is `tag`,
/// and what follows it.
fn tlv(bytes: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (found, value, rest) = any_tagged(bytes)?;
    (found == tag).then_some((value, rest))
}

/// The element at the start of `bytes`, whatever its tag: its value and
/// what follows it.
fn any(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    any_tagged(bytes).map(|(_, value, rest)| (value, rest))
}

/// Tag, value and rest (single-byte tags; definite lengths of up to four
/// bytes, as DER has).
fn any_tagged(bytes: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = bytes.split_first()?;
    let (&first, mut rest) = rest.split_first()?;
    let len = if first < 0x80 {
        usize::from(first)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |l, &b| l << 8 | usize::from(b));
        rest = &rest[n..];
        len
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    #[test]
    fn names_a_host_sent_are_shown_escaped_and_short() {
        let names = Names {
            subject: Some("CN=evil\x1b]0;owned\x07\r\nInjected: line".to_string()),
            issuer: Some("CN=ca\x1b[2J".to_string()),
            alt: vec!["a\u{202e}b".to_string(), "x".repeat(300)],
        };
        let shown = names.describe();
        assert!(!shown.chars().any(|c| c.is_control()), "{shown:?}");
        assert!(
            shown.starts_with("CN=evil\\x1b]0;owned\\x07 Injected: line (names a\\u{202e}b, "),
            "{shown}"
        );
        assert!(shown.contains("issued by CN=ca\\x1b[2J"), "{shown}");
        assert!(shown.len() < 300, "{shown}");
    }

    use super::*;

    /// The test leaf certificate of `testdata/tls/` (PEM), decoded.
    fn leaf() -> Vec<u8> {
        let pem = include_str!("../../testdata/tls/leaf.pem");
        let b64: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
        decode_base64(&b64)
    }

    fn decode_base64(text: &str) -> Vec<u8> {
        let value = |c: u8| match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            _ => 63,
        };
        let bytes: Vec<u8> = text.bytes().filter(|&c| c != b'=').map(value).collect();
        bytes
            .chunks(4)
            .flat_map(|g| {
                let n = g
                    .iter()
                    .enumerate()
                    .fold(0u32, |n, (i, &v)| n | u32::from(v) << (18 - 6 * i));
                let take = g.len() - 1;
                (0..take).map(move |i| (n >> (16 - 8 * i)) as u8)
            })
            .collect()
    }

    #[test]
    fn the_test_leaf_is_named_by_its_subject_names_and_issuer() {
        let names = names(&leaf());
        assert_eq!(names.subject.as_deref(), Some("CN=localhost"));
        assert_eq!(names.issuer.as_deref(), Some("CN=mcp-workbench test CA"));
        assert_eq!(names.alt, ["localhost", "127.0.0.1", "::1"]);
        assert_eq!(
            names.describe(),
            "CN=localhost (names localhost, 127.0.0.1, ::1; issued by CN=mcp-workbench test CA)"
        );
    }

    #[test]
    fn garbage_has_no_names() {
        assert_eq!(names(b""), Names::default());
        assert_eq!(
            names(&[0x30, 0x84, 0xff, 0xff, 0xff, 0xff]),
            Names::default()
        );
        let mut cut = leaf();
        cut.truncate(cut.len() / 2);
        assert_eq!(names(&cut).subject, None);
    }
}
