//! Load driver for mcp-workbench: many pipelined `use_tool` calls, each checked
//! for the right id and the right toolbox, optionally while child servers are
//! being killed or next to hostile neighbours.
//!
//! ```text
//! cargo build --release --features test-fake --bins --examples
//! $(scripts/target-dir)/release/examples/load [--workbench PATH] [--fake PATH] [--calls C]
//!     [--in-flight K] [--toolboxes N] [--call-delay-ms MS] [--kill-children]
//!     [--kill-every MIN-MAX] [--storm-ms MS] [--grace-ms MS] [--seed S]
//!     [--hostile-neighbours]
//! ```
//!
//! Paths default to `$MCP_WORKBENCH` / `$MCP_FAKE_SERVER`, else the binaries
//! of the same build: `mcp-workbench` / `mcp-fake-server` in the folder above
//! this example's.
//!
//! It writes a config into a fresh temporary folder: N toolboxes `tb0..`, each
//! with one server `fake` (the same fake server and script, with its own env
//! `MARKER=tbI`). The script has two tools: `echo` answers `echo <arguments>`,
//! `marker` answers `MARKER=tbI`. The workbench runs with that folder as its
//! working directory, and so do its children.
//!
//! After `initialize` and opening every toolbox, a writer thread sends C calls
//! (ids 0..C), at most K unanswered at a time (K permits in a bounded channel),
//! round-robin over the toolboxes; a reader thread matches the answers by id.
//! Call `n` goes to toolbox `n % N` with arguments `{"seq": n, "toolbox": "tbI"}`;
//! every fourth round calls `marker` instead of `echo`. An answer counts as ok
//! only if the echoed arguments are exactly the call's own (so an answer routed
//! to the wrong id is caught) or the marker is the toolbox's own (so a call
//! served by another toolbox's child is caught). The control requests
//! (initialize, opens, the final round) use string ids.
//!
//! Counts: sent, answered, ok, wrong id (an id never sent), wrong toolbox/content,
//! isError, JSON-RPC errors, lost (no answer `--grace-ms` after the last answer),
//! duplicates (a second answer to one id), unexpected lines; wall time, calls/s
//! and the longest any call waited for its answer. Then a final round
//! (re-open every toolbox, one `echo` and one `marker` call to each), close
//! stdin, wait for the workbench's exit (code 0 expected) and check that no
//! process is left with its working directory in the temporary folder.
//!
//! `--kill-children` (fault injection): while calls are being sent (at most
//! `--storm-ms`), a thread SIGKILLs a random fake server every MIN-MAX ms
//! (default 50-200); after about three kills in eight it also sends an
//! `open_toolbox` for a random toolbox, after one in eight a `close_toolbox`,
//! so opens, closes, calls and deaths race. Each of those requests must get
//! exactly one answer too. isError answers to calls are then expected;
//! anything else above still counts. The final round checks that the
//! workbench recovered. `--call-delay-ms` makes the fake take that long per
//! call, so that kills find calls in flight.
//!
//! `--hostile-neighbours`: two more toolboxes next to the N normal ones, each
//! with one fake server (`callTimeoutMs` 2000) that a thread keeps calling, one
//! call to each every `NEIGHBOUR_EVERY`, from before the first normal call
//! until the last normal answer. `stalling`: the first call is `stall`, after
//! which the child never reads its stdin again; the later calls are `echo`
//! with `STALL_PAD` bytes of padding, so the pipe fills at once and the
//! workbench's queue for that child soon after (the first calls time out, the
//! later ones fail fast). `crashing`: every call is `die`, which makes the
//! child exit, so the calls restart it again and again (each start appends its
//! pid to a file; the report counts them). The normal calls start once a call
//! to the stalling child has failed fast (its queue is full) and the crashing
//! child has died once. The
//! neighbours' calls (string ids `stall-N`, `crash-N`) are counted apart: each
//! must get exactly one answer, within `NEIGHBOUR_GRACE` of silence after the
//! load; isError answers are expected, an answer naming another toolbox, a
//! JSON-RPC error or a result other than the call's own echo is wrong. The
//! normal calls are judged exactly as without neighbours.
//!
//! Exit code 0 when every count other than ok (and, with `--kill-children`,
//! isError; for the neighbours, isError) is zero, the final round passed, the
//! workbench exited 0 and nothing is left; 1 otherwise; 2 for bad arguments.
//!
//! Sharing: the test suite's `faults` test (`tests/it/faults.rs`) has cargo
//! build this example and runs it with a shorter fault scenario, judging it
//! by its exit code and report, so the suite and `scripts/load-test` run the
//! same program.

// A test tool, and a crate of its own: it spawns processes and writes stdout
// as it likes (clippy.toml), and `pub` in it means crate-wide.
#![allow(unreachable_pub, clippy::disallowed_methods, clippy::print_stdout)]
// Test tools: a failure is a panic with its reason, not an answer to handle.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender, TryRecvError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The one server of every toolbox.
const SERVER: &str = "fake";
/// How long a control request (initialize, open, final round) may take.
const CONTROL_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the workbench may take to exit after stdin is closed.
const EXIT_TIMEOUT: Duration = Duration::from_secs(30);
/// The default grace with `--kill-children`: calls wait for restarts, and a
/// server that keeps dying is restarted after a backoff of up to 5 s.
pub const KILL_GRACE: Duration = Duration::from_secs(30);
/// Examples of each kind of problem kept for the report.
const SAMPLES: usize = 3;
/// With `--hostile-neighbours`: the pause between two rounds of neighbour
/// calls (one call to each neighbour per round).
const NEIGHBOUR_EVERY: Duration = Duration::from_millis(10);
/// The padding of each call to the stalling child after `stall`: one of them
/// fills a pipe, about 128 the workbench's 8 MiB queue for that child.
const STALL_PAD: usize = 64 << 10;
/// The neighbours' `callTimeoutMs`, so that calls to the stalled child end.
const NEIGHBOUR_CALL_TIMEOUT_MS: u64 = 2000;
/// Silence (no new neighbour answer) after the load after which the
/// unanswered neighbour calls count as lost: calls to the crashing child wait
/// out restart backoffs of up to 5 s.
const NEIGHBOUR_GRACE: Duration = Duration::from_secs(30);

const USAGE: &str = "usage: load [--workbench PATH] [--fake PATH] [--calls C] [--in-flight K]
            [--toolboxes N] [--call-delay-ms MS] [--kill-children]
            [--kill-every MIN-MAX] [--storm-ms MS] [--grace-ms MS] [--seed S]
            [--hostile-neighbours]
