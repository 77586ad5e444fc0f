//! A Rust test as an [`fgvt_tree::Program`], so that real code is explored by the same
//! state-graph search as models: equal states merged, loops back to a state on the path kept as
//! loop edges, livelocks found as strongly connected components.
//!
//! Real code cannot be copied at a branch point, so a [`State`] is a *schedule* (the threads
//! chosen so far, from the start) with the fingerprint of the point it leads to (see
//! `fingerprint.rs`): states are equal when their fingerprints are, whichever schedule
//! reached them first, and the explorer keeps the first. Taking a step from a state re-executes
//! its schedule from scratch on a fresh object, takes the step, and runs to the next point where
//! the explorer would choose, where the execution pauses: at most one execution per edge of the
//! state graph, which for any test with races is far smaller than the unfolded tree, and fewer
//! when the next step asked for is from the state the paused execution is at, which then goes
//! on (see `runtime::execute`).
//!
//! What the threads can do at a point (enabled, blocked, done) is learned by the execution that
//! reaches it, so a state carries it: asking a blocked or finished thread for its step costs no
//! execution. A state where the threads have ended carries the `final` part's history; one
//! where no thread can move, what each waits for.

use std::cell::RefCell;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use fgvt_tree::parallel::Parallel;
use fgvt_tree::replay::{ReplayError, RunEnd};
use fgvt_tree::{Call, Event, Fault, History, Program, Readiness, Step, ThreadId, Wait};

use crate::fingerprint::{combine, summand};
use crate::runtime::{self, Body, Engine, Execution, Identity, Pick, Point, Status};
use crate::weak::Mode;

/// The test's executions, as a program the explorer steps through.
pub(crate) struct Reexecuted {
    /// What it runs, and how (and what a worker builds its own instance from: see
    /// [`Parallel`]). With `merge` unset, states are told apart by schedule too, so that no two
    /// paths share a state (the unfolded tree, the reference merging is tested against).
    recipe: Recipe,
    engine: RefCell<Engine>,
    /// The first schedule whose re-execution did not reach the state it was recorded for.
    error: RefCell<Option<ReplayError>>,
    /// Under [`Mode::Sc`] with `watch`: whether some execution declared an ordering weaker
    /// than `SeqCst`. The exploration then winds down: it must be made under weak memory.
    saw_weak: std::cell::Cell<bool>,
    /// Whether an execution that saw a weaker ordering winds the exploration down.
    stop_on_weak: bool,
    /// The last schedule run, spelled out.
    spelling: RefCell<Spelling>,
}

/// What a [`Reexecuted`] is made from: the executions of `body` (the test's plan on a fresh
/// object) with `threads` threads, told apart by fingerprint alone when `merge` is set, their
/// atomics treating orderings as `mode` says, `Shared` cells checked for data races when
/// `shared_races` is set, and loops without the spin hint treated as `loops` says. A worker of a parallel exploration makes its own from it, on its thread.
#[derive(Clone)]
pub(crate) struct Recipe {
    pub threads: usize,
    pub body: Body,
    pub merge: bool,
    pub mode: Mode,
    pub shared_races: bool,
    pub loops: crate::fingerprint::Loops,
}

/// What a worker's executions learned that the search's must know when it ends.
pub(crate) struct Learned {
    sites: Vec<(usize, crate::weak::SiteInfo)>,
    saw_weak: bool,
    runs: runtime::Runs,
}

/// A point of the test's executions: the schedule that reaches it, told apart by fingerprint.
///
/// The explorer keeps one per distinct state, so it is kept small: 24 bytes, a fingerprint and
/// a pointer to what stepping from it needs, which is let go once it is explored for good
/// ([`Program::retire`]); the schedule shares its prefix with the parent's, and the statuses of
/// up to 32 threads fit in a word.
#[derive(Clone, Debug)]
pub(crate) struct State {
    /// The point's fingerprint (`fingerprint::Fingerprint`), as two words: a `u128` would
    /// align the whole state to 16 bytes, and the explorer stores one per distinct state.
    fingerprint: [u64; 2],
    /// What stepping from it needs; `None` once it is retired.
    live: Option<Arc<Live>>,
}

