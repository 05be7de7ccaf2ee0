//! What a successful read hands back: the config, its warnings and the
//! file's stamp; and `check`'s stricter view of those warnings, where a key
//! that nearly matches a known one is an error.

use super::model::Config;
use super::problems::{ConfigError, Problem};
use crate::sys::Stamp;
use std::path::Path;

/// A loaded config plus the warnings found on the way.
#[derive(Debug)]
pub struct Loaded {
    pub config: Config,
    pub warnings: Vec<Problem>,
    /// The file's stamp, taken before it was read (`load`; `None` from
    /// `parse`): what the config watch compares the file with first, so a
    /// change made after the read is seen.
    pub stamp: Option<Stamp>,
}

impl Loaded {
    /// For `check`: the unknown keys that are a near miss of a known one, as
    /// the problems of a config error (the other warnings with them), since
    /// such a typo changes what the config means; `None` when there is none.
    /// Serving only warns of them.
    pub fn near_misses(&self, file: &Path) -> Option<ConfigError> {
        let (misses, warnings): (Vec<&Problem>, Vec<&Problem>) =
            self.warnings.iter().partition(|w| w.near_miss.is_some());
        let problems: Vec<Problem> = misses
            .into_iter()
            .map(|miss| Problem {
                path: miss.path.clone(),
                message: format!(
                    "unknown key; did you mean '{}'? (serving only warns of it; check \
                     fails, since the typo changes what the config means)",
                    miss.near_miss.as_deref().unwrap_or_default()
                ),
                near_miss: None,
            })
            .collect();
        (!problems.is_empty()).then(|| ConfigError {
            file: file.to_path_buf(),
            problems,
            warnings: warnings.into_iter().cloned().collect(),
        })
    }
}
