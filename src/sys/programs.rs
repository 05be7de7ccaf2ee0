//! The names of the programs running now, where the system shows them
//! without starting a process: on Linux, each `/proc/PID/comm` and the file
//! names of the first two words of `/proc/PID/cmdline` (a Node or Python
//! program is its interpreter, then its script). Elsewhere: unknown. What
//! `install` looks for to say a host must be restarted.

/// Every running program's names; `None` where the system does not tell.
pub(crate) fn program_names() -> Option<Vec<String>> {
    #[cfg(target_os = "linux")]
    {
        let mut names = Vec::new();
        for entry in std::fs::read_dir("/proc").ok()?.flatten() {
            let file_name = entry.file_name();
            if !file_name
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
            {
                continue;
            }
            let dir = entry.path();
            if let Ok(comm) = std::fs::read_to_string(dir.join("comm")) {
                names.push(comm.trim_end().to_string());
            }
            if let Ok(cmdline) = std::fs::read(dir.join("cmdline")) {
                for word in cmdline.split(|b| *b == 0).take(2) {
                    let word = String::from_utf8_lossy(word);
                    if let Some(name) = word.rsplit('/').next().filter(|n| !n.is_empty()) {
                        names.push(name.to_string());
                    }
                }
            }
        }
        names.sort();
        names.dedup();
        Some(names)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}
