//! A host's file changed where it lives, without losing what the host
//! writes meanwhile (`install` and its undo): a symbolic link (dotfiles) is
//! followed and the file it points to is replaced, the link stays; the text
//! is read, edited, backed up (beside the path as the host names it, the
//! link), and written atomically in the target's folder, and just before
//! the rename the file is read again: when the host wrote it in between,
//! the edit is made again on the new text, a few times at most. IO on the
//! host's file and its backup only.

use super::files;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// How many times the edit is made before giving up on a file that keeps
/// changing.
const TRIES: usize = 5;

/// What a rewrite did.
#[derive(Debug)]
pub(crate) struct Rewritten<T> {
    /// What the last edit said.
    pub outcome: T,
    /// The text was already what the edit makes: nothing written.
    pub unchanged: bool,
    /// The backup written (with `backup` asked, of a file that existed).
    pub backup: Option<PathBuf>,
    /// The file written, where the link (if any) points.
    pub target: PathBuf,
}

/// The file `path` names, its symbolic links followed (a missing file is
/// its own path).
pub(crate) fn resolved(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(&path)?;
                path = match path.parent() {
                    Some(folder) if target.is_relative() => folder.join(target),
                    _ => target,
                };
            }
            Ok(_) => return Ok(path),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(path),
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// An edit: the file's text (`None`: it does not exist) to the new text
/// and what the edit says about it, or why it cannot be made.
pub(crate) type Edit<'a, T> = dyn FnMut(Option<&str>) -> Result<(String, T), String> + 'a;

/// Replaces the file `path` names (`None` text: it does not exist) with
/// what `edit` makes of its text, backing it up first when `backup`; the
/// error says why nothing was written.
pub(crate) fn rewrite<T>(
    path: &Path,
    backup: bool,
    now: SystemTime,
    edit: &mut Edit<'_, T>,
) -> Result<Rewritten<T>, String> {
    let target = resolved(path).map_err(|e| format!("cannot follow its link: {e}"))?;
    let mut saved: Option<PathBuf> = None;
    let outcome = (|| {
        for _ in 0..TRIES {
            let text = read(&target)?;
            let (new, outcome) = edit(text.as_deref())?;
            if text.as_deref() == Some(new.as_str()) {
                return Ok(Some((outcome, true)));
            }
            if let (true, Some(text)) = (backup, &text) {
                let place = match &saved {
                    Some(place) => place.clone(),
                    None => files::backup_path(path, now),
                };
                saved = Some(place.clone());
                files::write_backup(&place, &target, text.as_bytes())
                    .map_err(|e| format!("cannot back it up: {e}"))?;
            }
            let mut same = || Ok(read(&target).map_err(io::Error::other)? == text);
            let written = crate::sys::write_atomically_unless(&target, new.as_bytes(), &mut same)
                .map_err(|e| format!("cannot write it: {e}"))?;
            if written {
                return Ok(Some((outcome, false)));
            }
        }
        Ok(None)
    })();
    let give_up = |why: String, saved: &Option<PathBuf>| {
        if let Some(place) = saved {
            let _ = fs::remove_file(place);
        }
        format!("{why}; nothing was written")
    };
    match outcome {
        Ok(Some((outcome, unchanged))) => Ok(Rewritten {
            outcome,
            unchanged,
            backup: if unchanged { None } else { saved },
            target,
        }),
        Ok(None) => Err(give_up(
            format!("it kept changing while the workbench edited it ({TRIES} tries)"),
            &saved,
        )),
        Err(why) => Err(give_up(why, &saved)),
    }
}

fn read(path: &Path) -> Result<Option<String>, String> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read it: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("wb-rewrite-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_change_made_meanwhile_is_edited_again_not_overwritten() {
        let dir = scratch("meanwhile");
        let file = dir.join("host.json");
        fs::write(&file, "one").unwrap();
        // The host writes its file while the edit is being made, twice.
        let mut seen = Vec::new();
        let mut edit = |text: Option<&str>| {
            let text = text.unwrap_or_default().to_string();
            seen.push(text.clone());
            if seen.len() < 3 {
                fs::write(&file, format!("{text}+host")).unwrap();
            }
            Ok((format!("{text}+wb"), ()))
        };
        let done = rewrite(&file, true, SystemTime::now(), &mut edit).unwrap();
        assert_eq!(seen, ["one", "one+host", "one+host+host"]);
        assert_eq!(fs::read_to_string(&file).unwrap(), "one+host+host+wb");
        // The backup is of the text the edit was made on.
        let backup = done.backup.unwrap();
        assert_eq!(fs::read_to_string(&backup).unwrap(), "one+host+host");
        // A file that never stops changing: an error, nothing written, no backup.
        let mut busy = |text: Option<&str>| {
            let text = text.unwrap_or_default().to_string();
            fs::write(&file, format!("{text}!")).unwrap();
            Ok((format!("{text}+wb"), ()))
        };
        fs::remove_file(&backup).unwrap();
        fs::write(&file, "two").unwrap();
        let err = rewrite(&file, true, SystemTime::now(), &mut busy).unwrap_err();
        assert!(err.contains("kept changing"), "{err}");
        assert_eq!(fs::read_to_string(&file).unwrap(), "two!!!!!");
        assert_eq!(files::latest_backup(&file).unwrap(), None);
        let _ = fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_linked_file_is_edited_where_it_points() {
        let dir = scratch("link");
        fs::create_dir_all(dir.join("dotfiles")).unwrap();
        let real = dir.join("dotfiles").join("host.json");
        fs::write(&real, "one").unwrap();
        let link = dir.join("host.json");
        std::os::unix::fs::symlink("dotfiles/host.json", &link).unwrap();
        let mut edit = |text: Option<&str>| Ok((format!("{}+wb", text.unwrap_or_default()), ()));
        let done = rewrite(&link, true, SystemTime::now(), &mut edit).unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&real).unwrap(), "one+wb");
        assert_eq!(done.target, real);
        // The backup is beside the link, where the host's file is named.
        assert_eq!(done.backup.unwrap().parent(), Some(dir.as_path()));
        let _ = fs::remove_dir_all(&dir);
    }
}
