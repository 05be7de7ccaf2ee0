//! An incremental `text/event-stream` parser (the HTML standard's "server-sent
//! events", §9.2.6): bytes in, events out, as they arrive in any pieces.
//! Lines end in CR, LF or CRLF (a CRLF split between two pieces counts once);
//! a leading BOM is dropped; `event`, `data` (joined with LF over several
//! lines), `id` and `retry` are read, comments and other fields ignored. An
//! event larger than the cap is an error, so a stream that never ends a line
//! cannot grow without bound. No IO here.

use std::time::Duration;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The `event` field, or `message` when it had none.
    pub event: String,
    /// The `data` lines, joined with LF (bytes as sent: MCP puts one JSON
    /// message here).
    pub data: Vec<u8>,
    /// The last event id seen so far on the stream, if any.
    pub id: Option<String>,
}

/// The parser's state between pieces.
#[derive(Debug)]
pub struct Parser {
    /// The line being read.
    line: Vec<u8>,
    data: Vec<u8>,
    event: String,
    last_id: Option<String>,
    retry: Option<u64>,
    /// The last piece ended in CR: an LF first in the next one is its pair.
    after_cr: bool,
    /// No line has been read yet (a BOM may open the stream).
    first: bool,
    /// The largest event (its data and the line being read).
    max: usize,
}

impl Parser {
    /// A parser that refuses events larger than `max` bytes.
    pub fn new(max: usize) -> Parser {
        Parser {
            line: Vec::new(),
            data: Vec::new(),
            event: String::new(),
            last_id: None,
            retry: None,
            after_cr: false,
            first: true,
            max,
        }
    }

    /// Reads `bytes`, handing every event they complete to `on_event`.
    pub fn feed(
        &mut self,
        mut bytes: &[u8],
        mut on_event: impl FnMut(Event),
    ) -> Result<(), String> {
        if self.after_cr {
            self.after_cr = false;
            if let Some(rest) = bytes.strip_prefix(b"\n") {
                bytes = rest;
            }
        }
        while !bytes.is_empty() {
            let Some(end) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') else {
                self.line.extend_from_slice(bytes);
                self.check_size()?;
                return Ok(());
            };
            self.line.extend_from_slice(&bytes[..end]);
            self.check_size()?;
            let crlf = bytes[end] == b'\r';
            bytes = &bytes[end + 1..];
            if crlf {
                match bytes.first() {
                    Some(b'\n') => bytes = &bytes[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
            let line = std::mem::take(&mut self.line);
            self.on_line(&line, &mut on_event);
            self.line = line;
            self.line.clear();
        }
        Ok(())
    }

    /// How long the server asked a client to wait before reconnecting.
    pub fn retry(&self) -> Option<Duration> {
        self.retry.map(Duration::from_millis)
    }

    /// The last event id the stream set.
    pub fn last_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    fn check_size(&self) -> Result<(), String> {
        if self.line.len() + self.data.len() > self.max {
            return Err(format!("it sent an event larger than {} bytes", self.max));
        }
        Ok(())
    }

    fn on_line(&mut self, mut line: &[u8], on_event: &mut impl FnMut(Event)) {
        if std::mem::take(&mut self.first) {
            line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
        }
        if line.is_empty() {
            return self.dispatch(on_event);
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(0) => return, // a comment
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"event" => self.event = String::from_utf8_lossy(value).into_owned(),
            b"data" => {
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
            }
            b"id" if !value.contains(&0) => {
                self.last_id = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                self.retry = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, on_event: &mut impl FnMut(Event)) {
        let event = std::mem::take(&mut self.event);
        if self.data.is_empty() {
            return;
        }
        let mut data = std::mem::take(&mut self.data);
        data.pop();
        on_event(Event {
            event: if event.is_empty() {
                "message".to_string()
            } else {
                event
            },
            data,
            id: self.last_id.clone(),
        });
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn events(pieces: &[&[u8]]) -> Vec<Event> {
        let mut parser = Parser::new(1 << 20);
        let mut out = Vec::new();
        for piece in pieces {
            parser.feed(piece, |e| out.push(e)).unwrap();
        }
        out
    }

    fn event(name: &str, data: &str, id: Option<&str>) -> Event {
        Event {
            event: name.to_string(),
            data: data.as_bytes().to_vec(),
            id: id.map(str::to_string),
        }
    }

    #[test]
    fn events_come_out_whatever_the_line_ends_and_pieces() {
        let stream = "\u{feff}: a comment\r\nevent: endpoint\r\ndata: /messages?s=1\r\n\r\nid: 7\ndata: {\"a\":\ndata:1}\n\ndata: x\r\rretry: 1500\nevent: ignored-without-data\n\n";
        let want = vec![
            event("endpoint", "/messages?s=1", None),
            event("message", "{\"a\":\n1}", Some("7")),
            event("message", "x", Some("7")),
        ];
        let bytes = stream.as_bytes();
        assert_eq!(events(&[bytes]), want);
        for cut in 1..bytes.len() {
            assert_eq!(
                events(&[&bytes[..cut], &bytes[cut..]]),
                want,
                "cut at {cut}"
            );
        }
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(events(&singles), want);
    }

    #[test]
    fn retry_and_id_are_kept_and_a_bad_retry_ignored() {
        let mut parser = Parser::new(100);
        parser
            .feed(b"retry: 2500\nid: a\0b\nretry: x1\n\n", |_| {})
            .unwrap();
        assert_eq!(parser.retry(), Some(Duration::from_millis(2500)));
        assert_eq!(parser.last_id(), None);
        parser.feed(b"id\n", |_| {}).unwrap();
        assert_eq!(parser.last_id(), Some(""));
    }

    #[test]
    fn an_event_over_the_cap_is_an_error() {
        let mut parser = Parser::new(16);
        assert!(parser.feed(b"data: 0123456789\n", |_| {}).is_ok());
        assert!(parser.feed(b"data: 0123456789\n", |_| {}).is_err());
        let mut parser = Parser::new(16);
        assert!(parser.feed(&[b'x'; 17], |_| {}).is_err());
    }
}
