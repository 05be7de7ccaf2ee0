//! Windows: Job Objects, console events, and commands found the way a user
//! expects.
//!
//! - Every child starts suspended, joins a Job Object of its own with
//!   kill-on-close, and only then runs, so nothing it starts can escape the
//!   job (breakaway is not allowed). Killing the job kills the whole
//!   `cmd → npx → node` tree, and the system kills it by itself when the
//!   workbench's handle to the job closes, however the workbench dies.
//! - Windows has no way to ask a windowless process to stop, so the stop
//!   sequence is: close stdin, wait, terminate the job.
//! - Since the job holds every process that can hold a child's pipes, killing
//!   it ends every read on them.
//! - Ctrl-C, Ctrl-Break, closing the console, logoff and system shutdown
//!   arrive as console events, which `on_shutdown_signal` turns into the same
//!   shutdown as stdin EOF.
//! - `"command": "npx"` is looked up in the child's `PATH` with each `PATHEXT`
//!   extension and so finds `npx.cmd`; std runs `.cmd` and `.bat` files
//!   through `cmd.exe` with its own safe argument quoting (it refuses
//!   arguments it cannot quote safely). No child gets a console window.

use super::win32::*;
use super::Exit;
use crossbeam_channel::{unbounded, Receiver, Sender};
use std::collections::BTreeMap;
use std::io;
use std::os::windows::io::AsRawHandle;
use std::os::windows::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::OnceLock;
use std::thread;

/// Variables passed to every child: the official MCP SDKs' Windows list (the
/// TypeScript SDK's, with `PROGRAMFILES`; `PATHEXT` from the Python SDK).
pub(crate) const ALLOWED_ENV: &[&str] = &[
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PATHEXT",
    "PROCESSOR_ARCHITECTURE",
    "PROGRAMFILES",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "USERNAME",
    "USERPROFILE",
];

/// The variable that `~` in a config path stands for.
pub(crate) const HOME: &str = "USERPROFILE";

/// What `PATHEXT` holds when it is not set.
const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD";

/// The command that runs `program` with the child environment `env`.
pub(crate) fn command(program: &str, env: &BTreeMap<String, String>) -> Command {
    Command::new(found(program, env).unwrap_or_else(|| PathBuf::from(program)))
}

/// The file `program` runs for a child with environment `env`, as
/// `command` finds it; its links resolved. `None`: not found.
pub(crate) fn program_path(program: &str, env: &BTreeMap<String, String>) -> Option<PathBuf> {
    found(program, env).map(|file| std::fs::canonicalize(&file).unwrap_or(file))
}

/// `find_program` with `env`'s `PATH` and `PATHEXT` (else the workbench's).
fn found(program: &str, env: &BTreeMap<String, String>) -> Option<PathBuf> {
    let var = |name: &str| {
        env.iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.clone())
            .or_else(|| std::env::var(name).ok())
    };
    let path = var("PATH").unwrap_or_default();
    let pathext = var("PATHEXT").unwrap_or_else(|| DEFAULT_PATHEXT.to_string());
    find_program(program, &path, &pathext, |p| p.is_file())
}

/// Where `program` is, as `cmd.exe` would find it but without looking in the
/// current folder: a name with a folder in it is taken as it is, or with each
/// `PATHEXT` extension in turn; a bare name is looked for in each `PATH`
/// folder, as it is if it has an extension, else with each extension.
/// `None`: not found (std then reports it as not found).
fn find_program(
    program: &str,
    path: &str,
    pathext: &str,
    exists: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    let extensions: Vec<&str> = pathext
        .split(';')
        .map(str::trim)
        .filter(|e| e.starts_with('.') && e.len() > 1)
        .collect();
    let has_extension = Path::new(program).extension().is_some();
    let candidates = |base: PathBuf| {
        let plain = has_extension.then(|| base.clone());
        let with_extensions = extensions.iter().map(move |ext| {
            let mut name = base.clone().into_os_string();
            name.push(ext);
            PathBuf::from(name)
        });
        plain.into_iter().chain(with_extensions)
    };
    if program.contains(['/', '\\', ':']) {
        return candidates(PathBuf::from(program)).find(|p| exists(p));
    }
    path.split(';')
        .map(|dir| dir.trim().trim_matches('"'))
        .filter(|dir| !dir.is_empty())
        .flat_map(|dir| candidates(Path::new(dir).join(program)))
        .find(|p| exists(p))
}

