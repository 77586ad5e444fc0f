//! The reduced search checked against the full tree: on random toy programs, the runs it takes
//! come to every outcome the full tree's leaves come to, and its verdict is the full tree's.

use std::collections::BTreeSet;

use fgvt_tree::reduced::{self, Judging, Reduction, Undecided};
use fgvt_tree::{explore, CoarseEvent, ExploreOptions, Leaf, LeafKind, Tree};
use proptest::prelude::*;

use crate::toy::{self, loop_free_toy_program, toy_program, Toy};

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
fn endings(tree: &Tree) -> BTreeSet<(String, Vec<(usize, String)>)> {
    tree.leaves()
        .map(|(_, leaf, _)| {
            let mut returns: Vec<(usize, String)> = (leaf.history.events.iter())
                .filter_map(|e| match e {
                    CoarseEvent::Return { thread, value } => Some((*thread, format!("{value:?}"))),
                    CoarseEvent::Call { .. } => None,
                })
                .collect();
            // Stable: each thread's returns stay in its order.
            returns.sort_by_key(|(thread, _)| *thread);
            (format!("{:?}", leaf.kind), returns)
        })
        .collect()
}

/// The toys' verdict of a leaf: a complete run by [`toy::passes`], a stuck one fails.
fn fails(leaf: &Leaf) -> bool {
    match leaf.kind {
        LeafKind::Complete => !toy::passes(&leaf.history),
        LeafKind::Stuck | LeafKind::Fault => true,
        LeafKind::Bounded => false,
    }
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

    /// Under a preemption bound, the runs it takes come to every outcome of the bounded full
    /// tree, and to none the unbounded tree does not have.
    #[test]
    fn bounded_runs_reach_every_bounded_outcome(toy in toy_program(), bound in 0..3u32) {
        let options = ExploreOptions { max_preemptions: Some(bound), ..ExploreOptions::default() };
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

    /// A failing run is found exactly when the full tree has one, and its schedule leads to a
    /// failing leaf of the full tree.
    #[test]
    fn finds_a_failing_run_exactly_when_one_exists(toy in toy_program()) {
        let full = explore(&toy, &ExploreOptions::default()).unwrap();
        let some_fails = full.leaves().any(|(_, leaf, _)| fails(leaf));
        match reduced::search(&toy, &ExploreOptions::default(), Judging::Histories, &mut fails).unwrap() {
            Reduction::Passed { .. } => prop_assert!(!some_fails),
            Reduction::Failed { schedule } => {
                let (_, node) = full.follow(&schedule).expect("the schedule is a run of the tree");
                let leaf = full.leaf(node).expect("the schedule ends at a leaf");
                prop_assert!(fails(leaf));
            }
            Reduction::Undecided(_) => {}
        }
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
