//! `SeqCst` as the C++20 model has it, where loom 0.7 treats it as `AcqRel`: Peterson's lock
//! with `SeqCst` flags and turn is correct, and with `Release` stores and `Acquire` loads it is
//! not (store buffering lets both threads read the other's flag down and enter together).
//! loom 0.7.2 fails both with "Causality violation: Concurrent write accesses to
//! `UnsafeCell`", the first a false alarm.

use std::panic::{catch_unwind, AssertUnwindSafe};

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;

/// Peterson's lock around a counter, its flags and turn stored `store` and loaded `load`.
struct Peterson {
    flag: [AtomicBool; 2],
    turn: AtomicUsize,
    count: UnsafeCell<u32>,
}

// SAFETY: the counter is touched under the lock only, if the lock works (what the test asks).
unsafe impl Sync for Peterson {}

impl Peterson {
    fn inc(&self, me: usize, store: Ordering, load: Ordering) -> u32 {
        let other = 1 - me;
        self.flag[me].store(true, store);
        self.turn.store(other, store);
        while self.flag[other].load(load) && self.turn.load(load) == other {
            loom::hint::spin_loop();
        }
        // SAFETY: under the lock.
        let v = self.count.with_mut(|p| unsafe {
            *p += 1;
            *p
        });
        self.flag[me].store(false, Ordering::Release);
        v
    }
}

/// Two threads each take the lock once; the model asserts they counted to 2.
fn two_increments(store: Ordering, load: Ordering) {
    loom::model(move || {
        let lock = Arc::new(Peterson {
            flag: [AtomicBool::new(false), AtomicBool::new(false)],
            turn: AtomicUsize::new(0),
            count: UnsafeCell::new(0),
        });
        let t = {
            let lock = lock.clone();
            thread::spawn(move || lock.inc(1, store, load))
        };
        let mine = lock.inc(0, store, load);
        let theirs = t.join().unwrap();
        assert_eq!(
            mine + theirs,
            3,
            "each thread saw the other's increment or none"
        );
    });
}

#[test]
fn peterson_with_seq_cst_flags_and_turn_passes() {
    two_increments(Ordering::SeqCst, Ordering::SeqCst);
}

#[test]
fn peterson_with_release_acquire_races_on_the_counter() {
    let payload = catch_unwind(AssertUnwindSafe(|| {
        two_increments(Ordering::Release, Ordering::Acquire)
    }))
    .expect_err("store buffering lets both threads in");
    let message = (payload.downcast_ref::<String>().cloned()).unwrap_or_default();
    assert!(message.contains("data race"), "{message}");
    assert!(message.contains("seq_cst.rs:"), "{message}");
}
