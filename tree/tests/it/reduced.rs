//! The reduced search checked against the full tree: on random toy programs, the runs it takes
//! come to every outcome the full tree's leaves come to, and its verdict is the full tree's.

use std::collections::BTreeSet;

use fgvt_tree::reduced::{self, Judging, Reduction, Undecided};
use fgvt_tree::{
    explore, CoarseEvent, ExploreOptions, Fault, History, Leaf, LeafKind, Program, Step, Tree,
};
use proptest::prelude::*;

use crate::toy::{
    self, loop_free_toy_program, retrying_toy_program, toy_program, waiting_toy_program, Toy,
};

/// Every leaf's kind and history, histories in canonical form (calls that follow each other
/// sorted by thread, and returns): the outcomes a verdict can tell apart.
fn outcomes(tree: &Tree) -> BTreeSet<(String, String)> {
    tree.leaves()
        .map(|(_, leaf, _)| {
            let history = crate::explore::canonical(&leaf.history);
            (format!("{:?}", leaf.kind), history)
        })
        .collect()
}

/// Every leaf's kind and what its operations returned, by thread and in each thread's order:
/// the outcomes a verdict that reads no order between threads can tell apart.
fn endings(tree: &Tree) -> BTreeSet<Ending> {
    tree.leaves().map(|(_, leaf, _)| ending(leaf)).collect()
}

/// A leaf's kind and what its operations returned (see [`endings`]).
type Ending = (String, Vec<(usize, String)>);

/// [`endings`] of one leaf.
fn ending(leaf: &Leaf) -> Ending {
    let returns = (leaf.history.returns_by_thread().into_iter())
        .map(|(thread, value)| (thread, format!("{value:?}")))
        .collect();
    (format!("{:?}", leaf.kind), returns)
}

/// An operation, by its thread and its place among the thread's operations.
type Op = (usize, usize);

/// Which operations precede which in `history`: one returned before the other was called.
fn precedences(history: &History) -> BTreeSet<(Op, Op)> {
    let mut calls: Vec<usize> = Vec::new();
    let mut returns: Vec<usize> = Vec::new();
    let mut returned: Vec<Op> = Vec::new();
    let mut pairs = BTreeSet::new();
    for event in &history.events {
        match event {
            CoarseEvent::Call { thread, .. } => {
                calls.resize(calls.len().max(thread + 1), 0);
                let op = (*thread, calls[*thread]);
                calls[*thread] += 1;
                pairs.extend(returned.iter().map(|&before| (before, op)));
            }
            CoarseEvent::Return { thread, .. } => {
                returns.resize(returns.len().max(thread + 1), 0);
                returned.push((*thread, returns[*thread]));
                returns[*thread] += 1;
            }
        }
    }
    pairs
}

/// Checks that for every leaf of `full`, the runs of `reduced` have one with the same ending
/// (kind, and every thread's results) whose operations are ordered at least as much: what a
/// run without a failed retry turn keeps of the run with it (see `fgvt_tree::QuietTurn`).
fn stands_for_every_leaf(reduced: &Tree, full: &Tree) -> Result<(), TestCaseError> {
    let taken: Vec<(Ending, BTreeSet<(Op, Op)>)> = (reduced.leaves())
        .map(|(_, leaf, _)| (ending(leaf), precedences(&leaf.history)))
        .collect();
    for (_, leaf, _) in full.leaves() {
        let (end, order) = (ending(leaf), precedences(&leaf.history));
        let covered = (taken.iter()).any(|(e, o)| *e == end && o.is_superset(&order));
        prop_assert!(covered, "no run taken stands for {:?}", leaf.history);
    }
    Ok(())
}

/// Checks that the reduced search finds a failing run of `toy` exactly when the full tree has
/// one, and that its schedule leads to a failing leaf of the full tree. Returns whether the
/// search decided.
fn finds_a_failing_run_when_one_exists(toy: &Toy) -> Result<bool, TestCaseError> {
    let full = explore(toy, &ExploreOptions::default()).unwrap();
    let some_fails = full.leaves().any(|(_, leaf, _)| fails(leaf));
    let options = ExploreOptions::default();
    match reduced::search(toy, &options, Judging::Histories, &mut fails).unwrap() {
        Reduction::Passed { .. } => prop_assert!(!some_fails),
        Reduction::Failed { schedule } => {
            let (_, node) = full
                .follow(&schedule)
                .expect("the schedule is a run of the tree");
            let leaf = full.leaf(node).expect("the schedule ends at a leaf");
            prop_assert!(fails(leaf));
        }
        Reduction::Undecided(_) => return Ok(false),
    }
    Ok(true)
}

