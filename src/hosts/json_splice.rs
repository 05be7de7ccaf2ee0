//! A host's JSON (or JSONC) text changed in place, one member at a time:
//! taken out with its separating comma and its line, added after the last
//! member indented like its siblings (or, in an empty object, one level
//! deeper than the object's line) with the file's line ends, or given a new
//! value. Every byte outside the member stays: key order, indentation,
//! inline arrays and objects, comments, CRLF, a missing final newline.
//! Adding then taking out the same member gives the text back byte for
//! byte, as does taking out a member and putting its own text back where it
//! was (`chunk`, `insert_before`): `install` and its undo rely on it. Finds
//! places with `json_spans`. No IO.

use super::files::{json_text, newline_of, style_of, Style};
use super::json_spans::{object_at, object_from, Member, Object};
use crate::config::ordered_json::Node;
use std::ops::Range;

/// A member's new value.
pub(crate) enum Value<'a> {
    /// Laid out here, in the file's indentation.
    Node(&'a Node),
    /// Text from another file (a backup), whose member's line was indented
    /// with `indent`.
    Raw { text: &'a str, indent: &'a str },
}

/// The object at `path`, or why not.
fn find(text: &str, path: &[&str]) -> Result<Object, String> {
    object_at(text, path)?.ok_or_else(|| format!("no object at {}", path.join(".")))
}

fn member<'a>(object: &'a Object, name: &str) -> Result<(usize, &'a Member), String> {
    object
        .members
        .iter()
        .enumerate()
        .find(|(_, m)| m.name == name)
        .ok_or_else(|| format!("no member \"{name}\""))
}

/// `text` without the member `name` of the object at `path`.
pub(crate) fn remove(text: &str, path: &[&str], name: &str) -> Result<String, String> {
    let object = find(text, path)?;
    let (index, _) = member(&object, name)?;
    let mut out = text.to_string();
    let (range, comma) = removal(text, &object, index);
    out.replace_range(range, "");
    if let Some(comma) = comma {
        out.remove(comma);
    }
    // An object left with only white space between its braces becomes `{}`.
    let left = object_from(&out, object.open)?;
    if left.members.is_empty() && out[left.open + 1..left.close].trim().is_empty() {
        out.replace_range(left.open + 1..left.close, "");
    }
    Ok(out)
}

/// The text `remove` takes out for a member followed by a comma, as one
/// piece (`None` for a last member, whose removal takes the comma before
/// it): what `insert_before` puts back before the member that followed.
pub(crate) fn chunk(text: &str, path: &[&str], name: &str) -> Result<Option<String>, String> {
    let object = find(text, path)?;
    let (index, m) = member(&object, name)?;
    if m.comma.is_none() {
        return Ok(None);
    }
    Ok(Some(text[removal(text, &object, index).0].to_string()))
}

/// `text` with `chunk` (from `chunk`) put before the member `before` of
/// the object at `path`: at the start of its line when it begins one.
pub(crate) fn insert_before(
    text: &str,
    path: &[&str],
    before: &str,
    chunk: &str,
) -> Result<String, String> {
    let object = find(text, path)?;
    let (_, m) = member(&object, before)?;
    let bytes = text.as_bytes();
    let at = if begins_line(bytes, m.start) {
        line_start(bytes, m.start)
    } else {
        m.start
    };
    let mut out = text.to_string();
    out.insert_str(at, &newlines(chunk, newline_of(text)));
    Ok(out)
}

/// The bytes that taking out member `index` removes, and the comma before
/// it that goes too (a last member's).
fn removal(text: &str, object: &Object, index: usize) -> (Range<usize>, Option<usize>) {
    let bytes = text.as_bytes();
    let m = &object.members[index];
    if let Some(comma) = m.comma {
        let after = comma + 1;
        let eol = line_end(bytes, after);
        if begins_line(bytes, m.start) && blank_or_comment(&text[after..eol]) {
            return (line_start(bytes, m.start)..(eol + 1).min(bytes.len()), None);
        }
        return (m.start..skip_spaces(bytes, after), None);
    }
    if index > 0 {
        let previous = &object.members[index - 1];
        let comma = previous.comma.unwrap_or(previous.value_end);
        if begins_line(bytes, m.start) {
            let start = line_start(bytes, m.start);
            let before = if start >= 2 && &bytes[start - 2..start] == b"\r\n" {
                start - 2
            } else {
                start.saturating_sub(1)
            };
            if before > comma {
                return (before..m.value_end, Some(comma));
            }
        }
        return (comma..m.value_end, None);
    }
    let eol = line_end(bytes, m.value_end);
    if begins_line(bytes, m.start) && blank_or_comment(&text[m.value_end..eol]) {
        return (line_start(bytes, m.start)..(eol + 1).min(bytes.len()), None);
    }
    (m.start..m.value_end, None)
}

