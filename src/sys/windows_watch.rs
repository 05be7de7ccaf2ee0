//! Windows: a child's pipes and its exit as one `WaitForMultipleObjects`, the
//! only place its thread ever waits.
//!
//! A Windows pipe has no readiness to poll: a read or write is started and
//! finishes later. So the parent's ends are used with overlapped I/O, where
//! `ReadFile` and `WriteFile` return at once and set the event named in their
//! `OVERLAPPED` when the operation finishes. std's `Stdio::piped()` opens the
//! parent's end of each pipe for asynchronous I/O, for its own `read_output`
//! (1.95's `child_pipe` creates it with `NtCreateNamedPipeFile` and no
//! `FILE_SYNCHRONOUS_IO_*` option, the NT form of `FILE_FLAG_OVERLAPPED`;
//! earlier versions' `anon_pipe` used `CreateNamedPipeW` with that flag; the
//! child's ends stay synchronous), so the handles of `ChildStdin`,
//! `ChildStdout` and `ChildStderr` serve as they are. A handle opened for
//! synchronous I/O would make these calls block.
//!
//! The one wait covers, in this order:
//! - the wake event (auto-reset), set by `Waker::wake` from any thread;
//! - per open stream, the event of the read `Watch` keeps in flight on it into
//!   its own buffer: set when data came or the stream ended (broken pipe);
//! - when the caller has something queued for stdin, `Stdin`'s event, set
//!   while no write of its is in flight (the pipe took the last one);
//! - the process handle, set at the exit, until the exit was reported.
//!
//! `Stdin::try_write` copies what it accepts into its own buffer and starts
//! one overlapped write of it, so it never blocks, from whichever thread; it
//! refuses (`WouldBlock`) while that write is in flight.
//!
//! A helper process that inherited the pipes (a server's own child) keeps them
//! open after the process we started has exited: the exit is still seen
//! through the process handle, and the reads end with a broken pipe once the
//! tree is killed, since the Job Object (`windows`) holds every process that
//! can hold the pipes and terminating it closes all their ends.
//!
//! Pending I/O is cancelled when the thread that started it exits. A write
//! cancelled that way (a short-lived thread called `try_write`) is restarted
//! from where it stopped by the next `try_write`, a read by the next `wait` or
//! `read`; nothing is lost.

use super::win32::*;
use super::{Ready, Stream};
use std::fmt;
use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::ptr::{null, null_mut};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The most one `Stdin::try_write` accepts: one write in flight at a time.
const WRITE_MAX: usize = 64 * 1024;

/// Each stream's read buffer. It is allocated zeroed, so the pages a child's
/// small writes never reach are never touched.
const READ_BUFFER: usize = 64 * 1024;

/// A new event: manual-reset or auto-reset, set or not.
fn new_event(manual_reset: bool, set: bool) -> io::Result<OwnedHandle> {
    // SAFETY: no security attributes and no name; the new handle is ours.
    let event = unsafe {
        CreateEventW(
            null_mut(),
            BOOL::from(manual_reset),
            BOOL::from(set),
            null(),
        )
    };
    if event.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a valid handle that we just created and nothing else owns.
    Ok(unsafe { OwnedHandle::from_raw_handle(event) })
}

/// An `OVERLAPPED` that sets `event` when its operation finishes, on the heap
/// so that it stays where the system writes it while the owner moves.
fn new_overlapped(event: &OwnedHandle) -> Box<OVERLAPPED> {
    Box::new(OVERLAPPED {
        Internal: 0,
        InternalHigh: 0,
        Offset: 0,
        OffsetHigh: 0,
        hEvent: event.as_raw_handle(),
    })
}

/// Clears what the last operation left (pipes ignore the offset), keeping the event.
fn reset(overlapped: &mut OVERLAPPED) {
    overlapped.Internal = 0;
    overlapped.InternalHigh = 0;
    overlapped.Offset = 0;
    overlapped.OffsetHigh = 0;
}

