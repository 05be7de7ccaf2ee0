//! The TOML subset's reader: one pass over the text with the line it is on,
//! building the tables and recording the lines each table and key span.
//! Refuses, with the line, whatever is outside the subset (`super`).

use super::{show_path, Document, Error, Span, Table, Value};

/// Parses `text`.
pub(crate) fn parse(text: &str) -> Result<Document, Error> {
    let mut parser = Parser {
        text,
        pos: 0,
        line: 1,
    };
    let mut doc = Document::default();
    // The tables defined so far (by a header, or by dotted keys under an
    // earlier header), those dotted keys define under the header being
    // filled, and the values written whole (inline tables, arrays), which
    // no header or dotted key may extend (TOML 1.1, "Inline Table"). As
    // the toml-test suite and tomli read the rules.
    let mut defined: Vec<Vec<String>> = Vec::new();
    let mut dotted: Vec<Vec<String>> = Vec::new();
    let mut closed: Vec<Vec<String>> = Vec::new();
    let mut current: Vec<String> = Vec::new();
    // The span of the open header: its first line, its last line with a key.
    let mut open: Option<(Vec<String>, usize, usize)> = None;
    loop {
        parser.skip_blank_lines()?;
        if parser.at_end() {
            break;
        }
        let first = parser.line - 1;
        if parser.rest().starts_with("[[") {
            return Err(parser.error(
                "arrays of tables ([[...]]) are not supported here; edit this file by hand",
            ));
        }
        if parser.eat('[') {
            parser.skip_spaces();
            let path = parser.key_path()?;
            parser.skip_spaces();
            if !parser.eat(']') {
                return Err(parser.error("expected ']' to end the table header"));
            }
            parser.end_of_line()?;
            defined.append(&mut dotted);
            if defined.contains(&path) {
                return Err(Error {
                    line: first + 1,
                    message: format!("table [{}] is defined twice", show_path(&path)),
                });
            }
            table_at(&mut doc.root, &path, first + 1)?;
            if let Some(whole) = closed.iter().find(|c| path.starts_with(c)) {
                return Err(Error {
                    line: first + 1,
                    message: format!(
                        "table [{}] extends {}, which was written whole (an inline table is closed where it is written)",
                        show_path(&path),
                        show_path(whole)
                    ),
                });
            }
            defined.push(path.clone());
            if let Some((path, start, last)) = open.take() {
                doc.spans.push(Span {
                    path,
                    header: true,
                    lines: start..last + 1,
                });
            }
            open = Some((path.clone(), first, first));
            current = path;
            continue;
        }
        let key = parser.key_path()?;
        parser.skip_spaces();
        if !parser.eat('=') {
            return Err(parser.error("expected '=' after the key"));
        }
        parser.skip_spaces();
        let value = parser.value()?;
        let last = parser.line - 1;
        parser.end_of_line()?;
        let mut full = current.clone();
        full.extend(key.iter().cloned());
        let Some((name, tables)) = key.split_last() else {
            return Err(parser.error("expected a key"));
        };
        let mut table_path = current.clone();
        for part in tables {
            table_path.push(part.clone());
            if defined.contains(&table_path) {
                return Err(Error {
                    line: first + 1,
                    message: format!(
                        "key {} adds to table [{}], defined above: add it under that header",
                        show_path(&full),
                        show_path(&table_path)
                    ),
                });
            }
            if !dotted.contains(&table_path) {
                dotted.push(table_path.clone());
            }
        }
        let table = table_at(&mut doc.root, &table_path, first + 1)?;
        if let Some(whole) = closed.iter().find(|c| table_path.starts_with(c)) {
            return Err(Error {
                line: first + 1,
                message: format!(
                    "key {} extends {}, which was written whole (an inline table is closed where it is written)",
                    show_path(&full),
                    show_path(whole)
                ),
            });
        }
        if table.get(name).is_some() {
            return Err(Error {
                line: first + 1,
                message: format!("key {} is defined twice", show_path(&full)),
            });
        }
        if matches!(value, Value::Table(_) | Value::Array(_)) {
            closed.push(full.clone());
        }
        table.entries.push((name.clone(), value));
        doc.spans.push(Span {
            path: full,
            header: false,
            lines: first..last + 1,
        });
        if let Some((_, _, end)) = &mut open {
            *end = last;
        }
    }
    if let Some((path, start, last)) = open {
        doc.spans.push(Span {
            path,
            header: true,
            lines: start..last + 1,
        });
    }
    Ok(doc)
}

