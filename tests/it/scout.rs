//! A budget that cuts the depth-first search before any run fails: fgvt looks for a failing
//! run with few preemptions and explores again taking it first, so the partial result still
//! shows the bug (issue 24's search order).

use crate::common;

/// The snark deque at 30 states: the depth-first search meets no failing run within them.
const ARGS: &[&str] = &["fixtures/snark/failing.json", "--max-states", "30"];

#[test]
fn a_cut_search_still_reports_a_short_failing_run() {
    let (code, stdout) = common::localize(ARGS);
    assert_eq!(code, 3, "partial, whatever it found:\n{stdout}");
    assert!(stdout.contains("NOT LINEARIZABLE (partial"), "{stdout}");
    assert!(stdout.contains("witness"), "with its witness:\n{stdout}");
    assert!(
        stdout.contains("a search of the runs with at most 3 preemptions found a failing one"),
        "says how it was found:\n{stdout}"
    );
}

#[test]
fn explore_says_so_in_its_json() {
    let (code, stdout, _) = common::run(
        common::fgvt()
            .args(["explore"])
            .args(ARGS)
            .args(["--format", "json"]),
    );
    assert_eq!(code, 3, "{stdout}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["scouted"], true);
    assert_eq!(json["partial"], "max-states");
    assert!(
        json["verdicts"]["not_linearizable"].as_u64().unwrap() > 0,
        "{json}"
    );
}
