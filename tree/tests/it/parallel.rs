//! Exploration with workers taking steps ahead (`fgvt_tree::parallel`) builds the one-job tree,
//! node for node, whatever the number of workers and their timing.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fgvt_tree::ahead::search_with_workers;
use fgvt_tree::parallel::{with_workers, Parallel};
use fgvt_tree::reduced::{Judging, Reduction};
use fgvt_tree::{
    explore, explore_judging, Call, Choice, ExploreOptions, Fault, History, Leaf, Program,
    Progress, Step, Tree,
};
use proptest::prelude::*;

use crate::toy::{self, Toy};

/// Everything of a tree but how long it took: its nodes in order (each leaf, or its children
/// by step number), its steps, loop edges, limit and state count.
fn describe(tree: &Tree) -> String {
    let mut out = String::new();
    for node in tree.graph.node_indices() {
        match tree.graph.leaf(node) {
            Some(leaf) => out.push_str(&format!("{}: {leaf:?}\n", node.index())),
            None => out.push_str(&format!(
                "{}: {:?}\n",
                node.index(),
                tree.graph.children(node)
            )),
        }
    }
    out.push_str(&format!(
        "events {:?}\nloops {:?}\nroot {:?} partial {:?} states {} stats {:?}\n",
        tree.events,
        tree.loops,
        tree.root,
        tree.partial,
        tree.distinct_states,
        tree.stats()
    ));
    out
}

fn options(max_states: usize) -> ExploreOptions {
    ExploreOptions {
        max_states: Some(max_states),
        max_steps: Some(12),
        ..ExploreOptions::default()
    }
}

fn alone<P: Program>(program: &P, options: &ExploreOptions) -> String {
    describe(&explore(program, options).expect("toys have no init part to fail"))
}