/// What stepping from a [`State`] needs, and the leaf of one without a next step.
#[derive(Debug)]
struct Live {
    /// Thread choices from the start.
    schedule: Schedule,
    statuses: Statuses,
    /// What each blocked thread's step would touch, by thread (few are blocked at once).
    blocked: Box<[(ThreadId, fgvt_tree::Footprint)]>,
    /// What a state without a next step holds for its leaf.
    end: Option<Ending>,
    /// The retry loop's turn that the step here ended, if it wrote nothing.
    turn: Option<fgvt_tree::QuietTurn>,
    /// Under weak memory, what the step here did with stores.
    store_access: fgvt_tree::StoreAccess,
}

impl State {
    /// What stepping from it needs.
    fn live(&self) -> &Live {
        // The explorer retires a state once it is explored for good, never to step from it
        // or make its leaf again (`Program::retire`).
        self.live
            .as_deref()
            .expect("a retired state is never stepped from")
    }
}

/// Thread choices from the start of an execution, as a chain that shares its prefix with the
/// schedule it extends: a state holds its parent's schedule and one more choice, not a copy.
#[derive(Clone, Debug, Default)]
struct Schedule(Option<Arc<Choice>>);

/// The last choice of a [`Schedule`] and the schedule before it.
#[derive(Debug)]
struct Choice {
    /// The thread chosen (a test has at most [`MAX_THREADS`]).
    thread: u8,
    /// Which way its step goes (see [`crate::weak`]; at most [`MAX_WAYS`]).
    way: u8,
    /// How many choices the schedule has, this one included.
    len: u32,
    before: Schedule,
}

impl Schedule {
    /// Whether it is `other` itself, not a copy: a schedule is made once per step taken, so
    /// two states with the same one were reached by the same step.
    fn is(&self, other: &Schedule) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }

    /// How many choices it has.
    fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |c| c.len as usize)
    }

    /// This schedule, then `pick`.
    fn then(&self, pick: Pick) -> Schedule {
        let len = u32::try_from(self.len() + 1).expect("schedules shorter than 2^32 steps");
        Schedule(Some(Arc::new(Choice {
            thread: pick.thread,
            way: pick.way,
            len,
            before: self.clone(),
        })))
    }

    /// The choices in order.
    fn to_vec(&self) -> Vec<Pick> {
        let mut choices = vec![Pick::default(); self.len()];
        let mut at = &self.0;
        while let Some(choice) = at {
            choices[choice.len as usize - 1] = Pick {
                thread: choice.thread,
                way: choice.way,
            };
            at = &choice.before.0;
        }
        choices
    }
}

/// The last schedule an execution followed, spelled out: the next one, most often that one
/// with one more choice or a sibling of it, is spelled from where the two part, not from the
/// start (walking a chain of thousands of links for every step took a twentieth of the time).
#[derive(Default)]
struct Spelling {
    /// The schedule spelled: it keeps its links alive, so that their addresses name them.
    schedule: Schedule,
    /// The address of each link of `schedule`, by its place.
    links: Vec<usize>,
    /// Its choices.
    picks: Vec<Pick>,
    /// The links walked to reach the spelled part (kept for its room).
    walked: Vec<(usize, Pick)>,
}

impl Spelling {
    /// `schedule`'s choices in order.
    fn spell(&mut self, schedule: &Schedule) -> &[Pick] {
        self.walked.clear();
        let mut at = &schedule.0;
        while let Some(choice) = at {
            let link = Arc::as_ptr(choice) as usize;
            // The same link at the same place: the same choices up to it.
            if self.links.get(choice.len as usize - 1) == Some(&link) {
                break;
            }
            let pick = Pick {
                thread: choice.thread,
                way: choice.way,
            };
            self.walked.push((link, pick));
            at = &choice.before.0;
        }
        let kept = schedule.len() - self.walked.len();
        self.links.truncate(kept);
        self.picks.truncate(kept);
        for &(link, pick) in self.walked.iter().rev() {
            self.links.push(link);
            self.picks.push(pick);
        }
        self.schedule = schedule.clone();
        &self.picks
    }
}

impl Drop for Choice {
    /// Drops a long chain link by link: the recursive drop of a schedule thousands of steps
    /// deep would overflow the stack.
    fn drop(&mut self) {
        let mut before = self.before.0.take();
        while let Some(choice) = before {
            match Arc::try_unwrap(choice) {
                Ok(mut only) => before = only.before.0.take(),
                Err(_shared) => break,
            }
        }
    }
}

/// Each thread's [`Status`] at a state: two bits a thread, in a word for up to 32 threads.
#[derive(Clone, Debug)]
enum Statuses {
    Packed(u64),
    /// More than 32 threads: rare, and a thin pointer keeps the common case small.
    Listed(Arc<Vec<Status>>),
}

