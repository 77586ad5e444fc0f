//! Exploration checked against counts worked out by hand or by formula, on a toy program
//! language small enough to generate at random.

use std::collections::BTreeMap;

use fgvt_tree::{
    explore, search_failing, Call, CoarseEvent, ExploreOptions, Fault, History, LeafKind, Program,
    Search, Step, Tree,
};
use proptest::prelude::*;

use crate::toy;
use toy::{loop_free_toy_program, passes, toy_program, Instr, State, Toy};

fn plain() -> ExploreOptions {
    ExploreOptions {
        memoize: false,
        ..ExploreOptions::default()
    }
}

/// Every leaf of the unfolded tree with its history, counted by brute-force path enumeration.
/// Histories are compared in canonical form (runs of calls, and of returns, in thread order):
/// a shared leaf carries the history of the first path that reached it, and another path to
/// it may have taken concurrent calls in another order.
fn leaf_histories(tree: &Tree) -> BTreeMap<(String, String), u64> {
    let mut out = BTreeMap::new();
    let mut stack = vec![tree.root];
    while let Some(n) = stack.pop() {
        match tree.leaf(n) {
            Some(leaf) => {
                *out.entry((format!("{:?}", leaf.kind), canonical(&leaf.history)))
                    .or_insert(0) += 1
            }
            None => stack.extend(tree.children(n).into_iter().map(|(_, c)| c)),
        }
    }
    out
}

pub(crate) fn canonical(history: &History) -> String {
    let mut events = history.events.clone();
    let is_call = |e: &CoarseEvent| matches!(e, CoarseEvent::Call { .. });
    let mut start = 0;
    while start < events.len() {
        let kind = is_call(&events[start]);
        let end = (start..events.len())
            .find(|&i| is_call(&events[i]) != kind)
            .unwrap_or(events.len());
        events[start..end].sort_by_key(|e| e.thread());
        start = end;
    }
    History {
        events,
        ..history.clone()
    }
    .to_string()
}

fn multinomial(ns: &[usize]) -> u64 {
    let mut result: u64 = 1;
    let mut total = 0u64;
    for &n in ns {
        for k in 1..=n as u64 {
            total += 1;
            result = result * total / k;
        }
    }
    result
}

fn straight_line(ns: &[usize]) -> Toy {
    let threads = ns
        .iter()
        .enumerate()
        .map(|(t, &n)| vec![(0..n).map(|i| Instr::Write(t % 2, i as i64)).collect()])
        .collect();
    Toy { threads, vars: 2 }
}

#[test]
fn two_writes_against_one_read_give_three_interleavings() {
    let toy = Toy {
        threads: vec![
            vec![vec![Instr::Write(0, 1), Instr::Write(0, 2)]],
            vec![vec![Instr::Read(0)]],
        ],
        vars: 1,
    };
    let tree = explore(&toy, &plain()).unwrap();
    let s = tree.stats();
    assert_eq!((s.complete, s.leaves, s.max_depth), (3, 3, 3));
    // root; after w1: {w2 -> read -> leaf, read -> w2 -> leaf}; after read: w1 -> w2 -> leaf.
    assert_eq!(s.nodes, 1 + (1 + 2 + 2) + 3);
    let reads: Vec<String> = leaf_histories(&tree)
        .keys()
        .map(|(_, h)| h.clone())
        .collect();
    assert!(reads.iter().any(|h| h.contains("T1:ret (0)")));
    assert!(reads.iter().any(|h| h.contains("T1:ret (1)")));
    assert!(reads.iter().any(|h| h.contains("T1:ret (2)")));
}

#[test]
fn a_lock_holder_that_waits_forever_gives_a_stuck_leaf() {
    // T0 takes the lock and spins on a flag nobody sets; T1 wants the lock. Either T0 spins
    // with T1 blocked before its first event, or T1 completes first and T0 spins alone.
    let toy = Toy {
        threads: vec![
            vec![vec![Instr::Acquire(0), Instr::SpinUntil(1, 1)]],
            vec![vec![Instr::Acquire(0)]],
        ],
        vars: 2,
    };
    for options in [plain(), ExploreOptions::default()] {
        let tree = explore(&toy, &options).unwrap();
        let s = tree.stats();
        assert_eq!(s.stuck, 2, "{s:?}");
        assert_eq!(s.complete, 0);
        let stuck: Vec<String> = leaf_histories(&tree).into_keys().map(|(_, h)| h).collect();
        // The thread blocked before its first event shows as a pending call.
        assert!(
            stuck.iter().any(|h| h == "T0:op0() T1:op0() (stuck)"),
            "{stuck:?}"
        );
        assert!(
            stuck
                .iter()
                .any(|h| h == "T1:op0() T1:ret () T0:op0() (stuck)"),
            "{stuck:?}"
        );
    }
}

