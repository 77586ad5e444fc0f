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

/// A lock word as the code under test takes it: exclusively, or (by default the same way)
/// shared.
pub trait Lock: Default + Send + Sync + 'static {
    /// Takes the lock for a writer, waiting while another holds it.
    fn lock(&self);
    /// Gives back what [`Lock::lock`] took.
    fn unlock(&self);
    /// Takes the lock for a reader.
    fn lock_shared(&self) {
        self.lock();
    }
    /// Gives back what [`Lock::lock_shared`] took.
    fn unlock_shared(&self) {
        self.unlock();
    }
}

/// A counter behind the lock `L`.
#[derive(Default)]
pub struct Counter<L> {
    lock: L,
    data: UnsafeCell<i64>,
}

// SAFETY: `data` is only touched under `lock`, which the tests check.
unsafe impl<L: Sync> Sync for Counter<L> {}

#[fgvt_sync::operations]
impl<L: Lock> Counter<L> {
    pub fn inc(&self) {
        self.lock.lock();
        // SAFETY: under the lock.
        self.data.with_mut(|p| unsafe { *p += 1 });
        self.lock.unlock();
    }

    pub fn get(&self) -> i64 {
        self.lock.lock_shared();
        // SAFETY: under the lock, shared or not.
        let v = self.data.with(|p| unsafe { *p });
        self.lock.unlock_shared();
        v
    }
}

/// A test-and-set lock; `HINTED` says whose spin hint it calls, and `RELAXED` takes it with a
/// `Relaxed` swap (the bug: the counter's accesses race).
#[derive(Default)]
pub struct Tas<const HINTED: bool, const RELAXED: bool>(AtomicBool);

impl<const HINTED: bool, const RELAXED: bool> Lock for Tas<HINTED, RELAXED> {
    fn lock(&self) {
        while self.0.swap(true, taking::<RELAXED>()) {
            hint::<HINTED>();
        }
    }

    fn unlock(&self) {
        self.0.store(false, Ordering::Release);
    }
}

/// A test-and-set lock whose every access is `SeqCst`, around `std`'s hint: explored
/// sequentially consistent only, where a failed `swap(true)` leaves memory as it was, and is
/// taken for a retry turn all the same.
#[derive(Default)]
pub struct SeqCstTas(AtomicBool);

impl Lock for SeqCstTas {
    fn lock(&self) {
        while self.0.swap(true, Ordering::SeqCst) {
            std::hint::spin_loop();
        }
    }

    fn unlock(&self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

const READER: usize = 1 << 2;
const UPGRADED: usize = 1 << 1;
const WRITER: usize = 1;

/// spin 0.5.2's `RwLock` word; `RELAXED` adds the reader with a `Relaxed` `fetch_add` (the
/// bug: the reader does not see the writer's data).
#[derive(Default)]
pub struct SpinRw<const HINTED: bool, const RELAXED: bool>(AtomicUsize);

impl<const HINTED: bool, const RELAXED: bool> Lock for SpinRw<HINTED, RELAXED> {
    fn lock(&self) {
        while self
            .0
            .compare_exchange_weak(0, WRITER, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            hint::<HINTED>();
        }
    }

    fn unlock(&self) {
        self.0.fetch_and(!(WRITER | UPGRADED), Ordering::Release);
    }

    fn lock_shared(&self) {
        loop {
            let value = self.0.fetch_add(READER, taking::<RELAXED>());
            if value & (WRITER | UPGRADED) != 0 {
                self.0.fetch_sub(READER, Ordering::Release);
                hint::<HINTED>();
            } else {
                return;
            }
        }
    }

    fn unlock_shared(&self) {
        self.0.fetch_sub(READER, Ordering::Release);
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
    decided::<Counter<Tas<true, false>>, Counter<Tas<false, false>>, Counter<Tas<false, true>>>(
        "test-and-set",
        &[&["inc()"], &["inc()", "get()"]],
    );
}

#[test]
fn spin_0_5_2_rwlock_is_decided_with_either_hint() {
    decided::<
        Counter<SpinRw<true, false>>,
        Counter<SpinRw<false, false>>,
        Counter<SpinRw<false, true>>,
    >("spin 0.5.2 RwLock", &[&["inc()"], &["get()"]]);
}

/// Three threads of a test-and-set lock: two spin at once, their turns interleaved on the lock
/// word, and a round of both threads' turns repeats the round before it.
#[test]
fn three_threads_spinning_together_are_decided() {
    let _ = passes::<Counter<Tas<false, false>>>(
        "test-and-set, three threads",
        &[&["inc()"], &["inc()"], &["inc()", "get()"]],
    );
}

#[test]
fn a_seq_cst_test_and_set_lock_is_decided_with_std_hint() {
    let _ = passes::<Counter<SeqCstTas>>("test-and-set, SeqCst", &[&["inc()"], &["inc()"]]);
}
