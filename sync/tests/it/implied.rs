//! Issue 42: loops written the ordinary way, around `std::hint::spin_loop()` or bare, which fgvt
//! cannot see, are retry loops all the same (`Test::implied_hints`).
//!
//! A turn of a `loop` or `while` of the source that wrote nothing and came back to the access it
//! began with, given the same arguments, ends as fgvt's hint would end it. Each object here
//! comes in two forms, `Waits<true>` with fgvt's hint and `Waits<false>` with `std`'s: the two
//! must give the same tree, state for state. And a loop that carries what it read into its
//! next turn (a compare-and-swap loop whose failure gives the next expected value, in a `mut`
//! variable or a `Cell`) must not be taken for one: its merged runs must end as the unfolded
//! runs do.

use std::collections::BTreeSet;

use fgvt_sync::atomic::{AtomicI64, Ordering::*};
use fgvt_sync::report::{LeafKind, Limit, Tree};
use fgvt_sync::{unknown, Arg, Call, IntoValue, Memory, Object, Test, Value, Verdict};
use proptest::prelude::*;

use crate::common::shape;
use crate::common::treiber::{hint, Idiomatic};

/// Two counters and ways to wait on them; `HINTED` says whose spin hint the loops call.
struct Waits<const HINTED: bool> {
    x: [AtomicI64; 2],
}

impl<const HINTED: bool> Waits<HINTED> {
    /// Waits until `x[i]` is `c`.
    fn wait(&self, i: usize, c: i64) {
        while self.x[i].load(SeqCst) != c {
            hint::<HINTED>();
        }
    }

    /// Takes one from `x[i]` once it is positive, by a compare-and-swap loop that reads the
    /// counter anew at every turn: it retries and it waits.
    fn take(&self, i: usize) -> i64 {
        loop {
            let v = self.x[i].load(SeqCst);
            if v > 0 && self.x[i].compare_exchange(v, v - 1, SeqCst, SeqCst).is_ok() {
                return v;
            }
            hint::<HINTED>();
        }
    }

    /// One try at taking one from `x[i]`, for [`Self::take_by_helper`].
    fn try_take(&self, i: usize) -> Option<i64> {
        let v = self.x[i].load(SeqCst);
        let taken = v > 0 && self.x[i].compare_exchange(v, v - 1, SeqCst, SeqCst).is_ok();
        taken.then_some(v)
    }

    /// `take` with its turn in a helper the loop calls.
    fn take_by_helper(&self, i: usize) -> i64 {
        loop {
            if let Some(v) = self.try_take(i) {
                return v;
            }
            hint::<HINTED>();
        }
    }

    /// Adds one to `x[i]` by a compare-and-swap loop that carries what a failure read into
    /// the next turn, in a `mut` variable: no retry loop (neither form calls a hint).
    fn bump(&self, i: usize) -> i64 {
        let mut seen = self.x[i].load(SeqCst);
        while let Err(now) = self.x[i].compare_exchange(seen, seen + 1, SeqCst, SeqCst) {
            seen = now;
        }
        seen
    }

    /// Claims `x[i]`'s value by guessing it, 0, 1, 2, …: a loop that begins with the same
    /// load every turn and carries its guess, in a `mut` variable, to its compare-and-swap.
    fn claim(&self, i: usize) -> i64 {
        let mut guess = 0;
        loop {
            let seen = self.x[i].load(SeqCst);
            if (self.x[i])
                .compare_exchange(guess, guess + 1, SeqCst, SeqCst)
                .is_ok()
            {
                return seen;
            }
            guess += 1;
        }
    }

    /// `bump` carrying the value in a `Cell`, which the source shows no assignment to: the
    /// compare-and-swap's arguments tell the turns apart.
    fn bump_cell(&self, i: usize) -> i64 {
        let seen = std::cell::Cell::new(self.x[i].load(SeqCst));
        while let Err(now) = self.x[i].compare_exchange(seen.get(), seen.get() + 1, SeqCst, SeqCst)
        {
            seen.set(now);
        }
        seen.get()
    }
}

