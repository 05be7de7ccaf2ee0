//! How long a stop takes: the grace a stopping server gets at each step
//! (the pump's), and the longest the handle waits for the whole sequence.
//! Constants only, so the pump and the handle agree without importing each
//! other.

use std::time::Duration;

/// How long a stopping server gets after its input is closed, and again
/// after it was asked to end.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(2);
/// The longest a stop waits for the pump to run the stop sequence.
pub(crate) const STOP_LIMIT: Duration = Duration::from_secs(2 * STOP_GRACE.as_secs() + 2);
