//! Random bytes from the operating system, for what must not be guessed: a
//! sign-in's PKCE verifier and `state` (docs/reference.md §7.5). Linux asks
//! the kernel (`getrandom(2)`), other Unix systems read `/dev/urandom`,
//! Windows calls `RtlGenRandom` (advapi32's `SystemFunction036`, declared in
//! `win32`).

use std::io;

/// Fills `buf` with random bytes from the system.
pub(crate) fn random(buf: &mut [u8]) -> io::Result<()> {
    fill(buf)
}

#[cfg(target_os = "linux")]
fn fill(buf: &mut [u8]) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        let rest = &mut buf[done..];
        // SAFETY: the kernel writes at most `rest.len()` bytes into `rest`,
        // which we own for the call.
        let got = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        if got < 0 {
            let error = io::Error::last_os_error();
            if error.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(error);
        }
        done += got as usize;
    }
    Ok(())
}

#[cfg(all(unix, not(target_os = "linux")))]
fn fill(buf: &mut [u8]) -> io::Result<()> {
    use std::io::Read;
    std::fs::File::open("/dev/urandom")?.read_exact(buf)
}

#[cfg(windows)]
fn fill(buf: &mut [u8]) -> io::Result<()> {
    for chunk in buf.chunks_mut(1 << 20) {
        // SAFETY: RtlGenRandom writes exactly `chunk.len()` bytes into
        // `chunk`, which we own for the call (the length fits a u32).
        let ok = unsafe {
            super::win32::SystemFunction036(chunk.as_mut_ptr().cast(), chunk.len() as u32)
        };
        if ok == 0 {
            return Err(io::Error::other("RtlGenRandom failed"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_differ_between_calls() {
        let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
        random(&mut a).unwrap();
        random(&mut b).unwrap();
        assert_ne!(a, b);
        assert_ne!(a, [0u8; 32]);
        let mut big = vec![0u8; 70_000];
        random(&mut big).unwrap();
        assert!(big[60_000..].iter().any(|b| *b != 0));
    }
}
