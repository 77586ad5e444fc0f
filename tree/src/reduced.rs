//! A verdict search that runs one execution of each class of equivalent executions: a
//! partial-order reduction for programs whose every run passes.
//!
//! [`explore`](crate::explore()) takes every enabled thread's step from every state. Two steps
//! of different threads that touch different objects (or only read one) *commute*: taken in
//! either order they reach the same state, and every run that differs from another only by the
//! order of such steps has the same outcome. Those runs form one class (a Mazurkiewicz trace),
//! and a verdict needs one run of each. The search here is *source-DPOR* (Abdulla, Aronis,
//! Jonsson and Sagonas, "Optimal Dynamic Partial Order Reduction", POPL 2014) with sleep sets:
//!
//! * it runs one execution to its end, and for every pair of steps in it that do not commute
//!   and are adjacent in its happens-before order (a *race*), it makes sure the state before the
//!   first of them also tries a thread that can start the reversed order (one of the *initials*
//!   of what comes between, followed by the second step);
//! * a thread whose every step from a state was explored sleeps in the children that its step
//!   commutes with (their runs from there were already explored in another order).
//!
//! What does not commute is decided by [`Dep`]: the steps' [`Footprint`]s, and two more rules
//! that keep a verdict's inputs: when leaves are judged on their histories
//! ([`Judging::Histories`]), a step that carries a return is ordered with another thread's step
//! that carries a call (whether one operation precedes the other), unless the call carries a
//! clock (under weak memory, where happens-before orders operations). Two `SeqCst` accesses to
//! different objects commute under weak memory too: the memory model is an execution graph
//! (`fgvt_memory`), and what a later access may read or where a store may go is decided by the
//! graph (its `psc` included), not by the order its events were added in; the two added in
//! either order with the same ways give the same graph, and a graph consistent with both has
//! its part with either one alone consistent too (RC11 holds for every prefix closed under
//! program order and reads-from). A fence commutes with every other thread's step, `SeqCst`
//! too, and adds nothing to its step's footprint: it reads and writes nothing, so it chooses
//! nothing, and as its thread's last event it is the source of no `hb`, `scb` or `psc` edge
//! (those leave a fence only through what its own thread does after it). So no step of another
//! thread added after it can close a cycle through it, nor one added before it be made
//! inconsistent by it, and the two orders give the same graph.
//! Under weak memory a step's ways (the stores a load could read) are all taken, as
//! [`explore`](crate::explore()) takes them, but for a read of an older store than the latest
//! that a newer store racing with it missed, `SeqCst` or not: the run with the read before that
//! store stands for it, with the same graph ([`crate::StoreAccess`]). A blocked thread's step
//! races with the steps that block it: [`Program::readiness`] says what it would touch.
//!
//! Two runs need not both be taken when one is the other without a retry loop's turn that
//! failed and wrote nothing ([`crate::QuietTurn`], told by [`Program::turn_ended`]): the run
//! ends at such a turn's last step, as GenMC blocks an execution whose spin loop's turn read
//! nothing new, and the other threads move instead.
//!
//! Under a preemption bound ([`ExploreOptions::max_preemptions`]) the search is bounded
//! partial-order reduction (Coons, Musuvathi and McKinley, OOPSLA 2013): no run past the bound,
//! no sleep sets, each race reversed by the second step's own thread (classic DPOR's rule, which
//! that paper's proof uses, where source sets would take any initial), and each reversal also
//! tried where the thread's turn began. Its runs come to every outcome of the bounded full
//! exploration, with one exception under weak memory: a read of an older store than the latest
//! is left to the run with the read before the newer store it missed, as without a bound, and
//! that run may take one preemption more than the bound. (Taking every such read instead made
//! concurrent-queue's loom test, whose turns mix `Relaxed` and `SeqCst`, too large to finish.)
//!
//! # What the result means
//!
//! Every run's outcome is that of a run of its class, so when every run the search takes
//! passes, every run of the program passes: [`Reduction::Passed`] carries the tree of the runs
//! taken (their nodes, not the program's states), whose leaves all pass. A failing run found is
//! only reported as [`Reduction::Failed`]: the caller explores in full, to label the whole tree.
//! Whatever the search cannot vouch for it does not decide ([`Reduction::Undecided`]): a limit,
//! a bounded leaf, a run that returns to a state on its path while no other thread moves (a
//! livelock, which only the state graph's components tell apart), more than 64 threads. The
//! property tests compare its verdicts with the full tree's on random programs.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::Arc;
use std::time::Instant;

use crate::choice::Choice;
use crate::event::{Event, Footprint};
use crate::explore::ExploreOptions;
use crate::graph::{EventId, NodeId};
use crate::history::ThreadId;
use crate::history_tree::{HistoryId, HistoryTree};
use crate::leaf::Leaf;
use crate::limit::{Bound, Limit};
use crate::model::{Exploration, Tree, TreeBuilder};
use crate::program::{Fault, Program, Readiness, Step};

/// What a reduced search decided.
pub enum Reduction {
    /// Every run passes: the tree of the runs taken, one per class of equivalent runs (a
    /// leaf each), every leaf passing.
    Passed {
        /// The runs taken, as a tree.
        tree: Tree,
    },
    /// A run fails: the one found, as thread choices from the root.
    Failed {
        /// The failing run's schedule.
        schedule: Vec<Choice>,
    },
    /// The search cannot tell: explore in full.
    Undecided(Undecided),
}