impl Statuses {
    fn new(statuses: &[Status]) -> Statuses {
        if statuses.len() > 32 {
            return Statuses::Listed(Arc::new(statuses.to_vec()));
        }
        let code = |s: &Status| match s {
            Status::Enabled => 1u64,
            Status::Blocked => 2,
            Status::Done => 3,
        };
        let packed = statuses
            .iter()
            .enumerate()
            .fold(0, |word, (t, s)| word | code(s) << (2 * t));
        Statuses::Packed(packed)
    }

    /// `thread`'s status, `None` past the last thread.
    fn get(&self, thread: usize) -> Option<Status> {
        match self {
            Statuses::Listed(list) => list.get(thread).copied(),
            Statuses::Packed(_) if thread >= 32 => None,
            Statuses::Packed(word) => match (word >> (2 * thread)) & 3 {
                1 => Some(Status::Enabled),
                2 => Some(Status::Blocked),
                3 => Some(Status::Done),
                _ => None,
            },
        }
    }
}

/// What a state where no thread moves holds for its leaf.
#[derive(Debug)]
enum Ending {
    /// The threads have ended: the `final` part's history, or its fault.
    Finished(Result<History, Fault>),
    /// No thread can move: what each blocked one waits for, and the calls of those blocked
    /// before their operation's first step.
    Stuck {
        waiting: Vec<Wait>,
        calls: Vec<(ThreadId, Call)>,
    },
}

impl PartialEq for State {
    fn eq(&self, other: &Self) -> bool {
        self.fingerprint == other.fingerprint
    }
}

impl Eq for State {}

impl Hash for State {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.fingerprint.hash(state);
    }
}

/// The most threads a test may have: schedules are stored a byte per choice.
pub(crate) const MAX_THREADS: usize = 256;

/// The most ways one step may go under weak memory (a byte per choice too).
pub(crate) const MAX_WAYS: u32 = 255;

impl Reexecuted {
    /// The executions `recipe` says.
    pub(crate) fn new(recipe: Recipe) -> Self {
        let stop_on_weak = matches!(recipe.mode, Mode::Sc { watch: true });
        Reexecuted {
            engine: RefCell::new(Engine::new(
                recipe.mode.clone(),
                recipe.shared_races,
                recipe.loops,
            )),
            error: RefCell::new(None),
            saw_weak: std::cell::Cell::new(false),
            stop_on_weak,
            recipe,
            spelling: RefCell::default(),
        }
    }

    /// Sets how much of the weak-memory state the states' fingerprints take in: all of it for
    /// an explorer that merges states across runs, [`Identity::OnPath`] for a search that
    /// compares a state only with those on its run's path.
    pub(crate) fn set_identity(&self, identity: Identity) {
        self.engine.borrow_mut().identity = identity;
    }

    /// Whether some execution declared an ordering weaker than `SeqCst` (under [`Mode::Sc`]
    /// with `watch`): the exploration wound down, and must be made under weak memory.
    pub(crate) fn saw_weak(&self) -> bool {
        self.saw_weak.get()
    }

    /// Under weak memory, the accesses the executions met (whose orderings a report may
    /// suggest strengthening), in source order.
    pub(crate) fn sites(&self) -> Vec<crate::weak::SiteInfo> {
        let engine = self.engine.borrow();
        let mut sites: Vec<_> = engine.sites.borrow().values().cloned().collect();
        sites.sort_by_key(|s| (s.at.file(), s.at.line(), s.at.column()));
        sites
    }

    /// Whether the exploration is void or wound down: every step is then `Done`.
    pub(crate) fn winding_down(&self) -> bool {
        self.error.borrow().is_some() || (self.stop_on_weak && self.saw_weak.get())
    }

    /// Why a schedule could not be replayed, if one could not: the exploration is then void.
    pub(crate) fn take_error(&self) -> Option<ReplayError> {
        self.error.borrow_mut().take()
    }

