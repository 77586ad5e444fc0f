//! The scout (iterative preemption bounding) and runs explored first, checked against a
//! brute-force search of the toy programs' states with their preemption counts.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::rc::Rc;
use std::sync::Arc;

use fgvt_tree::{
    choice, explore, explore_judging, scout, search_failing, Choice, CoarseEvent, ExploreOptions,
    Leaf, LeafKind, Program, Progress, Search, Step, Value, SCOUT_PREEMPTIONS,
};
use proptest::prelude::*;

use crate::toy;
use toy::{Instr, State, Toy};

/// Toys where a failure takes the right interleaving: 2 or 3 threads of one operation of
/// reads and writes of two variables (writes of 1..=3), without locks.
fn racy_toy() -> impl Strategy<Value = Toy> {
    let instr = prop_oneof![
        (0..2usize).prop_map(Instr::Read),
        (0..2usize, 1..4i64).prop_map(|(v, x)| Instr::Write(v, x)),
    ];
    prop::collection::vec(prop::collection::vec(instr, 2..=4), 2..=3).prop_map(|threads| Toy {
        threads: threads.into_iter().map(|op| vec![op]).collect(),
        vars: 2,
    })
}

/// Whether the return `value` of `thread`'s operation `op` is a torn read: one variable read
/// twice with different values, which needs another thread's write in between.
fn torn(toy: &Toy, thread: usize, op: usize, value: &Value) -> bool {
    let Value::Tuple(values) = value else {
        return false;
    };
    let vars = toy.threads[thread][op].iter().filter_map(|i| match i {
        Instr::Read(v) => Some(*v),
        _ => None,
    });
    let mut first: [Option<&Value>; 2] = [None; 2];
    vars.zip(values)
        .any(|(v, x)| *first[v].get_or_insert(x) != x)
}

/// What the tests call failing: a stuck or fault leaf, or a complete one with a torn read.
fn fails_in(toy: &Toy, leaf: &Leaf) -> bool {
    match leaf.kind {
        LeafKind::Complete => {
            let mut ops = vec![0; toy.threads.len()];
            leaf.history.events.iter().any(|e| match e {
                CoarseEvent::Return { thread, value } => {
                    let op = ops[*thread];
                    ops[*thread] += 1;
                    value.as_ref().is_some_and(|v| torn(toy, *thread, op, v))
                }
                _ => false,
            })
        }
        LeafKind::Stuck | LeafKind::Fault => true,
        LeafKind::Bounded => false,
    }
}

/// Whether some failing leaf of `toy` is reached by a run with at most `bound` preemptions
/// (a step by another thread while the one that moved last could move), by depth-first
/// search over (state, whether a read was torn, last thread, preemptions).
fn fails_within(toy: &Toy, bound: u32) -> bool {
    type Node = (State, bool, Option<usize>, u32);
    let (initial, _) = toy.initial_state().unwrap();
    let mut seen: HashSet<Node> = HashSet::new();
    let mut stack = vec![(initial, false, None, 0)];
    while let Some(node) = stack.pop() {
        if !seen.insert(node.clone()) {
            continue;
        }
        let (state, was_torn, last, used) = node;
        let steps: Vec<Step<State>> = (0..toy.threads()).map(|t| toy.step(&state, t)).collect();
        let moves = |s: &Step<State>| matches!(s, Step::Moved { .. });
        if !steps.iter().any(moves) {
            let all_done = steps.iter().all(|s| matches!(s, Step::Done));
            if !all_done || was_torn {
                return true;
            }
            continue;
        }
        let last_enabled = last.is_some_and(|l| moves(&steps[l]));
        for (t, step) in steps.into_iter().enumerate() {
            let Step::Moved { state: next, event } = step else {
                continue;
            };
            let used = used + u32::from(last_enabled && last != Some(t));
            if used <= bound {
                // The operation that returns is the one the thread was in before the step.
                let op = state.pcs[t].0;
                let now_torn = event.ret.as_ref().is_some_and(|v| torn(toy, t, op, v));
                stack.push((next, was_torn || now_torn, Some(t), used));
            }
        }
    }
    false
}

