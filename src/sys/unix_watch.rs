//! Unix (Linux, macOS): a child's pipes and its exit as one `poll`, the only
//! place its thread ever waits.
//!
//! The parent's ends of stdin, stdout and stderr are non-blocking (they are
//! the parent's own open files; the child's ends keep blocking), so no read
//! or write here can hold the thread. The exit of the process itself is a
//! descriptor in the same `poll`: a pidfd on Linux (5.3 and later), a kqueue
//! watching `EVFILT_PROC`/`NOTE_EXIT` on macOS. Where neither exists (older
//! kernels) the wait is cut to `EXIT_POLL` and the caller asks `Tree::exited`.
//! Any thread wakes the wait through the `Waker`, a non-blocking pipe whose
//! bytes are drained by `wait`.
//!
//! On Linux the wait is an `epoll` set: the descriptors are registered once
//! (and again only when one comes or goes: stdin with bytes queued, a closed
//! stream), so a wake-up costs one `epoll_wait` whatever the number of
//! descriptors. `poll` re-registers all five on every call, which costs the
//! hot path about 2 µs per call on the one-core placement. Elsewhere it is
//! `poll`.

use super::{Ready, Stream};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::time::Duration;

/// How often the exit is polled where no descriptor can report it.
const EXIT_POLL: Duration = Duration::from_millis(100);

/// The parent's end of a child's stdin: written without blocking, from any
/// thread (the main thread on the hot path, the child's thread for the rest).
#[derive(Debug)]
pub(crate) struct Stdin(File);

impl Stdin {
    pub(crate) fn new(pipe: impl Into<OwnedFd>) -> io::Result<Stdin> {
        let fd: OwnedFd = pipe.into();
        set_nonblocking(fd.as_raw_fd())?;
        Ok(Stdin(File::from(fd)))
    }

    /// False: what a write took is in the pipe (Windows differs).
    pub(crate) fn in_flight(&self) -> bool {
        false
    }

    /// Writes what the pipe takes now: `WouldBlock` when it takes nothing.
    pub(crate) fn try_write(&self, bytes: &[u8]) -> io::Result<usize> {
        (&self.0).write(bytes)
    }
}

/// Wakes a child's thread out of `Watch::wait`, from any thread, without blocking.
#[derive(Clone, Debug)]
pub(crate) struct Waker(Arc<File>);

impl Waker {
    /// A waker whose wake-ups go nowhere: for a connection without a child
    /// (the unit tests feed its events by hand).
    #[cfg(test)]
    pub(crate) fn detached() -> Waker {
        let (_, writer) = std::io::pipe().expect("a pipe");
        Waker(Arc::new(File::from(OwnedFd::from(writer))))
    }

    pub(crate) fn wake(&self) {
        // A full pipe already holds a wake-up: nothing is lost.
        let _ = (&*self.0).write(&[1]);
    }
}

/// What one child's thread waits on.
pub(crate) struct Watch {
    stdout: Option<File>,
    stderr: Option<File>,
    /// Readable once the process has exited; `None` where the system has no
    /// such descriptor, or once the exit was reported.
    exit: Option<OwnedFd>,
    /// The exit is polled by the caller (no descriptor reports it).
    polled_exit: bool,
    wake: File,
    set: Set,
}

impl Watch {
    /// Watches the child `pid` through the parent's ends of its stdout and stderr.
    pub(crate) fn new(
        pid: u32,
        stdout: impl Into<OwnedFd>,
        stderr: impl Into<OwnedFd>,
    ) -> io::Result<(Watch, Waker)> {
        let (stdout, stderr): (OwnedFd, OwnedFd) = (stdout.into(), stderr.into());
        set_nonblocking(stdout.as_raw_fd())?;
        set_nonblocking(stderr.as_raw_fd())?;
        let (wake, waker) = io::pipe()?;
        let (wake, waker) = (OwnedFd::from(wake), OwnedFd::from(waker));
        set_nonblocking(wake.as_raw_fd())?;
        set_nonblocking(waker.as_raw_fd())?;
        let exit = exit_descriptor(pid);
        let watch = Watch {
            stdout: Some(File::from(stdout)),
            stderr: Some(File::from(stderr)),
            polled_exit: exit.is_none(),
            exit,
            wake: File::from(wake),
            set: Set::new()?,
        };
        Ok((watch, Waker(Arc::new(File::from(waker)))))
    }

