//! The recording scheduler for real code: one execution of a test on fgvt's engine
//! ([`crate::engine`]), with fgvt choosing every step.
//!
//! The engine runs every task of an execution as a coroutine on the calling OS thread, and asks
//! which runnable task goes next. It cannot see what a task is about to do, so fgvt's
//! instrumented types say it first: an access registers its pending step in the [`Recorder`]
//! (kind, object, the caller's source position), then switches; the recorder reads the pending
//! step of every runnable task and resumes the one the explorer's schedule names, which then
//! acts and records the event with the value it saw. Only one task runs at a time, so an access
//! is atomic by construction: the memory model is sequentially consistent (weak memory is
//! `weak.rs`'s, on top).
//!
//! A task with no pending step (a thread starting, ending, or the main task spawning and
//! joining) runs on without a choice: those points carry no event and do not branch.
//!
//! The recorder lives in a thread-local for the length of one execution; every task of the
//! execution runs on this OS thread, so every access finds it. Outside an execution (the
//! object's own serial runs, which the `self` spec makes) the types act at once.
//!
//! One [`Engine`] serves a whole exploration and keeps the task stacks from one execution to
//! the next. An execution that reaches a point past its schedule is *paused* there, its tasks
//! suspended, until the explorer either asks for one more step of it or abandons it (see
//! [`execute`]).
//!
//! An execution that ends before its threads do (a fault, a deadlock, the explorer
//! abandoning a paused one) is still run to its end, so that every task finishes and gives its
//! stack back: each thread left is resumed once more, and its pending access either lets it
//! finish its operation alone or unwinds it with [`Cancelled`] instead of acting.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::panic::Location;
use std::sync::{Arc, Once};

use fgvt_tree::replay::{Run, RunEnd};
use fgvt_tree::{Call, Event, EventKind, Fault, History, QuietTurn, ThreadId, Value, Wait};

use crate::engine::{self, Decision, Stop, TaskId, Tasks};
use crate::fingerprint::{
    self, combine, hash_of, summand, Access, DroppedTurn, Effect, Fingerprint, Loops, Memory,
    Observations, Stamp, Word, Wrote,
};
use crate::marked::Method;
use crate::object_id::ObjectId;
use crate::races::{Checked, Clocks, HappensBefore, Making, Races, Touch};
use crate::shown::{number, pointer_text, Pointers, Shown};
use crate::sources;
use crate::weak::{self, Mode, Request, Shape, Target, WeakMemory};

mod freed;
pub(crate) mod leaks;
pub(crate) mod spawned;

pub(crate) use freed::{dropped, made_in_this_run, USE_AFTER_FREE};
pub(crate) use leaks::{arc_freed, arc_made, LEAK};

thread_local! {
    /// The execution running on this OS thread, if any.
    /// Boxed: it moves in and out at every pause and resumption, and is large.
    static RECORDER: RefCell<Option<Box<Recorder>>> = const { RefCell::new(None) };

    /// Whether the last execution started on this OS thread runs under weak memory: a
    /// `SeqCst` access of a sequentially consistent run then has nothing to ask the recorder.
    static WEAK_RUN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };

    /// How many executions have started on this OS thread: the next one's number.
    static EXECUTIONS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };

    /// How the executions run on this OS thread so far ran (see [`runs`]).
    static RUNS: std::cell::Cell<Runs> = const { std::cell::Cell::new(Runs::NONE) };
}

/// How a test's code ran: the executions started and gone on, the steps they took and the
/// threads unwound.
///
/// This is what a per-execution cost is measured by (`benches/peers` sets it beside shuttle's
/// and loom's executions). To take a step from a state, fgvt re-runs the test from the start
/// along the state's schedule, unless the execution that reached the state is paused there;
/// then it goes on by that one step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Runs {
    /// Executions of the test started from the start (the object made anew, its serial part
    /// run, then the schedule followed).
    pub started: u64,
    /// Times a paused execution went on by the next step instead of starting anew.
    pub went_on: u64,
    /// Steps (instrumented accesses of the threads) all of them took, replayed ones included.
    pub steps: u64,
    /// Test threads unwound (by a panic fgvt raises and catches) because their execution had
    /// ended. A thread of an execution the explorer abandons finishes its operation instead,
    /// alone, unless it must wait for another thread there (a lock, a condition variable, a
    /// spin loop).
    pub unwound: u64,
}

impl Runs {
    const NONE: Runs = Runs {
        started: 0,
        went_on: 0,
        steps: 0,
        unwound: 0,
    };

    /// What ran between `earlier` (an earlier reading of [`runs`]) and this reading.
    pub(crate) fn since(self, earlier: Runs) -> Runs {
        Runs {
            started: self.started - earlier.started,
            went_on: self.went_on - earlier.went_on,
            steps: self.steps - earlier.steps,
            unwound: self.unwound - earlier.unwound,
        }
    }
}

/// How the executions run on this OS thread so far ran: read before and after a test's
/// exploration, the difference is the exploration's (`Localized::runs`).
pub(crate) fn runs() -> Runs {
    RUNS.get()
}

/// Adds `more` (a worker thread's runs, see `program.rs`) to this OS thread's [`Runs`].
pub(crate) fn add_runs(more: Runs) {
    count(|runs| {
        runs.started += more.started;
        runs.went_on += more.went_on;
        runs.steps += more.steps;
        runs.unwound += more.unwound;
    });
}

thread_local! {
    /// Whether this OS thread is a worker of a parallel exploration (see `program.rs`).
    static WORKER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Whether an execution on this worker met an object made in a `const` context.
    static MET_STATIC: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Makes this OS thread a worker of a parallel exploration: its executions may not touch an
/// object made in a `const` context (see [`leave_static_to_main`]).
pub(crate) fn become_worker() {
    WORKER.set(true);
}

/// Whether this OS thread is a worker of a parallel exploration.
pub(crate) fn on_worker() -> bool {
    WORKER.get()
}

/// Ends the worker's execution at an object made in a `const` context, before it touches it:
/// such an object (a `static`) is one for the whole process, and the workers' executions run
/// at the same time, so only the search's own thread may run them. The worker stops
/// ([`met_static`]); the exploration goes on without it.
pub(crate) fn leave_static_to_main() -> ! {
    MET_STATIC.set(true);
    end_with(|_| RunEnd::Abandoned);
    cancel()
}

/// Whether an execution on this worker met an object made in a `const` context.
pub(crate) fn met_static() -> bool {
    MET_STATIC.get()
}

/// Adds to this OS thread's [`Runs`].
fn count(add: impl FnOnce(&mut Runs)) {
    RUNS.with(|runs| {
        let mut now = runs.get();
        add(&mut now);
        runs.set(now);
    });
}

/// Counts an execution that started (`went_on` false) or went on, and took `steps` steps.
fn count_run(went_on: bool, steps: usize) {
    count(|runs| {
        if went_on {
            runs.went_on += 1;
        } else {
            runs.started += 1;
        }
        runs.steps += steps as u64;
    });
}

/// What a task is about to do: registered before it switches, read by the scheduler.
///
/// It is built on every access, recorded or not (the `self` spec's serial runs go through the
/// same code), so it holds no allocation: the object's name is made only for an event.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pending {
    /// The kind of access (a lock's enables the task only while the lock is free).
    pub kind: EventKind,
    /// The object accessed; `None` for a step that accesses nothing (an operation's only
    /// step, see [`end_op`]).
    pub object: Option<ObjectId>,
    /// Where the access is in the user's source.
    pub caller: &'static Location<'static>,
    /// For a lock or unlock: whether the lock is taken shared (a read lock, which other
    /// readers may hold at the same time) rather than exclusive.
    pub shared: bool,
    /// What the step does besides its kind, where that decides when it can happen.
    pub role: Role,
    /// Where the object's identity lives (`Identity::address`); 0 for none.
    pub address: usize,
    /// What the access is given, where a loop's turn may carry it from the turn before (see
    /// [`fingerprint::Access::args`]): a compare-and-swap's expected and new values, else 0.
    pub args: u64,
}

/// What a lock or condition-variable step does besides its kind: the scheduler reads it to
/// know when the step can happen, and the recorder to keep who waits for what.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Role {
    /// An access like any other: a lock step waits while the lock cannot be had.
    Plain,
    /// A `try_lock`: it never waits, it takes the lock or sees it held.
    Attempt,
    /// A look at a lock's poison flag (`is_poisoned`): it orders nothing.
    Inspect,
    /// The first step of a condition-variable wait: it releases the mutex (an unlock) and
    /// queues the thread on the condition variable.
    Wait(ObjectId),
    /// The second step of a condition-variable wait: it takes the mutex back (a lock), and can
    /// happen only once a notify has woken the thread.
    Woken(ObjectId),
    /// A `JoinHandle::join`: it takes the spawned thread's handle lock once the thread has
    /// returned, and leaves it with no holder (see `runtime/spawned.rs`).
    Join,
}

impl Role {
    /// The role as a number, for fingerprints.
    fn code(self) -> u64 {
        match self {
            Role::Plain => 0,
            Role::Attempt => 1,
            Role::Inspect => 4,
            Role::Join => 5,
            Role::Wait(condvar) => combine(2, condvar.key()),
            Role::Woken(condvar) => combine(3, condvar.key()),
        }
    }
}

impl Pending {
    /// The accessed object's name in reports (`AtomicUsize#0`), empty for a local step.
    fn name(&self) -> String {
        self.object.map(|o| o.to_string()).unwrap_or_default()
    }

    /// The accessed lock's key, for a lock or unlock.
    fn lock(&self) -> Option<u64> {
        self.object.map(|o| o.key())
    }

    /// The access's shape in an observation log: kind, object and source position.
    fn shape(&self) -> u64 {
        let object = self.object.map_or(0, |o| o.key());
        fingerprint::shape(kind_code(self.kind), object, self.caller)
    }

    /// The access as an observation log keeps it.
    fn access(&self) -> Access {
        Access {
            shape: self.shape(),
            at: self.caller,
            args: self.args,
        }
    }

    /// What the pending step is, for a fingerprint: its shape, and how it takes a lock.
    fn hash(&self) -> u64 {
        fingerprint::entry(
            self.shape(),
            combine(u64::from(self.shared), self.role.code()),
        )
    }
}

/// An event kind as a number, for fingerprints.
fn kind_code(kind: EventKind) -> u64 {
    match kind {
        EventKind::Read => 1,
        EventKind::Write => 2,
        EventKind::Cas { success } => 3 + u64::from(success),
        EventKind::Dcas { success } => 5 + u64::from(success),
        EventKind::Lock => 7,
        EventKind::Unlock => 8,
        EventKind::Await => 9,
        EventKind::Atomic => 10,
        EventKind::Local => 11,
    }
}

/// The first value of a new object, for fingerprints.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Initial {
    /// An atomic's value.
    Value(Word),
    /// Data fgvt does not read (a cell's, a lock's): a version named after the creator.
    Version,
}

/// What the runtime does with an object's identity (`object_id.rs`): registers a new object with
/// the execution's recorder, and describes an access to one.
impl ObjectId {
    /// The identity of a new object of type `kind` holding `initial`, created by the caller;
    /// `making` says what its making is to the data-race check.
    #[track_caller]
    pub fn new(kind: &'static str, initial: Initial, making: Making) -> ObjectId {
        ObjectId::new_at(kind, initial, making, Location::caller())
    }

    /// The identity of an object made in a `const` context at `at`, named `name`, given at
    /// its first access in the run (see `identity.rs`): made before the run's threads, so no
    /// access races with its making.
    pub(crate) fn lazy(
        name: &'static str,
        initial: Initial,
        at: &'static Location<'static>,
    ) -> ObjectId {
        let name = sources::name_at(at).unwrap_or(name);
        with_free_recorder(|rec| rec.create_lazy(initial, name, at))
            .unwrap_or(ObjectId::from_parts(0, 0, 0, name))
    }

    /// [`ObjectId::new`] for an object made at `at`.
    pub(crate) fn new_at(
        kind: &'static str,
        initial: Initial,
        making: Making,
        at: &'static Location<'static>,
    ) -> ObjectId {
        let name = sources::name_at(at).unwrap_or(kind);
        with_recorder(|rec| rec.create(initial, name, making, at))
            .unwrap_or(ObjectId::from_parts(0, 0, 0, name))
    }