fn pooled<P: Parallel>(program: &P, jobs: usize, options: &ExploreOptions) -> String {
    with_workers(program, jobs, options, |pooled| {
        describe(&explore(pooled, options).expect("toys have no init part to fail"))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn workers_build_the_one_job_tree(toy in toy::toy_program(), jobs in 2..5usize) {
        let options = options(100_000);
        prop_assert_eq!(pooled(&toy, jobs, &options), alone(&toy, &options));
    }

    #[test]
    fn workers_build_the_one_job_tree_of_spin_loops_and_locks(
        toy in toy::spinning_toy_program(),
        jobs in 2..5usize,
    ) {
        let options = options(100_000);
        prop_assert_eq!(pooled(&toy, jobs, &options), alone(&toy, &options));
    }

    /// A bounded-preemption search tells states apart by turn too: one of the workers' table
    /// may be opened several times.
    #[test]
    fn a_preemption_bound_gives_the_same_tree_with_workers(
        toy in toy::spinning_toy_program(),
        bound in 0..3u32,
    ) {
        let options = ExploreOptions {
            max_preemptions: Some(bound),
            ..options(100_000)
        };
        prop_assert_eq!(pooled(&toy, 3, &options), alone(&toy, &options));
    }

    #[test]
    fn a_state_limit_cuts_the_same_tree_with_workers(
        toy in toy::spinning_toy_program(),
        max_states in 1..40usize,
    ) {
        let options = options(max_states);
        prop_assert_eq!(pooled(&toy, 3, &options), alone(&toy, &options));
    }
}

/// Tells the first failing run, as a front end's progress does.
#[derive(Default)]
struct Told(Option<Vec<Choice>>);

impl Progress for Told {
    fn tick(&mut self, _: u64) {}

    fn failing_run(&mut self, schedule: &[Choice]) {
        self.0 = Some(schedule.to_vec());
    }
}

/// The tree of a judged search, the leaves it judged, and the failing run it told.
fn judged<P: Program>(program: &P, options: &ExploreOptions) -> (String, u64, Option<Vec<Choice>>) {
    let mut told = Told::default();
    let mut judged = 0;
    let mut fails = |leaf: &Leaf| {
        judged += 1;
        !toy::passes(&leaf.history)
    };
    let tree = explore_judging(program, options, &mut told, &mut fails).unwrap();
    (describe(&tree), judged, told.0)
}

#[test]
fn a_judged_search_judges_the_same_leaves_and_tells_the_same_run_with_workers() {
    let toy = Toy {
        threads: vec![
            vec![vec![toy::Instr::Write(0, 1), toy::Instr::Read(1)]],
            vec![vec![toy::Instr::Write(1, 1), toy::Instr::Read(0)]],
            vec![vec![toy::Instr::Read(0), toy::Instr::Read(1)]],
        ],
        vars: 2,
    };
    let options = options(100_000);
    let one = judged(&toy, &options);
    assert!(one.2.is_some(), "some run fails: {one:?}");
    for jobs in [2, 3, 8] {
        let many = with_workers(&toy, jobs, &options, |p| judged(p, &options));
        assert_eq!(many, one, "{jobs} jobs");
    }
}

/// A toy with instruments: each step pauses a while and is counted (the main instance's on
/// `steps`, the workers' all on `by_workers`), and an instance whose counter is past
/// `halt_after` halts, as `fgvt-sync`'s workers do at a `static` (the workers take
/// `workers_halt_after`).
struct Instrumented {
    toy: Toy,
    pause: Duration,
    steps: Arc<AtomicUsize>,
    by_workers: Arc<AtomicUsize>,
    halt_after: usize,
    workers_halt_after: usize,
    /// Whether its workers' instances panic at their first step: a bug of the program's own,
    /// not of the user's code (whose panics are faults).
    workers_panic: bool,
    panics: bool,
}

impl Instrumented {
    fn new(toy: Toy) -> Instrumented {
        Instrumented {
            toy,
            pause: Duration::ZERO,
            steps: Arc::new(AtomicUsize::new(0)),
            by_workers: Arc::new(AtomicUsize::new(0)),
            halt_after: usize::MAX,
            workers_halt_after: usize::MAX,
            workers_panic: false,
            panics: false,
        }
    }

    fn taken(&self) -> usize {
        self.steps.load(Ordering::Relaxed)
    }
}

impl Program for Instrumented {
    type State = toy::State;

    fn threads(&self) -> usize {
        self.toy.threads()
    }

    fn initial_state(&self) -> Result<(toy::State, History), Fault> {
        self.toy.initial_state()
    }

    fn step(&self, state: &toy::State, thread: usize) -> Step<toy::State> {
        assert!(!self.panics, "a worker's bug");
        std::thread::sleep(self.pause);
        self.steps.fetch_add(1, Ordering::Relaxed);
        if self.halted() {
            // What a halted worker's steps are: not to be used.
            return Step::Done;
        }
        self.toy.step(state, thread)
    }

    fn finish(&self, state: &toy::State) -> Result<History, Fault> {
        self.toy.finish(state)
    }

    fn blocked_calls(&self, state: &toy::State) -> Vec<(usize, Call)> {
        self.toy.blocked_calls(state)
    }
}

impl Parallel for Instrumented {
    type Recipe = (Toy, Duration, Arc<AtomicUsize>, usize, bool);
    type Learned = ();

    fn recipe(&self) -> Self::Recipe {
        let (toy, pause) = (self.toy.clone(), self.pause);
        (
            toy,
            pause,
            Arc::clone(&self.by_workers),
            self.workers_halt_after,
            self.workers_panic,
        )
    }

    fn worker((toy, pause, by_workers, halt_after, panics): &Self::Recipe) -> Instrumented {
        Instrumented {
            toy: toy.clone(),
            pause: *pause,
            steps: Arc::clone(by_workers),
            by_workers: Arc::clone(by_workers),
            halt_after: *halt_after,
            workers_halt_after: *halt_after,
            workers_panic: *panics,
            panics: *panics,
        }
    }

    fn halted(&self) -> bool {
        self.taken() > self.halt_after
    }

    fn learned(self) {}

    fn absorb(&self, _: ()) {}
}

/// Two threads that each write one variable and read the other, twice, and a third that spins
/// until the first is written: races, a loop edge, and enough states for workers to share.
fn racing_writers_and_a_spinner() -> Toy {
    Toy {
        threads: vec![
            vec![vec![toy::Instr::Write(0, 1), toy::Instr::Read(1)]; 2],
            vec![vec![toy::Instr::Write(1, 1), toy::Instr::Read(0)]; 2],
            vec![vec![toy::Instr::SpinUntil(0, 1), toy::Instr::Write(0, 0)]],
        ],
        vars: 2,
    }
}

#[test]
fn workers_take_steps_ahead_and_the_search_uses_them() {
    let toy = racing_writers_and_a_spinner();
    let slow = Instrumented {
        pause: Duration::from_micros(100),
        ..Instrumented::new(toy)
    };
    let options = options(100_000);
    let reference = alone(&slow, &options);
    let alone_steps = slow.steps.swap(0, Ordering::Relaxed);
    let with = with_workers(&slow, 4, &options, |pooled| {
        // The root is the workers' first state: let them start before the search does.
        let started = Instant::now();
        while slow.by_workers.load(Ordering::Relaxed) == 0 {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "no worker took a step"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        describe(&explore(pooled, &options).unwrap())
    });
    assert_eq!(with, reference);
    let (by_main, by_workers) = (
        slow.steps.load(Ordering::Relaxed),
        slow.by_workers.load(Ordering::Relaxed),
    );
    // Every state the search opens is stepped once, by it or by a worker.
    assert!(
        by_workers > 0 && by_main < alone_steps && by_main + by_workers >= alone_steps,
        "alone {alone_steps} steps; with workers, {by_main} by the search, {by_workers} by them"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn workers_that_halt_leave_the_rest_to_the_search(
        toy in toy::spinning_toy_program(),
        halt_after in 0..30usize,
    ) {
        let options = options(100_000);
        // The search's own instance never halts; its workers do.
        let halting = Instrumented {
            workers_halt_after: halt_after,
            ..Instrumented::new(toy)
        };
        prop_assert_eq!(pooled(&halting, 3, &options), alone(&halting, &options));
    }
}

/// A toy state that leaves to the history whether a thread's operation has started, as
/// `fgvt-sync`'s fingerprints do: two states equal by it may still take different steps
/// (one calls, the other does not), which the search tells apart by the path's history.
#[derive(Clone, Debug)]
struct Forgetful(toy::State);

impl PartialEq for Forgetful {
    fn eq(&self, other: &Forgetful) -> bool {
        let pcs = |s: &toy::State| -> Vec<(usize, usize, Vec<i64>)> {
            s.pcs
                .iter()
                .map(|(op, pc, reads, _)| (*op, *pc, reads.clone()))
                .collect()
        };
        self.0.vars == other.0.vars
            && pcs(&self.0) == pcs(&other.0)
            && self.0.turns == other.0.turns
    }
}

impl Eq for Forgetful {}

impl std::hash::Hash for Forgetful {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.vars.hash(state);
        for (op, pc, reads, _) in &self.0.pcs {
            (op, pc, reads).hash(state);
        }
        self.0.turns.hash(state);
    }
}

/// [`Toy`] with [`Forgetful`] states.
#[derive(Clone)]
struct ForgetsCalls(Toy);

impl Program for ForgetsCalls {
    type State = Forgetful;

    fn threads(&self) -> usize {
        self.0.threads()
    }

    fn initial_state(&self) -> Result<(Forgetful, History), Fault> {
        self.0.initial_state().map(|(s, h)| (Forgetful(s), h))
    }

    fn step(&self, state: &Forgetful, thread: usize) -> Step<Forgetful> {
        self.0.step(&state.0, thread).map_state(Forgetful)
    }

    fn finish(&self, state: &Forgetful) -> Result<History, Fault> {
        self.0.finish(&state.0)
    }

    fn blocked_calls(&self, state: &Forgetful) -> Vec<(usize, Call)> {
        self.0.blocked_calls(&state.0)
    }
}

impl Parallel for ForgetsCalls {
    type Recipe = Toy;
    type Learned = ();

    fn recipe(&self) -> Toy {
        self.0.clone()
    }

    fn worker(toy: &Toy) -> ForgetsCalls {
        ForgetsCalls(toy.clone())
    }

    fn learned(self) {}

    fn absorb(&self, _: ()) {}
}

#[test]
fn states_equal_but_for_the_calls_their_histories_hold_stay_apart_with_workers() {
    // T0 spins until T1 sets v0: the state after its first turn equals the one before it,
    // but for the call the history holds.
    let toy = Toy {
        threads: vec![
            vec![vec![toy::Instr::SpinUntil(0, 1)], vec![toy::Instr::Read(1)]],
            vec![vec![toy::Instr::Write(0, 1)], vec![toy::Instr::Write(1, 1)]],
        ],
        vars: 2,
    };
    let forgetful = ForgetsCalls(toy);
    let options = options(100_000);
    let one = alone(&forgetful, &options);
    for jobs in [1, 2, 4] {
        assert_eq!(pooled(&forgetful, jobs, &options), one, "{jobs} jobs");
    }
}

#[test]
fn a_search_that_panics_stops_its_workers_and_panics() {
    let toy = Toy {
        threads: vec![vec![vec![toy::Instr::Read(0)]; 3]; 3],
        vars: 1,
    };
    let (done, ended) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            with_workers(&toy, 3, &options(100_000), |_| panic!("the search failed"))
        }));
        let _ = done.send(panicked.is_err());
    });
    // Were the workers left waiting for states, the scope would wait for them forever.
    let panicked = ended
        .recv_timeout(Duration::from_secs(60))
        .expect("the search's panic ends it, workers and all");
    assert!(panicked);
}

