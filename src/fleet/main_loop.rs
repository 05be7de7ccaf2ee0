//! The fleet loop: one thread that owns every timer of the fleet and decides
//! what is due. Its inputs are one closed `Event` enum (from the toolbox
//! workers, the reload signal and the reload worker), the children's
//! `tools/list_changed` reports (dynamic mode), and one timer heap:
//! - idle timers (`idleTimeoutMs`): a server that went its timeout without a
//!   call in flight is put to sleep by its toolbox's queue, which checks
//!   again, atomically, so a call that came meanwhile keeps it awake;
//! - re-list timers (dynamic mode): a child's burst of `list_changed` settles
//!   (100 ms of quiet, at most 1 s after its first notice), then a re-list
//!   runs on a thread of its own;
//! - the config poll: once a second the file's stamp (identity, size and
//!   modification time), compared with the one taken before the file was
//!   last read; a change, or SIGUSR1, starts a reload on a worker.
//!
//! The loop only decides and submits: anything that takes time (a sleep's
//! stop, a re-list, a reload) runs on a toolbox worker or a thread of its
//! own, so no peer can hold the loop up. Calls never pass through here.

use super::event::{Event, Watched};
use super::lifecycle;
use super::queues::Op;
use super::reload;
use super::timers::Timers;
use super::Fleet;
use crate::config::Config;
use crate::downstream::{Downstream, Idle};
use crate::fleet::launch::Launcher;
use crate::sys::{self, Stamp};
use crossbeam_channel::{after, never, select, Receiver, Sender};
use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::thread;
use std::time::{Duration, Instant};

enum Timer {
    Idle(Watched),
    /// `conn` said its tools changed, first at `first`.
    Relist {
        conn: Arc<Downstream>,
        first: Instant,
    },
    ConfigPoll,
}

/// How often the config file's metadata is read.
const POLL: Duration = Duration::from_secs(1);
/// A burst of `list_changed` has settled after this much quiet...
const DEBOUNCE: Duration = Duration::from_millis(100);
/// ...or this long after its first notice, whichever comes first.
const MAX_WAIT: Duration = Duration::from_secs(1);

/// The fleet of `config`, with its loop running; `changes`: the children's
/// `list_changed` reports (dynamic mode). It serves the sessions `attach`ed.
pub(crate) fn start(
    config: &Config,
    launcher: Launcher,
    changes: Option<Receiver<Arc<Downstream>>>,
) -> Arc<Fleet> {
    Arc::new_cyclic(|fleet| {
        let events = spawn(fleet.clone(), changes);
        Fleet::new(config, launcher, events)
    })
}

/// Starts the loop of the fleet `fleet` will be. Returns where its events go.
/// The loop ends once the fleet is gone and the channel closed, or at its
/// first look after the fleet is gone.
fn spawn(fleet: Weak<Fleet>, changes: Option<Receiver<Arc<Downstream>>>) -> Sender<Event> {
    // Unbounded: the senders are the fleet's own workers (one event per
    // server start or sleep check, one per reload) and the reload signal's
    // waiter (one per signal; the loop coalesces them). The loop never blocks
    // on anyone, so the queue stays short, and a worker never waits for it.
    let (tx, events) = crossbeam_channel::unbounded();
    let spawned = thread::Builder::new()
        .name("fleet".into())
        .stack_size(256 * 1024)
        .spawn(move || {
            let mut fleet = Loop {
                fleet,
                timers: Timers::default(),
                watch: None,
            };
            fleet.run(&events, changes);
        });
    if let Err(e) = spawned {
        log::warn!(
            "cannot start the fleet loop: {e}; idle servers keep running and the config \
             applies at the next start"
        );
    }
    tx
}

struct Loop {
    fleet: Weak<Fleet>,
    timers: Timers<Timer>,
    watch: Option<ConfigWatch>,
}

/// The config watch's state.
struct ConfigWatch {
    path: PathBuf,
    /// The loop's own channel: the reload worker reports there.
    events: Sender<Event>,
    /// The file's stamp taken before it was last read (at start-up, or as a
    /// reload began): never newer than what was read.
    seen: Option<Stamp>,
    /// The config applied last; `None` while a reload worker has it.
    applied: Option<Config>,
    /// A reload was asked for while one ran: run one more after it.
    again: bool,
}

