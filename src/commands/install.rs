//! `mcp-workbench install HOST` (docs/reference.md §12): adds an entry named
//! `workbench` to the host's user-level config that runs this binary with
//! `--config` and the config's absolute path, keeping the rest of the file
//! (`hosts::edit`), after a timestamped backup beside it. `--replace` also
//! takes out of the host the user-level servers the workbench's config holds
//! now (`--include-projects`: the per-project ones too); without it, the
//! output names the servers the host would start twice.
//! `--undo` reverses the install on the file as it is now (`hosts::undo`:
//! the entry out, the servers `--replace` took out back from the latest
//! backup, whatever the host wrote since kept) and leaves the backup for a
//! person. Says when the host seems to run, since it reads its config when
//! it starts.
//!
//! Exit 0; 1 when the host's file cannot be read, parsed or written (then
//! nothing is written), or when `--undo` left something it could not
//! reverse (named); 2 when there is no workbench config at the path (the
//! host would start a workbench without servers) or it cannot be read.

use crate::cli::ConfigPath;
use crate::config::ordered_json::Node;
use crate::hosts::edit::{self, Edited, Launch, Take};
use crate::hosts::entry::{identity_of, Identity};
use crate::hosts::paths::{Os, Places};
use crate::hosts::{files, rewrite, undo, Host};
use std::collections::HashSet;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::SystemTime;

/// Runs `install`; prints on `out`.
pub(super) fn run(
    config: &ConfigPath,
    host: Host,
    take: Take,
    undo: bool,
    out: &mut impl Write,
) -> ExitCode {
    match install(config, host, take, undo, out) {
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
    take: Take,
    undo: bool,
    out: &mut impl Write,
) -> Result<(), Failed> {
    let fail = |message: String| (ExitCode::from(1), message);
    let cwd = std::env::current_dir().map_err(|e| fail(format!("no working directory: {e}")))?;
    let places = Places::new(Os::current(), &|name| std::env::var_os(name), cwd).map_err(fail)?;
    let file = host.user_file(&places);
    let shown = places.show(&file);
    let say = |out: &mut dyn Write, text: String| {
        writeln!(out, "{text}").map_err(|e| fail(format!("cannot write the report: {e}")))
    };
    if undo {
        return undo_install(config, host, &places, out);
    }
    // The host would start a workbench without servers: nothing is written.
    if !config.path.exists() {
        return Err((
            ExitCode::from(2),
            format!(
                "no workbench config at {}: run `mcp-workbench import --write` first (it writes your hosts' servers there), then install again; nothing was written",
                config.path.display()
            ),
        ));
    }
    let held = held_servers(&config.path).map_err(|e| (ExitCode::from(2), e))?;
    let launch = launch(config).map_err(fail)?;
    let target = rewrite::resolved(&file)
        .map_err(|e| fail(format!("{shown}: cannot follow its link: {e}")))?;
    if !target.exists() {
        let folder = target.parent().unwrap_or(Path::new("."));
        if !folder.is_dir() {
            return Err(fail(format!(
                "{} does not seem to be installed: {} does not exist (start it once, then install again)",
                host.title(),
                places.show(folder)
            )));
        }
    }
    let mut make = |text: Option<&str>| {
        edit::edit(host, text, &launch, &held, take, &places).map(|e| (e.text.clone(), e))
    };
    let done = rewrite::rewrite(&file, true, SystemTime::now(), &mut make)
        .map_err(|why| fail(format!("{shown}: {why}")))?;
    let edited = done.outcome;
    if done.unchanged {
        say(
            out,
            format!("{shown} has the workbench already; nothing changed."),
        )?;
        return Ok(());
    }
    let what = Installed {
        host,
        places: &places,
        file: &file,
        launch: &launch,
        take,
    };
    for line in what.lines(&done.target, done.backup.as_deref(), &edited) {
        say(out, line)?;
    }
    say(out, restart_hint(host))
}

/// What an install did, for its report.
struct Installed<'a> {
    host: Host,
    places: &'a Places,
    /// The host's file, as the user knows it (a link, maybe).
    file: &'a Path,
    launch: &'a Launch,
    take: Take,
}

