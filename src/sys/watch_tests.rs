//! The contract of `Watch`, `Waker` and `Stdin`, tested once for every
//! system: each system's test module gives `spawn`, which starts a child that
//! plays one `Role` (a shell script on Unix; the test binary itself on
//! Windows, where Wine has no `sleep` or `cat`). What only one system has
//! (Windows' overlapped writes, Job Objects) is tested in its own module.

#![allow(clippy::disallowed_methods)] // the tests spawn their stand-in children

use super::{Stream, Watch};
use std::io;
use std::time::{Duration, Instant};

#[cfg(unix)]
use super::unix_watch::tests::spawn;
#[cfg(windows)]
use super::windows_watch::tests::spawn;

/// What a child of these tests does.
#[derive(Clone, Copy, Debug)]
pub(super) enum Role {
    /// Reads a line, writes `out:LINE` on stdout and `err` on stderr, exits.
    Echo,
    /// Reads nothing for a second, then all of stdin.
    SlowReader,
    /// Sleeps for 30 s.
    Sleeper,
    /// Starts a helper that holds stdout and stderr for 3 s, and exits with 3.
    Parent,
}

/// What `stream` brings: until `end` (taken byte by byte, so no more is
/// read), or until the stream ends when `end` is empty.
pub(super) fn read_until(watch: &mut Watch, stream: Stream, end: &[u8]) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        let ready = watch.wait(None, Some(Duration::from_secs(1))).unwrap();
        let ready = match stream {
            Stream::Stdout => ready.stdout,
            Stream::Stderr => ready.stderr,
        };
        if !ready {
            continue;
        }
        let want = if end.is_empty() { buf.len() } else { 1 };
        match watch.read(stream, &mut buf[..want]) {
            Ok(0) => return got,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => panic!("read: {e}"),
        }
        if !end.is_empty() && got.ends_with(end) {
            return got;
        }
    }
    panic!("no end of stream: {got:?}");
}

#[test]
fn reads_both_streams_and_writes_without_blocking() {
    let (mut child, mut watch, _waker, stdin) = spawn(Role::Echo);
    assert_eq!(stdin.try_write(b"hello\n").unwrap(), 6);
    assert_eq!(read_until(&mut watch, Stream::Stdout, b""), b"out:hello\n");
    assert_eq!(read_until(&mut watch, Stream::Stderr, b""), b"err\n");
    // The write went out long ago: nothing is in flight.
    assert_eq!(stdin.try_write(b"").unwrap(), 0);
    child.wait().unwrap();
    // The child's end is closed: a broken pipe.
    let e = stdin.try_write(b"more\n").unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::BrokenPipe, "{e}");
}

#[test]
fn a_full_stdin_refuses_and_polls_writable_once_read() {
    let (mut child, mut watch, _waker, stdin) = spawn(Role::SlowReader);
    let chunk = vec![b'x'; 1 << 16];
    let mut total = 0;
    let refused = loop {
        match stdin.try_write(&chunk) {
            Ok(n) => total += n,
            Err(e) => break e,
        }
        assert!(total < 64 << 20, "a pipe that never fills");
    };
    assert_eq!(refused.kind(), io::ErrorKind::WouldBlock);
    // The child reads after a second.
    let ready = watch
        .wait(Some(&stdin), Some(Duration::from_millis(200)))
        .unwrap();
    assert!(!ready.stdin, "{ready:?}");
    let ready = watch
        .wait(Some(&stdin), Some(Duration::from_secs(10)))
        .unwrap();
    assert!(ready.stdin, "{ready:?}");
    assert!(stdin.try_write(&chunk).unwrap() > 0);
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_waker_ends_the_wait_from_another_thread() {
    let (mut child, mut watch, waker, _stdin) = spawn(Role::Sleeper);
    let start = Instant::now();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        waker.wake();
    });
    let ready = watch.wait(None, Some(Duration::from_secs(20))).unwrap();
    assert!(start.elapsed() < Duration::from_secs(10));
    assert!(!ready.stdout && !ready.exited, "{ready:?}");
    t.join().unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
}

/// The process's exit is seen, once, while a helper it started keeps stdout
/// open (where no descriptor reports the exit, the caller polls it).
#[test]
fn the_exit_is_seen_while_a_helper_holds_stdout() {
    let (mut child, mut watch, _waker, _stdin) = spawn(Role::Parent);
    let start = Instant::now();
    loop {
        let ready = watch.wait(None, Some(Duration::from_millis(200))).unwrap();
        if ready.exited || (watch.polls_exit() && child.try_wait().unwrap().is_some()) {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "no exit seen");
        if ready.stdout {
            // The helper may write (on Windows, its test harness's first
            // line); no end can come.
            let mut buf = [0u8; 64];
            let read = watch.read(Stream::Stdout, &mut buf);
            assert!(!matches!(read, Ok(0)), "the helper keeps stdout open");
        }
    }
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "the exit came late"
    );
    if !watch.polls_exit() {
        let ready = watch.wait(None, Some(Duration::ZERO)).unwrap();
        assert!(!ready.exited, "reported twice: {ready:?}");
    }
    assert_eq!(child.wait().unwrap().code(), Some(3));
}