/// A kernel handle that this module owns and closes.
struct Handle(HANDLE);

// SAFETY: a kernel handle is a process-wide name for an object; the calls
// made on these (waits, queries, job termination) are thread-safe.
unsafe impl Send for Handle {}
// SAFETY: as for Send.
unsafe impl Sync for Handle {}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: the handle is ours and closed only here.
        unsafe {
            CloseHandle(self.0);
        }
    }
}

/// The processes of one server: a Job Object with kill-on-close, and the
/// process we started in it.
pub(crate) struct Tree {
    pid: u32,
    process: Handle,
    /// Dropped last: closing it kills whatever is still in the job.
    job: Handle,
}

impl Tree {
    /// Spawns `cmd` suspended and without a console window, puts it in a new
    /// job, then lets it run.
    pub(crate) fn spawn(cmd: &mut Command) -> io::Result<(Child, Tree)> {
        let job = new_job()?;
        cmd.creation_flags(CREATE_NO_WINDOW | CREATE_SUSPENDED);
        #[allow(clippy::disallowed_methods)] // the one spawn, configured above
        let mut child = cmd.spawn()?;
        let process = match duplicate(child.as_raw_handle()) {
            Ok(process) => process,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(e);
            }
        };
        let tree = Tree {
            pid: child.id(),
            process,
            job,
        };
        // SAFETY: both handles are valid and ours.
        if unsafe { AssignProcessToJobObject(tree.job.0, tree.process.0) } == 0 {
            let e = io::Error::last_os_error();
            let _ = child.kill();
            let _ = child.wait();
            return Err(io::Error::new(
                e.kind(),
                format!("cannot put it in a job: {e}"),
            ));
        }
        if let Err(e) = resume(tree.pid) {
            tree.kill();
            let _ = child.wait();
            return Err(io::Error::new(e.kind(), format!("cannot resume it: {e}")));
        }
        Ok((child, tree))
    }

    /// The pid of the first process, for messages.
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// The exit of the first process if it has exited.
    pub(crate) fn exited(&self) -> Option<Exit> {
        // SAFETY: a wait with no timeout on a process handle we own.
        if unsafe { WaitForSingleObject(self.process.0, 0) } != WAIT_OBJECT_0 {
            return None;
        }
        Some(self.exit_code())
    }

    fn exit_code(&self) -> Exit {
        let mut code = STILL_ACTIVE;
        // SAFETY: GetExitCodeProcess writes one u32 we own.
        if unsafe { GetExitCodeProcess(self.process.0, &mut code) } == 0 {
            return Exit::Unknown;
        }
        Exit::Code(code as i32)
    }

    /// False: a process without a console cannot be asked to stop.
    pub(crate) fn ask_to_stop(&self) -> bool {
        false
    }

    /// Terminates every process in the job.
    pub(crate) fn kill(&self) {
        // SAFETY: the job handle is valid and ours.
        unsafe {
            TerminateJobObject(self.job.0, 1);
        }
    }

    /// Nothing to do: the handles keep the pid from being reused.
    pub(crate) fn release(&self) {}
}

