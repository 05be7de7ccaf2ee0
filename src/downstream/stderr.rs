//! The stderr drain of a child: reads continuously (a child blocks on a full
//! pipe), logs each line with a `[toolbox/server]` prefix within the flood
//! budget, and keeps the last lines for error messages. Lines longer than
//! `TAIL_LINE_BYTES` are cut; memory stays bounded whatever the child writes.

use super::*;

impl Downstream {
    pub(super) fn drain_stderr(&self, stderr: impl Read) {
        let mut reader = BufReader::with_capacity(16 * 1024, stderr);
        let mut line = Vec::new();
        let mut budget = LogBudget::new("stderr");
        loop {
            let (consumed, end_of_line) = match reader.fill_buf() {
                Ok([]) | Err(_) => break,
                Ok(buf) => {
                    let (chunk, eol) = match buf.iter().position(|&b| b == b'\n') {
                        Some(i) => (&buf[..i], Some(i + 1)),
                        None => (buf, None),
                    };
                    let room = TAIL_LINE_BYTES.saturating_sub(line.len());
                    line.extend_from_slice(&chunk[..chunk.len().min(room)]);
                    (eol.unwrap_or(buf.len()), eol.is_some())
                }
            };
            reader.consume(consumed);
            if end_of_line {
                self.keep_stderr_line(&line, &mut budget);
                line.clear();
            }
        }
        if !line.is_empty() {
            self.keep_stderr_line(&line, &mut budget);
        }
    }

    fn keep_stderr_line(&self, line: &[u8], budget: &mut LogBudget) {
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end();
        if text.is_empty() {
            return;
        }
        if budget.allow(&self.label) {
            log::info!("[{}] {text}", self.label);
        }
        let mut tail = lock(&self.tail);
        if tail.len() == TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(text.to_string());
    }
}