/// The table at `path` below `root`, created where missing.
fn table_at<'a>(root: &'a mut Table, path: &[String], line: usize) -> Result<&'a mut Table, Error> {
    let mut table = root;
    for (i, part) in path.iter().enumerate() {
        if table.get(part).is_none() {
            table
                .entries
                .push((part.clone(), Value::Table(Table::default())));
        }
        table = match table.slot(part) {
            Some(Value::Table(inner)) => inner,
            Some(other) => {
                return Err(Error {
                    line,
                    message: format!(
                        "{} is {}, not a table",
                        show_path(&path[..=i]),
                        other.kind()
                    ),
                })
            }
            // Just inserted: never missing.
            None => {
                return Err(Error {
                    line,
                    message: "internal error: a table vanished".to_string(),
                })
            }
        };
    }
    Ok(table)
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
    /// The line `pos` is on, 1-based.
    line: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }

    fn at_end(&self) -> bool {
        self.pos >= self.text.len()
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn error(&self, message: impl Into<String>) -> Error {
        Error {
            line: self.line,
            message: message.into(),
        }
    }

    fn skip_spaces(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.bump();
        }
    }

    fn skip_comment(&mut self) -> Result<(), Error> {
        if self.peek() == Some('#') {
            while let Some(c) = self.peek() {
                if c == '\n' || (c == '\r' && self.rest().starts_with("\r\n")) {
                    break;
                }
                if forbidden(c) {
                    return Err(self.error("a control character in a comment"));
                }
                self.bump();
            }
        }
        Ok(())
    }

    fn newline(&mut self) -> bool {
        if self.rest().starts_with("\r\n") {
            self.bump();
            self.bump();
            true
        } else {
            self.eat('\n')
        }
    }

    /// Blank lines and comment lines.
    fn skip_blank_lines(&mut self) -> Result<(), Error> {
        loop {
            self.skip_spaces();
            self.skip_comment()?;
            if !self.newline() {
                return Ok(());
            }
        }
    }

    /// Spaces, a comment, then the end of the line or of the file.
    fn end_of_line(&mut self) -> Result<(), Error> {
        self.skip_spaces();
        self.skip_comment()?;
        if self.at_end() || self.newline() {
            Ok(())
        } else {
            Err(self.error(format!(
                "unexpected {:?} after the value; one key = value per line",
                self.peek().unwrap_or(' ')
            )))
        }
    }

    /// `a`, `a.b`, `a."b c"`, `'x'.y`: whitespace around the dots allowed.
    fn key_path(&mut self) -> Result<Vec<String>, Error> {
        let mut path = vec![self.simple_key()?];
        loop {
            self.skip_spaces();
            if !self.eat('.') {
                return Ok(path);
            }
            self.skip_spaces();
            path.push(self.simple_key()?);
        }
    }

    fn simple_key(&mut self) -> Result<String, Error> {
        match self.peek() {
            Some('"') => {
                if self.rest().starts_with("\"\"\"") {
                    return Err(self.error("a key cannot be a multi-line string"));
                }
                self.basic_string()
            }
            Some('\'') => {
                if self.rest().starts_with("'''") {
                    return Err(self.error("a key cannot be a multi-line string"));
                }
                self.literal_string()
            }
            _ => {
                let start = self.pos;
                while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || c == '_' || c == '-')
                {
                    self.bump();
                }
                if self.pos == start {
                    return Err(self.error(match self.peek() {
                        Some(c) => format!("expected a key, found {c:?}"),
                        None => "expected a key, found the end of the file".to_string(),
                    }));
                }
                Ok(self.text[start..self.pos].to_string())
            }
        }
    }

    fn value(&mut self) -> Result<Value, Error> {
        let rest = self.rest();
        if rest.starts_with("\"\"\"") {
            return self.multiline_basic().map(Value::String);
        }
        if rest.starts_with("'''") {
            return self.multiline_literal().map(Value::String);
        }
        match self.peek() {
            Some('"') => self.basic_string().map(Value::String),
            Some('\'') => self.literal_string().map(Value::String),
            Some('[') => self.array(),
            Some('{') => self.inline_table(),
            Some('t') if rest.starts_with("true") && !word_goes_on(&rest[4..]) => {
                self.pos += 4;
                Ok(Value::Bool(true))
            }
            Some('f') if rest.starts_with("false") && !word_goes_on(&rest[5..]) => {
                self.pos += 5;
                Ok(Value::Bool(false))
            }
            Some(c) if c.is_ascii_digit() || matches!(c, '+' | '-' | 'i' | 'n') => self.number(),
            Some(c) => Err(self.error(format!("expected a value, found {c:?}"))),
            None => Err(self.error("expected a value, found the end of the file")),
        }
    }

    fn number(&mut self) -> Result<Value, Error> {
        let start = self.pos;
        while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.' | '_' | ':'))
        {
            self.bump();
        }
        let word = &self.text[start..self.pos];
        let looks_like_date = word.len() >= 5
            && word.as_bytes()[..4].iter().all(u8::is_ascii_digit)
            && word.as_bytes()[4] == b'-'
            || word.len() >= 3 && word.as_bytes()[2] == b':';
        if looks_like_date {
            return Err(self.error(format!(
                "dates and times ({word}) are not supported here; edit this file by hand"
            )));
        }
        number(word).ok_or_else(|| self.error(format!("{word:?} is not a number")))
    }

    fn array(&mut self) -> Result<Value, Error> {
        self.bump();
        let mut items = Vec::new();
        loop {
            self.skip_blank_lines()?;
            if self.eat(']') {
                return Ok(Value::Array(items));
            }
            items.push(self.value()?);
            self.skip_blank_lines()?;
            if self.eat(',') {
                continue;
            }
            if self.eat(']') {
                return Ok(Value::Array(items));
            }
            return Err(self.error("expected ',' or ']' in the array"));
        }
    }

    fn inline_table(&mut self) -> Result<Value, Error> {
        self.bump();
        let mut table = Table::default();
        // Its values written whole, which its dotted keys may not extend.
        let mut closed: Vec<Vec<String>> = Vec::new();
        loop {
            // Newlines, and a comma after the last pair (TOML 1.1).
            self.skip_blank_lines()?;
            if self.eat('}') {
                return Ok(Value::Table(table));
            }
            let line = self.line;
            let key = self.key_path()?;
            self.skip_spaces();
            if !self.eat('=') {
                return Err(self.error("expected '=' in the inline table"));
            }
            self.skip_spaces();
            let value = self.value()?;
            let Some((name, tables)) = key.split_last() else {
                return Err(self.error("expected a key"));
            };
            let inner = table_at(&mut table, tables, line)?;
            if let Some(whole) = closed.iter().find(|c| tables.starts_with(c)) {
                return Err(Error {
                    line,
                    message: format!(
                        "key {} extends {}, which was written whole",
                        show_path(&key),
                        show_path(whole)
                    ),
                });
            }
            if inner.get(name).is_some() {
                return Err(Error {
                    line,
                    message: format!("key {} is defined twice", show_path(&key)),
                });
            }
            if matches!(value, Value::Table(_) | Value::Array(_)) {
                closed.push(key.clone());
            }
            inner.entries.push((name.clone(), value));
            self.skip_blank_lines()?;
            if self.eat(',') {
                continue;
            }
            if self.eat('}') {
                return Ok(Value::Table(table));
            }
            return Err(self.error("expected ',' or '}' in the inline table"));
        }
    }

    fn basic_string(&mut self) -> Result<String, Error> {
        self.bump();
        let mut out = String::new();
        loop {
            if matches!(self.peek(), Some('\n') | None) {
                return Err(self.error("unterminated string"));
            }
            match self.bump() {
                Some('"') => return Ok(out),
                Some('\\') => out.push(self.escape()?),
                Some('\n') | None => return Err(self.error("unterminated string")),
                Some(c) if forbidden(c) => {
                    return Err(self.error("a control character in a string; escape it"))
                }
                Some(c) => out.push(c),
            }
        }
    }

    fn literal_string(&mut self) -> Result<String, Error> {
        self.bump();
        let start = self.pos;
        loop {
            match self.peek() {
                Some('\'') => {
                    let text = self.text[start..self.pos].to_string();
                    self.bump();
                    return Ok(text);
                }
                Some('\n') | None => return Err(self.error("unterminated string")),
                Some(c) if forbidden(c) => {
                    return Err(self.error("a control character in a string"))
                }
                Some(_) => {
                    self.bump();
                }
            }
        }
    }

    fn multiline_basic(&mut self) -> Result<String, Error> {
        self.pos += 3;
        self.newline();
        let mut out = String::new();
        loop {
            if self.rest().starts_with("\"\"\"") {
                self.pos += 3;
                // Up to two quotes right before the closing three are content.
                for _ in 0..2 {
                    if self.eat('"') {
                        out.push('"');
                    }
                }
                return Ok(out);
            }
            self.multiline_control()?;
            match self.bump() {
                None => return Err(self.error("unterminated multi-line string")),
                Some('\\') => {
                    // A backslash at the end of a line trims what follows.
                    let rest = self.rest();
                    let trimmed = rest.trim_start_matches([' ', '\t']);
                    if trimmed.starts_with('\n') || trimmed.starts_with("\r\n") {
                        while matches!(self.peek(), Some(' ' | '\t' | '\n' | '\r')) {
                            self.bump();
                        }
                    } else {
                        out.push(self.escape()?);
                    }
                }
                Some(c) => out.push(c),
            }
        }
    }

    fn multiline_literal(&mut self) -> Result<String, Error> {
        self.pos += 3;
        self.newline();
        let mut out = String::new();
        loop {
            if self.rest().starts_with("'''") {
                self.pos += 3;
                for _ in 0..2 {
                    if self.eat('\'') {
                        out.push('\'');
                    }
                }
                return Ok(out);
            }
            self.multiline_control()?;
            match self.bump() {
                None => return Err(self.error("unterminated multi-line string")),
                Some(c) => out.push(c),
            }
        }
    }

    /// A control character at `pos` in a multi-line string: refused, but a
    /// newline (LF or CRLF).
    fn multiline_control(&self) -> Result<(), Error> {
        match self.peek() {
            Some('\r') if self.rest().starts_with("\r\n") => Ok(()),
            Some(c) if c != '\n' && forbidden(c) => {
                Err(self.error("a control character in a string; escape it"))
            }
            _ => Ok(()),
        }
    }

    /// After a backslash in a basic string.
    fn escape(&mut self) -> Result<char, Error> {
        let c = self
            .bump()
            .ok_or_else(|| self.error("unterminated string"))?;
        Ok(match c {
            'b' => '\u{8}',
            't' => '\t',
            'n' => '\n',
            'f' => '\u{c}',
            'r' => '\r',
            'e' => '\u{1b}',
            '"' => '"',
            '\\' => '\\',
            'x' => self.hex(2)?,
            'u' => self.hex(4)?,
            'U' => self.hex(8)?,
            other => return Err(self.error(format!("unknown escape '\\{other}' in a string"))),
        })
    }

    fn hex(&mut self, digits: usize) -> Result<char, Error> {
        let text = self.rest().get(..digits).unwrap_or("");
        let code = (text.len() == digits && text.chars().all(|c| c.is_ascii_hexdigit()))
            .then(|| u32::from_str_radix(text, 16).ok())
            .flatten()
            .and_then(char::from_u32)
            .ok_or_else(|| self.error(format!("a bad escape: {digits} hex digits expected")))?;
        self.pos += digits;
        Ok(code)
    }
}