/// A bounded-preemption search runs on the search's thread alone whatever `jobs` says: the
/// bound prunes steps path by path, and workers would take every step of every state, the
/// pruned ones too. It takes exactly the steps the one-job search takes, and the same tree.
#[test]
fn a_preemption_bounded_search_takes_only_the_steps_it_opens() {
    let toy = racing_writers_and_a_spinner();
    let program = Instrumented::new(toy);
    let bounded = |jobs| ExploreOptions {
        max_preemptions: Some(1),
        jobs,
        ..options(100_000)
    };
    let reference = alone(&program, &bounded(1));
    let alone_steps = program.steps.swap(0, Ordering::Relaxed);
    let tree = describe(&fgvt_tree::parallel::explore(&program, &bounded(4)).unwrap());
    assert_eq!(tree, reference);
    assert_eq!(program.by_workers.load(Ordering::Relaxed), 0);
    assert_eq!(program.steps.load(Ordering::Relaxed), alone_steps);
}

/// What a reduced search of `program` decided, with `workers` workers taking steps ahead and
/// the leaves `fails` says fail: the tree of a pass (as [`describe`] has it), the schedule of
/// a failing run, or why it could not tell.
fn reduction<P: Parallel>(
    program: &P,
    workers: usize,
    options: &ExploreOptions,
    judging: Judging,
    fails: fn(&Leaf) -> bool,
) -> String {
    let mut fails = fails;
    let found = search_with_workers(program, workers, options, judging, &mut fails)
        .expect("toys have no init part to fail");
    match found {
        Reduction::Passed { tree } => format!("passed\n{}", describe(&tree)),
        Reduction::Failed { schedule } => format!("failed {schedule:?}"),
        Reduction::Undecided(why) => format!("undecided {why:?}"),
    }
}