#[test]
fn a_two_lock_deadlock_gives_stuck_leaves() {
    let toy = Toy {
        threads: vec![
            vec![vec![
                Instr::Acquire(0),
                Instr::Acquire(1),
                Instr::Release(1),
                Instr::Release(0),
            ]],
            vec![vec![
                Instr::Acquire(1),
                Instr::Acquire(0),
                Instr::Release(0),
                Instr::Release(1),
            ]],
        ],
        vars: 2,
    };
    let tree = explore(&toy, &plain()).unwrap();
    let s = tree.stats();
    // Deadlock when each thread holds its first lock. Otherwise the thread X that got both
    // releases its second lock, then either releases its first or lets the other thread take
    // that second lock first: two completions per choice of X.
    assert_eq!(s.stuck, 2);
    assert_eq!(s.complete, 4);
}

#[test]
fn an_endless_local_loop_gives_a_bounded_leaf() {
    let toy = Toy {
        threads: vec![vec![vec![Instr::Write(0, 1), Instr::LocalLoop]]],
        vars: 1,
    };
    let tree = explore(&toy, &plain()).unwrap();
    assert_eq!(tree.stats().bounded, 1);
    assert_eq!(tree.stats().complete, 0);
    assert_eq!(tree.partial, Some(fgvt_tree::Limit::StepBudget));
}

#[test]
fn max_steps_bounds_a_spin_that_never_repeats_a_state_and_marks_the_tree_partial() {
    // A spin on a variable the other thread keeps changing would be cut; here the spinner's
    // condition never holds and nothing else runs, so the state repeats and it is cut instead:
    // a livelock. With one more writer the path is long but finite.
    let toy = Toy {
        threads: vec![vec![vec![Instr::SpinUntil(0, 1)]]],
        vars: 1,
    };
    let tree = explore(&toy, &plain()).unwrap();
    assert_eq!(tree.stats().stuck, 1, "a lone spinner is a livelock");
    assert!(tree.partial.is_none());

    let options = ExploreOptions {
        max_steps: Some(3),
        ..plain()
    };
    let writes: Vec<Instr> = (0..10).map(|i| Instr::Write(0, 10 + i)).collect();
    let toy = Toy {
        threads: vec![vec![writes]],
        vars: 1,
    };
    let tree = explore(&toy, &options).unwrap();
    assert_eq!(tree.stats().bounded, 1);
    assert_eq!(tree.partial, Some(fgvt_tree::Limit::MaxSteps));
}

#[test]
fn max_states_gives_a_partial_tree_with_cut_leaves() {
    let options = ExploreOptions {
        max_states: Some(10),
        ..plain()
    };
    let tree = explore(&straight_line(&[3, 3, 3]), &options).unwrap();
    assert_eq!(tree.partial, Some(fgvt_tree::Limit::MaxStates));
    // The states never explored are cut leaves: no operation's path was bounded.
    assert!(tree.stats().cut > 0);
    assert_eq!(tree.stats().bounded, 0);
    assert!(tree.leaves().any(|(_, leaf, _)| leaf.is_cut()));
}

#[test]
fn a_raised_interrupt_stops_exploration_like_a_limit() {
    static FLAG: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let interrupt = fgvt_tree::Interrupt::new(&FLAG);
    let options = ExploreOptions {
        interrupt: Some(interrupt),
        ..plain()
    };
    let whole = explore(&straight_line(&[2, 2]), &options).unwrap();
    assert_eq!(whole.partial, None, "not raised: the whole tree");
    interrupt.raise();
    assert!(interrupt.is_raised());
    let cut = explore(&straight_line(&[2, 2]), &options).unwrap();
    assert_eq!(cut.partial, Some(fgvt_tree::Limit::Interrupted));
    let stats = cut.stats();
    assert_eq!((stats.leaves, stats.cut, stats.complete), (1, 1, 0));
    assert_eq!(fgvt_tree::Limit::Interrupted.name(), "interrupted");
    assert_eq!(
        fgvt_tree::Limit::from_name("interrupted"),
        Some(fgvt_tree::Limit::Interrupted)
    );
}

