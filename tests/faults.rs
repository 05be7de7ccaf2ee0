//! Fault injection: child servers are killed (SIGKILL) at random moments while
//! pipelined `use_tool` calls run through the workbench. A call may then fail
//! with an `isError` result, but every call gets exactly one answer, with its
//! own id; none is lost or answered twice, no answer comes from another
//! toolbox; and afterwards every toolbox re-opens and answers.
//!
//! The driver is `examples/load.rs` (also run by `scripts/load-test`), included
//! here as a module with `#[path]`: integration tests cannot link an example,
//! and running the example's binary would depend on cargo having built it
//! (`cargo test --test faults` does not). One copy of the code serves both.
//!
//! Nothing here asserts a time; the only bounds are the driver's generous
//! timeouts, which turn a hang into a failure.

#[path = "../examples/load.rs"]
#[allow(dead_code)]
mod load;

use std::time::Duration;

#[test]
fn killed_children_fail_calls_but_never_lose_or_duplicate_one() {
    let opts = load::Options {
        toolboxes: 3,
        calls: 3_000,
        in_flight: 16,
        kill_children: true,
        kill_every_ms: (50, 150),
        // Calls that take a little while, so that kills find some in flight
        // and the sending phase outlasts the first kills.
        call_delay_ms: 5,
        storm: Some(Duration::from_secs(3)),
        grace: load::KILL_GRACE,
        ..load::Options::new(
            env!("CARGO_BIN_EXE_mcp-workbench"),
            env!("CARGO_BIN_EXE_mcp-fake-server"),
        )
    };
    let report = load::run(&opts).expect("the workbench starts and opens every toolbox");
    report.print();
    assert!(report.kills > 0, "the storm killed no child");
    assert_eq!(report.sent, opts.calls, "{}", report.writer_note);
    assert_eq!(report.answered, report.sent, "every call is answered");
    assert_eq!(report.lost, 0, "lost calls");
    assert_eq!(report.duplicates, 0, "calls answered twice");
    assert_eq!(report.wrong_id, 0, "answers to ids never sent");
    assert_eq!(report.wrong_content, 0, "answers from another toolbox");
    assert_eq!(
        report.storm_requests_answered, report.storm_requests,
        "every open and close sent during the storm is answered"
    );
    assert!(
        report.final_round.is_empty(),
        "recovery: {:#?}",
        report.final_round
    );
    // The rest: no JSON-RPC errors or stray lines, exit 0, nothing left behind.
    let problems = report.problems();
    assert!(problems.is_empty(), "{problems:#?}");
}
