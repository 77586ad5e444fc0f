//! fgvt for real Rust code: write the object with `fgvt_sync`'s atomics, cells and locks, name
//! its operations, and fgvt explores every interleaving of a small test, checks every run for
//! linearizability and reports the races that decide it, quoting the lines of your `.rs` files.
//!
//! The types are drop-in for `std::sync`'s where the signatures allow: swap
//! `use std::sync::{Mutex, Condvar}` for `use fgvt_sync::{Mutex, Condvar}` and
//! `std::sync::atomic` for [`fgvt_sync::atomic`](atomic). [`Mutex`] and [`RwLock`] poison as
//! `std`'s do, [`Condvar`] waits and notifies, plain memory (a lock's data, a node's fields) is
//! a [`cell::UnsafeCell`] or [`cell::Cell`] with loom's API, whose data races fgvt reports, and
//! the report types ([`Verdict`], [`LocalizeReport`], and the rest in [`report`]) come with this
//! crate.
//!
//! ```
//! use fgvt_sync::atomic::{AtomicI64, Ordering};
//! use fgvt_sync::Test;
//!
//! /// A counter whose increment is a read then a write: it loses updates.
//! struct Counter(AtomicI64);
//!
//! /// The operations a test calls, `inc()` and `get()`: the `pub` methods.
//! #[fgvt_sync::operations]
//! impl Counter {
//!     fn new() -> Self {
//!         Counter(AtomicI64::new(0))
//!     }
//!
//!     pub fn inc(&self) {
//!         let v = self.0.load(Ordering::SeqCst);
//!         self.0.store(v + 1, Ordering::SeqCst);
//!     }
//!
//!     pub fn get(&self) -> i64 {
//!         self.0.load(Ordering::SeqCst)
//!     }
//! }
//!
//! let test = Test::<Counter>::new("lost_update")
//!     .thread(&["inc()"])
//!     .thread(&["inc()"])
//!     .finally(&["get()"]);
//! let found = test.localize().unwrap();
//! assert_eq!(found.report.verdict, fgvt_sync::Verdict::NotLinearizable);
//! // The same tree and race as the model of this counter: T1 reading before T0 writes decides.
//! assert_eq!((found.report.tree.nodes, found.report.tree.leaves), (19, 6));
//! assert_eq!(found.report.cdrs[0].pattern, "G");
//! ```
//!
//! [`operations`](macro@operations) writes the object's [`Object`] implementation from the
//! impl block (and [`sequential`](macro@sequential) a sequential spec's [`Sequential`]); an
//! `impl Object` written by hand, as [`Object`] shows, dispatches what the attribute cannot
//! express.
//!
//! # A test, step by step
//!
//! The guide (`docs/book` in fgvt's repository) has a chapter on each of these; here is the
//! shape of each, as code that runs.
//!
//! **Operations** are the `pub` methods taking `&self` of an [`operations`](macro@operations)
//! block: `#[op(name = "…")]` renames one, `#[skip]` leaves one out, `#[new]` marks the
//! constructor (else `fn new()`, else `Default`). Arguments are integers, `bool`, tuples and
//! `Option`s; a `Result` result shows `Ok(v)` as `v` and `Err(e)` as `"Err(…)"`:
//!
//! ```
//! use fgvt_sync::atomic::{AtomicUsize, Ordering::SeqCst};
//! use fgvt_sync::{Test, Verdict};
//!
//! struct Slots(AtomicUsize);
//!
//! #[fgvt_sync::operations]
//! impl Slots {
//!     #[new]
//!     fn two() -> Self {
//!         Slots(AtomicUsize::new(2))
//!     }
//!
//!     /// Claims a slot with a check, then a store: two threads can claim the last one.
//!     #[op(name = "claim")]
//!     pub fn try_claim(&self) -> Result<usize, ()> {
//!         let left = self.0.load(SeqCst);
//!         if left == 0 {
//!             return Err(());
//!         }
//!         self.0.store(left - 1, SeqCst);
//!         Ok(left - 1)
//!     }
//! }
//!
//! let found = Test::<Slots>::new("slots")
//!     .thread(&["claim()", "claim()"])
//!     .thread(&["claim()"])
//!     .localize()
//!     .unwrap();
//! assert_eq!(found.report.verdict, Verdict::NotLinearizable);
//! ```
//!
//! **Specs**: by default a run is checked against the object's own serial runs; `.spec("queue")`
//! names a built-in spec, and `.spec_type::<S>()` a sequential type written with
//! [`sequential`](macro@sequential):
//!
//! ```
//! use fgvt_sync::{Mutex, Test, Verdict};
//!
//! #[derive(Default)]
//! struct Stack(Mutex<Vec<i64>>);
//!
//! #[fgvt_sync::operations]
//! impl Stack {
//!     pub fn push(&self, v: i64) {
//!         self.0.lock().unwrap().push(v);
//!     }
//!
//!     pub fn pop(&self) -> Option<i64> {
//!         self.0.lock().unwrap().pop()
//!     }
//! }
//!
//! #[derive(Clone, Default, PartialEq, Eq, Hash)]
//! struct SeqStack(Vec<i64>);
//!
//! #[fgvt_sync::sequential]
//! impl SeqStack {
//!     pub fn push(&mut self, v: i64) {
//!         self.0.push(v);
//!     }
//!
//!     pub fn pop(&mut self) -> Option<i64> {
//!         self.0.pop()
//!     }
//! }
//!
//! let threads = [["push(1)", "pop()"], ["push(2)", "pop()"]];
//! let test = |t: Test<Stack>| t.thread(&threads[0]).thread(&threads[1]);
//! let built_in = test(Test::new("stack").spec("stack")).localize().unwrap();
//! let typed = test(Test::new("stack").spec_type::<SeqStack>()).localize().unwrap();
//! assert_eq!(built_in.report.verdict, Verdict::Linearizable);
//! assert_eq!(typed.report.verdict, Verdict::Linearizable);
//! ```
//!
//! **Waiting loops** call [`hint::spin_loop`] once per turn, where `std::hint::spin_loop`
//! would go: a turn that saw nothing new is then a loop edge of the explored graph, and the
//! test is complete although the loop could spin forever:
//!
//! ```
//! use fgvt_sync::atomic::{AtomicBool, Ordering::{Acquire, Relaxed, Release}};
//! use fgvt_sync::cell::UnsafeCell;
//! use fgvt_sync::{Test, Verdict};
//!
//! #[derive(Default)]
//! struct SpinLocked {
//!     locked: AtomicBool,
//!     count: UnsafeCell<i64>,
//! }
//!
//! // SAFETY: `count` is accessed only while `locked` is held.
//! unsafe impl Sync for SpinLocked {}
//!
//! #[fgvt_sync::operations]
//! impl SpinLocked {
//!     pub fn inc(&self) -> i64 {
//!         while self.locked.compare_exchange(false, true, Acquire, Relaxed).is_err() {
//!             fgvt_sync::hint::spin_loop();
//!         }
//!         let v = self.count.with_mut(|p| unsafe { *p += 1; *p });
//!         self.locked.store(false, Release);
//!         v
//!     }
//! }
//!
//! let found = Test::<SpinLocked>::new("spin").thread(&["inc()"]).thread(&["inc()"]).localize();
//! let report = found.unwrap().report;
//! assert_eq!(report.verdict, Verdict::Linearizable);
//! assert_eq!(report.tree.bounded_leaves, 0);
//! ```
//!
//! **Weak memory**: the orderings the code declares are the C++20 / Rust model's. A failing
//! test's report says whether it passes with every access `SeqCst`, and which change of
//! orderings fixes it, checked by exploring the test again ([`report::MemoryReport`]):
//!
//! ```
//! use fgvt_sync::atomic::{AtomicI64, Ordering::Relaxed};
//! use fgvt_sync::{Test, Verdict};
//!
//! /// Two cells written in order; a reader that sees the second may miss the first.
//! #[derive(Default)]
//! struct Pair {
//!     first: AtomicI64,
//!     second: AtomicI64,
//! }
//!
//! #[fgvt_sync::operations]
//! impl Pair {
//!     pub fn write(&self) {
//!         self.first.store(1, Relaxed);
//!         self.second.store(1, Relaxed);
//!     }
//!
//!     /// The first cell, once the second is written.
//!     pub fn read(&self) -> Option<i64> {
//!         (self.second.load(Relaxed) == 1).then(|| self.first.load(Relaxed))
//!     }
//! }
//!
//! let found = Test::<Pair>::new("pair").thread(&["write()"]).thread(&["read()"]).localize();
//! let report = found.unwrap().report;
//! assert_eq!(report.verdict, Verdict::NotLinearizable);
//! let memory = report.memory.unwrap();
//! assert_eq!(memory.passes_sequentially_consistent, Some(true));
//! // The second cell's store Release and its load Acquire.
//! let mut fix: Vec<&str> = memory.fix.iter().map(|change| change.to.as_str()).collect();
//! fix.sort();
//! assert_eq!(fix, ["Acquire", "Release"]);
//! ```
//!
//! **Your object in `src/`**: the crate imports its atomics, locks and hints from one module,
//! `std`'s without a feature and `fgvt_sync`'s with it (`fgvt = ["dep:fgvt-sync"]`), and puts
//! the attribute behind the same feature:
//!
//! ```
//! // src/sync.rs
//! #[cfg(feature = "fgvt")]
//! pub use fgvt_sync::{atomic, hint, Mutex};
//! #[cfg(not(feature = "fgvt"))]
//! pub use std::{hint, sync::{atomic, Mutex}};
//!
//! // src/lib.rs
//! use sync::atomic::{AtomicBool, Ordering};
//!
//! pub struct Flag(AtomicBool);
//!
//! #[cfg_attr(feature = "fgvt", fgvt_sync::operations)]
//! impl Flag {
//!     pub fn new() -> Self {
//!         Flag(AtomicBool::new(false))
//!     }
//!
//!     pub fn raise(&self) -> bool {
//!         !self.0.swap(true, Ordering::AcqRel)
//!     }
//! }
//! # mod sync { pub use std::{hint, sync::{atomic, Mutex}}; }
//! # assert!(Flag::new().raise());
//! ```
//!
//! # Models: a closure that spawns its own threads
//!
//! Where an object's operations are not the unit to test (a channel's two ends, a thread
//! that parks until another unparks it), [`model`] explores a closure as loom does: it spawns
//! threads with [`thread::spawn`], joins them and asserts. A run fails on a panic in any
//! thread, a deadlock or a data race, and the report localizes the races that decide it as
//! for any test; [`Model`] sets its limits (a preemption bound among them). The `fgvt-loom`
//! crate is loom's API on this, so that loom tests run unchanged.
//!
//! ```
//! use fgvt_sync::atomic::{AtomicBool, Ordering::{Acquire, Release}};
//! use std::sync::Arc;
//!
//! fgvt_sync::model(|| {
//!     let ready = Arc::new(AtomicBool::new(false));
//!     let waiter = {
//!         let ready = Arc::clone(&ready);
//!         fgvt_sync::thread::spawn(move || {
//!             while !ready.load(Acquire) {
//!                 fgvt_sync::thread::park();
//!             }
//!         })
//!     };
//!     ready.store(true, Release);
//!     waiter.thread().unpark();
//!     waiter.join().unwrap();
//! });
//! ```
//!
//! # How it runs
//!
//! Each execution runs the object from scratch on fgvt's engine (tasks are coroutines on one
//! OS thread, `engine.rs`), with fgvt's scheduler choosing every step (`runtime.rs`). Every
//! access of an instrumented type is one step: it registers what it is about to do, waits for
//! its turn, then acts. The tree is the state graph the models get (`fgvt_tree::explore`): a
//! state is a schedule, re-executed from the start to take a step from it, and told apart by a
//! fingerprint of what every access saw and left (`fingerprint.rs`), so equal states reached
//! by different schedules are explored once and a waiting loop marked with
//! [`hint::spin_loop`] is a loop edge, not an endless path.
//!
//! # Memory model and limits
//!
//! A test whose accesses are all `SeqCst` runs sequentially consistent. One where some access
//! declares a weaker `Ordering` is explored again under the C++20 / Rust memory model: a load may
//! read an older store, a store go before a later one, and what a `Release` store or fence
//! publishes reaches only an `Acquire` that reads it; each such choice is a branch of the tree,
//! operations are ordered by happens-before rather than real time, and a failing test's report
//! says whether it passes with every access `SeqCst` and which change of orderings fixes it
//! ([`Test::memory`], [`Test::max_stale`]). A `thread_local!` is shared by every test thread (they are tasks of one OS
//! thread). Code must be deterministic given the schedule: no clocks, no randomness, no state
//! kept between executions; an operation keeps nothing for the next but what it stores in
//! instrumented objects, and plain data shared between threads is written before it is
//! published through an instrumented object (what makes merging states sound: see
//! `fingerprint.rs`).
//!
//! Plain memory is checked for **data races**: two accesses to one
//! [`UnsafeCell`](cell::UnsafeCell) (or [`Cell`](cell::Cell)) by different threads, at least one
//! a write, that happens-before does not order, are undefined behaviour in Rust, and end the run
//! in a fault leaf that names both lines ("data race on data#0 (undefined behaviour)"), labeled
//! and localized like any failing leaf, with the change of orderings that orders them under weak
//! memory. That holds sequentially consistent too (no lock, no atomic store read by a load
//! between the two). A cell, atomic or lock a test thread makes during an operation is written
//! by its making; objects made by `new` and `init` happen before every test thread. A cell's
//! accesses are not steps of the tree: they happen within the step before them, as compiled
//! code's plain accesses do. [`Shared`] is the other kind of plain field: raced on by design,
//! every access a step, checked for data races only when the test asks ([`Test::races`]).
//!
//! A panic in the object is a *fault* leaf (unless the object catches it: a
//! lock held by the panicking thread is then poisoned, as with `std`); all threads blocked on
//! locks or condition variables is a *stuck* leaf, which says where each holder took its lock
//! and which condition variable each waiter waits on. A `loop` or `while` that calls no hint
//! fgvt sees (`std::hint::spin_loop`, or none) is taken for a retry loop when its turn writes
//! nothing ([`Test::implied_hints`]); an operation that spins in a loop not taken (the same
//! turn four times, seeing the same values) is a *bounded* leaf, whose note names the loop's
//! line ([`Test::cut_bare_spins`]).
//!
//! `atomic::fence` and `compiler_fence` are not steps (a fence has no choice to make);
//! [`Condvar::notify_one`] wakes the thread that has waited longest, and no wait wakes up
//! spuriously. Constructors are not `const`: a `static` instrumented object needs a
//! `LazyLock`.

