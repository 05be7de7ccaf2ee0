//! `maxResultChars` (docs/reference.md §10): a tool result whose text
//! content is longer than the cap is cut, keeping its head and its tail,
//! with a marker in the middle saying how many characters were cut and
//! which file holds the whole text; `structuredContent` is dropped and
//! `_meta` says it was cut. Nothing is lost: the whole text goes to a
//! user-only file in the cache folder first, and if that file cannot be
//! written the result passes whole (logged). Files older than a day are
//! removed whenever a new one is written.
//!
//! Run on the child's thread, only for a server with a cap, and only when
//! the result's bytes are more than the cap: a JSON string never has more
//! characters than bytes, so a shorter result cannot hold too much text
//! and passes without being read. `cut` is pure; `apply` writes the file.

use crate::protocol::jsonrpc::Members;
use crate::sys::{self, UserDir};
use serde_json::json;
use serde_json::value::RawValue;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long a whole result's file is kept.
const KEEP: Duration = Duration::from_secs(24 * 60 * 60);
/// The `_meta` key of a cut result.
pub(crate) const META_KEY: &str = "mcp-workbench/cut";

/// What `result` becomes under `cap`, its whole text saved first; `None`:
/// it passes unchanged (short enough, not a tool result, or the file could
/// not be written). `label` names the server in logs.
pub(crate) fn apply(result: &RawValue, cap: usize, label: &str) -> Option<Box<RawValue>> {
    if result.get().len() <= cap {
        return None;
    }
    let texts = texts(result)?;
    let total: usize = texts.iter().map(|t| t.chars().count()).sum();
    if total <= cap {
        return None;
    }
    let file = match save(&texts.join("\n")) {
        Ok(file) => file,
        Err(e) => {
            log::warn!(
                "[{label}] a result of {total} characters is over maxResultChars ({cap}) \
                 but passes whole: cannot save it ({e})"
            );
            return None;
        }
    };
    let cut = cut(result, cap, &file.to_string_lossy());
    if cut.is_some() {
        log::info!(
            "[{label}] a result of {total} characters was cut to maxResultChars ({cap}); \
             the whole text is in {}",
            file.display()
        );
    }
    cut
}

/// The texts of `result`'s text content blocks, in order; `None` when it is
/// not a `CallToolResult` with content.
fn texts(result: &RawValue) -> Option<Vec<String>> {
    let members = Members::read(result).ok()?;
    let content: Vec<&RawValue> = serde_json::from_str(members.get("content")?.get()).ok()?;
    Some(content.iter().filter_map(|block| text_of(block)).collect())
}

/// The text of a content block of type `text`.
fn text_of(block: &RawValue) -> Option<String> {
    let members = Members::read(block).ok()?;
    (members.string("type")? == "text")
        .then(|| members.string("text"))
        .flatten()
}