--hostile-neighbours adds a toolbox whose child stops reading its stdin and one
whose child crashes on every call, both called all along (counted apart)
defaults: $MCP_WORKBENCH or the mcp-workbench of this build, $MCP_FAKE_SERVER or
its mcp-fake-server, 100000 calls, 64 in flight, 5 toolboxes,
no call delay, kills every 50-200 ms for the whole sending phase, 10000 ms grace (30000 ms
with --kill-children: calls wait for restarts, which back off up to 5 s)";

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    pub workbench: PathBuf,
    pub fake: PathBuf,
    pub toolboxes: usize,
    pub calls: u64,
    pub in_flight: usize,
    pub kill_children: bool,
    /// Work time of every call in the fake server (its `delayMs`), so that
    /// kills find calls in flight.
    pub call_delay_ms: u64,
    /// The pause before each kill, uniform in [min, max] milliseconds.
    pub kill_every_ms: (u64, u64),
    /// The longest storm; it also ends once every call has been sent.
    pub storm: Option<Duration>,
    /// Silence (no new answer) after which the unanswered calls count as lost.
    pub grace: Duration,
    pub seed: u64,
    /// `RUST_LOG` for the workbench.
    pub log: String,
    /// Print progress lines (setup, phases) to stderr.
    pub verbose: bool,
    /// Add the two [`Neighbour`] toolboxes and call them all along.
    pub hostile_neighbours: bool,
}

impl Options {
    /// The defaults, with these two binaries.
    pub fn new(workbench: impl Into<PathBuf>, fake: impl Into<PathBuf>) -> Options {
        let seed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
            ^ u64::from(std::process::id());
        Options {
            workbench: workbench.into(),
            fake: fake.into(),
            toolboxes: 5,
            calls: 100_000,
            in_flight: 64,
            kill_children: false,
            call_delay_ms: 0,
            kill_every_ms: (50, 200),
            storm: None,
            grace: Duration::from_secs(10),
            seed,
            log: std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()),
            verbose: true,
            hostile_neighbours: false,
        }
    }

    /// Parses the command line; `Ok(None)` for `--help`.
    pub fn from_args(mut args: impl Iterator<Item = String>) -> Result<Option<Options>, String> {
        let env_path = |var: &str, default: &str| {
            std::env::var_os(var).map_or_else(|| same_build(default), PathBuf::from)
        };
        let mut opts = Options::new(
            env_path("MCP_WORKBENCH", "mcp-workbench"),
            env_path("MCP_FAKE_SERVER", "mcp-fake-server"),
        );
        let mut grace = None;
        while let Some(arg) = args.next() {
            let mut value = || {
                args.next()
                    .ok_or_else(|| format!("{arg} needs a value\n{USAGE}"))
            };
            let number = |v: String| {
                v.parse::<u64>()
                    .map_err(|_| format!("{arg}: not a number: {v}\n{USAGE}"))
            };
            match arg.as_str() {
                "--help" | "-h" => return Ok(None),
                "--workbench" => opts.workbench = value()?.into(),
                "--fake" => opts.fake = value()?.into(),
                "--calls" => opts.calls = number(value()?)?,
                "--in-flight" => opts.in_flight = number(value()?)? as usize,
                "--toolboxes" => opts.toolboxes = number(value()?)? as usize,
                "--kill-children" => opts.kill_children = true,
                "--call-delay-ms" => opts.call_delay_ms = number(value()?)?,
                "--kill-every" => {
                    let v = value()?;
                    let (lo, hi) = v.split_once('-').unwrap_or((&v, &v));
                    let (lo, hi) = (number(lo.into())?, number(hi.into())?);
                    if lo > hi {
                        return Err(format!("--kill-every: {lo} > {hi}\n{USAGE}"));
                    }
                    opts.kill_every_ms = (lo, hi);
                }
                "--storm-ms" => opts.storm = Some(Duration::from_millis(number(value()?)?)),
                "--grace-ms" => grace = Some(Duration::from_millis(number(value()?)?)),
                "--seed" => opts.seed = number(value()?)?,
                "--hostile-neighbours" => opts.hostile_neighbours = true,
                _ => return Err(format!("unknown argument {arg}\n{USAGE}")),
            }
        }
        opts.grace = grace.unwrap_or(if opts.kill_children {
            KILL_GRACE
        } else {
            opts.grace
        });
        if opts.toolboxes == 0 || opts.in_flight == 0 {
            return Err(format!(
                "--toolboxes and --in-flight must be at least 1\n{USAGE}"
            ));
        }
        Ok(Some(opts))
    }

    fn say(&self, what: &str) {
        if self.verbose {
            eprintln!("load: {what}");
        }
    }
}

/// What happened.
#[derive(Debug, Default)]
pub struct Report {
    pub kill_mode: bool,
    pub calls: u64,
    pub in_flight: usize,
    pub toolboxes: usize,
    pub seed: u64,
    pub sent: u64,
    /// Why the writer stopped early, if it did.
    pub writer_note: String,
    /// Calls with at least one answer.
    pub answered: u64,
    pub ok: u64,
    /// Answers whose id was never sent (or is not a call id at all).
    pub wrong_id: u64,
    /// Results that are not the call's own echo or its toolbox's marker, and
    /// isError texts that name another toolbox.
    pub wrong_content: u64,
    pub is_error: u64,
    /// JSON-RPC errors instead of results.
    pub rpc_error: u64,
    pub lost: u64,
    /// Second (or later) answers to one id, calls and control requests.
    pub duplicates: u64,
    /// Lines that are not JSON, notifications, answers to nothing we asked.
    pub unexpected: u64,
    /// From the first call sent to the last answer (or to the end of the grace).
    pub wall: Duration,
    /// The longest any call waited for its answer, and its id.
    pub slowest: (Duration, u64),
    pub kills: u64,
    pub storm_requests: u64,
    pub storm_requests_answered: u64,
    /// Failures of the final round (re-open and one call of each kind per toolbox).
    pub final_round: Vec<String>,
    /// With `--hostile-neighbours`, one per [`Neighbour::ALL`].
    pub neighbours: Vec<NeighbourCounts>,
    /// Why the neighbours' caller stopped early, if it did.
    pub neighbour_note: String,
    /// How the workbench ended: "exit status 0" is the good one.
    pub exit: String,
    pub leftovers: Vec<String>,
    pub samples: BTreeMap<&'static str, Vec<String>>,
    pub stderr_tail: Vec<String>,
}

