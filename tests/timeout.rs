//! `--timeout` as a user meets it: a run whose tree is far too big stops on time (within 10 %
//! of the limit, plus a little for starting the process), partial, with exit code 3.

mod common;

use std::time::{Duration, Instant};

/// A `linked_list` test with three threads: billions of interleavings, minutes to explore.
const BIG_TEST: &str = r#"{"object": "linked_list.fgv#LinkedList", "spec": "self",
  "init": ["add(1)", "add(5)"],
  "threads": [["remove(1)", "add(9)", "add(3)"], ["size()", "add(4)"], ["remove(5)", "size()"]]}"#;

#[test]
fn explore_and_localize_stop_within_the_timeout() {
    let model = std::fs::read_to_string(common::fixture("linked_list/linked_list.fgv")).unwrap();
    let dir = common::workdir(&[("linked_list.fgv", &model), ("big.json", BIG_TEST)]);
    let timeout = 2.0;
    // 10 % of the timeout, and a quarter second to start the process and load the test.
    let allowed = Duration::from_secs_f64(timeout * 1.1 + 0.25);
    // One command at a time: the two must not compete for the cores.
    for command in ["explore", "localize"] {
        let started = Instant::now();
        let (code, stdout, _) = common::run(common::fgvt().current_dir(dir.path()).args([
            command,
            "big.json",
            "--timeout",
            &timeout.to_string(),
        ]));
        let took = started.elapsed();
        assert_eq!(code, 3, "{command}: a partial result\n{stdout}");
        assert!(
            stdout.contains("timeout"),
            "{command} names the limit:\n{stdout}"
        );
        assert!(
            took <= allowed,
            "{command} --timeout {timeout} took {took:.2?} (allowed {allowed:.2?})"
        );
    }
}
