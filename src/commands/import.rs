//! `mcp-workbench import` (docs/reference.md §12): reads the hosts' configs
//! (every installed host's, or those `--from` names), maps their servers
//! onto the workbench's keys, plans one toolbox per distinct server, starts
//! the stdio ones once to describe them by their instructions and tools
//! (not with `--no-start`; also those whose toolbox an earlier import wrote
//! unlisted, `refill`, to fill in their descriptions), and prints the
//! config it would write, secrets masked, with what it read, chose, skipped
//! and could not carry over.
//! `--write` merges it into the config instead (atomically, the previous
//! version kept as a backup) and loads the result as `check` would.
//!
//! Exit 0; 1 when `--write` wrote a config that does not load (the report
//! says why), or when a host's file that is there could not be read (named
//! on stderr; the other hosts' servers are imported); 2, writing nothing,
//! when a file `--from` names (a host's, or the file itself) or the
//! workbench's config cannot be read. A shutdown signal while servers start stops them and ends the
//! run with the shell's code for it (`interrupt`), writing nothing.

use super::interrupt::Interrupt;
use crate::cli::{ConfigPath, ImportFrom};
use crate::config::ordered_json::Node;
use crate::config::{self, Problem};
use crate::fleet::launch::Launcher;
use crate::hosts::describe::{self, Listing};
use crate::hosts::found::{Found, Harvest, Origin, Outcome};
use crate::hosts::listing::{self, Job};
use crate::hosts::paths::{Os, Places};
use crate::hosts::{files, mask, merge, plan, read, refill};
use crate::wire::outbox::Outbox;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::SystemTime;

/// Runs `import`; prints on `out`.
pub(super) fn run(
    config: &ConfigPath,
    from: &[ImportFrom],
    write: bool,
    start: bool,
    out: &mut impl Write,
) -> ExitCode {
    match import(config, from, write, start, out) {
        Ok(code) => code,
        Err((code, message)) => {
            eprintln!("error: {message}");
            code
        }
    }
}

type Failed = (ExitCode, String);

fn import(
    config: &ConfigPath,
    from: &[ImportFrom],
    write: bool,
    start: bool,
    out: &mut impl Write,
) -> Result<ExitCode, Failed> {
    let cwd = std::env::current_dir().map_err(|e| usage(format!("no working directory: {e}")))?;
    let places = Places::new(Os::current(), &|name| std::env::var_os(name), cwd).map_err(usage)?;
    let harvest = gather(&places, from);
    let unread = unread(&places, &harvest);
    for line in &unread {
        eprintln!("error: {line}");
    }
    if !from.is_empty() && !unread.is_empty() {
        let (files, them) = match unread.len() {
            1 => ("that file", "it"),
            _ => ("those files", "them"),
        };
        return Err(usage(format!(
            "nothing was imported and nothing was written: fix {files}, or leave {them} out of --from"
        )));
    }
    let path = &config.path;
    let (existing_text, existing) = read_existing(path)?;
    let plan = plan::plan(&harvest, existing.as_ref().unwrap_or(&Node::Null));
    let show = |folder: &PathBuf| places.show(folder);
    // Only those import may start now: one that is not started (disabled,
    // remote, --no-start) keeps its description without a word.
    let mut refills = existing
        .as_ref()
        .map(|existing| refill::refills(&harvest, &plan, existing, &show))
        .unwrap_or_default();
    refills.retain(|refill| refill_skip(&harvest, &plan, refill, start).is_none());
    let folder = std::path::absolute(path)
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_default();
    let (listings, relistings) = match describe_servers(&harvest, &plan, &refills, start, &folder) {
        Ok(listings) => listings,
        Err(code) => return Ok(code),
    };
    let toolboxes = new_toolboxes(&places, &harvest, &plan, &listings);
    let mut merged = merge::merge(existing.as_ref(), toolboxes)
        .map_err(|e| usage(format!("{}: {e}", path.display())))?;
    let described = refill_descriptions(
        &places,
        &harvest,
        &plan,
        (&refills, relistings),
        existing.as_ref(),
        &mut merged,
    );
    let filled = described.iter().filter(|(_, d)| d.is_ok()).count();
    let report = Report {
        places: &places,
        harvest: &harvest,
        plan: &plan,
        listings: &listings,
        described: &described,
        merged: &merged,
    };
    let written = Written {
        path,
        existing_text: existing_text.as_deref(),
        counts: (plan.servers.len(), filled),
        write,
    };
    let printed = written.print(&report, out);
    let code = printed.map_err(|e| (ExitCode::from(1), format!("cannot write the report: {e}")))?;
    if !unread.is_empty() {
        eprintln!(
            "error: the servers of {} are not imported; the other hosts' are",
            if unread.len() == 1 {
                "that file"
            } else {
                "those files"
            }
        );
        return Ok(ExitCode::from(1));
    }
    Ok(code)
}

