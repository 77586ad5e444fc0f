//! Loops around `std`'s hint in the functions of an `#[fgvt_sync::operations]` impl: the
//! runtime knows whether the accesses of a turn were made in one call of the loop's function,
//! where the text tells calls by name only.

use std::collections::BTreeSet;

use fgvt_sync::atomic::{AtomicI64, Ordering::*};
use fgvt_sync::report::{LeafKind, Tree};
use fgvt_sync::{Silent, Test, Verdict};

use crate::common::shape;
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

/// How `Twice::twice` enters its waiting loop twice: by calling the function that holds it
/// twice, or from a `for` around it, or by calling a closure that holds it twice, or from a
/// `while let` that takes the next item of a work list, or by a macro's two expansions.
const CALLED_TWICE: u8 = 0;
const IN_A_FOR: u8 = 1;
const IN_A_CLOSURE: u8 = 2;
const IN_A_WORK_LIST: u8 = 3;
const IN_A_MACRO: u8 = 4;

/// A waiting loop written once, in a macro, and expanded wherever it is invoked.
macro_rules! wait_for_one {
    ($x:expr, $hinted:expr) => {
        while $x.load(SeqCst) != 1 {
            if $hinted {
                fgvt_sync::hint::spin_loop();
            } else {
                std::hint::spin_loop();
            }
        }
    };
}

/// `twice` waits for `x` to be 1 twice over (`HOW`): the second entry's first load repeats the
/// first entry's last, with nothing written between, but it is no turn of the loop. `HINTED`:
/// whose spin hint the loop calls.
struct Twice<const HOW: u8, const HINTED: bool> {
    x: AtomicI64,
}

#[fgvt_sync::operations]
impl<const HOW: u8, const HINTED: bool> Twice<HOW, HINTED> {
    fn new() -> Self {
        Twice {
            x: AtomicI64::new(0),
        }
    }

    pub fn set(&self, v: i64) {
        self.x.store(v, SeqCst);
    }

    pub fn twice(&self) -> i64 {
        match HOW {
            CALLED_TWICE => {
                self.wait_for(1);
                self.wait_for(1);
            }
            IN_A_FOR => {
                for _ in 0..2 {
                    while self.x.load(SeqCst) != 1 {
                        hint::<HINTED>();
                    }
                }
            }
            IN_A_WORK_LIST => {
                let mut todo = vec![1, 1];
                while let Some(v) = todo.pop() {
                    while self.x.load(SeqCst) != v {
                        hint::<HINTED>();
                    }
                }
            }
            IN_A_MACRO => {
                wait_for_one!(self.x, HINTED);
                wait_for_one!(self.x, HINTED);
            }
            _ => {
                let wait = || {
                    while self.x.load(SeqCst) != 1 {
                        hint::<HINTED>();
                    }
                };
                wait();
                wait();
            }
        }
        self.x.load(SeqCst)
    }

    fn wait_for(&self, v: i64) {
        while self.x.load(SeqCst) != v {
            hint::<HINTED>();
        }
    }
}

/// How the runs of `twice` against `set(1)` end: each kind of leaf with what its operations
/// returned.
fn twice<const HOW: u8, const HINTED: bool>() -> BTreeSet<(String, Vec<(usize, String)>)> {
    let tree = Test::<Twice<HOW, HINTED>>::new("twice")
        .thread(&["twice()"])
        .thread(&["set(1)"])
        .partial_order_reduction(false)
        .max_steps(60)
        .explore()
        .unwrap();
    (tree.leaves())
        .map(|(_, leaf, _)| {
            let returns = crate::common::returns(&leaf.history);
            (format!("{:?}", leaf.kind), returns)
        })
        .collect()
}

/// Every run ends, with `twice` returning 1. Taking the second call's load for a turn would
/// send the thread back into the first call for good: a livelock no run has. In a function
/// the attribute marks, the runtime tells the two calls apart, and the loop within one call
/// is a retry loop: the same runs as with fgvt's hint.
#[test]
fn a_second_call_of_a_waiting_function_is_no_turn_of_its_loop() {
    let unseen = twice::<CALLED_TWICE, false>();
    assert_eq!(unseen, twice::<CALLED_TWICE, true>());
    let complete = format!("{:?}", LeafKind::Complete);
    let returned = vec![(0, "Some(Int(1))".into()), (1, "Some(Unit)".into())];
    assert_eq!(unseen, BTreeSet::from([(complete, returned)]));
    let report = Test::<Twice<CALLED_TWICE, false>>::new("twice")
        .thread(&["twice()"])
        .thread(&["set(1)"])
        .localize()
        .unwrap()
        .report;
    assert_eq!(report.verdict, Verdict::Linearizable);
}

/// Entered again by a `for`, a closure's second call, a work list's next item or a macro
/// expanded twice, the loop is no retry loop at all
/// with `std`'s hint: its spins are cut (bounded leaves), never a stuck run, which would be a
/// false alarm. With fgvt's hint every run completes.
#[test]
fn a_loop_entered_again_by_a_for_or_a_closure_is_no_retry_loop() {
    let kinds = |runs: BTreeSet<(String, Vec<(usize, String)>)>| -> BTreeSet<String> {
        runs.into_iter().map(|(kind, _)| kind).collect()
    };
    for (unseen, hinted) in [
        (twice::<IN_A_FOR, false>(), twice::<IN_A_FOR, true>()),
        (
            twice::<IN_A_CLOSURE, false>(),
            twice::<IN_A_CLOSURE, true>(),
        ),
        (
            twice::<IN_A_WORK_LIST, false>(),
            twice::<IN_A_WORK_LIST, true>(),
        ),
        (twice::<IN_A_MACRO, false>(), twice::<IN_A_MACRO, true>()),
    ] {
        let complete = format!("{:?}", LeafKind::Complete);
        assert_eq!(kinds(hinted), BTreeSet::from([complete.clone()]));
        let unseen = kinds(unseen);
        assert!(
            !unseen.contains(&format!("{:?}", LeafKind::Stuck)),
            "{unseen:?}"
        );
        assert!(unseen.contains(&complete), "{unseen:?}");
    }
}