impl Report {
    /// Everything that makes the run a failure.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let mut count = |n: u64, what: &str| {
            if n > 0 {
                problems.push(format!("{n} {what}"));
            }
        };
        count(self.calls - self.sent, "calls not sent");
        count(self.wrong_id, "answers with a wrong id");
        count(
            self.wrong_content,
            "answers with a wrong toolbox or content",
        );
        if !self.kill_mode {
            count(self.is_error, "isError answers");
        }
        count(self.rpc_error, "JSON-RPC errors");
        count(self.lost, "lost calls");
        count(self.duplicates, "duplicate answers");
        count(self.unexpected, "unexpected lines");
        count(
            self.storm_requests - self.storm_requests_answered,
            "unanswered storm opens/closes",
        );
        for nb in &self.neighbours {
            let name = nb.toolbox;
            count(
                nb.wrong_id,
                &format!("answers from '{name}' with a wrong id"),
            );
            count(
                nb.wrong_content,
                &format!("answers from '{name}' with a wrong toolbox or content"),
            );
            count(nb.rpc_error, &format!("JSON-RPC errors from '{name}'"));
            count(nb.lost, &format!("lost calls to '{name}'"));
            count(nb.duplicates, &format!("duplicate answers from '{name}'"));
        }
        if !self.writer_note.is_empty() {
            problems.push(format!("writer: {}", self.writer_note));
        }
        if self.kill_mode && self.kills == 0 {
            problems.push("no child was killed: the storm did nothing".into());
        }
        for nb in &self.neighbours {
            let hostile = match nb.which {
                Neighbour::Stalling => nb.not_reading > 0 && nb.timed_out > 0,
                Neighbour::Crashing => nb.starts > 1,
            };
            if nb.sent == 0 {
                problems.push(format!("no call was sent to '{}'", nb.toolbox));
            } else if !hostile {
                problems.push(format!(
                    "'{}' was not hostile: {}",
                    nb.toolbox,
                    nb.which.hostility()
                ));
            }
        }
        if !self.neighbour_note.is_empty() {
            problems.push(format!("neighbours: {}", self.neighbour_note));
        }
        problems.extend(self.final_round.iter().map(|f| format!("final round: {f}")));
        if self.exit != "exit status 0" {
            problems.push(format!("the workbench ended with {}", self.exit));
        }
        if !self.leftovers.is_empty() {
            problems.push(format!("processes left: {:?}", self.leftovers));
        }
        problems
    }

    pub fn print(&self) {
        let rate = self.answered as f64 / self.wall.as_secs_f64().max(1e-9);
        println!(
            "load: {} calls, {} in flight, {} toolboxes{}{} (seed {})",
            self.calls,
            self.in_flight,
            self.toolboxes,
            if self.kill_mode {
                ", killing children"
            } else {
                ""
            },
            if self.neighbours.is_empty() {
                ""
            } else {
                ", hostile neighbours"
            },
            self.seed
        );
        println!(
            "sent {}  answered {}  ok {}  wrong id {}  wrong toolbox/content {}  isError {}  \
             rpc errors {}  lost {}  duplicates {}  unexpected {}",
            self.sent,
            self.answered,
            self.ok,
            self.wrong_id,
            self.wrong_content,
            self.is_error,
            self.rpc_error,
            self.lost,
            self.duplicates,
            self.unexpected
        );
        println!(
            "wall {:.3} s  {rate:.0} calls/s  slowest answer {:.1} ms (id {})",
            self.wall.as_secs_f64(),
            self.slowest.0.as_secs_f64() * 1e3,
            self.slowest.1
        );
        if self.kill_mode {
            println!(
                "kills {}  storm opens/closes {} (answered {})",
                self.kills, self.storm_requests, self.storm_requests_answered
            );
        }
        for nb in &self.neighbours {
            println!(
                "neighbour {}: sent {}  answered {}  isError {} (not reading its stdin {}, \
                 timed out {})  ok {}  wrong id {}  wrong toolbox/content {}  rpc errors {}  \
                 lost {}  duplicates {}  child starts {}",
                nb.toolbox,
                nb.sent,
                nb.answered,
                nb.is_error,
                nb.not_reading,
                nb.timed_out,
                nb.ok,
                nb.wrong_id,
                nb.wrong_content,
                nb.rpc_error,
                nb.lost,
                nb.duplicates,
                nb.starts
            );
        }
        if self.final_round.is_empty() {
            println!("final round: every toolbox re-opened and answered");
        }
        println!(
            "workbench: {}; processes left: {}",
            self.exit,
            if self.leftovers.is_empty() {
                "none".to_string()
            } else {
                self.leftovers.join(", ")
            }
        );
        for (kind, samples) in &self.samples {
            for s in samples {
                println!("  e.g. {kind}: {s}");
            }
        }
        let problems = self.problems();
        for p in &problems {
            println!("PROBLEM: {p}");
        }
        if !problems.is_empty() && !self.stderr_tail.is_empty() {
            println!("last lines of the workbench's stderr:");
            for line in &self.stderr_tail {
                println!("  {line}");
            }
        }
    }
}

/// Runs the scenario. `Err` only when the setup itself fails (the workbench
/// does not start, initialize or open every toolbox).
pub fn run(opts: &Options) -> Result<Report, String> {
    let dir = std::env::temp_dir().join(format!(
        "mcp-workbench-load-{}-{:x}",
        std::process::id(),
        opts.seed & 0xffff_ffff
    ));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    // /proc/PID/cwd shows the canonical path.
    let dir = dir.canonicalize().map_err(|e| e.to_string())?;
    let result = run_in(opts, &dir);
    let _ = fs::remove_dir_all(&dir);
    result
}

/// A binary of the same cargo build as this program: examples live in
/// `<target>/<profile>/examples/`, binaries one folder up.
fn same_build(name: &str) -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.join(name)))
        .unwrap_or_else(|| PathBuf::from(name))
}

fn toolbox_name(i: usize) -> String {
    format!("tb{i}")
}

/// Which toolbox call `seq` goes to, and whether it calls `marker`.
fn plan(seq: u64, toolboxes: usize) -> (usize, bool) {
    let n = toolboxes as u64;
    ((seq % n) as usize, (seq / n) % 4 == 3)
}

/// A hostile neighbour toolbox (`--hostile-neighbours`), with one server
/// [`SERVER`] of its own script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Neighbour {
    /// Its child stops reading its stdin at the first call (`stall`).
    Stalling,
    /// Its child exits at every call (`die`).
    Crashing,
}

impl Neighbour {
    /// In the order of [`Tally::neighbours`] and [`Report::neighbours`].
    pub const ALL: [Neighbour; 2] = [Neighbour::Stalling, Neighbour::Crashing];

