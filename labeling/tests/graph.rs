//! Labels on the explored state graph, checked against references (issue 11).
//!
//! * Loop-free programs: the graph explorer (every state once, shared) and the unfolded
//!   reference (path mode, nothing shared) give the same counts, labels and CDRS words.
//! * Programs with spin loops and locks: every state's category agrees with a brute-force
//!   reference that unfolds the tree to a depth beyond the number of states; and the verdict
//!   (some run fails) agrees with the path-mode explorer.

use std::collections::{BTreeMap, HashSet};

use fgvt_labeling::cdrs::{find_cdrs, CdrsOptions};
use fgvt_labeling::labels::{label_tree, Category, Labeling, LeafOutcome};
use fgvt_labeling::pattern::Pattern;
use fgvt_tree::{explore, ExploreOptions, Leaf, LeafKind, NodeId, Tree};
use proptest::prelude::*;

#[path = "../../tree/tests/toy/mod.rs"]
mod toy;
use toy::{loop_free_toy_program, passes, spinning_toy_program, Reference, Toy};

fn outcome(leaf: &Leaf) -> LeafOutcome {
    match leaf.kind {
        LeafKind::Complete if passes(&leaf.history) => LeafOutcome::Pass,
        LeafKind::Bounded => LeafOutcome::Unknown,
        _ => LeafOutcome::Fail,
    }
}

fn explored(toy: &Toy, graph: bool) -> Option<(Tree, Labeling)> {
    let options = ExploreOptions {
        memoize: graph,
        max_states: Some(100_000),
        ..ExploreOptions::default()
    };
    let tree = explore(toy, &options).unwrap();
    if tree.partial.is_some() {
        return None;
    }
    let labeling = label_tree(&tree, |_, leaf| outcome(leaf));
    Some((tree, labeling))
}

/// CDRS words with their failing-leaf counts, in a canonical order.
fn cdrs_words(tree: &Tree, labeling: &Labeling) -> BTreeMap<String, u64> {
    let cdrs = find_cdrs(tree, labeling, &Pattern::default(), &CdrsOptions::default());
    assert!(!cdrs.truncated);
    let mut words = BTreeMap::new();
    for g in &cdrs.groups {
        *words.entry(g.pattern()).or_insert(0) += g.failing_leaves;
    }
    words
}

/// Every node reachable from the root with one schedule (thread choices) reaching it.
fn schedules(tree: &Tree) -> Vec<(NodeId, Vec<usize>)> {
    let mut out = vec![(tree.root, Vec::new())];
    let mut seen = HashSet::from([tree.root]);
    let mut i = 0;
    while i < out.len() {
        let (node, schedule) = out[i].clone();
        for (event, child) in tree.children(node) {
            if seen.insert(child) {
                let mut s = schedule.clone();
                s.push(event.thread);
                out.push((child, s));
            }
        }
        i += 1;
    }
    out
}

fn category(verdicts: (bool, bool)) -> Option<Category> {
    match verdicts {
        (true, true) => Some(Category::Mix),
        (true, false) => Some(Category::Ok),
        (false, true) => Some(Category::Err),
        (false, false) => None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn on_loop_free_programs_the_graph_equals_the_unfolded_tree(toy in loop_free_toy_program()) {
        let Some((plain, plain_labels)) = explored(&toy, false) else { return Ok(()) };
        let (graph, graph_labels) = explored(&toy, true).expect("no bigger than the plain tree");
        prop_assert!(graph.loops.is_empty());
        let (p, g) = (plain.stats(), graph.stats());
        prop_assert_eq!(
            (p.nodes, p.complete, p.stuck, p.fault, p.bounded, p.max_depth),
            (g.nodes, g.complete, g.stuck, g.fault, g.bounded, g.max_depth)
        );
        prop_assert_eq!(plain_labels.unfolded_counts(), graph_labels.unfolded_counts());
        prop_assert_eq!(
            (plain_labels.passing_leaves(), plain_labels.failing_leaves()),
            (graph_labels.passing_leaves(), graph_labels.failing_leaves())
        );
        prop_assert_eq!(
            plain_labels.label(plain.root),
            graph_labels.label(graph.root)
        );
        prop_assert_eq!(cdrs_words(&plain, &plain_labels), cdrs_words(&graph, &graph_labels));
    }

    #[test]
    fn with_spin_loops_every_category_agrees_with_the_brute_force_reference(toy in spinning_toy_program()) {
        let Some((graph, labels)) = explored(&toy, true) else { return Ok(()) };
        let reference = Reference::new(&toy);
        for (node, schedule) in schedules(&graph) {
            let state = reference.follow(&schedule);
            prop_assert_eq!(
                labels.category(node),
                category(reference.verdicts(state)),
                "node {:?} after {:?} ({} loop edges)", node, schedule, graph.loops.len()
            );
        }
        // The verdict the path-mode explorer gives.
        if let Some((plain, plain_labels)) = explored(&toy, false) {
            prop_assert_eq!(
                plain_labels.failing_leaves() > 0,
                labels.category(graph.root).is_some_and(|c| c != Category::Ok),
                "verdicts differ; plain tree has {} nodes", plain.stats().nodes
            );
        }
    }
}

/// A spin loop the path-cut tree labels wrongly: T1 spins on `v0 == 1` while T0 sets it.
#[test]
fn a_spin_loop_shares_one_state_and_takes_a_loop_edge() {
    use toy::Instr::*;
    let toy = Toy {
        threads: vec![vec![vec![Write(0, 1)]], vec![vec![SpinUntil(0, 1)]]],
        vars: 3,
    };
    let (graph, labels) = explored(&toy, true).unwrap();
    // The start: T1's spin returns to it (a self-loop), T0's write leaves it.
    assert_eq!(graph.loops.len(), 1);
    let spin = &graph.loops[0];
    assert_eq!(spin.from, spin.to, "the failed read changes nothing");
    assert_eq!(spin.step.thread, 1);
    // Runs: T0 writes first, or T1 spins once (or any number of times) before. Each loop is
    // cut at its return, so two complete leaves are counted; a self-loop decides nothing, so
    // the spinning state has one counted child (T0's write).
    assert_eq!(graph.stats().complete, 2);
    assert_eq!(graph.stats().loop_edges, 1);
    assert_eq!(labels.counted_children(spin.from), 1);
}