/// Why a reduced search left the verdict to a full exploration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Undecided {
    /// A limit of the options stopped it.
    Limit(Limit),
    /// A step hit a bound (an operation's steps, a step's budget, a spin without hint, a
    /// weak-memory bound): the run's verdict is unknown.
    Bounded(Bound),
    /// Every step a thread could take from a state returned to a state on the run's path.
    Livelock,
    /// More threads than the search's sets hold.
    Threads(usize),
}

/// What a leaf's verdict reads, which decides which runs a reduced search must keep apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judging {
    /// Its history: two runs that order a return and another thread's call differently are
    /// told apart (one operation precedes the other in one of them only).
    Histories,
    /// Only how the run ended (complete, stuck, a fault): every history is accepted (a loom
    /// model's, whose assertions are the whole judge), and calls and returns order nothing.
    Endings,
}

/// The most threads a reduced search handles (its thread sets are 64-bit masks).
pub const MAX_THREADS: usize = 64;

/// What decides whether a step commutes with another thread's: what it touches, the call or
/// return it carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dep {
    /// What shared memory the step touches.
    pub footprint: Footprint,
    /// Whether it emits a call.
    pub call: bool,
    /// Whether it emits a return.
    pub ret: bool,
}

impl Dep {
    /// The dependence of `event`'s step, for leaves judged as `judging` says.
    ///
    /// A call with a clock (under weak memory, [`Event::seen`]) is ordered with no return:
    /// the clock, not the interleaving, says which operations precede it
    /// ([`crate::Operation::precedes`]), and the clock is made of happens-before, which the
    /// steps' own conflicts already order. Two runs that differ only in where such a call falls
    /// among other threads' returns give the same verdict.
    pub fn of(event: &Event, judging: Judging) -> Dep {
        let histories = judging == Judging::Histories;
        Dep {
            footprint: event.footprint,
            call: histories && event.call.is_some() && event.seen.is_none(),
            ret: histories && event.ret.is_some(),
        }
    }

    /// A step nothing is known of: it commutes with none. (A blocked step's footprint may be
    /// known, and the rest not.)
    const UNKNOWN: Dep = Dep {
        footprint: Footprint::Everything,
        call: true,
        ret: true,
    };

    /// Whether two steps of different threads may not commute. A return and a call are
    /// ordered (which came first decides whether one operation precedes the other); two calls,
    /// or two returns, are not (a history's verdict does not depend on their order, and the
    /// explorer's states do not tell such histories apart either). Nor are two `SeqCst`
    /// accesses to different objects (see the module docs; `litmus.rs` in fgvt-sync's tests
    /// checks it against the axioms on random programs that are mostly `SeqCst`).
    pub fn conflicts(self, other: Dep) -> bool {
        self.footprint.conflicts(other.footprint)
            || (self.call && other.ret)
            || (self.ret && other.call)
    }

    /// What either of two steps does: a thread's step that may go several ways.
    fn join(self, other: Dep) -> Dep {
        Dep {
            footprint: self.footprint.join(other.footprint),
            call: self.call || other.call,
            ret: self.ret || other.ret,
        }
    }
}

/// Threads as a bit set.
type Threads = u64;

fn bit(thread: ThreadId) -> Threads {
    1 << thread
}

/// Searches `program` for a failing run, taking one run of each class of equivalent runs
/// (see the module docs); `fails` judges each leaf with a verdict, reading what `judging`
/// says.
///
/// The options' limits (states, timeout, memory, interrupt, an operation's steps) stop it
/// undecided. Under a preemption bound (`max_preemptions`) it takes no run with more
/// preemptions, keeps no sleep sets, and adds the backtracking points bounded partial-order
/// reduction needs (see the module docs); a run to take first (`first`) is not its business.
pub fn search<P: Program>(
    program: &P,
    options: &ExploreOptions,
    judging: Judging,
    fails: &mut dyn FnMut(&Leaf) -> bool,
) -> Result<Reduction, Fault> {
    search_with(program, options, judging, fails, None)
}

/// Whether the run without `turn`, a retry loop's quiet turn, stands for the run with it, as
/// far as leaves judged as `judging` says can tell (see [`crate::QuietTurn`]): a search ends
/// its run at such a turn's last step.
pub(crate) fn skips(turn: crate::QuietTurn, judging: Judging) -> bool {
    !turn.synchronized || judging == Judging::Endings
}

/// Who takes steps ahead of a reduced search (see [`crate::ahead`]): told of every step the
/// search is bound to ask the program for later, when it comes back to a state of its run.
pub(crate) trait Lookahead<S> {
    /// The search will ask for `thread`'s step `way` from `state`, the state at position
    /// `depth` of its current run, once it is done with what follows it on the run.
    fn will_take(&self, state: &S, thread: ThreadId, way: u32, depth: usize);
}

/// [`search`], telling `ahead` of the steps it will take.
pub(crate) fn search_with<P: Program>(
    program: &P,
    options: &ExploreOptions,
    judging: Judging,
    fails: &mut dyn FnMut(&Leaf) -> bool,
    ahead: Option<&dyn Lookahead<P::State>>,
) -> Result<Reduction, Fault> {
    let threads = program.threads();
    if threads > MAX_THREADS {
        return Ok(Reduction::Undecided(Undecided::Threads(threads)));
    }
    let probe = options.max_memory.map(|budget| budget.used);
    let memory_before = probe.map(|used| used());
    let (initial, base) = program.initial_state()?;
    let mut search = Search {
        program,
        options,
        judging,
        fails,
        ahead,
        threads,
        frames: Vec::new(),
        clocks: Vec::new(),
        on_path: HashMap::default(),
        raced: Vec::new(),
        real: HistoryTree::new(base, false),
        tree: TreeBuilder::new(),
        started: Instant::now(),
        hasher: foldhash::fast::FixedState::default(),
    };
    let outcome = search.run(initial);
    Ok(match outcome {
        Ok(root) => {
            let facts = Exploration {
                partial: None,
                distinct_states: search.tree.node_count() as u64,
                elapsed: search.started.elapsed(),
            };
            let held = probe.map(|used| used());
            let mut tree = search.tree.finish(root, facts);
            // Measured as the full exploration measures its peak.
            tree.memory = probe
                .zip(held)
                .zip(memory_before)
                .map(|((used, held), before)| held.max(used()).saturating_sub(before));
            Reduction::Passed { tree }
        }
        Err(Stop::Failed(schedule)) => Reduction::Failed { schedule },
        Err(Stop::Undecided(why)) => Reduction::Undecided(why),
    })
}

