//! The benchmark of mcp-workbench against the direct path; see scripts/bench.
//!
//! ```text
//! bench [--workbench PATH] [--static-binary PATH] [--out FILE] [--quick] [--only STEP]
//! bench serve [...]     the downstream server the benchmark uses (serve.rs)
//! bench serve-http [...] the same server over Streamable HTTP (http.rs)
//! ```
//!
//! The driver pins itself to CPU 0. Placements (benchmarking.md): *one-core*
//! runs the workbench and its servers on CPU 0 too, *split* on CPU 1. "Direct"
//! is the same server spawned by the driver with the same placement. Every
//! figure is the median of repeated rounds with min and max; differences and
//! ratios are taken within a round. A target is judged on the median.

// A test tool, and a crate of its own: it spawns processes and writes stdout
// as it likes (clippy.toml), and `pub` in it means crate-wide.
#![allow(unreachable_pub, clippy::disallowed_methods, clippy::print_stdout)]
// Test tools: a failure is a panic with its reason, not an answer to handle.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod http;
mod measure;
mod script;
mod serve;
mod session;

use serde_json::json;
use session::Proc;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{exit, Command};
use std::time::Instant;

#[derive(Clone, Copy)]
pub struct Place {
    name: &'static str,
    cpu: Option<usize>,
}

pub const ONE_CORE: Place = Place {
    name: "one-core",
    cpu: Some(0),
};
pub const SPLIT: Place = Place {
    name: "split",
    cpu: Some(1),
};
/// One-core without `taskset`: children inherit the driver's CPU 0.
pub const INHERIT: Place = Place {
    name: "one-core",
    cpu: None,
};

const TARGETS: [&str; 10] = [
    "added latency per sequential call: p50 <= 25 us, p99 <= 60 us",
    "throughput, 64 in flight, 100,000 calls, 5 servers: >= 0.8 x direct",
    "start to initialize response: median <= 5 ms",
    "RSS: idle <= 4 MB, 10x5 open <= 12 MB, peak in 100,000 calls <= 16 MB",
    "open_toolbox of 10 servers taking 200 ms each: <= 300 ms",
    "16 MiB result: <= 1.5 x direct, peak RSS <= 3 x payload; 64 MiB passes",
    "idle CPU with 10 toolboxes open: <= 10 ms in 10 s",
    "static stripped binary: <= 1.5 MiB",
    "one `call` through a running fleet, server up: <= 15 ms over the tool's own time",
    "`call --batch` of 100 calls to a fast tool: <= 1 s",
];

/// A target's bound: (at most?, value).
type Limit = (bool, f64);

pub fn le(x: f64) -> Limit {
    (true, x)
}

pub fn ge(x: f64) -> Limit {
    (false, x)
}

struct Row {
    target: Option<usize>,
    name: String,
    place: &'static str,
    unit: String,
    values: Vec<f64>,
    /// Median, min, max.
    stat: [f64; 3],
    limit: Option<Limit>,
}

impl Row {
    fn met(&self) -> Option<bool> {
        let (at_most, x) = self.limit?;
        let median = self.stat[0];
        Some(if at_most { median <= x } else { median >= x })
    }

    fn bound(&self) -> Option<String> {
        let (at_most, x) = self.limit?;
        Some(format!("{} {x}", if at_most { "<=" } else { ">=" }))
    }

    fn line(&self) -> String {
        let stats = self.stat.map(|x| match x.abs() {
            a if a >= 1000.0 => format!("{x:>9.0}"),
            a if a >= 10.0 => format!("{x:>9.1}"),
            _ => format!("{x:>9.2}"),
        });
        let verdict = self.met().map_or("", |m| if m { "met" } else { "NOT MET" });
        let target = self.target.map_or(String::new(), |t| t.to_string());
        let (name, place, unit, n) = (&self.name, self.place, &self.unit, self.values.len());
        let bound = self.bound().unwrap_or_default();
        let stats = stats.join(" ");
        format!("{target:>2} {name:<44} {place:<8} {stats} {unit:<7} {n:>2} {bound:>8} {verdict}")
    }
}

/// What every measurement needs, and the rows they record.
pub struct Ctx {
    /// This program, which is also the downstream server (`bench serve`).
    exe: PathBuf,
    workbench: PathBuf,
    dir: PathBuf,
    /// Where every spawned process's stderr goes.
    log: File,
    /// `serve --spin` iterations that take 50 µs of CPU.
    pub spin: u64,
    pub clock_ticks: f64,
    pub quick: bool,
    /// Where the next processes run.
    pub place: Place,
    rows: Vec<Row>,
}

