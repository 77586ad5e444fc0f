//! `--timeout` as a user meets it: a run whose tree is far too big stops, partial, with exit
//! code 3 and the limit named. How close to the limit it stops is measured by hand and in
//! benchmarks, not here: timed assertions fail on a loaded machine.

mod common;

/// A `linked_list` test with three threads: billions of interleavings, minutes to explore.
const BIG_TEST: &str = r#"{"object": "linked_list.fgv#LinkedList", "spec": "self",
  "init": ["add(1)", "add(5)"],
  "threads": [["remove(1)", "add(9)", "add(3)"], ["size()", "add(4)"], ["remove(5)", "size()"]]}"#;

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
