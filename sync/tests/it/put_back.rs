//! Locks whose failed turns write, as ordinary Rust writes them: a test-and-set lock whose
//! `swap(true, Acquire)` stores `true` again while the lock is taken, and spin 0.5.2's
//! `RwLock`, whose `read()` adds a reader with `fetch_add(Acquire)` and takes it back with
//! `fetch_sub(Release)` while a writer holds the lock.
//!
//! Under weak memory every such turn adds stores to the lock word's modification order. The
//! state's key leaves out a turn that repeats the one before it (`fgvt_memory`'s `turns`), and
//! a loop around `std::hint::spin_loop()` whose turn put back what it changed is taken for a
//! retry loop (`Test::implied_hints`), so both locks are decided with the default limits, with
//! either hint, and their buggy orderings still fail. Run with `--nocapture` for the times.

use std::time::Instant;

use fgvt_sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use fgvt_sync::cell::UnsafeCell;
use fgvt_sync::report::LocalizeReport;
use fgvt_sync::{Object, Test, Verdict};

use crate::common::treiber::hint;

/// The ordering a lock is taken with: `Acquire`, or with `RELAXED` the bug.
fn taking<const RELAXED: bool>() -> Ordering {
    if RELAXED {
        Ordering::Relaxed
    } else {
        Ordering::Acquire
    }
}

/// A counter behind a test-and-set lock; `HINTED` says whose spin hint the lock calls, and
/// `RELAXED` takes the lock with a `Relaxed` swap (the bug: the counter's accesses race).
#[derive(Default)]
pub struct TasCounter<const HINTED: bool, const RELAXED: bool> {
    lock: AtomicBool,
    data: UnsafeCell<i64>,
}

// SAFETY: `data` is only touched under `lock`, which the tests check.
unsafe impl<const HINTED: bool, const RELAXED: bool> Sync for TasCounter<HINTED, RELAXED> {}

impl<const HINTED: bool, const RELAXED: bool> TasCounter<HINTED, RELAXED> {
    fn lock(&self) {
        while self.lock.swap(true, taking::<RELAXED>()) {
            hint::<HINTED>();
        }
    }

    fn unlock(&self) {
        self.lock.store(false, Ordering::Release);
    }
}

#[fgvt_sync::operations]
impl<const HINTED: bool, const RELAXED: bool> TasCounter<HINTED, RELAXED> {
    pub fn inc(&self) {
        self.lock();
        // SAFETY: under the lock.
        self.data.with_mut(|p| unsafe { *p += 1 });
        self.unlock();
    }

    pub fn get(&self) -> i64 {
        self.lock();
        // SAFETY: under the lock.
        let v = self.data.with(|p| unsafe { *p });
        self.unlock();
        v
    }
}

const READER: usize = 1 << 2;
const UPGRADED: usize = 1 << 1;
const WRITER: usize = 1;

/// A counter behind spin 0.5.2's `RwLock` word; `RELAXED` adds the reader with a `Relaxed`
/// `fetch_add` (the bug: the reader does not see the writer's data).
#[derive(Default)]
pub struct SpinRwCounter<const HINTED: bool, const RELAXED: bool> {
    lock: AtomicUsize,
    data: UnsafeCell<i64>,
}

// SAFETY: `data` is only touched under `lock`, which the tests check.
unsafe impl<const HINTED: bool, const RELAXED: bool> Sync for SpinRwCounter<HINTED, RELAXED> {}

impl<const HINTED: bool, const RELAXED: bool> SpinRwCounter<HINTED, RELAXED> {
    fn read_lock(&self) {
        loop {
            let value = self.lock.fetch_add(READER, taking::<RELAXED>());
            if value & (WRITER | UPGRADED) != 0 {
                self.lock.fetch_sub(READER, Ordering::Release);
                hint::<HINTED>();
            } else {
                return;
            }
        }
    }

    fn read_unlock(&self) {
        self.lock.fetch_sub(READER, Ordering::Release);
    }

    fn write_lock(&self) {
        while self
            .lock
            .compare_exchange_weak(0, WRITER, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            hint::<HINTED>();
        }
    }

    fn write_unlock(&self) {
        self.lock.fetch_and(!(WRITER | UPGRADED), Ordering::Release);
    }
}