#![warn(missing_docs)]

mod arc;
pub mod atomic;
mod cargo_test;
pub mod cell;
mod condvar;
mod engine;
mod fingerprint;
mod fix;
pub mod hint;
mod identity;
mod localized;
mod lock;
mod loops;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod main_entry;
mod marked;
mod mutex;
mod object;
mod object_id;
#[cfg(feature = "svg")]
mod picture;
mod program;
mod races;
mod runtime;
mod rwlock;
mod shared;
mod shown;
mod silent;
mod sources;
mod spec;
mod test;
pub mod thread;
mod unseen;
mod weak;

pub use arc::Arc;
pub use condvar::Condvar;
pub use fgvt_reports::{LocalizeReport, Verdict};
/// A global allocator for test binaries that explore with several jobs ([`Test::jobs`]):
/// mimalloc, which frees a block another thread allocated without taking a lock.
///
/// With several jobs the workers make the steps of states (their schedules and events) and
/// the search frees them once it is done with the states. glibc's allocator takes the lock of
/// the worker's arena for each such free, and the two threads wait for each other: on 2
/// cores, 2 jobs explored a 3-thread Treiber stack 1.28–1.59× as fast as 1 with the system's
/// allocator and 1.59–1.85× with this one, over several runs (`benches/jobs` in fgvt's
/// repository; the figures are in its guide's performance chapter). `fgvt_sync::main!`
/// installs it, counted for `--max-memory`; a test binary opts in with one static, in the
/// file of its tests (a binary has one global allocator):
///
/// ```
/// #[global_allocator]
/// static ALLOCATOR: fgvt_sync::Allocator = fgvt_sync::Allocator;
/// # fn main() {
/// #     let v: Vec<u64> = (0..1000).collect();
/// #     assert_eq!(v.iter().sum::<u64>(), 499_500);
/// # }
/// ```
pub use mimalloc::MiMalloc as Allocator;
// The attributes' documentation is here, on the re-exports, where users meet them: this crate's
// doctests run its examples, which the proc-macro crate's own would do only by building
// fgvt-sync a second time, as a dependency of a host crate.
#[cfg(feature = "macros")]
/// Writes `impl fgvt_sync::Object` for the type of an impl block (inherent, or of a trait),
/// from its methods.
///
/// ```
/// use fgvt_sync::atomic::{AtomicI64, Ordering::SeqCst};
///
/// struct Counter(AtomicI64);
///
/// #[fgvt_sync::operations]
/// impl Counter {
///     fn new() -> Self {
///         Counter(AtomicI64::new(0))
///     }
///
///     /// `add(n)` in a test.
///     pub fn add(&self, n: i64) -> i64 {
///         self.0.fetch_add(n, SeqCst)
///     }
///
///     /// `get()`.
///     pub fn get(&self) -> i64 {
///         self.0.load(SeqCst)
///     }
/// }
///
/// use fgvt_sync::{Call, Object, Value};
/// let counter = Counter::new();
/// assert_eq!(counter.call(&Call::new("add", vec![Value::Int(2)])), Ok(Value::Int(0)));
/// assert_eq!(counter.call(&Call::new("get", vec![])), Ok(Value::Int(2)));
/// let typo = counter.call(&Call::new("gett", vec![])).unwrap_err();
/// assert!(typo.ends_with("did you mean `get()`?"), "{typo}");
/// ```
///
/// **Operations.** Every `pub` method (any `pub(…)` too) that takes `&self` is an operation,
/// named after the method; `#[op(name = "poll")]` names it otherwise, `#[op]` makes a private
/// method one, and `#[skip]` leaves a method out. Two operations may share a name if they take
/// different numbers of arguments. Methods without a receiver (constructors, helpers) are not
/// operations.
///
/// **On a trait impl** every method that takes `&self` is an operation (a trait's methods are
/// as public as the trait), called through the trait, which need not be in scope where the
/// object is tested; the fresh object is made by a constructor of the trait marked `#[new]`,
/// else by `Default::default()` (the attribute sees only the block, not the type's inherent
/// `new()`):
///
/// ```
/// use fgvt_sync::atomic::{AtomicI64, Ordering::SeqCst};
///
/// pub trait Register {
///     fn write(&self, v: i64);
///     fn read(&self) -> i64;
/// }
///
/// #[derive(Default)]
/// struct Cell(AtomicI64);
///
/// #[fgvt_sync::operations]
/// impl Register for Cell {
///     fn write(&self, v: i64) {
///         self.0.store(v, SeqCst)
///     }
///
///     fn read(&self) -> i64 {
///         self.0.load(SeqCst)
///     }
/// }
///
/// use fgvt_sync::{Call, Object, Value};
/// let cell = <Cell as Object>::new();
/// assert_eq!(cell.call(&Call::new("write", vec![Value::Int(3)])), Ok(Value::Unit));
/// assert_eq!(cell.call(&Call::new("read", vec![])), Ok(Value::Int(3)));
/// ```
///
/// **Arguments** are read from the call's values: every integer type (`i8` to `i128`, `u8`
/// to `u128`, `isize`, `usize`; a value out of the type's range is an error naming the
/// range), `bool`, tuples of these, `Option<T>` (`null` is `None`), and `fgvt_sync::Value`
/// itself, as it is.
///
/// **Results** go through `fgvt_sync::IntoValue` (`()`, `bool`, integers up to 64 bits,
/// `Option`, pairs and triples, `Value`). A method that returns a `Result` has its `Ok` shown
/// as the value inside and its `Err(e)` as the string `"Err(…)"` of `e`'s `Debug` (`E:
/// Debug`): an error the operation returns is one of its results, which the spec must give
/// too, never a mistake in the test.
///
/// **Mistakes in the test.** A call of an operation the object does not have, or with a wrong
/// number of arguments, returns `fgvt_sync::unknown(call)`'s error followed by the likely
/// operation (``did you mean `get()`?``, or ``the object has `add(n)` ``); an argument of the
/// wrong type returns the conversion's error (`expected an integer, got true`). `Test` panics
/// naming the call, and a `main!` program exits 2, as for a hand-written `Object`.
///
/// **The fresh object** is made by the method marked `#[new]`, else by an associated `fn
/// new()` without arguments in the block, else by `Default::default()`.
///
/// **Rejected**, with an error at the method: an operation that takes `&mut self` or `self`
/// (threads share the object: use interior mutability, through fgvt_sync's atomics, locks or
/// `Shared`), a generic operation, an `async` or `unsafe` one, and an argument of a type not
/// listed above. `#[skip]` such a method and write `impl Object` by hand for dispatch the
/// attribute cannot express.
///
/// The generated code names the runtime `::fgvt_sync`; a crate that renames the dependency
/// says so with `#[operations(crate = my_name)]`. Under `#[cfg_attr(feature = "…",
/// fgvt_sync::operations)]`, the helper attributes (`#[op]`, `#[skip]`, `#[new]`) need the
/// same `cfg_attr`, since nothing removes them when the feature is off.
pub use fgvt_sync_macros::operations;
#[cfg(feature = "macros")]
/// Writes `impl fgvt_sync::Sequential` for the type of an impl block (inherent, or of a
/// trait), from its methods: a sequential spec's dispatch, as [`macro@operations`] writes an object's.
///
/// ```
/// #[derive(Clone, PartialEq, Eq, Hash, Default)]
/// struct SeqCounter(i64);
///
/// #[fgvt_sync::sequential]
/// impl SeqCounter {
///     pub fn add(&mut self, n: i64) -> i64 {
///         self.0 += n;
///         self.0 - n
///     }
///
///     pub fn get(&self) -> i64 {
///         self.0
///     }
/// }
///
/// use fgvt_sync::{Call, Sequential, Value};
/// let mut spec = <SeqCounter as Sequential>::new();
/// assert_eq!(spec.call(&Call::new("add", vec![Value::Int(2)])), Ok(Value::Int(0)));
/// assert_eq!(spec.call(&Call::new("get", vec![])), Ok(Value::Int(2)));
/// ```
///
/// The rules are those of [`macro@operations`], except that an operation takes `&mut self`
/// or `&self` (the spec runs one call at a time). The type must be `Clone + Eq + Hash`, as
/// `Sequential` requires.
pub use fgvt_sync_macros::sequential;
/// What the attributes' expansions name; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use crate::marked::{enter, Entered, Method};
}
pub use fgvt_tree::{Call, MemoryBudget, Value};
pub use localized::Localized;
pub use mutex::{Mutex, MutexGuard};
pub use object::{unknown, Arg, IntoValue, Object};
pub use runtime::Runs;
pub use rwlock::{RwLock, RwLockReadGuard, RwLockWriteGuard};
pub use shared::Shared;
pub use silent::Silent;
pub use spec::Sequential;
pub use std::sync::{LockResult, PoisonError, TryLockError, TryLockResult};
pub use test::model::{model, Model, DEFAULT_MAX_THREADS, STATS_VARIABLE};
pub use test::{Checked, Memory, Replayed, SpecType, Test, REPLAY_VARIABLE};

