//! `mcp-workbench learned [list | clear]` (docs/reference.md §2, §9): what
//! `find_tools` learned from use for one config, read from the tool
//! catalog's file; `clear` forgets it all (a running workbench of the
//! config forgets it at its next write of the catalog).
//!
//! Prints on stdout; starts no server and serves no host. There is nothing
//! secret to show: an association is stemmed query words and a tool's name.

use crate::catalog::Catalog;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Lists (or, with `clear`, forgets) what was learned for config file `path`.
pub(super) fn run(path: &Path, clear: bool, out: &mut impl Write) -> ExitCode {
    let catalog = Catalog::default();
    catalog.attach(path);
    let learned = catalog.learned();
    let written = if clear {
        catalog.forget();
        catalog.save();
        writeln!(
            out,
            "forgot {} association{} learned from use",
            learned.entries.len(),
            if learned.entries.len() == 1 { "" } else { "s" }
        )
    } else if learned.entries.is_empty() {
        writeln!(out, "nothing learned from use yet")
    } else {
        learned.entries.iter().try_for_each(|a| {
            writeln!(
                out,
                "{}/{}/{}: {}",
                a.toolbox,
                a.server,
                a.tool,
                a.words.join(" ")
            )
        })
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(1),
    }
}
