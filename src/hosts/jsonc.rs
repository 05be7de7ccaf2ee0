//! JSON with comments, as VS Code, Cursor and Gemini CLI let their users
//! write it: `//` and `/* */` comments and trailing commas are blanked out
//! (spaces, newlines kept, so a parse error's line and column still point
//! into the file as written) before the JSON is read. No IO.

/// `text` without comments and trailing commas, and whether it had any
/// (`install` will not rewrite such a file: the comments would be lost).
pub(crate) fn strip(text: &str) -> (String, bool) {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut changed = false;
    let mut i = 0;
    // The index in `out` of the last comma outside strings, until a
    // significant character follows it.
    let mut comma: Option<usize> = None;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                comma = None;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                changed = true;
                while i < bytes.len() && bytes[i] != b'\n' {
                    blank(&mut out, i);
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                changed = true;
                let end = text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |e| i + 2 + e + 2);
                for j in i..end {
                    blank(&mut out, j);
                }
                i = end;
            }
            b',' => {
                comma = Some(i);
                i += 1;
            }
            b'}' | b']' => {
                if let Some(at) = comma.take() {
                    out[at] = b' ';
                    changed = true;
                }
                i += 1;
            }
            b' ' | b'\t' | b'\r' | b'\n' => i += 1,
            _ => {
                comma = None;
                i += 1;
            }
        }
    }
    // Only ASCII bytes were replaced by spaces, outside strings: still UTF-8.
    (String::from_utf8_lossy(&out).into_owned(), changed)
}

/// Blanks a comment's byte, keeping line ends and multi-byte characters'
/// continuation bytes out of the way (each byte becomes a space).
fn blank(out: &mut [u8], i: usize) {
    if out[i] != b'\n' && out[i] != b'\r' {
        out[i] = b' ';
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_trailing_commas_go() {
        let text = "{\n  // a comment é\n  \"a\": \"x // not a comment\", /* block\n */ \"b\": [1, 2,],\n}";
        let (json, changed) = strip(text);
        assert!(changed);
        assert_eq!(json.lines().count(), text.lines().count());
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"a": "x // not a comment", "b": [1, 2]})
        );
        let plain = "{\"a\": \"\\\"/*\"}";
        assert_eq!(strip(plain), (plain.to_string(), false));
    }
}