/// A new job whose processes are all killed when its last handle closes.
fn new_job() -> io::Result<Handle> {
    // SAFETY: no security attributes, no name; the info record is ours and
    // passed with its size.
    unsafe {
        let job = CreateJobObjectW(std::ptr::null_mut(), std::ptr::null());
        if job.is_null() {
            return Err(io::Error::last_os_error());
        }
        let job = Handle(job);
        let mut info = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
        info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        let set = SetInformationJobObject(
            job.0,
            JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS,
            (&info as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
            std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
        );
        if set == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(job)
    }
}

/// A handle of our own to the process `child` (std keeps and closes its own).
fn duplicate(child: std::os::windows::io::RawHandle) -> io::Result<Handle> {
    let mut own: HANDLE = std::ptr::null_mut();
    // SAFETY: duplicates a valid handle into `own`, within our process.
    let ok = unsafe {
        let me = GetCurrentProcess();
        DuplicateHandle(me, child, me, &mut own, 0, FALSE, DUPLICATE_SAME_ACCESS)
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Handle(own))
}

/// Resumes the threads of the suspended process `pid` (a new process has one).
fn resume(pid: u32) -> io::Result<()> {
    // SAFETY: the snapshot and thread handles are checked, used and closed
    // here; the entry record is ours and carries its size.
    unsafe {
        let snapshot = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
        if snapshot == INVALID_HANDLE_VALUE {
            return Err(io::Error::last_os_error());
        }
        let snapshot = Handle(snapshot);
        let mut entry = THREADENTRY32 {
            dwSize: std::mem::size_of::<THREADENTRY32>() as u32,
            ..THREADENTRY32::default()
        };
        let mut resumed = 0;
        let mut more = Thread32First(snapshot.0, &mut entry) != 0;
        while more {
            if entry.th32OwnerProcessID == pid {
                let thread = OpenThread(THREAD_SUSPEND_RESUME, FALSE, entry.th32ThreadID);
                if !thread.is_null() {
                    let thread = Handle(thread);
                    if ResumeThread(thread.0) != u32::MAX {
                        resumed += 1;
                    }
                }
            }
            more = Thread32Next(snapshot.0, &mut entry) != 0;
        }
        if resumed == 0 {
            return Err(io::Error::other("no thread of the new process was found"));
        }
        Ok(())
    }
}

/// Starts the shared fleet's process (docs/reference.md §8): not a server,
/// so not in a job of ours; without a console, in a process group of its
/// own, and out of the job the host may have put the session in, so that it
/// outlives the session that started it. A job that forbids breakaway
/// refuses that (access denied): the fleet then starts in it and ends with
/// that host's job, which the contract allows (its sessions start a new one).
///
/// The workbench's own standard handles, inherited from the host, are
/// inheritable, and Windows would hand every inheritable handle to the
/// fleet: it would hold the host's pipes open after the session ended. They
/// are made non-inheritable first (std duplicates a handle it passes on, so
/// servers that inherit stderr still get it).
pub(crate) fn spawn_detached(cmd: &mut Command) -> io::Result<Child> {
    for which in [STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE] {
        // SAFETY: GetStdHandle returns a handle of this process or null;
        // SetHandleInformation only changes its inherit flag (and fails
        // harmlessly on null or a console pseudo-handle).
        unsafe {
            let handle = GetStdHandle(which);
            if !handle.is_null() && handle != INVALID_HANDLE_VALUE {
                SetHandleInformation(handle, HANDLE_FLAG_INHERIT, 0);
            }
        }
    }
    let flags = DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP;
    cmd.creation_flags(flags | CREATE_BREAKAWAY_FROM_JOB);
    #[allow(clippy::disallowed_methods)] // not a server: see above
    match cmd.spawn() {
        Err(e) if e.raw_os_error() == Some(ERROR_ACCESS_DENIED) => {
            log::info!("the session's job forbids breakaway: the fleet ends with this host");
            cmd.creation_flags(flags);
            #[allow(clippy::disallowed_methods)] // as above
            cmd.spawn()
        }
        spawned => spawned,
    }
}

/// The working set of process `pid` in KiB, if it can be read.
pub(crate) fn rss_kb(pid: u32) -> Option<u64> {
    // SAFETY: the process handle is checked, used and closed here; the
    // counters record is ours and carries its size.
    unsafe {
        let process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, pid);
        if process.is_null() {
            return None;
        }
        let process = Handle(process);
        let mut counters = PROCESS_MEMORY_COUNTERS {
            cb: std::mem::size_of::<PROCESS_MEMORY_COUNTERS>() as u32,
            ..PROCESS_MEMORY_COUNTERS::default()
        };
        if K32GetProcessMemoryInfo(process.0, &mut counters, counters.cb) == 0 {
            return None;
        }
        Some(counters.WorkingSetSize as u64 / 1024)
    }
}

/// None: std offers a file's index only through unstable APIs (size and
/// modification time still tell a change).
pub(crate) fn file_identity(_meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

/// Nothing to start: each child's job dies with the workbench's handles.
pub fn start_watchdog() -> io::Result<()> {
    Ok(())
}

/// Nothing to block: console events come to `on_shutdown_signal`'s handler.
pub fn block_shutdown_signals() {}

/// No SIGUSR1 on Windows: the config file's watch alone reloads it.
pub(crate) fn on_reload_signal(
    _name: &str,
    _on_signal: impl Fn() + Send + 'static,
) -> Option<std::thread::JoinHandle<()>> {
    None
}

/// The console events received, as numbers (`event_number`), in order.
fn events() -> &'static (Sender<i32>, Receiver<i32>) {
    static EVENTS: OnceLock<(Sender<i32>, Receiver<i32>)> = OnceLock::new();
    EVENTS.get_or_init(unbounded)
}