/// A control character TOML allows in no string or comment: all but tab
/// (a newline ends them, or is allowed in a multi-line string).
fn forbidden(c: char) -> bool {
    matches!(c, '\0'..='\u{8}' | '\n'..='\u{1f}' | '\u{7f}')
}

/// Whether a bare word continues after `true` or `false` (`trueish`).
fn word_goes_on(rest: &str) -> bool {
    rest.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// An integer or a float as TOML writes it.
fn number(word: &str) -> Option<Value> {
    let (sign, body) = match word.as_bytes().first()? {
        b'+' => (1, &word[1..]),
        b'-' => (-1, &word[1..]),
        _ => (1, word),
    };
    match body {
        "inf" => return Some(Value::Float(f64::INFINITY * f64::from(sign))),
        "nan" => return Some(Value::Float(f64::NAN)),
        _ => {}
    }
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(rest) = body.strip_prefix(prefix) {
            let digit = |b: &u8| char::from(*b).is_digit(radix);
            if word.starts_with(['+', '-']) || !underscores_between(rest, digit) {
                return None;
            }
            let rest = rest.replace('_', "");
            if !rest.bytes().all(|b| digit(&b)) {
                return None;
            }
            return i64::from_str_radix(&rest, radix).ok().map(Value::Integer);
        }
    }
    if !underscores_between(body, u8::is_ascii_digit) {
        return None;
    }
    let digits = body.replace('_', "");
    if digits.is_empty() || !digits.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    let leading_zero =
        digits.len() > 1 && digits.starts_with('0') && digits.as_bytes()[1].is_ascii_digit();
    if leading_zero {
        return None;
    }
    if digits.bytes().all(|b| b.is_ascii_digit()) {
        let signed = if sign < 0 {
            format!("-{digits}")
        } else {
            digits
        };
        return signed.parse().ok().map(Value::Integer);
    }
    let float_shape = digits
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        && !digits.ends_with('.')
        && !digits.contains(".e")
        && !digits.contains(".E");
    if !float_shape {
        return None;
    }
    let f: f64 = digits.parse().ok()?;
    Some(Value::Float(f * f64::from(sign)))
}

