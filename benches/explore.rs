//! Exploration speed on the fixtures, memoized and not. `cargo bench --bench explore`.
//!
//! Each benchmark builds the whole interleaving tree of a fixture's test; divan reports the
//! time per tree, and the states-per-second figure is `distinct states / time` (printed once
//! per fixture before the timings).

use std::path::PathBuf;

use fgvt_tree::{explore, ExploreOptions, MemoryBudget};

// Counting allocations gives the bytes per stored state the seqlock figure reports.
#[global_allocator]
static ALLOCATOR: fgvt::memory::Counting = fgvt::memory::Counting;

/// Issue 11's seqlock (2 writers with a CAS spin lock, 2 retrying readers): a state graph with
/// spin loops, compared with SPIN in `benches/seqlock/`.
const SEQLOCK: &str = "benches/seqlock/seqlock.json";

fn main() {
    {
        let test = load_file(SEQLOCK);
        // The probe makes the explorer measure its peak: what it holds at its end and what the
        // finished tree holds (`Tree::memory`); the budget itself never stops it.
        let probe = MemoryBudget {
            bytes: usize::MAX,
            used: fgvt::memory::allocated,
        };
        let options = ExploreOptions {
            max_memory: Some(probe),
            ..options(true)
        };
        let start = std::time::Instant::now();
        let tree = explore(&test.program(), &options).expect("the seqlock explores");
        let secs = start.elapsed().as_secs_f64();
        let bytes = tree.memory.expect("a probe was given");
        let states = tree.stats().distinct_states as f64;
        eprintln!(
            "{SEQLOCK:<40} memo=true  states={states} {:>10.0} states/s {:>6.0} bytes/state  complete={}",
            states / secs,
            bytes as f64 / states,
            tree.partial.is_none()
        );
    }
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
    load_file(&format!("fixtures/{fixture}"))
}

/// A test file, by its path from the repository root.
fn load_file(path: &str) -> fgvt::testcase::TestCase {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path);
    fgvt::testcase::load(&path).unwrap_or_else(|e| panic!("{} loads: {e}", path.display()))
}

fn options(memoize: bool) -> ExploreOptions {
    ExploreOptions {
        memoize,
        ..ExploreOptions::default()
    }
}

/// Issue 24's target: the seqlock's whole state graph, from a fresh program each time (its
/// memoized steps and state parts made anew, as in a run of `fgvt explore`), no slower than
/// SPIN's search of `benches/seqlock/seqlock.pml`.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn seqlock(bencher: divan::Bencher) {
    let test = load_file(SEQLOCK);
    bencher
        .with_inputs(|| test.program())
        .bench_local_values(|program| {
            explore(&program, &options(true))
                .expect("the seqlock explores")
                .stats()
                .nodes
        });
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
