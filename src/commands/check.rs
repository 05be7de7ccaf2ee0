//! `mcp-workbench check`: the doctor. Starts every enabled server of every
//! toolbox once, all in parallel, and reports per server: status (ok, failed
//! with the reason and stderr tail, disabled), the era it speaks (legacy, or
//! modern through the era bridge) with the protocol version agreed on,
//! start-up time, idle timeout,
//! tool count after filters, for a remote server its transport, url as
//! written and sign-in state, and the approximate context cost of its tool
//! schemas (bytes / 4, `tools::cost`, as the demo counts them).
//! Totals per toolbox and for the config; warnings for filters that name no
//! tool, unset variables, shortened dynamic-mode names and toolboxes over 40
//! tools, after the config's own warnings (unknown keys). Then what the
//! host's `tools/list` costs with the workbench (its meta-tools) versus with
//! every server listed directly. `--json` prints the same as JSON; a config
//! that cannot be used is printed as JSON too, with its errors and their paths.
//! Stops every child before returning.
//! Exit 0 when every enabled server started, 1 otherwise. SIGTERM, SIGINT or
//! SIGHUP stops every child at once and ends `check` without a report, with
//! the shell's code for that signal: 128 + its number (143, 130, 129).

use super::interrupt::local_servers;
use crate::catalog::Catalog;
use crate::cli::ConfigPath;
use crate::config::{Config, ConfigError, Loaded, Mode, Problem, RemoteConfig, ServerConfig};
use crate::fleet::launch::{self, Launcher};
use crate::fleet::visible::visible;
use crate::tools;
use crate::tools::{cost, naming};
use serde::Serialize;
use std::io::{self, Write};
use std::process::ExitCode;

/// Some hosts refuse or truncate tool lists longer than this.
const TOOLS_PER_TOOLBOX_LIMIT: usize = 40;

#[derive(Serialize)]
struct Report {
    /// The config file's absolute path.
    config: String,
    /// Where that path came from, unless `--config` named it: the text
    /// report's first line says it (`cli::ConfigPath::origin`).
    #[serde(skip)]
    origin: Option<&'static str>,
    toolboxes: Vec<ToolboxReport>,
    total: Totals,
    /// What the host's `tools/list` costs: the workbench's meta-tools, versus
    /// every server of every toolbox listed directly (the total above).
    host_tools_list: HostToolsList,
    warnings: Vec<String>,
    /// With `"shareServers": true`: whether a shared fleet runs for this
    /// config, and how many sessions share it (docs/reference.md §8).
    #[serde(rename = "sharedFleet", skip_serializing_if = "Option::is_none")]
    shared_fleet: Option<String>,
}

#[derive(Serialize)]
struct HostToolsList {
    workbench: Totals,
    direct: Totals,
}

#[derive(Serialize)]
struct ToolboxReport {
    name: String,
    servers: Vec<ServerReport>,
    total: Totals,
}

#[derive(Serialize)]
struct ServerReport {
    name: String,
    status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    /// `legacy` or `modern` (docs/reference.md §7, the era bridge).
    #[serde(skip_serializing_if = "Option::is_none")]
    era: Option<&'static str>,
    /// The protocol version agreed on.
    #[serde(skip_serializing_if = "Option::is_none")]
    protocol_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    startup_ms: Option<u128>,
    /// `idleTimeoutMs` in effect (the server's or the top level's); 0: never.
    idle_timeout_ms: u128,
    /// A remote server's transport: `Streamable HTTP` or `legacy SSE`.
    #[serde(skip_serializing_if = "Option::is_none")]
    transport: Option<&'static str>,
    /// A remote server's url as written in the config (never expanded).
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    /// A remote server's sign-in state (`sign_in_state`).
    #[serde(skip_serializing_if = "Option::is_none")]
    sign_in: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tokens: Option<usize>,
    /// The bytes `tokens` counts: totals divide their sum, not add rounded rows.
    #[serde(skip)]
    bytes: usize,
}

#[derive(Serialize, Clone, Copy, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Status {
    Ok,
    Failed,
    Disabled,
}

#[derive(Serialize, Default, Clone, Copy)]
struct Totals {
    tools: usize,
    tokens: usize,
    #[serde(skip)]
    bytes: usize,
}

impl Totals {
    fn add(&mut self, server: &ServerReport) {
        self.add_bytes(server.tools.unwrap_or(0), server.bytes);
    }

    /// Tokens are of the bytes of everything counted so far, as a host's
    /// whole tools/list would be counted (`tools::cost`).
    fn add_bytes(&mut self, tools: usize, bytes: usize) {
        self.tools += tools;
        self.bytes += bytes;
        self.tokens = cost::tokens(self.bytes);
    }
}