impl<const HINTED: bool> Object for Waits<HINTED> {
    fn new() -> Self {
        Waits {
            x: [AtomicI64::new(0), AtomicI64::new(0)],
        }
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        let arg = |k: usize| -> Result<i64, String> {
            call.args.get(k).ok_or("an argument is missing")?.int()
        };
        let i = || -> Result<usize, String> { Ok(arg(0)?.rem_euclid(2) as usize) };
        match call.op.as_str() {
            "set" => {
                self.x[i()?].store(arg(1)?, SeqCst);
                Ok(Value::Unit)
            }
            "add" => Ok(self.x[i()?].fetch_add(1, SeqCst).into_value()),
            "wait" => {
                self.wait(i()?, arg(1)?);
                Ok(Value::Unit)
            }
            "take" => Ok(self.take(i()?).into_value()),
            "take_by_helper" => Ok(self.take_by_helper(i()?).into_value()),
            "bump" => Ok(self.bump(i()?).into_value()),
            "bump_cell" => Ok(self.bump_cell(i()?).into_value()),
            "claim" => Ok(self.claim(i()?).into_value()),
            _ => Err(unknown(call)),
        }
    }
}

/// A test of `calls` on the object, every interleaving.
fn full<const HINTED: bool>(calls: &[Vec<Call>]) -> Test<Waits<HINTED>> {
    Test::<Waits<HINTED>>::new("waits")
        .with_calls(&[], calls, &[])
        .partial_order_reduction(false)
        .max_steps(40)
        .max_states(50_000)
}

/// What the runs that ended returned, by thread.
fn endings(tree: &Tree) -> BTreeSet<Vec<(usize, String)>> {
    (tree.leaves())
        .filter(|(_, leaf, _)| leaf.kind == LeafKind::Complete)
        .map(|(_, leaf, _)| crate::common::returns(&leaf.history))
        .collect()
}

fn call() -> impl Strategy<Value = Call> {
    let int = |n: i64| Value::Int(n);
    prop_oneof![
        (0..2i64, 0..3i64).prop_map(move |(i, c)| Call::new("set", vec![int(i), int(c)])),
        (0..2i64).prop_map(move |i| Call::new("add", vec![int(i)])),
        (0..2i64, 0..2i64).prop_map(move |(i, c)| Call::new("wait", vec![int(i), int(c)])),
        (0..2i64).prop_map(move |i| Call::new("take", vec![int(i)])),
        (0..2i64).prop_map(move |i| Call::new("take_by_helper", vec![int(i)])),
        (0..2i64).prop_map(move |i| Call::new("bump", vec![int(i)])),
        (0..2i64).prop_map(move |i| Call::new("bump_cell", vec![int(i)])),
        (0..2i64).prop_map(move |i| Call::new("claim", vec![int(i)])),
    ]
}

/// Two or three threads of one or two calls.
fn threads() -> impl Strategy<Value = Vec<Vec<Call>>> {
    prop::collection::vec(prop::collection::vec(call(), 1..3), 2..4)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A loop around `std`'s hint gives the tree the same loop around fgvt's gives.
    #[test]
    fn std_hints_give_the_tree_fgvt_hints_give(calls in threads()) {
        let hinted = full::<true>(&calls).explore().unwrap();
        prop_assume!(hinted.partial.is_none());
        let unseen = full::<false>(&calls).explore().unwrap();
        prop_assert_eq!(unseen.partial, None);
        prop_assert_eq!(shape(&unseen), shape(&hinted));
    }

    /// The loops taken for retries lose no run and add none: merged, the runs end as the
    /// unfolded runs do (every turn a new path, up to a step bound), the carrying loop of
    /// `bump` with them.
    #[test]
    fn loops_taken_for_retries_end_as_their_unfolded_runs(calls in threads()) {
        let merged = full::<false>(&calls).explore().unwrap();
        prop_assume!(merged.partial.is_none());
        let unfolded = full::<false>(&calls)
            .implied_hints(false)
            .cut_bare_spins(false)
            .merge(false)
            .max_steps(24)
            .max_states(300_000)
            .explore()
            .unwrap();
        prop_assume!(unfolded.partial != Some(Limit::MaxStates));
        let bounded = (unfolded.leaves()).any(|(_, leaf, _)| leaf.kind == LeafKind::Bounded);
        // A turn merged with one that has another future makes a cycle that never ends: a
        // stuck leaf where every unfolded run ends.
        let stuck = (merged.leaves()).any(|(_, leaf, _)| leaf.kind == LeafKind::Stuck);
        let (merged, unfolded) = (endings(&merged), endings(&unfolded));
        prop_assert!(unfolded.is_subset(&merged), "lost: {:?}", unfolded.difference(&merged));
        if !bounded {
            prop_assert!(!stuck, "every unfolded run ends, and a merged one waits forever");
            prop_assert_eq!(merged, unfolded);
        }
    }
}

