//! What a meta-tool call ends in: an `Outcome`, the `CallToolResult` the
//! session sends, and the one error text several meta-tools give
//! (`not_configured`). No IO; nothing here knows any one meta-tool.

use crate::fleet::toolbox::Toolboxes;
use crate::protocol::mcp::TextResult;
use serde_json::value::RawValue;

/// A finished meta-tool call: the `CallToolResult` to send.
pub(crate) struct Outcome {
    pub text: String,
    pub is_error: bool,
    /// `text` is a JSON object, also sent as `structuredContent` (2025-06-18+).
    pub json: bool,
}

impl Outcome {
    pub(crate) fn error(text: String) -> Outcome {
        Outcome {
            text,
            is_error: true,
            json: false,
        }
    }

    pub(crate) fn ok(text: String) -> Outcome {
        Outcome {
            is_error: false,
            ..Outcome::error(text)
        }
    }

    /// The `CallToolResult`; `structuredContent` only when the version has it.
    pub(crate) fn result(&self, structured_allowed: bool) -> TextResult<'_> {
        let base = if self.is_error {
            TextResult::error(&self.text)
        } else {
            TextResult::ok(&self.text)
        };
        let structured = (self.json && structured_allowed)
            .then(|| serde_json::from_str::<&RawValue>(&self.text).ok())
            .flatten();
        base.with_structured(structured)
    }
}

/// The error for a toolbox name the config does not have, with "did you
/// mean" (the fleet's, which `use_tool` gives too).
pub(crate) fn not_configured(toolboxes: &Toolboxes, name: &str) -> String {
    crate::fleet::toolbox::unknown_toolbox(&toolboxes.names(), name)
}