/// The preemptions of a run, replayed step by step; panics if a step cannot be taken.
fn preemptions(toy: &Toy, schedule: &[Choice]) -> u32 {
    let (mut state, _) = toy.initial_state().unwrap();
    let mut last: Option<usize> = None;
    let mut used = 0;
    for t in schedule.iter().map(|c| c.thread_id()) {
        if let Some(l) = last {
            let enabled = matches!(toy.step(&state, l), Step::Moved { .. });
            used += u32::from(enabled && l != t);
        }
        let Step::Moved { state: next, .. } = toy.step(&state, t) else {
            panic!("the run names a thread that cannot move: {schedule:?}");
        };
        state = next;
        last = Some(t);
    }
    used
}

fn bounded(bound: u32) -> ExploreOptions {
    ExploreOptions {
        max_preemptions: Some(bound),
        ..ExploreOptions::default()
    }
}

#[test]
fn a_read_between_two_writes_needs_one_preemption() {
    // T0 writes 1 then 0; T1 reads. Only T1 running between T0's writes reads 1, and that
    // run (T0, T1, T0) preempts T0 once.
    let toy = Toy {
        threads: vec![
            vec![vec![Instr::Write(0, 1), Instr::Write(0, 0)]],
            vec![vec![Instr::Read(0)]],
        ],
        vars: 1,
    };
    let mut reads_one = |leaf: &Leaf| leaf.history.to_string().contains("T1:ret (1)");
    let Search::Explored(none) = search_failing(&toy, &bounded(0), &mut reads_one).unwrap() else {
        panic!("no run without a preemption reads 1");
    };
    assert_eq!(none.stats().complete, 2, "T0 then T1, and T1 then T0");
    let Search::Found { schedule, .. } = search_failing(&toy, &bounded(1), &mut reads_one).unwrap()
    else {
        panic!("one preemption reaches the read of 1");
    };
    assert_eq!(schedule, choice::threads(&[0, 1, 0]));
    assert_eq!(
        scout(&toy, &ExploreOptions::default(), &mut reads_one).unwrap(),
        Some(choice::threads(&[0, 1, 0]))
    );
}

