//! What the fleet loop hears of, besides its timers and the children's
//! `tools/list_changed` reports: one closed enum. No IO here.

use crate::config::Config;
use crate::downstream::Downstream;
use crate::fleet::toolbox::Slot;
use crate::sys::Stamp;
use crossbeam_channel::Sender;
use std::path::PathBuf;
use std::sync::Weak;
use std::time::{Duration, Instant};

pub(crate) enum Event {
    /// Put a server to sleep once it went its timeout without a call.
    WatchIdle(Watched),
    /// Watch config file `path`, whose contents are `applied` now, read
    /// after its stamp `seen` was taken; `events` is the loop's own channel,
    /// for the reload signal's waiter and the reload worker (until then the
    /// loop holds no sender of its own, so it ends when the fleet does).
    WatchConfig {
        path: PathBuf,
        applied: Config,
        seen: Option<Stamp>,
        events: Sender<Event>,
    },
    /// SIGUSR1: load the config again now.
    ReloadRequested,
    /// The reload worker is done; the config now applied.
    Reloaded(Config),
}

/// A server the idle timer watches.
pub(crate) struct Watched {
    pub slot: Weak<Slot>,
    pub server: String,
    pub conn: Weak<Downstream>,
    pub timeout: Duration,
    /// When it joined the watch: a server is idle from then at the earliest
    /// (its start-up is not idle time).
    pub since: Instant,
}
