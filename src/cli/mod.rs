//! The command line (docs/reference.md, "Command line"): every command and
//! every flag defined once (`defs`), the arguments read against those
//! definitions (`parse`), and the `--help` text and the usage line rendered
//! from the same definitions (`usage`). What a parse gives (`command`), and
//! which config a command uses (`config`: `--config`, `$WORKBENCH_CONFIG`,
//! `./workbench-config.json` where it exists, else the user's own from
//! `sys`). No IO: the environment and whether a file exists come through
//! lookups the caller passes.

mod command;
mod config;
mod defs;
mod given;
mod operands;
mod parse;
mod usage;

pub use command::{CallArgs, Command, ImportFrom, PinsAction};
pub use config::{ConfigPath, ConfigSource, DEFAULT_CONFIG};
pub use parse::parse;
pub use usage::{usage, usage_line};

#[cfg(test)]
mod tests;
