//! Text that came from the network, made fit to show: a certificate's
//! names, a status line's reason, a response body, an authorization
//! server's `error_description`. Anything a host on the far side sends may
//! hold escape sequences that move a terminal's cursor, ring its bell or
//! retitle its window, or line breaks that forge a log line; what a person,
//! a log or the model reads of it goes through `shown` first. No IO here.

/// `text` on one line, at most `limit` characters of it: runs of white
/// space become one space, every other control character (C0, DEL, C1) and
/// every bidirectional formatting character is written as its escape
/// (`\x1b`, `\u{202e}`), and a longer text ends with ` ...`.
pub(crate) fn shown(text: &str, limit: usize) -> String {
    let mut out = String::with_capacity(text.len().min(limit + 4));
    let mut count = 0;
    let mut space = false;
    let mut cut = false;
    for c in text.trim().chars() {
        if count >= limit {
            cut = true;
            break;
        }
        if matches!(c, ' ' | '\t' | '\r' | '\n') {
            space = true;
            continue;
        }
        if space {
            out.push(' ');
            count += 1;
            space = false;
        }
        match c {
            c if u32::from(c) < 0x80 && c.is_control() => {
                out.push_str(&format!("\\x{:02x}", u32::from(c)));
            }
            c if c.is_control() || bidi(c) => {
                out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
            }
            c => out.push(c),
        }
        count += 1;
    }
    if cut {
        out.push_str(" ...");
    }
    out
}

/// `bytes` as `shown` shows text, invalid UTF-8 as U+FFFD.
#[cfg(feature = "remote")]
pub(crate) fn shown_bytes(bytes: &[u8], limit: usize) -> String {
    // No more bytes than the characters shown can take (4 each), and one
    // more so that a longer text is still marked as cut.
    let end = bytes.len().min(limit.saturating_mul(4).saturating_add(1));
    shown(&String::from_utf8_lossy(&bytes[..end]), limit)
}

/// The characters that reorder what follows them on screen (Trojan Source).
fn bidi(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_white_space_is_one_line() {
        assert_eq!(
            shown("evil\x1b]0;pwned\x07\r\nX-Forged: 1\x7f", 100),
            "evil\\x1b]0;pwned\\x07 X-Forged: 1\\x7f"
        );
        assert_eq!(
            shown("  <h1>Bad\r\n  gateway</h1>\n", 100),
            "<h1>Bad gateway</h1>"
        );
        assert_eq!(shown("a\u{202e}b\u{85}c", 100), "a\\u{202e}b\\u{85}c");
        assert_eq!(shown("é".repeat(150).as_str(), 100).chars().count(), 104);
        assert_eq!(shown("short", 5), "short");
        assert_eq!(shown("longer", 5), "longe ...");
    }

    #[test]
    #[cfg(feature = "remote")]
    fn bytes_are_shown_as_text() {
        assert_eq!(shown_bytes(b"\xff\x1bok", 10), "\u{fffd}\\x1bok");
        assert_eq!(shown_bytes(&[b'x'; 300], 200).len(), 204);
    }
}
