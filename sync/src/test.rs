//! A test of a Rust object, built in code: `init`, threads, `final`, limits; explored by
//! re-execution and localized like a model's.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fgvt_checker::{
    builtin, BuiltinSpec, CheckOptions, Outcome as CheckOutcome, Spec, Verdict as CheckVerdict,
    VerdictCache, BUILTIN_NAMES,
};
use fgvt_labeling::labels::LeafOutcome;
use fgvt_labeling::pattern::Pattern;
use fgvt_reports::early::{EarlyNotice, Spinner};
use fgvt_reports::model::{MemoryReport, OrderChange};
use fgvt_reports::{
    localize_tree, Explanation, Localization, LocalizeReport, ReportContext, TestInfo, Verdict,
};
use fgvt_tree::reduced::{Judging, Reduction};
use fgvt_tree::replay::ReplayError;
use fgvt_tree::{
    Call, Choice, EventKind, Exploration, ExploreOptions, Fault, Leaf, LeafKind, Limit,
    MemoryBudget, NodeId, Progress, Search, Tree, TreeBuilder, DEFAULT_REPORT_BUDGET, FINAL_LANE,
    INIT_LANE,
};

use crate::engine;
use crate::fingerprint::Loops;
use crate::fix::{self, Change};
use crate::localized::Localized;
use crate::object::Object;
use crate::program::{Recipe, Reexecuted, MAX_THREADS};
use crate::runtime::{self, guarded, Identity};
use crate::sources;
use crate::spec::{serial_run, short_type_name, SelfSpec, Sequential, SequentialSpec, SerialRun};
use crate::unseen;
use crate::weak::{site, Mode, Override, Site, SiteInfo, WeakOptions};

pub(crate) mod model;

/// A value a test learns while exploring, behind `&self` (a test is shared between threads).
#[derive(Debug, Default)]
struct Learned<T>(std::sync::Mutex<T>);

impl<T: Clone> Learned<T> {
    /// A copy of the value.
    fn get(&self) -> T {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Sets the value.
    fn put(&self, value: T) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = value;
    }
}

/// How many stores older than the latest an access may read by default, under weak memory
/// (loom keeps as many in each atomic's history).
pub(crate) const DEFAULT_MAX_STALE: u32 = 7;

/// The most explorations the search for an ordering fix makes.
const MAX_FIX_TRIALS: usize = 160;

/// One change of a fix at `site`, as a report shows it.
fn order_change(site: &SiteInfo, change: Change, sources: &fgvt_tree::SourceMap) -> OrderChange {
    let (location, snippet) = match sources.locate(crate::sources::span_at(site.at)) {
        Some(l) => (
            Some(fgvt_reports::model::SourceLocation {
                file: l.file,
                line: l.line,
                column: l.column,
                width: l.snippet.chars().count().max(1),
            }),
            l.snippet,
        ),
        None => (None, String::new()),
    };
    let (kind, to) = match change {
        Change::Order(order) => ("order", order),
        Change::FenceBefore(order) => ("fence-before", order),
        Change::FenceAfter(order) => ("fence-after", order),
    };
    OrderChange {
        change: kind.to_string(),
        access: site.access.clone(),
        location,
        snippet,
        from: site.order.to_string(),
        to: to.to_string(),
    }
}

/// Whether a leaf fails, judged by `checker`: what a search stops or tells at. A leaf of an
/// exploration that winds down (its steps all `Done`, to be made again under weak memory) is
/// no run of the test, so it fails nothing, nor is the user told of it.
fn failing_leaf<'a, S: Spec>(
    program: &'a Reexecuted,
    checker: &'a VerdictCache<S>,
) -> impl FnMut(&Leaf) -> bool + 'a {
    move |leaf| !program.winding_down() && judge_leaf(checker, leaf).0 == LeafOutcome::Fail
}

/// How many threads a test's exploration uses unless it says: `FGVT_JOBS`, else one per core.
///
/// # Panics
///
/// When `FGVT_JOBS` is set to anything but a number of threads, 1 or more: a typo must not
/// quietly mean "one per core". (A `main!` program checks it first, with exit code 2.)
pub(crate) fn default_jobs() -> usize {
    match jobs_from_env() {
        Ok(Some(jobs)) => jobs,
        Ok(None) => std::thread::available_parallelism().map_or(1, usize::from),
        Err(message) => panic!("{message}"),
    }
}

/// `FGVT_JOBS`, when set: the number of threads it says, or why it says none.
pub(crate) fn jobs_from_env() -> Result<Option<usize>, String> {
    let Some(value) = std::env::var_os("FGVT_JOBS") else {
        return Ok(None);
    };
    match value.to_str().map(str::trim).map(str::parse::<usize>) {
        Some(Ok(jobs)) if jobs >= 1 => Ok(Some(jobs)),
        _ => Err(format!(
            "FGVT_JOBS is `{}`: set it to a number of threads, 1 or more, or unset it for one \
             per core",
            value.to_string_lossy()
        )),
    }
}

/// A verdict-only search of `program` against `spec`: it stops at the first failing leaf.
fn search_with<S: Spec>(program: &Reexecuted, options: &ExploreOptions, spec: S) -> Option<Search> {
    let checker = VerdictCache::new(spec, CheckOptions::default());
    let mut fails = failing_leaf(program, &checker);
    fgvt_tree::parallel::search_failing(program, options, &mut fails).ok()
}

/// The calls of a test: what every execution runs.
#[derive(Clone, Debug, Default)]
struct Plan {
    init: Vec<Call>,
    threads: Vec<Vec<Call>>,
    finals: Vec<Call>,
    /// Lanes for the threads the object's operations spawn ([`Test::spawns`]), after the
    /// test's own.
    spawned: usize,
}

/// A test of the object `O`: serial `init` calls, threads of calls run concurrently, serial
/// `final` calls.
///
/// Calls are written as in `failing.json` (`"write(0, 2)"`) and run through
/// [`Object::call`]. A call that does not parse panics at once, naming it: the builder is
/// used in tests.
pub struct Test<O: Object> {
    core: TestCore,
    object: PhantomData<fn() -> O>,
}

/// A test with its object's type as plain functions ([`ObjectFns`]): everything a test does
/// but make its object and call it is here, compiled once in this crate rather than once per
/// object type in every crate that tests one (which made test binaries slow to build).
struct TestCore {
    name: String,
    plan: Plan,
    max_steps: usize,
    max_states: usize,
    /// Whether equal states are merged (the default; see [`Test::merge`]).
    merge: bool,
    /// Whether a thread may run without touching an instrumented object (see
    /// [`Test::allow_uninstrumented`]).
    allow_uninstrumented: bool,
    timeout: Option<Duration>,
    /// How long localizing goes on after the first failing run (see [`Test::report_budget`]).
    report_budget: Option<Duration>,
    /// The memory budget and its probe (see [`Test::max_memory`]).
    max_memory: Option<MemoryBudget>,
    /// The command a report gives to run the test again.
    reproduce: String,
    /// The `fgvt_sync::main!` program (its command, and the options it ran with) whose
    /// `explore --schedule` replays a run, for a test made from a test file; `None` for a test
    /// in code, replayed by running it again with `FGVT_REPLAY` set.
    replay_program: Option<(String, String)>,
    spec: SpecChoice,
    /// How many older stores than the latest one access may read, under weak memory (see
    /// [`Test::max_stale`]).
    max_stale: u32,
    /// Whether `Shared` cells are checked for data races too ([`Test::races`]).
    races: bool,
    /// What becomes of loops without the spin hint ([`Test::implied_hints`],
    /// [`Test::cut_bare_spins`]).
    loops: Loops,
    /// Whether a partial-order reduced search runs first, and what its leaves' verdicts read
    /// (see [`Test::partial_order_reduction`]; a model's: [`Judging::Endings`]).
    reduce: Option<Judging>,
    /// How atomics treat their orderings: `None` until an exploration has told (see
    /// [`Test::memory`]).
    memory: Learned<Option<Memory>>,
    /// The accesses the last weak-memory exploration met (where a fix may strengthen one).
    sites: Learned<Vec<SiteInfo>>,
    /// The object's type.
    object: ObjectFns,
    /// Explore only the runs with at most this many preemptions (a model's bound, as loom's
    /// `preemption_bound`); `None`: every run.
    max_preemptions: Option<u32>,
    /// Threads that take steps (see [`Test::jobs`]).
    jobs: usize,
}

/// What a test needs of its object's type `O`: its name, an execution of a plan on a fresh
/// `O`, and calls run serially on a fresh `O` (the `self` spec, and the check of a test's
/// calls).
#[derive(Clone)]
struct ObjectFns {
    name: fn() -> String,
    run: Arc<dyn Fn(&Arc<Plan>) + Send + Sync>,
    serial: SerialRun,
}

impl ObjectFns {
    /// The functions for `O`: the only code of a test instantiated per object type.
    fn of<O: Object>() -> Self {
        ObjectFns {
            name: short_type_name::<O>,
            run: Arc::new(run_plan::<O>),
            serial: serial_run::<O>,
        }
    }
}

/// How a test's atomics treat the orderings they declare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Memory {
    /// Every access sequentially consistent, whatever it declares.
    SequentiallyConsistent,
    /// The C++20 / Rust memory model: a `Relaxed` load may read an older store, a `Release`
    /// store read by an `Acquire` load publishes what came before it, and so on.
    Weak,
}

