//! Windows: the local connections between a shared fleet and its sessions
//! (docs/reference.md §8), over a named pipe. `local_unix` offers the same
//! interface over Unix sockets.
//!
//! - The pipe's name carries the user's SID (`\\.\pipe\mcp-workbench-<SID>-
//!   <name>`), its DACL admits only that user, it refuses remote clients, and
//!   the first instance is created with `FILE_FLAG_FIRST_PIPE_INSTANCE`, so a
//!   second fleet cannot listen on the name of the first.
//! - The pipe namespace is the machine's, not a folder of the user's: a
//!   process of another user could create the name first. So each end checks
//!   the other's user: the fleet its client's (`peer_check`), a session its
//!   server's (`Stream::connect`), and the session connects with
//!   `SECURITY_IDENTIFICATION`, which lets no server act as the user.
//! - Every read and write is overlapped, with its own `OVERLAPPED` and event,
//!   and waited for by the thread that started it: a handle opened for
//!   synchronous I/O serialises its operations, so a read blocked on one
//!   thread would hold up a write from another (the fleet and a front each
//!   read and write one pipe from two threads). The wait also ends when the
//!   connection is shut down, or when a read times out; the operation is then
//!   cancelled and collected before the call returns, so the buffer and the
//!   `OVERLAPPED` outlive it.
//! - A pipe goes with its last handle: there is no file to remove. `remove`
//!   makes this process's listener at the endpoint stop taking connections,
//!   so a session that comes while the fleet ends waits for it to be gone
//!   and starts a new one.

use super::win32::*;
use std::ffi::{c_void, OsStr};
use std::io::{self, Read, Write};
use std::os::windows::ffi::OsStrExt;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::path::{Path, PathBuf};
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// Each direction's pipe buffer.
const BUFFER: u32 = 64 * 1024;
/// The most one read or write asks of the system.
const IO_MAX: usize = 1 << 24;
/// How long a connection waits for a free instance of a busy pipe.
const BUSY_LIMIT: Duration = Duration::from_secs(10);
/// `read_timeout` when reads wait for ever.
const NO_TIMEOUT: u64 = u64::MAX;

/// A connection, either end. Clones share one handle (and so one shutdown).
pub(crate) struct Stream(Arc<Pipe>);

struct Pipe {
    handle: OwnedHandle,
    /// Manual-reset, set by `shutdown`: every wait on this pipe ends.
    closed: OwnedHandle,
    /// The fleet's end (else a session's).
    server: bool,
    /// In milliseconds; `NO_TIMEOUT` for none.
    read_timeout: AtomicU64,
}

/// Where the fleet takes connections.
pub(crate) struct Listener {
    name: Vec<u16>,
    security: Descriptor,
    /// The instance waiting for the next client.
    next: Mutex<Option<OwnedHandle>>,
    /// Set by `remove`: no more connections.
    ending: Arc<OwnedHandle>,
}

/// `%LOCALAPPDATA%\mcp-workbench\run`, created: the lock and the fleet's log
/// (the folder is the user's own already). Fails too when the user's SID,
/// which names the endpoint, cannot be read.
pub(crate) fn private_folder() -> io::Result<PathBuf> {
    current_user().map_err(io::Error::other)?;
    let base = std::env::var_os("LOCALAPPDATA")
        .filter(|d| !d.is_empty())
        .ok_or_else(|| {
            io::Error::other(
                "LOCALAPPDATA is not set: the shared fleet keeps its lock and log in \
                 %LOCALAPPDATA%\\mcp-workbench\\run",
            )
        })?;
    let dir = PathBuf::from(base).join("mcp-workbench").join("run");
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// The pipe called `name` of this user (`folder` holds no pipe on Windows).
pub(crate) fn endpoint(_folder: &Path, name: &str) -> PathBuf {
    // `private_folder`, called first, has failed if the SID is unknown.
    let sid = current_user().map_or("unknown-user", |u| u.sid_string.as_str());
    PathBuf::from(format!(r"\\.\pipe\mcp-workbench-{sid}-{name}"))
}

/// The listener of this process at `endpoint`, if any, takes no more
/// connections: the pipe itself goes with its last handle.
pub(crate) fn remove(endpoint: &Path) {
    for (path, ending) in lock(listeners()).iter() {
        if path == endpoint {
            // SAFETY: a valid event handle we own.
            unsafe {
                SetEvent(ending.as_raw_handle());
            }
        }
    }
}

/// The listeners of this process: each endpoint with its `ending` event.
type Listening = Mutex<Vec<(PathBuf, Arc<OwnedHandle>)>>;

/// The listeners of this process, for `remove`.
fn listeners() -> &'static Listening {
    static LISTENERS: OnceLock<Listening> = OnceLock::new();
    LISTENERS.get_or_init(Mutex::default)
}

