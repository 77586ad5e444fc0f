//! Hunting speed: tests checked per second (every interleaving of each, every leaf judged)
//! for 2×2, 2×3 and 3×3 matrices on two correct objects, so that no sample stops the hunt
//! early. `cargo bench --bench hunt`; divan reports the throughput as items (tests) per second.
//!
//! * `LockSet`, a lock-based set checked against the built-in `set` spec;
//! * `FixedLinkedList`, a lock-based sorted list checked against `self` (its synthesized spec),
//!   on a list already holding two keys.
//!
//! (The lock-free list's 3×3 trees exceed the default two million states: too big to time.)
//!
//! Hunts run on one worker (`--jobs 1`), so the figures are per core.

use std::path::PathBuf;

use divan::counter::ItemsCount;
use fgvt::hunt::{self, HuntFile, HuntOptions};
use fgvt_tree::ExploreOptions;

fn main() {
    divan::main();
}

/// The hunt files benchmarked: both objects find nothing, so every sample is checked.
const OBJECTS: &[&str] = &["lock_set/hunt.json", "linked_list/hunt-fixed.json"];

/// Tests checked per benchmark iteration.
const SAMPLES: usize = 8;

/// The fixture's hunt file with `threads` × `ops` matrices.
fn hunt_file(fixture: &str, threads: usize, ops: usize) -> HuntFile {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(fixture);
    let mut file = hunt::load(&path).expect("fixture hunt file loads");
    file.plan.threads = threads;
    file.plan.ops_per_thread = ops;
    file
}

fn run(bencher: divan::Bencher, fixture: &str, threads: usize, ops: usize) {
    let file = hunt_file(fixture, threads, ops);
    let options = HuntOptions {
        seed: 1,
        samples: SAMPLES,
        jobs: 1,
        all: true,
        explore: ExploreOptions::default(),
        deadline: None,
        shard: None,
    };
    let judge = hunt::ModelJudge::of_hunt(&file);
    bencher.counter(ItemsCount::new(SAMPLES)).bench_local(|| {
        let result = hunt::hunt(&file.plan, &judge, &options, &|| {}).expect("hunt runs");
        assert!(result.findings.is_empty(), "{fixture} is correct");
        result.drawn
    });
}

#[divan::bench(args = OBJECTS, sample_count = 5, sample_size = 1)]
fn matrix_2x2(bencher: divan::Bencher, fixture: &str) {
    run(bencher, fixture, 2, 2);
}

#[divan::bench(args = OBJECTS, sample_count = 5, sample_size = 1)]
fn matrix_2x3(bencher: divan::Bencher, fixture: &str) {
    run(bencher, fixture, 2, 3);
}

#[divan::bench(args = OBJECTS, sample_count = 3, sample_size = 1)]
fn matrix_3x3(bencher: divan::Bencher, fixture: &str) {
    run(bencher, fixture, 3, 3);
}