/// `result` with its text content cut to `cap` characters, head and tail
/// kept around a marker naming `file`; `None` when it needs no cut. No IO.
pub(crate) fn cut(result: &RawValue, cap: usize, file: &str) -> Option<Box<RawValue>> {
    let members = Members::read(result).ok()?;
    let content: Vec<&RawValue> = serde_json::from_str(members.get("content")?.get()).ok()?;
    let texts: Vec<Option<String>> = content.iter().map(|b| text_of(b)).collect();
    let total: usize = texts.iter().flatten().map(|t| t.chars().count()).sum();
    if total <= cap {
        return None;
    }
    // The marker's own length depends on the count it states; the count
    // is at most `total`, so its digits are at most as many.
    let marker_for = |cut: usize| {
        format!(
            "\n\n[... {cut} characters cut by mcp-workbench (maxResultChars {cap}); the whole \
             result ({total} characters) is in the file {file} ...]\n\n"
        )
    };
    let room = cap.saturating_sub(marker_for(total).chars().count());
    let (head, tail) = (room.div_ceil(2), room / 2);
    let marker = marker_for(total - head - tail);
    let tail_from = total - tail;

    let mut blocks = Vec::new();
    let mut at = 0;
    for (raw, text) in content.iter().zip(&texts) {
        let Some(text) = text else {
            blocks.push(raw.get().to_string());
            continue;
        };
        let n = text.chars().count();
        let (start, end) = (at, at + n);
        at = end;
        let mut kept = String::new();
        // The head: [0, head); the tail: [tail_from, total).
        kept.push_str(chars(text, 0, head.clamp(start, end) - start));
        if (start..end).contains(&head) {
            kept.push_str(&marker);
        }
        kept.push_str(chars(text, tail_from.clamp(start, end) - start, n));
        if kept.is_empty() {
            continue;
        }
        blocks.push(replace_member(raw, "text", &json!(kept).to_string()));
    }
    let meta = json!({"originalChars": total, "keptChars": head + tail, "file": file});
    let mut out = String::from("{");
    let mut put = |key: &str, value: &str| {
        if out.len() > 1 {
            out.push(',');
        }
        out.push_str(&json!(key).to_string());
        out.push(':');
        out.push_str(value);
    };
    let mut had_meta = false;
    for (key, value) in members.iter() {
        match key {
            "structuredContent" => {}
            "content" => put(key, &format!("[{}]", blocks.join(","))),
            "_meta" => {
                had_meta = true;
                let text = match Members::read(value) {
                    Ok(_) => replace_member(value, META_KEY, &meta.to_string()),
                    Err(_) => json!({ META_KEY: meta }).to_string(),
                };
                put(key, &text);
            }
            _ => put(key, value.get()),
        }
    }
    if !had_meta {
        put("_meta", &json!({ META_KEY: meta }).to_string());
    }
    out.push('}');
    RawValue::from_string(out).ok()
}

/// Characters `from..to` of `text`.
fn chars(text: &str, from: usize, to: usize) -> &str {
    if from >= to {
        return "";
    }
    let byte = |i: usize| text.char_indices().nth(i).map_or(text.len(), |(b, _)| b);
    &text[byte(from)..byte(to)]
}

/// The object `raw` with member `key` set to `value` (in its place, or added
/// at the end); the other members as they were.
fn replace_member(raw: &RawValue, key: &str, value: &str) -> String {
    let Ok(members) = Members::read(raw) else {
        return raw.get().to_string();
    };
    let mut out = String::from("{");
    let mut seen = false;
    for (k, v) in members.iter() {
        if out.len() > 1 {
            out.push(',');
        }
        out.push_str(&json!(k).to_string());
        out.push(':');
        if k == key {
            seen = true;
            out.push_str(value);
        } else {
            out.push_str(v.get());
        }
    }
    if !seen {
        if out.len() > 1 {
            out.push(',');
        }
        out.push_str(&json!(key).to_string());
        out.push(':');
        out.push_str(value);
    }
    out.push('}');
    out
}

/// How many names `save` tries within one millisecond.
const NAMES: u64 = 1000;

/// Writes `text` to a new user-only file in the cache folder's `results`,
/// after removing the files there older than a day; its path. The name is
/// the time, the process and the first number from 0 whose file does not
/// exist yet (the file is created only if it does not: no counter to share).
fn save(text: &str) -> Result<PathBuf, String> {
    let dir = sys::user_dir(UserDir::Cache, &|name| std::env::var_os(name))?.join("results");
    sys::private_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    remove_old(&dir);
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    let name = |n: u64| dir.join(format!("result-{ms}-{}-{n}.txt", std::process::id()));
    let mut n = 0;
    let (path, mut file) = loop {
        let path = name(n);
        match sys::private_file(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n + 1 < NAMES => n += 1,
            // Not created: nothing to remove (it may be another's).
            Err(e) => return Err(format!("cannot write {}: {e}", path.display())),
            Ok(file) => break (path, file),
        }
    };
    match file.write_all(text.as_bytes()) {
        Ok(()) => Ok(path),
        Err(e) => {
            let _ = std::fs::remove_file(&path);
            Err(format!("cannot write {}: {e}", path.display()))
        }
    }
}

