//! Helpers shared by the integration tests (not every test file uses each).

#![allow(dead_code)]

use std::fs;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

/// The `PATH` the tests give the workbench: the system folders (on Windows,
/// the test's own `PATH`, which holds the system folders there).
pub fn system_path() -> String {
    if cfg!(windows) {
        std::env::var("PATH").unwrap_or_default()
    } else {
        "/usr/local/bin:/usr/bin:/bin".to_string()
    }
}

/// Processes (other than zombies) whose working directory is inside `dir`.
/// The workbench's watchdog works in `/`, so it is never among them. Linux
/// only (it reads `/proc`); on Windows, `tests/windows.rs` checks that no
/// process outlives the workbench in its own way.
pub fn leftover_processes(dir: &Path) -> Vec<String> {
    if cfg!(not(target_os = "linux")) {
        panic!("leftover_processes reads /proc: Linux only");
    }
    let deadline = Instant::now() + Duration::from_millis(500);
    loop {
        let found: Vec<String> = fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .bytes()
                    .all(|b| b.is_ascii_digit())
            })
            .filter(|e| fs::read_link(e.path().join("cwd")).is_ok_and(|cwd| cwd.starts_with(dir)))
            .map(|e| {
                let cmdline = fs::read(e.path().join("cmdline")).unwrap_or_default();
                let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
                format!("{} {}", e.file_name().to_string_lossy(), cmdline.trim())
            })
            .collect();
        if found.is_empty() || Instant::now() >= deadline {
            return found;
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// The pids a script with `appendPidTo` wrote to `log` in `dir`, one per start.
pub fn starts(dir: &Path, log: &str) -> Vec<u32> {
    fs::read_to_string(dir.join(log))
        .unwrap_or_default()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

/// Whether process `pid` runs (Linux: reads `/proc`; a zombie does not run).
pub fn alive(pid: u32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|s| !s.starts_with(" Z"))
    })
}

/// Waits up to 15 s for process `pid` to be gone (reaped or a zombie).
pub fn gone(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(15);
    while alive(pid) {
        if Instant::now() >= deadline {
            return false;
        }
        thread::sleep(Duration::from_millis(20));
    }
    true
}

pub mod workbench;