    /// An access of kind `kind` to this object by the caller.
    #[track_caller]
    pub fn pending(&self, kind: EventKind) -> Pending {
        self.pending_at(kind, Location::caller())
    }

    /// An access of kind `kind` to this object at `caller`.
    pub fn pending_at(&self, kind: EventKind, caller: &'static Location<'static>) -> Pending {
        Pending {
            kind,
            object: Some(*self),
            caller,
            shared: false,
            role: Role::Plain,
            // Set by the object, which knows where it is (`Identity::pending_at`).
            address: 0,
            args: 0,
        }
    }
}

/// What an access saw or did, once it has acted.
pub(crate) struct Acted {
    /// The kind, now known exactly (a CAS's success).
    pub kind: EventKind,
    /// The value read or written, made into text only if its step becomes an event.
    pub value: Shown,
}

impl Acted {
    /// An access of `kind` that shows `value` as text made already (a lock's mode, which is
    /// static text: no allocation on a step that is not shown).
    pub fn new(kind: EventKind, value: impl Into<Cow<'static, str>>) -> Acted {
        Acted {
            kind,
            value: Shown::Text(value.into()),
        }
    }

    /// An access of `kind` that shows `value`, made into text only if it is shown.
    pub fn shown(kind: EventKind, value: Shown) -> Acted {
        Acted { kind, value }
    }

    /// An access of `kind` that shows the text `text` makes, called only if the step becomes
    /// an event (a value of the user's type, formatted with `Debug`).
    pub fn text_if_shown(kind: EventKind, text: impl FnOnce() -> String) -> Acted {
        let shown = with_recorder(|rec| rec.shows(rec.taken)).unwrap_or(false);
        Acted::new(kind, if shown { text() } else { String::new() })
    }
}

/// A test thread of the execution.
#[derive(Default)]
struct Lane {
    /// The engine's task running it, once it has started.
    task: Option<TaskId>,
    /// Its step about to happen, if it has registered one.
    pending: Option<Pending>,
    /// The operation it is running.
    op: Option<RunningOp>,
    /// What its accesses in the current operation observed (see `fingerprint.rs`).
    observed: Observations,
    /// What it has made in the current operation.
    made: Made,
    /// While it waits on a condition variable (between the two steps of a wait): which one,
    /// and whether a notify has woken it.
    wait: Option<Waiting>,
    /// Plain accesses it has made since its last step.
    plain_run: u32,
    /// A spawned thread that has returned and that nobody has joined yet: the hash of what it
    /// observed, which decides what it returned (see `runtime/spawned.rs`).
    result: Option<u64>,
    /// Under weak memory, how many events of the graph it had made when it registered its
    /// pending step (see [`Stamp`]).
    events_before: u32,
    /// The retry loop's turn it just ended, which wrote nothing but learned of other
    /// operations' returns, until its next access tells whether it learns them again.
    learned_turn: Option<LearnedTurn>,
    /// The objects it made in its current operation since it last wrote anything else: no
    /// other thread can reach them yet (see [`Wrote::Private`]).
    private: Vec<u64>,
    /// Turns of a retry loop it has begun since the explorer abandoned the execution (see
    /// [`retry`]).
    turns_after_end: u32,
}

/// A retry loop's turn that wrote nothing but made its thread happen after other operations'
/// returns (a [`QuietTurn`] that is `synchronized`). If the thread's next access, the head of
/// its next turn, is an acquire read of a store whose release view holds them all, the thread
/// happens after them from there on with or without the turn: that access's step then ends
/// the turn for the partial-order reduction, as quiet and not synchronized.
struct LearnedTurn {
    /// Its thread's steps in it.
    steps: u32,
    /// The returns it learned of.
    learned: Vec<fgvt_memory::EventRef>,
}

/// A thread waiting on a condition variable.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    /// The condition variable's key.
    condvar: u64,
    /// Whether a notify has woken it: it may take the mutex back once it is free.
    notified: bool,
}

/// How many objects and new addresses a creator (a thread in one operation, or the serial
/// part) has made: their identities count them.
#[derive(Default)]
struct Made {
    objects: u64,
    addresses: u64,
}

/// The serial part (constructor, `init`, `final`) as a creator of objects and addresses.
#[derive(Default)]
struct SerialLane {
    /// Accesses so far: the serial part's whole local state, as it runs the same in every
    /// execution.
    accesses: u64,
    made: Made,
}

impl Lane {
    /// Back to a thread that has not started, keeping the room of its log.
    fn reset(&mut self) {
        self.task = None;
        self.pending = None;
        self.op = None;
        self.observed.reset();
        self.made = Made::default();
        self.wait = None;
        self.plain_run = 0;
        self.result = None;
        self.events_before = 0;
        self.learned_turn = None;
        self.private.clear();
        self.turns_after_end = 0;
    }

    /// How many steps it has taken in its current operation.
    fn op_steps(&self) -> u32 {
        (self.op.as_ref()).map_or(0, |op| u32::try_from(op.steps).unwrap_or(u32::MAX))
    }
}

/// Whether a test thread can move at a point of an execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    /// Its pending step can happen now.
    Enabled,
    /// Its pending step waits (a held lock).
    Blocked,
    /// It has run all its operations.
    Done,
}

/// A point of an execution where the explorer chooses (or would, at the end of the threads):
/// its fingerprint and what each thread can do there.
#[derive(Clone, Debug)]
pub(crate) struct Point {
    /// Equal exactly when the futures are equal (see `fingerprint.rs`).
    pub fingerprint: Fingerprint,
    /// Each test thread's status.
    pub statuses: Vec<Status>,
    /// What each blocked thread's step would touch (see [`fgvt_tree::Footprint`]), by thread.
    pub blocked: Vec<(ThreadId, fgvt_tree::Footprint)>,
    /// The retry loop's turn that the last step ended, if it wrote nothing.
    pub turn: Option<QuietTurn>,
    /// Under weak memory, what the last step did with stores.
    pub store_access: fgvt_tree::StoreAccess,
}

/// An operation being run by a thread.
struct RunningOp {
    index: usize,
    call: Call,
    /// Steps taken so far.
    steps: usize,
    /// The position in [`Recorder::steps`] of its last step.
    last: Option<usize>,
}

/// Whether the accesses of the current task are steps of the tree.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Constructor, `init` or `final`: the main task alone, acting at once.
    Serial,
    /// The test threads run; their accesses are steps.
    Concurrent,
}

/// The record of one execution.
struct Recorder {
    phase: Phase,
    lanes: Vec<Lane>,
    /// Test threads by the engine's task number.
    tasks: Vec<Option<ThreadId>>,
    /// The events of the steps from `record_from` on.
    steps: Vec<Event>,
    /// Steps taken so far.
    taken: usize,
    /// The first step whose event is built.
    record_from: usize,
    /// The serial parts' calls and returns (`init`, `final`); the threads' are in their
    /// events, from which the explorer builds each path's history.
    history: History,
    /// Locks held, by object key, with their holders.
    locks: HashMap<u64, Held, foldhash::fast::RandomState>,
    /// The threads waiting on each condition variable that no notify has woken yet, by the
    /// condition variable's key, in the order they started waiting (`notify_one` wakes the
    /// first).
    condvars: HashMap<u64, Vec<ThreadId>, foldhash::fast::RandomState>,
    /// The instrumented objects' values, for fingerprints.
    memory: Memory,
    /// The serial part, as a creator.
    serial: SerialLane,
    /// Where the execution stopped: the point at which it was abandoned or got stuck, or the
    /// end of the threads.
    point: Option<Point>,
    /// The number of history events before the threads start (the `init` part's).
    concurrent_from: usize,
    /// The number of history events before the `final` part, once the threads have ended.
    finals_from: Option<usize>,
    /// At a stuck end: the calls of the threads blocked before their operation's first step.
    blocked: Vec<(ThreadId, Call)>,
    /// Objects created so far: the next object's number (stable across executions, as every
    /// execution creates the same objects in the same order).
    objects: u32,
    /// Addresses seen in pointer values, numbered in order of first appearance: reports show
    /// `ptr#2` where the run had an address that differs between executions.
    pointers: Pointers,
    /// How the execution ended, once it has.
    end: Option<RunEnd>,
    /// The threads to choose, in order: the schedule the explorer asked for. Past its end the
    /// execution pauses at the next point (see [`execute`]).
    schedule: Vec<Pick>,
    /// The way of the step being taken (see [`Pick`]).
    way: u32,
    /// How atomics treat their orderings.
    mode: Mode,
    /// Under weak memory, the execution graph of the accesses so far.
    weak: Option<Box<WeakMemory>>,
    /// The data-race check: always under weak memory; sequentially consistent, only while it
    /// keeps an access (see `races.rs`).
    races: Option<Box<Races>>,
    /// Whether accesses to `Shared` cells are checked for data races too.
    shared_races: bool,
    /// What becomes of loops without the spin hint ([`Engine::new`]).
    loops: Loops,
    /// Under [`Mode::Sc`] with `watch`: whether an access declared a weaker ordering.
    saw_weak: bool,
    /// Set when the step asked for was a way past the bound on ways (see [`Execution::cut`]).
    cut: Option<fgvt_tree::Bound>,
    /// How many choices of `schedule` have been made.
    chosen: usize,
    /// Where the execution could not follow `schedule`: the choice's index and the thread it
    /// wanted, which could not move.
    diverged: Option<(usize, ThreadId)>,
    /// What the execution runs: the test's plan on a fresh object.
    body: Body,
    /// The threads offered to `choose` at the current step (kept to reuse its allocation).
    offered: Vec<ThreadId>,
    /// Accesses that acted at once after the explorer abandoned the execution (see
    /// [`Recorder::drains`]).
    drained: u32,
    /// The lane the next spawned thread takes (see `runtime/spawned.rs`).
    next_lane: usize,
    /// Whether a spawned thread's run is an operation of its own (see
    /// [`spawned::lanes_taken`]).
    spawned_ops: bool,
    /// Turns a destructor has waited (at a retry hint) in a thread that unwinds from the
    /// ended run (see [`retry`]).
    cleanup_waits: u32,
    /// The retry loop's turn that the step being taken ended, if it wrote nothing (see
    /// [`fgvt_tree::QuietTurn`]): set when the thread registers its next access, the loop's
    /// head, and cleared when a step begins.
    turn_ended: Option<QuietTurn>,
    /// Under weak memory, what the step being taken did with stores (set by its access,
    /// cleared when a step begins).
    store_access: fgvt_tree::StoreAccess,
    /// The execution's number among those started on this OS thread (see [`execution`]).
    number: u64,
    /// The `Arc` allocations made and not yet freed, by address, with where each was made
    /// (see `runtime/leaks.rs`).
    arcs: HashMap<usize, &'static Location<'static>, foldhash::fast::RandomState>,
    /// Per place in the source, how many objects made there in a `const` context have been
    /// given identities in the run (see [`Recorder::create_lazy`]).
    lazy_made: HashMap<u64, u64, foldhash::fast::RandomState>,
    /// The objects dropped so far, by where their identity lived (see `runtime/freed.rs`).
    freed: HashMap<usize, freed::Freed, foldhash::fast::RandomState>,
    /// How much of the weak-memory state points take in ([`Engine::identity`]).
    identity: Identity,
    /// With [`Identity::OnPath`]: the cheap part of the fingerprint ([`Recorder::cheap_part`])
    /// at each choice of the schedule made so far, and at the point the execution is paused at.
    trail: Vec<u64>,
}

/// The most accesses an abandoned execution's threads may make to finish their operations
/// (see [`Recorder::drains`]); past them, each is unwound. An operation finishes in a few
/// accesses; one that spins without the hint, waiting for a thread that will not move, would
/// spin to the bound, and a few dozen accesses made at once cost about one unwinding.
const DRAIN_STEPS: u32 = 128;

/// The most accesses the threads of an ended run may make at once while a destructor waits for
/// them in an unwinding thread, and the most turns that destructor may wait: past them it
/// waits for nothing that can come (see [`retry`]).
const CLEANUP_STEPS: u32 = 100_000;

/// What an execution runs, in the engine's main task.
pub(crate) type Body = Arc<dyn Fn() + Send + Sync>;

/// The unwinding payload that ends a test thread whose execution has ended (see the module
/// docs): not a panic of the object, so nothing reports it.
pub(crate) struct Cancelled;

