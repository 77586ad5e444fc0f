//! Explores Rust tests with 1, 2, … jobs (`Test::jobs`: the search and `jobs - 1` workers
//! running executions ahead of it) and prints the distinct states per second of each, the
//! best of a few rounds, and the speed-up over one job: whole trees, and passing tests that
//! the partial-order reduced search decides (its nodes: the runs it takes, merged where they
//! share a prefix). Every job count must explore the same tree: the bench checks the counts.
//!
//! `cargo run --release --manifest-path benches/jobs/Cargo.toml -- [--jobs 1,2,4]
//! [--rounds 3] [--only TEXT]` (`--only`: the workloads whose name contains TEXT). Built with
//! `fgvt_sync::Allocator`, as the guide advises for tests that explore with several jobs;
//! `--features system-allocator` builds it with the system's.

use std::time::{Duration, Instant};

use fgvt_fixtures_rust::ms_queue::FixedMsQueue;
use fgvt_fixtures_rust::treiber_stack::TaggedTreiberStack;
use fgvt_sync::{Object, Test, Verdict};

/// What a test binary that explores with several jobs is best built with (see its docs):
/// with glibc's allocator the search waits for the workers' arenas. `--features
/// system-allocator` measures without it.
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static ALLOCATOR: fgvt_sync::Allocator = fgvt_sync::Allocator;

/// One workload: a name and its test with a given number of jobs.
struct Workload {
    name: &'static str,
    test: fn(usize) -> Box<dyn Fn() -> (u64, u64)>,
}

/// `test` with `threads` threads each running `ops` (`{t}` is the thread's number, from 1),
/// then `finals`.
fn planned<O: Object>(
    mut test: Test<O>,
    threads: usize,
    ops: &[&str],
    finals: &[&str],
) -> Test<O> {
    for t in 0..threads {
        let calls: Vec<String> = ops.iter().map(|op| op.replace("{t}", &(t + 1).to_string())).collect();
        let calls: Vec<&str> = calls.iter().map(String::as_str).collect();
        test = test.thread(&calls);
    }
    test.finally(finals)
}

/// `threads` threads each running `ops`, then `finals`, on `O`, explored with `jobs` jobs:
/// what the bench times, giving the tree's node and leaf counts. The whole tree, without the
/// partial-order reduced search a passing test tries first (the `reduced` workloads).
fn explore<O: Object>(
    threads: usize,
    ops: &'static [&'static str],
    finals: &'static [&'static str],
    jobs: usize,
) -> Box<dyn Fn() -> (u64, u64)> {
    Box::new(move || {
        let test = Test::<O>::new("jobs-bench")
            .jobs(jobs)
            .max_states(20_000_000)
            .partial_order_reduction(false);
        let tree = planned(test, threads, ops, finals).explore().expect("the test replays");
        assert!(tree.partial.is_none(), "the bench's trees are explored whole");
        let stats = tree.stats();
        (stats.graph_nodes, stats.leaves)
    })
}

/// `threads` threads each running `ops`, then `finals`, on `O`, localized with `jobs` jobs:
/// a passing test, decided by the partial-order reduced search (workers take ahead the runs
/// it comes back for, `fgvt_tree::ahead`). Gives the reduced tree's node and leaf counts.
fn reduced<O: Object>(
    threads: usize,
    ops: &'static [&'static str],
    finals: &'static [&'static str],
    jobs: usize,
) -> Box<dyn Fn() -> (u64, u64)> {
    Box::new(move || {
        let test = Test::<O>::new("jobs-bench-reduced").jobs(jobs);
        let found = planned(test, threads, ops, finals).localize().expect("the test replays");
        assert_eq!(found.report.verdict, Verdict::Linearizable, "the bench's objects are correct");
        let stats = found.tree.stats();
        (stats.graph_nodes, stats.leaves)
    })
}

const WORKLOADS: &[Workload] = &[
    Workload {
        name: "Treiber stack (tagged), 3 threads × (push, pop), final pop",
        test: |jobs| explore::<TaggedTreiberStack>(3, &["push({t})", "pop()"], &["pop()"], jobs),
    },
    Workload {
        name: "Michael–Scott queue, 3 threads × (enqueue, dequeue), final dequeue",
        test: |jobs| explore::<FixedMsQueue>(3, &["enqueue({t})", "dequeue()"], &["dequeue()"], jobs),
    },
    Workload {
        name: "reduced search: Michael–Scott queue, 3 threads × (enqueue, dequeue), final dequeue",
        test: |jobs| reduced::<FixedMsQueue>(3, &["enqueue({t})", "dequeue()"], &["dequeue()"], jobs),
    },
    Workload {
        name: "reduced search: Treiber stack (tagged), 3 threads × (push, pop), final pop",
        test: |jobs| reduced::<TaggedTreiberStack>(3, &["push({t})", "pop()"], &["pop()"], jobs),
    },
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let jobs: Vec<usize> = value("--jobs")
        .unwrap_or_else(|| "1,2,4".to_string())
        .split(',')
        .map(|j| j.trim().parse().expect("--jobs takes numbers: 1,2,4"))
        .collect();
    let rounds: usize = value("--rounds").map_or(3, |r| r.parse().expect("--rounds takes a number"));
    println!("| workload | jobs | states | best s | states/s | speed-up |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    let only = value("--only").unwrap_or_default();
    for workload in WORKLOADS.iter().filter(|w| w.name.contains(&only)) {
        let mut base: Option<(f64, (u64, u64))> = None;
        for &j in &jobs {
            let run = (workload.test)(j);
            let mut best = Duration::MAX;
            let mut counts = (0, 0);
            for _ in 0..rounds {
                let start = Instant::now();
                counts = run();
                best = best.min(start.elapsed());
            }
            let secs = best.as_secs_f64();
            let (base_secs, base_counts) = *base.get_or_insert((secs, counts));
            assert_eq!(counts, base_counts, "{}: {j} jobs explored another tree", workload.name);
            println!(
                "| {} | {j} | {} | {secs:.2} | {:.0} | {:.2}× |",
                workload.name,
                counts.0,
                counts.0 as f64 / secs,
                base_secs / secs
            );
        }
    }
}
