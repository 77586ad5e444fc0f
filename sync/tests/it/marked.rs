//! Loops around `std`'s hint in the functions of an `#[fgvt_sync::operations]` impl: the
//! runtime knows whether the accesses of a turn were made in one call of the loop's function,
//! where the text tells calls by name only.

use std::collections::BTreeSet;

use fgvt_sync::atomic::{AtomicI64, Ordering::*};
use fgvt_sync::report::{LeafKind, Tree};
use fgvt_sync::{Silent, Test, Verdict};

use crate::common::treiber::hint;

/// A counter that `push` raises and `pop` lowers once it is positive, each by a
/// compare-and-swap loop; `pop` notes what it took in a `Vec`, whose `push`, called inside
/// `pop`'s loop, the text cannot tell from the counter's own. `HINTED`: whose spin hint the
/// loops call.
struct Noted<const HINTED: bool> {
    count: AtomicI64,
    taken: Silent<Vec<i64>>,
}

#[fgvt_sync::operations]
impl<const HINTED: bool> Noted<HINTED> {
    fn new() -> Self {
        Noted {
            count: AtomicI64::new(0),
            taken: Silent::new(Vec::new()),
        }
    }

    pub fn push(&self) {
        loop {
            let c = self.count.load(SeqCst);
            if self
                .count
                .compare_exchange(c, c + 1, SeqCst, SeqCst)
                .is_ok()
            {
                return;
            }
            hint::<HINTED>();
        }
    }

    pub fn pop(&self) -> i64 {
        loop {
            let c = self.count.load(SeqCst);
            if c > 0
                && self
                    .count
                    .compare_exchange(c, c - 1, SeqCst, SeqCst)
                    .is_ok()
            {
                self.note(c);
                return c;
            }
            hint::<HINTED>();
        }
    }

    fn note(&self, c: i64) {
        self.taken.with(|taken| taken.push(c));
    }
}

/// Every interleaving of `Noted`, merged.
fn noted<const HINTED: bool>() -> Tree {
    Test::<Noted<HINTED>>::new("noted")
        .thread(&["pop()", "push()"])
        .thread(&["push()", "pop()"])
        .thread(&["push()"])
        .partial_order_reduction(false)
        .max_steps(60)
        .explore()
        .unwrap()
}

/// The states of a tree and its leaves by kind and history.
fn shape(tree: &Tree) -> (u64, BTreeSet<(String, String)>) {
    let leaves = (tree.leaves())
        .map(|(_, leaf, _)| {
            let history = format!("{:?}", leaf.history.events);
            (format!("{:?}", leaf.kind), history)
        })
        .collect();
    (tree.stats().distinct_states, leaves)
}

/// Both loops are retry loops around `std`'s hint as around fgvt's: the same graph of states.
/// Taken by name, `taken.push(c)` inside `pop`'s loop made `push` a function that one
/// operation may call twice, whose loop is then no retry loop.
#[test]
fn a_vec_push_inside_a_loop_is_no_second_call_of_the_objects_push() {
    let hinted = noted::<true>();
    let unseen = noted::<false>();
    assert_eq!(hinted.partial, None);
    assert_eq!(unseen.partial, None);
    assert_eq!(shape(&unseen), shape(&hinted));
}

/// `twice` waits for `x` to be 1 by calling `wait_for` twice: the second call's first load
/// repeats the first call's last, with nothing written between, but it is no turn of the loop.
struct Twice<const HINTED: bool> {
    x: AtomicI64,
}

#[fgvt_sync::operations]
impl<const HINTED: bool> Twice<HINTED> {
    fn new() -> Self {
        Twice {
            x: AtomicI64::new(0),
        }
    }

    pub fn set(&self, v: i64) {
        self.x.store(v, SeqCst);
    }

    pub fn twice(&self) -> i64 {
        self.wait_for(1);
        self.wait_for(1);
        self.x.load(SeqCst)
    }

    fn wait_for(&self, v: i64) {
        while self.x.load(SeqCst) != v {
            hint::<HINTED>();
        }
    }
}

/// The runs of `twice` against `set(1)`, and how each ended.
fn twice<const HINTED: bool>() -> Vec<(LeafKind, Vec<(usize, String)>)> {
    let tree = Test::<Twice<HINTED>>::new("twice")
        .thread(&["twice()"])
        .thread(&["set(1)"])
        .partial_order_reduction(false)
        .max_steps(60)
        .explore()
        .unwrap();
    assert_eq!(tree.partial, None);
    let mut endings: Vec<_> = (tree.leaves())
        .map(|(_, leaf, _)| (leaf.kind, crate::common::returns(&leaf.history)))
        .collect();
    endings.sort_by_key(|e| format!("{e:?}"));
    endings.dedup();
    endings
}

/// Taking the second call's load for a turn would send the thread back into the first call
/// for good: a livelock no run has. Every run ends, with `twice` returning 1, as with
/// fgvt's hint.
#[test]
fn a_second_call_of_a_waiting_function_is_no_turn_of_its_loop() {
    let unseen = twice::<false>();
    assert_eq!(unseen, twice::<true>());
    let returned = vec![(0, "Some(Int(1))".into()), (1, "Some(Unit)".into())];
    assert_eq!(unseen, [(LeafKind::Complete, returned)]);
    let report = Test::<Twice<false>>::new("twice")
        .thread(&["twice()"])
        .thread(&["set(1)"])
        .localize()
        .unwrap()
        .report;
    assert_eq!(report.verdict, Verdict::Linearizable);
}