/// Who holds a lock: one thread exclusively (a mutex, a write lock), or readers.
#[derive(Debug)]
struct Held {
    exclusive: bool,
    /// At least one: a lock nobody holds has no entry. Each holder with where it took the
    /// lock (a reader that took it twice is here twice).
    holders: Vec<(ThreadId, &'static Location<'static>)>,
}

impl Held {
    /// "T0 (taken at src/lib.rs:12:9)", or "readers T0 (taken at …), T2 (taken at …)": the
    /// holders, for a stuck leaf, with where each took the lock (a deadlock is two places in
    /// the code, the waiter's and the holder's).
    fn holders(&self) -> String {
        let names: Vec<String> = self
            .holders
            .iter()
            .map(|(t, at)| {
                format!(
                    "T{t} (taken at {}:{}:{})",
                    at.file(),
                    at.line(),
                    at.column()
                )
            })
            .collect();
        if self.exclusive {
            names.join(", ")
        } else {
            format!("readers {}", names.join(", "))
        }
    }
}

/// One choice of a schedule: the thread that moves, and which way its step goes (see
/// [`crate::weak`]; 0 for a step that goes one way).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Pick {
    pub thread: u8,
    pub way: u8,
}

/// One execution, as [`execute`] ran it.
pub(crate) struct Execution {
    /// Its steps from the first one asked for, and how it ended.
    pub run: Run,
    /// How many steps it took.
    pub taken: usize,
    /// Where it stopped choosing: abandoned or stuck there, or the end of the threads.
    pub point: Option<Point>,
    /// The history (of the serial parts: see [`Recorder::history`]) the execution had where it
    /// stopped: abandoned, or paused along the empty schedule (empty otherwise: the end has
    /// it, and a pause further on the `init` part's history is not read again).
    pub history: History,
    /// The number of history events of the `init` part.
    pub concurrent_from: usize,
    /// The number of history events before the `final` part, once the threads have ended.
    pub finals_from: Option<usize>,
    /// At a stuck end: the calls of the threads blocked before their operation's first step.
    pub blocked: Vec<(ThreadId, Call)>,
    /// Where the execution could not follow its schedule: the choice's index and the thread
    /// it wanted, which could not move.
    pub diverged: Option<(usize, ThreadId)>,
    /// Under [`Mode::Sc`] with `watch`: whether an access declared an ordering weaker than
    /// `SeqCst`.
    pub saw_weak: bool,
    /// The last step asked for was a way past the bound on ways: its bounded leaf.
    pub cut: Option<fgvt_tree::Bound>,
}

/// Runs `body` on `engine`, for `threads` test threads, along `schedule` (the thread of each
/// step), to the first point past it: the steps taken (as an event for the last one), how the
/// execution ended and where it stopped.
///
/// An execution that reaches a point past its schedule, with its threads still running, is
/// *paused* there rather than ended: if the next call's schedule is this one and one more
/// step, the execution goes on from where it is, instead of being run again from the start
/// (the explorer asks for the steps of a state it has just reached first, see
/// `fgvt_tree::explore`). Any other schedule ends the paused execution (its threads are
/// cancelled) and starts anew.
pub(crate) fn execute(
    engine: &mut Engine,
    threads: usize,
    schedule: &[Pick],
    body: Body,
) -> Execution {
    install_panic_hook();
    // Set for whichever execution runs next, a fresh one or one that goes on.
    WEAK_RUN.set(matches!(engine.mode, Mode::Weak(_)));
    if let Some(mut paused) = engine.paused.take() {
        let next = schedule.split_last().and_then(|(&next, before)| {
            // A trail kept for another identity would leave out earlier points.
            (before == paused.schedule.as_slice()
                && Arc::ptr_eq(&paused.body, &body)
                && paused.identity == engine.identity)
                .then_some(next)
        });
        if let Some(next) = next {
            paused.schedule.push(next);
            paused.record_from = paused.taken;
            paused.point = None;
            let before = paused.taken;
            RECORDER.with(|r| *r.borrow_mut() = Some(paused));
            let outcome = engine.run();
            let execution = finish(engine, outcome);
            count_run(true, execution.taken - before);
            return execution;
        }
        if let Some(mut ended) = engine.abandon(paused) {
            engine.scratch = Scratch::keep(&mut ended);
        }
    }
    let Scratch {
        mut lanes,
        tasks,
        locks,
        condvars,
        memory,
        pointers,
        offered,
        graph,
        mut trail,
        trail_schedule: mut followed,
        trail_body,
    } = std::mem::take(&mut engine.scratch);
    lanes.resize_with(threads, Lane::default);
    // The points up to the first choice the schedules differ in are the last execution's.
    let same_body = trail_body.is_some_and(|b| Arc::ptr_eq(&b, &body));
    let agree = (followed.iter().zip(schedule))
        .take_while(|(a, b)| a == b)
        .count();
    followed.clear();
    followed.extend_from_slice(schedule);
    match engine.identity {
        Identity::OnPath if same_body => trail.truncate(agree + 1),
        _ => trail.clear(),
    }
    let main = Arc::clone(&body);
    let recorder = Box::new(Recorder {
        phase: Phase::Serial,
        lanes,
        tasks,
        steps: Vec::new(),
        taken: 0,
        // Only the last step of the schedule is a new edge.
        record_from: schedule.len().saturating_sub(1),
        history: History::new(),
        locks,
        condvars,
        memory,
        serial: SerialLane::default(),
        point: None,
        concurrent_from: 0,
        finals_from: None,
        blocked: Vec::new(),
        objects: 0,
        pointers,
        end: None,
        schedule: followed,
        way: 0,
        weak: match &engine.mode {
            Mode::Weak(options) => Some(Box::new(WeakMemory::new(
                threads,
                Arc::clone(options),
                std::rc::Rc::clone(&engine.sites),
                graph,
            ))),
            Mode::Sc { .. } => None,
        },
        races: matches!(engine.mode, Mode::Weak(_)).then(|| Box::new(Races::weak())),
        shared_races: engine.shared_races,
        loops: engine.loops,
        mode: engine.mode.clone(),
        saw_weak: false,
        cut: None,
        chosen: 0,
        diverged: None,
        body,
        offered,
        drained: 0,
        next_lane: threads,
        spawned_ops: true,
        cleanup_waits: 0,
        turn_ended: None,
        store_access: fgvt_tree::StoreAccess::default(),
        freed: HashMap::default(),
        identity: engine.identity,
        trail,
        lazy_made: HashMap::default(),
        arcs: HashMap::default(),
        number: {
            let number = EXECUTIONS.get();
            EXECUTIONS.set(number + 1);
            number
        },
    });
    RECORDER.with(|r| *r.borrow_mut() = Some(recorder));
    let outcome = engine.start(main);
    let execution = finish(engine, outcome);
    count_run(false, execution.taken);
    execution
}

/// What the execution in the thread-local came to, once the engine has handed control back:
/// paused at a point (the recorder is then kept in `engine` for the next call), or ended.
fn finish(engine: &mut Engine, outcome: Resumed) -> Execution {
    let mut recorder = RECORDER
        .with(|r| r.borrow_mut().take())
        .expect("the recorder outlives its execution");
    if let Resumed::Paused = outcome {
        let execution = Execution {
            run: Run {
                steps: std::mem::take(&mut recorder.steps),
                end: RunEnd::Abandoned,
            },
            taken: recorder.taken,
            // Nothing reads a paused execution's point again: it goes on to another.
            point: recorder.point.take(),
            // Paused, the history is the `init` part's, which the explorer reads once, from
            // the empty schedule's execution: not copied for every other pause.
            history: if recorder.schedule.is_empty() {
                recorder.history.clone()
            } else {
                History::new()
            },
            concurrent_from: recorder.concurrent_from,
            finals_from: recorder.finals_from,
            blocked: Vec::new(),
            diverged: None,
            saw_weak: recorder.saw_weak,
            cut: None,
        };
        engine.paused = Some(recorder);
        return execution;
    }
    engine.scratch = Scratch::keep(&mut recorder);
    let (saw_weak, cut) = (recorder.saw_weak, recorder.cut.take());
    let history = recorder.history;
    let end = recorder.end.unwrap_or(RunEnd::Abandoned);
    Execution {
        run: Run {
            steps: recorder.steps,
            end,
        },
        taken: recorder.taken,
        point: recorder.point,
        history,
        concurrent_from: recorder.concurrent_from,
        finals_from: recorder.finals_from,
        blocked: recorder.blocked,
        diverged: recorder.diverged,
        saw_weak,
        cut,
    }
}

/// How a run of the engine came back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resumed {
    /// The execution ended: every task has finished.
    Ended,
    /// The execution is paused at a point.
    Paused,
}

/// The engine of a whole exploration: the tasks of the execution under way, with the stacks
/// kept from the last ones, and the execution paused at a point, if any.
pub(crate) struct Engine {
    tasks: Tasks,
    /// What the last execution's recorder leaves for the next one.
    scratch: Scratch,
    /// The execution paused at a point, with its recorder (out of the thread-local while
    /// paused, so that code run meanwhile, such as the `self` spec's serial runs, is outside
    /// any execution).
    paused: Option<Box<Recorder>>,
    /// How every execution's atomics treat their orderings.
    mode: Mode,
    /// Under weak memory, the accesses every execution has met.
    pub(crate) sites: weak::Sites,
    /// Whether accesses to `Shared` cells are checked for data races too.
    shared_races: bool,
    /// What becomes of loops without the spin hint.
    loops: Loops,
    /// Whether points leave out the weak-memory part of their fingerprint where no earlier
    /// point of the execution could equal them (see [`Identity`]).
    pub(crate) identity: Identity,
}

/// How much of a point's weak-memory state its fingerprint takes in.
///
/// The graph's future key (`WeakMemory::future_hash`) is the costliest part of a point: about
/// half of a weak-memory exploration's time. An explorer that merges states across runs needs
/// it at every point ([`Identity::Full`]). A search that compares a state only with the states
/// on its own run's path (a stateless search looking for a step back onto its path: a spin
/// that saw nothing new) needs it only where the rest of the fingerprint, which is cheap,
/// equals that of an earlier point of the same execution ([`Identity::OnPath`]). Two states
/// are then equal only if both have the key, and the first point that repeats another's cheap
/// part takes it: a loop is seen one turn later than with the full key at every point, at the
/// first turn back to a state that has the key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Identity {
    /// Every point's fingerprint takes in the whole state.
    #[default]
    Full,
    /// Only the points whose cheap part repeats an earlier point's of the same execution.
    OnPath,
}

/// The collections a recorder fills, kept empty between executions with their room: an
/// execution is a few dozen steps, and making its tables anew each time was a large part of
/// its cost.
#[derive(Default)]
struct Scratch {
    lanes: Vec<Lane>,
    tasks: Vec<Option<ThreadId>>,
    locks: HashMap<u64, Held, foldhash::fast::RandomState>,
    condvars: HashMap<u64, Vec<ThreadId>, foldhash::fast::RandomState>,
    memory: Memory,
    pointers: Pointers,
    offered: Vec<ThreadId>,
    /// Under weak memory, the last execution's graph (cleared when the next one starts).
    graph: Option<fgvt_memory::Execution>,
    /// The last execution's [`Recorder::trail`], the schedule it followed and what it ran: the
    /// next one of the same body, as deterministic, passes through the same points for as long
    /// as its schedule agrees.
    trail: Vec<u64>,
    trail_schedule: Vec<Pick>,
    trail_body: Option<Body>,
}

impl Scratch {
    /// Takes `recorder`'s collections, emptied, for the next execution.
    fn keep(recorder: &mut Recorder) -> Scratch {
        let mut scratch = Scratch {
            lanes: std::mem::take(&mut recorder.lanes),
            tasks: std::mem::take(&mut recorder.tasks),
            locks: std::mem::take(&mut recorder.locks),
            condvars: std::mem::take(&mut recorder.condvars),
            memory: std::mem::take(&mut recorder.memory),
            pointers: std::mem::take(&mut recorder.pointers),
            offered: std::mem::take(&mut recorder.offered),
            graph: recorder.weak.take().map(|weak| weak.into_graph()),
            trail: std::mem::take(&mut recorder.trail),
            trail_schedule: std::mem::take(&mut recorder.schedule),
            trail_body: Some(Arc::clone(&recorder.body)),
        };
        scratch.lanes.iter_mut().for_each(Lane::reset);
        scratch.tasks.clear();
        scratch.locks.clear();
        scratch.condvars.clear();
        scratch.memory.clear();
        scratch.pointers.clear();
        scratch.offered.clear();
        scratch
    }
}

