//! Merging equal states changes nothing a report says: on small random objects (atomics, a
//! lock-protected plain counter, a `Shared` cell, an `UnsafeCell` whose data races end runs;
//! reads, writes, CAS, fetch-and-add, fences), the tree
//! explored with merged states has the same unfolded counts, label totals and CDRS as the tree
//! that unfolds every path; with every access `SeqCst`, and with random orderings under weak
//! memory, where merged states are told apart by the execution graph's future key.

use crate::common;

use std::cell::RefCell;

use common::results;
use fgvt_reports::LocalizeReport;
use fgvt_sync::atomic::{fence, AtomicI64, Ordering};
use fgvt_sync::cell::UnsafeCell;
use fgvt_sync::{unknown, Arg, Call, IntoValue, Mutex, Object, Shared, Test, Value};
use proptest::prelude::*;

/// How strong an access's ordering is: 0 `Relaxed`, 1 its kind's acquire and/or release
/// (`Acquire` for a load, `Release` for a store, `AcqRel` for a read-modify-write), 2 `SeqCst`.
type Strength = u8;

/// The ordering of strength `o` for an access that `reads` and/or `writes`.
fn ordering(o: Strength, reads: bool, writes: bool) -> Ordering {
    match (o, reads, writes) {
        (0, ..) => Ordering::Relaxed,
        (1, true, true) => Ordering::AcqRel,
        (1, true, false) => Ordering::Acquire,
        (1, false, _) => Ordering::Release,
        _ => Ordering::SeqCst,
    }
}

/// One instruction of a random operation; `r` is the operation's one register.
#[derive(Clone, Copy, Debug)]
enum Instr {
    /// `r = x[i]`
    Load(usize, Strength),
    /// `x[i] = c`
    Store(usize, i64, Strength),
    /// `x[i] = r + c`
    StoreReg(usize, i64, Strength),
    /// `r = cas(x[i], c, d)` (1 when it swapped)
    Cas(usize, i64, i64, Strength),
    /// `r += fetch_add(x[i], c)`
    FetchAdd(usize, i64, Strength),
    /// A fence (an acquire-release one at strength 1).
    Fence(Strength),
    /// Under the lock: `r = n; n = r + 1` on a plain counter.
    LockedInc,
    /// `cell = r + c`
    SetCell(i64),
    /// `r += cell`
    GetCell,
    /// `plain = r + c` (plain memory, checked for data races)
    SetPlain(i64),
    /// `r += plain`
    GetPlain,
}

thread_local! {
    /// The operations of the object under test: `op(k)` runs the `k`-th. Executions run on
    /// the exploring OS thread, so they see it.
    static OPS: RefCell<Vec<Vec<Instr>>> = const { RefCell::new(Vec::new()) };
}

/// An object whose operations are the random programs of [`OPS`].
struct Random {
    x: [AtomicI64; 2],
    n: Mutex<i64>,
    cell: Shared<i64>,
    plain: UnsafeCell<i64>,
}

// SAFETY: `plain` is what the data-race check watches: a run ends at any race on it.
unsafe impl Sync for Random {}

impl Random {
    fn run(&self, program: &[Instr]) -> i64 {
        let mut r = 0;
        for instr in program {
            match *instr {
                Instr::Load(i, o) => r = self.x[i].load(ordering(o, true, false)),
                Instr::Store(i, c, o) => self.x[i].store(c, ordering(o, false, true)),
                Instr::StoreReg(i, c, o) => self.x[i].store(r + c, ordering(o, false, true)),
                Instr::Cas(i, c, d, o) => {
                    let (success, failure) = (ordering(o, true, true), ordering(o, true, false));
                    r = i64::from(self.x[i].compare_exchange(c, d, success, failure).is_ok())
                }
                Instr::FetchAdd(i, c, o) => r += self.x[i].fetch_add(c, ordering(o, true, true)),
                // A relaxed fence is no fence (`std` panics on one).
                Instr::Fence(0) => {}
                Instr::Fence(o) => fence(ordering(o, true, true)),
                Instr::LockedInc => {
                    let mut n = self.n.lock().unwrap();
                    r = *n;
                    *n = r + 1;
                }
                Instr::SetCell(c) => self.cell.set(r + c),
                Instr::GetCell => r += self.cell.get(),
                Instr::SetPlain(c) => self.plain.with_mut(|p| unsafe { *p = r + c }),
                Instr::GetPlain => r += self.plain.with(|p| unsafe { *p }),
            }
        }
        r
    }
}

