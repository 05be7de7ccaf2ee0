//! The last lines a server said beside the protocol (a child's stderr),
//! kept for error messages. No IO; owned by the pump, which alone writes it:
//! other threads see it only in the failures the pump makes and in what it
//! publishes when it ends.

use std::collections::VecDeque;

/// Lines kept.
const TAIL_LINES: usize = 10;

#[derive(Default)]
pub(super) struct Tail(VecDeque<String>);

impl Tail {
    /// Keeps `line` (trimmed, non-empty), forgetting the oldest past `TAIL_LINES`.
    pub(super) fn keep(&mut self, line: &str) {
        if self.0.len() == TAIL_LINES {
            self.0.pop_front();
        }
        self.0.push_back(line.to_string());
    }

    /// The lines as an error message's end: empty, or a newline, a heading
    /// and the lines indented.
    pub(super) fn text(&self) -> String {
        if self.0.is_empty() {
            return String::new();
        }
        let mut text = String::from("\nLast stderr lines:");
        for line in &self.0 {
            text.push_str("\n  ");
            text.push_str(line);
        }
        text
    }
}
