//! Retry hints: how a waiting loop tells fgvt that it waits.
//!
//! A thread that spins until another thread acts (a spin lock's CAS, a seqlock reader's retry)
//! comes back, iteration after iteration, to the same place having seen the same values. Under
//! fgvt such a loop is an ever deeper path unless it says that it is a retry: call
//! [`spin_loop`] (or [`yield_now`]) once per iteration, where `std::hint::spin_loop` or
//! `std::thread::yield_now` would go. It is the promise that an iteration carries nothing into
//! the next but what it reads from shared objects (a value needed across iterations is read
//! before the loop). fgvt then sends the thread back to the head of its loop, to the state it
//! had when it first got there, whatever the iteration saw and whichever path it took, and the
//! explorer sees a loop edge: a waiting loop is one state, its runs are judged by what every
//! finite run can come to, and a correct spin lock or seqlock passes with the default limits.
//! Where the head cannot be told apart (a helper that waits, called twice in one operation;
//! a loop nested in one that begins with the same access), an iteration is dropped only when
//! it took the same path as the one before it.
//!
//! ```
//! use fgvt_sync::atomic::{AtomicBool, Ordering::{Acquire, Relaxed, Release}};
//!
//! struct SpinLock { held: AtomicBool }
//!
//! impl SpinLock {
//!     fn lock(&self) {
//!         while self.held.compare_exchange(false, true, Acquire, Relaxed).is_err() {
//!             fgvt_sync::hint::spin_loop();
//!         }
//!     }
//!     fn unlock(&self) {
//!         self.held.store(false, Release);
//!     }
//! }
//! # let lock = SpinLock { held: AtomicBool::new(false) };
//! # lock.lock();
//! # lock.unlock();
//! ```
//!
//! Outside fgvt's scheduler (a serial run, or code built against `std`) both do what `std`'s
//! do. A `loop` or `while` of the source without the hint (around `std::hint::spin_loop`, or
//! bare) is taken for a retry loop all the same where fgvt can tell its turn carries nothing
//! ([`Test::implied_hints`](crate::Test::implied_hints)). Any other loop without the hint is
//! cut where an operation repeats the same turn four times in a row (the same accesses, seeing
//! the same values, writing nothing): the path ends in a bounded leaf, and the report names the
//! loop's line and says to add the hint
//! ([`Test::cut_bare_spins`](crate::Test::cut_bare_spins)).

/// Marks one iteration of a waiting loop (see the [module docs](self)); `std::hint::spin_loop`
/// outside an execution.
pub fn spin_loop() {
    if !crate::runtime::retry() {
        std::hint::spin_loop();
    }
}

/// Marks one iteration of a waiting loop, as [`spin_loop`] does; `std::thread::yield_now`
/// outside an execution.
pub fn yield_now() {
    if !crate::runtime::retry() {
        std::thread::yield_now();
    }
}