/// The JSON printed by `check --json` for a config that cannot be used.
#[derive(Serialize)]
struct ConfigErrorReport<'a> {
    config: String,
    errors: &'a [Problem],
    warnings: Vec<String>,
}

/// Prints a config error as `check --json` does: on stdout, as JSON.
pub(super) fn print_config_error(error: &ConfigError, out: &mut dyn Write) {
    let report = ConfigErrorReport {
        config: error.file.display().to_string(),
        errors: &error.problems,
        warnings: error.warnings.iter().map(Problem::to_string).collect(),
    };
    let printed = serde_json::to_writer_pretty(&mut *out, &report)
        .map_err(io::Error::from)
        .and_then(|()| writeln!(out));
    if let Err(e) = printed {
        log::error!("cannot write the report: {e}");
    }
}

/// Starts every server of `loaded` (config file `config`) and prints the
/// report; the config's warnings (unknown keys and the like) lead its
/// warnings, and what the config's shared fleet is doing, if it shares one,
/// is in it. The text report opens with the config's path when `--config`
/// did not name it.
pub(super) fn run(
    loaded: Loaded,
    json: bool,
    config_path: &ConfigPath,
    out: &mut impl Write,
) -> ExitCode {
    let path = config_path.path.as_path();
    let Loaded {
        config,
        warnings: config_warnings,
        ..
    } = loaded;
    let shared_fleet = config.share_servers.then(|| crate::share::fleet_note(path));
    // What check lists goes into the tool catalog too (docs/reference.md §9).
    let (catalog, launcher, interrupt) = local_servers(path);
    let mut report = examine(&config, &launcher, &catalog);
    // After a signal the watcher stops the servers; a second `shutdown` here
    // would count as a second trigger and cut their grace periods short.
    if let Some((number, code)) = interrupt.finish() {
        log::error!("interrupted by signal {number}: every server was stopped, no report");
        return code;
    }
    launcher.shutdown();
    report
        .warnings
        .splice(0..0, config_warnings.iter().map(Problem::to_string));
    report.shared_fleet = shared_fleet;
    report.config = std::path::absolute(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string();
    report.origin = config_path.origin();
    let printed = if json {
        serde_json::to_writer_pretty(&mut *out, &report)
            .map_err(io::Error::from)
            .and_then(|()| writeln!(out))
    } else {
        print_text(out, &report)
    };
    if let Err(e) = printed {
        log::error!("cannot write the report: {e}");
    }
    let healthy = report
        .toolboxes
        .iter()
        .flat_map(|t| &t.servers)
        .all(|s| s.status != Status::Failed);
    if healthy {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn examine(config: &Config, launcher: &Launcher, catalog: &Catalog) -> Report {
    let mut warnings = Vec::new();
    let mut specs = Vec::new();
    let mut toolboxes: Vec<ToolboxReport> = Vec::new();
    for toolbox in &config.toolboxes {
        let mut servers = Vec::new();
        for server in &toolbox.servers {
            let mut report = ServerReport {
                name: server.name.clone(),
                status: Status::Disabled,
                reason: None,
                era: None,
                protocol_version: None,
                startup_ms: None,
                idle_timeout_ms: server.idle_timeout.unwrap_or_default().as_millis(),
                transport: server.remote.as_ref().map(|r| r.kind.name()),
                url: server.remote.as_ref().map(|r| r.url.source().to_string()),
                sign_in: server
                    .remote
                    .as_ref()
                    .and_then(|r| sign_in_state(launcher, &toolbox.name, server, r)),
                tools: None,
                tokens: None,
                bytes: 0,
            };
            if !server.disabled {
                match launch::resolve(&toolbox.name, server, None) {
                    Ok(spec) => specs.push(spec),
                    Err(errors) => {
                        report.status = Status::Failed;
                        report.reason = Some(errors.join("; "));
                        warnings.extend(errors);
                    }
                }
            }
            servers.push(report);
        }
        toolboxes.push(ToolboxReport {
            name: toolbox.name.clone(),
            servers,
            total: Totals::default(),
        });
    }
    let mut results = launcher.start_all(specs).into_iter();
    for (toolbox, report) in config.toolboxes.iter().zip(&mut toolboxes) {
        for (server, row) in toolbox.servers.iter().zip(&mut report.servers) {
            if server.disabled || row.status == Status::Failed {
                continue;
            }
            match results.next() {
                Some(Ok(started)) => {
                    catalog.remember(&[(
                        &toolbox.name,
                        server,
                        None,
                        &started.tools,
                        Some(started.instructions.as_deref().unwrap_or_default()),
                    )]);
                    // What the model would see; pins are the serving workbench's.
                    let seen = visible(started.tools, server, None);
                    let (tools, unknown) = (seen.tools, seen.unknown_filters);
                    for name in seen.unknown_overrides {
                        warnings.push(format!(
                            "{}.toolOverrides names '{name}', which the server does not have",
                            server.json_path
                        ));
                    }
                    row.status = Status::Ok;
                    row.era = Some(started.era.name());
                    row.protocol_version = Some(started.era.version().to_string());
                    row.startup_ms = Some(started.startup.as_millis());
                    row.tools = Some(tools.len());
                    row.bytes = tools.iter().map(|t| cost::raw_tool_bytes(&t.raw)).sum();
                    row.tokens = Some(cost::tokens(row.bytes));
                    for filter in unknown {
                        warnings.push(format!("{}.toolFilters names {filter}", server.json_path));
                    }
                    if config.mode == Mode::Dynamic {
                        let budget = config.dynamic_name_max_length;
                        for tool in &tools {
                            let plain = format!("{}__{}_{}", toolbox.name, server.name, tool.name);
                            let native = naming::native_name(
                                &toolbox.name,
                                &server.name,
                                &tool.name,
                                budget,
                            );
                            if native != plain {
                                let why = if plain.len() > budget {
                                    format!(
                                        "'{plain}' has {} characters, more than dynamicNameMaxLength ({budget}), which leaves room for a host's prefix such as mcp__workbench__",
                                        plain.len()
                                    )
                                } else {
                                    format!("'{plain}' has characters other than A-Z a-z 0-9 _ -")
                                };
                                warnings.push(format!(
                                    "dynamic mode: tool '{}' of {}/{} is listed as '{native}': {why}",
                                    tool.name, toolbox.name, server.name
                                ));
                            }
                        }
                    }
                }
                Some(Err(why)) => {
                    row.status = Status::Failed;
                    row.reason = Some(why);
                }
                None => {
                    row.status = Status::Failed;
                    row.reason = Some("internal error: no start result".into());
                }
            }
            report.total.add(row);
        }
        if report.total.tools > TOOLS_PER_TOOLBOX_LIMIT {
            warnings.push(format!(
                "toolbox '{}' has {} tools; some hosts accept at most {TOOLS_PER_TOOLBOX_LIMIT}: consider toolFilters or splitting it",
                report.name, report.total.tools
            ));
        }
    }
    catalog.save();
    let mut total = Totals::default();
    for toolbox in &toolboxes {
        total.add_bytes(toolbox.total.tools, toolbox.total.bytes);
    }
    Report {
        config: String::new(),
        origin: None,
        toolboxes,
        total,
        host_tools_list: HostToolsList {
            workbench: meta_tools_cost(config),
            direct: total,
        },
        warnings,
        shared_fleet: None,
    }
}

/// What `check` says of a remote server's sign-in (signed in, expires in,
/// expired), from the tokens stored (`auth::login::state`); `None`: none
/// are (a server that wants a sign-in says so when it starts).
#[cfg(feature = "remote")]
fn sign_in_state(
    launcher: &Launcher,
    toolbox: &str,
    server: &ServerConfig,
    _remote: &RemoteConfig,
) -> Option<String> {
    let remote = launch::resolve(toolbox, server, None).ok()?.remote?;
    let url = remote.parsed_url().ok()?;
    let label = format!("{toolbox}/{}", server.name);
    crate::auth::login::state(launcher.sign_ins(), &url, &remote.oauth, &label)
}

/// Without remote servers there is no sign-in.
#[cfg(not(feature = "remote"))]
fn sign_in_state(
    _launcher: &Launcher,
    _toolbox: &str,
    _server: &ServerConfig,
    _remote: &RemoteConfig,
) -> Option<String> {
    None
}

/// The workbench's own `tools/list` entries (the meta-tools, with
/// `outputSchema`), counted like the servers' tools (`tools::cost`: the
/// host hints in `_meta` are not counted).
fn meta_tools_cost(config: &Config) -> Totals {
    let toolboxes: Vec<_> = config.toolboxes.iter().collect();
    let list = tools::tools_list(&toolboxes, true);
    let tools = list["tools"].as_array().map_or(&[][..], Vec::as_slice);
    let mut totals = Totals::default();
    totals.add_bytes(tools.len(), tools.iter().map(cost::tool_bytes).sum());
    totals
}

fn print_text(out: &mut impl Write, report: &Report) -> io::Result<()> {
    if let Some(origin) = report.origin {
        writeln!(out, "config: {} ({origin})\n", report.config)?;
    }
    let mut rows: Vec<[String; 8]> = vec![[
        "TOOLBOX", "SERVER", "STATUS", "ERA", "START", "IDLE", "TOOLS", "TOKENS",
    ]
    .map(String::from)];
    let mut reasons = Vec::new();
    let dash = || "-".to_string();
    for toolbox in &report.toolboxes {
        for server in &toolbox.servers {
            let status = match server.status {
                Status::Ok => "ok",
                Status::Failed => "failed",
                Status::Disabled => "disabled",
            };
            rows.push([
                toolbox.name.clone(),
                server.name.clone(),
                status.to_string(),
                match (server.era, &server.protocol_version) {
                    (Some(era), Some(version)) => format!("{era} {version}"),
                    _ => dash(),
                },
                server.startup_ms.map_or_else(dash, |ms| format!("{ms} ms")),
                idle(server.idle_timeout_ms),
                server.tools.map_or_else(dash, |n| n.to_string()),
                server.tokens.map_or_else(dash, |n| n.to_string()),
            ]);
            if let Some(reason) = &server.reason {
                reasons.push(format!(
                    "{}/{}: {}",
                    toolbox.name,
                    server.name,
                    reason.replace('\n', "\n    ")
                ));
            }
        }
        rows.push(total_row(&toolbox.name, "(total)", toolbox.total));
    }
    let mut remotes = Vec::new();
    for toolbox in &report.toolboxes {
        for server in &toolbox.servers {
            let (Some(transport), Some(url)) = (server.transport, &server.url) else {
                continue;
            };
            let sign_in = server
                .sign_in
                .as_ref()
                .map_or(String::new(), |state| format!(", sign-in: {state}"));
            remotes.push(format!(
                "{}/{}: {transport} {url}{sign_in}",
                toolbox.name, server.name
            ));
        }
    }
    rows.push(total_row("all toolboxes", "", report.total));
    let widths: Vec<usize> = (0..8)
        .map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    for row in &rows {
        // Names left-aligned, figures right-aligned.
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (cell, &w))| match c {
                0..=3 => format!("{cell:<w$}"),
                _ => format!("{cell:>w$}"),
            })
            .collect();
        let line = cells.join("  ");
        writeln!(out, "{}", line.trim_end())?;
    }
    if !remotes.is_empty() {
        writeln!(out, "\nremote servers:")?;
        for remote in &remotes {
            writeln!(out, "  {remote}")?;
        }
    }
    if !reasons.is_empty() {
        writeln!(out, "\nfailures:")?;
        for reason in &reasons {
            writeln!(out, "  {reason}")?;
        }
    }
    if !report.warnings.is_empty() {
        writeln!(out, "\nwarnings:")?;
        for warning in &report.warnings {
            writeln!(out, "  {warning}")?;
        }
    }
    let (wb, direct) = (
        report.host_tools_list.workbench,
        report.host_tools_list.direct,
    );
    writeln!(
        out,
        "\nthe host's tools/list: {} tools, ~{} tokens with the workbench; {} tools, ~{} tokens \
         with every server listed directly",
        wb.tools, wb.tokens, direct.tools, direct.tokens
    )?;
    writeln!(
        out,
        "tokens: tool schema bytes / 4, roughly what opening the toolbox costs in context"
    )?;
    if let Some(fleet) = &report.shared_fleet {
        writeln!(out, "shared fleet: {fleet}")?;
    }
    out.flush()
}

/// An idle timeout as the report shows it: `never`, `5 min`, `30 s`, `300 ms`.
fn idle(ms: u128) -> String {
    match ms {
        0 => "never".to_string(),
        ms if ms % 60_000 == 0 => format!("{} min", ms / 60_000),
        ms if ms % 1000 == 0 => format!("{} s", ms / 1000),
        ms => format!("{ms} ms"),
    }
}

fn total_row(first: &str, second: &str, totals: Totals) -> [String; 8] {
    [
        first.to_string(),
        second.to_string(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        totals.tools.to_string(),
        totals.tokens.to_string(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A total is its bytes / 4, as the demo and a host's whole tools/list
    /// count it, not the sum of rounded rows (1845 against 1846 before).
    #[test]
    fn totals_round_once() {
        let mut total = Totals::default();
        for _ in 0..3 {
            total.add_bytes(1, 7);
        }
        assert_eq!((total.tools, total.tokens), (3, 5));
    }
}