/// A usage error (exit 2).
fn usage(message: String) -> Failed {
    (ExitCode::from(2), message)
}

/// Every file of the hosts `from` names (each once), or of every host.
fn gather(places: &Places, from: &[ImportFrom]) -> Harvest {
    let mut harvest = Harvest::default();
    if from.is_empty() {
        read::hosts(places, &crate::hosts::ALL, &mut harvest);
    }
    let mut seen = Vec::new();
    for source in from {
        if seen.contains(&source) {
            continue;
        }
        seen.push(source);
        match source {
            ImportFrom::Host(host) => read::hosts(places, &[*host], &mut harvest),
            ImportFrom::File(file) => read::named_file(places, file, &mut harvest),
        }
    }
    harvest
}

/// The workbench's config at `path` as text and as a tree (`None`: there
/// is none yet); one that cannot be read or parsed is a usage error.
fn read_existing(path: &Path) -> Result<(Option<String>, Option<Node>), Failed> {
    let existing_text = match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(usage(format!(
                "{}: cannot read the workbench config: {e}",
                path.display()
            )))
        }
    };
    let existing = match &existing_text {
        None => None,
        Some(text) => Some(serde_json::from_str::<Node>(text).map_err(|e| {
            usage(format!(
                "{}: the workbench config is not valid JSON (line {} column {}): fix it first; nothing was imported",
                path.display(),
                e.line(),
                e.column()
            ))
        })?),
    };
    Ok((existing_text, existing))
}

/// The planned toolboxes, each with its description.
fn new_toolboxes(
    places: &Places,
    harvest: &Harvest,
    plan: &plan::Plan,
    listings: &Listings,
) -> Vec<(String, Node)> {
    let mut toolboxes = Vec::new();
    for (planned, listing) in plan.servers.iter().zip(listings) {
        let found = &harvest.found[planned.found];
        let text = describe::description(
            &found.name,
            &found.mapped.entry,
            found.mapped.description.as_deref(),
            &shown_all(places, &planned.projects),
            listing.as_ref().ok(),
        );
        let toolbox = merge::toolbox(&text, &planned.toolbox, found.mapped.entry.node());
        toolboxes.push((planned.toolbox.clone(), toolbox));
    }
    toolboxes
}

/// The toolboxes an earlier import wrote unlisted, described in `merged`
/// from their new listings: each one's new description, or why it still
/// has none (one whose description did not change is left out).
fn refill_descriptions(
    places: &Places,
    harvest: &Harvest,
    plan: &plan::Plan,
    (refills, relistings): (&[refill::Refill], Listings),
    existing: Option<&Node>,
    merged: &mut Node,
) -> Vec<(String, Result<String, String>)> {
    let mut described = Vec::new();
    for (refill, listing) in refills.iter().zip(relistings) {
        let held = &plan.already[refill.held];
        let found = &harvest.found[held.found];
        let text = listing.map(|listing| {
            describe::description(
                &found.name,
                &found.mapped.entry,
                found.mapped.description.as_deref(),
                &shown_all(places, &refill.projects),
                Some(&listing),
            )
        });
        let was = existing
            .and_then(|e| e.get("toolboxes"))
            .and_then(|t| t.get(&held.toolbox))
            .and_then(|t| t.get("description"))
            .and_then(Node::as_str);
        match text {
            Ok(text) if Some(text.as_str()) == was => {}
            Ok(text) => {
                if merge::describe(merged, &held.toolbox, &text) {
                    described.push((held.toolbox.clone(), Ok(text)));
                }
            }
            Err(why) => described.push((held.toolbox.clone(), Err(why))),
        }
    }
    described
}