/// The number `on_shutdown_signal` passes for a console event: that of the
/// Unix signal with the same meaning (SIGINT, SIGHUP, SIGTERM), or 21, the C
/// runtime's SIGBREAK, for Ctrl-Break.
fn event_number(event: u32) -> i32 {
    match event {
        CTRL_C_EVENT => 2,
        CTRL_BREAK_EVENT => 21,
        CTRL_CLOSE_EVENT => 1,
        _ => 15,
    }
}

/// The console event handler, on a thread the system creates for it.
unsafe extern "system" fn on_console_event(event: u32) -> BOOL {
    match event {
        CTRL_C_EVENT | CTRL_BREAK_EVENT => {
            let _ = events().0.send(event_number(event));
            TRUE
        }
        CTRL_CLOSE_EVENT | CTRL_LOGOFF_EVENT | CTRL_SHUTDOWN_EVENT => {
            let _ = events().0.send(event_number(event));
            // The process ends when this returns: wait here while the
            // shutdown stops the servers and exits.
            loop {
                thread::park();
            }
        }
        _ => FALSE,
    }
}

/// Starts a thread named `name` that waits for the next console event that
/// means "shut down" (Ctrl-C, Ctrl-Break, console closed, logoff, system
/// shutdown), logs it and runs `on_signal` with its number (`event_number`).
/// `None` (logged) when the thread or the handler cannot be set up.
pub(crate) fn on_shutdown_signal(
    name: &str,
    on_signal: impl FnOnce(i32) + Send + 'static,
) -> Option<thread::JoinHandle<()>> {
    static HANDLER: OnceLock<bool> = OnceLock::new();
    // SAFETY: registers a handler that only sends on a channel and parks.
    let installed = *HANDLER
        .get_or_init(|| unsafe { SetConsoleCtrlHandler(Some(on_console_event), TRUE) != 0 });
    if !installed {
        log::warn!(
            "cannot watch for console events: {}",
            io::Error::last_os_error()
        );
        return None;
    }
    let received = events().1.clone();
    thread::Builder::new()
        .name(name.into())
        .stack_size(64 * 1024)
        .spawn(move || {
            if let Ok(number) = received.recv() {
                log::info!("received console event (signal {number})");
                on_signal(number);
            }
        })
        .inspect_err(|e| log::warn!("cannot watch for console events: {e}"))
        .ok()
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // the tests spawn their stand-in children
mod tests {
    use super::*;

    #[test]
    fn programs_are_found_through_path_and_pathext() {
        let files = [
            r"C:\node\npx.cmd",
            r"C:\node\node.exe",
            r"C:\tools\serve.bat",
            r"C:\tools\npx.exe.bak",
            r"D:\abs\tool.cmd",
        ];
        // Names match exactly here (Windows ignores case; is_file does too).
        let exists = |p: &Path| files.iter().any(|f| Path::new(f) == p);
        let path = r#"C:\tools;"C:\node";"#;
        let pathext = ".com;.exe;.bat;.cmd";
        let find = |program| find_program(program, path, pathext, exists);
        assert_eq!(find("npx"), Some(PathBuf::from(r"C:\node\npx.cmd")));
        assert_eq!(find("node"), Some(PathBuf::from(r"C:\node\node.exe")));
        assert_eq!(find("node.exe"), Some(PathBuf::from(r"C:\node\node.exe")));
        assert_eq!(find("serve"), Some(PathBuf::from(r"C:\tools\serve.bat")));
        assert_eq!(
            find(r"D:\abs\tool"),
            Some(PathBuf::from(r"D:\abs\tool.cmd"))
        );
        assert_eq!(
            find(r"D:\abs\tool.cmd"),
            Some(PathBuf::from(r"D:\abs\tool.cmd"))
        );
        assert_eq!(find("missing"), None);
        // PATHEXT order decides between two matches in one folder.
        let both = |p: &Path| p == Path::new(r"C:\x\a.exe") || p == Path::new(r"C:\x\a.cmd");
        assert_eq!(
            find_program("a", r"C:\x", ".cmd;.exe", both),
            Some(PathBuf::from(r"C:\x\a.cmd"))
        );
    }
}
