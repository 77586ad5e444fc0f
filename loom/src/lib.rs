//! loom 0.7's API on fgvt's engine: a crate's loom tests run under fgvt unchanged.
//!
//! A crate that tests its concurrent code with [loom](https://docs.rs/loom/0.7) switches by
//! renaming one dependency in its `Cargo.toml`, under the section loom's README recommends:
//!
//! ```toml
//! [target.'cfg(loom)'.dependencies]
//! loom = { package = "fgvt-loom", version = "0.1" }
//! ```
//!
//! and runs its tests as before, `RUSTFLAGS="--cfg loom" cargo test --release`. Every
//! `loom::model(|| { … })` is then explored by fgvt: every interleaving of the model's threads,
//! and under the C++20 / Rust memory model every value a weak load may read, with equal states
//! merged. A run fails as under loom — a panic or a failed assertion in any thread, a
//! deadlock, a data race on an [`UnsafeCell`](cell::UnsafeCell) — and then the test panics with
//! fgvt's report: what went wrong, the *races* whose order decides it with their source lines,
//! a failing run step by step, and the line that replays it.
//!
//! ```
//! use loom::sync::atomic::{AtomicUsize, Ordering::{Acquire, Release}};
//! use loom::sync::Arc;
//! use loom::thread;
//!
//! loom::model(|| {
//!     let n = Arc::new(AtomicUsize::new(0));
//!     let t = {
//!         let n = n.clone();
//!         thread::spawn(move || n.fetch_add(1, Release))
//!     };
//!     n.fetch_add(1, Release);
//!     t.join().unwrap();
//!     assert_eq!(n.load(Acquire), 2);
//! });
//! ```
//!
//! # What differs from loom
//!
//! - **Limits.** [`model::Builder`]'s fields are loom's; each is mapped to one of fgvt's limits
//!   or is a documented no-op (see its docs), and so are the `LOOM_*` environment variables
//!   `Builder::new` reads. A preemption bound (`LOOM_MAX_PREEMPTIONS`) is fgvt's too: only the
//!   runs with at most that many preemptions are explored, and the report says so.
//! - **Spin loops.** A loop that waits for another thread should call
//!   [`hint::spin_loop`] or [`thread::yield_now`] once per iteration, as under loom: fgvt then
//!   treats it as waiting (one state), where loom needs its branch budget. A bare loop is cut
//!   after a few identical turns, and the report names its line.
//! - **Not provided** (a test that uses them does not compile, naming what is missing):
//!   `Condvar::wait_timeout`, checkpoints.
//!   Leaked `Arc`s are not reported.
//! - **Cores and the allocator.** A model is explored on every core (`FGVT_JOBS` sets how
//!   many threads): workers run ahead the executions the search will come back for. With the
//!   default `allocator` feature, this crate makes [`fgvt_sync::Allocator`] (mimalloc) the
//!   global allocator of the test binaries it is linked into: the search frees what the
//!   workers allocate, which glibc's allocator serializes on a lock, and the steps of a model
//!   allocate much (on concurrent-queue's `spsc` test, two jobs took 0.36 s with it and 0.45 s
//!   with glibc's; one job 0.47 s and 0.54 s). A crate whose test binaries set a global
//!   allocator of their own (rustc then says "the `#[global_allocator]` in this crate
//!   conflicts with global allocator in: loom") turns the feature off:
//!   `loom = { package = "fgvt-loom", version = "0.1", default-features = false }`.

pub mod alloc;
pub mod cell;
#[cfg(feature = "futures")]
pub mod future;
pub mod hint;
pub mod lazy_static;
pub mod model;
mod per_run;
pub mod sync;
pub mod thread;

pub use model::model;

/// The test binary's allocator (see the crate docs, "Cores and the allocator").
#[cfg(feature = "allocator")]
#[global_allocator]
static ALLOCATOR: fgvt_sync::Allocator = fgvt_sync::Allocator;