#[test]
fn a_run_explored_first_is_the_first_leaf_of_a_partial_tree() {
    // Three threads of two writes: the depth-first search meets T2's early choices last.
    let toy = Toy {
        threads: (0..3)
            .map(|t| vec![vec![Instr::Write(t, 1), Instr::Write(t, 2)]])
            .collect(),
        vars: 3,
    };
    let run: Arc<[Choice]> = Arc::from(choice::threads(&[2, 0, 2, 1, 0, 1]));
    let options = ExploreOptions {
        first: Some(Arc::clone(&run)),
        // Enough for the first path only.
        max_states: Some(1),
        ..ExploreOptions::default()
    };
    let tree = explore(&toy, &options).unwrap();
    assert!(tree.partial.is_some());
    let complete: Vec<_> = tree
        .leaves()
        .filter(|(_, leaf, _)| leaf.kind == LeafKind::Complete)
        .collect();
    assert_eq!(complete.len(), 1, "only the run asked for");
    let (node, ..) = complete[0];
    let (_, followed) = tree.follow(&run).expect("the tree holds the run");
    assert_eq!(followed, node);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// A search bounded to `b` preemptions finds a failing leaf exactly when the brute force
    /// reaches one within `b`, through a run of at most `b` preemptions that does fail; the
    /// scout's run takes the fewest preemptions any failing run takes.
    #[test]
    fn bounded_searches_find_exactly_the_failures_within_their_bound(
        toy in racy_toy(),
        memoize in any::<bool>(),
    ) {
        for bound in 0..=SCOUT_PREEMPTIONS {
            let options = ExploreOptions { memoize, ..bounded(bound) };
            let found = search_failing(&toy, &options, &mut |leaf| fails_in(&toy, leaf)).unwrap();
            match found {
                Search::Found { leaf, schedule, .. } => {
                    prop_assert!(fails_within(&toy, bound), "bound {}: {:?}", bound, schedule);
                    prop_assert!(fails_in(&toy, &leaf));
                    prop_assert!(preemptions(&toy, &schedule) <= bound);
                }
                Search::Explored(tree) => {
                    prop_assert!(tree.partial.is_none());
                    prop_assert!(!fails_within(&toy, bound), "bound {}: missed", bound);
                }
            }
        }
        let scouted = scout(&toy, &ExploreOptions::default(), &mut |leaf| fails_in(&toy, leaf)).unwrap();
        let fewest = (0..=SCOUT_PREEMPTIONS).find(|&b| fails_within(&toy, b));
        prop_assert_eq!(scouted.map(|run| preemptions(&toy, &run)), fewest);
    }

    /// Taking a run first changes the order of the search, not the tree: same counts; and the
    /// first leaf with a verdict is the run's own.
    #[test]
    fn a_run_taken_first_is_met_first_and_changes_no_count(
        toy in racy_toy(),
        memoize in any::<bool>(),
    ) {
        let Some(run) = scout(&toy, &ExploreOptions::default(), &mut |leaf| fails_in(&toy, leaf)).unwrap() else {
            return Ok(());
        };
        let plain = ExploreOptions { memoize, ..ExploreOptions::default() };
        let first = ExploreOptions { first: Some(Arc::from(run.clone())), ..plain.clone() };
        let Search::Found { leaf, schedule, .. } =
            search_failing(&toy, &first, &mut |_| true).unwrap()
        else {
            panic!("every tree has a leaf");
        };
        prop_assert_eq!(&schedule, &run);
        prop_assert!(fails_in(&toy, &leaf));
        let (a, b) = (explore(&toy, &plain).unwrap(), explore(&toy, &first).unwrap());
        let (a, b) = (a.stats(), b.stats());
        prop_assert_eq!(
            (a.nodes, a.leaves, a.complete, a.stuck, a.graph_nodes),
            (b.nodes, b.leaves, b.complete, b.stuck, b.graph_nodes)
        );
    }

    /// An exploration with a judge tells of its first failing leaf as soon as it is made, with
    /// the run that a search stopping there finds, and still explores the whole tree: the same
    /// counts as without a judge.
    #[test]
    fn the_first_failure_is_told_at_once_and_the_tree_is_whole(
        toy in racy_toy(),
        memoize in any::<bool>(),
    ) {
        let options = ExploreOptions { memoize, ..ExploreOptions::default() };
        let verdicts = Rc::new(RefCell::new(Vec::new()));
        let mut told = Told { verdicts: Rc::clone(&verdicts), runs: Vec::new() };
        let tree = explore_judging(&toy, &options, &mut told, &mut |leaf| {
            let fails = fails_in(&toy, leaf);
            verdicts.borrow_mut().push(fails);
            fails
        })
        .unwrap();
        let found = search_failing(&toy, &options, &mut |leaf| fails_in(&toy, leaf)).unwrap();
        let verdicts = verdicts.borrow();
        match found {
            Search::Found { schedule, .. } => {
                // Told once, right after the first failing verdict, with the search's run.
                let first = verdicts.iter().position(|&f| f).unwrap();
                prop_assert_eq!(told.runs, vec![(schedule, first + 1)]);
            }
            Search::Explored(_) => prop_assert!(told.runs.is_empty()),
        }
        let plain = explore(&toy, &options).unwrap();
        let (a, b) = (tree.stats(), plain.stats());
        prop_assert_eq!(
            (a.nodes, a.leaves, a.complete, a.stuck, a.fault, a.graph_nodes),
            (b.nodes, b.leaves, b.complete, b.stuck, b.fault, b.graph_nodes)
        );
    }
}

/// A progress that records the failing runs it is told of, each with how many leaves had been
/// judged then.
struct Told {
    verdicts: Rc<RefCell<Vec<bool>>>,
    runs: Vec<(Vec<Choice>, usize)>,
}

impl Progress for Told {
    fn tick(&mut self, _nodes: u64) {}

    fn failing_run(&mut self, schedule: &[Choice]) {
        self.runs
            .push((schedule.to_vec(), self.verdicts.borrow().len()));
    }
}

/// A toy that counts the executions a re-executing program (fgvt-sync's) would start: it goes
/// on from the state its last step reached, and a step from any other state starts a run
/// from the beginning. Steps that do not move (a thread done or blocked) cost nothing, as
/// fgvt-sync tells them from the state.
struct Resumed {
    toy: Toy,
    paused: RefCell<Option<State>>,
    started: Cell<usize>,
    /// The executions started when the search made its first leaf.
    at_first_leaf: Cell<Option<usize>>,
}

