//! Each part of loom's API a suite uses, in a model that passes only if it behaves as loom's.

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicUsize, Ordering::*};
use loom::sync::{mpsc, Arc, Barrier, Condvar, Mutex, Notify, RwLock};
use loom::thread;

#[test]
fn mutex_increments_are_never_lost() {
    loom::model(|| {
        let n = Arc::new(Mutex::new(0));
        let ts: Vec<_> = (0..2)
            .map(|_| {
                let n = n.clone();
                thread::spawn(move || *n.lock().unwrap() += 1)
            })
            .collect();
        for t in ts {
            t.join().unwrap();
        }
        assert_eq!(*n.lock().unwrap(), 2);
    });
}

#[test]
fn condvar_wakes_the_waiter_once_the_flag_is_set() {
    loom::model(|| {
        let pair = Arc::new((Mutex::new(false), Condvar::new()));
        let setter = {
            let pair = pair.clone();
            thread::spawn(move || {
                *pair.0.lock().unwrap() = true;
                pair.1.notify_one();
            })
        };
        let mut ready = pair.0.lock().unwrap();
        while !*ready {
            ready = pair.1.wait(ready).unwrap();
        }
        drop(ready);
        setter.join().unwrap();
    });
}

#[test]
fn rwlock_readers_see_the_writers_value_or_the_first() {
    loom::model(|| {
        let lock = Arc::new(RwLock::new(1));
        let writer = {
            let lock = lock.clone();
            thread::spawn(move || *lock.write().unwrap() = 2)
        };
        let seen = *lock.read().unwrap();
        assert!(seen == 1 || seen == 2);
        writer.join().unwrap();
        assert_eq!(*lock.read().unwrap(), 2);
    });
}

#[test]
fn unsafe_cell_published_by_release_acquire_is_read_whole() {
    struct Slot(UnsafeCell<usize>, AtomicUsize);
    unsafe impl Sync for Slot {}
    loom::model(|| {
        let slot = Arc::new(Slot(UnsafeCell::new(0), AtomicUsize::new(0)));
        let writer = {
            let slot = slot.clone();
            thread::spawn(move || {
                slot.0.with_mut(|p| unsafe { *p = 7 });
                slot.1.store(1, Release);
            })
        };
        if slot.1.load(Acquire) == 1 {
            assert_eq!(slot.0.with(|p| unsafe { *p }), 7);
        }
        writer.join().unwrap();
    });
}

#[test]
fn notify_orders_the_notifiers_writes_before_the_waiter() {
    loom::model(|| {
        let notify = Arc::new(Notify::new());
        let n = Arc::new(AtomicUsize::new(0));
        let t = {
            let (notify, n) = (notify.clone(), n.clone());
            thread::spawn(move || {
                n.store(1, Relaxed);
                notify.notify();
            })
        };
        notify.wait();
        assert_eq!(n.load(Relaxed), 1);
        t.join().unwrap();
    });
}

#[test]
fn a_channel_delivers_every_message_in_order() {
    loom::model(|| {
        let (tx, rx) = mpsc::channel();
        let t = thread::spawn(move || {
            tx.send(1).unwrap();
            tx.send(2).unwrap();
        });
        assert_eq!(rx.recv().unwrap(), 1);
        assert_eq!(rx.recv().unwrap(), 2);
        // Every sender gone: the next receive says so.
        t.join().unwrap();
        assert!(rx.recv().is_err());
    });
}

#[test]
fn a_barrier_lets_no_thread_past_before_all_arrive() {
    loom::model(|| {
        let barrier = Arc::new(Barrier::new(2));
        let arrived = Arc::new(AtomicUsize::new(0));
        let t = {
            let (barrier, arrived) = (barrier.clone(), arrived.clone());
            thread::spawn(move || {
                arrived.fetch_add(1, SeqCst);
                barrier.wait();
                assert_eq!(arrived.load(SeqCst), 2);
            })
        };
        arrived.fetch_add(1, SeqCst);
        barrier.wait();
        assert_eq!(arrived.load(SeqCst), 2);
        t.join().unwrap();
    });
}

loom::lazy_static! {
    static ref FRESH: AtomicUsize = AtomicUsize::new(0);
}

loom::thread_local! {
    static MINE: std::cell::Cell<usize> = std::cell::Cell::new(0);
}

#[test]
fn lazy_statics_and_thread_locals_start_afresh_in_every_run() {
    loom::model(|| {
        assert_eq!(
            FRESH.fetch_add(1, SeqCst),
            0,
            "a run saw the last run's static"
        );
        MINE.with(|m| m.set(m.get() + 1));
        let t = thread::spawn(|| MINE.with(|m| m.get()));
        assert_eq!(t.join().unwrap(), 0, "a thread saw another's thread-local");
        assert_eq!(MINE.with(|m| m.get()), 1);
    });
}

#[test]
fn the_builder_reads_loom_s_variables_and_checks_with_its_limits() {
    let mut builder = loom::model::Builder::new();
    builder.max_threads = 2;
    builder.max_branches = 100;
    builder.preemption_bound = Some(2);
    builder.check(|| {
        let t = thread::spawn(|| 1);
        assert_eq!(t.join().unwrap(), 1);
    });
}

/// A bare wait loop, as loom tests do not write them (loom needs a yield) but code does: a
/// retry loop for fgvt, unless `FGVT_IMPLIED_HINTS=false` says otherwise, and then the loop is
/// cut where its turns repeat and the model fails as partial.
#[test]
fn a_bare_wait_is_a_retry_loop_unless_the_variable_says_otherwise() {
    let model = || {
        loom::model(|| {
            let flag = Arc::new(loom::sync::atomic::AtomicBool::new(false));
            let setter = {
                let flag = Arc::clone(&flag);
                thread::spawn(move || flag.store(true, Release))
            };
            while !flag.load(Acquire) {}
            setter.join().unwrap();
        })
    };
    model();
    // No other test of this file reads the variable: each model without a bare loop is the
    // same either way.
    std::env::set_var("FGVT_IMPLIED_HINTS", "false");
    let cut = std::panic::catch_unwind(model);
    std::env::remove_var("FGVT_IMPLIED_HINTS");
    let message = cut.expect_err("a cut exploration fails the model");
    let message = (message.downcast_ref::<String>()).expect("fgvt's report");
    assert!(message.contains("without a spin hint"), "{message}");
}

#[cfg(feature = "futures")]
#[test]
fn block_on_waits_for_the_waker() {
    use loom::future::{block_on, AtomicWaker};
    use std::future::poll_fn;
    use std::task::Poll;
    loom::model(|| {
        let waker = Arc::new(AtomicWaker::new());
        let done = Arc::new(AtomicUsize::new(0));
        let t = {
            let (waker, done) = (waker.clone(), done.clone());
            thread::spawn(move || {
                done.store(1, Release);
                waker.wake();
            })
        };
        block_on(poll_fn(|cx| {
            waker.register_by_ref(cx.waker());
            if done.load(Acquire) == 1 {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        }));
        t.join().unwrap();
    });
}