/// What [`Test::check`] found: how many leaves fail, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checked {
    /// Failing leaves whose history is not linearizable.
    pub not_linearizable: u64,
    /// Failing leaves where the object panicked or met a data race.
    pub faults: u64,
    /// The limit that cut exploration short, if one did (leaves past it are not judged).
    pub partial: Option<Limit>,
}

/// One run of a test replayed ([`Test::replay`]).
#[derive(Clone, Debug)]
pub struct Replayed {
    /// The run as text: per-thread columns, history, schedule, leaf and verdict.
    pub text: String,
    /// Whether the run fails (not linearizable, or the object panicked).
    pub fails: bool,
}

/// The environment variable whose thread choices `assert_linearizable` replays first.
pub const REPLAY_VARIABLE: &str = "FGVT_REPLAY";

/// Choices as a report writes them: `0,1,1`, `0,1/2` (empty for the empty run).
fn parse_schedule(text: &str) -> Result<Vec<Choice>, String> {
    (text.split(',').filter(|t| !t.trim().is_empty()))
        .map(|t| {
            t.parse()
                .map_err(|e: fgvt_tree::choice::ChoiceSyntaxError| e.to_string())
        })
        .collect()
}

impl<O: Object> Test<O> {
    /// An empty test named `name` (reports and files under `target/fgvt/` use it).
    #[track_caller]
    pub fn new(name: &str) -> Self {
        let core = TestCore {
            name: name.to_string(),
            plan: Plan::default(),
            max_steps: 1_000,
            max_states: 1_000_000,
            merge: true,
            allow_uninstrumented: false,
            timeout: None,
            report_budget: Some(DEFAULT_REPORT_BUDGET),
            max_memory: None,
            reproduce: crate::cargo_test::command(name, std::panic::Location::caller().file()),
            replay_program: None,
            spec: SpecChoice::Serial,
            max_stale: DEFAULT_MAX_STALE,
            races: false,
            loops: Loops::default(),
            reduce: Some(Judging::Histories),
            memory: Learned::default(),
            sites: Learned::default(),
            object: ObjectFns::of::<O>(),
            max_preemptions: None,
            jobs: default_jobs(),
        };
        Test {
            core,
            object: PhantomData,
        }
    }