/// Where the merged config goes, and what it holds.
struct Written<'a> {
    path: &'a Path,
    /// The config's text before (`None`: there was none).
    existing_text: Option<&'a str>,
    /// The toolboxes imported, and the descriptions filled in.
    counts: (usize, usize),
    /// `--write`.
    write: bool,
}

impl Written<'_> {
    /// The report and then: nothing to import, the config written, or the
    /// config that would be written (secrets masked).
    fn print(&self, report: &Report<'_>, out: &mut impl Write) -> io::Result<ExitCode> {
        let path = self.path;
        let style = self.existing_text.map(files::style_of).unwrap_or_default();
        let (servers, filled) = self.counts;
        if servers == 0 && filled == 0 && !self.write {
            report.print(out)?;
            writeln!(out, "\nNothing to import; nothing was written.")?;
            return Ok(ExitCode::SUCCESS);
        }
        if self.write {
            report.print(out)?;
            let text = files::json_text(report.merged, &style);
            let existed = self.existing_text.is_some();
            return write_config(path, existed, &text, self.counts, out);
        }
        writeln!(
            out,
            "The config import would write to {} (secrets masked):\n",
            path.display()
        )?;
        write!(
            out,
            "{}",
            files::json_text(&mask::config(report.merged), &style)
        )?;
        writeln!(out)?;
        report.print(out)?;
        writeln!(
            out,
            "\nNothing was written. Run it again with --write to merge this into {} \
             (the descriptions are yours to edit afterwards).",
            path.display()
        )?;
        Ok(ExitCode::SUCCESS)
    }
}

/// Each host file that is there but could not be read or parsed, as a
/// line naming it and why.
fn unread(places: &Places, harvest: &Harvest) -> Vec<String> {
    harvest
        .files
        .iter()
        .filter_map(|file| match &file.outcome {
            Outcome::Failed(why) => Some(format!(
                "{} ({}) cannot be read: {why}",
                places.show(&file.file),
                file.host.name()
            )),
            _ => None,
        })
        .collect()
}

/// The listings of the servers of `plan` and of `refills`, each started
/// if it may be; the shell's code when a shutdown signal came.
fn describe_servers(
    harvest: &Harvest,
    plan: &plan::Plan,
    refills: &[refill::Refill],
    start: bool,
    folder: &Path,
) -> Result<(Listings, Listings), ExitCode> {
    let mut jobs: Vec<Job<'_>> = Vec::new();
    for planned in &plan.servers {
        let found = &harvest.found[planned.found];
        let entry = &found.mapped.entry;
        jobs.push(Job {
            name: &planned.toolbox,
            entry: entry.node(),
            skip: skip(
                start,
                entry.disabled,
                entry.is_remote(),
                found.origin.project_file,
            ),
        });
    }
    for refill in refills {
        jobs.push(Job {
            name: &plan.already[refill.held].server,
            entry: refill.entry.clone(),
            skip: refill_skip(harvest, plan, refill, start),
        });
    }
    let starting = jobs.iter().filter(|j| j.skip.is_none()).count();
    let mut listings = if starting == 0 {
        jobs.into_iter()
            .map(|j| Err(j.skip.unwrap_or_default()))
            .collect()
    } else {
        eprintln!(
            "Starting {starting} server{} to list {} tools ({} at a time, each within its \"startupTimeoutMs\", {} s at least; --no-start does not)...",
            if starting == 1 { "" } else { "s" },
            if starting == 1 { "its" } else { "their" },
            listing::PARALLEL,
            crate::config::DEFAULT_STARTUP_TIMEOUT.as_secs(),
        );
        let launcher = Arc::new(Launcher::new(
            Arc::new(Outbox::new(Box::new(io::sink()))),
            None,
            crate::auth::SignIns::default(),
        ));
        let interrupt = Interrupt::watch(&launcher);
        let listings = listing::list(&jobs, folder, &launcher, &|| interrupt.came());
        if let Some((_, code)) = interrupt.finish() {
            return Err(code);
        }
        launcher.shutdown();
        listings
    };
    let relistings = listings.split_off(plan.servers.len());
    Ok((listings, relistings))
}

type Listings = Vec<Result<Listing, String>>;