/// Why a search stopped before its end.
enum Stop {
    Failed(Vec<Choice>),
    Undecided(Undecided),
}

/// What asking a thread for its step at a state gave, kept until the step is taken.
enum Asked<S> {
    NotYet,
    /// The thread has run all its operations.
    Done,
    /// It cannot move here.
    Blocked,
    /// Its step (way 0), not taken yet.
    Ready(Step<S>),
    /// Taken (or being taken) from this state.
    Taken,
}

/// The step a frame's run goes on with.
struct Taken {
    thread: ThreadId,
    way: u32,
    ways: u32,
    /// This way's event, for the edge to the child and the races with later steps.
    event: Arc<Event>,
    dep: Dep,
    /// What the thread's step does in any of the ways taken so far.
    all_ways: Dep,
    /// Whether a way went back to a state on the path: it explored nothing, so the thread
    /// must not sleep in its siblings (their runs are not covered by its).
    looped: bool,
    /// Under weak memory, the store this way made (see [`crate::StoreAccess`]).
    made: Option<u32>,
}

/// A state of the current run, with what the search still has to do from it.
struct Frame<S> {
    state: S,
    history: HistoryId,
    asked: Vec<Asked<S>>,
    /// Threads to take from here: the one first taken, and those races added.
    backtrack: Threads,
    /// Threads whose every way was taken from here.
    done: Threads,
    /// Threads whose step from here needs no run: each was taken from an ancestor, with
    /// everything since commuting with it.
    sleep: Vec<(ThreadId, Dep)>,
    /// Threads done here, with what their steps did: they sleep in the next children.
    finished: Vec<(ThreadId, Dep)>,
    taken: Option<Taken>,
    /// Steps of each thread's current operation, along the run.
    op_steps: Vec<u32>,
    /// Edges to the children's nodes and leaves.
    edges: Vec<(EventId, NodeId)>,
    /// Whether some run went on from here to a leaf or a child.
    progressed: bool,
    /// The thread whose step led here, if it can go on from here: a step of another thread
    /// preempts it.
    preemptible: Option<ThreadId>,
    /// Preemptions on the run up to here.
    preemptions: u32,
    /// Whether a run from here was cut: a preemption bound kept a thread from being taken
    /// here, or a child's every run was cut or covered by a sleeping thread's, or by a run
    /// without a retry loop's turn.
    pruned: bool,
    /// Whether a retry loop's turn that began here, alone, was skipped (see
    /// [`Search::skip_turn`]).
    spun: bool,
    /// Whether the preemption bound kept a thread from being taken here: the runs from here
    /// go on where the bounded search does not look.
    bound_cut: bool,
}

impl<S> Frame<S> {
    fn sleeping(&self) -> Threads {
        self.sleep.iter().fold(0, |set, (t, _)| set | bit(*t))
    }
}

struct Search<'a, P: Program> {
    program: &'a P,
    options: &'a ExploreOptions,
    judging: Judging,
    fails: &'a mut dyn FnMut(&Leaf) -> bool,
    /// Who takes ahead the steps the search will come back for, if anyone.
    ahead: Option<&'a dyn Lookahead<P::State>>,
    threads: usize,
    /// The current run's states, root first.
    frames: Vec<Frame<P::State>>,
    /// The vector clock of the step taken from each frame (`threads` entries each): entry `t`
    /// is one more than the position of the last step of thread `t` that happens before it.
    clocks: Vec<u32>,
    /// The frames' states by hash, to find a step back onto the run's path.
    on_path: HashMap<u64, Vec<usize>>,
    /// The positions of the steps that race with the step last recorded (see
    /// [`Search::scan`]).
    raced: Vec<usize>,
    real: HistoryTree,
    tree: TreeBuilder,
    started: Instant,
    hasher: foldhash::fast::FixedState,
}