/// Whether every underscore of `text` stands between two digits.
fn underscores_between(text: &str, digit: impl Fn(&u8) -> bool) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().all(|(i, b)| {
        *b != b'_' || i > 0 && digit(&bytes[i - 1]) && bytes.get(i + 1).is_some_and(&digit)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Value {
        Value::String(text.to_string())
    }

    fn table<'a>(doc: &'a Document, path: &[&str]) -> &'a Table {
        let mut t = &doc.root;
        for part in path {
            match t.get(part) {
                Some(Value::Table(inner)) => t = inner,
                other => panic!("{part}: {other:?}"),
            }
        }
        t
    }

    #[test]
    fn reads_what_codex_writes() {
        let text = r#"# Codex settings
model = "gpt-5"   # a comment
approval_policy = 'on-request'

[mcp_servers.github]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
env = { GITHUB_TOKEN = "tok\u00e9n", "X Y" = 'C:\path' }
startup_timeout_sec = 12.5
tool_timeout_sec = 60
enabled = false

[mcp_servers."my server".env]
A = """
first \
  second"""
B = '''raw\n'''

[projects."/home/u/proj"]
trust_level = "trusted"
numbers = [0x1F, 0o17, 0b11, 1_000, -3, +4.5e2, inf, -inf,]
nested = [[1, 2], ["a"],
  # a comment inside
  { k = true }]
"#;
        let doc = parse(text).unwrap();
        assert_eq!(doc.root.get("model"), Some(&s("gpt-5")));
        assert_eq!(doc.root.get("approval_policy"), Some(&s("on-request")));
        let github = table(&doc, &["mcp_servers", "github"]);
        assert_eq!(
            github.get("args"),
            Some(&Value::Array(vec![
                s("-y"),
                s("@modelcontextprotocol/server-github")
            ]))
        );
        let Some(Value::Table(env)) = github.get("env") else {
            panic!("env")
        };
        assert_eq!(env.get("GITHUB_TOKEN"), Some(&s("tokén")));
        assert_eq!(env.get("X Y"), Some(&s(r"C:\path")));
        assert_eq!(github.get("startup_timeout_sec"), Some(&Value::Float(12.5)));
        assert_eq!(github.get("tool_timeout_sec"), Some(&Value::Integer(60)));
        assert_eq!(github.get("enabled"), Some(&Value::Bool(false)));
        let env = table(&doc, &["mcp_servers", "my server", "env"]);
        assert_eq!(env.get("A"), Some(&s("first second")));
        assert_eq!(env.get("B"), Some(&s(r"raw\n")));
        let project = table(&doc, &["projects", "/home/u/proj"]);
        let Some(Value::Array(numbers)) = project.get("numbers") else {
            panic!("numbers")
        };
        assert_eq!(
            numbers[..7],
            [
                Value::Integer(31),
                Value::Integer(15),
                Value::Integer(3),
                Value::Integer(1000),
                Value::Integer(-3),
                Value::Float(450.0),
                Value::Float(f64::INFINITY)
            ]
        );
        let Some(Value::Array(nested)) = project.get("nested") else {
            panic!("nested")
        };
        assert_eq!(nested.len(), 3);
        // Where things are: the github table spans its header to its last key.
        let span = |path: &[&str], header: bool| {
            doc.spans
                .iter()
                .find(|s| s.header == header && s.path == path)
                .map(|s| s.lines.clone())
        };
        assert_eq!(span(&["mcp_servers", "github"], true), Some(4..11));
        assert_eq!(span(&["mcp_servers", "github", "env"], false), Some(7..8));
        assert_eq!(
            span(&["mcp_servers", "my server", "env", "A"], false),
            Some(13..16)
        );
        assert_eq!(span(&["model"], false), Some(1..2));
    }

    #[test]
    fn dotted_keys_build_tables() {
        let doc = parse("a.b.c = 1\n[t]\nx.y = \"z\"\n").unwrap();
        assert_eq!(table(&doc, &["a", "b"]).get("c"), Some(&Value::Integer(1)));
        assert_eq!(table(&doc, &["t", "x"]).get("y"), Some(&s("z")));
    }

    #[test]
    fn refuses_what_it_does_not_understand_with_the_line() {
        let cases = [
            ("a = 1\n[[servers]]\n", 2, "arrays of tables"),
            ("\n\nwhen = 1979-05-27T07:32:00Z\n", 3, "dates and times"),
            ("at = 07:32:00\n", 1, "dates and times"),
            ("[a]\nx = 1\n[a]\n", 3, "table [a] is defined twice"),
            ("x = 1\nx = 2\n", 2, "key x is defined twice"),
            ("x = \"open\n", 1, "unterminated string"),
            ("x = 1 y = 2\n", 1, "one key = value per line"),
            ("x = \"\\q\"\n", 1, "unknown escape"),
            ("x = [1, 2\n", 2, "expected ',' or ']'"),
            ("x = 012\n", 1, "is not a number"),
            ("x = 1__0\n", 1, "is not a number"),
            ("= 1\n", 1, "expected a key"),
            ("x 1\n", 1, "expected '='"),
            ("x = 1\n[x.y]\n", 2, "x is an integer, not a table"),
            ("x = {a = 1, a = 2}\n", 1, "key a is defined twice"),
            ("x = yes\n", 1, "expected a value"),
        ];
        for (text, line, message) in cases {
            let error = parse(text).unwrap_err();
            assert_eq!(error.line, line, "{text:?}: {error}");
            assert!(error.message.contains(message), "{text:?}: {error}");
        }
    }

    #[test]
    fn refuses_what_the_toml_test_suite_found_it_read() {
        let cases = [
            ("a = {x = 1}\n[a]\n", 2, "written whole"),
            ("a = {x = 1}\n[a.b]\n", 2, "written whole"),
            (
                "[p]\nt = { name = \"n\" }\nt.edible = false\n",
                3,
                "written whole",
            ),
            ("t = { a = {}, a.b = 1 }\n", 1, "written whole"),
            (
                "[f]\napple.color = \"red\"\n[f.apple]\n",
                3,
                "defined twice",
            ),
            ("[a.b.c]\nz = 9\n[a]\nb.c.t = 1\n", 4, "defined above"),
            ("x = 'a\u{7f}'\n", 1, "control character"),
            ("x = \"\"\"a\rb\"\"\"\n", 1, "control character"),
            ("x = 1_e2\n", 1, "is not a number"),
            ("x = 0x_1\n", 1, "is not a number"),
            ("x = 0x-1\n", 1, "is not a number"),
        ];
        for (text, line, message) in cases {
            let error = parse(text).unwrap_err();
            assert_eq!(error.line, line, "{text:?}: {error}");
            assert!(error.message.contains(message), "{text:?}: {error}");
        }
    }

    #[test]
    fn reads_what_toml_1_1_allows() {
        let doc = parse("t = { a = 1,\n  b = 2, }\nmin = -9223372036854775808\n# \u{80} \u{9f}\n")
            .unwrap();
        assert_eq!(table(&doc, &["t"]).get("b"), Some(&Value::Integer(2)));
        assert_eq!(doc.root.get("min"), Some(&Value::Integer(i64::MIN)));
    }
}