    /// Runs the test once along `schedule`, abandoning it at the first point past it; `None`
    /// (and the error kept) when the execution does not follow the schedule.
    fn run(&self, schedule: &[Pick]) -> Option<Execution> {
        let execution = runtime::execute(
            &mut self.engine.borrow_mut(),
            self.recipe.threads,
            schedule,
            Arc::clone(&self.recipe.body),
        );
        if execution.saw_weak {
            self.saw_weak.set(true);
        }
        if execution.cut.is_some() {
            return Some(execution);
        }
        // An execution that ends before the schedule does has diverged too.
        let taken = execution.taken;
        let diverged = execution.diverged.or_else(|| {
            (taken < schedule.len()).then(|| (taken, usize::from(schedule[taken].thread)))
        });
        if let Some((step, thread)) = diverged {
            self.error
                .borrow_mut()
                .get_or_insert(ReplayError::Nondeterministic {
                    prefix: schedule.iter().map(|p| usize::from(p.thread)).collect(),
                    step,
                    thread,
                });
            return None;
        }
        Some(execution)
    }

    /// The state an execution along `schedule` stopped at, if it stopped at a point.
    fn state(&self, schedule: Schedule, point: Point, end: Option<Ending>) -> State {
        let fingerprint = if self.recipe.merge {
            point.fingerprint
        } else {
            let path = schedule.to_vec().iter().fold(0x5c4e_d01e, |h, p| {
                combine(h, u64::from(p.thread) | u64::from(p.way) << 8)
            });
            point.fingerprint ^ summand(path, schedule.len() as u64)
        };
        State {
            fingerprint: [(fingerprint >> 64) as u64, fingerprint as u64],
            live: Some(Arc::new(Live {
                schedule,
                statuses: Statuses::new(&point.statuses),
                blocked: point.blocked.into_boxed_slice(),
                end,
                turn: point.turn,
                store_access: point.store_access,
            })),
        }
    }

    /// Where an execution that followed `schedule` ended, with the step that ends the
    /// schedule: a state, or the fault of that step (`Err`).
    fn arrival(&self, schedule: Schedule, execution: Execution) -> Arrival {
        let Execution {
            mut run,
            point,
            finals_from,
            blocked,
            ..
        } = execution;
        // The schedule's last step is the one event the execution built (see `run`).
        let event = if schedule.len() == 0 {
            None
        } else {
            run.steps.drain(..).next()
        };
        // Every end but a fault before the threads ended comes with its point; the fallback
        // (all done) is for an execution whose threads never started.
        let point = point.unwrap_or_else(|| Point {
            fingerprint: 0,
            statuses: vec![Status::Done; self.recipe.threads],
            blocked: Vec::new(),
            turn: None,
            store_access: fgvt_tree::StoreAccess::default(),
        });
        let end = match run.end {
            RunEnd::Abandoned => None,
            RunEnd::Stuck { waiting, .. } => Some(Ending::Stuck {
                waiting,
                calls: blocked,
            }),
            RunEnd::Complete { history } => {
                let finals = tail(history, finals_from.unwrap_or(0));
                Some(Ending::Finished(Ok(finals)))
            }
            // The `final` part failed: the threads' part ended at a point.
            RunEnd::Fault { fault, .. } if finals_from.is_some() => {
                Some(Ending::Finished(Err(fault)))
            }
            RunEnd::Fault { fault, .. } => return Arrival::Fault(fault, event),
        };
        Arrival::At(self.state(schedule, point, end), event)
    }
}

/// Where an execution along a schedule ended.
enum Arrival {
    /// At a state, after the schedule's last step (`None` for the empty schedule).
    At(State, Option<Event>),
    /// The schedule's last step (or, for the empty schedule, the serial part) failed.
    Fault(Fault, Option<Event>),
}

/// The events of `history` from `from` on, as a history of their own.
fn tail(mut history: History, from: usize) -> History {
    let events = history.events.split_off(from.min(history.events.len()));
    History {
        events,
        stuck: false,
    }
}

impl Program for Reexecuted {
    type State = State;

    fn threads(&self) -> usize {
        self.recipe.threads
    }

    fn initial_state(&self) -> Result<(State, History), Fault> {
        let schedule = Schedule::default();
        let Some(execution) = self.run(&[]) else {
            return Err(Fault::new("the test did not run the same way twice", None));
        };
        // The `init` part's history: the start of whatever history the execution ended with.
        let whole = match &execution.run.end {
            RunEnd::Abandoned => &execution.history,
            RunEnd::Complete { history }
            | RunEnd::Stuck { history, .. }
            | RunEnd::Fault { history, .. } => history,
        };
        let init = &whole.events[..execution.concurrent_from.min(whole.events.len())];
        let base = History {
            events: init.to_vec(),
            stuck: false,
        };
        match self.arrival(schedule, execution) {
            Arrival::At(state, _) => Ok((state, base)),
            Arrival::Fault(fault, _) => Err(fault),
        }
    }

