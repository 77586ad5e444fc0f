//! The partial-order reduced search under weak memory, against the full tree: on Treiber stacks
//! whose compare-and-swap loops retry with the hint, under every mix of the orderings Rust code
//! declares, the runs it takes stand for every run of the full tree.
//!
//! The search leaves a run through a retry turn that failed to the run without the turn, and a
//! read of an older store than the latest to the order where it comes before the store it
//! missed. Under weak memory, operations are ordered by happens-before, and a failed turn's
//! reads may order operations (its compare-and-swap read another thread's newer top, made
//! after that thread's push returned): such a turn is left only when the thread's next access
//! orders them again. Each leaf of the full tree must have a run taken with the same ending
//! (kind, every operation's result) whose operations are ordered at least as much: a history
//! that fails fails there too.

use std::collections::BTreeSet;

use fgvt_sync::atomic::{AtomicU64, Ordering};
use fgvt_sync::report::{Leaf, Tree};
use fgvt_sync::{Memory, Test};

/// The stack with fgvt's hint.
type Treiber<const L: u8, const S: u8, const F: u8> =
    crate::common::treiber::Treiber<L, S, F, true>;

/// A leaf's kind and what its operations returned, by thread and in each thread's order.
type Ending = (String, Vec<(usize, String)>);

/// An operation, by its thread and its place among the thread's operations.
type Op = (usize, usize);

/// What a leaf tells a verdict: its ending, and which operations precede which.
fn outcome(leaf: &Leaf) -> (Ending, BTreeSet<(Op, Op)>) {
    let returns = crate::common::returns(&leaf.history);
    let ops = leaf.history.operations().expect("a well-formed history");
    let order = (ops.iter())
        .flat_map(|a| ops.iter().map(move |b| (a, b)))
        .filter(|(a, b)| a.precedes(b))
        .map(|(a, b)| ((a.thread, a.nth), (b.thread, b.nth)))
        .collect();
    ((format!("{:?}", leaf.kind), returns), order)
}

/// The test: two threads that each push and pop, and a final pop, under weak memory.
fn test<const L: u8, const S: u8, const F: u8>(reduce: bool) -> Tree {
    Test::<Treiber<L, S, F>>::new("treiber")
        .jobs(1)
        .memory(Memory::Weak)
        .thread(&["push(1)", "pop()"])
        .thread(&["push(2)", "pop()"])
        .finally(&["pop()"])
        .partial_order_reduction(reduce)
        .explore()
        .expect("replays")
}

/// Checks that the reduced search's runs stand for every leaf of the full tree, with fewer
/// runs.
fn stands_for_the_full_tree<const L: u8, const S: u8, const F: u8>() {
    let full = test::<L, S, F>(false);
    let reduced = test::<L, S, F>(true);
    let taken: Vec<_> = reduced.leaves().map(|(_, leaf, _)| outcome(leaf)).collect();
    for (_, leaf, _) in full.leaves() {
        let (ending, order) = outcome(leaf);
        assert!(
            (taken.iter()).any(|(e, o)| *e == ending && o.is_superset(&order)),
            "orders {L}/{S}/{F}: no run taken stands for {ending:?} ordered {order:?}"
        );
    }
    assert!(reduced.stats().leaves < full.stats().leaves);
}

#[test]
fn acquire_loads_and_acq_rel_compare_and_swaps() {
    stands_for_the_full_tree::<1, 3, 1>();
}

#[test]
fn relaxed_loads_and_release_compare_and_swaps() {
    stands_for_the_full_tree::<0, 2, 0>();
}

#[test]
fn acquire_loads_and_release_compare_and_swaps_that_fail_relaxed() {
    stands_for_the_full_tree::<1, 2, 0>();
}

#[test]
fn relaxed_loads_and_acq_rel_compare_and_swaps() {
    stands_for_the_full_tree::<0, 3, 1>();
}

/// Two counters, each written twice by its own operation: the operations share nothing.
#[derive(Default)]
struct TwoCounters {
    left: AtomicU64,
    right: AtomicU64,
}

#[fgvt_sync::operations]
impl TwoCounters {
    pub fn left(&self) {
        self.left.store(1, Ordering::Relaxed);
        self.left.store(2, Ordering::Relaxed);
    }

    pub fn right(&self) {
        self.right.store(1, Ordering::Relaxed);
        self.right.store(2, Ordering::Relaxed);
    }
}

/// The runs the reduced search takes of `left() ‖ right()` under `memory`.
fn independent_runs(memory: Memory) -> u64 {
    let tree = Test::<TwoCounters>::new("two counters")
        .jobs(1)
        .memory(memory)
        .thread(&["left()"])
        .thread(&["right()"])
        .explore()
        .expect("replays");
    tree.stats().leaves
}

/// Sequentially consistent, real time orders the two operations: one returns before the
/// other is called, either way, or they overlap, three histories of the six interleavings.
/// Under weak memory happens-before orders them, and nothing relates two threads that share
/// nothing: every interleaving is one history, and one run stands for all.
#[test]
fn operations_that_share_nothing_take_one_run_under_weak_memory() {
    assert_eq!(independent_runs(Memory::SequentiallyConsistent), 3);
    assert_eq!(independent_runs(Memory::Weak), 1);
}

/// A flag raised and lowered again, and a waiter that spins, with the hint, until it sees it
/// raised: a lost signal. A waiter whose load read the lowering store can never read the raised
/// one again (coherence), so once the flag is lowered it may spin forever: a livelock.
#[derive(Default)]
struct Blink {
    flag: AtomicU64,
}

#[fgvt_sync::operations]
impl Blink {
    pub fn blink(&self) {
        self.flag.store(1, Ordering::Relaxed);
        self.flag.store(0, Ordering::Relaxed);
    }

    pub fn wait(&self) {
        while self.flag.load(Ordering::Relaxed) != 1 {
            fgvt_sync::hint::spin_loop();
        }
    }
}

/// The leaves of `blink() ‖ wait()` under weak memory: how many, and how many are stuck.
fn blink_leaves(reduce: bool) -> (u64, u64) {
    let tree = Test::<Blink>::new("blink")
        .jobs(1)
        .memory(Memory::Weak)
        .thread(&["blink()"])
        .thread(&["wait()"])
        .partial_order_reduction(reduce)
        .explore()
        .expect("replays");
    assert!(tree.partial.is_none(), "{:?}", tree.partial);
    let stats = tree.stats();
    (stats.leaves, stats.stuck)
}

/// The waiter's turn that read the lowered flag comes back to where it began but for what the
/// waiter has seen: its view is past the raised store. The reduced search compares the states
/// of its path in full there (the weak-memory part of a state is worked out where the rest
/// repeats an earlier state's of the run), so it does not take the turn for a spin back onto
/// the path, and finds the livelock the full exploration finds.
#[test]
fn a_spin_whose_turn_saw_a_newer_store_is_no_step_back_onto_the_path() {
    let (full, stuck_full) = blink_leaves(false);
    assert!(
        stuck_full > 0,
        "the full tree has the livelock ({full} leaves)"
    );
    let (reduced, stuck) = blink_leaves(true);
    assert!(
        stuck > 0,
        "the reduced search finds the livelock ({reduced} leaves)"
    );
}