    /// The toolbox's name, also the stem of its script and of its pid file.
    pub fn toolbox(self) -> &'static str {
        match self {
            Neighbour::Stalling => "stalling",
            Neighbour::Crashing => "crashing",
        }
    }

    /// What its answers are kept under in the samples.
    fn sample_kind(self) -> &'static str {
        match self {
            Neighbour::Stalling => "stalling isError",
            Neighbour::Crashing => "crashing isError",
        }
    }

    /// What it should have done, for the report when it did not.
    fn hostility(self) -> &'static str {
        match self {
            Neighbour::Stalling => "no call to its stalled child both timed out and failed fast",
            Neighbour::Crashing => "its child never crashed and started again",
        }
    }

    /// The ids of its calls: this and the call's number.
    fn id_prefix(self) -> &'static str {
        match self {
            Neighbour::Stalling => "stall-",
            Neighbour::Crashing => "crash-",
        }
    }

    /// The neighbour an answer's id belongs to, and the call's number (`None`
    /// if the rest of the id is not one).
    fn parse_id(id: &str) -> Option<(Neighbour, Option<u64>)> {
        Neighbour::ALL.into_iter().find_map(|which| {
            let rest = id.strip_prefix(which.id_prefix())?;
            Some((which, rest.parse().ok()))
        })
    }

    fn script(self) -> Value {
        let tool = |name: &str| json!({"name": name, "inputSchema": {"type": "object"}});
        let startup = json!({"appendPidTo": format!("{}.pids", self.toolbox())});
        match self {
            Neighbour::Stalling => json!({"startup": startup, "tools": [
                {"tool": tool("stall"), "action": {"stallStdin": true}},
                {"tool": tool("echo")}
            ]}),
            Neighbour::Crashing => json!({"startup": startup, "tools": [
                {"tool": tool("die"), "action": {"exit": 1}}
            ]}),
        }
    }

    /// The tool and arguments of its call `n`.
    fn call(self, n: u64, pad: &str) -> (&'static str, Value) {
        match self {
            Neighbour::Stalling if n == 0 => ("stall", json!({})),
            Neighbour::Stalling => ("echo", json!({"seq": n, "pad": pad})),
            Neighbour::Crashing => ("die", json!({"seq": n})),
        }
    }

    /// Whether a result (not isError) is the one its call `n` may get: the
    /// echo of a stalling child restarted by a kill.
    fn expected(self, text: &str, n: u64) -> bool {
        self == Neighbour::Stalling
            && n > 0
            && text
                .strip_prefix("echo ")
                .and_then(|args| serde_json::from_str::<Value>(args).ok())
                .is_some_and(|args| args == self.call(n, &"x".repeat(STALL_PAD)).1)
    }
}

/// What one hostile neighbour's calls got.
#[derive(Debug)]
pub struct NeighbourCounts {
    pub which: Neighbour,
    pub toolbox: &'static str,
    pub sent: u64,
    /// Calls with at least one answer.
    pub answered: u64,
    /// Results that are the call's own echo (only after a kill restarted the
    /// stalling child).
    pub ok: u64,
    pub is_error: u64,
    /// Among `is_error`: the child does not read its stdin (failed fast).
    pub not_reading: u64,
    /// Among `is_error`: timed out.
    pub timed_out: u64,
    pub wrong_id: u64,
    /// Other results, and isError texts that name another toolbox.
    pub wrong_content: u64,
    pub rpc_error: u64,
    pub lost: u64,
    pub duplicates: u64,
    /// How many times its child started (its pid file's lines).
    pub starts: u64,
    /// Answers per call while running; its length is the calls sent.
    answers: Vec<u8>,
}

impl NeighbourCounts {
    fn new(which: Neighbour) -> NeighbourCounts {
        NeighbourCounts {
            which,
            toolbox: which.toolbox(),
            sent: 0,
            answered: 0,
            ok: 0,
            is_error: 0,
            not_reading: 0,
            timed_out: 0,
            wrong_id: 0,
            wrong_content: 0,
            rpc_error: 0,
            lost: 0,
            duplicates: 0,
            starts: 0,
            answers: Vec::new(),
        }
    }
}

fn use_tool_params(toolbox: &str, tool: &str, arguments: Value) -> Value {
    json!({"name": "use_tool", "arguments": {
        "tool": {"toolbox": toolbox, "server": SERVER, "tool": tool},
        "arguments": arguments}})
}

fn write_files(opts: &Options, dir: &Path) -> Result<(), String> {
    let fake = opts
        .fake
        .canonicalize()
        .map_err(|e| format!("fake server {}: {e}", opts.fake.display()))?;
    let delay = opts.call_delay_ms;
    let script = json!({"tools": [
        {"tool": {"name": "echo", "inputSchema": {"type": "object"}}, "action": {"delayMs": delay}},
        {"tool": {"name": "marker", "inputSchema": {"type": "object"}},
         "action": {"delayMs": delay, "env": ["MARKER"]}}
    ]});
    let mut toolboxes = serde_json::Map::new();
    for i in 0..opts.toolboxes {
        let server =
            json!({"command": fake, "args": ["script.json"], "env": {"MARKER": toolbox_name(i)}});
        toolboxes.insert(
            toolbox_name(i),
            json!({"description": format!("load toolbox {i}"), "mcpServers": {SERVER: server}}),
        );
    }
    let write = |name: &str, v: &Value| {
        fs::write(dir.join(name), v.to_string()).map_err(|e| format!("cannot write {name}: {e}"))
    };
    if opts.hostile_neighbours {
        for which in Neighbour::ALL {
            let name = which.toolbox();
            let script = format!("{name}.json");
            write(&script, &which.script())?;
            let server = json!({"command": fake, "args": [script],
                "callTimeoutMs": NEIGHBOUR_CALL_TIMEOUT_MS});
            toolboxes.insert(
                name.into(),
                json!({"description": format!("hostile neighbour {name}"),
                       "mcpServers": {SERVER: server}}),
            );
        }
    }
    let config = json!({"toolboxes": toolboxes});
    write("script.json", &script)?;
    write("config.json", &config)
}

/// The workbench process; killed on drop if it is still running.
struct Workbench(Child);

impl Drop for Workbench {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// The workbench's stdin, shared by the writer, the killer and the control requests.
struct Input(Mutex<Option<BufWriter<ChildStdin>>>);

impl Input {
    fn lock(&self) -> MutexGuard<'_, Option<BufWriter<ChildStdin>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn write_line(&self, line: &str, flush: bool) -> io::Result<()> {
        let mut guard = self.lock();
        let out = guard.as_mut().ok_or(io::ErrorKind::BrokenPipe)?;
        out.write_all(line.as_bytes())?;
        out.write_all(b"\n")?;
        if flush {
            out.flush()?;
        }
        Ok(())
    }

    fn flush(&self) -> io::Result<()> {
        match self.lock().as_mut() {
            Some(out) => out.flush(),
            None => Ok(()),
        }
    }

    fn close(&self) {
        if let Some(mut out) = self.lock().take() {
            let _ = out.flush();
        }
    }
}

/// The reader's counts.
struct Tally {
    /// The longest wait for a first answer, and its call.
    slowest: (Duration, u64),
    /// Answers per call id.
    answers: Vec<u8>,
    answered: u64,
    ok: u64,
    wrong_id: u64,
    wrong_content: u64,
    is_error: u64,
    rpc_error: u64,
    duplicates: u64,
    unexpected: u64,
    samples: BTreeMap<&'static str, Vec<String>>,
    /// With `--hostile-neighbours`, one per [`Neighbour::ALL`]; else empty.
    neighbours: Vec<NeighbourCounts>,
}

