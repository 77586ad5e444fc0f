//! The checker on recorded and generated histories. `cargo bench -p fgvt-checker --bench check`.
//!
//! The kv histories come from `../shared/histories/kv` (skipped when absent), checked
//! partitioned by key and whole; the set workload is the P-compositionality paper's: 4 threads
//! × 70,000 operations on a small key range, partitioned. Built-in specs are checked as
//! `fgvt check-history` checks them, partitions in parallel (`check_parallel`).

use std::path::{Path, PathBuf};

use fgvt_checker::formats::{self, Format};
use fgvt_checker::workload::{generate_kv_history, generate_set_history};
use fgvt_checker::{builtin, check, check_parallel, CheckOptions};
use fgvt_tree::History;

fn main() {
    divan::main();
}

/// A seeded `below(n)` source for the generators.
fn draws(seed: u64) -> impl FnMut(usize) -> usize {
    use proptest::prelude::RngExt;
    use proptest::test_runner::{RngAlgorithm, TestRng};
    let bytes = [seed.to_le_bytes(), seed.rotate_left(32).to_le_bytes()].concat();
    let mut rng = TestRng::from_seed(RngAlgorithm::XorShift, &bytes);
    move |n| rng.random_range(0..n)
}

/// Generated kv histories in the shapes of porcupine's tests (its c50 files are not in
/// `shared/`): (name, clients, operations per client, corrupted, partitioned).
const KV_GENERATED: &[(&str, usize, usize, bool, bool)] = &[
    ("c50-ok-shape", 50, 34, false, true),
    ("c50-bad-shape", 50, 40, true, true),
    ("c10-ok-shape-whole", 10, 40, false, false),
];

#[divan::bench(args = [0, 1, 2], sample_count = 5, sample_size = 1)]
fn kv_generated(bencher: divan::Bencher, which: usize) {
    let (_, clients, ops, corrupt, partition) = KV_GENERATED[which];
    let history = generate_kv_history(clients, ops, corrupt, &mut draws(which as u64 + 1));
    let spec = builtin("kv").expect("built-in");
    bencher.bench_local(|| {
        // As `fgvt check-history` runs a built-in spec: partitions in parallel.
        let outcome = check_parallel(&spec, &history, &options(partition)).expect("checks");
        assert_eq!(
            outcome.verdict.is_linearizable(),
            !corrupt,
            "{}",
            KV_GENERATED[which].0
        );
        outcome.partitions
    });
}

/// Every Jepsen etcd log of `../shared/histories/jepsen`, checked one after the other.
#[divan::bench(sample_count = 5, sample_size = 1)]
fn jepsen_all(bencher: divan::Bencher) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/histories/jepsen");
    if let Some(histories) = etcd_logs(&dir) {
        check_each(bencher, &histories);
    }
}

/// The etcd logs in `dir`, by name; files that are not one are left out. `None` without `dir`.
fn etcd_logs(dir: &Path) -> Option<Vec<History>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .collect();
    paths.sort();
    let histories = paths
        .iter()
        .filter_map(|p| formats::load_history(p, Some(Format::Jepsen)).ok())
        .map(|l| l.parsed.history)
        .collect();
    Some(histories)
}

/// Checks `histories` one after the other against the register spec, as `fgvt check-history`
/// checks a directory of etcd logs.
fn check_each(bencher: divan::Bencher, histories: &[History]) {
    let spec = builtin("register").expect("built-in");
    bencher.bench_local(|| {
        histories
            .iter()
            .filter(|h| {
                check_parallel(&spec, h, &options(false))
                    .expect("checks")
                    .verdict
                    .is_linearizable()
            })
            .count()
    });
}

/// [`generate_set_history`] with the draws of proptest's deterministic generator seeded by `seed`.
fn set_history(threads: usize, ops_per_thread: usize, seed: u64) -> History {
    generate_set_history(threads, ops_per_thread, &mut draws(seed))
}

const KV_FILES: &[&str] = &["c01-ok.txt", "c01-bad.txt", "c10-ok.txt", "c10-bad.txt"];

fn kv(file: &str) -> Option<History> {
    kv_in(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/histories/kv"),
        file,
    )
}

/// The kv log `file` of `dir`, if it is there.
fn kv_in(dir: &Path, file: &str) -> Option<History> {
    let loaded = formats::load_history(&dir.join(file), Some(Format::Kv)).ok()?;
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
        check_parallel(&spec, &history, &options(partition))
            .expect("checks")
            .partitions
    });
}

/// porcupine's own test data, where `FGVT_PORCUPINE_DATA` names its `test_data` directory (a
/// checkout of github.com/anishathalye/porcupine): the c50 kv files, which `shared/` lacks,
/// checked as porcupine's `BenchmarkKv50Clients*` check them (partitioned, reading excluded),
/// and all its etcd logs as `BenchmarkEtcdJepsen*`. Skipped when the variable is not set.
const PORCUPINE_KV: &[&str] = &["c50-ok.txt", "c50-bad.txt", "c10-ok.txt whole"];

#[divan::bench(args = PORCUPINE_KV, sample_count = 10, sample_size = 1)]
fn porcupine_kv(bencher: divan::Bencher, which: &str) {
    let Some(dir) = std::env::var_os("FGVT_PORCUPINE_DATA") else {
        return;
    };
    let (file, whole) = match which.split_once(' ') {
        Some((file, _)) => (file, true),
        None => (which, false),
    };
    let history = kv_in(&PathBuf::from(dir).join("kv"), file).expect("a porcupine kv file");
    let spec = builtin("kv").expect("built-in");
    bencher.bench_local(|| {
        check_parallel(&spec, &history, &options(!whole))
            .expect("checks")
            .verdict
            .is_linearizable()
    });
}

/// porcupine's 102 etcd logs (see [`porcupine_kv`]), one after the other.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn porcupine_etcd(bencher: divan::Bencher) {
    let Some(dir) = std::env::var_os("FGVT_PORCUPINE_DATA") else {
        return;
    };
    let histories =
        etcd_logs(&PathBuf::from(dir).join("jepsen")).expect("porcupine's jepsen directory");
    // etcd_095.log holds no operations (a test that did not run); porcupine benchmarks the
    // other 102.
    assert_eq!(histories.len(), 102, "porcupine's etcd logs");
    check_each(bencher, &histories);
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