/// The toys' verdict of a leaf: a complete run by [`toy::passes`], a stuck one fails.
fn fails(leaf: &Leaf) -> bool {
    match leaf.kind {
        LeafKind::Complete => !toy::passes(&leaf.history),
        LeafKind::Stuck | LeafKind::Fault => true,
        LeafKind::Bounded => false,
    }
}

/// The reduced search of `toy` under a preemption bound, no leaf failing, judged by what
/// `judging` says: the tree of the runs it took (`None` when it could not tell), and the bounded
/// full tree.
fn bounded_search(toy: &Toy, bound: u32, judging: Judging) -> (Option<Tree>, Tree) {
    let options = toy::bounded(bound);
    let full = explore(toy, &options).unwrap();
    match reduced::search(toy, &options, judging, &mut |_| false).unwrap() {
        Reduction::Passed { tree } => (Some(tree), full),
        Reduction::Failed { .. } => unreachable!("no leaf fails"),
        Reduction::Undecided(_) => (None, full),
    }
}

/// Checks that the runs of `taken`, a bounded reduced search's, come to every ending of the
/// bounded full tree `full` and to none that `toy`'s unbounded tree lacks.
fn reaches_every_bounded_ending(toy: &Toy, taken: &Tree, full: &Tree) -> Result<(), TestCaseError> {
    let all = explore(toy, &ExploreOptions::default()).unwrap();
    let (taken, bounded, every) = (endings(taken), endings(full), endings(&all));
    prop_assert!(
        bounded.is_subset(&taken),
        "{:?} not in {:?}",
        bounded,
        taken
    );
    prop_assert!(taken.is_subset(&every));
    Ok(())
}