impl Engine {
    /// An engine whose executions treat orderings as `mode` says, check accesses to
    /// `Shared` cells for data races when `shared_races` is set (those to `UnsafeCell` and
    /// `Cell` always), and treat loops without the spin hint as `loops` says.
    pub(crate) fn new(mode: Mode, shared_races: bool, loops: Loops) -> Engine {
        Engine {
            tasks: Tasks::default(),
            scratch: Scratch::default(),
            paused: None,
            mode,
            sites: weak::Sites::default(),
            shared_races,
            loops,
            identity: Identity::Full,
        }
    }

    /// Ends the execution `paused` (its recorder): it runs to its end, each thread left
    /// finishing its operation or cancelled. The recorder, once it has ended.
    fn abandon(&mut self, mut paused: Box<Recorder>) -> Option<Box<Recorder>> {
        WEAK_RUN.set(matches!(self.mode, Mode::Weak(_)));
        paused.end = Some(RunEnd::Abandoned);
        RECORDER.with(|r| *r.borrow_mut() = Some(paused));
        let _ = self.run();
        RECORDER.with(|r| r.borrow_mut().take())
    }

    /// Starts an execution of `body` (its recorder is in the thread-local) and runs it.
    fn start(&mut self, body: Body) -> Resumed {
        if let Err(message) = self.tasks.begin(move || body()) {
            with_recorder(|rec| rec.escaped(message));
            return Resumed::Ended;
        }
        self.run()
    }

    /// Runs the execution in the thread-local until it ends or pauses at a point.
    ///
    /// A panic that escapes a task (outside the user code that `test.rs` guards) ends the
    /// execution as a fault, and the other tasks run on to their end. One that escapes the
    /// recorder itself, a bug of fgvt's, gives up the execution's tasks and ends it so too.
    fn run(&mut self) -> Resumed {
        loop {
            let tasks = &mut self.tasks;
            let stop = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                tasks.run(|runnable| {
                    RECORDER.with(|r| match r.borrow_mut().as_mut() {
                        Some(rec) => rec.next_task(runnable),
                        None => Decision::Run(runnable[0]),
                    })
                })
            }));
            match stop {
                Ok(Stop::Done) => return Resumed::Ended,
                Ok(Stop::Paused) => return Resumed::Paused,
                Ok(Stop::Escaped(payload)) => {
                    with_recorder(|rec| rec.escaped(panic_message(payload.as_ref())));
                }
                Err(payload) => {
                    self.tasks.forsake();
                    with_recorder(|rec| rec.escaped(panic_message(payload.as_ref())));
                    return Resumed::Ended;
                }
            }
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if let Some(paused) = self.paused.take() {
            // End the paused execution: its threads finish or are cancelled, its stacks kept.
            self.abandon(paused);
        }
    }
}

/// Tags that keep the summands and identities of different things apart.
const SERIAL: u64 = u64::MAX;
const OBJECT: u64 = 0x0b1e;
/// The tag of the keys of objects made in a `const` context.
const LAZY: u64 = 0x1a2f;
const ADDRESS: u64 = 0xadd5;
const THREAD: u64 = 0x7ead << 48;
const LOCK: u64 = 0x10c6 << 48;
const CONDVAR: u64 = 0xc0d7 << 48;
/// Mixed into a lock's data version when a panicking holder poisons it.
const POISONED: u64 = 0x0901_50ed;
const DONE: u64 = 0xd0e;
/// The summand of the weak-memory execution graph's future key.
const WEAK: u64 = 0x3ea6 << 48;
/// The summand of the accesses a sequentially consistent data-race check keeps.
const RACES: u64 = 0x4ace << 48;

/// The kind of a bookkeeping access in an observation log (not an event kind).
const SILENT: u64 = 0x51;

/// A fingerprint in one word, for a filter that may say yes wrongly (at a cost in time only).
fn fold(fingerprint: Fingerprint) -> u64 {
    (fingerprint >> 64) as u64 ^ fingerprint as u64
}

impl Recorder {
    fn thread_of(&self, task: TaskId) -> Option<ThreadId> {
        self.tasks.get(task).copied().flatten()
    }

    /// Ends the execution as a fault with `message`, unless it has ended already: a panic
    /// escaped a task (or the recorder itself).
    fn escaped(&mut self, message: String) {
        self.end_with_fault(Fault::new(message, None));
    }

    /// The test thread running now, in the concurrent part; `None` for the serial part.
    fn who(&self) -> Option<ThreadId> {
        if self.phase != Phase::Concurrent {
            return None;
        }
        self.thread_of(engine::current())
    }

    /// What decides the local state of `who` now: a thread's operation and observations, or
    /// how far the serial part has come.
    fn context(&self, who: Option<ThreadId>) -> u64 {
        match who {
            Some(thread) => {
                let lane = &self.lanes[thread];
                let op = lane.op.as_ref().map_or(u64::MAX, |op| op.index as u64);
                hash_of(&[thread as u64, op, lane.observed.hash()])
            }
            None => combine(SERIAL, self.serial.accesses),
        }
    }

    /// Numbers a new object named `name`, made at `at`, and gives it its key and first value;
    /// a test thread's making is a write for the data-race check, as `making` says.
    fn create(
        &mut self,
        initial: Initial,
        name: &'static str,
        making: Making,
        at: &'static Location<'static>,
    ) -> ObjectId {
        let number = self.objects;
        self.objects += 1;
        let who = self.who();
        let context = self.context(who);
        let made = made_by(&mut self.lanes, &mut self.serial, who);
        made.objects += 1;
        let key = hash_of(&[OBJECT, context, made.objects]);
        if let Some(thread) = who {
            self.lanes[thread].private.push(key);
        }
        let value = match initial {
            Initial::Value(word) => self.word(who, word),
            Initial::Version => combine(context, key),
        };
        self.memory.set(key, value);
        #[allow(clippy::cast_possible_truncation)] // A run tells apart the executions in flight.
        let id = ObjectId::from_parts(number, self.number as u32, key, name);
        if let (Some(thread), Some(checked)) = (who, self.checked(making)) {
            let graph = self.weak.as_deref().map(|w| w as &dyn HappensBefore);
            let races = self
                .races
                .get_or_insert_with(|| Box::new(Races::sequentially_consistent(self.lanes.len())));
            races.created(graph, thread, id, checked, at);
        }
        id
    }

    /// A new object made in a `const` context at `at` (see [`ObjectId::lazy`]). Its key is
    /// its place in the source and how many such objects that place has given identities in
    /// the run: unique in the run, whichever thread touches it first.
    fn create_lazy(
        &mut self,
        initial: Initial,
        name: &'static str,
        at: &'static Location<'static>,
    ) -> ObjectId {
        let number = self.objects;
        self.objects += 1;
        let place = hash_of(&[
            LAZY,
            hash_of(&at.file().bytes().map(u64::from).collect::<Vec<_>>()),
            u64::from(at.line()),
            u64::from(at.column()),
        ]);
        let nth = self.lazy_made.entry(place).or_insert(0);
        *nth += 1;
        let key = hash_of(&[place, *nth]);
        let value = match initial {
            Initial::Value(word) => self.word(None, word),
            Initial::Version => key,
        };
        self.memory.set(key, value);
        #[allow(clippy::cast_possible_truncation)] // A run tells apart the executions in flight.
        ObjectId::from_parts(number, self.number as u32, key, name)
    }

    /// How the data-race check treats an object made so, in this execution: plain memory always
    /// and `Shared` cells when asked; atomics and locks only under weak memory (a sequentially
    /// consistent access to one synchronizes, so it cannot race with the making).
    fn checked(&self, making: Making) -> Option<Checked> {
        match making {
            Making::Plain => Some(Checked::Plain),
            Making::Shared if self.shared_races => Some(Checked::Plain),
            Making::Synchronizing if self.weak.is_some() => Some(Checked::Synchronizing),
            Making::Shared | Making::Synchronizing | Making::Unchecked => None,
        }
    }

    /// Checks an access by test thread `thread` to `object` at `at` for a data race (see
    /// `races.rs`): the fault of the race it makes, if any.
    fn race_check(
        &mut self,
        thread: ThreadId,
        object: ObjectId,
        checked: Checked,
        touch: Touch,
        at: &'static Location<'static>,
    ) -> Result<(), Fault> {
        if checked == Checked::Synchronizing && self.races.is_none() {
            return Ok(());
        }
        let graph = self.weak.as_deref().map(|w| w as &dyn HappensBefore);
        let races = self
            .races
            .get_or_insert_with(|| Box::new(Races::sequentially_consistent(self.lanes.len())));
        races
            .access(graph, thread, object, checked, touch, at)
            .map_err(|mut race| {
                race.hint = if graph.is_some() {
                    "nothing orders them: a Release store (or a fence(Release) before a store) \
                     after the first, read by an Acquire load (or one followed by a \
                     fence(Acquire)) before the second, would"
                } else {
                    "nothing orders them: no lock is taken around both, and no atomic store \
                     after the first is read by the second's thread before it"
                }
                .to_string();
                Fault::race(race)
            })
    }

    /// What a step by `thread` of `kind` that had `effect` means to the data-race check, once
    /// it has acted (the run ends at a race, the step taken). A step on a `Shared` cell's data
    /// (`data` says how it touched it) is checked as plain memory when the test asks, and
    /// orders nothing. Otherwise, sequentially consistent, an atomic store or unlock releases
    /// and a load or lock acquires (the clocks' part); under weak memory, whose graph keeps
    /// happens-before, an access to an object a test thread made must happen after the making.
    fn after_step(
        &mut self,
        thread: ThreadId,
        pending: &Pending,
        kind: EventKind,
        effect: Effect,
        data: Option<Touch>,
    ) {
        let Some(object) = pending.object else {
            return;
        };
        let check = match data {
            Some(touch) => self.shared_races.then_some((Checked::Plain, touch)),
            None if self.weak.is_some() => {
                let touch = match effect {
                    Effect::Write(_) | Effect::Update { .. } | Effect::WriteVersion => Touch::Write,
                    _ => Touch::Read,
                };
                Some((Checked::Synchronizing, touch))
            }
            None => {
                if let Some(clocks) = self.races.as_mut().and_then(|r| r.clocks()) {
                    sequentially_consistent_sync(clocks, thread, pending, kind, effect);
                }
                None
            }
        };
        if let Some((checked, touch)) = check {
            if let Err(fault) = self.race_check(thread, object, checked, touch, pending.caller) {
                self.end_with_fault(fault);
            }
        }
    }

    /// Ends the execution with `fault`, unless it has ended already.
    fn end_with_fault(&mut self, fault: Fault) {
        if self.end.is_none() {
            self.end = Some(RunEnd::Fault {
                history: std::mem::take(&mut self.history),
                fault,
            });
        }
    }

    /// `word` as fingerprints see it; an address seen for the first time is named after
    /// `who` and what it has observed (its context).
    fn word(&mut self, who: Option<ThreadId>, word: Word) -> u64 {
        if let Some(seen) = self.memory.known(word) {
            return seen;
        }
        // Only a new address needs `who`'s context, a hash of its observations.
        let context = self.context(who);
        let made = made_by(&mut self.lanes, &mut self.serial, who);
        self.memory.word(word, || {
            made.addresses += 1;
            hash_of(&[ADDRESS, context, made.addresses])
        })
    }

