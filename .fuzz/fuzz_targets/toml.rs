//! Fuzzes the TOML subset that `install` edits Codex's `config.toml` with,
//! and the edits themselves (`hosts::check_toml`): any text either is
//! refused (on a line it has) or parses with every key's lines in its span,
//! and then the install's output parses again with every other value as it
//! was, installing again changes nothing, and the undo gives back the very
//! bytes. Beside "no panic, no hang", a broken property is a finding.
//!
//! The seeds are the toml-test suite's cases (`scripts/toml-test`). Run it
//! from the repository root with a scratch corpus first, so that new inputs
//! do not land in the committed seeds:
//!
//! ```text
//! scratch="$(mktemp -d)"
//! cargo +nightly fuzz run --fuzz-dir .fuzz toml "$scratch" .fuzz/seeds/toml \
//!     -- -max_total_time=600
//! ```

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_workbench::hosts;

fuzz_target!(|data: &[u8]| {
    // A host's file that is not UTF-8 is refused when it is read.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(broken) = hosts::check_toml(text) {
        panic!("{broken}\n{text:?}");
    }
});
