//! Waiting loops made one state by their retry hints change no outcome: on small random objects
//! whose operations wait (a loop that retries until what it read says to go on, a helper that
//! waits for a value and is called more than once, loops nested in loops that begin with the
//! same access), the runs that end under merging, where every `spin_loop` sends the thread
//! back to the head of its loop, return exactly what the runs of the unfolded tree return,
//! where every iteration is a new path (cut at a step bound generous enough for every outcome
//! to be reached).
//!
//! A cut back to the wrong place (a loop nested in another taken for it, the second call of a
//! helper taken for the first) merges a thread with one that has another future, and adds or
//! loses results: `fingerprint.rs`'s head rule is what this checks.

use std::cell::RefCell;
use std::collections::BTreeSet;

use fgvt_sync::atomic::{AtomicI64, Ordering::SeqCst};
use fgvt_sync::hint::spin_loop;
use fgvt_sync::report::{CoarseEvent, LeafKind, Limit, Tree};
use fgvt_sync::{unknown, Arg, Call, IntoValue, Object, Test, Value};
use proptest::prelude::*;

/// One instruction of a random operation; `r` is the operation's register.
#[derive(Clone, Debug)]
enum Instr {
    /// `r = 3r + x[i]`: every value read stays in the result.
    Load(usize),
    /// `x[i] = c`
    Store(usize, i64),
    /// `r = 3r + fetch_add(x[i], 1)`
    FetchAdd(usize),
    /// `wait(i, c)`: the one helper that waits until `x[i] == c`, so that every call of it
    /// has the same loop head.
    Wait(usize, i64),
    /// `let entry = r; loop { r = entry; body; if r % 2 == parity { break } spin_loop() }`:
    /// a retry loop whose iterations carry nothing into the next, as the hint promises.
    Retry { body: Vec<Instr>, parity: i64 },
}

thread_local! {
    /// The operations of the object under test: `op(k)` runs the `k`-th.
    static OPS: RefCell<Vec<Vec<Instr>>> = const { RefCell::new(Vec::new()) };
}

/// An object whose operations are the random programs of [`OPS`].
struct Waiting {
    x: [AtomicI64; 2],
}

impl Waiting {
    fn run(&self, program: &[Instr], r: &mut i64) {
        for instr in program {
            match instr {
                Instr::Load(i) => *r = r.wrapping_mul(3).wrapping_add(self.x[*i].load(SeqCst)),
                Instr::Store(i, c) => self.x[*i].store(*c, SeqCst),
                Instr::FetchAdd(i) => {
                    *r = r
                        .wrapping_mul(3)
                        .wrapping_add(self.x[*i].fetch_add(1, SeqCst))
                }
                Instr::Wait(i, c) => self.wait(*i, *c),
                Instr::Retry { body, parity } => {
                    let entry = *r;
                    loop {
                        *r = entry;
                        self.run(body, r);
                        if r.rem_euclid(2) == *parity {
                            break;
                        }
                        spin_loop();
                    }
                }
            }
        }
    }

    fn wait(&self, i: usize, c: i64) {
        while self.x[i].load(SeqCst) != c {
            spin_loop();
        }
    }
}

impl Object for Waiting {
    fn new() -> Self {
        Waiting {
            x: [AtomicI64::new(0), AtomicI64::new(0)],
        }
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match (call.op.as_str(), call.args.as_slice()) {
            ("op", [k]) => {
                let k = usize::try_from(k.int()?).map_err(|e| e.to_string())?;
                let program = OPS.with(|ops| ops.borrow().get(k).cloned());
                let program = program.ok_or_else(|| format!("no operation {k}"))?;
                let mut r = 0;
                self.run(&program, &mut r);
                Ok(r.into_value())
            }
            _ => Err(unknown(call)),
        }
    }
}

fn plain() -> impl Strategy<Value = Instr> {
    let i = 0..2usize;
    prop_oneof![
        i.clone().prop_map(Instr::Load),
        (i.clone(), 0..3i64).prop_map(|(i, c)| Instr::Store(i, c)),
        i.clone().prop_map(Instr::FetchAdd),
        (i, 0..2i64).prop_map(|(i, c)| Instr::Wait(i, c)),
    ]
}

fn instr() -> impl Strategy<Value = Instr> {
    plain().prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            3 => plain(),
            1 => (prop::collection::vec(inner, 1..3), 0..2i64)
                .prop_map(|(body, parity)| Instr::Retry { body, parity }),
        ]
    })
}

/// A random test: three operations of one to three instructions, and two threads of one or
/// two calls of them.
fn test_case() -> impl Strategy<Value = (Vec<Vec<Instr>>, Vec<Vec<usize>>)> {
    let ops = prop::collection::vec(prop::collection::vec(instr(), 1..4), 3);
    let threads = prop::collection::vec(prop::collection::vec(0..3usize, 1..3), 2..3);
    (ops, threads)
}