    /// Records what an access by `who`, logged as `access` (`Pending::access`), did to its
    /// object and what it learned.
    fn apply(&mut self, who: Option<ThreadId>, pending: &Pending, access: Access, effect: Effect) {
        let key = pending.object.map_or(0, |o| o.key());
        let mut wrote = if !matches!(
            effect,
            Effect::Write(_) | Effect::Update { .. } | Effect::WriteVersion | Effect::UpdateVersion
        ) {
            Wrote::Nothing
        } else if who.is_some_and(|t| self.lanes[t].private.contains(&key)) {
            Wrote::Private
        } else {
            Wrote::Shared
        };
        let seen = match effect {
            Effect::Read(word) => self.word(who, word),
            Effect::Write(word) => {
                let now = self.word(who, word);
                self.set_unless_weak(key, now);
                0
            }
            Effect::Update { seen, now } => {
                let seen = self.word(who, seen);
                let now = self.word(who, now);
                self.set_unless_weak(key, now);
                if wrote == Wrote::Shared {
                    wrote = Wrote::Changed {
                        object: key,
                        before: seen,
                        after: now,
                    };
                }
                seen
            }
            Effect::ReadVersion => self.memory.get(key),
            Effect::WriteVersion => {
                let context = self.context(who);
                self.memory.set(key, combine(context, key));
                0
            }
            Effect::UpdateVersion => {
                // What is written may depend on what was there: the writer's context after it
                // has seen the old version names the new one.
                self.observe(who, access, self.memory.get(key), wrote);
                let context = self.context(who);
                self.memory.set(key, combine(context, key));
                return;
            }
            Effect::Nothing => 0,
        };
        self.observe(who, access, seen, wrote);
    }

    /// Sets an object's value for fingerprints, unless weak memory keeps it: an atomic's values
    /// are then in the execution graph's future key, where the value a store left need not be
    /// the latest (it may have gone before a later store).
    fn set_unless_weak(&mut self, key: u64, value: u64) {
        if !self.weak.as_ref().is_some_and(|w| w.covers(key)) {
            self.memory.set(key, value);
        }
    }

    /// `who` made `access`, which saw `seen` (and `wrote`, or not): a thread logs it, the
    /// serial part counts it.
    fn observe(&mut self, who: Option<ThreadId>, access: Access, seen: u64, wrote: Wrote) {
        match who {
            Some(thread) => {
                let entry = fingerprint::entry(access.shape, seen);
                let lane = &mut self.lanes[thread];
                if wrote.is_shared() {
                    // What it made may be published by this write.
                    lane.private.clear();
                }
                let stamp = Stamp {
                    step: lane.op_steps(),
                    events: lane.events_before,
                };
                lane.observed.push(access, entry, wrote, stamp);
            }
            None => self.serial.accesses += 1,
        }
    }

    /// What the step being taken by `thread` tells of the retry loop's turn it ended, which
    /// wrote nothing and began with the access stamped `turn.start`.
    fn quiet_turn(&mut self, thread: ThreadId, turn: DroppedTurn) -> QuietTurn {
        // The operation's steps already count this one.
        let steps = self.lanes[thread]
            .op_steps()
            .saturating_sub(turn.start.step);
        let learned = (self.weak.as_ref())
            .map(|w| w.learned_returns_since(thread, turn.start.events))
            .unwrap_or_default();
        let synchronized = !learned.is_empty();
        if synchronized {
            self.lanes[thread].learned_turn = Some(LearnedTurn { steps, learned });
        }
        QuietTurn {
            steps,
            synchronized,
        }
    }

    /// At `thread`'s access after a turn that learned of returns ([`LearnedTurn`]), which
    /// chose `chosen`: if it learns them all again, its step ends the turn as a quiet one.
    fn relearn(&mut self, thread: ThreadId, chosen: Option<&weak::Chosen>) {
        let Some(turn) = self.lanes[thread].learned_turn.take() else {
            return;
        };
        let relearned = chosen
            .zip(self.weak.as_deref())
            .is_some_and(|(chosen, weak)| weak.relearns(chosen, &turn.learned));
        if relearned {
            self.turn_ended = Some(QuietTurn {
                steps: turn.steps + 1,
                synchronized: false,
            });
        }
    }

    /// `thread` released `lock` once (a reader that holds it twice still holds it).
    fn unlock(&mut self, lock: u64, thread: ThreadId) {
        if let Some(held) = self.locks.get_mut(&lock) {
            if let Some(at) = held.holders.iter().position(|(t, _)| *t == thread) {
                held.holders.remove(at);
            }
            if held.holders.is_empty() {
                self.locks.remove(&lock);
            }
        }
    }

    /// A release made while its thread unwinds from a panic (not a step): what it did to the
    /// lock's data and who holds the lock, as the step would have recorded them.
    fn unwound(&mut self, pending: &Pending, effect: Effect) {
        if self.end.is_some() {
            return;
        }
        let who = self.who();
        self.apply(who, pending, pending.access(), effect);
        if let (Some(thread), Some(lock)) = (who, pending.lock()) {
            self.unlock(lock, thread);
            if let Some(weak) = &mut self.weak {
                weak.unlock(who, lock);
            }
            if let Some(clocks) = self.races.as_mut().and_then(|r| r.clocks()) {
                sequentially_consistent_sync(clocks, thread, pending, EventKind::Unlock, effect);
            }
        }
    }

    /// The point the execution is at, between steps.
    fn point(&mut self) -> Point {
        self.forget_known_accesses();
        let mut statuses = Vec::with_capacity(self.lanes.len());
        let mut blocked = Vec::new();
        for (thread, lane) in self.lanes.iter().enumerate() {
            // A thread with no pending step at a point has run all its operations.
            let status = match &lane.pending {
                Some(pending) if self.enabled(thread, pending) => Status::Enabled,
                Some(pending) => {
                    blocked.push((thread, footprint(pending, pending.kind)));
                    Status::Blocked
                }
                None => Status::Done,
            };
            statuses.push(status);
        }
        let mut fingerprint = self.cheap_part();
        let repeats = match self.identity {
            Identity::Full => true,
            Identity::OnPath => {
                let cheap = fold(fingerprint);
                let earlier = &self.trail[..self.chosen.min(self.trail.len())];
                let repeats = earlier.contains(&cheap);
                self.trail.truncate(self.chosen);
                self.trail.push(cheap);
                repeats
            }
        };
        if repeats {
            fingerprint = fingerprint.wrapping_add(self.costly_part());
        }
        Point {
            fingerprint,
            statuses,
            blocked,
            turn: self.turn_ended,
            store_access: self.store_access,
        }
    }

    /// Notes the cheap part of the point at the schedule's next choice, with
    /// [`Identity::OnPath`], unless the execution paused there and noted it then.
    fn note_choice(&mut self) {
        if self.identity == Identity::OnPath && self.trail.len() == self.chosen {
            let cheap = fold(self.cheap_part());
            self.trail.push(cheap);
        }
    }

    /// The part of the point's fingerprint that is cheap to work out: the memory's values, the
    /// threads' operations, observations and next steps, the locks and condition variables.
    fn cheap_part(&self) -> Fingerprint {
        let mut fingerprint = self.memory.sum();
        for (thread, lane) in self.lanes.iter().enumerate() {
            // A thread with no pending step at a point has run all its operations.
            let state = match &lane.pending {
                Some(pending) => {
                    let op = lane.op.as_ref().map_or(u64::MAX, |op| op.index as u64);
                    // A waiter's next step waits for a notify until one has woken it.
                    let wait = lane
                        .wait
                        .map_or(0, |w| combine(w.condvar, 1 + u64::from(w.notified)));
                    // Whether it is enabled follows from the rest (the locks, the wait).
                    hash_of(&[op, lane.observed.hash(), pending.hash(), wait])
                }
                None => lane.result.map_or(DONE, |r| combine(DONE, r)),
            };
            fingerprint = fingerprint.wrapping_add(summand(THREAD | thread as u64, state));
        }
        for (lock, held) in &self.locks {
            // A sum, not a xor: a reader holding the lock twice must not cancel out.
            let holders = held
                .holders
                .iter()
                .fold(u64::from(held.exclusive), |h, (t, _)| {
                    h.wrapping_add(fingerprint::mix(*t as u64))
                });
            fingerprint = fingerprint.wrapping_add(summand(LOCK ^ lock, holders));
        }
        // Who a notify wakes depends on the order of the waiters: the queue, in order.
        for (condvar, queue) in &self.condvars {
            let queue: Vec<u64> = queue.iter().map(|t| *t as u64).collect();
            fingerprint = fingerprint.wrapping_add(summand(CONDVAR ^ condvar, hash_of(&queue)));
        }
        fingerprint
    }

    /// The rest of the point's fingerprint: under weak memory the graph's future key, else the
    /// accesses a sequentially consistent data-race check keeps (0 for neither).
    fn costly_part(&self) -> Fingerprint {
        let live = |t: ThreadId| self.lanes.get(t).is_some_and(|l| l.pending.is_some());
        if let Some(weak) = &self.weak {
            let value = |shape: Shape, bits: u64| match shape {
                Shape::Value(_) => bits,
                Shape::Ptr(align) => self.memory.identity(Word::Ptr(bits as usize, align)),
            };
            let plain = self
                .races
                .as_ref()
                .map_or_else(Vec::new, |r| r.plain_places());
            summand(WEAK, weak.future_hash(live, &value, &plain))
        } else if let Some(races) = &self.races {
            summand(RACES, races.hash(live))
        } else {
            0
        }
    }

    /// Lets the data-race check go of the accesses every thread that may still act knows of;
    /// a sequentially consistent check that keeps nothing stops (see `races.rs`).
    fn forget_known_accesses(&mut self) {
        let Some(races) = &mut self.races else {
            return;
        };
        let lanes = &self.lanes;
        let graph = self.weak.as_deref().map(|w| w as &dyn HappensBefore);
        races.forget_known(graph, lanes.len(), |t| lanes[t].pending.is_some());
        if races.is_empty() && self.weak.is_none() {
            self.races = None;
        }
    }

    /// Whether `thread`'s pending step can happen now: a lock waits while it is held,
    /// unless both the holders and the asker read; a `try_lock` never waits; a condition
    /// variable's waiter waits for a notify, then for the mutex.
    fn enabled(&self, thread: ThreadId, pending: &Pending) -> bool {
        match pending.role {
            Role::Attempt => return true,
            Role::Woken(_) if !self.lanes[thread].wait.is_some_and(|w| w.notified) => return false,
            _ => {}
        }
        if pending.kind != EventKind::Lock {
            return true;
        }
        let held = pending.lock().and_then(|n| self.locks.get(&n));
        held.is_none_or(|held| pending.shared && !held.exclusive)
    }

    /// Whether an access about to be made after the execution has ended may act at once,
    /// recording nothing, rather than unwind its thread; counts it if so.
    ///
    /// The explorer abandons most executions midway: at a state already explored, or to start
    /// the next schedule. Unwinding every thread from its access (a panic through the object's
    /// code) took a quarter of the exploration of a small stack; letting each thread finish
    /// the operation it is in, alone, costs a few accesses. It is also sound where unwinding
    /// is not: a panic injected between two accesses of a protocol breaks what the code's
    /// destructors rely on (oneshot's receiver, unwound between dropping its waker and leaving
    /// the state that says it has one, dropped it again). Under weak memory the accesses act
    /// on each location's latest value (`weak_access`). An access that may wait for another
    /// thread (a lock, a condition variable) cannot finish so and still unwinds, as does one
    /// past [`DRAIN_STEPS`] (an operation that spins until another thread moves) and one after
    /// any other end (a fault, threads stuck) than the explorer's.
    fn drains(&mut self, pending: &Pending) -> bool {
        let waits = match pending.role {
            Role::Plain | Role::Join => pending.kind == EventKind::Lock,
            Role::Attempt | Role::Inspect => false,
            Role::Wait(_) | Role::Woken(_) => true,
        };
        // While a destructor waits in an unwinding thread, the others finish what they do
        // whatever ended the run, which may be what it waits for.
        let budget = if self.cleanup_waits > 0 {
            CLEANUP_STEPS
        } else if matches!(self.end, Some(RunEnd::Abandoned)) {
            DRAIN_STEPS
        } else {
            return false;
        };
        if waits || self.drained >= budget {
            return false;
        }
        self.drained += 1;
        true
    }

    /// Whether `thread`, finishing its operation alone in an execution the explorer abandoned
    /// (see [`Recorder::drains`]), goes round its retry loop once more rather than unwind.
    ///
    /// A compare-and-swap that failed against another thread's store succeeds on the next
    /// turn, which acts on the latest values, and ends the operation: unwinding the thread
    /// instead was a tenth of the exploration of a 4-thread stack. A second turn waits for
    /// another thread, which will not move.
    fn another_turn_after_end(&mut self, thread: ThreadId) -> bool {
        let lane = &mut self.lanes[thread];
        let again = matches!(self.end, Some(RunEnd::Abandoned))
            && lane.turns_after_end == 0
            && self.drained < DRAIN_STEPS;
        lane.turns_after_end += 1;
        again
    }