pub mod report {
    //! The types of what [`Test::localize`](crate::Test::localize) and
    //! [`Test::explore`](crate::Test::explore) return, so that a test reads them with
    //! `fgvt-sync` as its only dependency: the report ([`LocalizeReport`] and its parts,
    //! rendered with [`render_text`], [`render_markdown`] or [`render_json`]), the tree
    //! ([`Tree`], its [`Leaf`]s and [`Event`]s), its labels ([`Labeling`]) and critical data
    //! race sequences ([`Cdrs`]).
    //!
    //! ```
    //! use fgvt_sync::report::{CdrsReport, LocalizeReport, Verdict};
    //!
    //! /// The patterns of the CDRS a report found, if the test failed.
    //! fn patterns(report: &LocalizeReport) -> Vec<&str> {
    //!     if report.verdict != Verdict::NotLinearizable {
    //!         return Vec::new();
    //!     }
    //!     let cdrs: &[CdrsReport] = &report.cdrs;
    //!     cdrs.iter().map(|c| c.pattern.as_str()).collect()
    //! }
    //! # let _ = patterns;
    //! ```

    pub use fgvt_labeling::cdrs::Cdrs;
    pub use fgvt_labeling::labels::{Labeling, LeafOutcome};
    pub use fgvt_reports::model::{
        CdrsReport, Explanation, FaultReport, HistoryItem, HistoryKind, HistoryReport, LabelTotals,
        LocalizeReport, MemoryReport, RaceNodeReport, RaceReport, SourceLocation, Statement,
        TestInfo, TraceStep, TreeSummary, Verdict, WaitReport, WitnessReport,
    };
    pub use fgvt_reports::{render_json, render_markdown, render_text};
    pub use fgvt_tree::{
        Bound, CoarseEvent, Event, EventKind, Fault, History, Leaf, LeafKind, Limit, Tree, Wait,
    };
}