/// Why a toolbox to describe again is not started, if it is not.
fn refill_skip(
    harvest: &Harvest,
    plan: &plan::Plan,
    refill: &refill::Refill,
    start: bool,
) -> Option<String> {
    let found = &harvest.found[plan.already[refill.held].found];
    let disabled = refill.entry.get("disabled") == Some(&Node::Bool(true));
    let remote = refill.entry.get("command").is_none();
    skip(start, disabled, remote, found.origin.project_file)
}

/// Why a server is not started to list it, if it is not.
fn skip(start: bool, disabled: bool, remote: bool, project_file: bool) -> Option<String> {
    let why = if !start {
        "not started (--no-start)"
    } else if disabled {
        "not started: it is disabled"
    } else if remote {
        "not started: a remote server"
    } else if project_file {
        "not started: it comes from the project's own file, whose commands are not run before you have read them"
    } else {
        return None;
    };
    Some(why.to_string())
}

/// Writes the config (after a backup of the one there) and loads it as
/// `check` does; the exit code.
fn write_config(
    path: &Path,
    existed: bool,
    text: &str,
    (added, filled): (usize, usize),
    out: &mut impl Write,
) -> io::Result<ExitCode> {
    if added == 0 && filled == 0 {
        writeln!(
            out,
            "\nNothing new to import: {} is unchanged.",
            path.display()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let backup = if existed {
        match files::backup(path, SystemTime::now()) {
            Ok(backup) => Some(backup),
            Err(e) => {
                writeln!(
                    out,
                    "\nerror: cannot back up {}: {e}; nothing was written",
                    path.display()
                )?;
                return Ok(ExitCode::from(1));
            }
        }
    } else {
        None
    };
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(Err(e)) = folder.map(std::fs::create_dir_all) {
        writeln!(
            out,
            "\nerror: cannot create the folder of {}: {e}; nothing was written",
            path.display()
        )?;
        return Ok(ExitCode::from(1));
    }
    if let Err(e) = crate::sys::write_atomically_keeping_mode(path, text.as_bytes()) {
        writeln!(
            out,
            "\nerror: cannot write {}: {e}; it is unchanged",
            path.display()
        )?;
        return Ok(ExitCode::from(1));
    }
    let mut changes = Vec::new();
    if added > 0 {
        let es = if added == 1 { "" } else { "es" };
        changes.push(format!("{added} toolbox{es} added"));
    }
    if filled > 0 {
        let s = if filled == 1 { "" } else { "s" };
        changes.push(format!("{filled} description{s} filled in"));
    }
    write!(out, "\nWrote {} ({}", path.display(), changes.join(", "))?;
    match backup {
        Some(backup) => writeln!(out, "; the previous version is {}).", backup.display())?,
        None => writeln!(out, "; a new file).")?,
    }
    verify(path, text, out)
}

/// Loads the written config as `check` does and says what it found.
fn verify(path: &Path, text: &str, out: &mut impl Write) -> io::Result<ExitCode> {
    let problems = match config::load(path) {
        Ok(loaded) => match loaded.near_misses(path) {
            None => {
                let servers: usize = loaded
                    .config
                    .toolboxes
                    .iter()
                    .map(|t| t.servers.len())
                    .sum();
                writeln!(
                    out,
                    "check: the config loads: {} toolboxes, {servers} servers. Run `mcp-workbench check` to start them once.",
                    loaded.config.toolboxes.len()
                )?;
                return Ok(ExitCode::SUCCESS);
            }
            Some(error) => error.problems,
        },
        Err(error) => error.problems,
    };
    let remote = remote_servers(text);
    let at_remote = |p: &Problem| remote.iter().any(|r| within(&p.path, r));
    let (theirs, others): (Vec<&Problem>, Vec<&Problem>) =
        problems.iter().partition(|p| at_remote(p));
    writeln!(out, "check: the config as written does not load:")?;
    if !theirs.is_empty() {
        let servers: Vec<&String> = remote
            .iter()
            .filter(|r| theirs.iter().any(|p| within(&p.path, r)))
            .collect();
        let mut kinds: Vec<String> = theirs
            .iter()
            .map(|p| {
                let key = p.path.rsplit('.').next().unwrap_or_default();
                format!("{key}: {}", p.message)
            })
            .collect();
        kinds.sort();
        kinds.dedup();
        writeln!(
            out,
            "  {} remote server{} (\"url\"), which this build of the workbench cannot run yet: \
             the config loads once it can, or once they are taken out: {}",
            servers.len(),
            if servers.len() == 1 { "" } else { "s" },
            servers
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )?;
        writeln!(
            out,
            "  (what this build says of each: {})",
            kinds.join("; ")
        )?;
    }
    for problem in &others {
        writeln!(out, "  {problem}")?;
    }
    if others.is_empty() {
        writeln!(out, "  Nothing else in it is wrong.")?;
    }
    Ok(ExitCode::from(1))
}

/// Whether JSON path `path` is `server` or below it.
fn within(path: &str, server: &str) -> bool {
    path.strip_prefix(server)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.') || rest.starts_with('['))
}

/// Whether this build loads a remote server's entry (docs/reference.md §11).
fn remote_loads() -> bool {
    let probe = br#"{"toolboxes":{"t":{"description":"d","mcpServers":{"s":{"type":"http","url":"http://127.0.0.1/mcp"}}}}}"#;
    config::parse(probe, Path::new("probe"), Path::new("/")).is_ok()
}

/// The JSON paths of the remote servers in a config's text.
fn remote_servers(text: &str) -> Vec<String> {
    let Ok(root) = serde_json::from_str::<Node>(text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (toolbox, body) in root
        .get("toolboxes")
        .and_then(Node::entries)
        .unwrap_or_default()
    {
        for (server, entry) in body
            .get("mcpServers")
            .and_then(Node::entries)
            .unwrap_or_default()
        {
            if entry.get("command").is_none() && entry.get("url").is_some() {
                out.push(format!("toolboxes.{toolbox}.mcpServers.{server}"));
            }
        }
    }
    out
}

/// Each of `folders` as reports show it (the home folder written `~`).
fn shown_all(places: &Places, folders: &[std::path::PathBuf]) -> Vec<String> {
    folders.iter().map(|f| places.show(f)).collect()
}

/// What the run read, chose and left, for a person.
struct Report<'a> {
    places: &'a Places,
    harvest: &'a Harvest,
    plan: &'a plan::Plan,
    listings: &'a [Result<Listing, String>],
    /// The toolboxes an earlier import wrote unlisted: each one's new
    /// description, or why it still has none.
    described: &'a [(String, Result<String, String>)],
    merged: &'a Node,
}

impl Report<'_> {
    fn origin(&self, origin: &Origin) -> String {
        format!(
            "{} {} {}",
            origin.host.name(),
            self.places.show(&origin.file),
            origin.path
        )
    }

    fn print(&self, out: &mut impl Write) -> io::Result<()> {
        self.print_read(out)?;
        self.print_toolboxes(out)?;
        self.print_already(out)?;
        self.print_described(out)?;
        self.print_skipped(out)?;
        self.print_dropped(out)?;
        self.print_notes(out)
    }

    /// The servers imported, as found.
    fn imported(&self) -> impl Iterator<Item = &Found> + Clone {
        let harvest = self.harvest;
        self.plan.servers.iter().map(|p| &harvest.found[p.found])
    }

    /// What was read: each file, and those not found.
    fn print_read(&self, out: &mut impl Write) -> io::Result<()> {
        let harvest = self.harvest;
        writeln!(out, "Read:")?;
        let mut missing = Vec::new();
        for file in &harvest.files {
            let shown = self.places.show(&file.file);
            match &file.outcome {
                Outcome::Missing => missing.push(shown),
                Outcome::Read(n) => writeln!(
                    out,
                    "  {:<15} {shown}: {n} server{}",
                    file.host.name(),
                    if *n == 1 { "" } else { "s" }
                )?,
                Outcome::Failed(why) => {
                    writeln!(out, "  {:<15} {shown}: NOT READ: {why}", file.host.name())?
                }
            }
        }
        if !missing.is_empty() {
            writeln!(out, "  not found: {}", missing.join(", "))?;
        }
        Ok(())
    }

    /// The toolboxes to add, each with where it came from.
    fn print_toolboxes(&self, out: &mut impl Write) -> io::Result<()> {
        let harvest = self.harvest;
        writeln!(
            out,
            "\nToolboxes to add ({}), one per server:",
            self.plan.servers.len()
        )?;
        let toolboxes = self.merged.get("toolboxes");
        for (planned, listing) in self.plan.servers.iter().zip(self.listings) {
            let found = &harvest.found[planned.found];
            let description = toolboxes
                .and_then(|t| t.get(&planned.toolbox))
                .and_then(|t| t.get("description"))
                .and_then(Node::as_str)
                .unwrap_or_default();
            writeln!(out, "  {}: {description}", planned.toolbox)?;
            writeln!(out, "      from {}", self.origin(&found.origin))?;
            for also in &planned.also {
                writeln!(
                    out,
                    "      also in {} (the same server: imported once)",
                    self.origin(also)
                )?;
            }
            if !planned.projects.is_empty() {
                let projects = shown_all(self.places, &planned.projects).join(", ");
                writeln!(
                    out,
                    "      enabled for {} only ({projects}): once imported, this toolbox is offered in every session, whatever the project",
                    if planned.projects.len() == 1 { "one project" } else { "some projects" },
                )?;
            }
            if let Err(why) = listing {
                writeln!(out, "      tools not listed: {why}")?;
            }
        }
        Ok(())
    }

    /// What the workbench's config holds already.
    fn print_already(&self, out: &mut impl Write) -> io::Result<()> {
        let harvest = self.harvest;
        if !self.plan.already.is_empty() {
            writeln!(
                out,
                "\nAlready in the workbench's config (not imported again):"
            )?;
            for held in &self.plan.already {
                let origin = &harvest.found[held.found].origin;
                for origin in std::iter::once(origin).chain(&held.also) {
                    writeln!(out, "  {} is {}", self.origin(origin), held.place())?;
                }
            }
        }
        Ok(())
    }

    /// The descriptions filled in for an earlier import's toolboxes.
    fn print_described(&self, out: &mut impl Write) -> io::Result<()> {
        if !self.described.is_empty() {
            writeln!(
                out,
                "\nToolboxes an earlier import wrote before their servers could be listed ({}):",
                self.described.len()
            )?;
            for (toolbox, described) in self.described {
                match described {
                    Ok(text) => writeln!(out, "  {toolbox}: {text}")?,
                    Err(why) => writeln!(out, "  {toolbox}: still not listed: {why}")?,
                }
            }
        }
        Ok(())
    }

    /// The entries not imported, and why.
    fn print_skipped(&self, out: &mut impl Write) -> io::Result<()> {
        let harvest = self.harvest;
        if !harvest.skipped.is_empty() {
            writeln!(out, "\nNot imported ({}):", harvest.skipped.len())?;
            for skipped in &harvest.skipped {
                writeln!(out, "  {}: {}", self.origin(&skipped.origin), skipped.why)?;
            }
        }
        Ok(())
    }

    /// The settings not carried over.
    fn print_dropped(&self, out: &mut impl Write) -> io::Result<()> {
        let dropped: Vec<String> = self
            .imported()
            .flat_map(|f| {
                f.mapped
                    .dropped
                    .iter()
                    .map(move |(key, why)| format!("{}.{key}: {why}", self.origin(&f.origin)))
            })
            .collect();
        if !dropped.is_empty() {
            writeln!(out, "\nSettings not carried over ({}):", dropped.len())?;
            for line in dropped {
                writeln!(out, "  {line}")?;
            }
        }
        Ok(())
    }

    /// What the user should know: variables to set, remote servers.
    fn print_notes(&self, out: &mut impl Write) -> io::Result<()> {
        let remotes = self
            .imported()
            .filter(|f| f.mapped.entry.is_remote())
            .count();
        let mut notes: Vec<String> = Vec::new();
        for note in self
            .imported()
            .flat_map(|f| &f.mapped.notes)
            .chain(&self.plan.notes)
        {
            if !notes.contains(note) {
                notes.push(note.clone());
            }
        }
        if remotes > 0 && !remote_loads() {
            notes.push(format!(
                "{remotes} remote server{} written as remote servers (\"type\" and \"url\"), \
                 which this build of the workbench cannot run yet: until it can, a config with \
                 them does not load (take them out, or keep them for a build that runs them)",
                if remotes == 1 { " is" } else { "s are" }
            ));
        }
        if !notes.is_empty() {
            writeln!(out, "\nNotes:")?;
            for note in notes {
                writeln!(out, "  {note}")?;
            }
        }
        Ok(())
    }
}
