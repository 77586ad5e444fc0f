//! Exploration speed on the fixtures, memoized and not. `cargo bench --bench explore`.
//!
//! Each benchmark builds the whole interleaving tree of a fixture's test; divan reports the
//! time per tree, and the states-per-second figure is `distinct states / time` (printed once
//! per fixture before the timings).

use std::path::PathBuf;

use fgvt_tree::{explore, ExploreOptions};

fn main() {
    for (name, memoize) in FIXTURES.iter().flat_map(|f| [(f, true), (f, false)]) {
        let test = load(name);
        let start = std::time::Instant::now();
        let tree = explore(&test.program(), &options(memoize)).expect("fixture explores");
        let secs = start.elapsed().as_secs_f64();
        let s = tree.stats();
        eprintln!(
            "{name:<40} memo={memoize:<5} nodes={:<8} graph_nodes={:<8} {:>10.0} unfolded nodes/s {:>10.0} graph nodes/s",
            s.nodes,
            s.graph_nodes,
            s.nodes as f64 / secs,
            s.graph_nodes as f64 / secs
        );
    }
    divan::main();
}

const FIXTURES: &[&str] = &[
    "pair_snapshot/failing.json",
    "lock_free_list/failing.json",
    "optimistic_queue/failing.json",
    "snark/failing.json",
    "simple_list/failing.json",
    "linked_list/failing.json",
    "lock_counter/correct.json",
];

fn load(fixture: &str) -> fgvt::testcase::TestCase {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(fixture);
    fgvt::testcase::load(&path).expect("fixture loads")
}

fn options(memoize: bool) -> ExploreOptions {
    ExploreOptions {
        memoize,
        ..ExploreOptions::default()
    }
}

#[divan::bench(args = FIXTURES)]
fn memoized(bencher: divan::Bencher, fixture: &str) {
    explore_fixture(bencher, fixture, true);
}

#[divan::bench(args = FIXTURES)]
fn plain(bencher: divan::Bencher, fixture: &str) {
    explore_fixture(bencher, fixture, false);
}

/// Explores `fixture`'s whole tree, sharing identical states when `memoize`.
fn explore_fixture(bencher: divan::Bencher, fixture: &str, memoize: bool) {
    let test = load(fixture);
    let program = test.program();
    bencher.bench_local(|| {
        explore(&program, &options(memoize))
            .expect("explores")
            .stats()
            .nodes
    });
}
