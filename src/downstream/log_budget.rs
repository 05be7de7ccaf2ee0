//! Limits how many lines of a server's stderr or stdout noise are logged: a
//! server that floods must not slow the workbench down through its own logs.
//! Owned by the pump. No IO but the warning that lines were dropped.

use std::time::{Duration, Instant};

pub(super) struct LogBudget {
    what: &'static str,
    window: Instant,
    logged: u32,
    dropped: u64,
}

impl LogBudget {
    const PER_SECOND: u32 = 200;

    pub(super) fn new(what: &'static str) -> LogBudget {
        LogBudget {
            what,
            window: Instant::now(),
            logged: 0,
            dropped: 0,
        }
    }

    /// Whether the next line may be logged; reports what was dropped.
    pub(super) fn allow(&mut self, label: &str) -> bool {
        if self.window.elapsed() >= Duration::from_secs(1) {
            if self.dropped > 0 {
                log::warn!(
                    "[{label}] {} {} lines were not logged (flood)",
                    self.dropped,
                    self.what
                );
            }
            *self = LogBudget::new(self.what);
        }
        self.logged += 1;
        if self.logged > Self::PER_SECOND {
            self.dropped += 1;
        }
        self.logged <= Self::PER_SECOND
    }
}