impl Resumed {
    fn new(toy: Toy) -> Resumed {
        Resumed {
            toy,
            paused: RefCell::new(None),
            started: Cell::new(0),
            at_first_leaf: Cell::new(None),
        }
    }
}

impl Program for Resumed {
    type State = State;

    fn threads(&self) -> usize {
        self.toy.threads()
    }

    fn initial_state(&self) -> Result<(State, fgvt_tree::History), fgvt_tree::Fault> {
        let (state, history) = self.toy.initial_state()?;
        *self.paused.borrow_mut() = Some(state.clone());
        Ok((state, history))
    }

    fn step(&self, state: &State, thread: usize) -> Step<State> {
        let step = self.toy.step(state, thread);
        if let Step::Moved { state: next, .. } = &step {
            if self.paused.borrow().as_ref() != Some(state) {
                self.started.set(self.started.get() + 1);
            }
            *self.paused.borrow_mut() = Some(next.clone());
        }
        step
    }

    fn finish(&self, state: &State) -> Result<fgvt_tree::History, fgvt_tree::Fault> {
        if self.at_first_leaf.get().is_none() {
            self.at_first_leaf.set(Some(self.started.get()));
        }
        self.toy.finish(state)
    }

    fn blocked_calls(&self, state: &State) -> Vec<(usize, fgvt_tree::Call)> {
        self.toy.blocked_calls(state)
    }

    // Told from the state, as `fgvt-sync` tells it: no execution.
    fn readiness(&self, state: &State, thread: usize) -> fgvt_tree::Readiness {
        self.toy.readiness(state, thread)
    }

    fn goes_on_from_last_step(&self) -> bool {
        true
    }
}

/// The executions a re-executing program starts before the search's first leaf, worked out
/// from the search's rules: from each state of its first run, every thread the bound does not
/// prune is asked for its step (at the bound, the others only when the thread that moved last
/// cannot go on); of those that move, all but one start an execution, the one the run goes
/// on with: the first that moves in the search's order (unbounded, by number; bounded, the
/// thread that moved last first).
fn starts_before_first_leaf(toy: &Toy, bound: Option<u32>) -> usize {
    let (mut state, _) = toy.initial_state().unwrap();
    let (mut last, mut used, mut starts) = (None::<usize>, 0, 0);
    loop {
        let moves = |t: usize| matches!(toy.step(&state, t), Step::Moved { .. });
        let last_moves = last.is_some_and(moves);
        let at_bound = bound.is_some_and(|b| used >= b);
        let moved: Vec<usize> = (last.into_iter())
            .chain((0..toy.threads()).filter(|&t| Some(t) != last))
            .filter(|&t| !(at_bound && last_moves && Some(t) != last) && moves(t))
            .collect();
        let Some(&next) = moved.first() else {
            return starts;
        };
        starts += moved.len() - 1;
        used += u32::from(last_moves && Some(next) != last);
        let Step::Moved { state: after, .. } = toy.step(&state, next) else {
            unreachable!("it moves");
        };
        state = after;
        // Unbounded, the search keeps no turn: its order is always by number.
        last = bound.map(|_| next);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The search asks a program that goes on from its last step for the steps of a state
    /// last to first, so that the child it opens first goes on from the execution that made
    /// it: before its first leaf it starts only the executions that asking every step from
    /// one state needs, bounded or not (a bounded search used to start one more per state).
    #[test]
    fn the_first_run_goes_on_from_the_execution_that_made_each_of_its_states(
        toy in racy_toy(),
    ) {
        for bound in [None, Some(0), Some(1), Some(2)] {
            let program = Resumed::new(toy.clone());
            let options = ExploreOptions { max_preemptions: bound, ..ExploreOptions::default() };
            explore(&program, &options).unwrap();
            prop_assert_eq!(
                program.at_first_leaf.get(),
                Some(starts_before_first_leaf(&toy, bound)),
                "bound {:?}", bound
            );
        }
    }
}
