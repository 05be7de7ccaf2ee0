//! Where an object's members sit in a host's JSON text (JSONC too: `//` and
//! `/* */` comments and trailing commas are stepped over), so `install` and
//! its undo can change a few entries and leave every other byte as it was
//! (`json_splice`). Reads one object at a time: its braces, and for each
//! member the key's start and end, the value's span and the comma after it;
//! values are skipped, not read (a nested object is read again from its
//! value's start when it is needed). It finds places in text that has
//! already parsed; it does not validate. No IO.

/// One object of the text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Object {
    /// The byte index of `{`.
    pub open: usize,
    /// The byte index of `}`.
    pub close: usize,
    pub members: Vec<Member>,
}

/// One `"key": value` of an object.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Member {
    /// The key, its escapes decoded.
    pub name: String,
    /// The byte index of the key's opening quote.
    pub start: usize,
    /// Just past the key's closing quote.
    pub key_end: usize,
    pub value_start: usize,
    /// Just past the value.
    pub value_end: usize,
    /// The byte index of the comma after the value, if one follows.
    pub comma: Option<usize>,
}

impl Object {
    pub(crate) fn member(&self, name: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.name == name)
    }
}

/// Nesting deeper than this is refused (serde_json's own limit is 128).
const DEEPEST: usize = 256;

/// The object whose members' names are `path` below the top-level object
/// of `text`; `None` when a name is missing or names something else than an
/// object.
pub(crate) fn object_at(text: &str, path: &[&str]) -> Result<Option<Object>, String> {
    let mut at = skip_blank(text.as_bytes(), 0);
    let mut object = object_from(text, at)?;
    for name in path {
        match object.member(name) {
            Some(m) if text.as_bytes().get(m.value_start) == Some(&b'{') => at = m.value_start,
            _ => return Ok(None),
        }
        object = object_from(text, at)?;
    }
    Ok(Some(object))
}

/// The object whose `{` is at byte `at`.
pub(crate) fn object_from(text: &str, at: usize) -> Result<Object, String> {
    let bytes = text.as_bytes();
    if bytes.get(at) != Some(&b'{') {
        return Err(format!("expected an object at byte {at}"));
    }
    let mut members = Vec::new();
    let mut i = skip_blank(bytes, at + 1);
    loop {
        match bytes.get(i) {
            Some(b'}') => {
                return Ok(Object {
                    open: at,
                    close: i,
                    members,
                })
            }
            Some(b'"') => {}
            _ => return Err(format!("expected a key or '}}' at byte {i}")),
        }
        let start = i;
        let key_end = skip_string(bytes, i)?;
        let name: String = serde_json::from_str(&text[start..key_end])
            .map_err(|e| format!("a key at byte {start}: {e}"))?;
        i = skip_blank(bytes, key_end);
        if bytes.get(i) != Some(&b':') {
            return Err(format!("expected ':' at byte {i}"));
        }
        let value_start = skip_blank(bytes, i + 1);
        let value_end = skip_value(bytes, value_start, 0)?;
        i = skip_blank(bytes, value_end);
        let comma = (bytes.get(i) == Some(&b',')).then_some(i);
        if comma.is_some() {
            i = skip_blank(bytes, i + 1);
        }
        members.push(Member {
            name,
            start,
            key_end,
            value_start,
            value_end,
            comma,
        });
    }
}

/// Past the string whose opening quote is at `at`.
fn skip_string(bytes: &[u8], at: usize) -> Result<usize, String> {
    let mut i = at + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Ok(i + 1),
            _ => i += 1,
        }
    }
    Err(format!("a string at byte {at} does not end"))
}

/// Past the value that starts at `at`.
fn skip_value(bytes: &[u8], at: usize, depth: usize) -> Result<usize, String> {
    if depth > DEEPEST {
        return Err(format!("nested too deep at byte {at}"));
    }
    match bytes.get(at) {
        Some(b'"') => skip_string(bytes, at),
        Some(&open @ (b'{' | b'[')) => {
            let close = if open == b'{' { b'}' } else { b']' };
            let mut i = skip_blank(bytes, at + 1);
            while i < bytes.len() {
                match bytes[i] {
                    c if c == close => return Ok(i + 1),
                    b',' | b':' => i += 1,
                    _ => i = skip_value(bytes, i, depth + 1)?,
                }
                i = skip_blank(bytes, i);
            }
            Err(format!("a value at byte {at} does not end"))
        }
        Some(_) => {
            let mut i = at;
            while i < bytes.len()
                && !matches!(
                    bytes[i],
                    b',' | b'}' | b']' | b':' | b' ' | b'\t' | b'\r' | b'\n' | b'/'
                )
            {
                i += 1;
            }
            if i == at {
                return Err(format!("expected a value at byte {at}"));
            }
            Ok(i)
        }
        None => Err("the text ends where a value should be".into()),
    }
}

/// Past the white space and comments from `at`.
pub(crate) fn skip_blank(bytes: &[u8], mut at: usize) -> usize {
    loop {
        match bytes.get(at) {
            Some(b' ' | b'\t' | b'\r' | b'\n') => at += 1,
            Some(b'/') if bytes.get(at + 1) == Some(&b'/') => {
                while at < bytes.len() && bytes[at] != b'\n' {
                    at += 1;
                }
            }
            Some(b'/') if bytes.get(at + 1) == Some(&b'*') => {
                at += 2;
                while at < bytes.len() && !bytes[at..].starts_with(b"*/") {
                    at += 1;
                }
                at = (at + 2).min(bytes.len());
            }
            _ => return at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_found_with_their_spans() {
        let text = "{\n  // mine\n  \"a\": [1, {\"x\": \"}\"}],\n  \"b\\u0020c\" : {\"d\": null /* c */, },\n}";
        let root = object_at(text, &[]).unwrap().unwrap();
        let names: Vec<&str> = root.members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["a", "b c"]);
        let a = &root.members[0];
        assert_eq!(&text[a.start..a.key_end], "\"a\"");
        assert_eq!(&text[a.value_start..a.value_end], "[1, {\"x\": \"}\"}]");
        assert_eq!(a.comma, Some(a.value_end));
        let b = &root.members[1];
        assert!(b.comma.is_some(), "the trailing comma");
        assert_eq!(root.close, text.len() - 1);
        let inner = object_at(text, &["b c"]).unwrap().unwrap();
        assert_eq!(inner.members[0].name, "d");
        assert_eq!(
            &text[inner.members[0].value_start..inner.members[0].value_end],
            "null"
        );
        assert!(inner.members[0].comma.is_some());
        assert_eq!(object_at(text, &["a"]).unwrap(), None);
        assert_eq!(object_at(text, &["z"]).unwrap(), None);
    }
}