/// Whether `handle` (an event or a process) is set, without waiting.
fn is_set(handle: &OwnedHandle) -> bool {
    // SAFETY: a wait with no timeout on a valid handle that we own.
    unsafe { WaitForSingleObject(handle.as_raw_handle(), 0) == WAIT_OBJECT_0 }
}

/// The parent's end of a child's stdin: written without blocking, from any
/// thread (the main thread on the hot path, the child's thread for the rest).
pub(crate) struct Stdin {
    pipe: OwnedHandle,
    /// Manual-reset; set while no write is in flight (the one started last
    /// has finished), so `Watch::wait` wakes when stdin takes more.
    idle: OwnedHandle,
    write: Mutex<Write>,
}

/// The one write a `Stdin` has in flight or has just finished.
struct Write {
    /// Neither moved nor freed while `in_flight` (see `Drop for Stdin`).
    overlapped: Box<OVERLAPPED>,
    /// What was accepted and is being written; its heap block is neither
    /// reallocated nor freed while `in_flight`.
    buf: Vec<u8>,
    /// How much of `buf` the pipe took.
    written: usize,
    in_flight: bool,
}

// SAFETY: `Write` is only reached through its `Stdin`'s mutex. Its raw parts
// (the OVERLAPPED's event handle, the buffer the system writes from) are not
// tied to a thread: any thread may collect or cancel the operation.
unsafe impl Send for Write {}

impl fmt::Debug for Stdin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stdin")
            .field("pipe", &self.pipe)
            .finish_non_exhaustive()
    }
}

impl Stdin {
    /// Takes the parent's end of the pipe, which must be open for overlapped
    /// I/O (`ChildStdin` is).
    pub(crate) fn new(pipe: impl Into<OwnedHandle>) -> io::Result<Stdin> {
        let idle = new_event(true, true)?;
        let write = Write {
            overlapped: new_overlapped(&idle),
            buf: Vec::new(),
            written: 0,
            in_flight: false,
        };
        Ok(Stdin {
            pipe: pipe.into(),
            idle,
            write: Mutex::new(write),
        })
    }

    /// Accepts up to 64 KiB of `bytes` and starts writing them: `WouldBlock`
    /// (nothing accepted) while the previous write is in flight. A write that
    /// failed after being accepted (the child closed its end: a broken pipe)
    /// reports its error here, on the next call. `try_write(&[])` tells
    /// whether everything accepted so far went out (`Ok(0)`) or not yet.
    pub(crate) fn try_write(&self, bytes: &[u8]) -> io::Result<usize> {
        let mut write = self.write.lock().unwrap_or_else(PoisonError::into_inner);
        let w = &mut *write;
        if w.in_flight && !self.finish(w)? {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        // The rest of a write cancelled with the thread that started it.
        self.start(w)?;
        if w.in_flight {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        if bytes.is_empty() {
            return Ok(0);
        }
        let n = bytes.len().min(WRITE_MAX);
        w.buf.clear();
        w.buf.extend_from_slice(&bytes[..n]);
        w.written = 0;
        self.start(w)?;
        Ok(n)
    }

    /// Whether bytes accepted have not all gone out yet: a write in flight,
    /// or the rest of one cancelled with the thread that started it, which
    /// only a later `try_write` resumes.
    pub(crate) fn in_flight(&self) -> bool {
        let w = self.write.lock().unwrap_or_else(PoisonError::into_inner);
        w.in_flight || w.written < w.buf.len()
    }

    /// Writes the rest of `w.buf`, until a write stays in flight.
    fn start(&self, w: &mut Write) -> io::Result<()> {
        while !w.in_flight && w.written < w.buf.len() {
            let rest = &w.buf[w.written..];
            reset(&mut w.overlapped);
            // SAFETY: the buffer and the OVERLAPPED are heap blocks that stay
            // in place, unchanged, until the write has finished: `finish`
            // collects it before either is touched again, and `Drop` cancels
            // it and waits for it before freeing them. The length fits: at
            // most WRITE_MAX.
            let ok = unsafe {
                WriteFile(
                    self.pipe.as_raw_handle(),
                    rest.as_ptr().cast(),
                    rest.len() as u32,
                    null_mut(),
                    &mut *w.overlapped,
                )
            };
            w.in_flight = true;
            if ok == 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() == Some(ERROR_IO_PENDING) {
                    return Ok(());
                }
                // Nothing started: the event may stay reset; set it again.
                w.in_flight = false;
                w.buf.clear();
                w.written = 0;
                // SAFETY: sets an event that we own.
                unsafe {
                    SetEvent(self.idle.as_raw_handle());
                }
                return Err(e);
            }
            // Finished at once: count what it wrote.
            if !self.finish(w)? {
                return Ok(());
            }
        }
        Ok(())
    }

    /// Collects the write in flight if it has finished: `Ok(false)` while it
    /// has not, its error if it failed.
    fn finish(&self, w: &mut Write) -> io::Result<bool> {
        let mut n = 0u32;
        // SAFETY: the OVERLAPPED of the write in flight on this handle, which
        // stays in place until it has finished; `n` is ours.
        let ok = unsafe {
            GetOverlappedResult(self.pipe.as_raw_handle(), &*w.overlapped, &mut n, FALSE)
        };
        if ok == 0 {
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(ERROR_IO_INCOMPLETE) => return Ok(false),
                // Cancelled with the thread that started it: `start` goes on
                // from what it wrote.
                Some(ERROR_OPERATION_ABORTED) => {}
                _ => {
                    w.in_flight = false;
                    w.buf.clear();
                    w.written = 0;
                    return Err(e);
                }
            }
        }
        w.in_flight = false;
        w.written = (w.written + n as usize).min(w.buf.len());
        if w.written == w.buf.len() {
            w.buf.clear();
            w.written = 0;
        }
        Ok(true)
    }
}

