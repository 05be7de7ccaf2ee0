//! What a toolbox copy's worker found when it opened or closed the copy, and
//! the join that makes one answer of several copies' findings.
//!
//! A shared fleet's session whose toolbox mixes shared servers with
//! `"shareServers": false` ones uses two copies of it (`toolbox::Part`): the
//! host's `open_toolbox` or `close_toolbox` goes to both, each runs on its own
//! copy's worker, and the worker that reports last answers for both. No IO,
//! no threads.

use crate::config::ToolboxConfig;
use crate::fleet::toolbox::OpenToolbox;
use crate::lock;
use std::sync::{Arc, Mutex};

/// What opening one copy found.
pub(crate) struct Opened {
    /// The copy's definition (only the servers of its part).
    pub config: Arc<ToolboxConfig>,
    /// Each of its servers' state, in `config` order.
    pub open: OpenToolbox,
    /// Warnings for the result (servers restarted).
    pub notes: Vec<String>,
    /// None of its enabled servers started: the copy stayed closed.
    pub failed: bool,
}

/// What opening one copy found, or why it could not be opened.
pub(crate) type OpenFound = Result<Opened, String>;

/// What closing one copy did.
#[derive(Debug, PartialEq)]
pub(crate) enum Closed {
    /// It was open for this session: this many servers stopped.
    Stopped(usize),
    /// This session's hold is released; this many other sessions still hold it.
    Released(usize),
    NotOpen,
    /// The toolbox is not configured (a reload removed it): the text.
    NotConfigured(String),
}

/// The findings of the copies one request went to; the last to report
/// gets them all.
pub(crate) struct Join<T> {
    /// The toolbox as configured, every server of it: the answer describes it.
    pub base: Arc<ToolboxConfig>,
    parts: Mutex<Vec<Option<T>>>,
}

/// Which part of a join a copy's operation reports.
pub(crate) type Share<T> = (Arc<Join<T>>, usize);

impl<T> Join<T> {
    /// A join of `n` parts, for toolbox `base`.
    pub(crate) fn new(base: Arc<ToolboxConfig>, n: usize) -> Arc<Join<T>> {
        Arc::new(Join {
            base,
            parts: Mutex::new((0..n).map(|_| None).collect()),
        })
    }

    /// Reports part `index`; every part, in order, once this was the last.
    pub(crate) fn put(&self, index: usize, found: T) -> Option<Vec<T>> {
        let mut parts = lock(&self.parts);
        if let Some(slot) = parts.get_mut(index) {
            *slot = Some(found);
        }
        if parts.is_empty() || parts.iter().any(Option::is_none) {
            return None;
        }
        Some(parts.drain(..).flatten().collect())
    }
}

/// What one copy found, with every part of its request once all reported:
/// the toolbox the answer describes (`None` for a request to one copy, which
/// is complete at once) and the findings in order. `None` while another copy
/// has yet to report: that copy's worker answers.
pub(crate) fn gather<T>(
    share: Option<Share<T>>,
    found: T,
) -> Option<(Option<Arc<ToolboxConfig>>, Vec<T>)> {
    match share {
        None => Some((None, vec![found])),
        Some((join, index)) => {
            let all = join.put(index, found)?;
            Some((Some(Arc::clone(&join.base)), all))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_part_gets_them_all_once() {
        let base = Arc::new(ToolboxConfig {
            name: "t".into(),
            description: "d".into(),
            servers: Vec::new(),
        });
        let join = Join::new(base, 2);
        assert_eq!(join.put(1, "own"), None);
        assert_eq!(join.put(0, "shared"), Some(vec!["shared", "own"]));
        assert_eq!(join.put(0, "again"), None, "answered once");
    }
}
