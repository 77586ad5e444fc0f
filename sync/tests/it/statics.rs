//! Objects made in a `const` context (`const_new`): `static`s and `const fn new`s, whose
//! identity each run gives at their first access, and whose atomics start each run anew.

use fgvt_sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use fgvt_sync::cell::UnsafeCell;
use fgvt_sync::{thread, Verdict};

/// The verdict of `body`'s model, and its report as text.
fn verdict_of<F: Fn() + Send + Sync + 'static>(body: F) -> (Verdict, String) {
    crate::common::model_report("statics", body)
}

static HITS: AtomicUsize = AtomicUsize::const_new(0);

#[test]
fn a_static_atomic_starts_every_run_from_its_initial_value() {
    // Each run adds 2: were the static not reset, the second run would find 2 already.
    let (verdict, text) = verdict_of(|| {
        let t = thread::spawn(|| {
            HITS.fetch_add(1, SeqCst);
        });
        HITS.fetch_add(1, SeqCst);
        t.join().unwrap();
        assert_eq!(HITS.load(SeqCst), 2);
    });
    assert_eq!(verdict, Verdict::Linearizable, "{text}");
    assert!(
        text.contains("leaves: 2 —"),
        "both orders of the two adds: {text}"
    );
}

/// A spin lock around a counter, as a crate writes it with `const fn new`, in a `static`;
/// with `LOCKED` false the increments skip the lock.
struct Counter<const LOCKED: bool> {
    held: AtomicBool,
    count: UnsafeCell<usize>,
}

unsafe impl<const LOCKED: bool> Sync for Counter<LOCKED> {}

impl<const LOCKED: bool> Counter<LOCKED> {
    const fn new() -> Self {
        Counter {
            held: AtomicBool::const_new(false),
            count: UnsafeCell::const_new(0),
        }
    }

    fn inc(&self) {
        if LOCKED {
            while self.held.swap(true, SeqCst) {
                fgvt_sync::hint::spin_loop();
            }
        }
        self.count.with_mut(|c| unsafe { *c += 1 });
        if LOCKED {
            self.held.store(false, SeqCst);
        }
    }
}

static LOCKED: Counter<true> = Counter::new();
static UNLOCKED: Counter<false> = Counter::new();

#[test]
fn a_static_made_by_a_const_fn_is_checked_like_any_object() {
    let (verdict, text) = verdict_of(|| {
        let t = thread::spawn(|| LOCKED.inc());
        LOCKED.inc();
        t.join().unwrap();
    });
    assert_eq!(verdict, Verdict::Linearizable, "{text}");
    let (verdict, text) = verdict_of(|| {
        let t = thread::spawn(|| UNLOCKED.inc());
        UNLOCKED.inc();
        t.join().unwrap();
    });
    assert_eq!(verdict, Verdict::NotLinearizable, "{text}");
    assert!(text.contains("data race"), "{text}");
}

/// A `static` lock, made by `Mutex::const_new`, around a counter: the lock serializes the two
/// increments in every run, and every run starts with the lock free. The data is reset by the
/// body (a `static`'s data is not, between runs).
static TOTAL: fgvt_sync::Mutex<usize> = fgvt_sync::Mutex::const_new(0);

#[test]
fn a_static_mutex_serializes_and_starts_every_run_free() {
    let (verdict, text) = verdict_of(|| {
        *TOTAL.lock().unwrap() = 0;
        let t = thread::spawn(|| *TOTAL.lock().unwrap() += 1);
        *TOTAL.lock().unwrap() += 1;
        t.join().unwrap();
        assert_eq!(*TOTAL.lock().unwrap(), 2);
    });
    assert_eq!(verdict, Verdict::Linearizable, "{text}");
    assert_eq!(
        TOTAL.try_lock().map(|total| *total).ok(),
        Some(2),
        "free and holding the last run's total after the model"
    );
}

static TABLE: fgvt_sync::RwLock<usize> = fgvt_sync::RwLock::const_new(0);

#[test]
fn a_static_rwlock_lets_readers_share_and_a_writer_in_alone() {
    let (verdict, text) = verdict_of(|| {
        *TABLE.write().unwrap() = 1;
        let t = thread::spawn(|| *TABLE.read().unwrap());
        let mine = *TABLE.read().unwrap();
        let theirs = t.join().unwrap();
        assert_eq!((mine, theirs), (1, 1));
    });
    assert_eq!(verdict, Verdict::Linearizable, "{text}");
}

static READY: fgvt_sync::Mutex<bool> = fgvt_sync::Mutex::const_new(false);
static RUNG: fgvt_sync::Condvar = fgvt_sync::Condvar::const_new();

#[test]
fn a_static_condvar_wakes_its_waiter_in_every_run() {
    let (verdict, text) = verdict_of(|| {
        *READY.lock().unwrap() = false;
        let t = thread::spawn(|| {
            *READY.lock().unwrap() = true;
            RUNG.notify_one();
        });
        let mut ready = READY.lock().unwrap();
        while !*ready {
            ready = RUNG.wait(ready).unwrap();
        }
        drop(ready);
        t.join().unwrap();
    });
    assert_eq!(verdict, Verdict::Linearizable, "{text}");
}