impl Loop {
    fn run(&mut self, events: &Receiver<Event>, changes: Option<Receiver<Arc<Downstream>>>) {
        let mut changes = changes.unwrap_or_else(never);
        loop {
            let timer = match self.timers.next_deadline() {
                Some(at) => after(at.saturating_duration_since(Instant::now())),
                None => never(),
            };
            select! {
                recv(events) -> event => match event {
                    Ok(event) => self.event(event),
                    // The workbench and every worker are gone.
                    Err(_) => return,
                },
                recv(changes) -> conn => match conn {
                    Ok(conn) => self.timers.schedule(
                        due(&conn, Instant::now()),
                        Timer::Relist { conn, first: Instant::now() },
                    ),
                    Err(_) => changes = never(),
                },
                recv(timer) -> _ => {}
            }
            let now = Instant::now();
            while let Some(timer) = self.timers.pop_due(now) {
                self.fire(timer, now);
            }
            if self.fleet.strong_count() == 0 {
                return;
            }
        }
    }

    fn event(&mut self, event: Event) {
        match event {
            Event::WatchIdle(watched) => {
                let at = watched.since + watched.timeout;
                self.timers.schedule(at, Timer::Idle(watched));
            }
            Event::WatchConfig {
                path,
                applied,
                seen,
                events,
            } => {
                let signal = events.clone();
                sys::on_reload_signal("reload signal", move || {
                    let _ = signal.send(Event::ReloadRequested);
                });
                // Not a stamp taken now: the file may have changed since it
                // was read, before this loop got here.
                self.watch = Some(ConfigWatch::new(path, applied, seen, events));
                self.timers
                    .schedule(Instant::now() + POLL, Timer::ConfigPoll);
            }
            Event::ReloadRequested => self.reload(),
            Event::Reloaded(config) => {
                let Some(watch) = &mut self.watch else { return };
                watch.applied = Some(config);
                if std::mem::take(&mut watch.again) {
                    self.reload();
                }
            }
        }
    }

    fn fire(&mut self, timer: Timer, now: Instant) {
        match timer {
            Timer::Idle(watched) => self.idle(watched, now),
            Timer::Relist { conn, first } => {
                let at = due(&conn, first);
                if at > now {
                    // The burst went on.
                    return self.timers.schedule(at, Timer::Relist { conn, first });
                }
                let Some(fleet) = self.fleet.upgrade() else {
                    return;
                };
                let spawned = thread::Builder::new()
                    .name("relist".into())
                    .spawn(move || lifecycle::relist(&fleet, &conn));
                if let Err(e) = spawned {
                    log::warn!("cannot start a re-list: {e}");
                }
            }
            Timer::ConfigPoll => {
                self.timers.schedule(now + POLL, Timer::ConfigPoll);
                self.pins_poll();
                if self.watch.as_ref().is_some_and(ConfigWatch::changed) {
                    self.reload();
                }
            }
        }
    }

    /// With `pinTools`: the pins file is looked at with the config (an
    /// approval applies without a restart): one `stat` here; when it
    /// changed, reading it and judging the open servers again run on a
    /// thread of their own, like every other piece of work.
    fn pins_poll(&self) {
        let Some(fleet) = self.fleet.upgrade() else {
            return;
        };
        if !fleet.pins.as_ref().is_some_and(|p| p.stamp_changed()) {
            return;
        }
        let spawned = thread::Builder::new()
            .name("pins".into())
            .stack_size(256 * 1024)
            .spawn(move || fleet.refresh_pins());
        if let Err(e) = spawned {
            log::warn!("cannot look at the pins file: {e}");
        }
    }

    /// The idle timer of `watched` fired: puts it to sleep, looks again
    /// later, or forgets it.
    fn idle(&mut self, watched: Watched, now: Instant) {
        let Some(conn) = watched.conn.upgrade() else {
            return;
        };
        match idle_check(conn.idle_since(), watched.since, watched.timeout, now) {
            IdleCheck::Forget => {}
            IdleCheck::Again(at) => self.timers.schedule(at, Timer::Idle(watched)),
            IdleCheck::Sleep => {
                let (Some(fleet), Some(slot)) = (self.fleet.upgrade(), watched.slot.upgrade())
                else {
                    return;
                };
                let op = Op::Sleep {
                    server: watched.server,
                    conn: watched.conn,
                    timeout: watched.timeout,
                };
                lifecycle::submit(&fleet, &slot, op);
            }
        }
    }

    /// Loads and applies the config file on a worker, unless one runs: then
    /// once more after it.
    fn reload(&mut self) {
        let Some(watch) = &mut self.watch else { return };
        let Some(applied) = watch.applied.take() else {
            watch.again = true;
            return;
        };
        let Some(fleet) = self.fleet.upgrade() else {
            return;
        };
        watch.reading();
        let (path, done) = (watch.path.clone(), watch.events.clone());
        let spawned = thread::Builder::new()
            .name("reload".into())
            .stack_size(256 * 1024)
            .spawn(move || {
                let applied = reload::reload(&fleet, &path, applied);
                let _ = done.send(Event::Reloaded(applied));
            });
        if let Err(e) = spawned {
            log::warn!("cannot start a reload: {e}; the running config stays");
        }
    }
}