impl Tally {
    /// Keeps `line` as an example of `kind`, unless there are enough or one
    /// with the same text (errors differ mostly by id).
    fn sample(&mut self, kind: &'static str, line: &Value) {
        let list = self.samples.entry(kind).or_default();
        let text = line["result"]["content"][0]["text"].as_str();
        let same = |s: &String| text.is_some_and(|t| s.contains(&Value::from(t).to_string()));
        if list.len() < SAMPLES && !list.iter().any(same) {
            let mut text = line.to_string();
            if text.len() > 400 {
                let mut cut = 400;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.truncate(cut);
                text.push_str("...");
            }
            list.push(text);
        }
    }

    /// Counts one answer to a call; true if it is the first for its id.
    fn on_call(&mut self, line: &Value, sent: u64, shared: &Shared, toolboxes: usize) -> bool {
        let Some(seq) = line["id"].as_u64().filter(|&s| s < sent) else {
            self.wrong_id += 1;
            self.sample("wrong id", line);
            return false;
        };
        let count = &mut self.answers[seq as usize];
        *count = count.saturating_add(1);
        if *count > 1 {
            self.duplicates += 1;
            self.sample("duplicate", line);
            return false;
        }
        self.answered += 1;
        let waited = shared.waited(seq);
        if waited > self.slowest.0 {
            self.slowest = (waited, seq);
        }
        let (toolbox, marker) = plan(seq, toolboxes);
        let result = &line["result"];
        let text = result["content"][0]["text"].as_str();
        if line.get("error").is_some() || !result.is_object() {
            self.rpc_error += 1;
            self.sample("rpc error", line);
        } else if result["isError"] == Value::Bool(true) {
            if names_other_toolbox(text.unwrap_or_default(), &toolbox_name(toolbox)) {
                self.wrong_content += 1;
                self.sample("isError naming another toolbox", line);
            } else {
                self.is_error += 1;
                self.sample("isError", line);
            }
        } else if text.is_some_and(|t| expected(t, seq, toolbox, marker)) {
            self.ok += 1;
        } else {
            self.wrong_content += 1;
            self.sample("wrong toolbox/content", line);
        }
        true
    }

    /// Counts one answer to a neighbour's call `n` (`None`: not a number).
    fn on_neighbour(&mut self, which: Neighbour, n: Option<u64>, line: &Value) {
        let counts = &mut self.neighbours[which as usize];
        let first = n
            .and_then(|n| counts.answers.get_mut(usize::try_from(n).ok()?))
            .map(|count| {
                *count = count.saturating_add(1);
                *count == 1
            });
        let result = &line["result"];
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        let kind = match first {
            None => {
                counts.wrong_id += 1;
                "neighbour wrong id"
            }
            Some(false) => {
                counts.duplicates += 1;
                "neighbour duplicate"
            }
            Some(true) if line.get("error").is_some() || !result.is_object() => {
                counts.answered += 1;
                counts.rpc_error += 1;
                "neighbour rpc error"
            }
            Some(true) if result["isError"] == Value::Bool(true) => {
                counts.answered += 1;
                if names_other_toolbox(text, which.toolbox()) {
                    counts.wrong_content += 1;
                    "neighbour isError naming another toolbox"
                } else {
                    counts.is_error += 1;
                    if text.contains("not reading its stdin") {
                        counts.not_reading += 1;
                    } else if text.contains("timed out") {
                        counts.timed_out += 1;
                    }
                    which.sample_kind()
                }
            }
            Some(true) => {
                counts.answered += 1;
                if n.is_some_and(|n| which.expected(text, n)) {
                    counts.ok += 1;
                    return;
                }
                counts.wrong_content += 1;
                "neighbour wrong toolbox/content"
            }
        };
        self.sample(kind, line);
    }
}

/// Whether `text` is the answer call `seq` must get.
fn expected(text: &str, seq: u64, toolbox: usize, marker: bool) -> bool {
    let name = toolbox_name(toolbox);
    if marker {
        return text == format!("MARKER={name}");
    }
    text.strip_prefix("echo ")
        .and_then(|args| serde_json::from_str::<Value>(args).ok())
        .is_some_and(|args| args == json!({"seq": seq, "toolbox": name}))
}

/// Whether an error text mentions, in quotes, a toolbox of the run (`'tbJ'`
/// or a neighbour's) other than `own`.
fn names_other_toolbox(text: &str, own: &str) -> bool {
    let is_toolbox = |name: &str| {
        name.strip_prefix("tb")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            || Neighbour::ALL.iter().any(|nb| nb.toolbox() == name)
    };
    text.match_indices('\'').any(|(at, _)| {
        let rest = &text[at + 1..];
        rest.find('\'')
            .is_some_and(|end| rest[..end] != *own && is_toolbox(&rest[..end]))
    })
}

/// What the reader and writer share.
struct Shared {
    /// Calls written so far; a call counts before its line is written.
    sent: AtomicU64,
    /// When each call was written, in microseconds since `epoch`.
    sent_at: Vec<AtomicU32>,
    epoch: Instant,
    tally: Mutex<Tally>,
}

impl Shared {
    fn tally(&self) -> MutexGuard<'_, Tally> {
        self.tally.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn micros(&self) -> u32 {
        u32::try_from(self.epoch.elapsed().as_micros()).unwrap_or(u32::MAX)
    }

    /// How long ago call `seq` was written.
    fn waited(&self, seq: u64) -> Duration {
        let at = self.sent_at[seq as usize].load(Ordering::Relaxed);
        Duration::from_micros(u64::from(self.micros().saturating_sub(at)))
    }
}

/// Reads every line the workbench writes: call answers are counted (and give
/// their permit back), so are the neighbours' (with `hostile`), other
/// string-id answers go to `control`.
fn read_stdout(
    stdout: ChildStdout,
    shared: &Shared,
    toolboxes: usize,
    hostile: bool,
    control: Sender<Value>,
    permits: SyncSender<()>,
) {
    for line in BufReader::with_capacity(1 << 16, stdout).split(b'\n') {
        let Ok(line) = line else { break };
        let value: Value = match serde_json::from_slice(&line) {
            Ok(v) => v,
            Err(_) => {
                let text = String::from_utf8_lossy(&line).into_owned();
                let mut tally = shared.tally();
                tally.unexpected += 1;
                tally.sample("not JSON", &Value::String(text));
                continue;
            }
        };
        let neighbour = value["id"].as_str().and_then(Neighbour::parse_id);
        if let Some((which, n)) = neighbour.filter(|_| hostile) {
            shared.tally().on_neighbour(which, n, &value);
            continue;
        }
        match &value["id"] {
            Value::Number(_) => {
                let sent = shared.sent.load(Ordering::SeqCst);
                if shared.tally().on_call(&value, sent, shared, toolboxes) {
                    let _ = permits.try_send(());
                }
            }
            Value::String(_) => {
                let _ = control.send(value);
            }
            _ => {
                let mut tally = shared.tally();
                tally.unexpected += 1;
                tally.sample("unexpected line", &value);
            }
        }
    }
}

