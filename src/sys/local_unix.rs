//! Unix: the local connections between a shared fleet and its sessions
//! (docs/reference.md §8): a Unix socket in a folder only this user can
//! enter, and the peer's user checked on every connection. `local_windows`
//! offers the same interface over named pipes.

use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A connection, either end.
pub(crate) struct Stream(UnixStream);

/// Where the fleet takes connections.
pub(crate) struct Listener(UnixListener);

/// `$XDG_RUNTIME_DIR/mcp-workbench`, else `${TMPDIR:-/tmp}/mcp-workbench-<uid>`:
/// created 0700, refused when another user owns it or others may enter it.
pub(crate) fn private_folder() -> io::Result<PathBuf> {
    let uid = user_id();
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(runtime) => PathBuf::from(runtime).join("mcp-workbench"),
        None => std::env::temp_dir().join(format!("mcp-workbench-{uid}")),
    };
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    let meta = std::fs::symlink_metadata(&dir)?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return Err(io::Error::other(format!(
            "{} is not a folder of this user's alone (it must be owned by uid {uid} with mode 0700, \
             found uid {} mode {:o}); remove it or fix its permissions",
            dir.display(),
            meta.uid(),
            meta.mode() & 0o7777
        )));
    }
    Ok(dir)
}

/// The endpoint called `name` in `folder` (from `private_folder`).
pub(crate) fn endpoint(folder: &Path, name: &str) -> PathBuf {
    folder.join(format!("{name}.sock"))
}

/// Removes the endpoint: no session finds the fleet there any more.
pub(crate) fn remove(endpoint: &Path) {
    let _ = std::fs::remove_file(endpoint);
}

impl Listener {
    /// Listens at `endpoint`, in place of a stale socket a crash left.
    pub(crate) fn bind(endpoint: &Path) -> io::Result<Listener> {
        match std::fs::remove_file(endpoint) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        UnixListener::bind(endpoint).map(Listener)
    }

    /// The next connection.
    pub(crate) fn accept(&self) -> io::Result<Stream> {
        self.0.accept().map(|(stream, _)| Stream(stream))
    }
}

impl Stream {
    /// A connection to the fleet listening at `endpoint`.
    pub(crate) fn connect(endpoint: &Path) -> io::Result<Stream> {
        UnixStream::connect(endpoint).map(Stream)
    }

    pub(crate) fn try_clone(&self) -> io::Result<Stream> {
        self.0.try_clone().map(Stream)
    }

    /// Ends the connection for every clone: blocked reads return, writes fail.
    pub(crate) fn shutdown(&self) {
        let _ = self.0.shutdown(std::net::Shutdown::Both);
    }

    pub(crate) fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.0.set_read_timeout(timeout)
    }

    /// Whether the process at the other end runs as this user (SO_PEERCRED on
    /// Linux, getpeereid elsewhere); the refusal's reason when it does not.
    pub(crate) fn peer_check(&self) -> Result<(), String> {
        match peer_user(&self.0) {
            Ok(uid) if uid == user_id() => Ok(()),
            Ok(uid) => Err(format!("from uid {uid}: not this user")),
            Err(e) => Err(format!("whose user is unknown: {e}")),
        }
    }

    /// Writes what the socket takes of `parts` (one message, in order) now,
    /// without waiting (`MSG_DONTWAIT`: the socket stays blocking for
    /// everyone else); how many bytes. `WouldBlock` when it takes nothing.
    pub(crate) fn send_now(&self, parts: &[&[u8]]) -> io::Result<usize> {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        let flags = libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL;
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        let flags = libc::MSG_DONTWAIT;
        let mut iov: Vec<libc::iovec> = parts
            .iter()
            .map(|part| libc::iovec {
                iov_base: part.as_ptr() as *mut libc::c_void,
                iov_len: part.len(),
            })
            .collect();
        // SAFETY: a zeroed msghdr is valid (no name, no control data); it
        // points at `iov`, which outlives the call, and each iovec at a part
        // that sendmsg only reads.
        let sent = unsafe {
            let mut message: libc::msghdr = std::mem::zeroed();
            message.msg_iov = iov.as_mut_ptr();
            message.msg_iovlen = iov.len() as _;
            libc::sendmsg(self.0.as_raw_fd(), &message, flags)
        };
        if sent < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(sent as usize)
    }
}

impl std::os::fd::AsRawFd for Stream {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.0.as_raw_fd()
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// The user this process runs as.
pub(crate) fn user_id() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// The user of the process at the other end of a connected Unix socket.
fn peer_user(socket: &UnixStream) -> io::Result<u32> {
    let fd = socket.as_raw_fd();
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        // SAFETY: a zeroed ucred is a valid value; getsockopt writes at most
        // `len` bytes into it, and `len` is its size.
        unsafe {
            let mut cred: libc::ucred = std::mem::zeroed();
            let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
            let got = libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_PEERCRED,
                (&mut cred as *mut libc::ucred).cast(),
                &mut len,
            );
            if got != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(cred.uid)
        }
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let (mut uid, mut gid): (libc::uid_t, libc::gid_t) = (0, 0);
        // SAFETY: getpeereid writes the two ids into the locals.
        if unsafe { libc::getpeereid(fd, &mut uid, &mut gid) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(uid)
    }
}