impl Listener {
    /// Listens at `endpoint`: refused when a process listens there already.
    pub(crate) fn bind(endpoint: &Path) -> io::Result<Listener> {
        let user = current_user().map_err(io::Error::other)?;
        let security = Descriptor::only(&user.sid_string)?;
        let listener = Listener {
            name: wide(endpoint.as_os_str()),
            security,
            next: Mutex::new(None),
            ending: Arc::new(new_event()?),
        };
        let taken = || {
            io::Error::new(
                io::ErrorKind::AddrInUse,
                format!("another process listens at {}", endpoint.display()),
            )
        };
        // FILE_FLAG_FIRST_PIPE_INSTANCE refuses a name in use; asking first
        // also says so where that flag is ignored (Wine 8).
        // SAFETY: the name is NUL-terminated.
        let waiting = unsafe { WaitNamedPipeW(listener.name.as_ptr(), 1) } != 0;
        let error = io::Error::last_os_error().raw_os_error();
        if waiting || error == Some(ERROR_SEM_TIMEOUT) {
            return Err(taken());
        }
        let first = listener.instance(true).map_err(|e| {
            if e.raw_os_error() == Some(ERROR_ACCESS_DENIED) {
                taken()
            } else {
                e
            }
        })?;
        *lock(&listener.next) = Some(first);
        lock(listeners()).push((endpoint.to_path_buf(), Arc::clone(&listener.ending)));
        Ok(listener)
    }

    /// A new instance of the pipe, waiting for a client.
    fn instance(&self, first: bool) -> io::Result<OwnedHandle> {
        let attributes = SECURITY_ATTRIBUTES {
            nLength: std::mem::size_of::<SECURITY_ATTRIBUTES>() as u32,
            lpSecurityDescriptor: self.security.0,
            bInheritHandle: FALSE,
        };
        let first = if first {
            FILE_FLAG_FIRST_PIPE_INSTANCE
        } else {
            0
        };
        // SAFETY: the name is NUL-terminated; the attributes and the
        // descriptor they point to are alive for the call (the system copies
        // the descriptor).
        let pipe = unsafe {
            CreateNamedPipeW(
                self.name.as_ptr(),
                PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED | first,
                PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS,
                PIPE_UNLIMITED_INSTANCES,
                BUFFER,
                BUFFER,
                0,
                &attributes,
            )
        };
        owned(pipe)
    }

    /// The next connection. Once `remove` was called for this endpoint it
    /// never returns: the process is ending.
    pub(crate) fn accept(&self) -> io::Result<Stream> {
        let mut next = lock(&self.next);
        loop {
            let pipe = match next.take() {
                Some(pipe) => pipe,
                None => self.instance(false).inspect_err(|_| pause())?,
            };
            let raw = pipe.as_raw_handle();
            let connected = overlapped(raw, self.ending.as_raw_handle(), None, |ov| {
                // SAFETY: `overlapped` keeps `ov` alive until it finished.
                unsafe { ConnectNamedPipe(raw, ov) }
            });
            if is_set(&self.ending) {
                drop(pipe);
                drop(next);
                loop {
                    std::thread::park();
                }
            }
            match connected {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(ERROR_PIPE_CONNECTED) => {}
                Err(e) if e.raw_os_error() == Some(ERROR_NO_DATA) => {
                    // A client came and went: the instance serves the next.
                    // SAFETY: a pipe handle we own.
                    unsafe {
                        DisconnectNamedPipe(raw);
                    }
                    *next = Some(pipe);
                    continue;
                }
                Err(e) => {
                    pause();
                    return Err(e);
                }
            }
            // The next client finds an instance waiting (until then it waits
            // in `connect`); if none can be made now, the next call retries.
            *next = self
                .instance(false)
                .inspect_err(|e| log::warn!("cannot make the next pipe instance: {e}"))
                .ok();
            return Stream::new(pipe, true);
        }
    }
}

