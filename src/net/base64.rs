//! Base64 (RFC 4648), encoding only, by hand: the standard alphabet with
//! padding (§4) for HTTP Basic authentication (a proxy's, a client's) and
//! the modern era's encoded header values; the URL-safe alphabet without
//! padding (§5) for PKCE's challenge and verifier and the sign-in's `state`.
//! No IO.

const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// `base64url` without `=` padding.
pub(crate) fn url_safe(bytes: &[u8]) -> String {
    encode(bytes, URL_SAFE, false)
}

/// Base64 with `=` padding.
pub(crate) fn standard(bytes: &[u8]) -> String {
    encode(bytes, STANDARD, true)
}

fn encode(bytes: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        // One input byte gives two characters, two give three, three give four.
        let chars = chunk.len() + 1;
        for i in 0..4 {
            if i < chars {
                out.push(alphabet[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else if pad {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_4648_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in cases {
            assert_eq!(standard(plain.as_bytes()), encoded);
            assert_eq!(url_safe(plain.as_bytes()), encoded.trim_end_matches('='));
        }
        assert_eq!(standard(&[0xfb, 0xff]), "+/8=");
        assert_eq!(url_safe(&[0xfb, 0xff]), "-_8");
    }
}