/// Requests with string ids, answered through the reader.
struct Control {
    input: Arc<Input>,
    rx: Receiver<Value>,
    /// Answers that arrived while another was awaited.
    stash: HashMap<String, Value>,
    seen: HashSet<String>,
    duplicates: u64,
    samples: Vec<String>,
}

impl Control {
    fn send(&self, id: &str, method: &str, params: Value) -> Result<(), String> {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.input
            .write_line(&line.to_string(), true)
            .map_err(|e| format!("cannot write {method} to the workbench: {e}"))
    }

    fn wait(&mut self, id: &str) -> Result<Value, String> {
        if let Some(v) = self.stash.remove(id) {
            return Ok(v);
        }
        let deadline = Instant::now() + CONTROL_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(v) => {
                    let got = v["id"].as_str().unwrap_or_default().to_string();
                    if !self.seen.insert(got.clone()) {
                        self.duplicates += 1;
                        self.samples.push(v.to_string());
                    } else if got == id {
                        return Ok(v);
                    } else {
                        self.stash.insert(got, v);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!("no answer to {id} within {CONTROL_TIMEOUT:?}"))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(format!("the workbench closed stdout before answering {id}"))
                }
            }
        }
    }

    fn request(&mut self, id: &str, method: &str, params: Value) -> Result<Value, String> {
        self.send(id, method, params)?;
        self.wait(id)
    }

    /// After the reader ended: answers nobody asked for, and late duplicates.
    fn finish(&mut self) -> (u64, u64) {
        let mut unexpected = self.stash.len() as u64;
        self.samples
            .extend(self.stash.values().map(ToString::to_string));
        while let Ok(v) = self.rx.try_recv() {
            let got = v["id"].as_str().unwrap_or_default().to_string();
            if self.seen.insert(got) {
                unexpected += 1;
            } else {
                self.duplicates += 1;
            }
            self.samples.push(v.to_string());
        }
        (self.duplicates, unexpected)
    }
}

fn is_error(answer: &Value) -> bool {
    answer["result"]["isError"] == Value::Bool(true) || answer.get("error").is_some()
}

fn answer_text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

/// Opens these toolboxes (all requests first, so they run in parallel);
/// returns one message per toolbox that did not open with its server running.
fn open_all(control: &mut Control, names: &[String], prefix: &str) -> Result<Vec<String>, String> {
    for (i, name) in names.iter().enumerate() {
        let params = json!({"name": "open_toolbox", "arguments": {"toolbox_name": name}});
        control.send(&format!("{prefix}-open-{i}"), "tools/call", params)?;
    }
    let mut failures = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let answer = control.wait(&format!("{prefix}-open-{i}"))?;
        let opened: Option<Value> = serde_json::from_str(answer_text(&answer)).ok();
        let connected = opened.as_ref().map(|o| o["servers_connected"].clone());
        if is_error(&answer) || connected != Some(json!(1)) {
            failures.push(format!("open {name}: {answer}"));
        }
    }
    Ok(failures)
}

/// The final round: every normal toolbox re-opened, then one echo and one
/// marker call each.
fn final_round(control: &mut Control, toolboxes: usize) -> Result<Vec<String>, String> {
    let names: Vec<String> = (0..toolboxes).map(toolbox_name).collect();
    let mut failures = open_all(control, &names, "final")?;
    for i in 0..toolboxes {
        let name = toolbox_name(i);
        let args = json!({"final": i, "toolbox": name});
        control.send(
            &format!("final-echo-{i}"),
            "tools/call",
            use_tool_params(&name, "echo", args),
        )?;
        control.send(
            &format!("final-marker-{i}"),
            "tools/call",
            use_tool_params(&name, "marker", json!({})),
        )?;
    }
    for i in 0..toolboxes {
        let name = toolbox_name(i);
        let echo = control.wait(&format!("final-echo-{i}"))?;
        let echoed = answer_text(&echo)
            .strip_prefix("echo ")
            .and_then(|a| serde_json::from_str::<Value>(a).ok());
        if is_error(&echo) || echoed != Some(json!({"final": i, "toolbox": name})) {
            failures.push(format!("echo {name}: {echo}"));
        }
        let marker = control.wait(&format!("final-marker-{i}"))?;
        if is_error(&marker) || answer_text(&marker) != format!("MARKER={name}") {
            failures.push(format!("marker {name}: {marker}"));
        }
    }
    Ok(failures)
}

/// Processes whose working directory is inside `dir`: (pid, command line).
pub fn processes_in(dir: &Path) -> Vec<(u32, String)> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let cwd = fs::read_link(e.path().join("cwd")).ok()?;
            if !cwd.starts_with(dir) {
                return None;
            }
            let cmdline = fs::read(e.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            Some((pid, cmdline.trim().to_string()))
        })
        .collect()
}

/// xorshift64*: enough randomness for picking victims and pauses.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
}

/// What the killer did.
#[derive(Default)]
struct Storm {
    kills: u64,
    /// The ids of the opens and closes sent.
    request_ids: Vec<String>,
}

/// Kills a random fake server every so often until `stop` (or the storm's
/// limit); after about three kills in eight it also opens a random toolbox, and
/// after one in eight it closes one.
fn storm(
    opts: &Options,
    dir: &Path,
    workbench_pid: u32,
    input: &Input,
    stop: &AtomicBool,
) -> Storm {
    let mut rng = Rng(opts.seed | 1);
    let mut done = Storm::default();
    let began = Instant::now();
    let (lo, hi) = opts.kill_every_ms;
    'storm: loop {
        let until = Instant::now() + Duration::from_millis(rng.range(lo, hi));
        while Instant::now() < until {
            let over = opts.storm.is_some_and(|limit| began.elapsed() >= limit);
            if stop.load(Ordering::SeqCst) || over {
                break 'storm;
            }
            thread::sleep(
                until
                    .saturating_duration_since(Instant::now())
                    .min(Duration::from_millis(5)),
            );
        }
        let victims: Vec<u32> = processes_in(dir)
            .into_iter()
            .filter(|(pid, cmd)| *pid != workbench_pid && cmd.contains("mcp-fake-server"))
            .map(|(pid, _)| pid)
            .collect();
        if !victims.is_empty() {
            let pid = victims[(rng.next() % victims.len() as u64) as usize];
            let killed = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if killed {
                done.kills += 1;
            }
        }
        let tool = match rng.next() % 8 {
            0..=2 => "open_toolbox",
            3 => "close_toolbox",
            _ => continue,
        };
        let toolbox = toolbox_name((rng.next() % opts.toolboxes as u64) as usize);
        let id = format!("storm-{}", done.request_ids.len());
        let line = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": {"toolbox_name": toolbox}}});
        if input.write_line(&line.to_string(), true).is_ok() {
            done.request_ids.push(id);
        }
    }
    done
}