/// The toys' verdict of a leaf: a stuck run fails, and a complete one as [`toy::passes`] says.
fn toy_fails(leaf: &Leaf) -> bool {
    leaf.kind == fgvt_tree::LeafKind::Stuck || !toy::passes(&leaf.history)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Workers take ahead the runs a reduced search comes back for: it takes the same runs,
    /// in the same order, and decides the same, node for node.
    #[test]
    fn a_reduced_search_decides_the_same_with_workers(
        toy in prop_oneof![
            toy::toy_program(),
            toy::retrying_toy_program(),
            toy::waiting_toy_program(),
        ],
        workers in 1..4usize,
        judging in prop_oneof![Just(Judging::Histories), Just(Judging::Endings)],
    ) {
        let options = options(100_000);
        prop_assert_eq!(
            reduction(&toy, workers, &options, judging, toy_fails),
            reduction(&toy, 0, &options, judging, toy_fails)
        );
    }

    /// Under a preemption bound, where the search keeps no sleep sets and wants more threads
    /// taken where a turn began.
    #[test]
    fn a_bounded_reduced_search_decides_the_same_with_workers(
        toy in toy::spinning_toy_program(),
        bound in 0..3u32,
        workers in 1..3usize,
    ) {
        let options = ExploreOptions {
            max_preemptions: Some(bound),
            ..options(100_000)
        };
        prop_assert_eq!(
            reduction(&toy, workers, &options, Judging::Endings, toy_fails),
            reduction(&toy, 0, &options, Judging::Endings, toy_fails)
        );
    }
}