impl Ctx {
    /// `full`, or `quick` with `--quick`.
    pub fn n(&self, full: usize, quick: usize) -> usize {
        if self.quick {
            quick
        } else {
            full
        }
    }

    /// Writes a config of `shape` (toolboxes, servers each); its path.
    pub fn config(
        &self,
        name: &str,
        dynamic: bool,
        shape: (usize, usize),
        args: &[String],
    ) -> io::Result<PathBuf> {
        let path = self.dir.join(format!("config-{name}.json"));
        session::write_config(&path, &self.exe, dynamic, shape, args)?;
        Ok(path)
    }

    /// A workbench after `initialize`.
    pub fn workbench(&self, config: &Path) -> io::Result<Proc> {
        let args = ["--config".to_string(), config.display().to_string()];
        let mut p = Proc::spawn(self.place.cpu, &self.workbench, &args, &self.log)?;
        p.initialize()?;
        Ok(p)
    }

    /// `bench serve-http`, and the port it listens on.
    pub fn serve_http(&self, args: &[String]) -> io::Result<(Proc, u16)> {
        let args = [&["serve-http".to_string()], args].concat();
        let mut p = Proc::spawn(self.place.cpu, &self.exe, &args, &self.log)?;
        let port = http::port_of(p.recv()?)?;
        Ok((p, port))
    }

    /// A config of one toolbox `tb0` whose server `s0` is `url`.
    pub fn remote_config(&self, name: &str, url: &str) -> io::Result<PathBuf> {
        let path = self.dir.join(format!("config-{name}.json"));
        let server = json!({"type": "http", "url": url});
        let config = json!({"toolboxes": {"tb0": {"description": "benchmark", "mcpServers": {"s0": server}}}});
        fs::write(&path, config.to_string())?;
        Ok(path)
    }

    pub fn spawn_serve(&self, args: &[String]) -> io::Result<Proc> {
        let args = [&["serve".to_string()], args].concat();
        Proc::spawn(self.place.cpu, &self.exe, &args, &self.log)
    }

    /// A direct server after `initialize`.
    pub fn serve(&self, args: &[String]) -> io::Result<Proc> {
        let mut p = self.spawn_serve(args)?;
        p.initialize()?;
        Ok(p)
    }

    /// A row judged against target number `target`.
    pub fn check(&mut self, target: usize, name: &str, unit: &str, values: &[f64], limit: Limit) {
        self.push(Some(target), name, unit, values, Some(limit));
    }

    /// A row without a target.
    pub fn info(&mut self, name: &str, unit: &str, values: &[f64]) {
        self.push(None, name, unit, values, None);
    }

    fn push(
        &mut self,
        target: Option<usize>,
        name: &str,
        unit: &str,
        v: &[f64],
        limit: Option<Limit>,
    ) {
        let mut sorted = v.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let stat = [
            (sorted[(n - 1) / 2] + sorted[n / 2]) / 2.0,
            sorted[0],
            sorted[n - 1],
        ];
        let (name, unit, values, place) = (name.into(), unit.into(), v.to_vec(), self.place.name);
        let row = Row {
            target,
            name,
            place,
            unit,
            values,
            stat,
            limit,
        };
        eprintln!("  {}", row.line());
        self.rows.push(row);
    }
}

fn load_average() -> String {
    let text = fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split(' ').take(3).collect::<Vec<_>>().join(" ")
}

fn output(program: &str, args: &[&str]) -> io::Result<String> {
    let out = Command::new(program).args(args).output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!("{program} {args:?} failed")));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

struct Args {
    workbench: PathBuf,
    static_binary: Option<PathBuf>,
    out: PathBuf,
    quick: bool,
    only: Option<String>,
}

/// A path in the same cargo build as this program: examples live in
/// `<target>/<profile>/examples/`, binaries one folder up.
fn same_build(name: &str) -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.join(name)))
        .unwrap_or_else(|| PathBuf::from(name))
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut parsed = Args {
        workbench: same_build("mcp-workbench"),
        static_binary: None,
        out: same_build("../bench/report.json"),
        quick: false,
        only: None,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = || it.next().cloned().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--workbench" => parsed.workbench = value()?.into(),
            "--static-binary" => parsed.static_binary = Some(value()?.into()),
            "--out" => parsed.out = value()?.into(),
            "--only" => parsed.only = Some(value()?),
            "--quick" => parsed.quick = true,
            _ => return Err(format!("unknown argument {arg}")),
        }
    }
    Ok(parsed)
}