    fn step(&self, state: &State, thread: ThreadId) -> Step<State> {
        self.step_way(state, thread, 0)
    }

    fn step_way(&self, state: &State, thread: ThreadId, way: u32) -> Step<State> {
        let live = state.live();
        match live.statuses.get(thread) {
            None | Some(Status::Done) => return Step::Done,
            Some(Status::Blocked) => return Step::Blocked,
            Some(Status::Enabled) => {}
        }
        if self.winding_down() {
            // The exploration is void, or must be made again under weak memory: wind it down.
            return Step::Done;
        }
        let pick = Pick {
            thread: u8::try_from(thread).expect("at most 256 threads"),
            way: u8::try_from(way.min(MAX_WAYS)).expect("at most 255 ways"),
        };
        let schedule = live.schedule.then(pick);
        let ran = self.run(self.spelling.borrow_mut().spell(&schedule));
        let Some(mut execution) = ran else {
            return Step::Done;
        };
        if let Some(bound) = execution.cut.take() {
            return Step::Cut { bound };
        }
        if self.winding_down() {
            return Step::Done;
        }
        match self.arrival(schedule, execution) {
            Arrival::At(state, Some(event)) => Step::Moved {
                state,
                event: Arc::new(event),
            },
            // Not reached: a run that followed a non-empty schedule took its last step.
            Arrival::At(_, None) => Step::Done,
            Arrival::Fault(fault, event) => Step::Fault {
                event: event.map(Box::new),
                fault,
            },
        }
    }

    fn readiness(&self, state: &State, thread: ThreadId) -> Readiness {
        let live = state.live();
        match live.statuses.get(thread) {
            None | Some(Status::Done) => Readiness::Done,
            Some(Status::Enabled) => Readiness::Ready,
            Some(Status::Blocked) => Readiness::Blocked(
                (live.blocked.iter())
                    .find(|(t, _)| *t == thread)
                    .map_or(fgvt_tree::Footprint::Everything, |(_, f)| *f),
            ),
        }
    }

    fn goes_on_from_last_step(&self) -> bool {
        // An execution pauses where its schedule ends (see `runtime::execute`).
        true
    }

    fn retire(&self, state: &mut State) {
        // Told apart by fingerprint alone: the schedule (a chain link, and with it every link
        // no open state shares), the statuses and the ending are only for stepping from it.
        state.live = None;
    }

    fn finish(&self, state: &State) -> Result<History, Fault> {
        match &state.live().end {
            Some(Ending::Finished(finals)) => finals.clone(),
            _ => Ok(History::new()),
        }
    }

    fn blocked_calls(&self, state: &State) -> Vec<(ThreadId, Call)> {
        match &state.live().end {
            Some(Ending::Stuck { calls, .. }) => calls.clone(),
            _ => Vec::new(),
        }
    }

    fn turn_ended(&self, state: &State) -> Option<fgvt_tree::QuietTurn> {
        state.live().turn
    }

    fn store_access(&self, state: &State) -> fgvt_tree::StoreAccess {
        state.live().store_access
    }

    fn why_blocked(&self, state: &State, thread: ThreadId) -> Option<Wait> {
        match &state.live().end {
            Some(Ending::Stuck { waiting, .. }) => {
                waiting.iter().find(|w| w.thread == thread).cloned()
            }
            _ => None,
        }
    }
}

/// Workers run executions on engines of their own, each on its thread; what they learn (the
/// accesses met, a weaker ordering seen) joins the search's at the end.
/// A worker stops at the first object made in a `const` context (`runtime::met_static`), which
/// all executions in the process share: the search's thread takes the rest of the steps.
impl Parallel for Reexecuted {
    /// What it runs, and how its states are told apart (a reduced search's workers make
    /// states the search compares with those on its path: they must be made alike).
    type Recipe = (Recipe, Identity);
    type Learned = Learned;

    fn recipe(&self) -> (Recipe, Identity) {
        (self.recipe.clone(), self.engine.borrow().identity)
    }

    fn worker((recipe, identity): &(Recipe, Identity)) -> Reexecuted {
        runtime::become_worker();
        let worker = Reexecuted::new(recipe.clone());
        worker.set_identity(*identity);
        worker
    }

