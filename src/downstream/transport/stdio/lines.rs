//! A child's output cut into lines, as its bytes arrive in reads of any size;
//! no IO here (the child's thread reads, these types cut).
//!
//! - `LineBuffer` is stdout: newline-delimited JSON-RPC (MCP basic/transports
//!   §stdio). Lines have no length cap (a base64 image is one line of many
//!   megabytes), a trailing `\r` is stripped and blank lines are skipped, as
//!   `framing::LineReader` does for the host. Reads go straight into the
//!   buffer, so a line is copied once, by the kernel.
//! - `StderrLines` is stderr: text for logs and error messages. Each line is
//!   cut at `max` bytes as it arrives, so memory stays bounded whatever the
//!   child writes.

use std::io;

/// The smallest room offered to a read: most lines are short, and a child
/// that is not talking should cost little memory.
const CHUNK: usize = 8 * 1024;
/// The most room offered at once: a pipe gives at most its capacity (64 KiB
/// by default) per read, and only the room offered is zeroed, so a long line
/// costs about its own size.
const READ_AHEAD: usize = 1 << 20;
/// A buffer grown past this by a long line is shrunk back once a short line
/// (below `SHORT`) went through it: a child that sends large results keeps
/// its buffer, as the next one is likely as large.
const KEEP: usize = 1 << 20;
const SHORT: usize = 64 * 1024;

/// Stdout's bytes not yet cut into lines.
#[derive(Default)]
pub(super) struct LineBuffer {
    buf: Vec<u8>,
    /// The first byte not yet returned in a line.
    start: usize,
    /// The end of the bytes read.
    end: usize,
    /// Bytes before this (from `start`) hold no newline.
    scanned: usize,
    /// The length of the last line returned.
    last: usize,
}

impl LineBuffer {
    /// Reads once with `read` into the free room at the end of the buffer (at
    /// least `CHUNK` bytes); what `read` returns, and whether it filled the room
    /// (more is probably waiting).
    pub(super) fn fill(
        &mut self,
        read: impl FnOnce(&mut [u8]) -> io::Result<usize>,
    ) -> io::Result<(usize, bool)> {
        if self.buf.len() - self.end < CHUNK {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.scanned -= self.start;
                self.start = 0;
            }
            if self.buf.len() - self.end < CHUNK {
                let more = self.buf.len().clamp(CHUNK, READ_AHEAD);
                self.buf.resize(self.end + more, 0);
            }
        }
        let room = self.buf.len() - self.end;
        let n = read(&mut self.buf[self.end..])?;
        self.end += n;
        Ok((n, n == room))
    }

    /// The next complete, non-blank line, without its terminator.
    pub(super) fn next_line(&mut self) -> Option<&[u8]> {
        loop {
            let Some(at) = find_newline(&self.buf[self.scanned..self.end]) else {
                self.scanned = self.end;
                self.settle();
                return None;
            };
            let (from, to) = (self.start, self.scanned + at);
            self.start = to + 1;
            self.scanned = self.start;
            if let Some(line) = non_blank(&self.buf[from..to]) {
                let (from, len) = (from, line.len());
                self.last = len;
                return Some(&self.buf[from..from + len]);
            }
        }
    }

    /// At the end of the stream: the last line, if it had no newline.
    pub(super) fn rest(&mut self) -> Option<&[u8]> {
        let (from, to) = (self.start, self.end);
        self.start = self.end;
        self.scanned = self.end;
        let len = non_blank(&self.buf[from..to])?.len();
        Some(&self.buf[from..from + len])
    }

    /// With nothing held, starts over at the front, and gives back what a
    /// long line took once a short one followed it.
    fn settle(&mut self) {
        if self.start == self.end {
            (self.start, self.end, self.scanned) = (0, 0, 0);
            if self.buf.len() > KEEP && self.last < SHORT {
                self.buf.truncate(CHUNK);
                self.buf.shrink_to(CHUNK);
            }
        }
    }
}

/// The index of the first `\n` in `bytes`, sixteen bytes at a time (std's
/// memchr is not public; `position` goes byte by byte, six times slower on a
/// 16 MiB result).
fn find_newline(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    const NEWLINES: u64 = u64::from_ne_bytes([b'\n'; 8]);
    // A word holds a zero byte when this sets a high bit (the classic test).
    let has_zero = |word: u64| word.wrapping_sub(ONES) & !word & HIGH != 0;
    let word = |half: &[u8]| {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(half);
        u64::from_ne_bytes(bytes) ^ NEWLINES
    };
    let mut chunks = bytes.chunks_exact(16);
    let mut offset = 0;
    for chunk in &mut chunks {
        if has_zero(word(&chunk[..8])) || has_zero(word(&chunk[8..])) {
            break;
        }
        offset += 16;
    }
    bytes[offset..]
        .iter()
        .position(|&b| b == b'\n')
        .map(|i| offset + i)
}