impl Drop for Stdin {
    fn drop(&mut self) {
        let w = self.write.get_mut().unwrap_or_else(PoisonError::into_inner);
        if w.in_flight {
            let mut n = 0u32;
            // SAFETY: cancels the write whose OVERLAPPED we own (from
            // whichever thread started it), then waits until the system is
            // done with it, before the buffer and the OVERLAPPED are freed.
            unsafe {
                CancelIoEx(self.pipe.as_raw_handle(), &*w.overlapped);
                GetOverlappedResult(self.pipe.as_raw_handle(), &*w.overlapped, &mut n, TRUE);
            }
        }
    }
}

/// Wakes a child's thread out of `Watch::wait`, from any thread, without blocking.
#[derive(Clone, Debug)]
pub(crate) struct Waker(Arc<OwnedHandle>);

impl Waker {
    pub(crate) fn wake(&self) {
        // An event already set holds a wake-up: nothing is lost.
        // SAFETY: sets an event that we own.
        unsafe {
            SetEvent(self.0.as_raw_handle());
        }
    }
}

/// A remote server's pump wait (Windows): its `Waker`'s event alone. An
/// event stream's socket is not in the wait: a reader thread of its own
/// reads it and wakes the pump (ARCHITECTURE.md, "Threads").
#[cfg(feature = "remote")]
pub(crate) struct NetWait {
    wake: Arc<OwnedHandle>,
}

#[cfg(feature = "remote")]
impl NetWait {
    pub(crate) fn new() -> io::Result<(NetWait, Waker)> {
        let wake = Arc::new(new_event(false, false)?);
        Ok((NetWait { wake: wake.clone() }, Waker(wake)))
    }

    /// Waits until a `Waker` woke the wait or `timeout` passed (`None`: no
    /// limit). The socket is never given here (see above): false.
    pub(crate) fn wait(
        &mut self,
        _socket: Option<&std::net::TcpStream>,
        timeout: Option<Duration>,
    ) -> io::Result<bool> {
        let ms = match timeout {
            None => INFINITE,
            // Round up, so a deadline is never woken for just before it.
            Some(t) => u32::try_from(t.as_micros().div_ceil(1000))
                .unwrap_or(INFINITE)
                .min(INFINITE - 1),
        };
        // SAFETY: a wait on a valid event that we own; it clears the
        // (auto-reset) event when it returns for it.
        let rc = unsafe { WaitForSingleObject(self.wake.as_raw_handle(), ms) };
        if rc == WAIT_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(false)
    }
}