/// Calls every neighbour once per `NEIGHBOUR_EVERY` until `stop`; returns
/// why it stopped early, if it did.
fn call_neighbours(input: &Input, shared: &Shared, stop: &AtomicBool) -> String {
    let pad = "x".repeat(STALL_PAD);
    let mut next = Instant::now();
    for n in 0.. {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        for which in Neighbour::ALL {
            let (tool, arguments) = which.call(n, &pad);
            let line = json!({"jsonrpc": "2.0", "id": format!("{}{n}", which.id_prefix()),
                "method": "tools/call", "params": use_tool_params(which.toolbox(), tool, arguments)});
            // Counted as sent before it is written, as the load's calls are.
            shared.tally().neighbours[which as usize].answers.push(0);
            if let Err(e) = input.write_line(&line.to_string(), true) {
                shared.tally().neighbours[which as usize].answers.pop();
                return format!("cannot write to the workbench: {e}");
            }
        }
        next += NEIGHBOUR_EVERY;
        thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    String::new()
}

/// Sends the calls, each after taking a permit; stops early if no permit comes
/// back within the grace period (too many calls lost) or stdin breaks.
fn write_calls(opts: &Options, input: &Input, shared: &Shared, permits: &Receiver<()>) -> String {
    let names: Vec<String> = (0..opts.toolboxes).map(toolbox_name).collect();
    for seq in 0..opts.calls {
        match permits.try_recv() {
            Ok(()) => {}
            Err(TryRecvError::Empty) => {
                if let Err(e) = input.flush() {
                    return format!("cannot write to the workbench: {e}");
                }
                if permits.recv_timeout(opts.grace).is_err() {
                    return format!(
                        "stopped after {seq} calls: no answer for {:?} with {} in flight",
                        opts.grace, opts.in_flight
                    );
                }
            }
            Err(TryRecvError::Disconnected) => return "the reader ended".into(),
        }
        let (toolbox, marker) = plan(seq, opts.toolboxes);
        let tool = if marker { "marker" } else { "echo" };
        let name = &names[toolbox];
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{seq},"method":"tools/call","params":{{"name":"use_tool","arguments":{{"tool":{{"toolbox":"{name}","server":"{SERVER}","tool":"{tool}"}},"arguments":{{"seq":{seq},"toolbox":"{name}"}}}}}}}}"#
        );
        shared.sent_at[seq as usize].store(shared.micros(), Ordering::Relaxed);
        shared.sent.store(seq + 1, Ordering::SeqCst);
        if let Err(e) = input.write_line(&line, false) {
            shared.sent.store(seq, Ordering::SeqCst);
            return format!("cannot write to the workbench: {e}");
        }
    }
    match input.flush() {
        Ok(()) => String::new(),
        Err(e) => format!("cannot write to the workbench: {e}"),
    }
}