impl Installed<'_> {
    /// The report's lines: the entry written, where (through a link), the
    /// backup, and what was taken out, left doubled, or left.
    fn lines(&self, target: &Path, backup: Option<&Path>, edited: &Edited) -> Vec<String> {
        let (host, launch) = (self.host, self.launch);
        let shown = self.places.show(self.file);
        let verb = if edited.replaced_entry {
            "Updated"
        } else {
            "Added"
        };
        let mut lines = vec![format!(
            "{verb} the workbench in {}'s config {shown}: \"workbench\" runs {} --config {}",
            host.title(),
            launch.program,
            launch.config
        )];
        if target != self.file {
            lines.push(format!(
                "{shown} is a link: {} was edited, the link stays.",
                self.places.show(target)
            ));
        }
        lines.push(match backup {
            Some(backup) => format!(
                "Backup: {} (mcp-workbench install {} --undo reverses the install)",
                backup.display(),
                host.name()
            ),
            None => format!("{shown} is a new file (no backup: delete it to undo the install)."),
        });
        lines.extend(self.changes(edited));
        lines
    }

    /// What was taken out of the host, and what it still starts.
    fn changes(&self, edited: &Edited) -> Vec<String> {
        let host = self.host;
        let mut lines = Vec::new();
        if !edited.removed.is_empty() {
            lines.push(format!(
                "Took out {} the workbench's config holds: {}",
                servers(edited.removed.len()),
                edited.removed.join(", ")
            ));
        }
        if !edited.doubled.is_empty() {
            lines.push(format!(
                "{} still starts {} the workbench's config also holds, so each runs twice: {} (install {} --replace takes them out of {})",
                host.title(),
                servers(edited.doubled.len()),
                edited.doubled.join(", "),
                host.name(),
                host.title()
            ));
        }
        if !edited.doubled_in_projects.is_empty() {
            lines.push(format!(
                "Left {} per project that the workbench's config also holds (--include-projects takes them out too): {}",
                servers(edited.doubled_in_projects.len()),
                edited.doubled_in_projects.join(", ")
            ));
        }
        if self.take.replace && !edited.kept.is_empty() {
            lines.push(format!(
                "Left {} the workbench's config does not hold, which {} still starts itself: {}",
                servers(edited.kept.len()),
                host.title(),
                edited.kept.join(", ")
            ));
        }
        lines
    }
}

/// `install --undo`: the install reversed on the host's file as it is now
/// (`hosts::undo`); the backup stays.
fn undo_install(
    config: &ConfigPath,
    host: Host,
    places: &Places,
    out: &mut impl Write,
) -> Result<(), Failed> {
    let fail = |message: String| (ExitCode::from(1), message);
    let say = |out: &mut dyn Write, text: String| {
        writeln!(out, "{text}").map_err(|e| fail(format!("cannot write the report: {e}")))
    };
    let file = host.user_file(places);
    let shown = places.show(&file);
    let backup = files::latest_backup(&file)
        .map_err(|e| fail(format!("{shown}: cannot look for its backups: {e}")))?
        .ok_or_else(|| {
            fail(format!(
                "{shown}: no backup of it to restore from (install keeps one beside it)"
            ))
        })?;
    let before = std::fs::read_to_string(&backup)
        .map_err(|e| fail(format!("{}: cannot read it: {e}", backup.display())))?;
    let held = held_servers(&config.path);
    let launch = launch(config).map_err(fail)?;
    let mut reverse = |text: Option<&str>| {
        let text = text.ok_or("it does not exist")?;
        undo::undo(host, text, &before, &launch, held.as_ref().ok(), places)
            .map(|u| (u.text.clone(), u))
    };
    let done = rewrite::rewrite(&file, false, SystemTime::now(), &mut reverse)
        .map_err(|why| fail(format!("{shown}: {why}")))?;
    let undone = done.outcome;
    let list = host.list_key().unwrap_or("mcp_servers");
    let entry_path = format!("{list}.{}", edit::ENTRY);
    match undone.entry {
        undo::Entry::Removed => say(
            out,
            format!("Took the workbench out of {}'s config {shown}.", host.title()),
        )?,
        undo::Entry::Restored => say(
            out,
            format!("Put back the \"workbench\" entry {shown} had before the install."),
        )?,
        undo::Entry::Missing => say(out, format!("{shown} has no \"workbench\" entry."))?,
        undo::Entry::Changed => say(
            out,
            format!(
                "Left {entry_path} as it is: it is not what install wrote (edited since, or it runs another config than {})",
                launch.config
            ),
        )?,
    }
    if let Err(why) = &held {
        say(
            out,
            format!("Note: {why}; every server of the backup that {shown} lacks now is put back."),
        )?;
    }
    if !undone.put_back.is_empty() {
        say(
            out,
            format!(
                "Put back {} from the backup: {}",
                servers(undone.put_back.len()),
                undone.put_back.join(", ")
            ),
        )?;
    }
    for (path, why) in &undone.left {
        say(out, format!("Left {path} as it is: {why}"))?;
    }
    say(
        out,
        format!(
            "The backup stays: {} (to go back to {shown} as it was then, copy it over by hand).",
            backup.display()
        ),
    )?;
    if !done.unchanged {
        say(out, restart_hint(host))?;
    }
    if undone.entry == undo::Entry::Changed || !undone.left.is_empty() {
        return Err(fail(
            "not everything could be undone: what was left is named above".into(),
        ));
    }
    Ok(())
}

/// What runs the workbench: this binary and the config, absolute.
fn launch(config: &ConfigPath) -> Result<Launch, String> {
    let program =
        std::env::current_exe().map_err(|e| format!("cannot tell where this binary is: {e}"))?;
    Ok(Launch {
        program: program.to_string_lossy().into_owned(),
        config: absolute(&config.path).to_string_lossy().into_owned(),
    })
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
            "install points the host at {}, but it cannot be read: {e}",
            path.display()
        )
    })?;
    let root: Node = serde_json::from_str(&text).map_err(|e| {
        format!(
            "install points the host at {}, but it is not valid JSON (line {} column {})",
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