/// The most threads a model may have by default, its body's included (loom's too).
pub const MAX_THREADS: usize = fgvt_sync::DEFAULT_MAX_THREADS;

/// loom's request to explore the branches that follow (after [`stop_exploring`]): fgvt always
/// explores every branch, so this does nothing.
pub fn explore() {}

/// loom's request to stop exploring the branches that follow: fgvt explores every branch (its
/// states merged), so this does nothing.
pub fn stop_exploring() {}

/// loom's request to skip the current branch: fgvt explores every branch, so this does
/// nothing.
pub fn skip_branch() {}

/// loom's mock of `std::thread_local!`: a value per thread of each run, made by the
/// initializer the first time the thread asks for it in that run.
///
/// ```
/// use std::cell::RefCell;
///
/// loom::thread_local! {
///     static SEEN: RefCell<u32> = RefCell::new(0);
/// }
///
/// loom::model(|| {
///     SEEN.with(|s| *s.borrow_mut() += 1);
///     let t = loom::thread::spawn(|| SEEN.with(|s| *s.borrow()));
///     // The spawned thread has its own, fresh value; every run starts afresh too.
///     assert_eq!(t.join().unwrap(), 0);
///     assert_eq!(SEEN.with(|s| *s.borrow()), 1);
/// });
/// ```
#[macro_export]
macro_rules! thread_local {
    () => {};
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = $init:expr; $($rest:tt)*) => (
        $(#[$attr])* $vis static $name: $crate::thread::LocalKey<$t> =
            $crate::thread::LocalKey::new({
                fn init() -> $t { $init }
                init
            });
        $crate::thread_local!($($rest)*);
    );
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = $init:expr) => (
        $crate::thread_local!($(#[$attr])* $vis static $name: $t = $init;);
    );
}

/// loom's mock of `lazy_static::lazy_static!`: a static made by its initializer the first time
/// a run asks for it, and made anew in every run.
///
/// ```
/// use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
///
/// loom::lazy_static! {
///     static ref HITS: AtomicUsize = AtomicUsize::new(0);
/// }
///
/// loom::model(|| {
///     // Every run starts from a fresh counter.
///     assert_eq!(HITS.fetch_add(1, SeqCst), 0);
/// });
/// ```
#[macro_export]
macro_rules! lazy_static {
    () => {};
    ($(#[$attr:meta])* static ref $name:ident : $t:ty = $init:expr; $($rest:tt)*) => {
        $crate::__lazy_static!($(#[$attr])* () $name, $t, $init);
        $crate::lazy_static!($($rest)*);
    };
    ($(#[$attr:meta])* pub static ref $name:ident : $t:ty = $init:expr; $($rest:tt)*) => {
        $crate::__lazy_static!($(#[$attr])* (pub) $name, $t, $init);
        $crate::lazy_static!($($rest)*);
    };
    ($(#[$attr:meta])* pub ($($vis:tt)+) static ref $name:ident : $t:ty = $init:expr; $($rest:tt)*) => {
        $crate::__lazy_static!($(#[$attr])* (pub ($($vis)+)) $name, $t, $init);
        $crate::lazy_static!($($rest)*);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __lazy_static {
    ($(#[$attr:meta])* ($($vis:tt)*) $name:ident, $t:ty, $init:expr) => {
        #[allow(non_camel_case_types, dead_code, missing_copy_implementations)]
        $(#[$attr])*
        $($vis)* struct $name {
            __private: (),
        }
        #[doc(hidden)]
        $($vis)* static $name: $name = $name { __private: () };
        impl ::core::ops::Deref for $name {
            type Target = $t;
            fn deref(&self) -> &$t {
                static LAZY: $crate::lazy_static::Lazy<$t> = $crate::lazy_static::Lazy::new({
                    fn init() -> $t { $init }
                    init
                });
                LAZY.get()
            }
        }
    };
}