/// Where one stream's read stands.
enum ReadState {
    /// No read in flight: one is started by the next `advance`.
    Idle,
    InFlight,
    /// The read brought `buf[start..end]`, not yet all taken.
    Data {
        start: usize,
        end: usize,
    },
    /// The stream ended (broken pipe): `read` says 0.
    Ended,
    /// The read failed otherwise: `read` returns this once, then 0.
    Failed(io::Error),
}

/// The parent's end of a child's stdout or stderr and the read kept on it.
struct Reader {
    pipe: OwnedHandle,
    /// Manual-reset; set when the read in flight finishes.
    done: OwnedHandle,
    /// Neither moved nor freed while a read is in flight (see `Drop`).
    overlapped: Box<OVERLAPPED>,
    /// What the read fills: likewise.
    buf: Box<[u8]>,
    state: ReadState,
}

// SAFETY: a `Reader` is used by one thread at a time (`Watch` is `Send`, not
// `Sync`). Its raw parts (the OVERLAPPED's event handle, the buffer the system
// fills) are not tied to a thread: any thread may collect or cancel the read.
unsafe impl Send for Reader {}

impl Reader {
    fn new(pipe: OwnedHandle) -> io::Result<Reader> {
        let done = new_event(true, false)?;
        Ok(Reader {
            overlapped: new_overlapped(&done),
            buf: vec![0; READ_BUFFER].into_boxed_slice(),
            pipe,
            done,
            state: ReadState::Idle,
        })
    }

    /// Takes the read as far as it goes without waiting: starts one when none
    /// is in flight, collects the one in flight if it finished. A read that
    /// brings nothing (the child wrote 0 bytes, or the read was cancelled
    /// with the thread that started it) is started again, a few times at most.
    fn advance(&mut self) {
        for _ in 0..8 {
            match self.state {
                ReadState::Idle => self.start(),
                ReadState::InFlight => {
                    if !self.collect() {
                        return;
                    }
                }
                _ => return,
            }
        }
    }

    fn start(&mut self) {
        reset(&mut self.overlapped);
        // SAFETY: the buffer and the OVERLAPPED are heap blocks that stay in
        // place, untouched, until the read has finished: `collect` sees it
        // finish before `buf` is read, and `Drop` cancels it and waits for it
        // before freeing them. The length fits: READ_BUFFER.
        let ok = unsafe {
            ReadFile(
                self.pipe.as_raw_handle(),
                self.buf.as_mut_ptr().cast(),
                self.buf.len() as u32,
                null_mut(),
                &mut *self.overlapped,
            )
        };
        // Finished at once or not, `collect` gets the count.
        self.state = ReadState::InFlight;
        if ok == 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(ERROR_IO_PENDING) {
                self.state = ended_or_failed(e);
            }
        }
    }

    /// Collects the read in flight if it has finished: false while it has not.
    fn collect(&mut self) -> bool {
        let mut n = 0u32;
        // SAFETY: the OVERLAPPED of the read in flight on this handle, which
        // stays in place until it has finished; `n` is ours.
        let ok = unsafe {
            GetOverlappedResult(self.pipe.as_raw_handle(), &*self.overlapped, &mut n, FALSE)
        };
        self.state = if ok != 0 {
            match n as usize {
                0 => ReadState::Idle,
                end => ReadState::Data { start: 0, end },
            }
        } else {
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(ERROR_IO_INCOMPLETE) => return false,
                Some(ERROR_OPERATION_ABORTED) => ReadState::Idle,
                _ => ended_or_failed(e),
            }
        };
        true
    }

    fn in_flight(&self) -> bool {
        matches!(self.state, ReadState::InFlight)
    }

    /// Data, the end or an error waits to be read.
    fn ready(&self) -> bool {
        !matches!(self.state, ReadState::Idle | ReadState::InFlight)
    }
}

