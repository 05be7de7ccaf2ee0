//! Newline-delimited framing of JSON-RPC messages over any byte stream
//! (MCP 2025-11-25, basic/transports, "stdio"): one message per line, no embedded newlines.
//!
//! Reading returns raw bytes, not strings: a line that is not UTF-8 is the
//! parser's problem (it becomes a `-32700`), never a reader error. A trailing `\r`
//! is stripped and blank lines are skipped. There is no line-length cap: base64
//! images and large tool results arrive as single lines of many megabytes.
//! Writing is one `write_all` of a complete line followed by a flush.

use std::io::{self, BufRead, Write};

/// Reads lines from a buffered reader, reusing one buffer.
pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
}

impl<R: BufRead> LineReader<R> {
    pub fn new(inner: R) -> LineReader<R> {
        LineReader {
            inner,
            buf: Vec::new(),
        }
    }

    /// The reader, with what it buffered and no line has taken yet.
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// The reader, with what it buffered and no line has taken yet.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The next non-blank line without its terminator; `Ok(None)` on clean EOF.
    /// A final line without `\n` before EOF still counts as a line.
    pub fn next_line(&mut self) -> io::Result<Option<&[u8]>> {
        loop {
            self.buf.clear();
            if self.inner.read_until(b'\n', &mut self.buf)? == 0 {
                return Ok(None);
            }
            if self.buf.last() == Some(&b'\n') {
                self.buf.pop();
            }
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
            if !self.buf.iter().all(u8::is_ascii_whitespace) {
                // A huge line leaves a huge buffer behind; give the memory back.
                if self.buf.capacity() > 1 << 20 && self.buf.len() < 1 << 16 {
                    self.buf.shrink_to(1 << 16);
                }
                return Ok(Some(&self.buf));
            }
        }
    }
}

impl<R: io::Read> LineReader<io::BufReader<R>> {
    /// Whether the next line can be read without waiting for its reader: a
    /// relay writes what it has gathered only when this is false.
    pub fn has_buffered(&self) -> bool {
        !self.inner.buffer().is_empty()
    }
}

/// Writes one complete line (which must already end with `\n`) and flushes.
pub fn write_line(out: &mut impl Write, line: &[u8]) -> io::Result<()> {
    debug_assert_eq!(line.last(), Some(&b'\n'));
    out.write_all(line)?;
    out.flush()
}

/// A short, loggable preview of a line.
pub fn preview(line: &[u8]) -> String {
    const MAX: usize = 300;
    let text = String::from_utf8_lossy(&line[..line.len().min(MAX)]);
    let text = text.trim_end();
    if line.len() > MAX {
        format!("{text}... ({} bytes)", line.len())
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8]) -> Vec<Vec<u8>> {
        let mut reader = LineReader::new(input);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            out.push(line.to_vec());
        }
        out
    }

    #[test]
    fn splits_strips_and_skips() {
        let got = lines(b"a\r\n\n  \r\nb\n\xff\xfe\nlast");
        assert_eq!(
            got,
            vec![
                b"a".to_vec(),
                b"b".to_vec(),
                b"\xff\xfe".to_vec(),
                b"last".to_vec()
            ]
        );
    }

    #[test]
    fn long_lines_pass_whole() {
        let mut input = vec![b'x'; 5 << 20];
        input.extend_from_slice(b"\nshort\n");
        let got = lines(&input);
        assert_eq!(got[0].len(), 5 << 20);
        assert_eq!(got[1], b"short");
    }

    #[test]
    fn preview_is_bounded() {
        assert_eq!(preview(b"abc\n"), "abc");
        assert!(preview(&[b'y'; 1000]).ends_with("(1000 bytes)"));
    }
}