/// The carrying loops alone: merged as a retry loop, the second thread's increment would be
/// taken back to its first compare-and-swap and the counter would lose it.
#[test]
fn a_loop_that_carries_what_it_read_is_no_retry_loop() {
    for op in ["bump", "bump_cell", "claim"] {
        let bump = || Call::new(op, vec![Value::Int(0)]);
        let calls = vec![vec![bump(), bump()], vec![bump()]];
        let found = Test::<Waits<false>>::new(op)
            .with_calls(&[], &calls, &[Call::new("add", vec![Value::Int(0)])])
            .partial_order_reduction(false)
            .localize()
            .unwrap();
        assert_eq!(found.report.verdict, Verdict::Linearizable, "{op}");
        assert_eq!(found.report.partial, None, "{op}");
    }
}

/// The Treiber stack with the orderings Rust code declares, its loops around `std`'s hint or
/// fgvt's (`HINTED`): two threads × (push, pop), a final pop, under weak memory.
fn treiber<const HINTED: bool>() -> Test<Idiomatic<HINTED>> {
    Test::<Idiomatic<HINTED>>::new("treiber")
        .thread(&["push(1)", "pop()"])
        .thread(&["push(2)", "pop()"])
        .finally(&["pop()"])
        .memory(Memory::Weak)
}

/// The stack written with `std::hint::spin_loop`, under weak memory: the partial-order
/// reduction leaves its failed turns to the runs without them as it does with fgvt's hint,
/// and takes the same runs.
#[test]
fn a_treiber_stack_around_std_hints_takes_the_runs_fgvt_hints_take() {
    let hinted = treiber::<true>().localize().unwrap().report;
    let unseen = treiber::<false>().localize().unwrap().report;
    assert_eq!(hinted.verdict, Verdict::Linearizable);
    assert_eq!(unseen.verdict, Verdict::Linearizable);
    assert_eq!(unseen.partial, None);
    assert_eq!(unseen.tree.leaves, hinted.tree.leaves);
    assert_eq!(unseen.tree.distinct_states, hinted.tree.distinct_states);
    // The report says why `std`'s hints were no obstacle.
    let note = (unseen.notes.iter())
        .find(|n| n.contains("std::hint::spin_loop"))
        .unwrap_or_else(|| panic!("{:#?}", unseen.notes));
    assert!(note.contains("Test::implied_hints"), "{note}");
    // Every interleaving, merged: the same graph of states with either hint.
    let all_hinted = treiber::<true>()
        .partial_order_reduction(false)
        .explore()
        .unwrap();
    let all_unseen = treiber::<false>()
        .partial_order_reduction(false)
        .explore()
        .unwrap();
    assert_eq!(all_hinted.partial, None);
    assert_eq!(shape(&all_unseen), shape(&all_hinted));
    // Told not to, fgvt keeps every failed turn: many more runs.
    let kept = treiber::<false>()
        .implied_hints(false)
        .max_states(20_000)
        .localize()
        .unwrap()
        .report;
    assert!(kept.tree.leaves > 2 * hinted.tree.leaves, "{:?}", kept.tree);
}

/// The spin lock of `Test::implied_hints`'s example (a `no_run` doctest there: see why), its
/// loop around `std`'s hint.
#[derive(Default)]
struct Lock(fgvt_sync::atomic::AtomicBool);

#[fgvt_sync::operations]
impl Lock {
    pub fn lock_unlock(&self) {
        while self
            .0
            .compare_exchange(false, true, Acquire, Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
        self.0.store(false, Release);
    }
}

#[test]
fn the_spin_lock_of_the_docs_passes_as_written() {
    let test = Test::<Lock>::new("lock")
        .thread(&["lock_unlock()"])
        .thread(&["lock_unlock()"]);
    let report = test.localize().unwrap().report;
    assert_eq!(report.verdict, Verdict::Linearizable);
    assert_eq!(report.partial, None);
}

/// A model (loom's kind of test) that waits in a bare loop for a flag another thread sets:
/// with the implied hint the loop is one state and the model passes complete; without it the
/// loop is cut where its turns repeat, and the result is partial.
#[test]
fn a_model_waits_in_a_bare_loop() {
    use fgvt_sync::{thread, Model};
    use std::sync::Arc;
    let body = || {
        let flag = Arc::new(fgvt_sync::atomic::AtomicBool::new(false));
        let setter = {
            let flag = Arc::clone(&flag);
            thread::spawn(move || flag.store(true, Release))
        };
        while !flag.load(Acquire) {}
        setter.join().unwrap();
    };
    let found = Model::new().name("bare_wait").localize(body).unwrap();
    assert_eq!(found.report.verdict, Verdict::Linearizable);
    assert_eq!(found.report.partial, None);
    let cut = (Model::new().name("bare_wait").implied_hints(false))
        .localize(body)
        .unwrap();
    assert_eq!(cut.report.partial.as_deref(), Some(Limit::Spin.name()));
}