fn run_in(opts: &Options, dir: &Path) -> Result<Report, String> {
    write_files(opts, dir)?;
    // Absolute, since the workbench runs in `dir`.
    let program = opts
        .workbench
        .canonicalize()
        .map_err(|e| format!("workbench {}: {e}", opts.workbench.display()))?;
    let mut child = Command::new(&program)
        .args(["--config", "config.json"])
        .current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("RUST_LOG", &opts.log)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", opts.workbench.display()))?;
    let workbench_pid = child.id();
    let (stdin, stdout, stderr) =
        match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
            (Some(i), Some(o), Some(e)) => (i, o, e),
            _ => unreachable!("all three pipes were requested"),
        };
    let mut workbench = Workbench(child);
    let input = Arc::new(Input(Mutex::new(Some(BufWriter::with_capacity(
        1 << 16,
        stdin,
    )))));

    let stderr_tail = thread::spawn(move || {
        let mut tail = std::collections::VecDeque::new();
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tail.len() == 30 {
                tail.pop_front();
            }
            tail.push_back(line);
        }
        Vec::from(tail)
    });

    let shared = Arc::new(Shared {
        sent: AtomicU64::new(0),
        sent_at: (0..opts.calls).map(|_| AtomicU32::new(0)).collect(),
        epoch: Instant::now(),
        tally: Mutex::new(Tally {
            slowest: (Duration::ZERO, 0),
            answers: vec![0; opts.calls as usize],
            answered: 0,
            ok: 0,
            wrong_id: 0,
            wrong_content: 0,
            is_error: 0,
            rpc_error: 0,
            duplicates: 0,
            unexpected: 0,
            samples: BTreeMap::new(),
            neighbours: if opts.hostile_neighbours {
                Neighbour::ALL.map(NeighbourCounts::new).into()
            } else {
                Vec::new()
            },
        }),
    });
    let (permit_tx, permit_rx) = mpsc::sync_channel::<()>(opts.in_flight);
    for _ in 0..opts.in_flight {
        let _ = permit_tx.send(());
    }
    let (control_tx, control_rx) = mpsc::channel();
    let reader = {
        let shared = Arc::clone(&shared);
        let (toolboxes, hostile) = (opts.toolboxes, opts.hostile_neighbours);
        thread::spawn(move || {
            read_stdout(stdout, &shared, toolboxes, hostile, control_tx, permit_tx)
        })
    };
    let mut control = Control {
        input: Arc::clone(&input),
        rx: control_rx,
        stash: HashMap::new(),
        seen: HashSet::new(),
        duplicates: 0,
        samples: Vec::new(),
    };

    // Setup: initialize and open every toolbox.
    let init = control.request(
        "init",
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "load", "version": "0"}}),
    )?;
    if init.get("result").is_none() {
        return Err(format!("initialize failed: {init}"));
    }
    input
        .write_line(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            true,
        )
        .map_err(|e| e.to_string())?;
    let mut names: Vec<String> = (0..opts.toolboxes).map(toolbox_name).collect();
    if opts.hostile_neighbours {
        names.extend(Neighbour::ALL.map(|nb| nb.toolbox().to_string()));
    }
    let failures = open_all(&mut control, &names, "setup")?;
    if !failures.is_empty() {
        return Err(format!("setup failed:\n{}", failures.join("\n")));
    }

    // The neighbours, called from before the load until its end: the load
    // starts once the workbench's queue for the stalling child is full (a
    // call failed fast) and the crashing child has died once.
    let neighbours_stop = Arc::new(AtomicBool::new(false));
    let neighbours = opts.hostile_neighbours.then(|| {
        let (input, shared, stop) = (
            Arc::clone(&input),
            Arc::clone(&shared),
            Arc::clone(&neighbours_stop),
        );
        thread::spawn(move || call_neighbours(&input, &shared, &stop))
    });
    if let Some(caller) = &neighbours {
        let deadline = Instant::now() + CONTROL_TIMEOUT;
        let warm = || {
            let tally = shared.tally();
            let stalling = &tally.neighbours[Neighbour::Stalling as usize];
            let crashing = &tally.neighbours[Neighbour::Crashing as usize];
            stalling.not_reading > 0 && crashing.answered > 0
        };
        while !warm() && !caller.is_finished() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(1));
        }
        opts.say(&format!(
            "neighbours {}",
            if warm() {
                "stalling and crashing"
            } else {
                "not hostile yet (going on)"
            }
        ));
    }
    opts.say(&format!(
        "{} toolboxes open; sending {} calls, {} in flight{}",
        opts.toolboxes,
        opts.calls,
        opts.in_flight,
        if opts.kill_children {
            ", killing children"
        } else {
            ""
        }
    ));

    // The load, and the storm alongside.
    let began = Instant::now();
    let sending_done = Arc::new(AtomicBool::new(false));
    let killer = opts.kill_children.then(|| {
        let (opts, dir, input, stop) = (
            opts.clone(),
            dir.to_path_buf(),
            Arc::clone(&input),
            Arc::clone(&sending_done),
        );
        thread::spawn(move || storm(&opts, &dir, workbench_pid, &input, &stop))
    });
    let writer = {
        let (opts, input, shared, done) = (
            opts.clone(),
            Arc::clone(&input),
            Arc::clone(&shared),
            Arc::clone(&sending_done),
        );
        thread::spawn(move || {
            let outcome = write_calls(&opts, &input, &shared, &permit_rx);
            done.store(true, Ordering::SeqCst);
            outcome
        })
    };
    let (mut last_answered, mut last_change) = (0, Instant::now());
    let mut next_progress = Instant::now() + Duration::from_secs(5);
    let wall = loop {
        let answered = shared.tally().answered;
        let sent = shared.sent.load(Ordering::SeqCst);
        if Instant::now() >= next_progress {
            next_progress += Duration::from_secs(5);
            opts.say(&format!(
                "{:.0} s: {sent} sent, {answered} answered",
                began.elapsed().as_secs_f64()
            ));
        }
        if writer.is_finished() && answered >= sent {
            break began.elapsed();
        }
        if answered != last_answered {
            (last_answered, last_change) = (answered, Instant::now());
        } else if writer.is_finished() && last_change.elapsed() >= opts.grace {
            break began.elapsed();
        }
        thread::sleep(Duration::from_millis(1));
    };
    let writer_note = writer
        .join()
        .unwrap_or_else(|_| "the writer panicked".into());
    sending_done.store(true, Ordering::SeqCst);
    let storm = killer
        .map(|k| k.join().unwrap_or_default())
        .unwrap_or_default();
    opts.say(&format!(
        "load phase over after {:.3} s",
        wall.as_secs_f64()
    ));

    // Every neighbour call gets its answer (or NEIGHBOUR_GRACE of silence).
    neighbours_stop.store(true, Ordering::SeqCst);
    let neighbour_note = neighbours
        .map(|n| n.join().unwrap_or_else(|_| "the caller panicked".into()))
        .unwrap_or_default();
    let (mut last_answered, mut last_change) = (0, Instant::now());
    loop {
        let (sent, answered) = shared.tally().neighbours.iter().fold((0, 0), |(s, a), nb| {
            (s + nb.answers.len() as u64, a + nb.answered)
        });
        if answered >= sent {
            break;
        }
        if answered != last_answered {
            (last_answered, last_change) = (answered, Instant::now());
        } else if last_change.elapsed() >= NEIGHBOUR_GRACE {
            break;
        }
        thread::sleep(Duration::from_millis(5));
    }
    if opts.hostile_neighbours {
        opts.say("neighbour calls over");
    }

    // Every storm open gets its answer, then the final round.
    let mut storm_requests_answered = 0;
    for id in &storm.request_ids {
        match control.wait(id) {
            Ok(_) => storm_requests_answered += 1,
            Err(e) => opts.say(&e),
        }
    }
    let final_failures = final_round(&mut control, opts.toolboxes).unwrap_or_else(|e| vec![e]);

    // Shutdown.
    input.close();
    let deadline = Instant::now() + EXIT_TIMEOUT;
    let exit = loop {
        match workbench.0.try_wait() {
            Ok(Some(status)) => {
                break match status.code() {
                    Some(code) => format!("exit status {code}"),
                    None => format!("{status}"),
                }
            }
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(10)),
            Ok(None) => {
                let _ = workbench.0.kill();
                let _ = workbench.0.wait();
                break format!("no exit within {EXIT_TIMEOUT:?} (killed)");
            }
            Err(e) => break format!("wait failed: {e}"),
        }
    };
    let _ = reader.join();
    let stderr_tail = stderr_tail.join().unwrap_or_default();
    let (control_duplicates, control_unexpected) = control.finish();
    let leftover_deadline = Instant::now() + Duration::from_secs(1);
    let leftovers = loop {
        let left = processes_in(dir);
        if left.is_empty() || Instant::now() >= leftover_deadline {
            break left;
        }
        thread::sleep(Duration::from_millis(20));
    };

    let mut tally = shared.tally();
    let sent = shared.sent.load(Ordering::SeqCst);
    let neighbours = std::mem::take(&mut tally.neighbours)
        .into_iter()
        .map(|mut nb| {
            nb.sent = std::mem::take(&mut nb.answers).len() as u64;
            nb.lost = nb.sent - nb.answered;
            let pids = fs::read_to_string(dir.join(format!("{}.pids", nb.toolbox)));
            nb.starts = pids.map_or(0, |p| p.lines().count() as u64);
            nb
        })
        .collect();
    if !control.samples.is_empty() {
        let list = tally.samples.entry("control").or_default();
        list.extend(control.samples.iter().take(SAMPLES).cloned());
    }
    Ok(Report {
        kill_mode: opts.kill_children,
        calls: opts.calls,
        in_flight: opts.in_flight,
        toolboxes: opts.toolboxes,
        seed: opts.seed,
        sent,
        writer_note,
        answered: tally.answered,
        ok: tally.ok,
        wrong_id: tally.wrong_id,
        wrong_content: tally.wrong_content,
        is_error: tally.is_error,
        rpc_error: tally.rpc_error,
        lost: sent - tally.answered,
        duplicates: tally.duplicates + control_duplicates,
        unexpected: tally.unexpected + control_unexpected,
        wall,
        slowest: tally.slowest,
        kills: storm.kills,
        storm_requests: storm.request_ids.len() as u64,
        storm_requests_answered,
        final_round: final_failures,
        neighbours,
        neighbour_note,
        exit,
        leftovers: leftovers
            .into_iter()
            .map(|(pid, cmd)| format!("{pid} {cmd}"))
            .collect(),
        samples: std::mem::take(&mut tally.samples),
        stderr_tail,
    })
}

fn main() {
    let opts = match Options::from_args(std::env::args().skip(1)) {
        Ok(Some(opts)) => opts,
        Ok(None) => {
            println!("{USAGE}");
            return;
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    match run(&opts) {
        Ok(report) => {
            report.print();
            if !report.problems().is_empty() {
                std::process::exit(1);
            }
        }
        Err(e) => {
            eprintln!("load: {e}");
            std::process::exit(1);
        }
    }
}
