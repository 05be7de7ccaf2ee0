//! One holder at a time per token file, in this process and across the
//! user's processes: an in-process lock per file (threads wait on a
//! condition variable, not on the file) and a `sys::FileLock` on
//! `<file>.lock` beside it. A refresh holds both from reading the file to
//! writing the new tokens, so a rotating refresh token is spent once
//! (docs/decisions.md, "One refresher per token"). The in-process table is
//! `Locks`, owned by the process's `SignIns` and reached through its
//! `Store`s; no statics.

use crate::sys::FileLock;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long a holder may be waited for: longer than one request to the
/// token endpoint (`http::TIMEOUT`), which is what a holder waits on.
pub(crate) const WAIT: Duration = Duration::from_secs(45);

/// The files held in this process: clones share it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Locks(Arc<Table>);

#[derive(Debug, Default)]
struct Table {
    taken: Mutex<HashSet<PathBuf>>,
    released: Condvar,
}

/// Both locks of one token file, released on drop.
#[derive(Debug)]
pub(crate) struct Held {
    locks: Locks,
    path: PathBuf,
    file: Option<FileLock>,
}

impl Locks {
    /// Takes the locks of token file `path`, waiting at most `WAIT`.
    pub(crate) fn take(&self, path: &Path) -> Result<Held, String> {
        self.take_within(path, WAIT)
    }

    pub(crate) fn take_within(&self, path: &Path, wait: Duration) -> Result<Held, String> {
        take_within(self, path, wait)
    }
}

fn take_within(locks: &Locks, path: &Path, wait: Duration) -> Result<Held, String> {
    let until = Instant::now() + wait;
    {
        let table = &*locks.0;
        let mut taken = crate::lock(&table.taken);
        loop {
            if taken.insert(path.to_path_buf()) {
                break;
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!(
                    "the tokens in {} stayed locked by this process for {} s",
                    path.display(),
                    wait.as_secs()
                ));
            }
            taken = table
                .released
                .wait_timeout(taken, left)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|p| p.into_inner().0);
        }
    }
    // Registered now: dropping `held` on an error below unregisters it.
    let mut held = Held {
        locks: locks.clone(),
        path: path.to_path_buf(),
        file: None,
    };
    if let Some(dir) = path.parent() {
        crate::sys::private_dir(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let left = until.saturating_duration_since(Instant::now());
    let file = FileLock::take(&path.with_extension("lock"), left)
        .map_err(|e| format!("cannot lock the tokens in {}: {e}", path.display()))?;
    held.file = Some(file);
    Ok(held)
}

impl Drop for Held {
    fn drop(&mut self) {
        self.file.take();
        let table = &*self.locks.0;
        crate::lock(&table.taken).remove(&self.path);
        table.released.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn holders_of_one_file_take_turns() {
        let dir = std::env::temp_dir().join(format!("auth-lock-{}", std::process::id()));
        let path = dir.join("t.json");
        let locks = Locks::default();
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (path, inside, most) = (path.clone(), inside.clone(), most.clone());
                let locks = locks.clone();
                std::thread::spawn(move || {
                    for _ in 0..20 {
                        let _held = locks.take(&path).unwrap();
                        let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::yield_now();
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 1);
        let held = locks.take(&path).unwrap();
        let busy = locks
            .take_within(&path, Duration::from_millis(30))
            .unwrap_err();
        assert!(busy.contains("stayed locked"), "{busy}");
        drop(held);
        locks.take(&path).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
