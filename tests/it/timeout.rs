//! Limits as a user meets them (`--timeout`, `--max-memory`): a run whose tree is far too big
//! stops, partial, with exit code 3 and the limit named. How close to the limit it stops is
//! measured by hand and in benchmarks, not here: timed assertions fail on a loaded machine.

use crate::common;

/// A `linked_list` test with four threads: ~10^14 interleavings, well over a million distinct
/// states (the three-thread one with 3.7 billion interleavings explores in half a second).
const BIG_TEST: &str = r#"{"object": "linked_list.fgv#LinkedList", "spec": "self",
  "init": ["add(1)", "add(5)"],
  "threads": [["remove(1)", "add(9)", "add(3)"], ["size()", "add(4)", "remove(9)"],
              ["remove(5)", "size()", "add(7)"], ["add(2)", "remove(4)"]]}"#;

#[test]
fn explore_and_localize_stop_at_the_timeout_with_a_partial_result() {
    let model = std::fs::read_to_string(common::fixture("linked_list/linked_list.fgv")).unwrap();
    let dir = common::workdir(&[("linked_list.fgv", &model), ("big.json", BIG_TEST)]);
    let timeout = 2.0;
    // One command at a time: the two must not compete for the cores.
    for command in ["explore", "localize"] {
        let (code, stdout, _) = common::run(common::fgvt().current_dir(dir.path()).args([
            command,
            "big.json",
            "--timeout",
            &timeout.to_string(),
        ]));
        assert_eq!(code, 3, "{command}: a partial result\n{stdout}");
        assert!(
            stdout.contains("timeout"),
            "{command} names the limit:\n{stdout}"
        );
    }
}

/// Issue 11: a run that would outgrow memory stops at `--max-memory` with a partial result
/// marked as such (exit 3), instead of being killed by the kernel.
#[test]
fn the_memory_budget_ends_a_run_with_a_partial_result() {
    let model =
        std::fs::read_to_string(common::fixture("lock_free_list/lock_free_list.fgv")).unwrap();
    let test = r#"{
  "object": "lock_free_list.fgv#FixedLockFreeList",
  "init": ["add(1)"],
  "threads": [["add(2)", "remove(1)", "contains(2)"], ["remove(1)", "add(1)", "add(3)"],
              ["contains(1)", "remove(2)", "remove(3)"]]
}"#;
    let dir = common::workdir(&[("lock_free_list.fgv", &model), ("test.json", test)]);
    let (code, out, err) = common::run(
        common::fgvt()
            .arg("localize")
            .arg(dir.path().join("test.json"))
            .args(["--max-memory", "24M", "--format", "json"]),
    );
    assert_eq!(code, 3, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["partial"], "memory", "{out}");
    let notes = v["notes"].to_string();
    assert!(notes.contains("--max-memory"), "{notes}");
}

/// Issue 27: the timeout cuts exploration, not judging: every distinct history reached before
/// the cut has its verdict (unless the cut fell inside the checker's own search), and the
/// leaves without one are cut leaves, said as such.
#[test]
fn a_timeout_leaves_no_leaf_it_reached_unchecked() {
    let model = std::fs::read_to_string(common::fixture("linked_list/linked_list.fgv")).unwrap();
    let dir = common::workdir(&[("linked_list.fgv", &model), ("big.json", BIG_TEST)]);
    let (code, out, err) = common::run(common::fgvt().current_dir(dir.path()).args([
        "explore",
        "big.json",
        "--timeout",
        "2",
        "--format",
        "json",
    ]));
    assert_eq!(code, 3, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["partial"], "timeout", "{out}");
    let verdicts = &v["verdicts"];
    let count = |key: &str| verdicts[key].as_u64().unwrap();
    assert_eq!(
        count("unchecked"),
        0,
        "every history reached was checked: {verdicts}"
    );
    assert!(
        count("linearizable") + count("not_linearizable") + count("fault") > 0,
        "{verdicts}"
    );
    assert!(count("cut") > 0, "{verdicts}");
    assert_eq!(
        count("unknown"),
        count("cut") + count("bounded") + count("unchecked") + count("undecided"),
        "{verdicts}"
    );

    let (code, out, _) = common::run(common::fgvt().current_dir(dir.path()).args([
        "localize",
        "big.json",
        "--timeout",
        "2",
    ]));
    assert_eq!(code, 3, "{out}");
    assert!(!out.contains("bounded, or the checker timed out"), "{out}");
    assert!(!out.contains("never checked"), "{out}");
    assert!(
        out.contains("cut (exploration stopped at the --timeout limit before reaching them)"),
        "{out}"
    );
}

/// Issue 41: once a run has failed, the report comes within `--report-budget` seconds, with
/// the CDRS of the part explored, marked partial; `none` explores on (here, to a state limit).
#[test]
fn a_failing_run_is_reported_within_the_report_budget() {
    let model = std::fs::read_to_string(common::fixture("linked_list/linked_list.fgv")).unwrap();
    let dir = common::workdir(&[("linked_list.fgv", &model), ("big.json", BIG_TEST)]);
    let localize = |budget: &str| {
        common::run(common::fgvt().current_dir(dir.path()).args([
            "localize",
            "big.json",
            "--format",
            "json",
            "--max-states",
            "300000",
            "--report-budget",
            budget,
        ]))
    };
    // A budget short enough that no build explores to the state limit within it (a release
    // build explores this test's 300,000 states in under 0.2 s).
    let (code, out, err) = localize("0.02");
    assert_eq!(code, 3, "a partial result: {err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["partial"], "report-budget", "{out}");
    assert_eq!(v["verdict"], "not-linearizable");
    assert!(!v["cdrs"].as_array().unwrap().is_empty(), "{out}");
    assert!(v["notes"].to_string().contains("--report-budget"), "{out}");

    let (code, out, err) = localize("none");
    assert_eq!(code, 3, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["partial"], "max-states",
        "no budget: the state limit stops it"
    );

    let (code, _, err) = localize("soon");
    assert_eq!(code, 2);
    assert!(
        err.contains("--report-budget") && err.contains("none"),
        "{err}"
    );
}
