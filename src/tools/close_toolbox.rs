//! `close_toolbox`'s answer, made by the session from what closing its
//! copies of the toolbox did (`fleet::facts::Closed`: one copy, or two for a
//! toolbox whose servers are partly shared, §8).

use super::meta_tools::{self, Outcome};
use crate::fleet::facts::Closed;
use crate::fleet::toolbox::Toolboxes;

/// The answer to `close_toolbox` of toolbox `name`; `toolboxes` name the
/// configured ones for a toolbox that is not.
pub(crate) fn answer(name: &str, closed: &[Closed], toolboxes: &Toolboxes) -> Outcome {
    if closed.contains(&Closed::NotConfigured) {
        return Outcome::error(meta_tools::not_configured(toolboxes, name));
    }
    if closed.iter().all(|c| *c == Closed::NotOpen) {
        return Outcome::error(format!("Toolbox '{name}' is not open"));
    }
    let stopped = closed
        .iter()
        .map(|c| match c {
            Closed::Stopped(n) => *n,
            _ => 0,
        })
        .sum();
    let others = closed
        .iter()
        .map(|c| match c {
            Closed::Released(n) => *n,
            _ => 0,
        })
        .max()
        .unwrap_or(0);
    Outcome::ok(meta_tools::closed(name, stopped, others))
}