/// The reduced search with no leaf failing: the tree of the runs it took, or why it could not
/// tell.
fn reduced_tree(toy: &Toy, judging: Judging) -> Result<Tree, Undecided> {
    match reduced::search(toy, &ExploreOptions::default(), judging, &mut |_| false).unwrap() {
        Reduction::Passed { tree, .. } => Ok(tree),
        Reduction::Failed { .. } => unreachable!("no leaf fails"),
        Reduction::Undecided(why) => Err(why),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Without spin loops the search always decides, and its runs come to exactly the
    /// outcomes of the full tree.
    #[test]
    fn loop_free_runs_reach_every_outcome(toy in loop_free_toy_program()) {
        let full = explore(&toy, &ExploreOptions::default()).unwrap();
        let reduced = reduced_tree(&toy, Judging::Histories).expect("a loop-free toy is decided");
        prop_assert_eq!(outcomes(&reduced), outcomes(&full));
        prop_assert!(reduced.stats().leaves <= full.stats().leaves);
    }

    /// With spin loops, whenever the search decides, its runs come to the outcomes of the
    /// full tree.
    #[test]
    fn spinning_runs_reach_every_outcome_when_decided(toy in toy_program()) {
        let full = explore(&toy, &ExploreOptions::default()).unwrap();
        if let Ok(reduced) = reduced_tree(&toy, Judging::Histories) {
            prop_assert_eq!(outcomes(&reduced), outcomes(&full));
        }
    }

    /// Judged on their endings, the runs it takes come to every ending of the full tree: every
    /// kind of leaf with every thread's results.
    #[test]
    fn runs_judged_on_endings_reach_every_ending(toy in loop_free_toy_program()) {
        let full = explore(&toy, &ExploreOptions::default()).unwrap();
        let reduced = reduced_tree(&toy, Judging::Endings).expect("a loop-free toy is decided");
        prop_assert_eq!(endings(&reduced), endings(&full));
        let histories = reduced_tree(&toy, Judging::Histories).unwrap();
        prop_assert!(reduced.stats().leaves <= histories.stats().leaves);
    }

    /// With retry loops, a run through a turn that failed is left to the run without it: the
    /// runs taken are runs of the full tree, come to every ending of it, and stand for each of
    /// its leaves with one whose operations are ordered at least as much.
    #[test]
    fn runs_without_failed_turns_stand_for_those_with(toy in retrying_toy_program()) {
        let full = explore(&toy, &ExploreOptions::default()).unwrap();
        let reduced = reduced_tree(&toy, Judging::Histories).expect("a toy without spins is decided");
        prop_assert!(outcomes(&reduced).is_subset(&outcomes(&full)));
        prop_assert_eq!(endings(&reduced), endings(&full));
        stands_for_every_leaf(&reduced, &full)?;
        let on_endings = reduced_tree(&toy, Judging::Endings).expect("decided on endings too");
        prop_assert_eq!(endings(&on_endings), endings(&full));
    }

    /// With retry loops, a failing run is found exactly when the full tree has one.
    #[test]
    fn finds_a_failing_run_past_retry_loops_exactly_when_one_exists(toy in retrying_toy_program()) {
        let decided = finds_a_failing_run_when_one_exists(&toy)?;
        prop_assert!(decided, "a toy without spins is decided");
    }

    /// Under a preemption bound, the runs it takes come to every outcome of the bounded full
    /// tree, and to none the unbounded tree does not have.
    #[test]
    fn bounded_runs_reach_every_bounded_outcome(toy in toy_program(), bound in 0..3u32) {
        let options = toy::bounded(bound);
        let full = explore(&toy, &options).unwrap();
        let all = explore(&toy, &ExploreOptions::default()).unwrap();
        match reduced::search(&toy, &options, Judging::Histories, &mut |_| false).unwrap() {
            Reduction::Passed { tree, .. } => {
                let (taken, bounded, every) = (outcomes(&tree), outcomes(&full), outcomes(&all));
                prop_assert!(bounded.is_subset(&taken), "{:?} not in {:?}", bounded, taken);
                prop_assert!(taken.is_subset(&every));
            }
            Reduction::Failed { .. } => unreachable!("no leaf fails"),
            Reduction::Undecided(_) => {}
        }
    }

    /// Under a preemption bound, with retry loops: the search decides (a failed turn that the
    /// bound keeps the others from following is no livelock), and its runs come to every ending
    /// of the bounded full tree, to none the unbounded tree lacks, and stand for each bounded
    /// leaf with one whose operations are ordered at least as much.
    #[test]
    fn bounded_runs_without_failed_turns_stand_for_every_bounded_leaf(
        toy in retrying_toy_program(),
        bound in 0..3u32,
    ) {
        let (taken, full) = bounded_search(&toy, bound, Judging::Histories);
        let Some(taken) = taken else {
            return Err(TestCaseError::fail("a bounded toy without spins is decided"));
        };
        reaches_every_bounded_ending(&toy, &taken, &full)?;
        stands_for_every_leaf(&taken, &full)?;
    }

    /// Under a preemption bound, with waiting loops whose turns fail alone: whenever the search
    /// decides, its runs come to every ending of the bounded full tree and to none the unbounded
    /// tree lacks.
    #[test]
    fn bounded_runs_past_waiting_loops_reach_every_bounded_ending_when_decided(
        toy in waiting_toy_program(),
        bound in 0..3u32,
    ) {
        if let (Some(taken), full) = bounded_search(&toy, bound, Judging::Endings) {
            reaches_every_bounded_ending(&toy, &taken, &full)?;
        }
    }

    /// A failing run is found exactly when the full tree has one, and its schedule leads to a
    /// failing leaf of the full tree.
    #[test]
    fn finds_a_failing_run_exactly_when_one_exists(toy in toy_program()) {
        finds_a_failing_run_when_one_exists(&toy)?;
    }
}

/// Two threads that each write their own variable `k` times, in one operation: the full tree
/// has C(2k, k) runs, and they differ only in whether one operation returned before the other
/// was called (T0's first, T1's first, or neither): the search takes one run of each.
#[test]
fn independent_writers_take_one_run() {
    use toy::Instr::Write;
    let k = 4;
    let toy = Toy {
        threads: vec![vec![vec![Write(0, 1); k]], vec![vec![Write(1, 1); k]]],
        vars: 2,
    };
    let full = explore(&toy, &ExploreOptions::default()).unwrap();
    let reduced = reduced_tree(&toy, Judging::Histories).unwrap();
    assert_eq!(full.stats().leaves, 70);
    assert_eq!(reduced.stats().leaves, 3);
    assert_eq!(outcomes(&reduced), outcomes(&full));
    // Judged on their endings alone, the runs are all one.
    assert_eq!(
        reduced_tree(&toy, Judging::Endings).unwrap().stats().leaves,
        1
    );
}

/// A toy that hides which steps end a failed retry turn: the reduced search then takes every
/// run through one.
struct Unaware(Toy);

impl Program for Unaware {
    type State = toy::State;

    fn threads(&self) -> usize {
        self.0.threads()
    }

    fn initial_state(&self) -> Result<(toy::State, History), Fault> {
        self.0.initial_state()
    }

    fn step(&self, state: &toy::State, thread: usize) -> Step<toy::State> {
        self.0.step(state, thread)
    }

    fn finish(&self, state: &toy::State) -> Result<History, Fault> {
        self.0.finish(state)
    }

    fn blocked_calls(&self, state: &toy::State) -> Vec<(usize, fgvt_tree::Call)> {
        self.0.blocked_calls(state)
    }
}

/// Three threads that each add 1 to one variable by a compare-and-swap loop: told which turns
/// failed, the search leaves the runs through them to the runs without, and takes one run per
/// order of the three successful compare-and-swaps and the reads before them.
#[test]
fn failed_turns_are_left_to_the_runs_without_them() {
    let toy = Toy {
        threads: vec![vec![vec![toy::Instr::CasAdd(0)]]; 3],
        vars: 1,
    };
    let full = explore(&toy, &ExploreOptions::default()).unwrap();
    let aware = reduced_tree(&toy, Judging::Endings).unwrap();
    let unaware = match reduced::search(
        &Unaware(toy.clone()),
        &ExploreOptions::default(),
        Judging::Endings,
        &mut |_| false,
    )
    .unwrap()
    {
        Reduction::Passed { tree } => tree,
        _ => unreachable!("no leaf fails, and the toy has no spin"),
    };
    assert_eq!(endings(&aware), endings(&full));
    assert_eq!(endings(&unaware), endings(&full));
    // Each thread's compare-and-swap replaced 0, 1 or 2: the six orders of the three.
    assert_eq!(endings(&full).len(), 6);
    assert!(
        aware.stats().leaves < unaware.stats().leaves,
        "{} runs told of failed turns, {} not",
        aware.stats().leaves,
        unaware.stats().leaves
    );
}

/// A thread that writes, then waits for another thread's write, beside that thread: under a
/// preemption bound the waiting turns that the bound keeps the writer from following are cut
/// runs, as in the bounded full tree, not a livelock the search cannot tell (the turn's first
/// step and its check are both states where the writer would preempt). The search decides,
/// and its runs come to the bounded tree's endings.
#[test]
fn a_wait_the_bound_cuts_is_no_livelock() {
    use toy::Instr::{Await, Write};
    let toy = Toy {
        threads: vec![
            vec![vec![Write(1, 1), Await(0, 1)]],
            vec![vec![Write(0, 1)]],
        ],
        vars: 2,
    };
    for bound in 0..2 {
        let (taken, full) = bounded_search(&toy, bound, Judging::Endings);
        let taken = taken.unwrap_or_else(|| panic!("bound {bound}: undecided"));
        assert_eq!(endings(&taken), endings(&full));
    }
}

/// Under a preemption bound, a race reversed by a thread that the state before the first step
/// already takes, but that the bound keeps from moving there, is reversed by the second step's
/// own thread: T2's read before T1's compare-and-swap, which T0 (whose `Acquire` comes between)
/// cannot start without preempting T1. The run T2, T1, T0 has no preemption, and T0 reads 1
/// only there.
#[test]
fn a_race_is_reversed_by_its_own_thread_under_a_bound() {
    use toy::Instr::{Acquire, Await, CasAdd, Read};
    let toy = Toy {
        threads: vec![
            vec![vec![Acquire(2), Read(0)]],
            vec![vec![CasAdd(0), Await(0, 1)]],
            vec![vec![Read(0)]],
        ],
        vars: 3,
    };
    let (taken, full) = bounded_search(&toy, 0, Judging::Endings);
    let taken = taken.expect("no leaf fails, and every wait ends");
    assert_eq!(endings(&taken), endings(&full));
}
