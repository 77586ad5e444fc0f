//! `fgvt localize` on every fixture: load, explore, judge, label, find the CDRS and build the
//! report (what `fgvt localize TEST` does before rendering). `cargo bench --bench localize`.

use std::path::PathBuf;

use fgvt::pipeline::{self, Limits, LocalizeOptions};

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

/// The whole command: the test is loaded (parsed, compiled) each time.
#[divan::bench(args = FIXTURES)]
fn localize(bencher: divan::Bencher, fixture: &str) {
    let path = path(fixture);
    let limits = Limits::default();
    let options = LocalizeOptions::default();
    bencher.bench_local(|| {
        let test = fgvt::testcase::load(&path).expect("fixture loads");
        let localized = pipeline::localize(&test, &limits, &options, &mut ()).expect("localizes");
        localized.report.cdrs.len()
    });
}