impl<P: Program> Search<'_, P> {
    fn run(&mut self, initial: P::State) -> Result<NodeId, Stop> {
        let root = Frame {
            state: initial,
            history: HistoryTree::ROOT,
            asked: Vec::new(),
            backtrack: 0,
            done: 0,
            sleep: Vec::new(),
            finished: Vec::new(),
            taken: None,
            op_steps: vec![0; self.threads],
            edges: Vec::new(),
            progressed: false,
            preemptible: None,
            preemptions: 0,
            pruned: false,
            spun: false,
            bound_cut: false,
        };
        if let Some(leaf) = self.open(root, None)? {
            return Ok(leaf);
        }
        loop {
            if let Some(limit) = self.limit_hit() {
                return Err(Stop::Undecided(Undecided::Limit(limit)));
            }
            let top = self.frames.len() - 1;
            // The next way of the step being taken, if it has one.
            let next_way = (self.frames[top].taken.as_ref())
                .filter(|taken| taken.way + 1 < taken.ways)
                .map(|taken| (taken.thread, taken.way + 1));
            if let Some((thread, way)) = next_way {
                let step = self.program.step_way(&self.frames[top].state, thread, way);
                self.take(top, thread, way, step)?;
                continue;
            }
            let frame = &mut self.frames[top];
            if let Some(taken) = frame.taken.take() {
                frame.done |= bit(taken.thread);
                if !taken.looped {
                    frame.finished.push((taken.thread, taken.all_ways));
                }
            }
            let open = frame.backtrack & !frame.done & !frame.sleeping();
            if open == 0 {
                if let Some(node) = self.close()? {
                    return Ok(node);
                }
                continue;
            }
            let thread = open.trailing_zeros() as ThreadId;
            if self.over_bound(&self.frames[top], thread) {
                // A thread that cannot move here leaves nothing out (as in the full
                // exploration).
                let ready = self.program.readiness(&self.frames[top].state, thread);
                let frame = &mut self.frames[top];
                frame.done |= bit(thread);
                if ready == Readiness::Ready {
                    frame.pruned = true;
                    frame.bound_cut = true;
                }
                continue;
            }
            let frame = &mut self.frames[top];
            let asked = std::mem::replace(&mut frame.asked[thread], Asked::Taken);
            let step = match asked {
                Asked::Ready(step) => step,
                Asked::NotYet => self.program.step(&frame.state, thread),
                Asked::Done | Asked::Blocked | Asked::Taken => {
                    frame.asked[thread] = asked;
                    Step::Blocked
                }
            };
            match step {
                Step::Done | Step::Blocked => {
                    // A race asked for a thread that cannot move here: any thread that can
                    // may start the reversed order, so all those are taken.
                    let frame = &mut self.frames[top];
                    frame.asked[thread] = match step {
                        Step::Done => Asked::Done,
                        _ => Asked::Blocked,
                    };
                    frame.done |= bit(thread);
                    self.want(top, self.able(top));
                }
                step => self.take(top, thread, 0, step)?,
            }
        }
    }

    /// Whether taking `thread` from `frame` would preempt more often than the options'
    /// bound allows.
    fn over_bound(&self, frame: &Frame<P::State>, thread: ThreadId) -> bool {
        let Some(bound) = self.options.max_preemptions else {
            return false;
        };
        let preempts = frame.preemptible.is_some_and(|last| last != thread);
        frame.preemptions + u32::from(preempts) > bound
    }

    /// Makes the state at position `j` take `threads`. Under a preemption bound, so does the
    /// state where the run last switched threads before it (Coons, Musuvathi and McKinley,
    /// "Bounded partial-order reduction", OOPSLA 2013, as loom does): taking a thread at `j`
    /// may preempt past the bound where taking it at the start of that thread's turn would
    /// not.
    fn want(&mut self, j: usize, threads: Threads) {
        self.tell_ahead(j, threads);
        self.frames[j].backtrack |= threads;
        if self.options.max_preemptions.is_none() || j == 0 {
            return;
        }
        let switch = (1..j)
            .rev()
            .find(|&k| self.taken(k).thread != self.taken(k - 1).thread)
            .unwrap_or(0);
        self.tell_ahead(switch, threads);
        self.frames[switch].backtrack |= threads;
    }

    /// Tells whoever takes steps ahead which of `threads`, wanted at position `j`, the search
    /// will ask the program for when it comes back there: those new to the frame's backtrack
    /// set that are neither done nor asleep there, not asked yet, and within the preemption
    /// bound ([`Search::run`] takes each of them).
    fn tell_ahead(&self, j: usize, threads: Threads) {
        let Some(ahead) = self.ahead else {
            return;
        };
        let frame = &self.frames[j];
        let new = threads & !frame.backtrack & !frame.done & !frame.sleeping();
        for thread in (0..self.threads).filter(|&t| new & bit(t) != 0) {
            if matches!(frame.asked.get(thread), Some(Asked::NotYet))
                && !self.over_bound(frame, thread)
            {
                ahead.will_take(&frame.state, thread, 0, j);
            }
        }
    }

    /// The threads not known to be unable to move at position `j` (blocked or done there):
    /// those that a race's reversal, or a run that cannot go on, may take.
    fn able(&self, j: usize) -> Threads {
        let frame = &self.frames[j];
        (0..self.threads)
            .filter(|&t| !matches!(frame.asked.get(t), Some(Asked::Blocked | Asked::Done)))
            .fold(0, |set, t| set | bit(t))
    }

    fn all_threads(&self) -> Threads {
        match self.threads {
            MAX_THREADS => Threads::MAX,
            n => (1 << n) - 1,
        }
    }

    /// Takes `thread`'s step `way` from frame `at` (the top): a child frame, a leaf, or a step
    /// back onto the path.
    fn take(
        &mut self,
        at: usize,
        thread: ThreadId,
        way: u32,
        step: Step<P::State>,
    ) -> Result<(), Stop> {
        match step {
            Step::Done | Step::Blocked => unreachable!("a step that moves or ends the run"),
            Step::Bounded { reason } => {
                Err(Stop::Undecided(Undecided::Bounded(Bound::StepBudget {
                    reason,
                })))
            }
            Step::Cut { bound } => Err(Stop::Undecided(Undecided::Bounded(bound))),
            Step::Fault { event, fault } => {
                let event = match event {
                    Some(event) => Arc::new(*event),
                    None => Arc::new(Event::local(
                        thread,
                        fault.message.clone(),
                        fault.span.unwrap_or_default(),
                    )),
                };
                self.record(at, thread, way, 1, &event);
                // The other threads' steps that the fault keeps from running.
                let others = self.all_threads() & !bit(thread);
                self.pending_races(at + 1, others);
                let frame = &self.frames[at];
                let leaf = Leaf::fault(self.real.history(frame.history), fault);
                let node = self.leaf(leaf)?;
                let step = self.tree.event_id((*event).clone());
                let frame = &mut self.frames[at];
                frame.edges.push((step, node));
                frame.progressed = true;
                Ok(())
            }
            Step::Moved { state, event } => {
                let frame = &self.frames[at];
                if let Some(max) = self.options.max_steps {
                    if frame.op_steps[thread] as usize >= max && event.ret.is_none() {
                        return Err(Stop::Undecided(Undecided::Bounded(Bound::MaxSteps {
                            thread,
                            op: event.op.clone(),
                            max,
                        })));
                    }
                }
                let ways = if way == 0 {
                    event.ways()
                } else {
                    frame.taken.as_ref().map_or(1, |t| t.ways)
                };
                if let Some(ahead) = self.ahead.filter(|_| way == 0) {
                    // Each further way is taken once this one's runs are done (`Search::run`).
                    for further in 1..ways {
                        ahead.will_take(&frame.state, thread, further, at);
                    }
                }
                let dep = self.record(at, thread, way, ways, &event);
                let access = self.program.store_access(&state);
                if let Some(taken) = self.frames[at].taken.as_mut() {
                    taken.made = access.made;
                }
                if access
                    .stale_read
                    .is_some_and(|s| self.read_before_race(at, s))
                {
                    // The run where the read comes before the store it missed stands for this
                    // one (see `StoreAccess`).
                    self.frames[at].pruned = true;
                    return Ok(());
                }
                let hash = self.hasher.hash_one(&state);
                let back = (self.on_path.get(&hash))
                    .is_some_and(|depths| depths.iter().any(|&d| self.frames[d].state == state));
                if back {
                    // A step that returns to a state on the path (a spin that saw nothing new)
                    // leads nowhere new: the other threads must move for the run to.
                    if let Some(taken) = self.frames[at].taken.as_mut() {
                        taken.looped = true;
                    }
                    self.want(at, self.able(at));
                    return Ok(());
                }
                if let Some(steps) = self.skipped_turn(&state) {
                    self.skip_turn(at, thread, steps);
                    return Ok(());
                }
                let frame = &self.frames[at];
                let mut op_steps = frame.op_steps.clone();
                op_steps[thread] = if event.ret.is_some() {
                    0
                } else {
                    op_steps[thread] + 1
                };
                // Sleep sets and a preemption bound do not go together: a run that a sleeping
                // thread's exploration covers may be past the bound there.
                let sleep = match self.options.max_preemptions {
                    Some(_) => Vec::new(),
                    None => (frame.sleep.iter().chain(&frame.finished))
                        .filter(|(t, d)| *t != thread && !d.conflicts(dep))
                        .copied()
                        .collect(),
                };
                let preempts = frame.preemptible.is_some_and(|last| last != thread);
                let preemptions = frame.preemptions + u32::from(preempts);
                let history = self.real.after(frame.history, &event);
                let child = Frame {
                    state,
                    history,
                    asked: Vec::new(),
                    backtrack: 0,
                    done: 0,
                    sleep,
                    finished: Vec::new(),
                    taken: None,
                    op_steps,
                    edges: Vec::new(),
                    progressed: false,
                    preemptible: None,
                    preemptions,
                    pruned: false,
                    spun: false,
                    bound_cut: false,
                };
                if let Some(leaf) = self.open(child, Some(thread))? {
                    let step = self.tree.step_id(&event);
                    let frame = &mut self.frames[at];
                    frame.edges.push((step, leaf));
                    frame.progressed = true;
                }
                Ok(())
            }
        }
    }

    /// Whether the step taken at `at` (a read, or a compare-and-swap that failed), which read
    /// `stale`, an older store than the latest of its location, missed a newer store made after
    /// `stale` by a step of another thread that races with it: then the run with the read moved
    /// before that store, which reverses the race, reads `stale` with the same graph (see
    /// [`crate::StoreAccess`]). `SeqCst` reads and stores too: whether the graph is consistent,
    /// its `psc` included, does not depend on the order its events were added in (see the module
    /// docs), and `fgvt-sync`'s litmus tests check it against the axioms on random programs
    /// that are mostly `SeqCst`, failed compare-and-swaps among them.
    fn read_before_race(&self, at: usize, stale: u32) -> bool {
        let read = self.taken(at);
        let Some(location) = read.dep.footprint.object() else {
            return false;
        };
        self.raced.iter().any(|&j| {
            let store = self.taken(j);
            store.made.is_some_and(|made| made > stale)
                && store.dep.footprint == Footprint::Writes(location)
        })
    }

    /// Whether the step that reached `state` ended a retry loop's turn that the run without
    /// it stands for, as far as what leaves are judged on can tell (see
    /// [`crate::QuietTurn`]): how many steps its thread took in the turn.
    fn skipped_turn(&self, state: &P::State) -> Option<u32> {
        let turn = self.program.turn_ended(state)?;
        skips(turn, self.judging).then_some(turn.steps)
    }

    /// Ends the run at `thread`'s step from frame `at`, the last of the `steps` it took in a
    /// retry loop's turn that the run without the turn stands for (see
    /// [`crate::QuietTurn`]): the other threads must move for a run to go on from here.
    ///
    /// One thing the run without the turn cannot stand for: a thread that spins forever, so
    /// that the run never ends. Then no thread but the spinning one moves from where its turn
    /// began: the turn had the run to itself. An ordinary spin comes back to that state (a
    /// step back onto the path), but under weak memory a turn may read a newer store than the
    /// last one did and come back with a newer view. So a turn alone marks the frame where it
    /// began: if no run goes anywhere from there, the search cannot tell, as for a spin back
    /// onto the path, unless a thread sleeps there (it can move, so the spin is no outcome,
    /// and its runs from there were taken in another order).
    fn skip_turn(&mut self, at: usize, thread: ThreadId, steps: u32) {
        let mut start = at;
        let mut alone = true;
        let mut left = steps.saturating_sub(1);
        while left > 0 && start > 0 {
            start -= 1;
            if self.taken(start).thread == thread {
                left -= 1;
            } else {
                alone = false;
            }
        }
        if alone {
            self.frames[start].spun = true;
            // Under a preemption bound the others are taken where the turn began too, though
            // no race asks it: whether they can move there without passing the bound is what
            // tells a spin that the bound cut from one that never ends.
            if self.options.max_preemptions.is_some() {
                self.want(start, self.able(start));
            }
        }
        let frame = &mut self.frames[at];
        if let Some(taken) = frame.taken.as_mut() {
            taken.looped = true;
        }
        frame.pruned = true;
        self.want(at, self.able(at));
    }

    /// Notes that frame `at` takes `thread`'s step `way` (of `ways`), whose event is `event`:
    /// its vector clock, and the races it ends. Returns its dependence.
    fn record(
        &mut self,
        at: usize,
        thread: ThreadId,
        way: u32,
        ways: u32,
        event: &Arc<Event>,
    ) -> Dep {
        let dep = Dep::of(event, self.judging);
        let frame = &mut self.frames[at];
        let (all_ways, looped) = match &frame.taken {
            Some(taken) if way > 0 => (taken.all_ways.join(dep), taken.looped),
            _ => (dep, false),
        };
        frame.taken = Some(Taken {
            thread,
            way,
            ways,
            event: Arc::clone(event),
            dep,
            all_ways,
            looped,
            made: None,
        });
        self.races(at, thread, dep);
        dep
    }

    /// Notes the clock of the step taken at position `at` by `thread`, and the races it ends
    /// (see [`Search::scan`]).
    fn races(&mut self, at: usize, thread: ThreadId, dep: Dep) {
        self.clocks.truncate(at * self.threads);
        self.raced.clear();
        let mut clock = self.scan(at, thread, dep);
        clock[thread] = at as u32 + 1;
        self.clocks.extend_from_slice(&clock);
    }

    /// For a step of `thread` after the first `at` steps of the run, with dependence `dep`:
    /// for each earlier step of another thread that does not commute with it and is not ordered
    /// before it through other steps (a race), makes the state before that step take a thread
    /// that starts the reversed order. Returns what happens before the step (its clock, but
    /// for its own entry).
    fn scan(&mut self, at: usize, thread: ThreadId, dep: Dep) -> Vec<u32> {
        let n = self.threads;
        let mut clock = self.thread_clock(at, thread);
        for j in (0..at).rev() {
            let earlier = self.taken(j);
            let other = earlier.thread;
            // A step already known to happen before is no race, and its clock is below
            // `clock` already (a clock holds the clocks of the steps it counts): no need to
            // ask whether it conflicts.
            if other == thread || clock[other] > j as u32 || !earlier.dep.conflicts(dep) {
                continue;
            }
            self.reverse(j, at, thread, &clock);
            self.raced.push(j);
            for (c, d) in clock.iter_mut().zip(&self.clocks[j * n..(j + 1) * n]) {
                *c = (*c).max(*d);
            }
        }
        clock
    }

    /// The race of the step at `j` with `thread`'s step at `at`, whose clock (through the
    /// steps after `j`) is `clock`: unless the state before `j` already takes one, adds a thread
    /// that can start the steps between that do not happen after `j`, followed by the second.
    ///
    /// Under a preemption bound, `thread` itself, or every thread that can move there when it
    /// cannot, whatever `j` takes already: the rule of classic DPOR, which bounded partial-order
    /// reduction is proved with. An initial that `j` takes may be one the bound keeps from
    /// moving there, and the thread taken instead where the turn began starts another order.
    fn reverse(&mut self, j: usize, at: usize, thread: ThreadId, clock: &[u32]) {
        let bounded = self.options.max_preemptions.is_some();
        let initials = if bounded {
            bit(thread)
        } else {
            self.reversal_initials(j, at, thread, clock)
        };
        if bounded || initials & self.frames[j].backtrack == 0 {
            // Any initial starts the reversed order; one known to be unable to move at `j`
            // (blocked, done) is no use, and when every initial is, any thread may start it.
            let able = self.able(j);
            let pick = match initials & able {
                0 => able,
                able if able & bit(thread) != 0 => bit(thread),
                able => bit(able.trailing_zeros() as ThreadId),
            };
            self.want(j, pick);
        }
    }

    /// The threads that can start the reversed order of the race of the step at `j` with
    /// `thread`'s step at `at` (whose clock is `clock`): the initials of the steps between that
    /// do not happen after `j`, followed by the second.
    fn reversal_initials(&self, j: usize, at: usize, thread: ThreadId, clock: &[u32]) -> Threads {
        let between = self.not_after(j, at);
        let (mut initials, seen) = self.initials(&between);
        let free = |m: &usize| clock[self.taken(*m).thread] <= *m as u32;
        if seen & bit(thread) == 0 && between.iter().all(free) {
            initials |= bit(thread);
        }
        debug_assert!(initials != 0, "a sequence has an initial");
        initials
    }

    /// The steps after `j` and before `at` that do not happen after step `j`, in order:
    /// `notdep` of the paper.
    fn not_after(&self, j: usize, at: usize) -> Vec<usize> {
        let n = self.threads;
        let first = self.taken(j).thread;
        (j + 1..at)
            .filter(|&k| self.clocks[k * n + first] <= j as u32)
            .collect()
    }

    /// The threads whose first step in `steps` (positions, in order) has no step of `steps`
    /// before it that happens before it, and every thread with a step in `steps`.
    fn initials(&self, steps: &[usize]) -> (Threads, Threads) {
        let n = self.threads;
        let mut initials: Threads = 0;
        let mut seen: Threads = 0;
        for (index, &k) in steps.iter().enumerate() {
            let t = self.taken(k).thread;
            if seen & bit(t) != 0 {
                continue;
            }
            seen |= bit(t);
            let row = &self.clocks[k * n..(k + 1) * n];
            if steps[..index]
                .iter()
                .all(|&m| row[self.taken(m).thread] <= m as u32)
            {
                initials |= bit(t);
            }
        }
        (initials, seen)
    }

    /// The races of the steps that `threads` would take after the first `at` steps of the
    /// run, which ends there (stuck, or at a fault) without taking them. Nothing is known of
    /// what they touch, so every earlier step of another thread that is not ordered before
    /// the thread's last may race with its step, and a race hidden behind another cannot be
    /// told apart: the state before each such step takes the thread, and every thread that can
    /// start the steps between.
    fn pending_races(&mut self, at: usize, threads: Threads) {
        for thread in (0..self.threads).filter(|&t| threads & bit(t) != 0) {
            let clock = self.thread_clock(at, thread);
            for j in 0..at {
                let other = self.taken(j).thread;
                if other == thread || clock[other] > j as u32 {
                    continue;
                }
                let (initials, _) = self.initials(&self.not_after(j, at));
                self.want(j, bit(thread) | initials);
            }
        }
    }

    /// What happens before `thread`'s step after the first `at` steps of the run through its
    /// own thread: the clock of its previous step, or nothing.
    fn thread_clock(&self, at: usize, thread: ThreadId) -> Vec<u32> {
        let n = self.threads;
        match (0..at).rev().find(|&j| self.taken(j).thread == thread) {
            Some(j) => self.clocks[j * n..(j + 1) * n].to_vec(),
            None => vec![0; n],
        }
    }

    fn taken(&self, j: usize) -> &Taken {
        self.frames[j]
            .taken
            .as_ref()
            .expect("every frame below the top has taken a step")
    }

    /// Opens `frame` below the current top (moved into by `from`'s step): finds a thread that
    /// can move and is not asleep, and makes it the frame's first. Returns the node when the
    /// frame is a leaf, or `None` when it stays open (or has nothing to explore: asleep).
    fn open(
        &mut self,
        mut frame: Frame<P::State>,
        from: Option<ThreadId>,
    ) -> Result<Option<NodeId>, Stop> {
        frame.asked.resize_with(self.threads, || Asked::NotYet);
        let sleeping = frame.sleeping();
        // The thread that moved last first: a program that re-executes goes on from there.
        let order = from
            .into_iter()
            .chain((0..self.threads).filter(|&t| Some(t) != from));
        // A blocked thread's step races with the steps that block it: every thread is asked
        // what it can do, and the first that can move (and is not asleep) is taken.
        let mut all_done = true;
        let mut first = None;
        let mut blocked = Vec::new();
        for thread in order {
            if sleeping & bit(thread) != 0 {
                all_done = false;
                continue;
            }
            match self.program.readiness(&frame.state, thread) {
                Readiness::Done => {
                    frame.asked[thread] = Asked::Done;
                    continue;
                }
                Readiness::Blocked(footprint) => {
                    all_done = false;
                    blocked.push((thread, footprint));
                    frame.asked[thread] = Asked::Blocked;
                    continue;
                }
                Readiness::Ready => {}
            }
            if first.is_some() {
                continue;
            }
            match self.program.step(&frame.state, thread) {
                Step::Done => frame.asked[thread] = Asked::Done,
                Step::Blocked => {
                    all_done = false;
                    blocked.push((thread, Footprint::Everything));
                    frame.asked[thread] = Asked::Blocked;
                }
                step => {
                    frame.asked[thread] = Asked::Ready(step);
                    first = Some(thread);
                }
            }
        }
        let at = self.frames.len();
        for (thread, footprint) in blocked {
            match footprint {
                Footprint::Everything => self.pending_races(at, bit(thread)),
                footprint => {
                    let dep = Dep {
                        footprint,
                        ..Dep::UNKNOWN
                    };
                    self.scan(at, thread, dep);
                }
            }
        }
        let Some(first) = first else {
            if sleeping != 0 {
                // Every thread that could move sleeps: its runs from here were taken before.
                if let Some(parent) = self.frames.last_mut() {
                    parent.pruned = true;
                }
                return Ok(None);
            }
            let leaf = if all_done {
                self.complete_leaf(&frame)
            } else {
                self.stuck_leaf(&frame)
            };
            self.frames.push(frame);
            let node = self.leaf(leaf);
            self.frames.pop();
            return node.map(Some);
        };
        // The thread that moved here can go on: another's step preempts it.
        frame.preemptible = from.filter(|&t| matches!(frame.asked[t], Asked::Ready(_)));
        frame.backtrack = bit(first);
        let hash = self.hasher.hash_one(&frame.state);
        self.on_path
            .entry(hash)
            .or_default()
            .push(self.frames.len());
        self.frames.push(frame);
        Ok(None)
    }

    /// Closes the top frame, every thread it must take taken: its node becomes an edge of its
    /// parent's, or, at the root, the tree's root (returned).
    fn close(&mut self) -> Result<Option<NodeId>, Stop> {
        let frame = self.frames.pop().expect("a frame to close");
        let hash = self.hasher.hash_one(&frame.state);
        if let Some(depths) = self.on_path.get_mut(&hash) {
            depths.pop();
            if depths.is_empty() {
                self.on_path.remove(&hash);
            }
        }
        if !frame.progressed {
            if frame.sleep.is_empty() && !frame.bound_cut && (frame.spun || !frame.pruned) {
                // Every step from here went back up the path, or a turn that began here alone
                // was skipped: whether the run ends is a question of the state graph's
                // components. Not so while a thread sleeps here: it can move, and its runs
                // from here were taken before (a spin whose turn was skipped stands for none
                // of them, and one thread spinning while another can move is no outcome). Nor
                // where the bound kept a thread from moving: the full exploration, bounded,
                // counts such a state as neither a leaf nor a livelock either.
                return Err(Stop::Undecided(Undecided::Livelock));
            }
            // Its runs were cut by the bound or covered by a sleeping thread's: its parent's
            // are too, if it has no others.
            return match self.frames.last_mut() {
                Some(parent) => {
                    parent.pruned = true;
                    Ok(None)
                }
                // No run from the root came to a leaf.
                None => Err(Stop::Undecided(Undecided::Livelock)),
            };
        }
        let node = self.tree.node_of_steps(&frame.edges);
        let Some(parent) = self.frames.last_mut() else {
            return Ok(Some(node));
        };
        let taken = parent
            .taken
            .as_ref()
            .expect("the parent took the step here");
        let step = self.tree.step_id(&taken.event);
        let parent = self.frames.last_mut().expect("checked above");
        parent.edges.push((step, node));
        parent.progressed = true;
        Ok(None)
    }

    /// A leaf of the current run, whose steps are those the frames took (a fault's too): its
    /// node, or the stop when it fails.
    fn leaf(&mut self, leaf: Leaf) -> Result<NodeId, Stop> {
        let (node, fails) = self.tree.leaf_judged(leaf, |leaf| (self.fails)(leaf));
        if fails {
            let schedule = (self.frames.iter())
                .filter_map(|f| f.taken.as_ref())
                .map(|t| Choice::new(t.thread, t.way))
                .collect();
            return Err(Stop::Failed(schedule));
        }
        Ok(node)
    }

    /// The leaf where every operation returned (see [`crate::explore`]'s).
    fn complete_leaf(&self, frame: &Frame<P::State>) -> Leaf {
        let path = self.real.history(frame.history);
        crate::explore::complete_leaf(self.program, &frame.state, path)
    }

    /// The leaf where no thread can move (see [`crate::explore`]'s).
    fn stuck_leaf(&self, frame: &Frame<P::State>) -> Leaf {
        let path = self.real.history(frame.history);
        crate::explore::stuck_leaf(self.program, &frame.state, path)
    }

    fn limit_hit(&self) -> Option<Limit> {
        if (self.options.max_states).is_some_and(|max| self.tree.node_count() >= max)
            || self.tree.edge_count() >= crate::graph::MAX_EDGES
        {
            return Some(Limit::MaxStates);
        }
        self.options.outer_limit(self.started)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Call, EventKind, Span, Value};

    /// A step of `thread` touching its own variable, with a call (and a clock, if `seen`) or a
    /// return.
    fn step(thread: ThreadId, call: bool, seen: Option<&[u32]>, ret: bool) -> Event {
        Event {
            thread,
            op_index: 0,
            op: "op".to_string(),
            kind: EventKind::Write,
            location: format!("x{thread}"),
            value: String::new(),
            span: Span::default(),
            call: call.then(|| Call::new("op", Vec::new())),
            ret: ret.then_some(Value::Unit),
            seen: seen.map(Into::into),
            order: None,
            memory: None,
            footprint: Footprint::Writes(thread as u64),
        }
    }

    /// Whether the two steps' order matters, judged on histories.
    fn ordered(a: &Event, b: &Event) -> bool {
        Dep::of(a, Judging::Histories).conflicts(Dep::of(b, Judging::Histories))
    }

    /// Real time orders a return before a call without a clock, so the two runs differ; a call
    /// with a clock says itself what precedes it, so where it falls among returns does not.
    #[test]
    fn a_return_is_ordered_with_a_call_only_when_the_call_has_no_clock() {
        let ret = step(0, false, None, true);
        assert!(ordered(&ret, &step(1, true, None, false)));
        assert!(ordered(&step(1, true, None, false), &ret));
        assert!(!ordered(&ret, &step(1, true, Some(&[0, 0]), false)));
        assert!(!ordered(&step(1, true, Some(&[1, 0]), false), &ret));
        // Two calls, or two returns, are never ordered; judged on endings nothing is.
        assert!(!ordered(
            &step(1, true, None, false),
            &step(0, true, None, false)
        ));
        assert!(!ordered(&ret, &step(1, false, None, true)));
        let on_endings = |e: &Event| Dep::of(e, Judging::Endings);
        assert!(!on_endings(&ret).conflicts(on_endings(&step(1, true, None, false))));
    }
}
