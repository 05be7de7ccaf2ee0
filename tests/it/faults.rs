//! Fault injection: child servers are killed (SIGKILL) at random moments while
//! pipelined `use_tool` calls run through the workbench. A call may then fail
//! with an `isError` result, but every call gets exactly one answer, with its
//! own id; none is lost or answered twice, no answer comes from another
//! toolbox; and afterwards every toolbox re-opens and answers.
//!
//! The driver is the `load` example (`examples/load.rs`, also run by
//! `scripts/load-test`), run as a program: this test has cargo build it
//! (a no-op after `cargo test`, which builds the examples; `cargo test --test
//! it` does not) and takes its path from cargo's own report, so no target
//! folder, profile or platform is guessed and a stale build is never run.
//! The driver exits 0 only when its report holds no problem: every call
//! sent and answered once, no wrong id or toolbox, every storm open and
//! close answered, at least one kill, the final round passed, the
//! workbench's exit 0 and no process left.
//!
//! Nothing here asserts a time; the only bounds are the driver's generous
//! timeouts, which turn a hang into a failure.

use crate::harness::{example, FAKE, WORKBENCH};
use std::process::{Command, Stdio};

/// The number after `label ` in the driver's report, e.g. `sent 3000`.
fn count(report: &str, label: &str) -> u64 {
    let at = report
        .find(&format!("{label} "))
        .unwrap_or_else(|| panic!("no {label:?} in the report:\n{report}"));
    let rest = &report[at + label.len() + 1..];
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().unwrap()
}

#[test]
fn killed_children_fail_calls_but_never_lose_or_duplicate_one() {
    let calls = 3_000;
    let out = Command::new(example("load"))
        .args(["--workbench", WORKBENCH, "--fake", FAKE])
        .args(["--toolboxes", "3", "--calls", &calls.to_string()])
        .args(["--in-flight", "16", "--kill-children"])
        .args(["--kill-every", "50-150"])
        // Calls that take a little while, so that kills find some in flight
        // and the sending phase outlasts the first kills.
        .args(["--call-delay-ms", "5", "--storm-ms", "3000"])
        // Calls wait for restarts, which back off up to 5 s.
        .args(["--grace-ms", "30000"])
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    println!("{report}");
    // The report's own checks: no problem line, and exit 0.
    assert!(!report.contains("PROBLEM:"), "{report}");
    assert_eq!(out.status.code(), Some(0), "{report}");
    // The same counts, read back.
    assert!(count(&report, "kills") > 0, "the storm killed no child");
    assert_eq!(count(&report, "sent"), calls);
    assert_eq!(count(&report, "answered"), calls, "every call is answered");
    for (label, what) in [
        ("lost", "lost calls"),
        ("duplicates", "calls answered twice"),
        ("wrong id", "answers to ids never sent"),
        ("wrong toolbox/content", "answers from another toolbox"),
        ("rpc errors", "JSON-RPC errors"),
        ("unexpected", "stray lines"),
    ] {
        assert_eq!(count(&report, label), 0, "{what}");
    }
    let storm = count(&report, "storm opens/closes");
    assert_eq!(
        count(&report, "(answered"),
        storm,
        "every open and close sent during the storm is answered"
    );
    assert!(
        report.contains("final round: every toolbox re-opened and answered"),
        "recovery: {report}"
    );
    assert!(
        report.contains("workbench: exit status 0; processes left: none"),
        "{report}"
    );
}