fn run(args: Args) -> io::Result<()> {
    let began = Instant::now();
    output("taskset", &["-V"]).map_err(|_| io::Error::other("taskset (util-linux) is needed"))?;
    // Before any thread exists, so that every thread of the driver stays on CPU 0.
    let pid = std::process::id().to_string();
    output("taskset", &["-p", "-c", "0", &pid])?;
    let dir = args.out.parent().unwrap_or(Path::new(".")).to_path_buf();
    fs::create_dir_all(&dir)?;
    let load_before = load_average();
    let clock_ticks = output("getconf", &["CLK_TCK"])?;
    let mut ctx = Ctx {
        exe: fs::canonicalize(std::env::current_exe()?)?,
        workbench: fs::canonicalize(&args.workbench)?,
        log: File::create(dir.join("bench-stderr.log"))?,
        dir,
        spin: serve::calibrate(50.0),
        clock_ticks: clock_ticks.parse().map_err(io::Error::other)?,
        quick: args.quick,
        place: ONE_CORE,
        rows: Vec::new(),
    };
    eprintln!(
        "bench: load {load_before}; 50 us of work: {} iterations",
        ctx.spin
    );
    type Step = fn(&mut Ctx) -> io::Result<()>;
    // A shared fleet of its own for the `shared` step (§8).
    std::env::set_var("XDG_RUNTIME_DIR", ctx.dir.join("run"));
    fs::create_dir_all(ctx.dir.join("run"))?;
    let steps: [(&str, Step); 12] = [
        ("start-up", measure::startup),
        ("latency", measure::latency),
        ("latency vs open toolboxes", measure::latency_vs_toolboxes),
        ("throughput", measure::throughput),
        ("throughput vs in flight", measure::throughput_vs_in_flight),
        ("open of slow servers", measure::open_slow),
        ("open vs tools per toolbox", measure::open_vs_tools),
        ("large results", measure::big_results),
        ("10 toolboxes open, idle", measure::ten_toolboxes),
        ("shared fleet", measure::shared),
        ("remote", measure::remote),
        ("script calls", script::script_calls),
    ];
    let only = args.only.as_deref().unwrap_or("");
    for (name, step) in steps.into_iter().filter(|(name, _)| name.contains(only)) {
        let seconds = began.elapsed().as_secs();
        eprintln!("bench: {name} (at {seconds} s, load {})", load_average());
        step(&mut ctx)?;
    }
    if let Some(path) = &args.static_binary {
        ctx.place = Place {
            name: "-",
            cpu: None,
        };
        let size = fs::metadata(path)?.len() as f64 / 1024.0 / 1024.0;
        ctx.check(8, "static stripped binary size", "MiB", &[size], le(1.5));
    }
    let seconds = began.elapsed().as_secs_f64();
    report(&ctx, &args, &load_before, seconds)
}

fn report(ctx: &Ctx, args: &Args, load_before: &str, seconds: f64) -> io::Result<()> {
    let load_after = load_average();
    println!("mcp-workbench benchmark, {seconds:.0} s; load average {load_before} before, {load_after} after");
    let head = " T measurement                                  place       median       min       max unit     n   target result";
    println!("{head}\n{}", "-".repeat(head.len()));
    ctx.rows.iter().for_each(|r| println!("{}", r.line()));
    println!();
    let mut targets = Vec::new();
    for (i, text) in TARGETS.iter().enumerate() {
        let rows = ctx.rows.iter().filter(|r| r.target == Some(i + 1));
        let verdicts: Vec<bool> = rows.filter_map(Row::met).collect();
        let met = (!verdicts.is_empty()).then(|| verdicts.iter().all(|&m| m));
        let shown = met.map_or("not measured", |m| if m { "met" } else { "NOT MET" });
        println!("target {}: {shown:<12} {text}", i + 1);
        targets.push(json!({"target": i + 1, "text": text, "met": met}));
    }
    let rows: Vec<_> = ctx
        .rows
        .iter()
        .map(|r| {
            json!({
                "target": r.target, "measurement": r.name, "placement": r.place, "unit": r.unit,
                "median": r.stat[0], "min": r.stat[1], "max": r.stat[2], "values": r.values,
                "limit": r.bound(), "met": r.met(),
            })
        })
        .collect();
    let report = json!({
        "load_average_before": load_before, "load_average_after": load_after,
        "seconds": seconds, "quick": ctx.quick, "workbench": ctx.workbench,
        "static_binary": args.static_binary, "spin_iterations_per_50us": ctx.spin,
        "targets": targets, "rows": rows,
    });
    fs::write(&args.out, serde_json::to_string_pretty(&report)? + "\n")?;
    println!("\nreport: {}", args.out.display());
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("serve") => serve::run(&args[1..]),
        Some("serve-http") => http::run(&args[1..]),
        _ => parse_args(&args).map_err(io::Error::other).and_then(run),
    };
    if let Err(e) = result {
        eprintln!("bench: {e}");
        exit(1);
    }
}