/// Keeps a caller that retries at once on errors from spinning.
fn pause() {
    std::thread::sleep(Duration::from_millis(100));
}

impl Stream {
    fn new(handle: OwnedHandle, server: bool) -> io::Result<Stream> {
        Ok(Stream(Arc::new(Pipe {
            handle,
            closed: new_event()?,
            server,
            read_timeout: AtomicU64::new(NO_TIMEOUT),
        })))
    }

    /// A connection to the fleet listening at `endpoint`, if a process of
    /// this user listens there: a missing pipe is an error of kind
    /// `NotFound`, as a refused Unix connection is an error.
    pub(crate) fn connect(endpoint: &Path) -> io::Result<Stream> {
        let name = wide(endpoint.as_os_str());
        let deadline = Instant::now() + BUSY_LIMIT;
        let pipe = loop {
            // SAFETY: the name is NUL-terminated; no attributes, no template.
            let pipe = unsafe {
                CreateFileW(
                    name.as_ptr(),
                    GENERIC_READ | GENERIC_WRITE,
                    0,
                    null(),
                    OPEN_EXISTING,
                    FILE_FLAG_OVERLAPPED | SECURITY_SQOS_PRESENT | SECURITY_IDENTIFICATION,
                    null_mut(),
                )
            };
            match owned(pipe) {
                Ok(pipe) => break pipe,
                // Every instance is taken: the fleet makes the next one.
                Err(e) if e.raw_os_error() == Some(ERROR_PIPE_BUSY) => {
                    if Instant::now() >= deadline {
                        return Err(e);
                    }
                    // SAFETY: the name is NUL-terminated. Failing (the pipe
                    // went away) is seen by the next CreateFileW.
                    unsafe {
                        WaitNamedPipeW(name.as_ptr(), 200);
                    }
                }
                Err(e) => return Err(e),
            }
        };
        let stream = Stream::new(pipe, false)?;
        stream.peer_check().map_err(|why| {
            io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("the process listening at {} is {why}", endpoint.display()),
            )
        })?;
        Ok(stream)
    }

    /// Another handle on the same connection (they share one handle).
    pub(crate) fn try_clone(&self) -> io::Result<Stream> {
        Ok(Stream(Arc::clone(&self.0)))
    }

    /// Ends the connection for every clone: blocked reads return, later
    /// reads find the end, writes fail; the fleet's end also disconnects the
    /// session (unread data is dropped, as after a Unix shutdown).
    pub(crate) fn shutdown(&self) {
        let pipe = &self.0;
        // SAFETY: handles we own; cancelling wakes operations of any thread,
        // each of which then collects its own.
        unsafe {
            SetEvent(pipe.closed.as_raw_handle());
            CancelIoEx(pipe.handle.as_raw_handle(), null());
            if pipe.server {
                DisconnectNamedPipe(pipe.handle.as_raw_handle());
            }
        }
    }

    pub(crate) fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        let ms = timeout.map_or(NO_TIMEOUT, |t| (t.as_millis() as u64).min(NO_TIMEOUT - 1));
        self.0.read_timeout.store(ms, Ordering::Relaxed);
        Ok(())
    }

    /// Whether the process at the other end runs as this user (the client
    /// of the fleet's end, the server of a session's); the refusal's reason
    /// when it does not.
    pub(crate) fn peer_check(&self) -> Result<(), String> {
        let handle = self.0.handle.as_raw_handle();
        let mut pid = 0;
        // SAFETY: a pipe handle we own; the call writes one u32 we own.
        let known = unsafe {
            if self.0.server {
                GetNamedPipeClientProcessId(handle, &mut pid)
            } else {
                GetNamedPipeServerProcessId(handle, &mut pid)
            }
        };
        if known == 0 {
            let e = io::Error::last_os_error();
            return Err(format!("from a process that is unknown: {e}"));
        }
        let mine = current_user()?;
        let theirs =
            user_of(pid).map_err(|e| format!("from pid {pid}, whose user is unknown: {e}"))?;
        // SAFETY: both point to valid SIDs inside buffers alive for the call.
        if unsafe { EqualSid(mine.user.sid(), theirs.sid()) } != 0 {
            return Ok(());
        }
        let sid = theirs.sid_string().unwrap_or_else(|_| "?".into());
        Err(format!("from pid {pid} of user {sid}: not this user"))
    }

    /// `WouldBlock`, always: a pipe has no send that takes what fits and
    /// returns, and a write cannot be abandoned once started. The fleet's
    /// writer thread then writes every line (docs/decisions.md).
    pub(crate) fn send_now(&self, _parts: &[&[u8]]) -> io::Result<usize> {
        Err(io::ErrorKind::WouldBlock.into())
    }

    fn is_closed(&self) -> bool {
        is_set(&self.0.closed)
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() || self.is_closed() {
            return Ok(0);
        }
        let (handle, len) = (self.0.handle.as_raw_handle(), buf.len().min(IO_MAX) as u32);
        let timeout = match self.0.read_timeout.load(Ordering::Relaxed) {
            NO_TIMEOUT => None,
            ms => Some(Duration::from_millis(ms)),
        };
        let data = buf.as_mut_ptr();
        let read = overlapped(handle, self.0.closed.as_raw_handle(), timeout, |ov| {
            // SAFETY: `buf` holds `len` bytes and, like `ov`, stays alive
            // until `overlapped` collected the read.
            unsafe { ReadFile(handle, data.cast(), len, null_mut(), ov) }
        });
        match read {
            Ok(n) => Ok(n as usize),
            Err(e) if is_end(&e) => Ok(0),
            Err(e) => Err(e),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.is_closed() {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the connection is shut down",
            ));
        }
        let (handle, len) = (self.0.handle.as_raw_handle(), buf.len().min(IO_MAX) as u32);
        let data = buf.as_ptr();
        let written = overlapped(handle, self.0.closed.as_raw_handle(), None, |ov| {
            // SAFETY: `buf` holds `len` bytes and, like `ov`, stays alive
            // until `overlapped` collected the write.
            unsafe { WriteFile(handle, data.cast(), len, null_mut(), ov) }
        })?;
        Ok(written as usize)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Whether a read's error means the other end is gone (or this one shut).