#[fgvt_sync::operations]
impl<const HINTED: bool, const RELAXED: bool> SpinRwCounter<HINTED, RELAXED> {
    pub fn inc(&self) {
        self.write_lock();
        // SAFETY: under the write lock.
        self.data.with_mut(|p| unsafe { *p += 1 });
        self.write_unlock();
    }

    pub fn get(&self) -> i64 {
        self.read_lock();
        // SAFETY: under a read lock.
        let v = self.data.with(|p| unsafe { *p });
        self.read_unlock();
        v
    }
}

/// Localizes `threads` on `O` with the default limits, printing how long it took.
fn localize<O: Object>(name: &str, threads: &[&[&str]]) -> LocalizeReport {
    let started = Instant::now();
    let mut test = Test::<O>::new(name);
    for calls in threads {
        test = test.thread(calls);
    }
    let report = test.localize().expect("replays").report;
    eprintln!(
        "{name}: {:?} in {:.1?}, {} leaves, {} states",
        report.verdict,
        started.elapsed(),
        report.tree.leaves,
        report.tree.distinct_states
    );
    report
}

/// Localizes `threads` on `O` with the default limits: it passes, complete.
fn passes<O: Object>(name: &str, threads: &[&[&str]]) -> LocalizeReport {
    let report = localize::<O>(name, threads);
    assert_eq!(
        report.verdict,
        Verdict::Linearizable,
        "{:?}",
        report.partial
    );
    assert_eq!(report.partial, None);
    report
}

/// The correct lock passes, complete, with either hint; the buggy one fails.
fn decided<Fgvt: Object, Std: Object, Bug: Object>(name: &str, threads: &[&[&str]]) {
    let hinted = passes::<Fgvt>(&format!("{name} (fgvt hint)"), threads);
    let plain = passes::<Std>(&format!("{name} (std hint)"), threads);
    // fgvt's hint cuts every turn; `std`'s is taken for it where the turn put back what it
    // changed: the same tree.
    assert_eq!(hinted.tree.distinct_states, plain.tree.distinct_states);
    let buggy = localize::<Bug>(&format!("{name} (buggy)"), threads);
    assert_eq!(buggy.verdict, Verdict::NotLinearizable);
}

#[test]
fn a_test_and_set_lock_is_decided_with_either_hint() {
    decided::<TasCounter<true, false>, TasCounter<false, false>, TasCounter<false, true>>(
        "test-and-set",
        &[&["inc()"], &["inc()", "get()"]],
    );
}

#[test]
fn spin_0_5_2_rwlock_is_decided_with_either_hint() {
    decided::<SpinRwCounter<true, false>, SpinRwCounter<false, false>, SpinRwCounter<false, true>>(
        "spin 0.5.2 RwLock",
        &[&["inc()"], &["get()"]],
    );
}

/// Three threads of a test-and-set lock: two spin at once, their turns interleaved on the lock
/// word, and a round of both threads' turns repeats the round before it.
#[test]
fn three_threads_spinning_together_are_decided() {
    let _ = passes::<TasCounter<false, false>>(
        "test-and-set, three threads",
        &[&["inc()"], &["inc()"], &["inc()", "get()"]],
    );
}

/// A test-and-set lock whose every access is `SeqCst`, around `std`'s hint: explored
/// sequentially consistent only, where a failed `swap(true)` leaves memory as it was, and is
/// taken for a retry turn all the same.
#[derive(Default)]
pub struct SeqCstTas {
    lock: AtomicBool,
    data: UnsafeCell<i64>,
}

// SAFETY: `data` is only touched under `lock`, which the test checks.
unsafe impl Sync for SeqCstTas {}

#[fgvt_sync::operations]
impl SeqCstTas {
    pub fn inc(&self) {
        while self.lock.swap(true, Ordering::SeqCst) {
            std::hint::spin_loop();
        }
        // SAFETY: under the lock.
        self.data.with_mut(|p| unsafe { *p += 1 });
        self.lock.store(false, Ordering::SeqCst);
    }
}

#[test]
fn a_seq_cst_test_and_set_lock_is_decided_with_std_hint() {
    let _ = passes::<SeqCstTas>("test-and-set, SeqCst", &[&["inc()"], &["inc()"]]);
}
