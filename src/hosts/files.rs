//! Writing a config file the way its owner writes it, and keeping what was
//! there: a JSON file's indentation, line ends and final newline read from
//! the file and written again (written atomically, keeping the old file's
//! permissions, by `sys::write_atomically_keeping_mode`); timestamped
//! backups beside the file as the host names it, a link rather than where
//! it points (`<file>.workbench-backup-<UTC time>`, with the file's
//! permissions), and the latest of them found again for `--undo`.

use crate::config::ordered_json::Node;
use serde::Serialize;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// How a JSON file is laid out.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Style {
    /// One level of indentation: two spaces unless the file says otherwise.
    pub indent: String,
    pub crlf: bool,
    pub final_newline: bool,
}

impl Default for Style {
    fn default() -> Style {
        Style {
            indent: "  ".into(),
            crlf: false,
            final_newline: true,
        }
    }
}

/// The line end `text` uses: CRLF when any line ends so, else LF.
pub(crate) fn newline_of(text: &str) -> &'static str {
    if text.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    }
}

/// The layout of `text`; a file with no indented line gets two spaces.
pub(crate) fn style_of(text: &str) -> Style {
    let indent = text
        .lines()
        .skip(1)
        .map(|line| &line[..line.len() - line.trim_start_matches([' ', '\t']).len()])
        .find(|lead| !lead.is_empty())
        .map(|lead| match lead.strip_prefix('\t') {
            Some(_) => "\t".to_string(),
            None => lead.to_string(),
        });
    Style {
        indent: indent.unwrap_or_else(|| "  ".into()),
        crlf: text.contains("\r\n"),
        final_newline: text.is_empty() || text.ends_with('\n'),
    }
}

/// `node` as JSON text laid out in `style`.
pub(crate) fn json_text(node: &Node, style: &Style) -> String {
    let mut bytes = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(style.indent.as_bytes());
    let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, formatter);
    // A tree of plain values serializes into memory without failing.
    let _ = node.serialize(&mut serializer);
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if style.final_newline {
        text.push('\n');
    }
    if style.crlf {
        text = text.replace('\n', "\r\n");
    }
    text
}

const BACKUP: &str = ".workbench-backup-";

/// Copies `file` to a new backup beside it, named with the UTC time `now`;
/// its path.
pub(crate) fn backup(file: &Path, now: SystemTime) -> io::Result<PathBuf> {
    let path = backup_path(file, now);
    fs::copy(file, &path)?;
    Ok(path)
}

/// The path of a new backup of `file` at the UTC time `now`, beside it.
pub(crate) fn backup_path(file: &Path, now: SystemTime) -> PathBuf {
    let base = format!("{}{BACKUP}{}", file_name(file), utc_stamp(now));
    let mut path = file.with_file_name(&base);
    let mut n = 2;
    while fs::symlink_metadata(&path).is_ok() {
        path = file.with_file_name(format!("{base}-{n}"));
        n += 1;
    }
    path
}

/// Writes `bytes` (a file's text as it was read) to the backup `place`,
/// with the permissions of `like`, the file it backs up.
pub(crate) fn write_backup(place: &Path, like: &Path, bytes: &[u8]) -> io::Result<()> {
    fs::write(place, bytes)?;
    fs::set_permissions(place, fs::metadata(like)?.permissions())
}

/// The newest backup of `file`, if there is one.
pub(crate) fn latest_backup(file: &Path) -> io::Result<Option<PathBuf>> {
    let prefix = format!("{}{BACKUP}", file_name(file));
    let folder = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let entries = match fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut best: Option<((String, u32), PathBuf)> = None;
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(&prefix) else {
            continue;
        };
        let (stamp, n) = match rest.split_once("Z-") {
            Some((stamp, n)) => (format!("{stamp}Z"), n.parse().unwrap_or(0)),
            None => (rest.to_string(), 1),
        };
        let key = (stamp, n);
        if best.as_ref().is_none_or(|(k, _)| key > *k) {
            best = Some((key, entry.path()));
        }
    }
    Ok(best.map(|(_, path)| path))
}

fn file_name(file: &Path) -> String {
    file.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `20261126T132100Z`: a UTC time that sorts as text.
pub(crate) fn utc_stamp(time: SystemTime) -> String {
    let secs = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn stamps_are_utc_and_sort() {
        let at = |secs| utc_stamp(UNIX_EPOCH + Duration::from_secs(secs));
        assert_eq!(at(0), "19700101T000000Z");
        assert_eq!(at(951_782_400), "20000229T000000Z");
        assert_eq!(at(1_800_000_000), "20270115T080000Z");
        assert_eq!(at(4_102_444_799), "20991231T235959Z");
    }

    #[test]
    fn layout_is_read_and_written_again() {
        let text = "{\n\t\"a\": [\n\t\t1\n\t]\n}";
        let style = style_of(text);
        assert_eq!(style.indent, "\t");
        assert!(!style.final_newline);
        let node: Node = serde_json::from_str(text).unwrap();
        assert_eq!(json_text(&node, &style), text);
        let crlf = "{\r\n    \"b\": {}\r\n}\r\n";
        let style = style_of(crlf);
        assert_eq!(
            (style.indent.as_str(), style.crlf, style.final_newline),
            ("    ", true, true)
        );
        let node: Node = serde_json::from_str(crlf).unwrap();
        assert_eq!(json_text(&node, &style), crlf);
        let flat = Style {
            final_newline: false,
            ..Style::default()
        };
        assert_eq!(style_of("{}"), flat);
    }

    #[test]
    fn backups_are_found_newest_first() {
        let dir = std::env::temp_dir().join(format!("hosts-files-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("mcp.json");
        fs::write(&file, "one").unwrap();
        assert_eq!(latest_backup(&file).unwrap(), None);
        let t = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let first = backup(&file, t).unwrap();
        fs::write(&file, "two").unwrap();
        let second = backup(&file, t).unwrap();
        assert!(second.to_string_lossy().ends_with("Z-2"), "{second:?}");
        assert_eq!(latest_backup(&file).unwrap(), Some(second.clone()));
        fs::write(&file, "three").unwrap();
        let third = backup(&file, t + Duration::from_secs(1)).unwrap();
        assert_eq!(latest_backup(&file).unwrap(), Some(third));
        assert_eq!(fs::read_to_string(first).unwrap(), "one");
        crate::sys::write_atomically_keeping_mode(&file, b"four").unwrap();
        assert_eq!(fs::read_to_string(&file).unwrap(), "four");
        let _ = fs::remove_dir_all(&dir);
    }
}
