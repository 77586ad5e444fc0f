//! Issue 14: reports and commands a user can act on. Each test runs the binary as a user would,
//! following what fgvt itself prints.

mod common;

use common::{fgvt, localize, root, run};

/// The command a localize report prints to replay its witness, as argument words.
fn replay_command(report: &str) -> Vec<String> {
    let line = report
        .lines()
        .find(|l| l.contains("fgvt explore") && l.contains("--schedule"))
        .expect("the report prints a replay command");
    let command = &line[line.find("fgvt explore").unwrap()..];
    command
        .split_whitespace()
        .skip(1)
        .map(|w| w.trim_matches('`').to_string())
        .filter(|w| !w.is_empty())
        .collect()
}

#[test]
fn the_printed_replay_command_gives_the_leafs_verdict_and_explanation() {
    let (code, report) = localize(&["fixtures/pair_snapshot/failing.json"]);
    assert_eq!(code, 1);
    let args = replay_command(&report);
    let (code, stdout, _) = run(fgvt().current_dir(root()).args(&args));
    assert_eq!(code, 1, "a failing run exits 1: {stdout}");
    assert!(stdout.contains("verdict: not linearizable"), "{stdout}");
    assert!(stdout.contains("read() returned (1, 2)"), "{stdout}");
}

#[test]
fn replaying_a_passing_run_says_so_and_exits_0() {
    // T0 runs all its writes before T1 reads: a serial run, linearizable.
    let (code, stdout, _) = run(fgvt().current_dir(root()).args([
        "explore",
        "fixtures/pair_snapshot/failing.json",
        "--schedule",
        "0,0,0,0,1,1,1",
    ]));
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("verdict: linearizable"), "{stdout}");
}