    /// Whether the caller must poll the exit itself after each `wait`
    /// (`Tree::exited`): no descriptor reports it on this system.
    pub(crate) fn polls_exit(&self) -> bool {
        self.polled_exit
    }

    /// Waits until a watched stream is readable (or closed), `stdin` (when
    /// given: something is queued for it) is writable, the process exited, a
    /// `Waker` woke it, or `timeout` passed (`None`: no limit).
    pub(crate) fn wait(
        &mut self,
        stdin: Option<&Stdin>,
        timeout: Option<Duration>,
    ) -> io::Result<Ready> {
        const IN: libc::c_short = libc::POLLIN;
        let slots: Slots = [
            (Some(self.wake.as_raw_fd()), IN),
            (self.stdout.as_ref().map(AsRawFd::as_raw_fd), IN),
            (self.stderr.as_ref().map(AsRawFd::as_raw_fd), IN),
            (stdin.map(|s| s.0.as_raw_fd()), libc::POLLOUT),
            (self.exit.as_ref().map(AsRawFd::as_raw_fd), IN),
        ];
        let timeout = match (timeout, self.polled_exit) {
            (Some(t), true) => Some(t.min(EXIT_POLL)),
            (None, true) => Some(EXIT_POLL),
            (t, false) => t,
        };
        let hits = match self.set.wait(slots, timeout) {
            Ok(hits) => hits,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(Ready::default()),
            Err(e) => return Err(e),
        };
        let hit = |i: usize| hits[i];
        if hit(0) {
            let mut drain = [0u8; 64];
            while matches!((&self.wake).read(&mut drain), Ok(n) if n > 0) {}
        }
        let exited = hit(4);
        if exited {
            self.exit = None;
        }
        Ok(Ready {
            stdout: hit(1),
            stderr: hit(2),
            stdin: hit(3),
            exited,
        })
    }

    /// Reads what `stream` holds now: `Ok(0)` at its end, `WouldBlock` when
    /// it holds nothing; a closed stream reads as ended.
    pub(crate) fn read(&mut self, stream: Stream, buf: &mut [u8]) -> io::Result<usize> {
        match self.stream(stream) {
            Some(file) => file.read(buf),
            None => Ok(0),
        }
    }

    /// Stops watching `stream` and closes the parent's end.
    pub(crate) fn close(&mut self, stream: Stream) {
        *self.stream(stream) = None;
    }

    fn stream(&mut self, stream: Stream) -> &mut Option<File> {
        match stream {
            Stream::Stdout => &mut self.stdout,
            Stream::Stderr => &mut self.stderr,
        }
    }
}

/// The descriptors of one wait, in `Watch::wait`'s order.
type Slots = [(Option<RawFd>, libc::c_short); 5];

/// Linux: an epoll set that follows the slots, changed only when they
/// change, and a timerfd in it for the timeout. The timer is set again only
/// when the timeout asked for ends before it (or it has rung): a call's
/// deadline only moves later from one turn to the next, so while calls come
/// and go the timer is set about once per `callTimeoutMs`, and the wait
/// itself never arms a kernel timer (about 0.3 µs per call on one core).
/// Ringing early is harmless: the caller finds no deadline passed and waits
/// again.
#[cfg(target_os = "linux")]
struct Set {
    epoll: OwnedFd,
    registered: [Option<RawFd>; 5],
    timer: File,
    /// When the timer rings, while it is set.
    rings_at: Option<std::time::Instant>,
}

/// The epoll token of the timer (the slots' are their indexes).
#[cfg(target_os = "linux")]
const TIMER: u64 = 5;

