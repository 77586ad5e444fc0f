//! `fgvt localize` on every fixture: load, explore, judge, label, find the CDRS and build the
//! report (what `fgvt localize TEST` does before rendering). `cargo bench --bench localize`.

use std::path::PathBuf;

const FIXTURES: &[&str] = &[
    "counter1/failing.json",
    "counter1/fixed.json",
    "counter2/failing.json",
    "counter2/fixed.json",
    "linked_list/failing.json",
    "linked_list/fixed.json",
    "lock_counter/correct.json",
    "lock_free_list/failing.json",
    "lock_free_list/fixed.json",
    "lock_set/correct.json",
    "optimistic_queue/failing.json",
    "optimistic_queue/fixed.json",
    "pair_snapshot/failing.json",
    "pair_snapshot/fixed.json",
    "simple_list/failing.json",
    "simple_list/fixed.json",
    "snark/failing.json",
    "snark/fixed.json",
    "try_take_queue/failing.json",
    "try_take_queue/fixed.json",
];

fn main() {
    divan::main();
}

fn path(fixture: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(fixture)
}

fn limits() -> fgvt::cli::LimitArgs {
    fgvt::cli::LimitArgs {
        max_states: 2_000_000,
        max_steps: 1_000,
        timeout: None,
        no_memo: false,
    }
}

/// The whole command: the test is loaded (parsed, compiled) each time.
#[divan::bench(args = FIXTURES)]
fn localize(bencher: divan::Bencher, fixture: &str) {
    let path = path(fixture);
    let limits = limits();
    let pattern = fgvt::cli::localize::parse_pattern(None).expect("the default pattern");
    bencher.bench_local(|| {
        let test = fgvt::testcase::load(&path).expect("fixture loads");
        let localized =
            fgvt::cli::localize::localize_with(&test, &limits, 3, &pattern).expect("localizes");
        localized.report.cdrs.len()
    });
}