/// `text` with `"name": value` after the last member of the object at `path`.
pub(crate) fn append(
    text: &str,
    path: &[&str],
    name: &str,
    value: Value<'_>,
) -> Result<String, String> {
    let object = find(text, path)?;
    let bytes = text.as_bytes();
    let style = style_of(text);
    let newline = newline_of(text);
    let mut out = text.to_string();
    let Some(last) = object.members.last() else {
        let outer = indent_of(text, object.open);
        let inner = format!("{outer}{}", style.indent);
        let member = member_text(name, &value, &inner, &style, true);
        let inside = object.open + 1..object.close;
        if text[inside.clone()].trim().is_empty() {
            out.replace_range(inside, &format!("{newline}{inner}{member}{newline}{outer}"));
        } else {
            out.insert_str(object.open + 1, &format!("{newline}{inner}{member}"));
        }
        return Ok(out);
    };
    if !begins_line(bytes, last.start) {
        let member = member_text(name, &value, "", &style, false);
        match last.comma {
            Some(comma) => out.insert_str(comma + 1, &format!(" {member},")),
            None => out.insert_str(last.value_end, &format!(", {member}")),
        }
        return Ok(out);
    }
    let indent = indent_of(text, last.start);
    let member = member_text(name, &value, &indent, &style, true);
    let from = last.comma.map_or(last.value_end, |c| c + 1);
    let eol = line_end(bytes, from);
    let at = if blank_or_comment(&text[from..eol]) {
        content_end(bytes, eol)
    } else {
        from
    };
    match last.comma {
        Some(_) => out.insert_str(at, &format!("{newline}{indent}{member},")),
        None => {
            out.insert_str(at, &format!("{newline}{indent}{member}"));
            out.insert(last.value_end, ',');
        }
    }
    Ok(out)
}

/// `text` with the value of member `name` of the object at `path` replaced.
pub(crate) fn set(
    text: &str,
    path: &[&str],
    name: &str,
    value: Value<'_>,
) -> Result<String, String> {
    let object = find(text, path)?;
    let (_, m) = member(&object, name)?;
    let old = m.value_start..m.value_end;
    let pretty = text[old.clone()].contains('\n');
    let indent = indent_of(text, m.start);
    let new = value_text(&value, &indent, &style_of(text), pretty, newline_of(text));
    let mut out = text.to_string();
    out.replace_range(old, &new);
    Ok(out)
}

/// The text of member `name` of the object at `path` (from its key to the
/// end of its value), and the indentation of its line.
pub(crate) fn member_source(
    text: &str,
    path: &[&str],
    name: &str,
) -> Result<Option<(String, String)>, String> {
    let Some(object) = object_at(text, path)? else {
        return Ok(None);
    };
    Ok(object.member(name).map(|m| {
        (
            text[m.value_start..m.value_end].to_string(),
            indent_of(text, m.start),
        )
    }))
}

fn member_text(name: &str, value: &Value<'_>, indent: &str, style: &Style, pretty: bool) -> String {
    let key = serde_json::to_string(name).unwrap_or_default();
    let newline = if style.crlf { "\r\n" } else { "\n" };
    format!(
        "{key}: {}",
        value_text(value, indent, style, pretty, newline)
    )
}

fn value_text(
    value: &Value<'_>,
    indent: &str,
    style: &Style,
    pretty: bool,
    newline: &str,
) -> String {
    match value {
        Value::Node(node) if pretty => {
            let flat = Style {
                indent: style.indent.clone(),
                crlf: false,
                final_newline: false,
            };
            json_text(node, &flat).replace('\n', &format!("{newline}{indent}"))
        }
        Value::Node(node) => serde_json::to_string(node).unwrap_or_default(),
        Value::Raw { text, indent: was } => {
            let mut out = String::new();
            for (i, line) in text.split('\n').enumerate() {
                let line = line.strip_suffix('\r').unwrap_or(line);
                if i > 0 {
                    out.push_str(newline);
                    out.push_str(indent);
                    out.push_str(line.strip_prefix(*was).unwrap_or(line));
                } else {
                    out.push_str(line);
                }
            }
            out
        }
    }
}

/// `text` with its line ends made `newline`.
fn newlines(text: &str, newline: &str) -> String {
    text.replace("\r\n", "\n").replace('\n', newline)
}

fn line_start(bytes: &[u8], at: usize) -> usize {
    bytes[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1)
}

/// The index of the `\n` ending the line of `at`, or the text's end.
fn line_end(bytes: &[u8], at: usize) -> usize {
    bytes[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |i| at + i)
}

/// Where the line whose `\n` is at `eol` has its last character (before `\r`).
fn content_end(bytes: &[u8], eol: usize) -> usize {
    if eol > 0 && eol <= bytes.len() && bytes.get(eol - 1) == Some(&b'\r') {
        eol - 1
    } else {
        eol
    }
}

fn begins_line(bytes: &[u8], at: usize) -> bool {
    bytes[line_start(bytes, at)..at]
        .iter()
        .all(|&b| b == b' ' || b == b'\t')
}