/// The end of a stream for a broken pipe (every writer closed its end),
/// otherwise a failure.
fn ended_or_failed(e: io::Error) -> ReadState {
    match e.raw_os_error() {
        Some(ERROR_BROKEN_PIPE | ERROR_HANDLE_EOF | ERROR_PIPE_NOT_CONNECTED) => ReadState::Ended,
        _ => ReadState::Failed(e),
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        if self.in_flight() {
            let mut n = 0u32;
            // SAFETY: cancels the read whose OVERLAPPED we own, then waits
            // until the system is done with it, before the buffer and the
            // OVERLAPPED are freed (the pipe handle closes after this).
            unsafe {
                CancelIoEx(self.pipe.as_raw_handle(), &*self.overlapped);
                GetOverlappedResult(self.pipe.as_raw_handle(), &*self.overlapped, &mut n, TRUE);
            }
        }
    }
}

/// What one child's thread waits on.
pub(crate) struct Watch {
    stdout: Option<Reader>,
    stderr: Option<Reader>,
    /// The process, set when it exits; `None` once the exit was reported.
    exit: Option<OwnedHandle>,
    /// Auto-reset: a wait that returns for it clears it.
    wake: Arc<OwnedHandle>,
}

impl Watch {
    /// Watches the child `pid` through the parent's ends of its stdout and
    /// stderr, which must be open for overlapped I/O (`ChildStdout` and
    /// `ChildStderr` are). The pid is opened here: it names our child as long
    /// as a handle to it is open (its `Child`, its `Tree`), as it must be.
    pub(crate) fn new(
        pid: u32,
        stdout: impl Into<OwnedHandle>,
        stderr: impl Into<OwnedHandle>,
    ) -> io::Result<(Watch, Waker)> {
        // SAFETY: takes plain values; returns a new handle that we own, or null.
        let process = unsafe { OpenProcess(SYNCHRONIZE, FALSE, pid) };
        if process.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a valid handle that we just opened and nothing else owns.
        let process = unsafe { OwnedHandle::from_raw_handle(process) };
        let wake = Arc::new(new_event(false, false)?);
        let watch = Watch {
            stdout: Some(Reader::new(stdout.into())?),
            stderr: Some(Reader::new(stderr.into())?),
            exit: Some(process),
            wake: wake.clone(),
        };
        Ok((watch, Waker(wake)))
    }

    /// False: the process handle reports the exit in `wait`.
    pub(crate) fn polls_exit(&self) -> bool {
        false
    }

    /// Waits until a watched stream has data (or ended), `stdin` (when
    /// given: something is queued for it) has no write in flight, the process
    /// exited, a `Waker` woke it, or `timeout` passed (`None`: no limit).
    pub(crate) fn wait(
        &mut self,
        stdin: Option<&Stdin>,
        timeout: Option<Duration>,
    ) -> io::Result<Ready> {
        let readers = [self.stdout.as_mut(), self.stderr.as_mut()];
        readers.into_iter().flatten().for_each(Reader::advance);
        let ready_now = [&self.stdout, &self.stderr]
            .into_iter()
            .flatten()
            .any(Reader::ready);
        let mut handles = [null_mut(); 5];
        let mut count = 0;
        let watched = std::iter::once(&*self.wake)
            .chain(
                [&self.stdout, &self.stderr]
                    .into_iter()
                    .flatten()
                    .filter(|r| r.in_flight())
                    .map(|r| &r.done),
            )
            .chain(stdin.map(|s| &s.idle))
            .chain(self.exit.as_ref());
        for handle in watched {
            handles[count] = handle.as_raw_handle();
            count += 1;
        }
        let ms = match timeout {
            _ if ready_now => 0,
            None => INFINITE,
            // Round up, so a deadline is never woken for just before it.
            Some(t) => u32::try_from(t.as_micros().div_ceil(1000))
                .unwrap_or(INFINITE)
                .min(INFINITE - 1),
        };
        // SAFETY: waits on `count` (at most 5) valid handles that we own, in
        // an array we own; clears the wake event if it returns for it.
        let rc = unsafe { WaitForMultipleObjects(count as u32, handles.as_ptr(), FALSE, ms) };
        if rc == WAIT_FAILED {
            return Err(io::Error::last_os_error());
        }
        // The wait names one handle: look at each.
        let readers = [self.stdout.as_mut(), self.stderr.as_mut()];
        readers.into_iter().flatten().for_each(Reader::advance);
        let exited = self.exit.as_ref().is_some_and(is_set);
        if exited {
            self.exit = None;
        }
        Ok(Ready {
            stdout: self.stdout.as_ref().is_some_and(Reader::ready),
            stderr: self.stderr.as_ref().is_some_and(Reader::ready),
            stdin: stdin.is_some_and(|s| is_set(&s.idle)),
            exited,
        })
    }

