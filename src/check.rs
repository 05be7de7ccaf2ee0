//! `mcp-workbench check`: start every enabled server of every toolbox once, in
//! parallel, print one row per server, stop them all. Exit 0 when every enabled
//! server started, 1 otherwise.

use crate::config::{Config, ServerConfig};
use crate::launch::{self, Launcher};
use crate::outbox::Outbox;
use crate::toolbox::apply_filter;
use std::io::{self, Write};
use std::process::ExitCode;
use std::sync::Arc;

struct Row {
    toolbox: String,
    server: String,
    status: String,
    tools: String,
    startup: String,
}

pub fn run(config: Config, out: &mut impl Write) -> ExitCode {
    // Children of `check` talk to no host: their forwarded output has nowhere to go.
    let launcher = Launcher::new(Arc::new(Outbox::new(Box::new(io::sink()))), None);
    let mut rows = Vec::new();
    let mut specs = Vec::new();
    let mut slots: Vec<(usize, &ServerConfig)> = Vec::new();
    for toolbox in &config.toolboxes {
        for server in &toolbox.servers {
            let mut row = Row {
                toolbox: toolbox.name.clone(),
                server: server.name.clone(),
                status: String::new(),
                tools: "-".into(),
                startup: "-".into(),
            };
            if server.disabled {
                row.status = "disabled".into();
            } else {
                match launch::resolve(&toolbox.name, server) {
                    Ok(spec) => {
                        slots.push((rows.len(), server));
                        specs.push(spec);
                    }
                    Err(errors) => row.status = format!("failed: {}", errors.join("; ")),
                }
            }
            rows.push(row);
        }
    }
    let results = launcher.start_all(specs);
    let mut all_ok = rows.iter().all(|r| !r.status.starts_with("failed"));
    for ((index, server), result) in slots.into_iter().zip(results) {
        let row = &mut rows[index];
        match result {
            Ok(started) => {
                let (tools, _) = apply_filter(started.tools, &server.tool_filter);
                row.status = "ok".into();
                row.tools = tools.len().to_string();
                row.startup = format!("{} ms", started.startup.as_millis());
            }
            Err(why) => {
                all_ok = false;
                row.status = format!("failed: {}", why.replace('\n', "\n    "));
            }
        }
    }
    launcher.shutdown();
    let _ = print_rows(out, &rows);
    if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn print_rows(out: &mut impl Write, rows: &[Row]) -> io::Result<()> {
    let width = |f: fn(&Row) -> &str, title: &str| {
        rows.iter()
            .map(|r| f(r).len())
            .chain([title.len()])
            .max()
            .unwrap_or(0)
    };
    let wt = width(|r| &r.toolbox, "TOOLBOX");
    let ws = width(|r| &r.server, "SERVER");
    let wn = width(|r| &r.tools, "TOOLS");
    let wd = width(|r| &r.startup, "START");
    writeln!(
        out,
        "{:wt$}  {:ws$}  {:>wn$}  {:>wd$}  STATUS",
        "TOOLBOX", "SERVER", "TOOLS", "START"
    )?;
    for r in rows {
        writeln!(
            out,
            "{:wt$}  {:ws$}  {:>wn$}  {:>wd$}  {}",
            r.toolbox, r.server, r.tools, r.startup, r.status
        )?;
    }
    out.flush()
}