#[cfg(target_os = "linux")]
impl Set {
    fn new() -> io::Result<Set> {
        // SAFETY: epoll_create1 returns a new descriptor that we own, or -1.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the kernel just gave us this descriptor.
        let epoll = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: timerfd_create returns a new descriptor that we own, or -1.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let set = Set {
            epoll,
            registered: [None; 5],
            // SAFETY: the kernel just gave us this descriptor.
            timer: File::from(unsafe { OwnedFd::from_raw_fd(fd) }),
            rings_at: None,
        };
        if set.control(
            libc::EPOLL_CTL_ADD,
            set.timer.as_raw_fd(),
            libc::EPOLLIN as u32,
            TIMER,
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok(set)
    }

    /// Which slots are ready, after `timeout` at most (`None`: no limit).
    fn wait(&mut self, slots: Slots, timeout: Option<Duration>) -> io::Result<[bool; 5]> {
        for (i, (fd, events)) in slots.into_iter().enumerate() {
            if fd == self.registered[i] {
                continue;
            }
            if let Some(old) = self.registered[i].take() {
                // A descriptor closed since leaves the set by itself: ENOENT
                // or EBADF then mean it is gone already.
                self.control(libc::EPOLL_CTL_DEL, old, 0, 0);
            }
            if let Some(new) = fd {
                let events = if events == libc::POLLOUT {
                    libc::EPOLLOUT
                } else {
                    libc::EPOLLIN
                };
                if self.control(libc::EPOLL_CTL_ADD, new, events as u32, i as u64) != 0 {
                    return Err(io::Error::last_os_error());
                }
                self.registered[i] = Some(new);
            }
        }
        let ms = match timeout {
            Some(t) if t.is_zero() => 0,
            Some(t) => {
                self.ring_within(t)?;
                -1
            }
            None => -1,
        };
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 6];
        // SAFETY: epoll_wait writes at most 6 records into the array we own.
        let n = unsafe { libc::epoll_wait(self.epoll.as_raw_fd(), events.as_mut_ptr(), 6, ms) };
        let n = usize::try_from(n).map_err(|_| io::Error::last_os_error())?;
        let mut hits = [false; 5];
        for event in &events[..n] {
            if event.u64 == TIMER {
                let mut rang = [0u8; 8];
                let _ = (&self.timer).read(&mut rang);
                self.rings_at = None;
            } else if let Some(hit) = usize::try_from(event.u64)
                .ok()
                .and_then(|i| hits.get_mut(i))
            {
                *hit = true;
            }
        }
        Ok(hits)
    }

    /// Makes sure the timer rings within `timeout`: sets it, unless it is
    /// set to ring no later than that already.
    fn ring_within(&mut self, timeout: Duration) -> io::Result<()> {
        let now = std::time::Instant::now();
        let at = now + timeout;
        if self
            .rings_at
            .is_some_and(|rings| rings <= at && rings > now)
        {
            return Ok(());
        }
        let value = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                // Capped at 34 years, which fits `time_t` wherever it is 32-bit.
                tv_sec: timeout
                    .as_secs()
                    .min(1 << 30)
                    .try_into()
                    .unwrap_or_default(),
                tv_nsec: timeout.subsec_nanos().into(),
            },
        };
        // SAFETY: timerfd_settime reads the one record we own; no old value.
        if unsafe { libc::timerfd_settime(self.timer.as_raw_fd(), 0, &value, std::ptr::null_mut()) }
            != 0
        {
            return Err(io::Error::last_os_error());
        }
        self.rings_at = Some(at);
        Ok(())
    }

    fn control(&self, op: libc::c_int, fd: RawFd, events: u32, token: u64) -> libc::c_int {
        let mut event = libc::epoll_event { events, u64: token };
        // SAFETY: epoll_ctl reads the one record we own.
        unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), op, fd, &mut event) }
    }
}

/// Elsewhere: `poll` over the slots.
#[cfg(not(target_os = "linux"))]
struct Set;

#[cfg(not(target_os = "linux"))]
impl Set {
    fn new() -> io::Result<Set> {
        Ok(Set)
    }

    /// Which slots are ready, after `timeout` at most (`None`: no limit).
    fn wait(&mut self, slots: Slots, timeout: Option<Duration>) -> io::Result<[bool; 5]> {
        let ms = timeout.map_or(-1, |t| {
            // Round up, so a deadline is never woken for just before it.
            let ms = t.as_micros().div_ceil(1000);
            libc::c_int::try_from(ms).unwrap_or(libc::c_int::MAX)
        });
        let mut fds: [libc::pollfd; 5] = slots.map(|(fd, events)| libc::pollfd {
            fd: fd.unwrap_or(-1), // poll skips negative descriptors
            events,
            revents: 0,
        });
        // SAFETY: poll reads and writes the array we own, of the length we pass.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(fds.map(|fd| fd.revents != 0))
    }
}

