//! Living beside the MCP hosts (docs/reference.md §12): reading their
//! configs to move their servers into toolboxes (`import`), and putting the
//! workbench into them (`install`). The hosts as one table, a row per host
//! (`host`; each one's files per system in `paths`), each format's entries mapped onto the workbench's keys
//! (`json_entry` for the JSON hosts, `codex` over a hand-written TOML
//! subset, `toml`, tested against the toml-test suite and fuzzed through
//! `toml_check`; `vars` for their variables; `jsonc` for comments), what
//! was found (`found`, `read`), the plan of toolboxes (`plan`), their
//! descriptions (`describe`; `listing`, which starts the servers to list
//! them; `refill`, which finds those an earlier import wrote unlisted), the
//! masking of secrets for printing (`mask`), the merge into the workbench's
//! config (`merge`), the edit of a host's file in its text (`edit`,
//! `json_spans`, `json_splice`) and its reverse (`undo`, `undo_toml`), its
//! write where a link points without overwriting what the host wrote
//! meanwhile (`rewrite`), and backups and atomic writes in the owner's
//! layout (`files`).
//!
//! Above the fleet (`listing` starts servers with its launcher), below the
//! commands, which print.

mod codex;
pub(crate) mod describe;
pub(crate) mod edit;
pub(crate) mod entry;
pub(crate) mod files;
#[cfg(test)]
mod fixtures;
pub(crate) mod found;
mod host;
mod json_entry;
mod json_spans;
mod json_splice;
mod jsonc;
pub(crate) mod listing;
pub(crate) mod mask;
pub(crate) mod merge;
pub(crate) mod paths;
pub(crate) mod plan;
pub(crate) mod read;
pub(crate) mod refill;
pub(crate) mod rewrite;
pub(crate) mod toml;
mod toml_check;
#[cfg(test)]
mod toml_suite;
pub(crate) mod undo;
mod undo_toml;
mod undone;
mod vars;

pub use host::Host;
pub(crate) use host::ALL;

/// What the TOML subset and Codex's edits promise, checked on `text`
/// (`toml_check`): the first property it breaks. What the fuzz target
/// (`.fuzz/`, `toml`) runs on its input.
#[doc(hidden)]
pub fn check_toml(text: &str) -> Result<(), String> {
    toml_check::check(text)
}