    /// What an access of `pending` does once the execution has ended: act at once, or unwind
    /// its thread (see [`Recorder::drains`]).
    fn at_end(&mut self, pending: &Pending) -> Registered {
        if self.drains(pending) {
            Registered::Drain
        } else {
            Registered::Cancel
        }
    }

    /// Whether the step at `position` of the execution becomes an event: only the steps the
    /// explorer asked to see do (a re-executed schedule's steps are edges built already).
    fn shows(&self, position: usize) -> bool {
        position >= self.record_from
    }

    /// Which task runs next: the engine's question, answered from the schedule.
    fn next_task(&mut self, runnable: &[TaskId]) -> Decision {
        // Once the execution has ended, every task runs on, to be cancelled at its next
        // access (or to finish its operation, see `drains`).
        if self.end.is_some() {
            return Decision::Run(after_current(runnable));
        }
        let mut offered = std::mem::take(&mut self.offered);
        offered.clear();
        for &task in runnable {
            let lane = self.thread_of(task).map(|t| (t, &self.lanes[t]));
            match lane.and_then(|(t, lane)| Some((t, lane.pending.as_ref()?))) {
                // A task between steps runs on: starting, ending, spawning and joining do not
                // branch.
                None => return Decision::Run(task),
                Some((thread, pending)) => {
                    if self.enabled(thread, pending) {
                        offered.push(thread);
                    }
                }
            }
        }
        if offered.is_empty() {
            self.offered = offered;
            self.point = Some(self.point());
            self.end = Some(self.stuck());
            return Decision::Run(runnable[0]);
        }
        offered.sort_unstable();
        let Some(&Pick {
            thread: wanted,
            way,
        }) = self.schedule.get(self.chosen)
        else {
            // Past the schedule: pause here (see `execute`).
            self.offered = offered;
            self.point = Some(self.point());
            return Decision::Pause;
        };
        self.note_choice();
        let wanted = usize::from(wanted);
        let chosen = if offered.contains(&wanted) {
            self.chosen += 1;
            self.way = u32::from(way);
            wanted
        } else {
            self.diverged = Some((self.chosen, wanted));
            self.point = Some(self.point());
            self.end = Some(RunEnd::Abandoned);
            offered[0]
        };
        self.offered = offered;
        Decision::Run(self.lanes[chosen].task.unwrap_or(runnable[0]))
    }

    fn event(
        &mut self,
        thread: ThreadId,
        pending: &Pending,
        acted: Acted,
        chosen: Option<weak::Chosen>,
    ) -> Event {
        let span = sources::span_at(pending.caller);
        let (order, memory) = chosen
            .and_then(|chosen| self.memory_choice(chosen))
            .map_or((None, None), |(o, m)| (Some(o), m));
        let op = self.lanes[thread].op.as_ref();
        // A call under weak memory says what it happens after: the operations it follows.
        let seen = match (&self.weak, op) {
            (Some(weak), Some(op)) if op.steps == 0 => Some(weak.clock(thread, op.index)),
            _ => None,
        };
        Event {
            thread,
            op_index: op.map_or(0, |o| o.index),
            op: op.map_or_else(String::new, |o| o.call.op.clone()),
            kind: acted.kind,
            location: pending.name(),
            value: acted.value.text(&self.pointers),
            span,
            call: op.filter(|o| o.steps == 0).map(|o| o.call.clone()),
            ret: None,
            order,
            memory,
            seen,
            footprint: footprint(pending, acted.kind),
        }
    }

    /// Notes that `who`'s step, in the code that follows its access, did what orders it with
    /// every other thread's steps (a spawn): the step's event touches everything, for the
    /// partial-order reduction (see [`fgvt_tree::Footprint`]). Only the execution's last step
    /// becomes an event with code run after it, so only that one is marked.
    fn touches_everything(&mut self, who: Option<ThreadId>) {
        if self.taken <= self.record_from {
            return;
        }
        if let (Some(who), Some(last)) = (who, self.steps.last_mut()) {
            if last.thread == who {
                last.footprint = fgvt_tree::Footprint::Everything;
            }
        }
    }

    /// An atomic access's order and way under weak memory, as its event shows them.
    fn memory_choice(
        &mut self,
        chosen: weak::Chosen,
    ) -> Option<(fgvt_tree::MemoryOrder, Option<Box<fgvt_tree::MemoryChoice>>)> {
        let weak = self.weak.as_ref()?;
        let pointers = &mut self.pointers;
        Some(weak.describe(chosen, &mut |shape, bits| match shape {
            Shape::Value(show) => show(bits),
            Shape::Ptr(align) => {
                let address = bits as usize;
                pointer_text(address, align, number(pointers, address, align))
            }
        }))
    }

    /// The end where no thread can move: the history with the calls about to be made, and
    /// what each thread waits for.
    fn stuck(&mut self) -> RunEnd {
        // Nothing reads or adds to the history once the execution has ended: move it out.
        let mut history = std::mem::take(&mut self.history);
        let mut waiting = Vec::new();
        for (thread, lane) in self.lanes.iter().enumerate() {
            let (Some(pending), Some(op)) = (&lane.pending, &lane.op) else {
                continue;
            };
            if op.steps == 0 {
                history.call(thread, op.call.clone());
                self.blocked.push((thread, op.call.clone()));
            }
            let holder = pending.lock().and_then(|n| self.locks.get(&n));
            let unwoken = lane.wait.is_some_and(|w| !w.notified);
            waiting.push(Wait {
                thread,
                op: op.call.to_string(),
                reason: match (pending.role, holder) {
                    (Role::Woken(condvar), _) if unwoken => format!(
                        "waits on {condvar} (to take {} back), and no thread is left to notify it",
                        pending.name()
                    ),
                    (_, Some(h)) => {
                        format!("waits for {} held by {}", pending.name(), h.holders())
                    }
                    (_, None) => format!("waits at {}", pending.name()),
                },
                span: Some(sources::span_at(pending.caller)),
            });
        }
        history.stuck = true;
        RunEnd::Stuck { history, waiting }
    }
}

/// Once an execution has ended, who runs next: the first runnable task after the one that ran
/// last, round the list, so that a task that hands control back while it waits for another (a
/// destructor that spins while its thread unwinds) lets every other one run before it again.
fn after_current(runnable: &[TaskId]) -> TaskId {
    let current = engine::current();
    (runnable.iter().copied())
        .find(|&task| task > current)
        .unwrap_or(runnable[0])
}

/// How a sequentially consistent step of `thread` hands over happens-before: every atomic
/// access is `SeqCst`, so a load (or a failed compare-exchange) acquires what the atomic
/// carries, a store releases to it, a read-modify-write does both (continuing the release
/// sequence it read); taking a lock acquires, releasing it releases (readers' releases add up).
/// A `try_lock` that finds the lock held, and data, order nothing.
fn sequentially_consistent_sync(
    clocks: &mut Clocks,
    thread: ThreadId,
    pending: &Pending,
    kind: EventKind,
    effect: Effect,
) {
    let Some(key) = pending.object.map(|o| o.key()) else {
        return;
    };
    match (kind, effect) {
        (EventKind::Lock, _) => clocks.acquire(thread, key),
        (EventKind::Unlock, _) => clocks.release(thread, key, true),
        (_, Effect::Read(_)) if !matches!(pending.role, Role::Attempt | Role::Inspect) => {
            clocks.acquire(thread, key);
        }
        (_, Effect::Write(_)) => clocks.release(thread, key, false),
        (_, Effect::Update { .. }) => {
            clocks.acquire(thread, key);
            clocks.release(thread, key, true);
        }
        _ => {}
    }
}

/// What `who` (a thread, or the serial part) has made in its current operation. Over the two
/// fields rather than the recorder, so that memory can be borrowed beside it.
fn made_by<'a>(
    lanes: &'a mut [Lane],
    serial: &'a mut SerialLane,
    who: Option<ThreadId>,
) -> &'a mut Made {
    match who {
        Some(thread) => &mut lanes[thread].made,
        None => &mut serial.made,
    }
}

/// Runs `f` with the current execution's recorder, if an execution runs on this thread.
fn with_recorder<R>(f: impl FnOnce(&mut Recorder) -> R) -> Option<R> {
    RECORDER.with(|r| r.borrow_mut().as_deref_mut().map(f))
}

/// [`with_recorder`] where the recorder may be busy already: a destructor that runs while the
/// runtime holds it (dropping what an execution kept, or the recorder itself). `None` then.
fn with_free_recorder<R>(f: impl FnOnce(&mut Recorder) -> R) -> Option<R> {
    RECORDER.with(|r| r.try_borrow_mut().ok()?.as_deref_mut().map(f))
}

/// Runs `f` with the current execution's recorder, if there is one and the calling task is a
/// test thread in the concurrent part.
fn with_thread<R>(f: impl FnOnce(&mut Recorder, ThreadId) -> R) -> Option<R> {
    with_recorder(|recorder| as_test_thread(recorder, f)).flatten()
}

/// Runs `f` with `recorder` if the calling task is a test thread in its concurrent part.
fn as_test_thread<R>(
    recorder: &mut Recorder,
    f: impl FnOnce(&mut Recorder, ThreadId) -> R,
) -> Option<R> {
    if recorder.phase != Phase::Concurrent {
        return None;
    }
    let thread = recorder.thread_of(engine::current())?;
    Some(f(recorder, thread))
}

/// [`with_thread`] where the recorder may be busy already (a marked function called by the
/// runtime itself, a guard dropped while it unwinds): `None` then.
fn with_free_thread<R>(f: impl FnOnce(&mut Recorder, ThreadId) -> R) -> Option<R> {
    with_free_recorder(|recorder| as_test_thread(recorder, f)).flatten()
}

/// The calling test thread enters a function `#[fgvt_sync::operations]` marked (see
/// `crate::marked`): the token to leave it with, 0 where nothing was recorded.
pub(crate) fn enter_marked(method: &'static Method) -> u32 {
    with_free_thread(|rec, thread| rec.lanes[thread].observed.enter(method)).unwrap_or(0)
}

/// The calling test thread leaves the call of a marked function `token` names.
pub(crate) fn leave_marked(token: u32) {
    if token != 0 {
        with_free_thread(|rec, thread| rec.lanes[thread].observed.leave(token));
    }
}

/// How an access is made, as the recorder decides when it is registered.
enum Registered {
    /// No execution runs on this thread (a serial run of the `self` spec): act at once.
    Outside,
    /// The serial part of an execution: act at once, and record what it did to memory.
    Serial,
    /// The execution has ended: unwind the thread.
    Cancel,
    /// The explorer has abandoned the execution: act at once, recording nothing, to finish
    /// the operation (see [`Recorder::drains`]).
    Drain,
    /// A step of this test thread: switch, and act when chosen.
    Step(ThreadId),
}

/// One shared access: registered, scheduled, then done by `act`; `describe` says what it saw
/// for the event, and `effect` what it did to the object's state and what the thread learned
/// (for fingerprints). Outside a test thread's concurrent part, `act` runs at once and nothing
/// is described.
pub(crate) fn access<R>(
    pending: Pending,
    act: impl FnOnce() -> R,
    describe: impl FnOnce(&R) -> Acted,
    effect: impl FnOnce(&R) -> Effect,
) -> R {
    step(pending, None, act, describe, effect)
}

/// An access to a [`Shared`](crate::Shared) cell, which `touch`es its data: a step, as
/// [`access`], and checked for a data race when the test asks.
pub(crate) fn data_access<R>(
    pending: Pending,
    touch: Touch,
    act: impl FnOnce() -> R,
    describe: impl FnOnce(&R) -> Acted,
    effect: impl FnOnce(&R) -> Effect,
) -> R {
    step(pending, Some(touch), act, describe, effect)
}