impl ConfigWatch {
    /// A watch of `path`, whose contents are `applied`, read after its
    /// stamp `seen` was taken.
    fn new(path: PathBuf, applied: Config, seen: Option<Stamp>, events: Sender<Event>) -> Self {
        ConfigWatch {
            path,
            events,
            seen,
            applied: Some(applied),
            again: false,
        }
    }

    /// The poll: whether the file changed since it was last read (one
    /// `stat`).
    fn changed(&self) -> bool {
        Stamp::of(&self.path) != self.seen
    }

    /// A reload is about to read the file (after a change, or SIGUSR1):
    /// the stamp is taken first, so a change made after the read is seen by
    /// the next poll, and what the reload reads is not seen again.
    fn reading(&mut self) {
        self.seen = Stamp::of(&self.path);
    }
}

/// When a child that said its tools changed, first at `first`, is re-listed.
fn due(conn: &Downstream, first: Instant) -> Instant {
    (conn.last_change() + DEBOUNCE).min(first + MAX_WAIT)
}

/// What an idle timer does when it fires.
#[derive(Debug, PartialEq)]
enum IdleCheck {
    /// The server no longer serves: it is not watched any more.
    Forget,
    /// It went its timeout without a call: its queue puts it to sleep.
    Sleep,
    /// Look again then.
    Again(Instant),
}

/// The idle check of a server watched since `since`, whose calls are
/// `idle`, at `now`.
fn idle_check(idle: Idle, since: Instant, timeout: Duration, now: Instant) -> IdleCheck {
    let at = match idle {
        Idle::NotServing => return IdleCheck::Forget,
        // The earliest it can be idle long enough: look again then.
        Idle::Busy => now + timeout,
        Idle::Since(quiet) => quiet.max(since) + timeout,
    };
    if at <= now {
        IdleCheck::Sleep
    } else {
        IdleCheck::Again(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config;
    use std::fs;
    use std::path::Path;

    /// Saves `text` as editors do: a new file renamed over `file`.
    fn save(file: &Path, text: &str) {
        let new = file.with_extension("new");
        fs::write(&new, text).unwrap();
        fs::rename(&new, file).unwrap();
    }

    /// The watch compares the file with the stamp taken before the start-up
    /// read, not with one taken when the loop gets to it: a save made
    /// between the two (the loop's thread can come late under load) is a
    /// change. A reload records what it reads, so that is not seen again.
    #[test]
    fn the_config_watch_sees_every_change_made_after_a_read_and_no_other() {
        let dir = std::env::temp_dir().join(format!("config-watch-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("config.json");
        fs::write(&file, r#"{"toolboxes": {}}"#).unwrap();
        let loaded = config::load(&file).unwrap();
        assert!(loaded.stamp.is_some());
        let (events, _) = crossbeam_channel::unbounded();
        let watch = |loaded: &config::Loaded| {
            let config = loaded.config.clone();
            ConfigWatch::new(file.clone(), config, loaded.stamp, events.clone())
        };
        assert!(!watch(&loaded).changed(), "nothing changed since the read");

        // Saved after the read, before the watch begins.
        save(
            &file,
            r#"{"toolboxes": {"later": {"description": "d", "mcpServers": {}}}}"#,
        );
        let mut watch = watch(&loaded);
        assert!(watch.changed(), "the first poll sees the save");
        assert!(watch.changed(), "until a reload reads it");
        watch.reading();
        assert!(!watch.changed(), "what a reload read is no change");

        // Same size, saved as a reload begins: after the read, a change.
        save(
            &file,
            r#"{"toolboxes": {"later": {"description": "e", "mcpServers": {}}}}"#,
        );
        assert!(watch.changed());
        watch.reading();
        assert!(!watch.changed());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn idle_checks() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let timeout = ms(100);
        let check = |idle, now| idle_check(idle, t0, timeout, now);
        assert_eq!(check(Idle::NotServing, t0 + ms(500)), IdleCheck::Forget);
        assert_eq!(
            check(Idle::Busy, t0 + ms(500)),
            IdleCheck::Again(t0 + ms(600))
        );
        // Quiet since before the watch began: counted from the watch.
        assert_eq!(
            check(Idle::Since(t0 - ms(50)), t0 + ms(60)),
            IdleCheck::Again(t0 + ms(100))
        );
        assert_eq!(
            check(Idle::Since(t0 - ms(50)), t0 + ms(100)),
            IdleCheck::Sleep
        );
        // A call ended later: counted from its end.
        assert_eq!(
            check(Idle::Since(t0 + ms(80)), t0 + ms(100)),
            IdleCheck::Again(t0 + ms(180))
        );
        assert_eq!(
            check(Idle::Since(t0 + ms(80)), t0 + ms(180)),
            IdleCheck::Sleep
        );
    }
}
