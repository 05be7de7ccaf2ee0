//! What `install --undo` did, and the rules its JSON reversal (`undo`) and
//! its TOML one (`undo_toml`) share: what becomes of the `workbench` entry,
//! and which of the backup's servers go back. Compares values only: finds
//! nothing in a text and edits none. No IO.

use super::edit::ENTRY;
use super::entry::Identity;
use std::collections::HashSet;

/// What became of the `workbench` entry.
#[derive(Debug, PartialEq)]
pub(crate) enum Entry {
    /// Taken out.
    Removed,
    /// The file's own entry from before the install is back.
    Restored,
    /// There is none.
    Missing,
    /// Left as it is: it is not what the install wrote.
    Changed,
}

impl Entry {
    /// What becomes of the entry: `now` the file's, `own` the backup's,
    /// `installed` the one the install writes from the backup.
    pub(crate) fn judge<T: PartialEq>(
        now: Option<&T>,
        own: Option<&T>,
        installed: Option<&T>,
    ) -> Entry {
        match (now, own) {
            (None, _) => Entry::Missing,
            (Some(current), _) if Some(current) != installed => Entry::Changed,
            (Some(_), Some(own)) if Some(own) != installed => Entry::Restored,
            (Some(_), _) => Entry::Removed,
        }
    }
}

/// The reversed text and what was and was not done.
#[derive(Debug)]
pub(crate) struct Undone {
    pub text: String,
    pub entry: Entry,
    /// The paths of the servers put back.
    pub put_back: Vec<String>,
    /// Servers not put back: the path and why.
    pub left: Vec<(String, String)>,
}

/// Whether a server of this `identity` may go back: the workbench's config
/// holds it (`held`), or cannot be read (`None`: every server may).
pub(crate) fn held_by(held: Option<&HashSet<Identity>>, identity: Option<Identity>) -> bool {
    held.is_none_or(|held| identity.is_some_and(|i| held.contains(&i)))
}

/// The servers of the backup's list `old` (not the workbench's entry, and
/// only those `may_go_back` allows) that the list `here` lacks now, in the
/// backup's order. One that `here` has with another value stays out, and is
/// named in `left` with its path (`shown`).
pub(crate) fn missing<'a, T: PartialEq>(
    old: &'a [(String, T)],
    here: &[(String, T)],
    may_go_back: impl Fn(&T) -> bool,
    shown: impl Fn(&str) -> String,
    left: &mut Vec<(String, String)>,
) -> Vec<&'a (String, T)> {
    old.iter()
        .filter(|(name, value)| name != ENTRY && may_go_back(value))
        .filter(|(name, value)| match here.iter().find(|(n, _)| n == name) {
            Some((_, same)) if same == value => false,
            Some(_) => {
                left.push((
                    shown(name),
                    "a server of that name was added since".to_string(),
                ));
                false
            }
            None => true,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_is_judged_against_what_the_install_writes() {
        let (wb, mine, other) = (Some(&1), Some(&2), Some(&3));
        assert_eq!(Entry::judge(None, mine, wb), Entry::Missing);
        assert_eq!(Entry::judge(other, mine, wb), Entry::Changed);
        assert_eq!(Entry::judge(wb, mine, wb), Entry::Restored);
        assert_eq!(Entry::judge(wb, wb, wb), Entry::Removed);
        assert_eq!(Entry::judge(wb, None, wb), Entry::Removed);
    }

    #[test]
    fn only_servers_gone_since_go_back() {
        let old = [
            ("a".to_string(), 1),
            (ENTRY.to_string(), 0),
            ("b".to_string(), 2),
            ("c".to_string(), 3),
            ("d".to_string(), 4),
        ];
        let here = [("b".to_string(), 2), ("c".to_string(), 9)];
        let mut left = Vec::new();
        let back = missing(&old, &here, |v| *v != 4, |n| format!("s.{n}"), &mut left);
        let names: Vec<&str> = back.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["a"]);
        assert_eq!(
            left,
            [(
                "s.c".to_string(),
                "a server of that name was added since".to_string()
            )]
        );
    }
}