impl Object for Random {
    fn new() -> Self {
        Random {
            x: [AtomicI64::new(0), AtomicI64::new(0)],
            n: Mutex::new(0),
            cell: Shared::new(0),
            plain: UnsafeCell::new(0),
        }
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match (call.op.as_str(), call.args.as_slice()) {
            ("op", [k]) => {
                let k = usize::try_from(k.int()?).map_err(|e| e.to_string())?;
                let program = OPS.with(|ops| ops.borrow().get(k).cloned());
                let program = program.ok_or_else(|| format!("no operation {k}"))?;
                Ok(self.run(&program).into_value())
            }
            _ => Err(unknown(call)),
        }
    }
}

/// A random instruction; its accesses' orderings of strength in `orders` (only `SeqCst`, 2,
/// for a sequentially consistent test), with fences.
fn instr(orders: std::ops::RangeInclusive<Strength>) -> impl Strategy<Value = Instr> {
    let i = 0..2usize;
    let c = 0..3i64;
    let o = orders.clone();
    prop_oneof![
        2 => (i.clone(), o.clone()).prop_map(|(i, o)| Instr::Load(i, o)),
        2 => (i.clone(), c.clone(), o.clone()).prop_map(|(i, c, o)| Instr::Store(i, c, o)),
        2 => (i.clone(), c.clone(), o.clone()).prop_map(|(i, c, o)| Instr::StoreReg(i, c, o)),
        2 => (i.clone(), c.clone(), c.clone(), o.clone()).prop_map(|(i, a, b, o)| Instr::Cas(i, a, b, o)),
        2 => (i, 1..3i64, o.clone()).prop_map(|(i, c, o)| Instr::FetchAdd(i, c, o)),
        // A `SeqCst` fence only, for a sequentially consistent test: it orders nothing more.
        1 => o.prop_map(Instr::Fence),
        2 => Just(Instr::LockedInc),
        2 => c.clone().prop_map(Instr::SetCell),
        2 => Just(Instr::GetCell),
        1 => c.prop_map(Instr::SetPlain),
        1 => Just(Instr::GetPlain),
    ]
}

/// A random test: three operations of one to three instructions, and two or three threads of
/// one or two calls of them.
fn test_case(
    orders: std::ops::RangeInclusive<Strength>,
) -> impl Strategy<Value = (Vec<Vec<Instr>>, Vec<Vec<usize>>)> {
    let ops = prop::collection::vec(prop::collection::vec(instr(orders), 1..4), 3);
    let threads = prop::collection::vec(prop::collection::vec(0..3usize, 1..3), 2..4);
    (ops, threads)
}

/// The number of interleavings of threads taking `steps` steps each (saturating): the
/// unfolded tree's leaves, about.
fn interleavings(steps: &[u64]) -> u64 {
    let mut total = 0u64;
    let mut count = 1u64;
    for &n in steps {
        for k in 1..=n {
            total += 1;
            // count *= C(total, k) built up one factor at a time: count * total / k.
            count = count.saturating_mul(total) / k;
        }
    }
    count
}

/// Steps a thread running `calls` of `ops` takes (a locked increment is two).
fn steps(ops: &[Vec<Instr>], calls: &[usize]) -> u64 {
    calls
        .iter()
        .flat_map(|k| &ops[*k])
        .map(|i| if matches!(i, Instr::LockedInc) { 2 } else { 1 })
        .sum()
}

/// What must not change with merging: unfolded counts, label totals and the CDRS found.
fn summary(report: &LocalizeReport) -> impl PartialEq + std::fmt::Debug {
    let t = &report.tree;
    let mut cdrs: Vec<(String, u64)> = report
        .cdrs
        .iter()
        .map(|c| (c.pattern.clone(), c.failing_leaves))
        .collect();
    cdrs.sort();
    (
        report.verdict,
        (
            t.nodes,
            t.leaves,
            t.passing_leaves,
            t.failing_leaves,
            t.unknown_leaves,
        ),
        (
            t.complete_leaves,
            t.stuck_leaves,
            t.fault_leaves,
            t.bounded_leaves,
            t.max_depth,
        ),
        report.labels,
        report.cdrs_found,
        cdrs,
    )
}

