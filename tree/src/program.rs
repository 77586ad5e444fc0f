//! The interface between the recording scheduler and whatever it executes.
//!
//! The scheduler knows nothing of the modeling language: a [`Program`] is any deterministic
//! transition system whose threads take one shared-memory event per step.

use std::hash::Hash;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::event::{Event, Footprint};
use crate::history::{Call, History, ThreadId};
use crate::limit::Bound;
use crate::race::DataRace;
use crate::source::Span;

/// A failure of the model itself: null dereference, failed `assert`, index out of range,
/// type mismatch, a data race. It ends the path in a *fault* leaf, which counts as failing.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Fault {
    /// What went wrong, for people: "null dereference reading `n.next`".
    pub message: String,
    /// Where, when known.
    pub span: Option<Span>,
    /// For a data race, the two accesses (the fault's span is the second's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub race: Option<Box<DataRace>>,
}

impl Fault {
    /// A fault with `message` at `span`.
    pub fn new(message: impl Into<String>, span: Option<Span>) -> Fault {
        Fault {
            message: message.into(),
            span,
            race: None,
        }
    }

    /// The fault of a run that met `race`.
    pub fn race(race: Box<DataRace>) -> Fault {
        Fault {
            message: race.message(),
            span: race.second.span,
            race: Some(race),
        }
    }
}

/// Why a thread cannot move at a stuck leaf: what it waits for, for people.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Wait {
    /// The waiting thread.
    pub thread: ThreadId,
    /// Its pending operation, e.g. `inc()`.
    pub op: String,
    /// What it waits for: "waits for lock `lk`, held by T0".
    pub reason: String,
    /// Where it waits, when known.
    pub span: Option<Span>,
}

/// What a thread can do at a state, as [`Program::readiness`] tells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Readiness {
    /// It has a step to take (or the program cannot tell without taking it).
    Ready,
    /// It cannot move here; its step, when it can, would touch this.
    Blocked(Footprint),
    /// It has run all its operations.
    Done,
}

/// The outcome of asking one thread to take its next step.
#[derive(Clone, Debug)]
pub enum Step<S> {
    /// The thread has run all its operations.
    Done,
    /// The thread cannot move in this state (a held lock, a false `await`).
    Blocked,
    /// The thread took one step.
    Moved {
        /// The state after the step.
        state: S,
        /// The shared event of the step (with the call / return emitted with it). Shared: a
        /// program that takes the same step from many states (see `fgvt-lang`'s memoized
        /// steps) hands out one allocation, which the tree then numbers by address.
        event: Arc<Event>,
    },
    /// The step failed: the path ends in a fault leaf.
    Fault {
        /// The event that was being executed, when there was one (boxed: a step is moved
        /// about on every edge, and a fault is rare).
        event: Option<Box<Event>>,
        /// The failure.
        fault: Fault,
    },
    /// The step ran out of its local budget (an endless loop that touches no shared memory):
    /// the path ends in a bounded leaf.
    Bounded {
        /// Why, for people.
        reason: String,
    },
    /// The way asked for is past a bound of the program's own (see [`Bound::Stale`]): the
    /// path ends in a bounded leaf.
    Cut {
        /// What was cut, and why.
        bound: Bound,
    },
}

impl<S> Step<S> {
    /// The same step, its state (if it moved) made by `f`: what a program over another's
    /// states (a table's numbers, a wrapper) answers.
    pub fn map_state<T>(self, f: impl FnOnce(S) -> T) -> Step<T> {
        match self {
            Step::Moved { state, event } => Step::Moved {
                state: f(state),
                event,
            },
            Step::Done => Step::Done,
            Step::Blocked => Step::Blocked,
            Step::Fault { event, fault } => Step::Fault { event, fault },
            Step::Bounded { reason } => Step::Bounded { reason },
            Step::Cut { bound } => Step::Cut { bound },
        }
    }
}

/// A deterministic concurrent program the recording scheduler can explore.
///
/// A state must capture everything that decides the future of the program: shared memory and
/// every thread's local state. The coarse history is *not* part of it: the explorer rebuilds
/// the history of every path from the calls and returns its steps carry ([`Event::call`],
/// [`Event::ret`]) and tells states apart by (state, history) itself, so a program neither
/// carries nor hashes its history.
pub trait Program {
    /// A complete state of the program (without its history).
    type State: Clone + Eq + Hash;

    /// Number of threads.
    fn threads(&self) -> usize;

    /// The state after the serial `init` part of the test, with that part's coarse history.
    fn initial_state(&self) -> Result<(Self::State, History), Fault>;

    /// Lets `thread` take its next step from `state`.
    fn step(&self, state: &Self::State, thread: ThreadId) -> Step<Self::State>;

    /// Takes way `way` (≥ 1) of `thread`'s next step from `state`: under weak memory, a load
    /// that could read several stores reads the `way`-th (see [`crate::Choice`]). The explorer
    /// asks for it only when [`Program::step`] returned an event whose [`Event::ways`] is more
    /// than `way`; a program whose steps go one way only never sees it, and by default says so
    /// with a fault.
    fn step_way(&self, state: &Self::State, thread: ThreadId, way: u32) -> Step<Self::State> {
        let _ = state;
        Step::Fault {
            event: None,
            fault: Fault::new(
                format!(
                    "the program offered T{thread} more ways than one, but cannot take way {way}"
                ),
                None,
            ),
        }
    }

    /// At a complete leaf: runs the serial `final` operations and returns *their* coarse
    /// history (which the explorer appends to the path's), or the fault they hit.
    fn finish(&self, state: &Self::State) -> Result<History, Fault>;