    /// Reads what `stream` holds now: `Ok(0)` at its end, `WouldBlock` when
    /// it holds nothing; a closed stream reads as ended. Starts the next read
    /// once the last one's data is all taken.
    pub(crate) fn read(&mut self, stream: Stream, buf: &mut [u8]) -> io::Result<usize> {
        let Some(reader) = self.stream(stream) else {
            return Ok(0);
        };
        reader.advance();
        match &mut reader.state {
            ReadState::Data { start, end } => {
                let n = (*end - *start).min(buf.len());
                buf[..n].copy_from_slice(&reader.buf[*start..*start + n]);
                *start += n;
                if start == end {
                    reader.state = ReadState::Idle;
                    reader.advance();
                }
                Ok(n)
            }
            ReadState::Idle | ReadState::InFlight => Err(io::ErrorKind::WouldBlock.into()),
            ReadState::Ended => Ok(0),
            ReadState::Failed(_) => match std::mem::replace(&mut reader.state, ReadState::Ended) {
                ReadState::Failed(e) => Err(e),
                _ => Ok(0),
            },
        }
    }

    /// Stops watching `stream` and closes the parent's end (cancelling the
    /// read in flight and waiting for it first).
    pub(crate) fn close(&mut self, stream: Stream) {
        *self.stream(stream) = None;
    }

