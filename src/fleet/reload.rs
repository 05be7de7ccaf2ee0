//! The config applies live (docs/reference.md §3.5): the fleet loop polls
//! the config file's stamp (`sys::Stamp`: identity, size, modification
//! time) every second (editors write a new file and rename it over the old
//! one), and SIGUSR1 asks for a reload at once; the loop then runs `reload`
//! on a worker. A reload loads and validates the file as at start-up; a
//! config with errors changes nothing and is logged with file and JSON path.
//!
//! A valid config is compared with the one applied last; what changed is
//! applied through the toolboxes' lifecycle queues (`lifecycle::reload`):
//! - an added toolbox can be opened, a removed one is not found at once and
//!   its servers finish their calls in flight, then stop;
//! - in an open toolbox, a server whose definition is unchanged keeps its
//!   process; a changed one finishes its calls in flight and stops, and its
//!   new definition starts at its next use;
//! - the meta-tools (names, descriptions) are rebuilt, and the host hears one
//!   `notifications/tools/list_changed` when its tool list changed.
//!
//! `mode` applies at the next start only. No lock is held across IO: the
//! file is read, then the result applied. Nothing here waits for a child.

use super::lifecycle;
use super::queues::Reload;
use super::Fleet;
use crate::config::{self, Config};
use crate::fleet::toolbox::{Slot, Toolbox};
use std::path::Path;
use std::sync::Arc;

/// Loads config file `path` and applies it if it differs from `applied`;
/// returns the config applied now.
pub(crate) fn reload(fleet: &Arc<Fleet>, path: &Path, applied: Config) -> Config {
    match config::load(path) {
        Ok(loaded) => {
            for warning in &loaded.warnings {
                log::warn!("{}: {warning}", path.display());
            }
            if loaded.config != applied {
                apply(fleet, &applied, &loaded.config);
                return loaded.config;
            }
            log::debug!("{}: unchanged", path.display());
        }
        Err(error) => log::error!(
            "the config was not reloaded; the running one stays.\n{}",
            error.to_string().trim_end()
        ),
    }
    applied
}

/// Applies `new` in place of `old` (see the module header).
fn apply(fleet: &Arc<Fleet>, old: &Config, new: &Config) {
    if new.mode != old.mode {
        log::warn!(
            "mode changed to {:?} in the config: it applies when the workbench starts again",
            new.mode
        );
    }
    let (added, changed, removed) = fleet.registry.update(|all| {
        let mut entries = Vec::new();
        let mut added = Vec::new();
        let mut changed = Vec::new();
        for config in &new.toolboxes {
            // Every copy: the base, and a shared fleet's variants (§8).
            let copies: Vec<Toolbox> = all
                .all()
                .filter(|t| t.config.name == config.name)
                .cloned()
                .collect();
            if copies.is_empty() {
                let toolbox = fleet.registry.toolbox_of(config.clone());
                added.push(Arc::clone(&toolbox.slot));
                entries.push(toolbox);
            }
            for kept in copies {
                // A copy of part of the servers (§8) keeps that part.
                let wanted = kept.part.of(config);
                if *kept.config != wanted {
                    changed.push((Arc::clone(&kept.slot), Arc::new(wanted)));
                }
                entries.push(kept);
            }
        }
        let mut removed = Vec::new();
        for mut gone in all.entries_mut().drain(..) {
            if !gone.removed && !new.toolboxes.iter().any(|t| t.name == gone.config.name) {
                gone.removed = true;
                removed.push(Arc::clone(&gone.slot));
            }
            if gone.removed {
                entries.push(gone); // until its queue drops it
            }
        }
        *all.entries_mut() = entries;
        all.native_name_max = new.dynamic_name_max_length;
        all.open_setting = new.open_toolbox_result;
        (added, changed, removed)
    });
    let what = format!(
        "{} toolboxes; added: [{}]; changed: [{}]; removed: [{}]",
        new.toolboxes.len(),
        names(added.iter().map(|slot| &**slot)),
        names(changed.iter().map(|(slot, _)| &**slot)),
        names(removed.iter().map(|slot| &**slot)),
    );
    for (slot, config) in changed {
        lifecycle::reload(fleet, &slot, Reload::Reconfigure(config));
    }
    for slot in removed {
        lifecycle::reload(fleet, &slot, Reload::Remove);
    }
    fleet.config_changed(&new.toolboxes);
    // Said once it is done: a changed server of an idle toolbox refuses new
    // calls from here on (a busy toolbox's worker applies it next).
    log::info!("config reloaded: {what}");
}

fn names<'a>(slots: impl Iterator<Item = &'a Slot>) -> String {
    slots
        .map(|s| s.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use crate::sys::Stamp;

    #[test]
    fn a_file_renamed_over_the_config_is_a_change() {
        let dir = std::env::temp_dir().join(format!("reload-stamp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("c.json");
        std::fs::write(&file, "{}").unwrap();
        let first = Stamp::of(&file);
        assert!(first.is_some());
        assert!(Stamp::of(&file) == first, "unchanged");
        // Same size, and maybe the same modification time: on unix, the
        // inode tells; elsewhere the size does, in this test.
        let next = dir.join("c.json.new");
        std::fs::write(&next, if cfg!(unix) { "[]" } else { "[1]" }).unwrap();
        std::fs::rename(&next, &file).unwrap();
        assert!(Stamp::of(&file) != first);
        std::fs::remove_file(&file).unwrap();
        assert!(Stamp::of(&file).is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