#[test]
fn schedules_and_leaf_indices_name_the_same_paths() {
    let toy = straight_line(&[2, 1]);
    let tree = explore(&toy, &ExploreOptions::default()).unwrap();
    for i in 0..tree.stats().leaves {
        let (path, leaf) = tree.nth_leaf(i).unwrap();
        let schedule: Vec<usize> = path.iter().map(|e| e.thread).collect();
        let (_, again) = tree.follow(&schedule).unwrap();
        assert_eq!(leaf, again);
    }
    assert!(tree.nth_leaf(tree.stats().leaves).is_none());
    assert_eq!(tree.follow(&[1, 1]).unwrap_err(), 1, "T1 has one step only");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn straight_line_programs_have_multinomially_many_leaves(ns in prop::collection::vec(1usize..5, 1..4)) {
        let toy = straight_line(&ns);
        for options in [plain(), ExploreOptions::default()] {
            let s = explore(&toy, &options).unwrap().stats();
            prop_assert_eq!(s.complete, multinomial(&ns));
            prop_assert_eq!(s.leaves, s.complete);
            prop_assert_eq!(s.max_depth, ns.iter().sum::<usize>() as u64);
        }
    }

    /// On loop-free programs the state graph (memoized) and the unfolded tree (plain) agree
    /// exactly; with spin loops they may not (see `labeling/tests/graph.rs`).
    #[test]
    fn memoized_and_plain_exploration_agree_without_loops(toy in loop_free_toy_program()) {
        let options = |memoize| ExploreOptions { memoize, max_states: Some(200_000), ..ExploreOptions::default() };
        let plain = explore(&toy, &options(false)).unwrap();
        prop_assume!(plain.partial.is_none());
        let memo = explore(&toy, &options(true)).unwrap();
        let (p, m) = (plain.stats(), memo.stats());
        prop_assert_eq!(
            (p.nodes, p.complete, p.stuck, p.fault, p.bounded, p.max_depth),
            (m.nodes, m.complete, m.stuck, m.fault, m.bounded, m.max_depth)
        );
        prop_assert!(m.graph_nodes <= p.graph_nodes);
        prop_assert_eq!(leaf_histories(&plain), leaf_histories(&memo));
        let unfolded: u64 = memo.leaves().map(|(_, _, m)| m).sum();
        prop_assert_eq!(unfolded, m.leaves);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A judge of leaves sees every leaf with the history the tree keeps for it, one `Arc` per
    /// distinct history: what lets a judge key its verdicts by the `Arc`'s address.
    #[test]
    fn a_judge_sees_one_shared_history_per_distinct_history(
        toy in toy_program(),
        memoize in any::<bool>(),
    ) {
        let options = ExploreOptions { memoize, max_states: Some(20_000), ..ExploreOptions::default() };
        let mut judged: Vec<std::sync::Arc<History>> = Vec::new();
        let tree = fgvt_tree::explore_judging(&toy, &options, &mut (), &mut |leaf| {
            judged.push(leaf.history.clone());
            false
        })
        .unwrap();
        let mut by_history: BTreeMap<String, usize> = BTreeMap::new();
        for history in &judged {
            let address = std::sync::Arc::as_ptr(history) as usize;
            let first = *by_history.entry(history.to_string()).or_insert(address);
            prop_assert_eq!(first, address, "two Arcs for {}", history);
        }
        for (_, leaf, _) in tree.leaves().filter(|(_, leaf, _)| leaf.kind != LeafKind::Bounded) {
            let address = std::sync::Arc::as_ptr(&leaf.history) as usize;
            prop_assert_eq!(by_history.get(&leaf.history.to_string()), Some(&address));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// The verdict-only search finds a failing leaf exactly when the whole tree has one, and
    /// what it finds fails; it stops there, so it meets no more states than exploring all.
    #[test]
    fn searching_for_a_failing_leaf_finds_one_iff_the_tree_has_one(
        toy in toy_program(),
        memoize in any::<bool>(),
    ) {
        let options = ExploreOptions { memoize, max_states: Some(100_000), ..ExploreOptions::default() };
        let tree = explore(&toy, &options).unwrap();
        prop_assume!(tree.partial.is_none());
        let fails = |leaf: &fgvt_tree::Leaf| leaf.kind == LeafKind::Fault || !passes(&leaf.history);
        let failing = tree
            .leaves()
            .any(|(_, leaf, _)| leaf.kind != LeafKind::Bounded && fails(leaf));
        let mut seen = 0;
        let search = search_failing(&toy, &options, &mut |leaf| {
            seen += 1;
            fails(leaf)
        })
        .unwrap();
        match search {
            Search::Found { leaf, distinct_states, .. } => {
                prop_assert!(failing, "found a failing leaf in a tree without one");
                prop_assert!(fails(&leaf));
                prop_assert!(distinct_states <= tree.distinct_states);
            }
            Search::Explored(all) => {
                prop_assert!(!failing, "missed a failing leaf");
                let (a, t) = (all.stats(), tree.stats());
                prop_assert_eq!((a.nodes, a.leaves, a.graph_nodes), (t.nodes, t.leaves, t.graph_nodes));
            }
        }
        prop_assert!(seen >= 1, "every tree has a leaf");
    }
}

#[test]
fn leaf_kinds_are_reported() {
    let toy = straight_line(&[1]);
    let tree = explore(&toy, &ExploreOptions::default()).unwrap();
    let (_, leaf) = tree.nth_leaf(0).unwrap();
    assert_eq!(tree.leaf(leaf).unwrap().kind, LeafKind::Complete);
}

/// A [`Toy`] whose steps are slow once thread 1 has moved before thread 0: the first path
/// (thread 0 first) is quick, the rest of the tree is not.
struct SlowLater(Toy);

impl Program for SlowLater {
    type State = State;

    fn threads(&self) -> usize {
        self.0.threads()
    }

    fn initial_state(&self) -> Result<(State, History), Fault> {
        self.0.initial_state()
    }

    fn step(&self, s: &State, t: usize) -> Step<State> {
        let t0_idle = s.pcs[0].0 == 0 && !s.pcs[0].3;
        let t1_moved = s.pcs[1].0 > 0 || s.pcs[1].3;
        if t0_idle && t1_moved {
            std::thread::sleep(std::time::Duration::from_millis(30));
        }
        self.0.step(s, t)
    }

    fn finish(&self, s: &State) -> Result<History, Fault> {
        self.0.finish(s)
    }

    fn blocked_calls(&self, s: &State) -> Vec<(usize, Call)> {
        self.0.blocked_calls(s)
    }
}

#[test]
fn a_timeout_stops_a_small_tree_that_gets_slow_after_its_first_leaf() {
    let options = ExploreOptions {
        timeout: Some(std::time::Duration::from_millis(5)),
        ..plain()
    };
    let tree = explore(&SlowLater(straight_line(&[2, 2])), &options).unwrap();
    assert_eq!(tree.partial, Some(fgvt_tree::Limit::Timeout));
    assert!(tree.stats().cut > 0);
    assert!(
        tree.stats().complete > 0,
        "the quick first path is complete"
    );
}

/// `SlowLater`'s tree explored with a report budget of 5 ms, judged by `fails`.
fn explored_within_a_report_budget(fails: &mut dyn FnMut(&fgvt_tree::Leaf) -> bool) -> Tree {
    let options = ExploreOptions {
        report_budget: Some(std::time::Duration::from_millis(5)),
        ..plain()
    };
    let toy = SlowLater(straight_line(&[2, 2]));
    fgvt_tree::explore_judging(&toy, &options, &mut (), fails).unwrap()
}

#[test]
fn the_report_budget_stops_exploring_that_long_after_the_first_failing_leaf() {
    // Every leaf fails: the quick first path fails at once, and the slow rest is cut.
    let tree = explored_within_a_report_budget(&mut |_| true);
    assert_eq!(tree.partial, Some(fgvt_tree::Limit::ReportBudget));
    assert!(tree.stats().complete > 0, "the failing first path is kept");
    assert!(tree.stats().cut > 0);
}

#[test]
fn without_a_failing_leaf_the_report_budget_never_starts() {
    let tree = explored_within_a_report_budget(&mut |_| false);
    assert_eq!(tree.partial, None);
    let whole = explore(&straight_line(&[2, 2]), &plain()).unwrap();
    assert_eq!(tree.stats().leaves, whole.stats().leaves);
    // Nor without a judge: a plain exploration knows of no failure.
    let options = ExploreOptions {
        report_budget: Some(std::time::Duration::ZERO),
        ..plain()
    };
    let unjudged = explore(&SlowLater(straight_line(&[2, 2])), &options).unwrap();
    assert_eq!(unjudged.partial, None);
}

/// A thread that spins on a variable nobody will set while the other waits for a lock it
/// holds itself: a livelock, within any preemption bound. The waiting thread cannot move, so
/// leaving the spinner for it is no step the bound leaves out; were it counted as one, every
/// state of the spin would be cut and the tree would have no leaf at all (at bound 0, before).
#[test]
fn a_spin_beside_a_blocked_thread_is_a_livelock_within_any_bound() {
    let toy = Toy {
        threads: vec![
            vec![vec![Instr::Acquire(1)], vec![Instr::Acquire(1)]],
            vec![vec![Instr::SpinUntil(0, 1)]],
        ],
        vars: 2,
    };
    for bound in 0..3 {
        let tree = explore(&toy, &toy::bounded(bound)).unwrap();
        assert!(tree.stats().stuck > 0, "bound {bound}: no livelock found");
    }
}