    fn stream(&mut self, stream: Stream) -> &mut Option<Reader> {
        match stream {
            Stream::Stdout => &mut self.stdout,
            Stream::Stderr => &mut self.stderr,
        }
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // the tests spawn their stand-in children
pub(super) mod tests {
    use super::*;
    use crate::sys::watch_tests::{read_until, Role};
    use std::io::Write;
    use std::process::{Child, Command, Stdio};
    use std::time::Instant;

    /// The variable that makes `child_role` play a child of these tests.
    const ROLE: &str = "MCP_WORKBENCH_WATCH_ROLE";

    /// This test binary, set to run `child_role` alone as `role`. (Wine has no
    /// `sleep` or `cat`; the test binary does the same on any Windows.)
    fn role_command(role: &str) -> Command {
        let test = concat!(module_path!(), "::child_role");
        let test = test.split_once("::").map_or(test, |(_, path)| path);
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args([test, "--exact", "--ignored", "--nocapture", "--quiet"])
            .env(ROLE, role);
        cmd
    }

    /// Not a test: the child processes of the tests below, run by `spawn`.
    /// What it writes comes after the harness's "running 1 test" line.
    #[test]
    #[ignore = "a child of the other tests, run through MCP_WORKBENCH_WATCH_ROLE"]
    fn child_role() {
        let Ok(role) = std::env::var(ROLE) else {
            return;
        };
        let pause = |secs| std::thread::sleep(Duration::from_secs(secs));
        match role.as_str() {
            "echo" => {
                let mut line = String::new();
                io::stdin().read_line(&mut line).unwrap();
                let mut out = io::stdout();
                out.write_all(format!("out:{line}").as_bytes()).unwrap();
                out.flush().unwrap();
                io::stderr().write_all(b"err\n").unwrap();
            }
            "slow-reader" => {
                pause(1);
                let n = io::copy(&mut io::stdin(), &mut io::sink()).unwrap();
                io::stdout().write_all(format!("{n}\n").as_bytes()).unwrap();
            }
            "sleeper" => pause(30),
            // Leaves a helper holding stdout and stderr, and exits at once.
            "parent" => {
                role_command("helper").stdin(Stdio::null()).spawn().unwrap();
                std::process::exit(3);
            }
            "helper" => pause(3),
            _ => panic!("no role {role}"),
        }
        // Skips the harness's summary.
        std::process::exit(0);
    }

    /// This test binary playing `role` (`watch_tests`), with the parent's
    /// ends watched.
    pub(in crate::sys) fn spawn(role: Role) -> (Child, Watch, Waker, Stdin) {
        let role = match role {
            Role::Echo => "echo",
            Role::SlowReader => "slow-reader",
            Role::Sleeper => "sleeper",
            Role::Parent => "parent",
        };
        let mut child = role_command(role)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the test binary runs");
        let stdin = Stdin::new(child.stdin.take().unwrap()).unwrap();
        let (mut watch, waker) = Watch::new(
            child.id(),
            child.stdout.take().unwrap(),
            child.stderr.take().unwrap(),
        )
        .unwrap();
        let preamble = read_until(&mut watch, Stream::Stdout, b"running 1 test\n");
        assert!(preamble.ends_with(b"running 1 test\n"), "{preamble:?}");
        (child, watch, waker, stdin)
    }

    /// A write whose thread exits (which cancels it) goes on with the next
    /// `try_write`: every byte accepted reaches the child, once.
    #[test]
    fn a_write_outlives_the_thread_that_started_it() {
        let (mut child, mut watch, _waker, stdin) = spawn(Role::SlowReader);
        let stdin = Arc::new(stdin);
        let writer = stdin.clone();
        let accepted = std::thread::spawn(move || {
            let chunk = vec![b'y'; 1 << 16];
            let mut total = 0;
            while let Ok(n) = writer.try_write(&chunk) {
                total += n;
            }
            total
        })
        .join()
        .unwrap();
        let start = Instant::now();
        loop {
            match stdin.try_write(b"") {
                Ok(0) => break,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                other => panic!("{other:?}"),
            }
            assert!(start.elapsed() < Duration::from_secs(10), "never written");
            watch
                .wait(Some(&stdin), Some(Duration::from_secs(1)))
                .unwrap();
        }
        drop(stdin);
        let count = read_until(&mut watch, Stream::Stdout, b"");
        assert_eq!(count, format!("{accepted}\n").as_bytes());
        assert!(child.wait().unwrap().success());
    }

    /// Killing the tree (its Job Object) ends the reads a helper holds open.
    #[test]
    fn killing_the_tree_ends_reads_that_a_helper_holds() {
        let mut cmd = role_command("parent");
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let (mut child, tree) = super::super::Tree::spawn(&mut cmd).unwrap();
        let _stdin = Stdin::new(child.stdin.take().unwrap()).unwrap();
        let (mut watch, _waker) = Watch::new(
            child.id(),
            child.stdout.take().unwrap(),
            child.stderr.take().unwrap(),
        )
        .unwrap();
        let start = Instant::now();
        while !watch
            .wait(None, Some(Duration::from_secs(1)))
            .unwrap()
            .exited
        {
            assert!(start.elapsed() < Duration::from_secs(10), "no exit seen");
        }
        tree.kill();
        let killed = Instant::now();
        read_until(&mut watch, Stream::Stdout, b"");
        read_until(&mut watch, Stream::Stderr, b"");
        assert!(
            killed.elapsed() < Duration::from_secs(2),
            "the helper's ends stayed open"
        );
        watch.close(Stream::Stdout);
        assert_eq!(watch.read(Stream::Stdout, &mut [0; 8]).unwrap(), 0);
        child.wait().unwrap();
    }

    /// Closing a stream with a read in flight cancels it.
    #[test]
    fn closing_a_stream_cancels_its_read() {
        let (mut child, mut watch, _waker, _stdin) = spawn(Role::Sleeper);
        let ready = watch.wait(None, Some(Duration::from_millis(50))).unwrap();
        assert!(!ready.stdout && !ready.stderr, "{ready:?}");
        let start = Instant::now();
        watch.close(Stream::Stdout);
        watch.close(Stream::Stderr);
        assert!(start.elapsed() < Duration::from_secs(2));
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