fn indent_of(text: &str, at: usize) -> String {
    let bytes = text.as_bytes();
    let start = line_start(bytes, at);
    let line = &text[start..];
    line[..line.len() - line.trim_start_matches([' ', '\t']).len()].to_string()
}

fn skip_spaces(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t')) {
        at += 1;
    }
    at
}

fn blank_or_comment(rest: &str) -> bool {
    let rest = rest.trim();
    rest.is_empty() || rest.starts_with("//")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Node {
        serde_json::from_str(r#"{"command": "wb", "args": ["-c", "x"]}"#).unwrap()
    }

    /// Adding then taking out gives the text back.
    fn round_trip(text: &str, path: &[&str], added: &str) {
        let node = entry();
        let with = append(text, path, "workbench", Value::Node(&node)).unwrap();
        assert_eq!(with, added, "added");
        assert_eq!(remove(&with, path, "workbench").unwrap(), text, "taken out");
    }

    #[test]
    fn a_member_is_added_and_taken_out_in_place() {
        round_trip(
            "{\n  \"mcpServers\": {\n    \"a\": {\"args\": [\"-y\", \"pkg\"]}\n  },\n  \"history\": [{\"x\": 1}]\n}",
            &["mcpServers"],
            "{\n  \"mcpServers\": {\n    \"a\": {\"args\": [\"-y\", \"pkg\"]},\n    \"workbench\": {\n      \"command\": \"wb\",\n      \"args\": [\n        \"-c\",\n        \"x\"\n      ]\n    }\n  },\n  \"history\": [{\"x\": 1}]\n}",
        );
        // CRLF, tabs, no final newline, an empty object.
        round_trip(
            "{\r\n\t\"mcpServers\": {}\r\n}",
            &["mcpServers"],
            "{\r\n\t\"mcpServers\": {\r\n\t\t\"workbench\": {\r\n\t\t\t\"command\": \"wb\",\r\n\t\t\t\"args\": [\r\n\t\t\t\t\"-c\",\r\n\t\t\t\t\"x\"\r\n\t\t\t]\r\n\t\t}\r\n\t}\r\n}",
        );
        // JSONC: a trailing comma and comments stay.
        round_trip(
            "{\n  \"servers\": {\n    // mine\n    \"a\": {}, // a\n  },\n}\n",
            &["servers"],
            "{\n  \"servers\": {\n    // mine\n    \"a\": {}, // a\n    \"workbench\": {\n      \"command\": \"wb\",\n      \"args\": [\n        \"-c\",\n        \"x\"\n      ]\n    },\n  },\n}\n",
        );
        // A comment after the last member stays on its line.
        round_trip(
            "{\"s\": {\n  \"a\": 1 // one\n}}",
            &["s"],
            "{\"s\": {\n  \"a\": 1, // one\n  \"workbench\": {\n    \"command\": \"wb\",\n    \"args\": [\n      \"-c\",\n      \"x\"\n    ]\n  }\n}}",
        );
        // Inline: compact.
        round_trip(
            "{\"mcpServers\":{\"a\":1}}",
            &["mcpServers"],
            "{\"mcpServers\":{\"a\":1, \"workbench\": {\"command\":\"wb\",\"args\":[\"-c\",\"x\"]}}}",
        );
    }

    #[test]
    fn a_member_taken_out_goes_back_where_it_was() {
        let text = "{\n  \"a\": {\"command\": \"x\"},\n  \"b\": 2,\n  \"c\": [3]\n}";
        for (name, next) in [("a", "b"), ("b", "c")] {
            let piece = chunk(text, &[], name).unwrap().unwrap();
            let without = remove(text, &[], name).unwrap();
            assert!(!without.contains(&format!("\"{name}\"")), "{without}");
            assert_eq!(insert_before(&without, &[], next, &piece).unwrap(), text);
        }
        // The last one: its text after the one before it.
        assert_eq!(chunk(text, &[], "c").unwrap(), None);
        let without = remove(text, &[], "c").unwrap();
        assert_eq!(without, "{\n  \"a\": {\"command\": \"x\"},\n  \"b\": 2\n}");
        let (value, indent) = member_source(text, &[], "c").unwrap().unwrap();
        let back = append(
            &without,
            &[],
            "c",
            Value::Raw {
                text: &value,
                indent: &indent,
            },
        )
        .unwrap();
        assert_eq!(back, text);
        // The only one: the object becomes `{}`.
        assert_eq!(
            remove("{\"s\": {\n    \"a\": 1\n  }}", &["s"], "a").unwrap(),
            "{\"s\": {}}"
        );
    }

    #[test]
    fn a_value_is_replaced_in_its_place() {
        let node = entry();
        let text = "{\n  \"workbench\": {\"command\": \"old\"},\n  \"z\": 1\n}";
        assert_eq!(
            set(text, &[], "workbench", Value::Node(&node)).unwrap(),
            "{\n  \"workbench\": {\"command\":\"wb\",\"args\":[\"-c\",\"x\"]},\n  \"z\": 1\n}"
        );
    }
}
