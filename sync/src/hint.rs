//! Retry hints: how a waiting loop tells fgvt that it waits.
//!
//! A thread that spins until another thread acts (a spin lock's CAS, a seqlock reader's retry)
//! comes back, iteration after iteration, to the same place having seen the same values. Under
//! fgvt such a loop is an ever deeper path unless it says that it is a retry: call
//! [`spin_loop`] (or [`yield_now`]) once per iteration, where `std::hint::spin_loop` or
//! `std::thread::yield_now` would go. It is the promise that an iteration carries nothing into
//! the next but what it reads from shared objects; fgvt then drops an iteration that observed
//! exactly what the previous one did, the thread is back at the state it had, and the explorer
//! sees a loop edge: a waiting loop is one state, its runs are judged by what every finite run
//! can come to, and a correct spin lock passes with the default limits.
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
//! do. A loop without the hint still runs, up to the test's `max_steps` per operation, and the
//! report names the line that spins.

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
