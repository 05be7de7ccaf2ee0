//! What is wrong with a config: one `Problem` at its JSON path, and the
//! `ConfigError` that carries every problem and warning of a file, with the
//! text a user reads. Builds no problems itself and does no IO.

use serde::Serialize;
use std::fmt;
use std::path::PathBuf;

/// One problem or warning, and where it is in the file (a JSON path such as
/// `toolboxes.dev.mcpServers.fs.command`; empty for the whole document).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Problem {
    pub path: String,
    pub message: String,
    /// For an unknown key close to a known one (`toolFilter`), that known
    /// key: a warning when serving (hosts' configs carry extra keys), an
    /// error for `check` (`Loaded::near_misses`), since the typo changes what
    /// the config means.
    #[serde(skip)]
    pub near_miss: Option<String>,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// A config that could not be used: every problem found, each with its path,
/// and the warnings found on the way (a misspelt key often explains an error).
#[derive(Debug)]
pub struct ConfigError {
    /// The file as the user named it.
    pub file: PathBuf,
    pub problems: Vec<Problem>,
    pub warnings: Vec<Problem>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.file.display();
        match &self.problems[..] {
            // The file as a whole: it cannot be read, or is not JSON.
            [one] if one.path.is_empty() => writeln!(f, "error: {file}: {}", one.message)?,
            problems => {
                let n = problems.len();
                writeln!(
                    f,
                    "error: invalid config {file} ({n} problem{}):",
                    plural(n)
                )?;
                for problem in problems {
                    writeln!(f, "  {file}: {problem}")?;
                }
            }
        }
        let n = self.warnings.len();
        if n > 0 {
            writeln!(f, "and {n} warning{}:", plural(n))?;
            for warning in &self.warnings {
                writeln!(f, "  {file}: {warning}")?;
            }
        }
        Ok(())
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