fn is_end(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::ConnectionAborted
        || matches!(
            e.raw_os_error(),
            Some(ERROR_BROKEN_PIPE | ERROR_PIPE_NOT_CONNECTED | ERROR_HANDLE_EOF | ERROR_NO_DATA)
        )
}

/// Runs one overlapped operation on `handle`, which `start` starts with the
/// `OVERLAPPED` it is given, and waits until it finishes, `stop` is set, or
/// `limit` passes; in the last two cases it is cancelled. It always returns
/// after the operation finished: the caller's buffer is free again. The
/// bytes transferred; `ConnectionAborted` when `stop` ended it, `TimedOut`
/// when `limit` did.
fn overlapped(
    handle: HANDLE,
    stop: HANDLE,
    limit: Option<Duration>,
    start: impl FnOnce(*mut OVERLAPPED) -> BOOL,
) -> io::Result<u32> {
    let event = new_event()?;
    let mut ov = OVERLAPPED {
        Internal: 0,
        InternalHigh: 0,
        Offset: 0,
        OffsetHigh: 0,
        hEvent: event.as_raw_handle(),
    };
    if start(&mut ov) == 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(ERROR_IO_PENDING) {
            return Err(e); // it never started
        }
        let ms = limit.map_or(INFINITE, |l| {
            l.as_millis().min(u128::from(INFINITE - 1)) as u32
        });
        let waits = [event.as_raw_handle(), stop];
        // SAFETY: two valid handles, alive for the call.
        let woke = unsafe { WaitForMultipleObjects(2, waits.as_ptr(), FALSE, ms) };
        if woke != WAIT_OBJECT_0 {
            // SAFETY: cancels this operation only; collected below.
            unsafe {
                CancelIoEx(handle, &ov);
            }
            let mut n = 0;
            // SAFETY: waits for the operation `ov` describes to finish.
            if unsafe { GetOverlappedResult(handle, &ov, &mut n, TRUE) } != 0 {
                return Ok(n); // it finished before the cancel
            }
            let e = io::Error::last_os_error();
            return Err(match (e.raw_os_error(), woke) {
                (Some(ERROR_OPERATION_ABORTED), WAIT_TIMEOUT) => {
                    io::Error::new(io::ErrorKind::TimedOut, "no answer in time")
                }
                (Some(ERROR_OPERATION_ABORTED), _) => io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    "the connection is shut down",
                ),
                _ => e,
            });
        }
    }
    let mut n = 0;
    // SAFETY: the operation has finished (or finishes now: wait TRUE).
    if unsafe { GetOverlappedResult(handle, &ov, &mut n, TRUE) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n)
}