/// A host session loop's wait (Unix): its input (the host's stdin, a
/// shared fleet's socket) and a `Waker` the fleet rings when it told the
/// session something, as one wait of the same `Set` a child's thread waits
/// in (on Linux an `epoll` set, so the hot path pays no registration). The
/// input keeps blocking: the loop reads it once `wait` said it is readable,
/// which a pipe, a socket or a file then serves without waiting.
pub(crate) struct InputWait {
    input: RawFd,
    wake: File,
    set: Set,
    /// The input cannot be waited on (epoll refuses a regular file or
    /// `/dev/null`), and reading it never waits: it is always ready.
    always_ready: bool,
}

impl InputWait {
    /// The wait on `input`, which the caller keeps open while it waits.
    pub(crate) fn new(input: RawFd) -> io::Result<(InputWait, Waker)> {
        let (wake, waker) = io::pipe()?;
        let (wake, waker) = (OwnedFd::from(wake), OwnedFd::from(waker));
        set_nonblocking(wake.as_raw_fd())?;
        set_nonblocking(waker.as_raw_fd())?;
        let wait = InputWait {
            input,
            wake: File::from(wake),
            set: Set::new()?,
            always_ready: false,
        };
        Ok((wait, Waker(Arc::new(File::from(waker)))))
    }

    /// Waits until the input is readable (or closed): `true`; or a `Waker`
    /// woke it: `false`, its wake-ups drained.
    pub(crate) fn wait(&mut self) -> io::Result<bool> {
        if self.always_ready {
            return Ok(true);
        }
        let slots: Slots = [
            (Some(self.input), libc::POLLIN),
            (Some(self.wake.as_raw_fd()), libc::POLLIN),
            (None, 0),
            (None, 0),
            (None, 0),
        ];
        let hits = loop {
            match self.set.wait(slots, None) {
                Ok(hits) => break hits,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.raw_os_error() == Some(libc::EPERM) => {
                    self.always_ready = true;
                    return Ok(true);
                }
                Err(e) => return Err(e),
            }
        };
        if hits[1] {
            let mut drained = [0u8; 64];
            while matches!((&self.wake).read(&mut drained), Ok(n) if n > 0) {}
        }
        Ok(hits[0])
    }
}

/// A remote server's pump wait (Unix): its `Waker` and, while it reads an
/// event stream, that stream's socket, in one `poll` (two descriptors, and
/// the socket changes as streams come and go: a poll registers nothing).
#[cfg(feature = "remote")]
pub(crate) struct NetWait {
    wake: File,
}

#[cfg(feature = "remote")]
impl NetWait {
    pub(crate) fn new() -> io::Result<(NetWait, Waker)> {
        let (wake, waker) = io::pipe()?;
        let (wake, waker) = (OwnedFd::from(wake), OwnedFd::from(waker));
        set_nonblocking(wake.as_raw_fd())?;
        set_nonblocking(waker.as_raw_fd())?;
        Ok((
            NetWait {
                wake: File::from(wake),
            },
            Waker(Arc::new(File::from(waker))),
        ))
    }

    /// Waits until `socket` (when given) is readable or closed, a `Waker`
    /// woke the wait, or `timeout` passed (`None`: no limit); whether the
    /// socket is ready. Wake-ups are drained.
    pub(crate) fn wait(
        &mut self,
        socket: Option<&std::net::TcpStream>,
        timeout: Option<Duration>,
    ) -> io::Result<bool> {
        let ms = timeout.map_or(-1, |t| {
            // Round up, so a deadline is never woken for just before it.
            libc::c_int::try_from(t.as_micros().div_ceil(1000)).unwrap_or(libc::c_int::MAX)
        });
        let mut fds = [
            libc::pollfd {
                fd: self.wake.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: socket.map_or(-1, AsRawFd::as_raw_fd), // poll skips -1
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: poll reads and writes the array we own, of the length we pass.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::Interrupted => Ok(false),
                _ => Err(e),
            };
        }
        if fds[0].revents != 0 {
            let mut drained = [0u8; 64];
            while matches!((&self.wake).read(&mut drained), Ok(n) if n > 0) {}
        }
        Ok(fds[1].revents != 0)
    }
}

fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor the caller owns; no memory is passed.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// A descriptor that becomes readable when `pid` exits: a pidfd (Linux 5.3+).
#[cfg(target_os = "linux")]
fn exit_descriptor(pid: u32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes two integers and returns a new descriptor
    // (close-on-exec) that we own, or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    let fd = RawFd::try_from(fd).ok().filter(|&fd| fd >= 0)?;
    // SAFETY: the kernel just gave us this descriptor.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A kqueue that becomes readable when `pid` exits (`EVFILT_PROC`, `NOTE_EXIT`).
#[cfg(target_os = "macos")]
fn exit_descriptor(pid: u32) -> Option<OwnedFd> {
    // SAFETY: kqueue returns a new descriptor that we own, or -1; kevent
    // reads the one change record we own and writes no events (nevents 0).
    unsafe {
        let kq = libc::kqueue();
        if kq < 0 {
            return None;
        }
        let kq = OwnedFd::from_raw_fd(kq);
        libc::fcntl(kq.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC);
        let mut change: libc::kevent = std::mem::zeroed();
        change.ident = pid as libc::uintptr_t;
        change.filter = libc::EVFILT_PROC;
        change.flags = libc::EV_ADD | libc::EV_ONESHOT;
        change.fflags = libc::NOTE_EXIT;
        let rc = libc::kevent(
            kq.as_raw_fd(),
            &change,
            1,
            std::ptr::null_mut(),
            0,
            std::ptr::null(),
        );
        (rc == 0).then_some(kq)
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn exit_descriptor(_pid: u32) -> Option<OwnedFd> {
    None
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // the tests spawn their stand-in children
pub(super) mod tests {
    use super::*;
    use crate::sys::watch_tests::Role;
    use std::process::{Child, Command, Stdio};

    /// A shell playing `role` (`watch_tests`), with the parent's ends watched.
    pub(in crate::sys) fn spawn(role: Role) -> (Child, Watch, Waker, Stdin) {
        let script = match role {
            Role::Echo => "read line; echo \"out:$line\"; echo err >&2",
            Role::SlowReader => "sleep 1; cat >/dev/null",
            Role::Sleeper => "sleep 30",
            Role::Parent => "sleep 3 & exit 3",
        };
        let mut child = Command::new("sh")
            .args(["-c", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("sh runs");
        let stdin = Stdin::new(child.stdin.take().unwrap()).unwrap();
        let (watch, waker) = Watch::new(
            child.id(),
            child.stdout.take().unwrap(),
            child.stderr.take().unwrap(),
        )
        .unwrap();
        (child, watch, waker, stdin)
    }
}

#[cfg(test)]
mod input_wait_tests {
    use super::*;

    #[test]
    fn the_loop_wakes_for_its_waker_and_for_input_and_never_waits_on_a_file() {
        let (reader, mut writer) = io::pipe().unwrap();
        let (mut wait, waker) = InputWait::new(reader.as_raw_fd()).unwrap();
        waker.wake();
        waker.wake();
        assert!(!wait.wait().unwrap(), "woken, and no input");
        writer.write_all(b"{}\n").unwrap();
        assert!(wait.wait().unwrap(), "input, and the wake-ups were drained");
        drop(writer);
        let mut line = [0u8; 3];
        (&reader).read_exact(&mut line).unwrap();
        assert!(wait.wait().unwrap(), "the end is readable too");

        let path = std::env::temp_dir().join(format!("input-wait-{}", std::process::id()));
        std::fs::write(&path, b"{}\n").unwrap();
        let file = File::open(&path).unwrap();
        let (mut wait, _waker) = InputWait::new(file.as_raw_fd()).unwrap();
        assert!(wait.wait().unwrap(), "a file is always ready");
        let _ = std::fs::remove_file(&path);
    }
}
