//! A lock between processes of the same user on a file: `flock(2)` on Unix,
//! `LockFileEx` on Windows (declared in `win32`). The sign-in's token store
//! takes one beside each token file, so that one refresh runs at a time
//! across every process of the user (docs/reference.md §7.5); the tool
//! catalog takes one beside its files from reading a catalog to writing it,
//! so that no workbench writes over what another just wrote. The lock goes
//! with the open file: it is released when `FileLock` drops, and by the
//! system when the process dies holding it, so a crash never leaves it taken.
//! The lock file itself stays (removing it would let two processes lock two
//! different files of one name).
//!
//! Both systems lock per open file, not per process: two `FileLock`s on one
//! path exclude each other within one process too.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

/// How often a waiting `take` tries again.
const RETRY: Duration = Duration::from_millis(10);

/// An exclusive lock on a file, held until dropped.
#[derive(Debug)]
pub(crate) struct FileLock {
    file: File,
}

impl FileLock {
    /// Locks `path` (created user-only if missing), waiting at most `wait`
    /// for another holder to let go (`ErrorKind::TimedOut` then).
    pub(crate) fn take(path: &Path, wait: Duration) -> io::Result<FileLock> {
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(path)?;
        let until = Instant::now() + wait;
        loop {
            if try_lock(&file)? {
                return Ok(FileLock { file });
            }
            if Instant::now() >= until {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "{} stayed locked by another process for {} s",
                        path.display(),
                        wait.as_secs()
                    ),
                ));
            }
            thread::sleep(RETRY);
        }
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        unlock(&self.file);
    }
}

/// Takes the lock if it is free: `Ok(false)` when another holds it.
#[cfg(unix)]
fn try_lock(file: &File) -> io::Result<bool> {
    use std::os::unix::io::AsRawFd;
    loop {
        // SAFETY: flock on a descriptor `file` owns and keeps open.
        let done = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if done == 0 {
            return Ok(true);
        }
        let error = io::Error::last_os_error();
        match error.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => return Ok(false),
            _ => return Err(error),
        }
    }
}

#[cfg(unix)]
fn unlock(file: &File) {
    use std::os::unix::io::AsRawFd;
    // SAFETY: as in `try_lock`; closing the file would release it anyway.
    unsafe {
        libc::flock(file.as_raw_fd(), libc::LOCK_UN);
    }
}

#[cfg(windows)]
fn try_lock(file: &File) -> io::Result<bool> {
    use super::win32::{
        LockFileEx, ERROR_LOCK_VIOLATION, LOCKFILE_EXCLUSIVE_LOCK, LOCKFILE_FAIL_IMMEDIATELY,
    };
    use std::os::windows::io::AsRawHandle;
    let mut overlapped = first_byte();
    // SAFETY: the handle is `file`'s, open for the call; the OVERLAPPED only
    // names the range (the first byte) and lives across the call, which
    // completes at once on a handle opened without FILE_FLAG_OVERLAPPED.
    let done = unsafe {
        LockFileEx(
            file.as_raw_handle(),
            LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY,
            0,
            1,
            0,
            &mut overlapped,
        )
    };
    if done != 0 {
        return Ok(true);
    }
    let error = io::Error::last_os_error();
    match error.raw_os_error() {
        Some(ERROR_LOCK_VIOLATION) => Ok(false),
        _ => Err(error),
    }
}

#[cfg(windows)]
fn unlock(file: &File) {
    use std::os::windows::io::AsRawHandle;
    let mut overlapped = first_byte();
    // SAFETY: as in `try_lock`; closing the handle would release it anyway.
    unsafe {
        super::win32::UnlockFileEx(file.as_raw_handle(), 0, 1, 0, &mut overlapped);
    }
}

/// The range both calls name: the file's first byte.
#[cfg(windows)]
fn first_byte() -> super::win32::OVERLAPPED {
    super::win32::OVERLAPPED {
        Internal: 0,
        InternalHigh: 0,
        Offset: 0,
        OffsetHigh: 0,
        hEvent: std::ptr::null_mut(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn a_second_holder_waits_for_the_first() {
        let dir = std::env::temp_dir().join(format!("file-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x.lock");
        let first = FileLock::take(&path, Duration::from_secs(1)).unwrap();
        let refused = FileLock::take(&path, Duration::from_millis(50)).unwrap_err();
        assert_eq!(refused.kind(), io::ErrorKind::TimedOut);
        let (tx, rx) = mpsc::channel();
        let waiter = {
            let path = path.clone();
            thread::spawn(move || {
                let lock = FileLock::take(&path, Duration::from_secs(20));
                tx.send(()).unwrap();
                lock.map(drop)
            })
        };
        // The waiter gets it once the first lets go.
        drop(first);
        rx.recv_timeout(Duration::from_secs(20)).unwrap();
        waiter.join().unwrap().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