/// A new manual-reset event, not set.
fn new_event() -> io::Result<OwnedHandle> {
    // SAFETY: no attributes, no name.
    owned(unsafe { CreateEventW(null_mut(), TRUE, FALSE, null()) })
}

/// Whether the event is set, without waiting.
fn is_set(event: &OwnedHandle) -> bool {
    // SAFETY: a valid handle we own.
    unsafe { WaitForSingleObject(event.as_raw_handle(), 0) == WAIT_OBJECT_0 }
}

/// Takes ownership of a handle a call returned, or its error.
fn owned(handle: HANDLE) -> io::Result<OwnedHandle> {
    if handle.is_null() || handle == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a valid handle just returned to us, owned by nothing else.
    Ok(unsafe { OwnedHandle::from_raw_handle(handle) })
}

/// `text` as a NUL-terminated wide string.
fn wide(text: &OsStr) -> Vec<u16> {
    text.encode_wide().chain([0]).collect()
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A user, as a process token's `TOKEN_USER` record (the SID follows the
/// head in the same buffer, which `u64`s keep aligned).
struct User(Vec<u64>);

impl User {
    fn sid(&self) -> *mut c_void {
        // SAFETY: the buffer begins with the TOKEN_USER the system wrote.
        unsafe { (*self.0.as_ptr().cast::<TOKEN_USER>()).Sid }
    }

    /// `S-1-5-21-…`.
    fn sid_string(&self) -> io::Result<String> {
        let mut text: *mut u16 = null_mut();
        // SAFETY: the SID is valid; the system allocates the string, which
        // is read up to its NUL and freed here.
        unsafe {
            if ConvertSidToStringSidW(self.sid(), &mut text) == 0 {
                return Err(io::Error::last_os_error());
            }
            let len = (0..).take_while(|&i| *text.add(i) != 0).count();
            let sid = String::from_utf16_lossy(std::slice::from_raw_parts(text, len));
            LocalFree(text.cast());
            Ok(sid)
        }
    }
}

/// The user this process runs as.
struct CurrentUser {
    user: User,
    sid_string: String,
}

fn current_user() -> Result<&'static CurrentUser, String> {
    static CURRENT: OnceLock<Result<CurrentUser, String>> = OnceLock::new();
    CURRENT
        .get_or_init(|| {
            // SAFETY: the pseudo-handle of this process needs no closing.
            let user = token_user(unsafe { GetCurrentProcess() });
            let made = user.and_then(|user| {
                let sid_string = user.sid_string()?;
                Ok(CurrentUser { user, sid_string })
            });
            made.map_err(|e| format!("cannot read this process's user: {e}"))
        })
        .as_ref()
        .map_err(String::clone)
}

/// The user process `pid` runs as.
fn user_of(pid: u32) -> io::Result<User> {
    // SAFETY: opens a handle that `owned` then owns.
    let process = owned(unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, pid) })?;
    token_user(process.as_raw_handle())
}