/// Removes the result files in `dir` last written more than `KEEP` ago.
fn remove_old(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().starts_with("result-") {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age > KEEP);
        if old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn raw(v: &Value) -> Box<RawValue> {
        RawValue::from_string(v.to_string()).unwrap()
    }

    fn kept_text(cut: &RawValue) -> String {
        let v: Value = serde_json::from_str(cut.get()).unwrap();
        v["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("|")
    }

    #[test]
    fn a_long_text_keeps_head_and_tail_around_the_marker() {
        let text: String = (0..5000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let result = raw(&json!({"content": [{"type": "text", "text": text}],
            "structuredContent": {"big": true}, "isError": false, "_meta": {"x": 1}}));
        let cut = cut(&result, 1000, "/c/r.txt").unwrap();
        let v: Value = serde_json::from_str(cut.get()).unwrap();
        let kept = v["content"][0]["text"].as_str().unwrap();
        assert_eq!(kept.chars().count(), 1000, "exactly the cap");
        let marker_at = kept.find("\n\n[... ").unwrap();
        assert!(text.starts_with(&kept[..marker_at]));
        let end = kept.rfind("...]\n\n").unwrap() + 6;
        assert!(text.ends_with(&kept[end..]));
        let kept_chars = marker_at + (kept.len() - end);
        assert!(kept.contains(&format!(
            "[... {} characters cut by mcp-workbench (maxResultChars 1000); the whole result (5000 characters) is in the file /c/r.txt ...]",
            5000 - kept_chars
        )));
        assert!(v.get("structuredContent").is_none());
        assert_eq!(v["isError"], false);
        assert_eq!(v["_meta"]["x"], 1);
        assert_eq!(v["_meta"][META_KEY]["originalChars"], 5000);
        assert_eq!(v["_meta"][META_KEY]["keptChars"], kept_chars);
        assert_eq!(v["_meta"][META_KEY]["file"], "/c/r.txt");
    }

    #[test]
    fn characters_not_bytes_and_several_blocks() {
        // Multi-byte characters: counted as characters, cut on boundaries.
        let a = "é".repeat(700);
        let b = "ü".repeat(700);
        let result = raw(&json!({"content": [
            {"type": "text", "text": a},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "text", "text": b}]}));
        assert!(cut(&result, 1400, "f").is_none(), "at the cap: unchanged");
        let out = cut(&result, 1000, "f").unwrap();
        let v: Value = serde_json::from_str(out.get()).unwrap();
        let blocks = v["content"].as_array().unwrap();
        assert_eq!(blocks.len(), 3, "{v}");
        assert_eq!(blocks[1]["type"], "image");
        let first = blocks[0]["text"].as_str().unwrap();
        assert!(first.starts_with("éé") && first.contains("[... "));
        assert!(blocks[2]["text"]
            .as_str()
            .unwrap()
            .chars()
            .all(|c| c == 'ü'));
        // The marker's count has fewer digits than the total it was sized by.
        let n = kept_text(&out).chars().count();
        assert!((995..=1000).contains(&n), "{n}");
        assert!(v["_meta"][META_KEY].is_object());
    }

    #[test]
    fn short_or_foreign_results_pass() {
        let short = raw(&json!({"content": [{"type": "text", "text": "x".repeat(600)}]}));
        assert!(apply(&short, 1000, "t/s").is_none(), "bytes under the cap");
        assert!(cut(&short, 600, "f").is_none());
        // Escapes make bytes many, characters few: read, then passed.
        let escaped = raw(&json!({"content": [{"type": "text", "text": "\u{1}".repeat(300)}]}));
        assert!(escaped.get().len() > 1000);
        assert!(cut(&escaped, 1000, "f").is_none());
        assert!(cut(&raw(&json!({"tools": []})), 10, "f").is_none());
    }
}