/// `line` without a trailing `\r`, unless it is blank.
fn non_blank(line: &[u8]) -> Option<&[u8]> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    (!line.iter().all(u8::is_ascii_whitespace)).then_some(line)
}

/// Stderr's current line, cut at `max` bytes.
pub(super) struct StderrLines {
    line: Vec<u8>,
    max: usize,
}

impl StderrLines {
    pub(super) fn new(max: usize) -> StderrLines {
        StderrLines {
            line: Vec::new(),
            max,
        }
    }

    /// Takes the bytes of one read; `emit` gets each line they complete.
    pub(super) fn feed(&mut self, mut bytes: &[u8], mut emit: impl FnMut(&[u8])) {
        while !bytes.is_empty() {
            let (chunk, done) = match bytes.iter().position(|&b| b == b'\n') {
                Some(i) => (&bytes[..i], Some(i + 1)),
                None => (bytes, None),
            };
            let room = self.max.saturating_sub(self.line.len());
            self.line.extend_from_slice(&chunk[..chunk.len().min(room)]);
            match done {
                Some(i) => {
                    emit(&self.line);
                    self.line.clear();
                    bytes = &bytes[i..];
                }
                None => break,
            }
        }
    }

    /// At the end of the stream: the last line, if it had no newline.
    pub(super) fn finish(&mut self, emit: impl FnOnce(&[u8])) {
        if !self.line.is_empty() {
            emit(&self.line);
            self.line.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` in reads of `size` bytes; every line, then the rest.
    fn cut(input: &[u8], size: usize) -> Vec<Vec<u8>> {
        let mut lines = LineBuffer::default();
        let mut got = Vec::new();
        let mut pos = 0;
        while pos < input.len() {
            lines
                .fill(|room| {
                    let n = room.len().min(size).min(input.len() - pos);
                    room[..n].copy_from_slice(&input[pos..pos + n]);
                    pos += n;
                    Ok(n)
                })
                .unwrap();
            while let Some(line) = lines.next_line() {
                got.push(line.to_vec());
            }
        }
        got.extend(lines.rest().map(<[u8]>::to_vec));
        got
    }

    #[test]
    fn lines_are_the_same_whatever_the_reads() {
        let input = b"a\r\n\n  \r\nb\n\xff\xfe\nlast";
        let expected: Vec<Vec<u8>> =
            vec![b"a".into(), b"b".into(), b"\xff\xfe".into(), b"last".into()];
        for size in 1..input.len() + 1 {
            assert_eq!(cut(input, size), expected, "reads of {size} bytes");
        }
    }

    #[test]
    fn a_huge_line_passes_whole_and_its_memory_is_given_back() {
        let mut input = vec![b'x'; 5 << 20];
        input.extend_from_slice(b"\nshort\n");
        let got = cut(&input, 1 << 20);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].len(), 5 << 20);
        assert_eq!(got[1], b"short");

        let mut lines = LineBuffer::default();
        let mut pos = 0;
        while pos < input.len() {
            lines
                .fill(|room| {
                    let n = room.len().min(input.len() - pos);
                    room[..n].copy_from_slice(&input[pos..pos + n]);
                    pos += n;
                    Ok(n)
                })
                .unwrap();
            while lines.next_line().is_some() {}
        }
        assert!(lines.buf.len() <= CHUNK, "kept {} bytes", lines.buf.len());
    }

    #[test]
    fn newlines_are_found_wherever_they_are() {
        for len in 0..40 {
            for at in 0..=len {
                let mut bytes = vec![b'x'; len];
                bytes.extend_from_slice(b"\n\n");
                bytes[at] = b'\n';
                assert_eq!(find_newline(&bytes), Some(at), "len {len}, at {at}");
            }
            assert_eq!(find_newline(&vec![0x8a; len]), None, "no newline in {len}");
        }
    }

    #[test]
    fn stderr_lines_are_cut_at_their_limit() {
        let mut lines = StderrLines::new(4);
        let mut got = Vec::new();
        for chunk in [&b"abcdefgh"[..], b"ij\nxy", b"\n\nlast"] {
            lines.feed(chunk, |l| got.push(l.to_vec()));
        }
        lines.finish(|l| got.push(l.to_vec()));
        let expected: Vec<Vec<u8>> = vec![b"abcd".into(), b"xy".into(), b"".into(), b"last".into()];
        assert_eq!(got, expected);
    }
}