    /// Adds serial calls run before the threads start.
    #[track_caller]
    pub fn init(self, calls: &[&str]) -> Self {
        self.try_init(calls).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Adds a thread running `calls` in order (a test has at most 256).
    #[track_caller]
    pub fn thread(self, calls: &[&str]) -> Self {
        self.try_thread(calls).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Adds serial calls run after every thread has finished (`final` in test files).
    #[track_caller]
    pub fn finally(self, calls: &[&str]) -> Self {
        self.try_finally(calls).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Test::init`], saying which call does not parse instead of panicking.
    pub fn try_init(mut self, calls: &[&str]) -> Result<Self, String> {
        self.core.plan.init.extend(parse_all(calls)?);
        Ok(self)
    }

    /// [`Test::thread`], saying which call does not parse instead of panicking.
    pub fn try_thread(mut self, calls: &[&str]) -> Result<Self, String> {
        if self.core.plan.threads.len() + self.core.plan.spawned >= MAX_THREADS {
            return Err(format!("a test has at most {MAX_THREADS} threads"));
        }
        self.core.plan.threads.push(parse_all(calls)?);
        Ok(self)
    }

    /// Makes room for `threads` threads that the object's operations spawn with
    /// [`fgvt_sync::thread::spawn`](crate::thread::spawn) in one run, all operations together
    /// (0 by default: a spawn then panics, saying to call this). Each is a lane of its own
    /// after the test's threads (`T2` after two), its steps part of the tree as theirs are; a
    /// run ends once every thread spawned has returned, joined or not, before `final`.
    #[must_use]
    pub fn spawns(mut self, threads: usize) -> Self {
        let room = MAX_THREADS.saturating_sub(self.core.plan.threads.len());
        self.core.plan.spawned = threads.min(room);
        self
    }

    /// [`Test::finally`], saying which call does not parse instead of panicking.
    pub fn try_finally(mut self, calls: &[&str]) -> Result<Self, String> {
        self.core.plan.finals.extend(parse_all(calls)?);
        Ok(self)
    }

    /// Most steps one operation may take on a path (an endless spin ends there, bounded;
    /// a spin marked with [`hint::spin_loop`](crate::hint::spin_loop) waits instead).
    pub fn max_steps(mut self, max: usize) -> Self {
        self.core.max_steps = max;
        self
    }

    /// Whether equal states are merged (the default): points of different schedules with
    /// the same fingerprint (the same memory, locks, history and, for every thread, the same
    /// operation and observations) are one node, so the tree is stored as a graph and a
    /// retry loop that comes back to where it was is a loop edge. Counts, labels and CDRS
    /// are those of the unfolded tree either way; `false` unfolds every path (and cuts one
    /// where it comes back to a state on it), for comparison.
    pub fn merge(mut self, merge: bool) -> Self {
        self.core.merge = merge;
        self
    }

    /// Under weak memory, how many stores older than the latest one access may read (or go
    /// before, for a store): the newest `max` are explored, and an access with more ways has
    /// one bounded leaf for the rest (the result is then partial). 7 by default, as loom's
    /// history of each atomic.
    pub fn max_stale(mut self, max: u32) -> Self {
        self.core.max_stale = max.min(crate::program::MAX_WAYS - 1);
        self
    }

    /// Whether accesses to [`Shared`](crate::Shared) cells are checked for data races too, as
    /// those to [`UnsafeCell`](crate::cell::UnsafeCell) and [`Cell`](crate::cell::Cell) always
    /// are (`"races": true` in a test file). Off by default: a `Shared` cell is a field raced
    /// on by design, whose races the tree localizes; on, two accesses to one that nothing
    /// orders end the run as a data race (undefined behaviour, were it plain Rust memory).
    pub fn races(mut self, check: bool) -> Self {
        self.core.races = check;
        self
    }

    /// Whether a turn of a `loop` or `while` of the object's source that calls no hint fgvt
    /// sees (`std::hint::spin_loop`, or none at all) ends as if
    /// [`hint::spin_loop`](crate::hint::spin_loop) had ended it, when it wrote nothing to
    /// shared memory and its accesses all lie in the loop's text (on by default). A waiting
    /// loop is then one state, as with the hint, and a retry loop's failed turn is left to the
    /// run without it by the partial-order reduction: a compare-and-swap loop around
    /// `std::hint::spin_loop()` costs what it costs with fgvt's hint.
    ///
    /// It takes the loop at the hint's promise: a turn carries nothing into the next but what
    /// it reads. A `for` loop carries its iterator and is never taken, nor a `while` whose
    /// condition reads no shared memory (`while i < n`), nor a loop that assigns a `mut`
    /// variable its function declared before it (`seen = now`, `tries += 1`); a turn that
    /// comes back to a compare-and-swap given other arguments is not dropped. State carried
    /// where the source shows no assignment (a `&mut` the loop writes through, a `Cell` field)
    /// breaks the promise unseen: a test of such a loop says `implied_hints(false)`. A turn
    /// may begin in a helper the loop calls (`while !self.try_lock() {}`) if the helper is in
    /// the same file and no loop of its own holds the access; a loop that reaches into another
    /// file is not taken, and there, as with the setting off, a loop that spins is cut where
    /// its turns repeat ([`Test::cut_bare_spins`]).
    ///
    /// The example is `no_run` for one reason: rustdoc gives a doctest's code the lines of the
    /// doctest, not those of its file, so fgvt finds no loop there. In a test of `tests/` or
    /// `src/` it passes as written (`sync/tests/it/implied.rs` has it).
    ///
    /// ```no_run
    /// use fgvt_sync::atomic::{AtomicBool, Ordering::{Acquire, Relaxed, Release}};
    /// use fgvt_sync::{Test, Verdict};
    ///
    /// /// A spin lock whose loop calls `std`'s hint, which fgvt cannot see.
    /// #[derive(Default)]
    /// struct Lock(AtomicBool);
    ///
    /// #[fgvt_sync::operations]
    /// impl Lock {
    ///     pub fn lock_unlock(&self) {
    ///         while self.0.compare_exchange(false, true, Acquire, Relaxed).is_err() {
    ///             std::hint::spin_loop();
    ///         }
    ///         self.0.store(false, Release);
    ///     }
    /// }
    ///
    /// let test = Test::<Lock>::new("lock").thread(&["lock_unlock()"]).thread(&["lock_unlock()"]);
    /// let report = test.localize().unwrap().report;
    /// assert_eq!(report.verdict, Verdict::Linearizable);
    /// assert_eq!(report.partial, None);
    /// ```
    pub fn implied_hints(mut self, on: bool) -> Self {
        self.core.loops.implied_hints = on;
        self
    }

    /// Whether a path ends where an operation repeats an iteration of a loop that has no
    /// spin hint (on by default): the same accesses at the same places saw the same values
    /// and wrote nothing, so another turn could only spin. The path is then a bounded leaf,
    /// the result partial, and the report names the loop's line and says to call
    /// [`hint::spin_loop`](crate::hint::spin_loop) in it; the test is judged in a moment
    /// instead of spinning to [`Test::max_steps`] on every path. Off, such a loop runs to the
    /// step limit: for a loop that retries a bounded number of times, whose last turn does
    /// something else.
    ///
    /// ```
    /// use fgvt_sync::atomic::{AtomicBool, Ordering::{Acquire, Relaxed, Release}};
    /// use fgvt_sync::{report::Limit, Test, Verdict};
    ///
    /// /// A spin lock whose loop has no hint, tested without implied hints (as a loop fgvt
    /// /// does not take for a retry is: see `Test::implied_hints`).
    /// #[derive(Default)]
    /// struct Bare(AtomicBool);
    ///
    /// #[fgvt_sync::operations]
    /// impl Bare {
    ///     pub fn lock_unlock(&self) {
    ///         while self.0.compare_exchange(false, true, Acquire, Relaxed).is_err() {}
    ///         self.0.store(false, Release);
    ///     }
    /// }
    ///
    /// let test = Test::<Bare>::new("bare").thread(&["lock_unlock()"]).thread(&["lock_unlock()"]);
    /// let test = test.implied_hints(false);
    /// let report = test.localize().unwrap().report;
    /// assert_eq!(report.verdict, Verdict::Inconclusive);
    /// assert_eq!(report.partial.as_deref(), Some(Limit::Spin.name()));
    /// ```
    pub fn cut_bare_spins(mut self, cut: bool) -> Self {
        self.core.loops.cut_bare = cut;
        self
    }

    /// Searches with a partial-order reduction first ([`fgvt_tree::reduced`]): one run of each
    /// class of runs that differ only in the order of steps that commute. When every run it takes
    /// passes, that is the verdict, and [`Test::explore`] and [`Test::localize`] give the tree of
    /// those runs; when one fails, or it cannot tell within half the timeout and 200,000 states of
    /// its runs, the test is explored in full as without it. A run through a retry loop's turn that
    /// failed (one ended by [`crate::hint::spin_loop`], or by a loop taken for a retry without it,
    /// [`Test::implied_hints`], that wrote nothing, or only to what its thread made and has not
    /// published) is left to the run without the turn
    /// ([`fgvt_tree::QuietTurn`]), and under weak memory a read of an older store to the order
    /// where it comes before the newer store it missed ([`fgvt_tree::StoreAccess`]): the correct
    /// 3-thread Treiber stack of `benches/genmc`, with its `Acquire`/`AcqRel` orderings, takes 270
    /// runs in 0.12 s (GenMC's 270 consistent executions), where the full exploration does not end
    /// in a minute. On by default (a test that replays a schedule is explored in full all the
    /// same; a preemption-bounded one is searched with bounded partial-order reduction); `false`
    /// explores every interleaving from the start, and a passing test's report then draws them
    /// all, not the runs taken. Models ([`crate::Model`]) use it too.
    pub fn partial_order_reduction(mut self, on: bool) -> Self {
        self.core.reduce = on.then_some(Judging::Histories);
        self
    }

    /// Runs the atomics under `memory` from the start, instead of telling by exploring: with
    /// [`Memory::SequentiallyConsistent`], whatever orderings the code declares (how to check
    /// that a bug found under weak memory is only there); with [`Memory::Weak`], even code
    /// whose accesses are all `SeqCst` (which gives the same tree, larger).
    ///
    /// By default a test is explored sequentially consistent, and if some access declares an
    /// ordering weaker than `SeqCst`, explored again under weak memory: code whose accesses
    /// are all `SeqCst` costs what it did.
    pub fn memory(self, memory: Memory) -> Self {
        self.core.memory.put(Some(memory));
        self
    }

    /// How many threads run the test's executions while it is explored: one search, and
    /// `jobs - 1` workers, each with an engine of its own, taking steps ahead of it. The tree,
    /// the report and every count are the same whatever the number (only the time differs).
    /// Default: one per core (`FGVT_JOBS` in the environment says otherwise). A test whose
    /// object touches a `static` (an object made in a `const` context) runs those executions
    /// on the search's thread alone: the `static` is one for the whole process.
    pub fn jobs(mut self, jobs: usize) -> Self {
        self.core.jobs = jobs.max(1);
        self
    }

    /// Most tree nodes before exploration stops (the result is then partial).
    pub fn max_states(mut self, max: usize) -> Self {
        self.core.max_states = max;
        self
    }

    /// Stops exploring after `timeout` (the result is then partial).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.core.timeout = Some(timeout);
        self
    }

    /// How long localizing goes on once a run has failed (5 s by default): the rest of the
    /// tree is explored until then (past it the tree is partial, [`Limit::ReportBudget`], and
    /// the report shows the CDRS found so far), and then, under weak memory, the search for a
    /// fix (past it the fix note says how many changes were tried). The verdict is known at
    /// the first failing run; the budget bounds the wait for the racing lines. `None` explores
    /// the whole tree and makes every trial, however long they take.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use fgvt_sync::{Object, Test, Value, Call};
    /// # struct Nothing;
    /// # impl Object for Nothing {
    /// #     fn new() -> Self { Nothing }
    /// #     fn call(&self, _: &Call) -> Result<Value, String> { Ok(Value::Unit) }
    /// # }
    /// let test = Test::<Nothing>::new("patient").report_budget(Duration::from_secs(60));
    /// let exhaustive = Test::<Nothing>::new("exhaustive").report_budget(None);
    /// ```
    pub fn report_budget(mut self, budget: impl Into<Option<Duration>>) -> Self {
        self.core.report_budget = budget.into();
        self
    }

    /// Stops exploring once `budget.used()` reports `budget.bytes` or more in use (the result
    /// is then partial, [`Limit::Memory`]), and measures the exploration's peak
    /// ([`Tree::memory`]). The probe counts what the allocator holds: give the test binary a
    /// counting allocator, as `fgvt::memory::Counting` with `fgvt::memory::allocated`:
    ///
    /// ```
    /// use fgvt_sync::{MemoryBudget, Mutex, Test};
    ///
    /// #[derive(Default)]
    /// struct Stack(Mutex<Vec<i64>>);
    ///
    /// #[fgvt_sync::operations]
    /// impl Stack {
    ///     pub fn push(&self, v: i64) {
    ///         self.0.lock().unwrap().push(v);
    ///     }
    /// }
    ///
    /// // With fgvt as a dev-dependency, give the test binary its counting allocator:
    /// // #[global_allocator]
    /// // static ALLOCATOR: fgvt::memory::Counting = fgvt::memory::Counting;
    /// // and use `fgvt::memory::allocated` here.
    /// fn allocated() -> usize {
    ///     0
    /// }
    ///
    /// let budget = MemoryBudget { bytes: 1 << 30, used: allocated };
    /// let test = Test::<Stack>::new("stack").thread(&["push(1)"]).max_memory(budget);
    /// let found = test.localize().unwrap();
    /// // The probe measured the exploration's peak.
    /// assert!(found.tree.memory.is_some());
    /// ```
    ///
    /// Without one, a test explores within 60% of the machine's RAM, probed by the process's
    /// resident size (`fgvt_tree::resident`, on Linux; elsewhere the states limit,
    /// [`Test::max_states`], is what bounds memory). The resident size counts what the
    /// object's runs allocate and never free: every state's steps run the object again, so an
    /// object that leaks its nodes grows the process with every state, and the budget stops it
    /// before the machine runs out.
    pub fn max_memory(mut self, budget: MemoryBudget) -> Self {
        self.core.max_memory = Some(budget);
        self
    }

    /// Lets [`Test::assert_linearizable`] pass a test in which some thread's operations touch
    /// no instrumented object in any run. By default that fails the assertion: such a thread
    /// races with nothing fgvt can see, which almost always means the object uses `std`'s
    /// atomics or locks instead of `fgvt_sync`'s (the report says which threads).
    pub fn allow_uninstrumented(mut self) -> Self {
        self.core.allow_uninstrumented = true;
        self
    }

    /// Checks the runs against the spec named `name`: `self` (the default: the object's own
    /// serial runs) or a built-in one (`register`, `counter`, `set`, `map`, `queue`, `stack`,
    /// `deque`, …, as `fgvt localize` knows them).
    #[track_caller]
    pub fn spec(self, name: &str) -> Self {
        self.try_spec(name).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Test::spec`], saying why a name is unknown instead of panicking.
    pub fn try_spec(self, name: &str) -> Result<Self, String> {
        self.try_spec_among(name, &[])
    }

    /// Checks the runs against the sequential Rust type `S` (see [`Sequential`]).
    pub fn spec_type<S: Sequential>(mut self) -> Self {
        self.core.spec = SpecChoice::Sequential(SpecType::of::<S>());
        self
    }

    /// [`Test::try_spec`], where `name` may also be one of the sequential `types` (by its type
    /// name, without module path): how a test file's `"spec"` is looked up.
    pub fn try_spec_among(self, name: &str, types: &[SpecType]) -> Result<Self, String> {
        Ok(self.with_spec(SpecChoice::named(Some(name), types)?))
    }

    /// Checks the runs against `spec`, already looked up.
    pub(crate) fn with_spec(mut self, spec: SpecChoice) -> Self {
        self.core.spec = spec;
        self
    }

    /// Runs these calls, already parsed (as a program's generated tests have them), instead
    /// of any given before.
    pub fn with_calls(mut self, init: &[Call], threads: &[Vec<Call>], finals: &[Call]) -> Self {
        self.core.plan = Plan {
            init: init.to_vec(),
            threads: threads.to_vec(),
            finals: finals.to_vec(),
            spawned: self.core.plan.spawned,
        };
        self
    }

    /// The command a report gives to run the test again (by default `cargo test <name>`).
    pub fn reproduce_with(mut self, command: &str) -> Self {
        self.core.reproduce = command.to_string();
        self
    }

    /// Says that `program explore FILE --schedule … options` replays a run of this test (a
    /// test made by a `fgvt_sync::main!` program from a test file).
    #[cfg_attr(not(feature = "cli"), allow(dead_code))]
    pub(crate) fn replayed_by(mut self, program: &str, options: &str) -> Self {
        self.core.replay_program = Some((program.to_string(), options.to_string()));
        self
    }

    /// The interleaving tree, by re-executing the object under every schedule (see
    /// [`Test::merge`]).
    ///
    /// # Panics
    ///
    /// If the object rejects one of the test's calls (an unknown operation, wrong arguments:
    /// its [`Object::call`] returns `Err` in a serial run after `init`), naming the call: that
    /// is a mistake in the test, not a verdict. So do [`Test::check`] and [`Test::localize`].
    pub fn explore(&self) -> Result<Tree, ReplayError> {
        self.core.explore()
    }

    /// The first call the object rejects in a serial run after `init` (see
    /// [`spec::refusal`](crate::spec::refusal)), named with where it is: what `main!` checks
    /// before exploring.
    #[cfg(feature = "cli")]
    pub(crate) fn rejected_call(&self) -> Result<(), String> {
        self.core.rejected_call()
    }

    /// The memory model the test ran under, once an exploration has told.
    pub fn memory_model(&self) -> Option<Memory> {
        self.core.memory_model()
    }

    /// Explores and judges every leaf against the spec, verdict only: what a hunt asks of
    /// each test it draws, and shrinking of each candidate.
    pub fn check(&self) -> Result<Checked, ReplayError> {
        self.core.check()
    }

    /// Explores, judges every leaf against the spec (by default `self`), labels the tree and
    /// finds its critical data race sequences. With `FGVT_REPLAY=0,1,1` in the environment (a
    /// report's replay line sets it), it first prints that run of the test to standard error.
    #[track_caller]
    pub fn localize(&self) -> Result<Localized, ReplayError> {
        self.core.localize()
    }

    /// Localizes the test and panics unless the object is linearizable on it: the panic
    /// message is the text report, and its Markdown and JSON are written under
    /// `target/fgvt/<name>.md` and `.json` for a bug ticket (and the labeled tree as `.svg`
    /// with the `svg` feature).
    ///
    /// With `FGVT_REPLAY` set, it first prints that run, as [`Test::localize`] does.
    #[track_caller]
    pub fn assert_linearizable(&self) {
        self.core.assert_linearizable()
    }

    /// One run of the test, by its choices — thread numbers, or [`Choice`]s where a load
    /// under weak memory went another way than the latest store (a report's witness gives
    /// them, and its replay line runs this): its per-thread columns, history and verdict, as
    /// `fgvt explore --schedule` prints a model's run. `Err` when a choice names a thread that
    /// cannot move.
    pub fn replay<C: Copy + Into<Choice>>(&self, schedule: &[C]) -> Result<Replayed, String> {
        let schedule: Vec<Choice> = schedule.iter().map(|&c| c.into()).collect();
        self.core.replay(&schedule)
    }
}

impl TestCore {
    /// [`Test::explore`]'s work.
    pub(crate) fn explore(&self) -> Result<Tree, ReplayError> {
        self.explore_with(&self.explore_options())
    }

    /// The first call the object rejects in a serial run after `init` (see
    /// [`spec::refusal`](crate::spec::refusal)), named with where it is.
    pub(crate) fn rejected_call(&self) -> Result<(), String> {
        let plan = &self.plan;
        let placed = (plan.init.iter().enumerate())
            .map(|(i, c)| (format!("init[{i}]"), c))
            .chain(plan.threads.iter().enumerate().flat_map(|(t, calls)| {
                (calls.iter().enumerate()).map(move |(i, c)| (format!("threads[{t}][{i}]"), c))
            }))
            .chain((plan.finals.iter().enumerate()).map(|(i, c)| (format!("final[{i}]"), c)));
        for (at, call) in placed {
            if let Some(message) = crate::spec::refusal(self.object.serial, &plan.init, call) {
                return Err(format!(
                    "{at}, `{call}`: {message} (list only operations the object runs)"
                ));
            }
        }
        Ok(())
    }

    /// The limits of exploration this test sets.
    fn explore_options(&self) -> ExploreOptions {
        ExploreOptions {
            memoize: self.merge,
            max_states: Some(self.max_states),
            max_steps: Some(self.max_steps),
            timeout: self.timeout,
            max_memory: self.max_memory.or_else(resident_budget),
            report_budget: self.report_budget,
            max_preemptions: self.max_preemptions,
            jobs: self.jobs,
            ..ExploreOptions::default()
        }
    }

    /// The memory model the test's explorations use: as set, or as the first exploration
    /// told (weak once an access declared a weaker ordering than `SeqCst`), else
    /// sequentially consistent, watching for such an access.
    fn mode(&self) -> Mode {
        match self.memory.get() {
            Some(Memory::SequentiallyConsistent) => Mode::Sc { watch: false },
            None => Mode::Sc { watch: true },
            Some(Memory::Weak) => self.weak_mode(HashMap::new()),
        }
    }

    /// Weak memory, with the changes of `overrides` to the code's orderings.
    fn weak_mode(&self, overrides: HashMap<Site, Override>) -> Mode {
        Mode::Weak(Arc::new(WeakOptions {
            max_ways: self.max_stale + 1,
            overrides,
        }))
    }

    /// [`Test::memory_model`]'s work.
    pub(crate) fn memory_model(&self) -> Option<Memory> {
        self.memory.get()
    }

    /// The test's executions, as a program the explorer steps through.
    fn program(&self) -> Reexecuted {
        self.program_in(self.mode())
    }

    /// The test's executions under `mode`.
    fn program_in(&self, mode: Mode) -> Reexecuted {
        let plan = Arc::new(self.plan.clone());
        let run = Arc::clone(&self.object.run);
        Reexecuted::new(Recipe {
            threads: self.plan.threads.len() + self.plan.spawned,
            body: Arc::new(move || run(&plan)),
            merge: self.merge,
            mode,
            shared_races: self.races,
            loops: self.loops,
        })
    }

    /// Whether some run fails under `mode`, by a search that stops at the first failing leaf
    /// and by `deadline`: `Some(false)` when the whole tree was explored and every leaf
    /// passed, `None` when a limit (or a bound) left some run unjudged.
    fn fails_in(
        &self,
        mode: Mode,
        limits: (usize, usize),
        deadline: Option<Instant>,
    ) -> Option<bool> {
        let program = self.program_in(mode);
        let (max_states, max_steps) = limits;
        let options = ExploreOptions {
            max_states: Some(max_states.min(self.max_states)),
            max_steps: Some(max_steps.min(self.max_steps)),
            ..self.explore_options()
        }
        .until(deadline);
        let search = match self.spec {
            SpecChoice::Serial => {
                search_with(&program, &options, SelfSpec::new(self.object.serial))
            }
            SpecChoice::Builtin(spec) => search_with(&program, &options, spec),
            SpecChoice::Sequential(spec) => (spec.search)(&program, &options),
        };
        if program.take_error().is_some() {
            return None;
        }
        search?.fails()
    }

    /// What a weak-memory run says of its orderings, for a failing test: whether it passes
    /// with every access `SeqCst`, and the smallest strengthening found that makes every run
    /// pass (one access, else two; each tried by exploring the test again with it).
    fn memory_report(
        &self,
        report: &LocalizeReport,
        tree: &Tree,
        sources: &fgvt_tree::SourceMap,
        unseen: &[unseen::Use],
    ) -> MemoryReport {
        let mut memory = MemoryReport {
            model: "rc11".to_string(),
            ..MemoryReport::default()
        };
        if report.verdict != Verdict::NotLinearizable {
            return memory;
        }
        // The report budget runs from here: the exploration that found the failure is over.
        let deadline = self.report_budget.map(|budget| Instant::now() + budget);
        let out_of_budget = || deadline.is_some_and(|d| Instant::now() >= d);
        memory.passes_sequentially_consistent = self
            .fails_in(
                Mode::Sc { watch: false },
                (self.max_states, self.max_steps),
                deadline,
            )
            .map(|fails| !fails);
        if memory.passes_sequentially_consistent == Some(false) {
            memory.fix_note = Some(fgvt_reports::no_fix_note());
            return memory;
        }
        let budget = fix::trial_limits(
            tree.graph.node_count(),
            usize::try_from(tree.stats().max_depth).unwrap_or(usize::MAX),
        );
        let sites = self.sites.get();
        let racing_at = report.racing_positions();
        let racing: Vec<bool> = (sites.iter())
            .map(|s| racing_at.contains(&(s.at.line() as usize, s.at.column() as usize)))
            .collect();
        let beside_std = std::cell::Cell::new(false);
        let found = fix::search(&sites, &racing, MAX_FIX_TRIALS, |trial| {
            if out_of_budget() {
                return None;
            }
            // A fence next to one of std's, which fgvt cannot see, is what the code has
            // already: never offered as a fix.
            let beside_std_fence = (trial.iter()).any(|&(i, change)| {
                let at = sites[i].at;
                !matches!(change, Change::Order(_))
                    && unseen::fence_near(unseen, at.file(), at.line() as usize)
            });
            if beside_std_fence {
                beside_std.set(true);
                return Some(false);
            }
            let mut overrides: HashMap<Site, Override> = HashMap::new();
            for &(i, change) in trial {
                let o = overrides.entry(site(sites[i].at)).or_default();
                match change {
                    Change::Order(order) => o.order = Some(order),
                    Change::FenceBefore(order) => o.fence_before = Some(order),
                    Change::FenceAfter(order) => o.fence_after = Some(order),
                }
            }
            Some(self.fails_in(self.weak_mode(overrides), budget, deadline) == Some(false))
        });
        memory.fix = (found.changes.iter())
            .map(|&(i, change)| order_change(&sites[i], change, sources))
            .collect();
        let mut note = fgvt_reports::fix_note(memory.fix.len(), found.tried, out_of_budget());
        if beside_std.get() {
            note.push_str(
                "; no fence was tried beside std's fences, which the code has and fgvt cannot \
                 see (see the warning)",
            );
        }
        memory.fix_note = Some(note);
        memory
    }

    /// [`Test::explore`] with `options`.
    fn explore_with(&self, options: &ExploreOptions) -> Result<Tree, ReplayError> {
        self.run_explorer(
            |program| {
                let deadline = options.timeout.map(|t| Instant::now() + t);
                // No leaf is judged here: the reduced search's runs all "pass".
                match reduced_first(program, options, self.reduce, &mut |_| false)? {
                    Some(tree) => Ok(tree),
                    None => fgvt_tree::parallel::explore(program, &options.clone().until(deadline)),
                }
            },
            fault_tree,
        )
    }

    /// Runs `explorer` on the test's program, once its calls are checked: what it made, or,
    /// when the serial part failed before any interleaving, `on_fault` of that fault.
    fn run_explorer<R>(
        &self,
        mut explorer: impl FnMut(&Reexecuted) -> Result<R, Fault>,
        on_fault: impl FnOnce(Fault) -> R,
    ) -> Result<R, ReplayError> {
        if let Err(message) = self.rejected_call() {
            panic!("fgvt test `{}`: {message}", self.name);
        }
        let mut program = self.program();
        let mut explored = explorer(&program);
        if let Some(error) = program.take_error() {
            return Err(error);
        }
        if self.memory.get() == Some(Memory::Weak) {
            self.sites.put(program.sites());
        }
        if self.memory.get().is_none() {
            // The first exploration tells which model the test needs: it winds down at the
            // first access that declares a weaker ordering than `SeqCst`, and is made again.
            let weak = program.saw_weak();
            self.memory.put(Some(if weak {
                Memory::Weak
            } else {
                Memory::SequentiallyConsistent
            }));
            if weak {
                drop(explored);
                program = self.program();
                explored = explorer(&program);
                if let Some(error) = program.take_error() {
                    return Err(error);
                }
                self.sites.put(program.sites());
            }
        }
        Ok(explored.unwrap_or_else(on_fault))
    }

    /// Explores and judges every leaf. When a limit cuts the tree before any leaf fails,
    /// looks for a failing run with few preemptions ([`fgvt_tree::scout`]) and, if there is
    /// one, explores again taking it first, as `fgvt localize` does: the tree, its verdicts,
    /// and whether a scout found its failing run.
    fn explore_and_judge(&self) -> Result<(Tree, Verdicts, bool), ReplayError> {
        let started = std::time::Instant::now();
        let options = self.explore_options();
        // What is left, at this moment, of `share` of the timeout.
        let left = |share: f64| {
            (options.timeout).map(|t| t.mul_f64(share).saturating_sub(started.elapsed()))
        };
        let first = ExploreOptions {
            timeout: left(FIRST_SHARE),
            ..options.clone()
        };
        let replay_command = self.replay_command();
        let mut telling = Telling {
            notice: EarlyNotice::new(),
            spinner: Spinner::new(&format!("fgvt: exploring {}", self.name)),
            test_file: &self.name,
            replay: self.replay_for(&replay_command),
        };
        let judged = self.explore_judged(&first, &mut telling);
        // The report comes now: a failing run not told of yet needs no telling.
        telling.notice.finish();
        telling.spinner.finish();
        let (tree, verdicts) = judged?;
        let fails = verdicts.values().any(|(o, _)| *o == LeafOutcome::Fail);
        // A tree cut only where a loop spins without the hint was explored everywhere else:
        // no scout finds more.
        let whole = tree
            .partial
            .is_none_or(|limit| limit == fgvt_tree::Limit::Spin);
        if whole || fails || left(SCOUT_SHARE).is_some_and(|t| t.is_zero()) {
            return Ok((tree, verdicts, false));
        }
        let scouting = ExploreOptions {
            timeout: left(SCOUT_SHARE),
            ..options.clone()
        };
        let program = self.program();
        let run = match self.spec {
            SpecChoice::Serial => {
                scout_with(&program, &scouting, SelfSpec::new(self.object.serial))
            }
            SpecChoice::Builtin(spec) => scout_with(&program, &scouting, spec),
            SpecChoice::Sequential(spec) => (spec.scout)(&program, &scouting),
        };
        if let Some(error) = program.take_error() {
            return Err(error);
        }
        let Some(run) = run else {
            return Ok((tree, verdicts, false));
        };
        let again = ExploreOptions {
            timeout: left(1.0),
            first: Some(run.into()),
            ..options
        };
        drop((tree, verdicts));
        let (tree, verdicts) = self.explore_judged(&again, &mut ())?;
        Ok((tree, verdicts, true))
    }

    /// Explores with `options`, judging each leaf against the spec as it is made (the first
    /// failing one told to `progress` at once): the tree and every leaf's verdict.
    fn explore_judged(
        &self,
        options: &ExploreOptions,
        progress: &mut dyn Progress,
    ) -> Result<(Tree, Verdicts), ReplayError> {
        let explorer = |program: &Reexecuted| match self.spec {
            SpecChoice::Serial => explore_judged(
                program,
                options,
                progress,
                SelfSpec::new(self.object.serial),
                self.reduce,
            ),
            SpecChoice::Builtin(spec) => {
                explore_judged(program, options, progress, spec, self.reduce)
            }
            SpecChoice::Sequential(spec) => (spec.explore)(program, options, progress, self.reduce),
        };
        self.run_explorer(explorer, |fault| {
            let tree = fault_tree(fault);
            let verdicts = judge(&tree, SelfSpec::new(self.object.serial));
            (tree, verdicts)
        })
    }

    /// The explanation a report shows for a leaf judged `why`, reached by a run whose history
    /// is `run`. Leaves are judged without one, and the run shown may be another path to the
    /// leaf than the first, whose history differs as far as the verdict allows (states are
    /// shared): a violation is explained on the run's own history.
    fn explain_run(&self, why: &Why, run: &fgvt_tree::History) -> Option<Explanation> {
        match why {
            Why::NotLinearizable(_) => {
                let outcome = self.spec.check(self.object.serial, run).ok()?;
                Why::NotLinearizable(Arc::new(outcome)).explanation()
            }
            why => why.explanation(),
        }
    }

    /// The command a report's replay line runs: the reproduce line, with the output shown.
    fn replay_command(&self) -> String {
        format!("{} --nocapture", self.reproduce)
    }

    /// How this test's runs are replayed: by its `main!` program, or by `replay_command` with
    /// the run in the environment.
    fn replay_for<'a>(&'a self, replay_command: &'a str) -> fgvt_reports::Replay<'a> {
        match &self.replay_program {
            Some((program, options)) => fgvt_reports::Replay::Program { program, options },
            None => fgvt_reports::Replay::Environment(replay_command),
        }
    }

    /// [`Test::check`]'s work.
    pub(crate) fn check(&self) -> Result<Checked, ReplayError> {
        let (tree, verdicts, _) = self.explore_and_judge()?;
        let mut checked = Checked {
            not_linearizable: 0,
            faults: 0,
            partial: tree.partial,
        };
        for (outcome, why) in verdicts.values() {
            match (outcome, why) {
                (LeafOutcome::Fail, Why::Panicked(_) | Why::Raced(_) | Why::Memory(..)) => {
                    checked.faults += 1;
                }
                (LeafOutcome::Fail, _) => checked.not_linearizable += 1,
                _ => {}
            }
        }
        Ok(checked)
    }

    /// [`Test::localize`]'s work.
    #[track_caller]
    pub(crate) fn localize(&self) -> Result<Localized, ReplayError> {
        self.show_replay_from_environment();
        let runs_before = runtime::runs();
        let (tree, verdicts, scouted) = self.explore_and_judge()?;
        let info = TestInfo {
            file: self.name.clone(),
            object: (self.object.name)(),
            spec: self.spec.name(),
            command: self.reproduce.clone(),
        };
        let sources = sources::map();
        // A replay reruns the test with its output shown.
        let replay_command = self.replay_command();
        let context = ReportContext {
            pattern: &Pattern::default(),
            sources: &sources,
            test: &info,
            // As `fgvt localize`: the best three in full, all counted.
            max_cdrs: 3,
            replay: self.replay_for(&replay_command),
            // A test has no Ctrl-C of its own: its limits end it.
            interrupt: None,
        };
        let Localization {
            mut report,
            labeling,
            cdrs,
        } = localize_tree(
            &tree,
            |node| {
                verdicts
                    .get(&node)
                    .map_or(LeafOutcome::Unknown, |(o, _)| *o)
            },
            |leaf, run| self.explain_run(&verdicts.get(&leaf)?.1, run),
            &context,
        );
        if let Some(note) = uninstrumented_note(&tree, self.plan.threads.len()) {
            report.notes.insert(0, note);
        }
        let unseen = unseen::in_tree(&tree, &sources);
        let warnings = unseen::notes(&unseen, self.loops.implied_hints);
        report.notes.splice(0..0, warnings);
        if scouted {
            report
                .notes
                .insert(0, fgvt_reports::scouted_note(tree.partial));
        }
        if let Some(bound) = self.max_preemptions {
            let s = if bound == 1 { "" } else { "s" };
            let note = if report.tree.leaves == 0 {
                // A thread that spins can go on, so leaving it preempts it: within a small
                // bound, every run may stay in a spin forever.
                format!(
                    "no run with at most {bound} preemption{s} (the model's preemption bound) \
                     ends: in each, a thread spins in a wait that only a preemption past the \
                     bound would let another thread end, so there is no verdict: raise the \
                     bound (`LOOM_MAX_PREEMPTIONS`, `Model::preemption_bound`)"
                )
            } else {
                format!(
                    "only the runs with at most {bound} preemption{s} were explored (the \
                     model's preemption bound): the verdict is theirs"
                )
            };
            report.notes.insert(0, note);
        }
        if self.memory.get() == Some(Memory::Weak) {
            report.memory = Some(self.memory_report(&report, &tree, &sources, &unseen));
            fgvt_reports::name_deciding_accesses(&mut report);
            unseen::doubt_weak_failure(&mut report, &unseen);
        }
        let unreadable = sources::unreadable();
        if !unreadable.is_empty() {
            report.notes.push(format!(
                "could not read {} (looked under the package directory, the one cargo names in \
                 CARGO_MANIFEST_DIR and the working directory, and every directory above them): \
                 its steps are located by line and column without their code, and its objects \
                 are named by type",
                unreadable.join(", ")
            ));
        }
        Ok(Localized {
            report,
            tree,
            labeling,
            cdrs,
            runs: runtime::runs().since(runs_before),
        })
    }

    /// [`Test::assert_linearizable`]'s work.
    #[track_caller]
    pub(crate) fn assert_linearizable(&self) {
        let localized = self.localize_or_panic();
        let blind = !self.allow_uninstrumented
            && uninstrumented_threads(&localized.tree, self.plan.threads.len())
                .next()
                .is_some();
        let why = blind.then_some(
            "(failed: some thread touched no fgvt_sync type, so fgvt saw none of its races; if \
             that is expected, call `.allow_uninstrumented()` on the test)",
        );
        self.settle(&localized, None, why);
    }

    /// [`TestCore::localize`], or a panic saying why the test could not be explored.
    #[track_caller]
    pub(crate) fn localize_or_panic(&self) -> Localized {
        match self.localize() {
            Ok(localized) => localized,
            Err(e) => panic!("fgvt could not explore `{}`: {e}", self.name),
        }
    }

    /// Ends an assertion on `localized`: a passing test (linearizable, and no `why` it fails
    /// all the same) removes the reports an earlier failing run left; any other writes them
    /// and panics with the report, after `headline` and followed by `why`.
    pub(crate) fn settle(
        &self,
        localized: &Localized,
        headline: Option<String>,
        why: Option<&str>,
    ) {
        if localized.report.verdict == Verdict::Linearizable && why.is_none() {
            // The reports of an earlier failing run would describe a bug that is gone.
            self.remove_reports();
            return;
        }
        let written = self.write_reports(localized);
        let text = fgvt_reports::render_text(&localized.report, false);
        let headline = headline.map_or(String::new(), |h| format!("{h}\n\n"));
        let why = why.map_or(String::new(), |w| format!("\n{w}"));
        panic!("{headline}{text}\n{written}{why}");
    }

    /// With `FGVT_REPLAY=0,1,1` in the environment (a report's replay line sets it), prints
    /// that run of the test ([`Test::replay`]) to standard error; panics when the variable
    /// names no run of this test, as a replay line pasted into the wrong test would.
    #[track_caller]
    fn show_replay_from_environment(&self) {
        let Ok(schedule) = std::env::var(REPLAY_VARIABLE) else {
            return;
        };
        match parse_schedule(&schedule).and_then(|s| self.replay(&s)) {
            Ok(replayed) => eprintln!("{REPLAY_VARIABLE} {schedule}:\n{}", replayed.text),
            Err(e) => panic!("{REPLAY_VARIABLE}={schedule}: {e}"),
        }
    }

    /// [`Test::replay`]'s work.
    pub(crate) fn replay(&self, schedule: &[Choice]) -> Result<Replayed, String> {
        // Taken first, the run is in the tree whatever the limits cut.
        let options = ExploreOptions {
            first: Some(schedule.into()),
            ..self.explore_options()
        };
        let (tree, verdicts) =
            (self.explore_judged(&options, &mut ())).map_err(|e| e.to_string())?;
        let (steps, end) = tree.follow(&schedule).map_err(|at| {
            format!(
                "at step {at}, thread {} cannot move (each number is the thread that takes the \
                 next step)",
                schedule[at]
            )
        })?;
        let judged = tree.leaf(end).and_then(|_| verdicts.get(&end));
        let verdict = judged.map(|(outcome, why)| match (outcome, why) {
            (LeafOutcome::Pass, _) => "verdict: linearizable".to_string(),
            (LeafOutcome::Fail, Why::Panicked(message)) => {
                format!("verdict: fault (a thread panicked: {message})")
            }
            (LeafOutcome::Fail, Why::Raced(message) | Why::Memory(message, _)) => {
                format!("verdict: fault ({message})")
            }
            (LeafOutcome::Fail, why) => {
                // The run's own history: the leaf keeps its first path's.
                let run = tree
                    .leaf(end)
                    .map(|l| l.history.retraced(steps.iter().copied()));
                let explained = run.and_then(|run| self.explain_run(why, &run));
                let text = explained.map(|e| e.text).unwrap_or_default();
                format!("verdict: not linearizable\n{}", text.trim_end())
            }
            (LeafOutcome::Unknown, _) => {
                "verdict: unknown (a bound was hit, or the checker gave up)".to_string()
            }
        });
        let text = fgvt_reports::render_run_text(
            &tree,
            &steps,
            end,
            &sources::map(),
            verdict.as_deref(),
            false,
        );
        Ok(Replayed {
            text,
            fails: judged.is_some_and(|(outcome, _)| *outcome == LeafOutcome::Fail),
        })
    }

    /// The file name the reports of this test get under `target/fgvt/`, without extension.
    fn report_stem(&self) -> String {
        let keep = |c: char| c.is_alphanumeric() || c == '-' || c == '_';
        (self.name.chars())
            .map(|c| if keep(c) { c } else { '_' })
            .collect()
    }

    /// Removes the reports an earlier run of this test wrote, if any.
    fn remove_reports(&self) {
        let dir = target_dir().join("fgvt");
        let stem = self.report_stem();
        for ext in ["md", "json", "sarif", "svg"] {
            // Absent is the usual case; anything else leaves a stale file, which is harmless.
            let _ = std::fs::remove_file(dir.join(format!("{stem}.{ext}")));
        }
    }

    /// Writes the Markdown and JSON of `localized`'s report under `target/fgvt/` (and its
    /// tree as SVG with the `svg` feature); says where, or why not.
    fn write_reports(&self, localized: &Localized) -> String {
        let report = &localized.report;
        let dir = target_dir().join("fgvt");
        let stem = self.report_stem();
        let write = || -> std::io::Result<PathBuf> {
            std::fs::create_dir_all(&dir)?;
            let md = dir.join(format!("{stem}.md"));
            std::fs::write(&md, fgvt_reports::render_markdown(report))?;
            std::fs::write(
                dir.join(format!("{stem}.json")),
                fgvt_reports::render_json(report),
            )?;
            std::fs::write(
                dir.join(format!("{stem}.sarif")),
                fgvt_reports::render_sarif(report),
            )?;
            #[cfg(feature = "svg")]
            if let Ok(svg) = crate::picture::drawing(localized, crate::picture::Format::Svg) {
                std::fs::write(dir.join(format!("{stem}.svg")), svg)?;
            }
            Ok(md)
        };
        match write() {
            Ok(md) => format!(
                "(the report is written to {}, with its .json, .sarif{})",
                md.display(),
                if cfg!(feature = "svg") {
                    " and the tree's .svg"
                } else {
                    ""
                }
            ),
            Err(e) => format!("(could not write the reports under {}: {e})", dir.display()),
        }
    }
}

/// The test threads whose operations took no step on an instrumented object in any run
/// explored, only the local step an operation without accesses takes. A thread that took no
/// step at all is not one of them: a run cut short at its start (a limit) says nothing of it.
fn uninstrumented_threads(tree: &Tree, threads: usize) -> impl Iterator<Item = usize> + '_ {
    (0..threads).filter(|&thread| {
        let mut steps = tree.events.iter().filter(|e| e.thread == thread).peekable();
        steps.peek().is_some() && steps.all(|e| e.kind == EventKind::Local)
    })
}

/// What the report says of threads that touched no instrumented object, if there are any.
fn uninstrumented_note(tree: &Tree, threads: usize) -> Option<String> {
    let names: Vec<String> = uninstrumented_threads(tree, threads)
        .map(|t| format!("T{t}"))
        .collect();
    if names.is_empty() {
        return None;
    }
    let who = if names.len() == 1 {
        format!("{}'s operations", names[0])
    } else {
        format!("the operations of {}", names.join(", "))
    };
    Some(format!(
        "{who} touched no fgvt_sync type in any run: is the object using std's atomics or locks? \
         fgvt sees only fgvt_sync's types (`fgvt_sync::atomic`, `Mutex`, `RwLock`, `Shared`), so \
         it explored no race of these threads and a LINEARIZABLE verdict says nothing about them"
    ))
}

/// One execution of a [`model`](crate::model)'s `body`, as the engine's main task: the body
/// on the first lane, which may spawn threads on the others; the run is complete once every
/// thread has returned.
fn run_model(body: &runtime::Body) {
    runtime::concurrent(true);
    runtime::spawned::lanes_taken(0, true);
    let body = Arc::clone(body);
    let main = crate::thread::Builder::new()
        .name("main".to_string())
        .spawn_named(MODEL_OP, move || body());
    drop(main);
    runtime::spawned::join_every_lane();
    runtime::concurrent(false);
    if runtime::ended() || runtime::leaks::check() {
        return;
    }
    runtime::complete();
}

/// A model's body's operation, in histories and reports.
const MODEL_OP: &str = "main";

/// One execution of the plan, as the engine's main task: the object, `init`, the threads,
/// `final`.
fn run_plan<O: Object>(plan: &Arc<Plan>) {
    let Some(object) = guarded(O::new) else {
        return;
    };
    let object = Arc::new(object);
    for call in &plan.init {
        let Some(value) = run_call(&*object, call) else {
            return;
        };
        runtime::serial_op(INIT_LANE, call, &value);
    }
    runtime::concurrent(true);
    runtime::spawned::lanes_taken(plan.threads.len(), false);
    let handles: Vec<_> = (0..plan.threads.len())
        .map(|thread| {
            let object = Arc::clone(&object);
            let plan = Arc::clone(plan);
            engine::spawn(move || run_thread(&*object, thread, &plan.threads[thread]))
        })
        .collect();
    for handle in handles {
        engine::join(handle);
    }
    // Threads the operations spawned and left running end before `final`.
    runtime::spawned::join_every_lane();
    runtime::concurrent(false);
    if runtime::ended() {
        return;
    }
    for call in &plan.finals {
        let Some(value) = run_call(&*object, call) else {
            return;
        };
        runtime::serial_op(FINAL_LANE, call, &value);
    }
    runtime::complete();
}

/// Test thread `thread`, running its calls.
fn run_thread<O: Object>(object: &O, thread: usize, calls: &[Call]) {
    runtime::enter_thread(thread);
    for (index, call) in calls.iter().enumerate() {
        if runtime::ended() {
            return;
        }
        runtime::begin_op(thread, index, call);
        let Some(value) = run_call(object, call) else {
            return;
        };
        runtime::end_op(&value);
    }
}

/// Runs `call` on `object`: its result, or `None` once the execution has ended (the call
/// panicked or returned `Err`, both faults, or the execution was cancelled).
fn run_call<O: Object>(object: &O, call: &Call) -> Option<fgvt_tree::Value> {
    match guarded(|| object.call(call))? {
        Ok(value) => Some(value),
        Err(message) => {
            runtime::fault(message, None);
            None
        }
    }
}

/// Every leaf's outcome, and why it failed, by node.
type Verdicts = HashMap<NodeId, (LeafOutcome, Why), foldhash::fast::RandomState>;

/// The share of a test's timeout its first exploration may take: what is left goes to a
/// scout and to exploring again along its run (as `fgvt localize` shares it).
const FIRST_SHARE: f64 = 0.8;

/// The share of the timeout by which the scout must have ended.
const SCOUT_SHARE: f64 = 0.9;

/// The tree of a test whose serial part failed with `fault`: every run ends there.
fn fault_tree(fault: Fault) -> Tree {
    let mut builder = TreeBuilder::new();
    let root = builder.leaf(Leaf::fault(fgvt_tree::History::new(), fault));
    let facts = Exploration {
        partial: None,
        distinct_states: 1,
        elapsed: std::time::Duration::ZERO,
    };
    builder.finish(root, facts)
}

/// Explores `program` with `options`, judging each leaf against `spec` as it is made (each
/// distinct history once; the first failing leaf is told to `progress` at once): the tree and
/// every leaf's verdict.
fn explore_judged<S: Spec>(
    program: &Reexecuted,
    options: &ExploreOptions,
    progress: &mut dyn Progress,
    spec: S,
    reduce: Option<Judging>,
) -> Result<(Tree, Verdicts), Fault> {
    // Most failing leaves are only counted: a report explains the runs it shows.
    let checker = VerdictCache::new(
        spec,
        CheckOptions {
            explain: false,
            ..CheckOptions::default()
        },
    );
    let mut fails = failing_leaf(program, &checker);
    let deadline = options.timeout.map(|t| Instant::now() + t);
    let tree = match reduced_first(program, options, reduce, &mut fails)? {
        Some(tree) => tree,
        None => {
            let left = options.clone().until(deadline);
            fgvt_tree::parallel::explore_judging(program, &left, progress, &mut fails)?
        }
    };
    // Looked up in the checker's cache: no history is checked twice.
    let verdicts = (tree.leaves())
        .map(|(node, leaf, _)| (node, judge_leaf(&checker, leaf)))
        .collect();
    Ok((tree, verdicts))
}

/// The share of an exploration's timeout that the partial-order reduced search may take
/// before the full exploration, when it cannot tell.
const REDUCED_SHARE: f64 = 0.5;

/// The most nodes the partial-order reduced search opens before it hands over to the full
/// exploration, which merges equal states and may finish where it does not: a fifth of the
/// default state limit, some seconds of real code. The correct 4-thread Treiber stack of
/// `benches/genmc` passes in 87,856 (13,992 runs, GenMC's count of its executions), the second
/// model of concurrent-queue's loom test `spsc_force` in 84,946.
const REDUCED_MAX_NODES: usize = 200_000;

/// When the test asks for it (`reduce`, with what its leaves' verdicts read: a model's are
/// judged on their endings alone, [`Judging::Endings`]) and no run is to be taken first (a
/// replay): the tree of the runs of a partial-order reduced search ([`fgvt_tree::reduced`]),
/// when every run passes. Under a preemption bound it is bounded partial-order reduction, whose
/// runs reach every outcome of the bounded full exploration (but for the one exception under
/// weak memory that [`fgvt_tree::reduced`] says).
///
/// That search runs one execution per class of equivalent ones. When it finds a failing run,
/// or cannot tell within half the timeout and [`REDUCED_MAX_NODES`], `None`: the caller
/// explores in full, which labels the tree the report draws. On concurrent-queue's loom test
/// `spsc` (`LOOM_MAX_PREEMPTIONS=2`) its three models pass in 1,524, 3,645 and 1,609
/// executions, where the bounded full exploration took 519 s.
fn reduced_first(
    program: &Reexecuted,
    options: &ExploreOptions,
    reduce: Option<Judging>,
    fails: &mut dyn FnMut(&Leaf) -> bool,
) -> Result<Option<Tree>, Fault> {
    let Some(judging) = reduce else {
        return Ok(None);
    };
    if options.first.is_some() {
        return Ok(None);
    }
    let reduced = ExploreOptions {
        timeout: (options.timeout).map(|t| t.mul_f64(REDUCED_SHARE)),
        max_states: Some(
            options
                .max_states
                .map_or(REDUCED_MAX_NODES, |m| m.min(REDUCED_MAX_NODES)),
        ),
        ..options.clone()
    };
    // The search compares a state only with those on its run's path (see `Identity`).
    program.set_identity(Identity::OnPath);
    let searched = fgvt_tree::ahead::reduced_search(program, &reduced, judging, fails);
    program.set_identity(Identity::Full);
    Ok(match searched? {
        Reduction::Passed { tree, .. } => Some(tree),
        Reduction::Failed { .. } | Reduction::Undecided(_) => None,
    })
}

/// The memory budget of a test that sets none (see [`Test::max_memory`]): 60% of the
/// machine's RAM, probed by the process's resident size, where the system tells it.
/// Worked out once: every exploration of a test (its reduced search, the fix search's
/// trials) asks.
fn resident_budget() -> Option<MemoryBudget> {
    static BYTES: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    let bytes = BYTES.get_or_init(|| {
        fgvt_tree::resident::read_resident()?;
        Some(fgvt_tree::resident::default_budget())
    });
    Some(MemoryBudget {
        bytes: (*bytes)?,
        used: fgvt_tree::resident::resident,
    })
}

/// Tells of a test's first failing run on stderr once the run has lasted a moment
/// ([`fgvt_reports::early`]), with the command that replays it.
struct Telling<'a> {
    notice: EarlyNotice,
    /// The spinner of a long exploration, on a terminal: drawn on it directly, so `cargo
    /// test`'s capture of the test's output does not hide it.
    spinner: Spinner,
    test_file: &'a str,
    replay: fgvt_reports::Replay<'a>,
}

impl Progress for Telling<'_> {
    fn tick(&mut self, nodes: u64) {
        self.spinner.tick(nodes);
    }

    fn failing_run(&mut self, schedule: &[Choice]) {
        let replay = self.replay.command(self.test_file, schedule);
        let line = fgvt_reports::early::failing_run_line(self.notice.elapsed(), &replay);
        // Above the spinner when it shows (seen even while `cargo test` captures output).
        if !self.spinner.println(&line) {
            self.notice.tell(line, |line| eprintln!("{line}"));
        }
    }
}

/// Judges every leaf of `tree` against `spec`.
fn judge<S: Spec>(tree: &Tree, spec: S) -> Verdicts {
    // Many leaves of an unfolded tree share a history: each is checked once.
    let checker = VerdictCache::new(spec, CheckOptions::default());
    tree.leaves()
        .map(|(node, leaf, _)| (node, judge_leaf(&checker, leaf)))
        .collect()
}

/// One leaf's outcome against the spec of `checker`, and why it failed. A leaf's explanation
/// is written only if a report shows it: most failing leaves are only counted.
fn judge_leaf<S: Spec>(checker: &VerdictCache<S>, leaf: &Leaf) -> (LeafOutcome, Why) {
    match leaf.kind {
        LeafKind::Bounded => (LeafOutcome::Unknown, Why::Nothing),
        LeafKind::Fault => match &leaf.fault {
            Some(fault) if fault.race.is_some() => {
                (LeafOutcome::Fail, Why::Raced(fault.message.clone()))
            }
            Some(fault) if fault.message.starts_with(crate::runtime::USE_AFTER_FREE) => {
                let why = Why::Memory(fault.message.clone(), "use_after_free");
                (LeafOutcome::Fail, why)
            }
            Some(fault) if fault.message.starts_with(crate::runtime::LEAK) => (
                LeafOutcome::Fail,
                Why::Memory(fault.message.clone(), "leak"),
            ),
            fault => {
                let message = fault.as_ref().map_or("", |f| f.message.as_str());
                (LeafOutcome::Fail, Why::Panicked(message.to_string()))
            }
        },
        LeafKind::Complete | LeafKind::Stuck => match checker.check_shared(&leaf.history) {
            Ok(outcome) => match &outcome.verdict {
                CheckVerdict::Linearizable { .. } => (LeafOutcome::Pass, Why::Nothing),
                CheckVerdict::NotLinearizable(_) => {
                    (LeafOutcome::Fail, Why::NotLinearizable(outcome))
                }
                CheckVerdict::Unknown => (LeafOutcome::Unknown, Why::Nothing),
            },
            Err(_) => (LeafOutcome::Unknown, Why::Nothing),
        },
    }
}

/// A failing run of `program` with few preemptions ([`fgvt_tree::scout`]), judged against
/// `spec`, if there is one. A fault of the serial part is no run.
fn scout_with<S: Spec>(
    program: &Reexecuted,
    options: &ExploreOptions,
    spec: S,
) -> Option<Vec<Choice>> {
    let checker = VerdictCache::new(spec, CheckOptions::default());
    let mut fails = failing_leaf(program, &checker);
    fgvt_tree::scout(program, options, &mut fails)
        .ok()
        .flatten()
}

/// The spec a test's runs are checked against.
#[derive(Clone, Copy, Debug)]
pub(crate) enum SpecChoice {
    /// `self`: the object's own serial runs on a fresh object (Line-Up's).
    Serial,
    /// One of the checker's built-in specs (`queue`, `stack`, `set`, …).
    Builtin(BuiltinSpec),
    /// A sequential Rust type.
    Sequential(SpecType),
}

/// A [`Sequential`] spec type as a value, so that a program can list the types its test files
/// may name (see [`Test::try_spec_among`]).
#[derive(Clone, Copy, Debug)]
pub struct SpecType {
    name: fn() -> String,
    explore: ExploreJudged,
    scout: fn(&Reexecuted, &ExploreOptions) -> Option<Vec<Choice>>,
    search: fn(&Reexecuted, &ExploreOptions) -> Option<Search>,
    check: fn(&fgvt_tree::History) -> Result<CheckOutcome, fgvt_checker::CheckError>,
}

/// [`explore_judged`] against one spec type.
type ExploreJudged = fn(
    &Reexecuted,
    &ExploreOptions,
    &mut dyn Progress,
    Option<Judging>,
) -> Result<(Tree, Verdicts), Fault>;

impl SpecType {
    /// The spec type `S`.
    pub fn of<S: Sequential>() -> Self {
        SpecType {
            name: short_type_name::<S>,
            explore: |program, options, progress, reduce| {
                let spec = SequentialSpec::<S>::new();
                explore_judged(program, options, progress, spec, reduce)
            },
            scout: |program, options| scout_with(program, options, SequentialSpec::<S>::new()),
            search: |program, options| search_with(program, options, SequentialSpec::<S>::new()),
            check: |history| {
                let spec = SequentialSpec::<S>::new();
                fgvt_checker::check(&spec, history, &CheckOptions::default())
            },
        }
    }

    /// Its name in test files and reports: the type's name without its module path.
    pub fn name(&self) -> String {
        (self.name)()
    }
}

impl SpecChoice {
    /// The spec named `name`: `self`, one of the sequential `types` (by its type name) or a
    /// built-in one; else which names there are.
    pub(crate) fn named(name: Option<&str>, types: &[SpecType]) -> Result<SpecChoice, String> {
        let name = match name {
            None | Some("self") => return Ok(SpecChoice::Serial),
            Some(name) => name,
        };
        if let Some(found) = types.iter().find(|t| t.name() == name) {
            return Ok(SpecChoice::Sequential(*found));
        }
        builtin(name).map(SpecChoice::Builtin).ok_or_else(|| {
            let mut known: Vec<String> = types.iter().map(SpecType::name).collect();
            known.extend(BUILTIN_NAMES.iter().map(|n| n.to_string()));
            format!(
                "unknown spec `{name}`: use \"self\" or one of {}",
                known.join(", ")
            )
        })
    }

    /// The checker's outcome on `history` against this spec (`serial`: the object's own serial
    /// runs, for `self`), with the whole explanation of a violation: for a run a report shows,
    /// where judging a tree's leaves explains none.
    fn check(
        self,
        serial: SerialRun,
        history: &fgvt_tree::History,
    ) -> Result<CheckOutcome, fgvt_checker::CheckError> {
        let options = CheckOptions::default();
        match self {
            SpecChoice::Serial => fgvt_checker::check(&SelfSpec::new(serial), history, &options),
            SpecChoice::Builtin(spec) => fgvt_checker::check(&spec, history, &options),
            SpecChoice::Sequential(spec) => (spec.check)(history),
        }
    }

    /// Its name in reports and test files.
    fn name(self) -> String {
        match self {
            SpecChoice::Serial => "self".to_string(),
            SpecChoice::Builtin(spec) => spec.name(),
            SpecChoice::Sequential(spec) => spec.name(),
        }
    }
}

/// Why a leaf failed, kept as found: its text is written only for the leaves a report shows.
enum Why {
    /// The leaf passed, or its verdict is unknown.
    Nothing,
    /// A thread panicked (the object's operation, or a model's thread), with this message.
    Panicked(String),
    /// The run met a data race, which this message describes.
    Raced(String),
    /// A fault of memory fgvt found (this message): a use after free, or a leak (`kind`, the
    /// key the report's JSON sets).
    Memory(String, &'static str),
    /// The checker's outcome, a non-linearizable verdict with its explanation.
    NotLinearizable(Arc<CheckOutcome>),
}

impl Why {
    /// The explanation a report shows for the leaf, with the same JSON as a model's.
    fn explanation(&self) -> Option<Explanation> {
        match self {
            Why::Nothing => None,
            Why::Panicked(message) => {
                let text = format!("a thread panicked: {message}");
                Some(Explanation {
                    headline: text.clone(),
                    text,
                    json: serde_json::json!({ "fault": message }),
                })
            }
            Why::Raced(message) => Some(Explanation {
                headline: message.clone(),
                text: message.clone(),
                json: serde_json::json!({ "fault": message, "data_race": true }),
            }),
            Why::Memory(message, kind) => Some(Explanation {
                headline: message.clone(),
                text: message.clone(),
                json: serde_json::json!({ "fault": message, *kind: true }),
            }),
            Why::NotLinearizable(outcome) => match &outcome.verdict {
                CheckVerdict::NotLinearizable(e) => {
                    // The report's heading says it is not linearizable: the text goes on.
                    Some(Explanation::told(e.headline(), e.details().to_string(), e))
                }
                _ => None,
            },
        }
    }
}

/// Calls written in a test, or which one does not parse and why.
pub(crate) fn parse_all(calls: &[impl AsRef<str>]) -> Result<Vec<Call>, String> {
    calls
        .iter()
        .map(AsRef::as_ref)
        .map(|text| {
            fgvt_tree::parse_call(text).map_err(|e| {
                format!(
                    "`{text}` is not a call (at byte {}): {}",
                    e.offset, e.message
                )
            })
        })
        .collect()
}

/// Cargo's target directory: `CARGO_TARGET_DIR`, or `target` beside the workspace's
/// `Cargo.lock`, looked for from the current directory up.
fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let here = std::env::current_dir().unwrap_or_default();
    here.ancestors()
        .find(|d| d.join("Cargo.lock").is_file())
        .unwrap_or(&here)
        .join("target")
}