    /// Equal fingerprints, and the same schedule: under [`Identity::OnPath`] two states of
    /// different runs may share a fingerprint and not their steps.
    fn interchangeable(a: &State, b: &State) -> bool {
        a == b
            && match (&a.live, &b.live) {
                (Some(a), Some(b)) => a.schedule.is(&b.schedule),
                _ => false,
            }
    }

    fn halted(&self) -> bool {
        runtime::met_static() || self.winding_down()
    }

    fn learned(self) -> Learned {
        let engine = self.engine.borrow();
        let sites = engine
            .sites
            .borrow()
            .iter()
            .map(|(k, v)| (*k, v.clone()))
            .collect();
        Learned {
            sites,
            saw_weak: self.saw_weak.get(),
            runs: runtime::runs(),
        }
    }

    fn absorb(&self, learned: Learned) {
        let engine = self.engine.borrow();
        let mut sites = engine.sites.borrow_mut();
        for (key, site) in learned.sites {
            match sites.entry(key) {
                std::collections::hash_map::Entry::Occupied(mut known) => {
                    known.get_mut().keep_first(site)
                }
                std::collections::hash_map::Entry::Vacant(new) => {
                    new.insert(site);
                }
            }
        }
        if learned.saw_weak {
            self.saw_weak.set(true);
        }
        // No replay error comes back: a replay that failed on a worker halted it, its steps
        // unused, and the search's thread took them again, and failed too if the test is
        // nondeterministic. One that replays on the search's thread only reads something of
        // that thread's (a thread-local the test set), which it does the same way every time.
        runtime::add_runs(learned.runs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schedule_extends_its_prefix_and_lists_its_choices_in_order() {
        let pick = |thread: u8| Pick { thread, way: 0 };
        let threads = |s: &Schedule| -> Vec<u8> { s.to_vec().iter().map(|p| p.thread).collect() };
        let a = Schedule::default().then(pick(2)).then(pick(0));
        let b = a.then(pick(1));
        let c = a.then(Pick { thread: 3, way: 2 });
        assert_eq!(threads(&a), [2, 0]);
        assert_eq!(threads(&b), [2, 0, 1]);
        assert_eq!(threads(&c), [2, 0, 3]);
        assert_eq!(c.to_vec()[2].way, 2);
        assert_eq!((b.len(), Schedule::default().len()), (3, 0));
    }

    proptest::proptest! {
        /// Schedules as a search makes them (a child of one already made, in any order), each
        /// spelled from the last one spelled, read as the whole walk reads them.
        #[test]
        fn a_schedule_is_spelled_as_its_whole_chain_reads(
            steps in proptest::collection::vec((0usize..64, 0u8..4, 0u8..3), 1..200)
        ) {
            let mut made = vec![Schedule::default()];
            let mut spelling = Spelling::default();
            for (from, thread, way) in steps {
                let parent = made[from % made.len()].clone();
                let child = parent.then(Pick { thread, way });
                for schedule in [&child, &parent] {
                    proptest::prop_assert_eq!(spelling.spell(schedule), schedule.to_vec());
                }
                made.push(child);
            }
        }
    }

    #[test]
    fn a_schedule_a_million_steps_long_drops_without_overflowing_the_stack() {
        let mut schedule = Schedule::default();
        for step in 0..1_000_000u32 {
            schedule = schedule.then(Pick {
                thread: (step % 3) as u8,
                way: 0,
            });
        }
        let shared = schedule.clone();
        drop(schedule);
        assert_eq!(shared.len(), 1_000_000);
        drop(shared);
    }

    #[test]
    fn statuses_read_back_as_they_were_given_packed_or_listed() {
        let cycle = [Status::Enabled, Status::Blocked, Status::Done];
        for threads in [1, 2, 31, 32, 33, 256] {
            let given: Vec<Status> = (0..threads).map(|t| cycle[t % 3]).collect();
            let statuses = Statuses::new(&given);
            assert_eq!(matches!(statuses, Statuses::Packed(_)), threads <= 32);
            let read: Vec<Status> = (0..threads).map(|t| statuses.get(t).unwrap()).collect();
            assert_eq!(read, given, "{threads} threads");
            assert_eq!(statuses.get(threads), None, "past the last of {threads}");
        }
    }

    #[test]
    fn a_state_stays_small() {
        // The explorer stores one per distinct state, with its history and turn beside it.
        assert!(
            std::mem::size_of::<State>() <= 24,
            "{}",
            std::mem::size_of::<State>()
        );
    }
}