#[test]
fn a_reduced_search_uses_the_runs_workers_take_ahead() {
    let toy = racing_writers_and_a_spinner();
    let slow = Instrumented {
        pause: Duration::from_micros(200),
        ..Instrumented::new(toy)
    };
    let options = options(100_000);
    // No leaf fails: the search takes every run it would.
    let reference = reduction(&slow, 0, &options, Judging::Histories, |_| false);
    assert!(reference.starts_with("passed"), "{reference}");
    let alone_steps = slow.steps.swap(0, Ordering::Relaxed);
    assert_eq!(
        reduction(&slow, 1, &options, Judging::Histories, |_| false),
        reference
    );
    let (by_main, by_workers) = (
        slow.steps.load(Ordering::Relaxed),
        slow.by_workers.load(Ordering::Relaxed),
    );
    // The search asks for as many steps as alone, some of them answered by the worker.
    assert!(
        by_workers > 0 && by_main < alone_steps,
        "alone {alone_steps} steps; with a worker, {by_main} by the search, {by_workers} by it"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn a_reduced_search_whose_workers_halt_takes_the_rest_itself(
        toy in toy::spinning_toy_program(),
        halt_after in 0..30usize,
    ) {
        let options = options(100_000);
        let halting = Instrumented {
            workers_halt_after: halt_after,
            ..Instrumented::new(toy.clone())
        };
prop_assert_eq!(
            reduction(&halting, 2, &options, Judging::Endings, toy_fails),
            reduction(&Instrumented::new(toy), 0, &options, Judging::Endings, toy_fails)
        );
    }
}

#[test]
fn a_reduced_search_whose_worker_panics_ends_and_panics() {
    // Slow enough that the worker finds requests before the search is done.
    let program = Instrumented {
        pause: Duration::from_micros(200),
        workers_panic: true,
        ..Instrumented::new(racing_writers_and_a_spinner())
    };
    let (done, ended) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let panicked = std::panic::catch_unwind(AssertUnwindSafe(|| {
            search_with_workers(
                &program,
                1,
                &options(100_000),
                Judging::Histories,
                &mut |_| false,
            )
        }));
        let _ = done.send(panicked.is_err());
    });
    // Were the search left waiting for the dead worker's answer, it would wait forever.
    let panicked = ended
        .recv_timeout(Duration::from_secs(60))
        .expect("the worker's panic ends the search");
    assert!(panicked, "the worker's panic reaches the caller");
}
