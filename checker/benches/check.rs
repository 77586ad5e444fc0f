//! The checker on recorded and generated histories. `cargo bench -p fgvt-checker --bench check`.
//!
//! The kv histories come from `../shared/histories/kv` (skipped when absent), checked
//! partitioned by key and whole; the set workload is the P-compositionality paper's: 4 threads
//! × 70,000 operations on a small key range, partitioned.

use std::path::PathBuf;

use fgvt_checker::formats::{self, Format};
use fgvt_checker::workload::generate_set_history;
use fgvt_checker::{builtin, check, CheckOptions};
use fgvt_tree::History;

fn main() {
    divan::main();
}

/// [`generate_set_history`] with the draws of proptest's deterministic generator seeded by `seed`.
fn set_history(threads: usize, ops_per_thread: usize, seed: u64) -> History {
    use proptest::prelude::RngExt;
    use proptest::test_runner::{RngAlgorithm, TestRng};
    let bytes = [seed.to_le_bytes(), seed.rotate_left(32).to_le_bytes()].concat();
    let mut rng = TestRng::from_seed(RngAlgorithm::XorShift, &bytes);
    generate_set_history(threads, ops_per_thread, &mut |n| rng.random_range(0..n))
}

const KV_FILES: &[&str] = &["c01-ok.txt", "c01-bad.txt", "c10-ok.txt", "c10-bad.txt"];

fn kv(file: &str) -> Option<History> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/histories/kv")
        .join(file);
    let loaded = formats::load_history(&path, Some(Format::Kv)).ok()?;
    Some(loaded.parsed.history)
}

fn options(partition: bool) -> CheckOptions {
    CheckOptions {
        partition,
        explain: false,
        ..CheckOptions::default()
    }
}

#[divan::bench(args = KV_FILES)]
fn kv_partitioned(bencher: divan::Bencher, file: &str) {
    check_kv(bencher, file, true);
}

#[divan::bench(args = KV_FILES, sample_count = 3, sample_size = 1)]
fn kv_whole(bencher: divan::Bencher, file: &str) {
    check_kv(bencher, file, false);
}

/// Checks the kv log `file` against the built-in `kv` spec, split by key when `partition`.
fn check_kv(bencher: divan::Bencher, file: &str, partition: bool) {
    let Some(history) = kv(file) else { return };
    let spec = builtin("kv").expect("built-in");
    bencher.bench_local(|| {
        check(&spec, &history, &options(partition))
            .expect("checks")
            .partitions
    });
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn set_4x70000_partitioned(bencher: divan::Bencher) {
    let history = set_history(4, 70_000, 1);
    let spec = builtin("set").expect("built-in");
    bencher.bench_local(|| {
        let outcome = check(&spec, &history, &options(true)).expect("checks");
        assert!(outcome.verdict.is_linearizable());
        outcome.partitions
    });
}