/// [`access`], and for a step that touches plain data (`plain`), the data-race check.
fn step<R>(
    pending: Pending,
    plain: Option<Touch>,
    act: impl FnOnce() -> R,
    describe: impl FnOnce(&R) -> Acted,
    effect: impl FnOnce(&R) -> Effect,
) -> R {
    if std::thread::panicking() {
        // A destructor while a panic unwinds (a guard's release): no step, as switching now
        // would let other tasks run in the middle of this one's unwinding. The execution ends
        // at the panic unless the object catches it; then the lock must be free for the
        // threads that go on.
        let result = act();
        if pending.kind == EventKind::Unlock {
            let effect = effect(&result);
            with_recorder(|rec| rec.unwound(&pending, effect));
        }
        return result;
    }
    // What the thread's observation log calls the access, asked twice below.
    let access = pending.access();
    let registered = with_recorder(|rec| {
        let Some(thread) = rec.who() else {
            return Registered::Serial;
        };
        if rec.end.is_some() {
            return rec.at_end(&pending);
        }
        let events = rec.weak.as_ref().map_or(0, |w| w.events_of(thread));
        let implied = rec.loops.implied_hints;
        let dropped = (rec.lanes[thread].observed).before_access(access, implied);
        if let Some(turn) = dropped {
            rec.turn_ended = Some(rec.quiet_turn(thread, turn));
        }
        let lane = &mut rec.lanes[thread];
        lane.events_before = events;
        lane.pending = Some(pending);
        Registered::Step(thread)
    });
    let thread = match registered.unwrap_or(Registered::Outside) {
        Registered::Outside => {
            spend_outside_step();
            return act();
        }
        Registered::Serial => {
            let result = act();
            let effect = effect(&result);
            with_recorder(|rec| {
                rec.apply(None, &pending, access, effect);
                // What a serial access chose is no step's.
                rec.weak.as_mut().map(|w| w.chosen.take());
            });
            return result;
        }
        Registered::Drain => return act(),
        Registered::Cancel => cancel(),
        Registered::Step(thread) => thread,
    };
    engine::switch();
    // The execution may have ended while this thread waited for its turn.
    let ended = with_recorder(|rec| {
        rec.turn_ended = None;
        rec.store_access = fgvt_tree::StoreAccess::default();
        rec.end.is_some().then(|| rec.at_end(&pending))
    });
    match ended.flatten() {
        Some(Registered::Drain) => return act(),
        Some(_) => cancel(),
        None => {}
    }
    if let Some(object) = pending.object {
        let freed = with_recorder(|rec| {
            let message = rec.use_after_free(&object, pending.address, Some(thread))?;
            // The step is taken, and fails: its run ends in the fault, with no event.
            rec.lanes[thread].pending = None;
            rec.taken += 1;
            rec.end_with_fault(Fault::new(message, Some(sources::span_at(pending.caller))));
            Some(())
        });
        if freed.flatten().is_some() {
            // Not acted: the memory is no longer the object's.
            cancel();
        }
    }
    let result = act();
    let acted = describe(&result);
    let effect = effect(&result);
    with_recorder(|rec| {
        rec.lanes[thread].plain_run = 0;
        // Numbered even where no event is built: the addresses of an execution are numbered
        // in the order its steps show them, shown or not.
        acted.value.number(&mut rec.pointers);
        rec.apply(Some(thread), &pending, access, effect);
        // What this access chose under weak memory (taken here, by the step that made it,
        // whether or not its event is built: a later step of another kind must not find it).
        let chosen = rec.weak.as_mut().and_then(|w| w.chosen.take());
        if let Some(chosen) = &chosen {
            rec.store_access = chosen.store_access();
        }
        rec.relearn(thread, chosen.as_ref());
        let pending = rec.lanes[thread].pending.take().expect("registered");
        if let Some(lock) = pending.lock() {
            match acted.kind {
                EventKind::Lock if matches!(pending.role, Role::Join) => {
                    if let Some(weak) = &mut rec.weak {
                        weak.lock(Some(thread), lock);
                    }
                }
                EventKind::Lock => {
                    rec.locks
                        .entry(lock)
                        .or_insert(Held {
                            exclusive: !pending.shared,
                            holders: Vec::new(),
                        })
                        .holders
                        .push((thread, pending.caller));
                    if let Some(weak) = &mut rec.weak {
                        weak.lock(Some(thread), lock);
                    }
                }
                EventKind::Unlock => {
                    rec.unlock(lock, thread);
                    if let Some(weak) = &mut rec.weak {
                        weak.unlock(Some(thread), lock);
                    }
                }
                _ => {}
            }
        }
        // After the lock's handover is in the graph: taking a lock made by another thread
        // happens after its making when it synchronizes with that thread's unlock.
        rec.after_step(thread, &pending, acted.kind, effect, plain);
        match pending.role {
            Role::Wait(condvar) => {
                rec.lanes[thread].wait = Some(Waiting {
                    condvar: condvar.key(),
                    notified: false,
                });
                rec.condvars.entry(condvar.key()).or_default().push(thread);
            }
            Role::Woken(_) => rec.lanes[thread].wait = None,
            Role::Plain | Role::Attempt | Role::Inspect | Role::Join => {}
        }
        let position = rec.taken;
        rec.taken += 1;
        let event = rec
            .shows(position)
            .then(|| rec.event(thread, &pending, acted, chosen));
        // The threads' calls and returns go into events (`Event::call`, `Event::ret`), from
        // which the explorer builds every path's history: the execution's own history holds
        // only the serial parts.
        if let Some(op) = rec.lanes[thread].op.as_mut() {
            op.steps += 1;
            op.last = Some(position);
        }
        rec.steps.extend(event);
        if rec.loops.cut_bare && rec.end.is_none() && rec.lanes[thread].observed.repeats() {
            // Another turn of this loop could only spin: the path ends here, a bounded leaf
            // whose note says to mark the loop.
            let op = (rec.lanes[thread].op.as_ref()).map_or(String::new(), |op| op.call.op.clone());
            let at = pending.caller;
            rec.cut = Some(fgvt_tree::Bound::Spin {
                thread,
                op,
                at: format!("{}:{}:{}", at.file(), at.line(), at.column()),
            });
            rec.end = Some(RunEnd::Abandoned);
        }
    });
    result
}

/// An atomic access's part under weak memory, called by the access when it acts (after its
/// turn came): makes `request` with `order` on `target()` at `at`, the way the schedule chose
/// (`target` is asked only then: a sequentially consistent access skips it).
/// `None` when atomics run sequentially consistent (outside an execution, or under
/// [`Mode::Sc`], where an order weaker than `SeqCst` is noted): the access then acts on its
/// value as it is. A way past the bound on ways ends the execution there (its bounded leaf).
pub(crate) fn weak_access(
    at: &'static Location<'static>,
    target: impl FnOnce() -> Target,
    order: fgvt_memory::Order,
    failure: Option<fgvt_memory::Order>,
    request: Request<'_>,
) -> Option<weak::Done> {
    let seq_cst = |o: fgvt_memory::Order| o == fgvt_memory::Order::SeqCst;
    if seq_cst(order) && failure.is_none_or(seq_cst) && !WEAK_RUN.get() {
        // Sequentially consistent, and nothing weaker to note: the access acts as it is.
        return None;
    }
    let outcome = with_recorder(|rec| {
        let who = rec.who();
        let way = if who.is_some() { rec.way } else { 0 };
        if std::thread::panicking() || rec.end.is_some() {
            // A destructor's access while its thread unwinds (a panic: the run ends there), or
            // an access that finishes an operation of a run that has ended (`drains`): no
            // step, so no choice of the schedule is its, and nothing reads the graph after
            // it. It acts on the value as it is (each location's latest store): the run goes
            // on sequentially consistent from there, which the code must survive as it would
            // on any machine.
            return None;
        }
        let Some(weak) = &mut rec.weak else {
            if matches!(rec.mode, Mode::Sc { watch: true }) {
                let weaker = |o: fgvt_memory::Order| o != fgvt_memory::Order::SeqCst;
                rec.saw_weak |= weaker(order) || failure.is_some_and(weaker);
            }
            return None;
        };
        Some(
            weak.perform(who, way, at, target(), order, request)
                .map_err(|cut| {
                    let thread = who.unwrap_or(0);
                    let access = format!("access at {}:{}:{}", at.file(), at.line(), at.column());
                    rec.cut = Some(weak::stale_bound(thread, access, &cut));
                    rec.end = Some(RunEnd::Abandoned);
                }),
        )
    })
    .flatten()?;
    match outcome {
        Ok(done) => Some(done),
        Err(()) => cancel(),
    }
}

/// A fence with `order` by the calling thread, at `at`: under weak memory an event of the
/// execution graph (no step: it has no choice to make, and happens when its thread runs).
pub(crate) fn weak_fence(at: &'static Location<'static>, order: fgvt_memory::Order) {
    with_recorder(|rec| {
        let who = rec.who();
        if let Some(weak) = &mut rec.weak {
            weak.fence(who, at, order);
            // No footprint, `SeqCst` or not, for the partial-order reduction: a fence commutes
            // with every other thread's step (see `fgvt_tree::reduced`'s module docs).
        }
    });
}

/// What a step touches, for the partial-order reduction (see [`fgvt_tree::Footprint`]): its
/// object, read or written; a condition variable's wait, its mutex and the condition variable
/// (whose notify wakes it); nothing for an operation's only step; everything for a join, which
/// waits for the end of a thread, no step of its own.
fn footprint(pending: &Pending, kind: EventKind) -> fgvt_tree::Footprint {
    use fgvt_tree::Footprint;
    match (pending.object, pending.role) {
        (Some(mutex), Role::Wait(condvar) | Role::Woken(condvar)) => {
            Footprint::WritesBoth(mutex.key(), condvar.key())
        }
        (_, Role::Wait(_) | Role::Woken(_) | Role::Join) => Footprint::Everything,
        (None, _) => Footprint::Nothing,
        (Some(object), _) => match kind {
            EventKind::Read | EventKind::Cas { success: false } => Footprint::Reads(object.key()),
            EventKind::Local | EventKind::Await | EventKind::Dcas { .. } | EventKind::Atomic => {
                Footprint::Everything
            }
            EventKind::Write
            | EventKind::Cas { success: true }
            | EventKind::Lock
            | EventKind::Unlock => Footprint::Writes(object.key()),
        },
    }
}

/// Runs user code; a panic becomes the execution's fault (and `None`), and so does the end
/// of an execution that has ended already (without a fault: see [`Cancelled`]).
pub(crate) fn guarded<R>(f: impl FnOnce() -> R) -> Option<R> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => Some(r),
        Err(payload) if payload.is::<Cancelled>() => None,
        Err(payload) => {
            let message = panic_message(payload.as_ref());
            fault(message, last_panic_location());
            None
        }
    }
}

/// Unwinds the calling test thread: its execution has ended (see the module docs).
pub(crate) fn cancel() -> ! {
    count(|runs| runs.unwound += 1);
    std::panic::resume_unwind(Box::new(Cancelled))
}

/// Marks the calling task as test thread `thread`.
pub(crate) fn enter_thread(thread: ThreadId) {
    let me = engine::current();
    with_recorder(|rec| {
        if rec.tasks.len() <= me {
            rec.tasks.resize(me + 1, None);
        }
        rec.tasks[me] = Some(thread);
        rec.lanes[thread].task = Some(me);
    });
}

/// Starts the concurrent part (`true`) or ends it (`false`): the threads have ended, which is
/// a point of the execution (its last, unless `final` fails).
pub(crate) fn concurrent(on: bool) {
    with_recorder(|rec| {
        if on {
            rec.phase = Phase::Concurrent;
            rec.concurrent_from = rec.history.events.len();
            if let Some(weak) = &mut rec.weak {
                weak.start_threads();
            }
        } else {
            rec.phase = Phase::Serial;
            if let Some(weak) = &mut rec.weak {
                weak.join_threads();
            }
            if rec.end.is_none() {
                rec.point = Some(rec.point());
                rec.finals_from = Some(rec.history.events.len());
            }
        }
    });
}

/// `thread` starts its `index`-th operation, `call`.
pub(crate) fn begin_op(thread: ThreadId, index: usize, call: &Call) {
    with_recorder(|rec| {
        if rec.phase == Phase::Concurrent {
            let lane = &mut rec.lanes[thread];
            lane.op = Some(RunningOp {
                index,
                call: call.clone(),
                steps: 0,
                last: None,
            });
            lane.observed.clear();
            lane.made = Made::default();
            lane.private.clear();
            if let Some(weak) = &mut rec.weak {
                weak.op_began(thread);
            }
        }
    });
}

