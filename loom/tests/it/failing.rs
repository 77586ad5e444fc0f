//! Models that fail under loom, and what fgvt's panic says of them.

use std::panic::{catch_unwind, AssertUnwindSafe};

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicUsize, Ordering::*};
use loom::sync::Arc;
use loom::thread;

/// The panic message of `model(body)`, which must fail.
fn failure(body: impl Fn() + Send + Sync + 'static) -> String {
    let payload = catch_unwind(AssertUnwindSafe(|| loom::model(body)))
        .expect_err("the model has a failing run");
    match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .unwrap_or_default(),
    }
}

#[test]
fn a_lost_update_fails_with_the_assertion_and_the_racing_lines() {
    let message = failure(|| {
        let n = Arc::new(AtomicUsize::new(0));
        let t = {
            let n = n.clone();
            thread::spawn(move || {
                let v = n.load(SeqCst);
                n.store(v + 1, SeqCst);
            })
        };
        let v = n.load(SeqCst);
        n.store(v + 1, SeqCst);
        t.join().unwrap();
        assert_eq!(n.load(SeqCst), 2, "lost an update");
    });
    assert!(
        message.starts_with("a run of the model fails: a thread panicked: assertion"),
        "{message}"
    );
    assert!(message.contains("lost an update"), "{message}");
    // The CDRS: the loads and stores whose order decides it, by line.
    assert!(
        message.contains("CDRS: 1 found") || message.contains("CDRS: 2 found"),
        "{message}"
    );
    assert!(message.contains("failing.rs:"), "{message}");
}

#[test]
fn a_relaxed_flag_races_on_the_cell_it_publishes() {
    struct Slot(UnsafeCell<usize>, AtomicUsize);
    unsafe impl Sync for Slot {}
    let message = failure(|| {
        let slot = Arc::new(Slot(UnsafeCell::new(0), AtomicUsize::new(0)));
        let writer = {
            let slot = slot.clone();
            thread::spawn(move || {
                slot.0.with_mut(|p| unsafe { *p = 7 });
                slot.1.store(1, Relaxed);
            })
        };
        if slot.1.load(Relaxed) == 1 {
            slot.0.with(|p| unsafe { *p });
        }
        writer.join().unwrap();
    });
    assert!(message.contains("data race on"), "{message}");
    // The fix fgvt verified: the flag's store Release and its load Acquire.
    assert!(message.contains("Release"), "{message}");
}

#[test]
fn a_deadlock_fails_naming_who_waits_for_what() {
    let message = failure(|| {
        let a = Arc::new(loom::sync::Mutex::new(()));
        let b = Arc::new(loom::sync::Mutex::new(()));
        let t = {
            let (a, b) = (a.clone(), b.clone());
            thread::spawn(move || {
                let _b = b.lock().unwrap();
                let _a = a.lock().unwrap();
            })
        };
        {
            let _a = a.lock().unwrap();
            let _b = b.lock().unwrap();
        }
        t.join().unwrap();
    });
    assert!(message.contains("waits for"), "{message}");
}

/// Two nodes that hold each other through `Arc`s: when the model's threads have returned, the
/// cycle keeps both allocations, as loom reports a leaked `Arc`.
#[test]
fn a_cycle_of_arcs_is_a_leak() {
    struct Node(loom::sync::Mutex<Option<Arc<Node>>>);
    let message = failure(|| {
        let a = Arc::new(Node(loom::sync::Mutex::new(None)));
        let b = Arc::new(Node(loom::sync::Mutex::new(Some(a.clone()))));
        let t = thread::spawn(move || {
            *a.0.lock().unwrap() = Some(b);
        });
        t.join().unwrap();
    });
    assert!(
        message.starts_with(
            "a run of the model fails: leak: the `Arc` made at loom/tests/it/failing.rs:"
        ),
        "{message}"
    );
}