/// The histories (calls and returns, in order) of the runs that ended, and whether some run
/// was cut by the step bound. Histories, not only results: a cut back to the wrong place
/// often changes no result, but loses or adds an order of calls and returns.
fn outcomes(tree: &Tree) -> (BTreeSet<Vec<String>>, bool) {
    let complete = tree
        .leaves()
        .filter(|(_, leaf, _)| leaf.kind == LeafKind::Complete)
        .map(|(_, leaf, _)| canonical(&leaf.history.events))
        .collect();
    let cut = tree
        .leaves()
        .any(|(_, leaf, _)| leaf.kind == LeafKind::Bounded);
    (complete, cut)
}

/// A history in the explorer's canonical form: within a run of consecutive calls (or of
/// returns), by thread. Paths whose histories differ only there share states, and a shared
/// leaf carries the history of the first path to it.
fn canonical(events: &[CoarseEvent]) -> Vec<String> {
    let key = |e: &CoarseEvent| match e {
        CoarseEvent::Call { thread, .. } => (0, *thread),
        CoarseEvent::Return { thread, .. } => (1, *thread),
    };
    let mut events: Vec<&CoarseEvent> = events.iter().collect();
    events
        .chunk_by_mut(|a, b| key(a).0 == key(b).0)
        .for_each(|run| run.sort_by_key(|e| key(e).1));
    events.iter().map(|e| format!("{e:?}")).collect()
}

/// What each run that ended returned, by thread in each thread's order: what a run without a
/// failed turn that wrote nothing keeps of the run with it (the order of calls and returns
/// between threads may differ).
fn endings(tree: &Tree) -> BTreeSet<Vec<(usize, String)>> {
    (tree.leaves())
        .filter(|(_, leaf, _)| leaf.kind == LeafKind::Complete)
        .map(|(_, leaf, _)| crate::common::returns(&leaf.history))
        .collect()
}

fn calls_of(threads: &[Vec<usize>]) -> Vec<Vec<Call>> {
    threads
        .iter()
        .map(|t| {
            t.iter()
                .map(|k| Call::new("op", vec![Value::Int(*k as i64)]))
                .collect()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn merged_waiting_loops_end_as_the_unfolded_runs_do((ops, threads) in test_case()) {
        OPS.with(|o| *o.borrow_mut() = ops);
        let calls = calls_of(&threads);
        // Every interleaving both ways: merging's loop edges are what this checks.
        let test = || {
            Test::<Waiting>::new("waiting")
                .with_calls(&[], &calls, &[])
                .partial_order_reduction(false)
        };
        // A loop whose every iteration writes something new never comes back to a state:
        // such cases say nothing about the hint, and are left out.
        let merged = test().max_steps(40).max_states(50_000).explore().unwrap();
        let (merged_outcomes, merged_cut) = outcomes(&merged);
        prop_assume!(!merged_cut && merged.partial.is_none());
        // A test whose every run waits forever has no outcome to compare.
        prop_assume!(!merged_outcomes.is_empty());
        // The unfolded reference: every iteration a new path, cut at a step bound. A bound
        // too small hides outcomes that need more iterations, so it grows until the outcomes
        // agree; an outcome that only merging gives is an unsound cut, one it lacks a lost run.
        for bound in [12, 24, 48] {
            let unfolded = test()
                .merge(false)
                .max_steps(bound)
                .max_states(300_000)
                .explore()
                .unwrap();
            prop_assume!(unfolded.partial != Some(Limit::MaxStates));
            let (unfolded_outcomes, cut) = outcomes(&unfolded);
            prop_assert!(
                unfolded_outcomes.is_subset(&merged_outcomes),
                "runs lost by merging: {:?}",
                unfolded_outcomes.difference(&merged_outcomes).collect::<Vec<_>>()
            );
            if unfolded_outcomes == merged_outcomes || !cut {
                prop_assert_eq!(&merged_outcomes, &unfolded_outcomes);
                return Ok(());
            }
        }
        prop_assume!(false, "no bound gave every outcome");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// The partial-order reduced search leaves a run through a retry loop's turn that wrote
    /// nothing to the run without the turn: whenever it decides, its runs end with every result
    /// the full tree's runs end with, and with no other. A turn that wrote (a store before
    /// the retry) is no such turn: another thread may read what it wrote.
    #[test]
    fn reduced_runs_end_as_every_run_does((ops, threads) in test_case()) {
        OPS.with(|o| *o.borrow_mut() = ops);
        let calls = calls_of(&threads);
        let test = || {
            Test::<Waiting>::new("waiting")
                .with_calls(&[], &calls, &[])
                .max_steps(40)
                .max_states(50_000)
        };
        let full = test().partial_order_reduction(false).explore().unwrap();
        let (_, cut) = outcomes(&full);
        prop_assume!(!cut && full.partial.is_none());
        let reduced = test().explore().unwrap();
        prop_assert_eq!(endings(&reduced), endings(&full));
    }
}
