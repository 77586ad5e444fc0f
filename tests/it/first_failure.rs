//! A long localization tells of its first failing run on stderr as soon as the exploration
//! meets it (issue 29), with a replay command that runs that very run, long before the report,
//! which comes once the whole tree is explored and labeled.

use crate::common;

use std::time::Instant;

const LONG: &str = "tests/data/first_failure/snark_three_threads.json";

#[test]
fn a_long_run_tells_its_first_failure_before_the_report() {
    let started = Instant::now();
    let (code, stdout, stderr) = common::run(common::fgvt().args(["localize", LONG]));
    let whole = started.elapsed();
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("NOT LINEARIZABLE"), "{stdout}");
    let line = (stderr.lines())
        .find(|l| l.starts_with("NOT LINEARIZABLE: a failing run, found after "))
        .unwrap_or_else(|| panic!("no early line: {stderr}"));
    // "found after 14.9ms (replay: fgvt explore FILE --schedule 0,0,1,…); exploring on …"
    let after = line
        .strip_prefix("NOT LINEARIZABLE: a failing run, found after ")
        .and_then(|rest| rest.split(" (").next())
        .unwrap();
    let found = parse_duration(after);
    assert!(
        found * 4 < whole,
        "told after {found:?}, the whole run took {whole:?}"
    );
    let replay = (line.split("(replay: fgvt ").nth(1))
        .and_then(|rest| rest.split(')').next())
        .unwrap();
    let args: Vec<&str> = replay.split(' ').collect();
    assert_eq!(&args[..3], ["explore", LONG, "--schedule"], "{replay}");
    // The run told of fails when replayed.
    let (code, out, err) = common::run(common::fgvt().args(&args));
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("not linearizable"), "{out}");
}

#[test]
fn a_quick_run_prints_only_its_report() {
    let (code, stdout, stderr) =
        common::run(common::fgvt().args(["localize", "fixtures/snark/failing.json"]));
    assert_eq!(code, 1, "{stdout}");
    assert_eq!(stderr, "");
}

/// `14.9ms`, `893.4µs`, `1.2s` as `{:.1?}` prints a duration.
fn parse_duration(text: &str) -> std::time::Duration {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap();
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().unwrap();
    let seconds = match unit {
        "ns" => number * 1e-9,
        "µs" => number * 1e-6,
        "ms" => number * 1e-3,
        "s" => number,
        other => panic!("unit {other}"),
    };
    std::time::Duration::from_secs_f64(seconds)
}