/// Explores `ops` run by `threads` merged and unfolded, and checks that the reports agree.
fn merged_and_unfolded_agree(
    ops: Vec<Vec<Instr>>,
    threads: &[Vec<usize>],
) -> Result<(), TestCaseError> {
    OPS.with(|o| *o.borrow_mut() = ops);
    let calls: Vec<Vec<Call>> = threads
        .iter()
        .map(|t| {
            t.iter()
                .map(|k| Call::new("op", vec![Value::Int(*k as i64)]))
                .collect()
        })
        .collect();
    // Both trees whole, however long the unfolded one takes after its first failing run (the
    // report budget would cut it: a partial tree is another tree).
    let test = |merge: bool| {
        Test::<Random>::new("random")
            .with_calls(&[], &calls, &[])
            .merge(merge)
            // Merging is what this compares, on every interleaving.
            .partial_order_reduction(false)
            .report_budget(None)
            .localize()
            .unwrap()
    };
    let merged = test(true);
    // The unfolded tree is the slow reference: under weak memory the ways multiply the
    // interleavings, so a program whose tree is large is left to the merged tests.
    prop_assume!(merged.report.tree.nodes <= 20_000);
    let unfolded = test(false);
    prop_assert_eq!(summary(&merged.report), summary(&unfolded.report));
    // Finer than verdicts: every run's results, counted over the unfolded runs. A state
    // merged with one that differs (a register holding another value) hands its subtree's
    // results to every path into it.
    prop_assert_eq!(results(&merged.tree), results(&unfolded.tree));
    // Merging is what makes the tree small: never more stored nodes than unfolded ones.
    prop_assert!(merged.report.tree.graph_nodes <= unfolded.report.tree.graph_nodes);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn merged_and_unfolded_trees_report_the_same((ops, threads) in test_case(2..=2)) {
        // The unfolded tree is the slow reference: keep it small.
        let per_thread: Vec<u64> = threads.iter().map(|t| steps(&ops, t)).collect();
        prop_assume!(interleavings(&per_thread) <= 20_000);
        merged_and_unfolded_agree(ops, &threads)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Under weak memory: random orderings, fences; each access may also go several ways.
    #[test]
    fn merged_and_unfolded_weak_memory_trees_report_the_same((ops, threads) in test_case(0..=2)) {
        let per_thread: Vec<u64> = threads.iter().map(|t| steps(&ops, t)).collect();
        prop_assume!(interleavings(&per_thread) <= 1_000);
        merged_and_unfolded_agree(ops, &threads)?;
    }
}

/// A register that holds what was read, and a write of it after another thread changed the
/// location read: states that differ only in the register must not merge.
#[test]
fn a_thread_that_read_another_value_is_another_state() {
    OPS.with(|o| {
        *o.borrow_mut() = vec![
            vec![Instr::Load(0, 2), Instr::StoreReg(1, 0, 2)],
            vec![Instr::Store(0, 1, 2), Instr::GetCell],
            vec![Instr::Load(1, 2)],
        ]
    });
    let calls = |ks: &[i64]| -> Vec<Call> {
        ks.iter()
            .map(|k| Call::new("op", vec![Value::Int(*k)]))
            .collect()
    };
    let threads = [calls(&[0]), calls(&[1])];
    let test = |merge: bool| {
        Test::<Random>::new("register")
            .with_calls(&[], &threads, &calls(&[2]))
            .merge(merge)
            .partial_order_reduction(false)
            .localize()
            .unwrap()
    };
    let merged = test(true);
    let unfolded = test(false);
    // T0 reads x0 before or after T1 writes it: three runs each (hand-counted: T0's load
    // before T1's store in 3 of the 6 interleavings of two 2-step threads).
    let runs = results(&merged.tree);
    assert_eq!(
        runs.values().copied().collect::<Vec<_>>(),
        [3, 3],
        "{runs:?}"
    );
    assert_eq!(runs, results(&unfolded.tree));
    assert!(merged.report.tree.graph_nodes < unfolded.report.tree.graph_nodes);
}