    /// At a stuck leaf: the call of every thread that is blocked before its operation's first
    /// event (the call it was about to make). The explorer adds them to the path's history as
    /// pending calls.
    fn blocked_calls(&self, state: &Self::State) -> Vec<(ThreadId, Call)>;

    /// What tells two paths' histories apart, when the program knows better than the
    /// canonical history (a model whose spec says which histories have the same verdicts
    /// after every continuation): the keys, and `base`'s number. `None`: canonical histories.
    fn history_keys(&self, _base: &History) -> Option<(Box<dyn crate::HistoryKeys>, u32)> {
        None
    }

    /// Whether a step is cheaper from the state the program's last step reached than from any
    /// other: a program that re-executes real code can go on from where its last execution
    /// paused instead of running it again. The explorer then asks a state's threads for their
    /// steps last to first, so that the child it opens next, the first thread's, is where the
    /// program is (in a bounded-preemption search at its bound, the thread that moved last is
    /// asked first all the same: whether it can go on decides whether the others are asked).
    /// `false` (the default) keeps the plain order.
    fn goes_on_from_last_step(&self) -> bool {
        false
    }

    /// Lets go of what only stepping from `state` needs. The explorer calls it once a state
    /// is explored for good (its node and its strongly connected component finished): it is
    /// never stepped from again, and is kept only to be recognized when a path meets it again.
    /// What [`Hash`] and [`Eq`] read must stay as it is. A program whose states are large to
    /// step from and small to recognize (fgvt-sync's: a schedule to re-execute, told apart by
    /// a fingerprint) saves their difference per state. By default nothing is let go.
    fn retire(&self, state: &mut Self::State) {
        let _ = state;
    }

    /// What `thread` can do at `state`, without taking its step (see [`Readiness`]). The
    /// partial-order reduction of [`crate::reduced`] asks it of every thread at every state it
    /// opens: a step that cannot be taken yet (a lock's acquisition while another thread holds
    /// it) races with the steps that keep it from being taken, and a race is reversed only by a
    /// thread that can move. A preemption-bounded search asks it of each thread the bound keeps
    /// from moving: one that cannot move anyway leaves no run out. By default the thread is
    /// asked for its step, and a blocked one may touch anything; a program that can tell more
    /// cheaply says so.
    fn readiness(&self, state: &Self::State, thread: ThreadId) -> Readiness {
        match self.step(state, thread) {
            Step::Done => Readiness::Done,
            Step::Blocked => Readiness::Blocked(Footprint::Everything),
            _ => Readiness::Ready,
        }
    }

    /// At a stuck leaf: why `thread` cannot move (the lock it waits for, the `await` that does
    /// not hold), or `None` when it is done or the program cannot tell.
    fn why_blocked(&self, _state: &Self::State, _thread: ThreadId) -> Option<Wait> {
        None
    }

    /// Whether the step that reached `state` ended a turn of a retry loop that wrote nothing,
    /// its thread back at the loop's head as if the turn had not been (see [`QuietTurn`]).
    /// The partial-order reduction of [`crate::reduced`] ends a run there: the run that skips
    /// the turn stands for it. `None` (the default) for every other step, and for a program
    /// that cannot tell.
    fn turn_ended(&self, _state: &Self::State) -> Option<QuietTurn> {
        None
    }

    /// Under weak memory, what the step that reached `state` read and stored (see
    /// [`StoreAccess`]). The partial-order reduction of [`crate::reduced`] leaves a stale read
    /// to the order in which it comes before the newer store it missed. Nothing (the default)
    /// for a program that cannot tell.
    fn store_access(&self, _state: &Self::State) -> StoreAccess {
        StoreAccess::default()
    }
}

/// What a step under weak memory did with stores: the stale store it read and the store it
/// made, each named by its place in the order the run made its stores (initial values first),
/// which is how [`crate::reduced`] tells that a store was there before another one.
///
/// A load that reads a store `s` older than the latest, in a run where another thread's store
/// `w` made after `s` came before the load and races with it (nothing between orders them),
/// reads what it would read if it came before `w`: the run in that order, which the
/// partial-order reduction takes anyway to reverse the race, has the same graph.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct StoreAccess {
    /// The store it read, when an older one than the latest of its location.
    pub stale_read: Option<u32>,
    /// The store it made.
    pub made: Option<u32>,
}

/// A turn of a retry loop that wrote nothing and left its thread back at the loop's head
/// (`fgvt_sync::hint::spin_loop()`, whose promise is that a turn carries nothing into the next
/// but what it wrote): what [`Program::turn_ended`] tells of it. Writing only to what its
/// thread made in the operation and has not published yet (a compare-and-swap loop's new
/// node, its next pointer set anew at every turn) counts as nothing: no other thread can read
/// it, and the next turn writes it again.
///
/// Take such a turn out of a run: every other thread reads what it read before (the turn wrote
/// nothing), its own thread goes on from the head as it did after the turn, and the run is
/// still a run of the program, consistent under weak memory too (the turn's reads only added
/// edges to the graph). Its outcome is the same but for two things, both in the direction that
/// keeps a failure: an operation whose call the turn carried is called later (so more
/// operations precede it, and a history that failed still fails), and fewer accesses happen
/// before later ones (a data race stays one). The one thing that may go the other way is
/// under weak memory, where operations are ordered by happens-before: a turn whose reads
/// made its thread happen after another operation's return ordered that operation before the
/// thread's later ones, which the run without it may not (`synchronized`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QuietTurn {
    /// How many steps its thread took in the turn, the last one included.
    pub steps: u32,
    /// Whether, under weak memory, the turn's reads made its thread happen after another
    /// thread's operation's return that it did not happen after before: then only an outcome
    /// that reads endings, not histories, is the same without it.
    pub synchronized: bool,
}
