//! What the arguments gave, as `parse` reads them and before any command is
//! built: the command word, the words after it, and each flag with its
//! value. The definitions (`defs`) build a command from it. No IO.

use super::command::ImportFrom;
use std::path::PathBuf;

/// One flag's value, as its definition reads it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    /// A switch: no value.
    On,
    Path(PathBuf),
    From(ImportFrom),
    /// A whole number above 0.
    Number(u64),
}

#[derive(Debug, Default)]
pub(super) struct Given {
    /// The command word (`None`: serving).
    pub word: Option<&'static str>,
    /// The words after a command that takes some (`pins`, `install`, ...).
    pub words: Vec<String>,
    /// Each flag given (by its long name) and its value, in order.
    pub flags: Vec<(&'static str, Value)>,
}

impl Given {
    /// Whether `flag` was given.
    pub(super) fn has(&self, flag: &str) -> bool {
        self.flags.iter().any(|(name, _)| *name == flag)
    }

    /// The path `flag` gave.
    pub(super) fn path(&self, flag: &str) -> Option<PathBuf> {
        self.flags.iter().find_map(|(name, value)| match value {
            Value::Path(path) if *name == flag => Some(path.clone()),
            _ => None,
        })
    }

    /// The number `flag` gave.
    pub(super) fn number(&self, flag: &str) -> Option<u64> {
        self.flags.iter().find_map(|(name, value)| match value {
            Value::Number(n) if *name == flag => Some(*n),
            _ => None,
        })
    }

    /// What every `--from` named, in order.
    pub(super) fn sources(&self) -> Vec<ImportFrom> {
        let from = self.flags.iter().filter_map(|(_, value)| match value {
            Value::From(from) => Some(from.clone()),
            _ => None,
        });
        from.collect()
    }
}