/// The user of `process`'s token.
fn token_user(process: HANDLE) -> io::Result<User> {
    let mut token: HANDLE = null_mut();
    // SAFETY: `process` is valid; the token handle is written to a local.
    if unsafe { OpenProcessToken(process, TOKEN_QUERY, &mut token) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let token = owned(token)?;
    let mut len = 0u32;
    // SAFETY: asks for the size only (no buffer).
    unsafe {
        GetTokenInformation(
            token.as_raw_handle(),
            TOKEN_USER_CLASS,
            null_mut(),
            0,
            &mut len,
        );
    }
    if len == 0 {
        return Err(io::Error::last_os_error());
    }
    let mut buf = vec![0u64; (len as usize).div_ceil(8)];
    // SAFETY: the buffer holds at least `len` bytes.
    let ok = unsafe {
        GetTokenInformation(
            token.as_raw_handle(),
            TOKEN_USER_CLASS,
            buf.as_mut_ptr().cast(),
            len,
            &mut len,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(User(buf))
}

/// A security descriptor the system allocated (freed on drop).
struct Descriptor(*mut c_void);

// SAFETY: the descriptor is only read after it was made, from any thread.
unsafe impl Send for Descriptor {}
// SAFETY: as for Send.
unsafe impl Sync for Descriptor {}

impl Descriptor {
    /// Full access for the user `sid` alone, inheriting nothing.
    fn only(sid: &str) -> io::Result<Descriptor> {
        let sddl = wide(OsStr::new(&format!("D:P(A;;GA;;;{sid})")));
        let mut descriptor = null_mut();
        // SAFETY: the SDDL is NUL-terminated; the system allocates the
        // descriptor, which we own from here.
        let ok = unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                sddl.as_ptr(),
                SDDL_REVISION_1,
                &mut descriptor,
                null_mut(),
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Descriptor(descriptor))
    }
}

impl Drop for Descriptor {
    fn drop(&mut self) {
        // SAFETY: allocated by the system for us, freed once.
        unsafe {
            LocalFree(self.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread;

    /// An endpoint of this test process alone.
    fn endpoint_for(test: &str) -> PathBuf {
        endpoint(
            Path::new(""),
            &format!("test-{}-{test}", std::process::id()),
        )
    }

    /// A listener at `name` and a connected pair: (fleet's end, session's end).
    fn pair(name: &str) -> (Listener, Stream, Stream) {
        let at = endpoint_for(name);
        let listener = Listener::bind(&at).unwrap();
        let client = thread::spawn(move || Stream::connect(&at).unwrap());
        let server = listener.accept().unwrap();
        (listener, server, client.join().unwrap())
    }

    #[test]
    fn a_read_blocked_on_one_thread_holds_up_no_write_and_shutdown_wakes_it() {
        let (_listener, server, mut client) = pair("duplex");
        assert_eq!(server.peer_check(), Ok(()));
        assert_eq!(client.peer_check(), Ok(()));
        let mut reading = server.try_clone().unwrap();
        let reader = thread::spawn(move || {
            let mut buf = [0u8; 16];
            let n = reading.read(&mut buf).unwrap();
            let first = buf[..n].to_vec();
            // Blocked again until the shutdown below: then the end.
            let end = reading.read(&mut buf).unwrap();
            (first, end)
        });
        thread::sleep(Duration::from_millis(100));
        // The fleet's end writes while its other thread waits in a read.
        let mut writing = server.try_clone().unwrap();
        writing.write_all(b"to the session\n").unwrap();
        let mut got = [0u8; 15];
        client.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"to the session\n");
        client.write_all(b"to the fleet").unwrap();
        thread::sleep(Duration::from_millis(100));
        server.shutdown();
        let (first, end) = reader.join().unwrap();
        assert_eq!(first, b"to the fleet");
        assert_eq!(end, 0, "a shut connection reads as ended");
        assert!(
            writing.write_all(b"more").is_err(),
            "writes fail after shutdown"
        );
        let mut buf = [0u8; 4];
        assert_eq!(
            client.read(&mut buf).unwrap(),
            0,
            "the session sees the end"
        );
    }

    #[test]
    fn a_read_timeout_ends_a_read_that_gets_nothing() {
        let (_listener, _server, mut client) = pair("timeout");
        client
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let started = Instant::now();
        let err = client.read(&mut [0u8; 8]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut, "{err}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn one_listener_per_endpoint_and_a_missing_one_is_not_found() {
        let at = endpoint_for("twice");
        let first = Listener::bind(&at).unwrap();
        let second = Listener::bind(&at).err().expect("the name is taken");
        assert_eq!(second.kind(), io::ErrorKind::AddrInUse, "{second}");
        drop(first);
        let missing = Stream::connect(&endpoint_for("missing")).err().unwrap();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound, "{missing}");
    }

    #[test]
    fn after_remove_no_session_reaches_the_listener() {
        let at = endpoint_for("remove");
        let listener = Listener::bind(&at).unwrap();
        // Its accept thread parks for ever once removed (the process ends).
        thread::spawn(move || {
            let _ = listener.accept();
        });
        thread::sleep(Duration::from_millis(100));
        remove(&at);
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match Stream::connect(&at) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                _ => assert!(Instant::now() < deadline, "the pipe still takes sessions"),
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn endpoints_carry_the_users_sid() {
        let sid = &current_user().unwrap().sid_string;
        assert!(sid.starts_with("S-1-"), "{sid}");
        let at = endpoint(Path::new("ignored"), "fleet-x");
        assert_eq!(
            at,
            PathBuf::from(format!(r"\\.\pipe\mcp-workbench-{sid}-fleet-x"))
        );
    }
}