/// The most plain accesses a thread may make in a row without a step: past them it waits on
/// plain memory, which nothing can end (no other thread runs while it does not step), and its
/// run ends in a fault that says so.
const PLAIN_RUN: u32 = 100_000;

/// A plain access by the caller to `object` (an [`UnsafeCell`](crate::cell::UnsafeCell)'s or a
/// [`Cell`](crate::cell::Cell)'s content) at `at`: not a step, but checked for a data race, and
/// recorded as `effect` for fingerprints. Unwinds the calling thread when the access ends its
/// run (a race) or the run has ended; outside an execution, does nothing.
pub(crate) fn plain(
    object: ObjectId,
    address: usize,
    touch: Touch,
    at: &'static Location<'static>,
    effect: Effect,
) {
    if std::thread::panicking() {
        // A destructor while the thread unwinds: its run has ended already.
        return;
    }
    let pending = object.pending_at(plain_kind(touch), at);
    let go_on = with_recorder(|rec| {
        let Some(thread) = rec.who() else {
            rec.apply(None, &pending, pending.access(), effect);
            return true;
        };
        if rec.end.is_some() {
            return matches!(rec.at_end(&pending), Registered::Drain);
        }
        if let Some(message) = rec.use_after_free(&object, address, Some(thread)) {
            rec.end_with_fault(Fault::new(message, Some(sources::span_at(at))));
            return false;
        }
        let lane = &mut rec.lanes[thread];
        lane.plain_run += 1;
        if lane.plain_run > PLAIN_RUN {
            let message = format!(
                "T{thread} made {PLAIN_RUN} plain accesses in a row without a step: a loop that \
                 waits on plain memory (an UnsafeCell or Cell) never sees another thread's \
                 write; wait on an atomic instead, with fgvt_sync::hint::spin_loop()"
            );
            rec.end_with_fault(Fault::new(message, Some(sources::span_at(at))));
            return false;
        }
        match rec.race_check(thread, object, Checked::Plain, touch, at) {
            Ok(()) => {
                rec.apply(Some(thread), &pending, pending.access(), effect);
                true
            }
            Err(fault) => {
                rec.end_with_fault(fault);
                false
            }
        }
    });
    match go_on {
        Some(false) => cancel(),
        Some(true) => {}
        None => spend_outside_step(),
    }
}

/// The event kind a plain access that `touch`es its location is logged as.
fn plain_kind(touch: Touch) -> EventKind {
    match touch {
        Touch::Read => EventKind::Read,
        Touch::Write | Touch::Create => EventKind::Write,
    }
}

/// The caller, at `at`, saw the bookkeeping object `id` with digest `before` and left `after`
/// (a [`Silent`](crate::Silent)): not a step, but part of fingerprints.
pub(crate) fn silent(id: ObjectId, at: &'static Location<'static>, before: u64, after: u64) {
    with_recorder(|rec| {
        let who = rec.who();
        rec.memory.set(id.key(), after);
        // Bookkeeping that changed wrote: a loop whose turns keep changing it is not idle.
        let wrote = if before != after {
            Wrote::Shared
        } else {
            Wrote::Nothing
        };
        let access = Access {
            shape: fingerprint::shape(SILENT, id.key(), at),
            at,
            args: 0,
        };
        rec.observe(who, access, before, wrote);
    });
}

/// The number of the execution running on this OS thread (one that pauses and goes on keeps
/// its number), if any: what state kept per execution (a model's thread-locals and lazy
/// statics) is keyed by.
pub(crate) fn execution() -> Option<u64> {
    with_recorder(|rec| rec.number)
}

/// The calling test thread, inside an execution's concurrent part.
pub(crate) fn current_lane() -> Option<ThreadId> {
    with_thread(|_, thread| thread)
}

/// Whether the caller is a test thread of an execution, in the concurrent part: the only
/// place where another thread could wake a condition variable's waiter.
pub(crate) fn in_thread() -> bool {
    with_thread(|_, _| ()).is_some()
}

/// Wakes the first thread waiting on `condvar` that no notify has woken yet, or all of them
/// (`all`): they may take their mutex back once it is free. The threads woken.
pub(crate) fn notify(condvar: ObjectId, all: bool) -> Vec<ThreadId> {
    with_recorder(|rec| {
        let Some(queue) = rec.condvars.get_mut(&condvar.key()) else {
            return Vec::new();
        };
        let woken: Vec<ThreadId> = if all {
            std::mem::take(queue)
        } else {
            queue.drain(..1.min(queue.len())).collect()
        };
        if queue.is_empty() {
            rec.condvars.remove(&condvar.key());
        }
        for &thread in &woken {
            if let Some(wait) = &mut rec.lanes[thread].wait {
                wait.notified = true;
            }
        }
        woken
    })
    .unwrap_or_default()
}

/// The lock `id` was poisoned (a holder panicked): its data's version says so, so that a
/// poisoned lock is another state than a sound one for whoever takes it next.
pub(crate) fn poisoned(id: ObjectId) {
    with_recorder(|rec| {
        let version = rec.memory.get(id.key());
        rec.memory.set(id.key(), combine(version, POISONED));
    });
}

/// The calling thread is at a retry hint (`fgvt_sync::hint::spin_loop`): see
/// [`Observations::retry`]. Whether a test thread of an execution called it.
pub(crate) fn retry() -> bool {
    let retried = with_thread(|rec, thread| {
        if rec.end.is_some() {
            return rec.another_turn_after_end(thread);
        }
        rec.lanes[thread].observed.retry();
        true
    });
    if retried == Some(false) {
        if std::thread::panicking() {
            // A destructor waits here while its thread unwinds from a run that has ended: it
            // can be neither unwound again nor left spinning. The other threads run on,
            // finishing what they do at once (see `Recorder::drains`), which may be what it
            // waits for, and this one comes back for another turn.
            let turns = with_recorder(|rec| {
                rec.cleanup_waits += 1;
                rec.cleanup_waits
            });
            if turns.is_some_and(|t| t > CLEANUP_STEPS) {
                // Nothing it waits for can come: a panic here would abort, and spinning on
                // would hang. Say where, and stop the process as the panic would.
                eprintln!(
                    "fgvt: a destructor waits for another thread (a spin loop) while its thread \
                     unwinds from a run fgvt has ended, and nothing it waits for can come; \
                     fgvt cannot end that run (the backtrace below shows the destructor)\n{}",
                    std::backtrace::Backtrace::force_capture()
                );
                std::process::abort();
            }
            engine::switch();
            return true;
        }
        // A thread finishing its operation in an abandoned execution (`Recorder::drains`)
        // waits here for another thread, which will not move: unwind it.
        cancel();
    }
    let retried = retried.is_some();
    if !retried && with_recorder(|_| ()).is_none() {
        spend_outside_step();
    }
    retried
}

thread_local! {
    /// Steps code run outside any execution may still take, when bounded (see [`bounded`]).
    static OUTSIDE_BUDGET: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// Why a run outside any execution stopped: it took more steps than [`bounded`] allowed.
pub(crate) struct OutOfSteps;

/// Why a run outside any execution stopped: an operation would block forever there (a wait
/// on a condition variable, a lock held by an earlier operation), as no other thread exists
/// to wake it. The message says which object and why.
pub(crate) struct WouldBlock(pub(crate) String);

/// Stops a run outside any execution that would block forever, with `message`: it unwinds
/// without the panic hook (a serial run of the `self` spec meets this for every blocking call
/// tried in a state where it blocks, which is no failure to print), with [`WouldBlock`] as the
/// payload.
pub(crate) fn would_block(message: String) -> ! {
    std::panic::resume_unwind(Box::new(WouldBlock(message)))
}

/// Runs `f` (code outside any execution: a serial run) allowing it at most `steps` accesses
/// and retry hints; past them it unwinds with [`OutOfSteps`], without the panic hook's message.
/// A check that runs the object serially must end even when an operation waits forever there.
pub(crate) fn bounded<R>(steps: u64, f: impl FnOnce() -> R) -> R {
    let before = OUTSIDE_BUDGET.replace(Some(steps));
    // Restored however `f` ends.
    struct Restore(Option<u64>);
    impl Drop for Restore {
        fn drop(&mut self) {
            OUTSIDE_BUDGET.set(self.0);
        }
    }
    let _restore = Restore(before);
    f()
}

/// Takes one step of the budget [`bounded`] set, if any, unwinding when there is none left.
fn spend_outside_step() {
    match OUTSIDE_BUDGET.get() {
        None => {}
        Some(0) => std::panic::resume_unwind(Box::new(OutOfSteps)),
        Some(n) => OUTSIDE_BUDGET.set(Some(n - 1)),
    }
}

/// The calling thread's operation returned `value`. One that took no shared step takes a local
/// one now, so that its call and return are events of the tree like every other operation's.
#[track_caller]
pub(crate) fn end_op(value: &Value) {
    let caller = Location::caller();
    let stepless = with_thread(|rec, thread| {
        rec.lanes[thread]
            .op
            .as_ref()
            .is_some_and(|op| op.steps == 0)
    });
    if stepless == Some(true) {
        let pending = Pending {
            kind: EventKind::Local,
            object: None,
            caller,
            shared: false,
            role: Role::Plain,
            address: 0,
            args: 0,
        };
        access(
            pending,
            || (),
            |()| Acted::new(EventKind::Local, String::new()),
            |()| Effect::Nothing,
        );
    }
    with_thread(|rec, thread| {
        if let Some(weak) = &mut rec.weak {
            weak.op_returned(thread);
        }
        if let Some(op) = rec.lanes[thread].op.take() {
            if let Some(step) = op
                .last
                .and_then(|last| last.checked_sub(rec.record_from))
                .and_then(|i| rec.steps.get_mut(i))
            {
                step.ret = Some(value.clone());
            }
        }
    });
}

/// Records a serial operation (`init` or `final`) on `lane`, outside the concurrent part.
pub(crate) fn serial_op(lane: ThreadId, call: &Call, value: &Value) {
    with_recorder(|rec| {
        rec.history.call(lane, call.clone());
        rec.history.ret(lane, value.clone());
    });
}

/// Ends the execution, unless it has ended already, as `end` makes it from the history.
fn end_with(end: impl FnOnce(History) -> RunEnd) {
    with_recorder(|rec| {
        if rec.end.is_none() {
            rec.end = Some(end(std::mem::take(&mut rec.history)));
        }
    });
}

/// Ends the execution as a fault (a panic, or an unknown operation), at `location` (file,
/// line, column) when known.
pub(crate) fn fault(message: String, location: Option<(String, u32, u32)>) {
    let span = location.map(|(file, line, column)| sources::span(&file, line, column));
    end_with(|history| RunEnd::Fault {
        history,
        fault: Fault::new(message, span),
    });
}

/// Ends the execution complete, with its history.
pub(crate) fn complete() {
    end_with(|history| RunEnd::Complete { history });
}

/// Whether the execution has ended (a fault, a deadlock, or abandoned by the explorer): the
/// rest of a thread should not run.
pub(crate) fn ended() -> bool {
    with_recorder(|rec| rec.end.is_some()).unwrap_or(false)
}

thread_local! {
    /// Where the last panic of this OS thread happened (file, line, column), kept by fgvt's
    /// panic hook.
    static PANICKED_AT: RefCell<Option<(String, u32, u32)>> = const { RefCell::new(None) };
}

/// The location of the last panic caught in an execution on this thread.
pub(crate) fn last_panic_location() -> Option<(String, u32, u32)> {
    PANICKED_AT.with(|p| p.borrow_mut().take())
}

/// Installs fgvt's panic hook: a panic in user code during an execution is a fault leaf,
/// caught and recorded, not a test failure to print. Panics outside executions go to the hook
/// that was there before.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let recording = RECORDER
                .try_with(|r| r.try_borrow().map(|r| r.is_some()).unwrap_or(true))
                .unwrap_or(false);
            if recording {
                let location = info
                    .location()
                    .map(|l| (l.file().to_string(), l.line(), l.column()));
                let _ = PANICKED_AT.try_with(|p| *p.borrow_mut() = location);
            } else {
                before(info);
            }
        }));
    });
}

/// The message of a panic payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else if let Some(WouldBlock(s)) = payload.downcast_ref::<WouldBlock>() {
        s.clone()
    } else {
        "a panic".to_string()
    }
}
