//! `mcp-workbench install HOST` (docs/reference.md §12): adds an entry named
//! `workbench` to the host's user-level config that runs this binary with
//! `--config` and the config's absolute path, keeping the rest of the file
//! (`hosts::edit`), after a timestamped backup beside it. `--replace` also
//! takes out of the host the servers the workbench's config holds now.
//! `--undo` puts the latest backup back (and uses it up, so a second undo
//! goes one install further back). Says when the host seems to run, since
//! it reads its config when it starts.
//!
//! Exit 0; 1 when the host's file cannot be read, parsed or written (then
//! nothing is written); 2 when `--replace` cannot read the workbench config.

use crate::cli::ConfigPath;
use crate::config::ordered_json::Node;
use crate::hosts::edit::{self, Launch};
use crate::hosts::entry::{identity_of, Identity};
use crate::hosts::paths::{Os, Places};
use crate::hosts::{files, Host};
use std::collections::HashSet;
use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::SystemTime;

/// Runs `install`; prints on `out`.
pub(super) fn run(
    config: &ConfigPath,
    host: Host,
    replace: bool,
    undo: bool,
    out: &mut impl Write,
) -> ExitCode {
    match install(config, host, replace, undo, out) {
        Ok(()) => ExitCode::SUCCESS,
        Err((code, message)) => {
            eprintln!("error: {message}");
            code
        }
    }
}

type Failed = (ExitCode, String);

fn install(
    config: &ConfigPath,
    host: Host,
    replace: bool,
    undo: bool,
    out: &mut impl Write,
) -> Result<(), Failed> {
    let fail = |message: String| (ExitCode::from(1), message);
    let cwd = std::env::current_dir().map_err(|e| fail(format!("no working directory: {e}")))?;
    let places = Places::new(Os::current(), &|name| std::env::var_os(name), cwd).map_err(fail)?;
    let file = places.user_file(host);
    let shown = places.show(&file);
    let say = |out: &mut dyn Write, text: String| {
        writeln!(out, "{text}").map_err(|e| fail(format!("cannot write the report: {e}")))
    };
    if undo {
        let backup = files::latest_backup(&file)
            .map_err(|e| fail(format!("{shown}: cannot look for its backups: {e}")))?
            .ok_or_else(|| {
                fail(format!(
                    "{shown}: no backup of it to restore (install keeps them beside it)"
                ))
            })?;
        std::fs::rename(&backup, &file)
            .map_err(|e| fail(format!("{shown}: cannot restore {}: {e}", backup.display())))?;
        say(
            out,
            format!(
                "Restored {shown} from {} (the backup was used up).",
                backup.display()
            ),
        )?;
        return say(out, restart_hint(host));
    }
    let held = if replace {
        Some(held_servers(&config.path).map_err(|e| (ExitCode::from(2), e))?)
    } else {
        None
    };
    let program = std::env::current_exe()
        .map_err(|e| fail(format!("cannot tell where this binary is: {e}")))?;
    let config_path = absolute(&config.path);
    let launch = Launch {
        program: program.to_string_lossy().into_owned(),
        config: config_path.to_string_lossy().into_owned(),
    };
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let folder = file.parent().unwrap_or(Path::new("."));
            if !folder.is_dir() {
                return Err(fail(format!(
                    "{} does not seem to be installed: {} does not exist (start it once, then install again)",
                    host.title(),
                    places.show(folder)
                )));
            }
            None
        }
        Err(e) => return Err(fail(format!("{shown}: cannot read it: {e}"))),
    };
    let edited = edit::edit(host, text.as_deref(), &launch, held.as_ref(), &places)
        .map_err(|why| fail(format!("{shown}: {why}; nothing was written")))?;
    if text.as_deref() == Some(edited.text.as_str()) {
        say(
            out,
            format!("{shown} has the workbench already; nothing changed."),
        )?;
        return Ok(());
    }
    let backup = match text {
        Some(_) => Some(files::backup(&file, SystemTime::now()).map_err(|e| {
            fail(format!(
                "{shown}: cannot back it up: {e}; nothing was written"
            ))
        })?),
        None => None,
    };
    crate::sys::write_atomically_keeping_mode(&file, edited.text.as_bytes())
        .map_err(|e| fail(format!("{shown}: cannot write it: {e}; it is unchanged")))?;
    let verb = if edited.replaced_entry {
        "Updated"
    } else {
        "Added"
    };
    say(
        out,
        format!(
            "{verb} the workbench in {}'s config {shown}: \"workbench\" runs {} --config {}",
            host.title(),
            launch.program,
            launch.config
        ),
    )?;
    match backup {
        Some(backup) => say(
            out,
            format!(
                "Backup: {} (mcp-workbench install {} --undo puts it back)",
                backup.display(),
                host.name()
            ),
        )?,
        None => say(
            out,
            format!("{shown} is a new file (no backup: delete it to undo the install)."),
        )?,
    }
    if !edited.removed.is_empty() {
        say(
            out,
            format!(
                "Took out {} the workbench's config holds: {}",
                servers(edited.removed.len()),
                edited.removed.join(", ")
            ),
        )?;
    }
    if replace && !edited.kept.is_empty() {
        say(
            out,
            format!(
                "Left {} the workbench's config does not hold, which {} still starts itself: {}",
                servers(edited.kept.len()),
                host.title(),
                edited.kept.join(", ")
            ),
        )?;
    }
    if !config_path.exists() {
        say(out, format!("Note: {} does not exist yet: write it (mcp-workbench import --write) before {} starts the workbench.", config_path.display(), host.title()))?;
    }
    say(out, restart_hint(host))
}

/// "1 server", "2 servers".
fn servers(n: usize) -> String {
    format!("{n} server{}", if n == 1 { "" } else { "s" })
}

/// `path` made absolute, without `.` and `..` (the host starts the
/// workbench from anywhere). Windows's own absolute form drops them; its
/// canonical one (`\\?\C:\...`) is not what hosts write.
fn absolute(path: &Path) -> std::path::PathBuf {
    if cfg!(windows) {
        return std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    }
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    match (std::fs::canonicalize(folder), path.file_name()) {
        (Ok(folder), Some(name)) => folder.join(name),
        _ => std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()),
    }
}

/// The identities of every server of the workbench's config, read as written
/// (a remote entry counts, though this build may not load it).
fn held_servers(path: &Path) -> Result<HashSet<Identity>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "--replace takes out of the host what {} holds, but it cannot be read: {e}",
            path.display()
        )
    })?;
    let root: Node = serde_json::from_str(&text).map_err(|e| {
        format!(
            "--replace takes out of the host what {} holds, but it is not valid JSON (line {} column {})",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    let mut held = HashSet::new();
    for (_, toolbox) in root
        .get("toolboxes")
        .and_then(Node::entries)
        .unwrap_or_default()
    {
        for (_, server) in toolbox
            .get("mcpServers")
            .and_then(Node::entries)
            .unwrap_or_default()
        {
            held.extend(identity_of(server));
        }
    }
    Ok(held)
}

/// What to tell about restarting the host: it reads its config when it starts.
fn restart_hint(host: Host) -> String {
    match crate::sys::program_names() {
        Some(names)
            if host
                .process_names()
                .iter()
                .any(|p| names.iter().any(|n| n == p)) =>
        {
            format!(
                "{} is running: restart it so that it reads its config again.",
                host.title()
            )
        }
        Some(_) => format!("{} reads it the next time it starts.", host.title()),
        None => format!(
            "If {} is running, restart it so that it reads its config again.",
            host.title()
        ),
    }
}
