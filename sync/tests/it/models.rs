//! Models: a closure that spawns its own threads (`fgvt_sync::model`, `fgvt_sync::thread`),
//! each verdict checked against runs enumerated by hand.

use std::sync::Arc;

use fgvt_sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering::*};
use fgvt_sync::cell::UnsafeCell;
use fgvt_sync::{thread, Model, Verdict};

/// A cell threads share: its accesses are checked for data races (`Sync` by promise, as the
/// code that wraps an `UnsafeCell` makes it).
struct Data(UnsafeCell<i32>);
unsafe impl Sync for Data {}

impl Data {
    fn new() -> Arc<Data> {
        Arc::new(Data(UnsafeCell::new(0)))
    }
}

/// The verdict and the failing leaves of `body`'s model.
fn outcome<F: Fn() + Send + Sync + 'static>(body: F) -> (Verdict, usize) {
    let found = Model::new().name("models").localize(body).unwrap();
    if std::env::var_os("SHOW").is_some() {
        eprintln!("{}", fgvt_sync::report::render_text(&found.report, false));
    }
    (
        found.report.verdict,
        found.report.tree.failing_leaves as usize,
    )
}

/// The verdict of `body`'s model, and its report as text.
fn report_of<F: Fn() + Send + Sync + 'static>(body: F) -> (Verdict, String) {
    crate::common::model_report("models", body)
}

#[test]
fn two_increments_by_load_and_store_lose_one_in_some_runs() {
    // T0: load, store; T1: load, store. A lost update needs both loads before both stores.
    let body = || {
        let n = Arc::new(AtomicUsize::new(0));
        let t = {
            let n = Arc::clone(&n);
            thread::spawn(move || {
                let v = n.load(SeqCst);
                n.store(v + 1, SeqCst);
            })
        };
        let v = n.load(SeqCst);
        n.store(v + 1, SeqCst);
        t.join().unwrap();
        assert_eq!(n.load(SeqCst), 2, "an increment was lost");
    };
    let (verdict, _) = outcome(body);
    assert_eq!(verdict, Verdict::NotLinearizable);
}

#[test]
fn fetch_add_increments_never_lose_one() {
    let (verdict, fails) = outcome(|| {
        let n = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let n = Arc::clone(&n);
                thread::spawn(move || n.fetch_add(1, SeqCst))
            })
            .collect();
        let seen: Vec<usize> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(n.load(SeqCst), 2);
        // What each returned is what the other left: 0 and 1 in some order.
        assert_eq!(seen.iter().sum::<usize>(), 1);
    });
    assert_eq!((verdict, fails), (Verdict::Linearizable, 0));
}

/// Message passing through a flag: the data is published by a `Release` store and read after
/// an `Acquire` load of it, or with `Relaxed` on both, raced on.
fn message_passing(
    store: fgvt_sync::atomic::Ordering,
    load: fgvt_sync::atomic::Ordering,
) -> Verdict {
    let body = move || {
        let data = Data::new();
        let ready = Arc::new(AtomicBool::new(false));
        let writer = {
            let (data, ready) = (Arc::clone(&data), Arc::clone(&ready));
            thread::spawn(move || {
                data.0.with_mut(|p| unsafe { *p = 42 });
                ready.store(true, store);
            })
        };
        if ready.load(load) {
            assert_eq!(data.0.with(|p| unsafe { *p }), 42);
        }
        writer.join().unwrap();
    };
    outcome(body).0
}

#[test]
fn message_passing_is_safe_with_release_acquire_and_races_relaxed() {
    assert_eq!(message_passing(Release, Acquire), Verdict::Linearizable);
    assert_eq!(message_passing(Relaxed, Relaxed), Verdict::NotLinearizable);
}

#[test]
fn join_orders_what_the_thread_did_before_what_the_joiner_does() {
    // Without the join, the write and the read race; after it, they are ordered.
    let race = |join_first: bool| {
        outcome(move || {
            let data = Data::new();
            let t = {
                let data = Arc::clone(&data);
                thread::spawn(move || data.0.with_mut(|p| unsafe { *p = 1 }))
            };
            let t = if join_first {
                t.join().unwrap();
                None
            } else {
                Some(t)
            };
            data.0.with(|p| unsafe { *p });
            if let Some(t) = t {
                t.join().unwrap();
            }
        })
        .0
    };
    assert_eq!(race(true), Verdict::Linearizable);
    assert_eq!(race(false), Verdict::NotLinearizable);
}

#[test]
fn threads_that_join_each_other_deadlock() {
    use std::sync::Mutex as StdMutex;
    // T1 joins T2, which spins until... no: T2 waits for a lock T1 holds while joining T2.
    let (verdict, _) = outcome(|| {
        let lock = Arc::new(fgvt_sync::Mutex::new(()));
        let guard_owner = Arc::new(StdMutex::new(None::<thread::JoinHandle<()>>));
        let _ = &guard_owner;
        let held = lock.lock().unwrap();
        let t = {
            let lock = Arc::clone(&lock);
            thread::spawn(move || drop(lock.lock().unwrap()))
        };
        // Joining a thread that waits for the lock this thread holds: stuck in every run.
        t.join().unwrap();
        drop(held);
    });
    assert_eq!(verdict, Verdict::NotLinearizable);
}

#[test]
fn a_thread_spawned_by_a_spawned_thread_runs_and_is_joined() {
    let (verdict, fails) = outcome(|| {
        let n = Arc::new(AtomicUsize::new(0));
        let outer = {
            let n = Arc::clone(&n);
            thread::spawn(move || {
                let inner = {
                    let n = Arc::clone(&n);
                    thread::spawn(move || n.fetch_add(1, AcqRel))
                };
                n.fetch_add(1, AcqRel);
                inner.join().unwrap()
            })
        };
        outer.join().unwrap();
        assert_eq!(n.load(Acquire), 2);
    });
    assert_eq!((verdict, fails), (Verdict::Linearizable, 0));
}

#[test]
fn spawning_more_threads_than_the_model_has_room_for_fails_saying_so() {
    let found = Model::new()
        .name("models")
        .max_threads(2)
        .localize(|| {
            let a = thread::spawn(|| ());
            let b = thread::spawn(|| ());
            a.join().unwrap();
            b.join().unwrap();
        })
        .unwrap();
    assert_eq!(found.report.verdict, Verdict::NotLinearizable);
    let text = fgvt_sync::report::render_text(&found.report, false);
    assert!(text.contains("raise the model's `max_threads`"), "{text}");
}

#[test]
fn outside_a_model_spawn_is_an_os_thread() {
    let n = Arc::new(AtomicUsize::new(0));
    let t = {
        let n = Arc::clone(&n);
        thread::spawn(move || n.fetch_add(5, SeqCst))
    };
    assert_eq!(t.join().unwrap(), 0);
    assert_eq!(n.load(SeqCst), 5);
}

#[test]
fn park_returns_once_unparked_and_sees_what_came_before() {
    // T1 parks until the flag is set; T0 sets it, then unparks T1. Whatever the order, T1
    // ends, and the data written before the flag is read whole after it (with a `Relaxed`
    // flag, T1 may see it set without parking: a real data race, which fgvt reports).
    let (verdict, fails) = outcome(|| {
        let data = Data::new();
        let flag = Arc::new(AtomicBool::new(false));
        let t = {
            let (data, flag) = (Arc::clone(&data), Arc::clone(&flag));
            thread::spawn(move || {
                while !flag.load(Acquire) {
                    thread::park();
                }
                data.0.with(|p| unsafe { *p })
            })
        };
        data.0.with_mut(|p| unsafe { *p = 5 });
        flag.store(true, Release);
        t.thread().unpark();
        assert_eq!(t.join().unwrap(), 5);
    });
    assert_eq!((verdict, fails), (Verdict::Linearizable, 0));
}

#[test]
fn a_park_that_nobody_unparks_never_returns() {
    let (verdict, _) = outcome(|| {
        let t = thread::spawn(thread::park);
        t.join().unwrap();
    });
    assert_ne!(verdict, Verdict::Linearizable);
}

/// Waits, when dropped, until the flag is set, then takes the lock: a destructor that spins for
/// another thread (as left-right's `WriteHandle` waits for its readers) and unwraps a lock.
struct WaitsWhenDropped(Arc<AtomicBool>, Arc<fgvt_sync::Mutex<i32>>);

impl Drop for WaitsWhenDropped {
    fn drop(&mut self) {
        while !self.0.load(Acquire) {
            fgvt_sync::hint::spin_loop();
        }
        *self.1.lock().unwrap() += 10;
    }
}

#[test]
fn a_destructor_that_waits_for_another_thread_ends_in_every_abandoned_run() {
    // The explorer abandons most runs midway, unwinding their threads: the body's destructor
    // then waits for a store the other thread has not made yet, so the other thread goes on
    // (it is not unwound at its store) and the destructor ends. It then takes a lock the body
    // held while it was unwound: fgvt's unwinding poisons nothing, or its `unwrap` would
    // panic inside a destructor (an abort).
    let (verdict, fails) = outcome(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let lock = Arc::new(fgvt_sync::Mutex::new(0));
        let waiter = WaitsWhenDropped(Arc::clone(&flag), Arc::clone(&lock));
        let t = {
            let flag = Arc::clone(&flag);
            thread::spawn(move || flag.store(true, Release))
        };
        let guard = lock.lock().unwrap();
        // A step with the lock held: a run abandoned here unwinds with the guard.
        let seen = flag.load(Relaxed);
        drop(guard);
        drop(waiter);
        t.join().unwrap();
        let _ = seen;
        assert_eq!(*lock.lock().unwrap(), 10);
    });
    assert_eq!((verdict, fails), (Verdict::Linearizable, 0));
}

/// The counts, labels and CDRS of `body`'s model, merged or unfolded.
fn shape<F: Fn() + Send + Sync + Clone + 'static>(body: F, merge: bool) -> String {
    let found = Model::new()
        .name("models")
        .merge(merge)
        .report_budget(None)
        .localize(body)
        .unwrap();
    let r = &found.report;
    format!(
        "{:?} leaves={} failing={} labels={:?} cdrs={}",
        r.verdict, r.tree.leaves, r.tree.failing_leaves, r.labels, r.cdrs_found
    )
}

#[test]
fn merging_a_models_states_keeps_its_counts_labels_and_cdrs() {
    // What a spawned thread was given (its spawner's context) and what a joined thread
    // returned (its log, read by `join`) must be in the fingerprint: a model whose outcome
    // depends on both, explored merged and unfolded, reports the same. (A waiting loop, such
    // as `park`'s, has no finite unfolding to compare with.)
    let given = || {
        let n = Arc::new(AtomicUsize::new(0));
        let seen = n.load(SeqCst);
        let t = {
            let n = Arc::clone(&n);
            thread::spawn(move || n.fetch_add(seen + 1, SeqCst))
        };
        let u = {
            let n = Arc::clone(&n);
            thread::spawn(move || {
                let inner = {
                    let n = Arc::clone(&n);
                    thread::spawn(move || n.load(SeqCst))
                };
                n.store(5, SeqCst);
                inner.join().unwrap()
            })
        };
        let (a, b) = (t.join().unwrap(), u.join().unwrap());
        assert!(a + b < 6, "a={a} b={b}");
    };
    assert_eq!(shape(given, true), shape(given, false));
    // Two points that differ only in what a finished thread read (so in what it returned): the
    // join must not find them merged.
    let returned = || {
        let n = Arc::new(AtomicUsize::new(0));
        let u = {
            let n = Arc::clone(&n);
            thread::spawn(move || n.load(SeqCst))
        };
        n.store(1, SeqCst);
        assert_eq!(u.join().unwrap(), 1, "the thread read before the store");
    };
    assert_eq!(shape(returned, true), shape(returned, false));
}

/// An atomic reached through a raw pointer, as lock-free code reaches a node another thread
/// may free.
struct Raw(*mut AtomicUsize);
unsafe impl Send for Raw {}

/// A thread that reads the atomic at `p` once: sound only while nobody frees it before.
fn read_in_a_thread(p: *mut AtomicUsize) -> thread::JoinHandle<()> {
    let raw = Raw(p);
    thread::spawn(move || {
        let raw = raw;
        // SAFETY: as long as the atomic is not freed before, which is what the tests try.
        unsafe { (*raw.0).load(SeqCst) };
    })
}

/// T0 frees a boxed atomic after a step of its own; T1 reads it through a pointer. Every run
/// where T0's step comes first frees the atomic before T1's read (the free is no step, so T0
/// reaches it before anyone else moves): that read is a use after free.
#[test]
fn reading_an_atomic_another_thread_freed_is_a_use_after_free() {
    let (verdict, text) = report_of(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let p = Box::into_raw(Box::new(AtomicUsize::new(7)));
        let reader = read_in_a_thread(p);
        flag.store(true, SeqCst);
        // SAFETY: `p` came from `Box::into_raw` and is freed once.
        drop(unsafe { Box::from_raw(p) });
        reader.join().unwrap();
    });
    assert_eq!(verdict, Verdict::NotLinearizable, "{text}");
    assert!(
        text.contains("what went wrong: use after free: T1 accesses `p#")
            && text.contains("`, which T0 dropped earlier in this run"),
        "{text}"
    );
}

/// The same with the free after the join, and a new box that takes the freed memory: no run
/// fails, the new atomic at the old place is not the freed one.
#[test]
fn freeing_after_the_join_and_reusing_the_memory_is_no_use_after_free() {
    let (verdict, text) = report_of(|| {
        let p = Box::into_raw(Box::new(AtomicUsize::new(7)));
        let reader = read_in_a_thread(p);
        reader.join().unwrap();
        // SAFETY: `p` came from `Box::into_raw` and is freed once.
        drop(unsafe { Box::from_raw(p) });
        let again = Box::new(AtomicUsize::new(8));
        assert_eq!(
            std::ptr::from_ref(&*again) as usize,
            p as usize,
            "the allocator reuses it"
        );
        assert_eq!(again.load(SeqCst), 8);
    });
    assert_eq!(verdict, Verdict::Linearizable, "{text}");
}

/// A model whose body forgets a clone of an `fgvt_sync::Arc` (`forget`), or gives one to a
/// thread that hands it back through `into_raw` and takes it back (or not, `take_back`).
fn arc_model(forget: bool, take_back: bool) -> (Verdict, String) {
    report_of(move || {
        let shared = fgvt_sync::Arc::new(AtomicUsize::new(0));
        let raw = {
            let shared = fgvt_sync::Arc::clone(&shared);
            thread::spawn(move || {
                shared.fetch_add(1, SeqCst);
                fgvt_sync::Arc::into_raw(shared) as usize
            })
        }
        .join()
        .unwrap();
        if take_back {
            // SAFETY: `raw` came from `into_raw` and is taken back once.
            drop(unsafe { fgvt_sync::Arc::from_raw(raw as *const AtomicUsize) });
        }
        if forget {
            std::mem::forget(fgvt_sync::Arc::clone(&shared));
        }
        assert_eq!(shared.load(SeqCst), 1);
    })
}

#[test]
fn an_arc_still_held_when_every_thread_has_returned_is_a_leak() {
    let (verdict, text) = arc_model(true, true);
    assert_eq!(verdict, Verdict::NotLinearizable, "{text}");
    assert!(
        text.contains("what went wrong: leak: the `Arc` made at sync/tests/it/models.rs:"),
        "{text}"
    );
    let (verdict, text) = arc_model(false, false);
    assert_eq!(
        verdict,
        Verdict::NotLinearizable,
        "an `into_raw` never taken back: {text}"
    );
    assert!(text.contains("is never freed"), "{text}");
}

#[test]
fn arcs_all_dropped_or_taken_back_are_no_leak() {
    let (verdict, text) = arc_model(false, true);
    assert_eq!(verdict, Verdict::Linearizable, "{text}");
}

/// Two threads that each store to their own atomic three times, each store followed by a
/// `SeqCst` fence, and a third that locks a mutex the others take too: most of their
/// interleavings differ only in the order of steps that commute (a fence commutes with the
/// other threads' steps).
fn mostly_independent() {
    let own = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
    let lock = Arc::new(fgvt_sync::Mutex::new(0));
    let threads: Vec<_> = (0..2)
        .map(|t| {
            let (own, lock) = (Arc::clone(&own), Arc::clone(&lock));
            thread::spawn(move || {
                for v in 1..=3 {
                    own[t].store(v, Release);
                    fence(SeqCst);
                }
                *lock.lock().unwrap() += 1;
            })
        })
        .collect();
    *lock.lock().unwrap() += 1;
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(own[0].load(Acquire) + own[1].load(Acquire), 6);
    assert_eq!(*lock.lock().unwrap(), 3);
}

#[test]
fn a_model_whose_steps_commute_runs_one_execution_per_class() {
    // A model is searched with the partial-order reduction first.
    let reduced = Model::new()
        .name("models")
        .localize(mostly_independent)
        .unwrap();
    let full = (Model::new().name("models").partial_order_reduction(false))
        .localize(mostly_independent)
        .unwrap();
    assert_eq!(reduced.report.verdict, Verdict::Linearizable);
    assert_eq!(full.report.verdict, Verdict::Linearizable);
    let (taken, all) = (reduced.report.tree.leaves, full.report.tree.leaves);
    eprintln!("{taken} runs, where the full tree has {all} leaves");
    assert!(taken * 10 < all, "{taken} runs of {all}");
}

/// A value published by a `Release` store of a flag, which the body waits for with a spin of
/// `Relaxed` loads and then an `Acquire` fence, while a third thread adds to a counter twice.
/// Under weak memory a turn of the spin may read the old flag after the new one was stored,
/// with no other thread moving in the turn.
fn waits_for_a_published_value() {
    let data = Arc::new(AtomicUsize::new(0));
    let flag = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (data, flag) = (Arc::clone(&data), Arc::clone(&flag));
        thread::spawn(move || {
            data.store(1, Relaxed);
            flag.store(true, Release);
        })
    };
    let counter = {
        let count = Arc::clone(&count);
        thread::spawn(move || {
            count.fetch_add(1, Relaxed);
            count.fetch_add(1, Relaxed);
        })
    };
    while !flag.load(Relaxed) {
        fgvt_sync::hint::spin_loop();
    }
    fence(Acquire);
    assert_eq!(data.load(Relaxed), 1);
    writer.join().unwrap();
    counter.join().unwrap();
    assert_eq!(count.load(Relaxed), 2);
}

#[test]
fn a_preemption_bounded_model_is_searched_with_the_reduction_too() {
    // Bounded partial-order reduction: fewer runs than the bounded tree's leaves, the same
    // verdict. A spin's turn that reads the old flag alone, where the bound keeps the other
    // threads from moving, is no livelock: the bounded full exploration does not look there
    // either.
    for bound in 0..3 {
        let model = Model::new().name("models").preemption_bound(bound);
        let reduced = model.clone().localize(waits_for_a_published_value).unwrap();
        let full = (model.partial_order_reduction(false))
            .localize(waits_for_a_published_value)
            .unwrap();
        assert_eq!(reduced.report.verdict, Verdict::Linearizable);
        assert_eq!(full.report.verdict, Verdict::Linearizable);
        let (taken, all) = (reduced.report.tree.leaves, full.report.tree.leaves);
        eprintln!("bound {bound}: {taken} runs, where the bounded tree has {all} leaves");
        assert!(taken < all, "bound {bound}: {taken} runs of {all}");
    }
}

/// A spawned thread spins on a flag the body never sets, while the body joins it: a livelock.
fn waits_for_a_flag_nobody_sets() {
    let flag = Arc::new(AtomicBool::new(false));
    let other = Arc::clone(&flag);
    let t = thread::spawn(move || {
        while !other.load(Acquire) {
            fgvt_sync::hint::spin_loop();
        }
    });
    flag.store(false, Release);
    t.join().unwrap();
}

#[test]
fn a_spin_that_a_join_waits_for_fails_within_any_preemption_bound() {
    // Leaving the spinner for the joining thread is no preemption the bound cuts: that thread
    // cannot move. Counted as one, at bound 0 every run was cut and the model passed with no
    // leaf at all.
    for bound in 0..3 {
        for reduce in [true, false] {
            let found = (Model::new().name("models").preemption_bound(bound))
                .partial_order_reduction(reduce)
                .localize(waits_for_a_flag_nobody_sets)
                .unwrap();
            assert_eq!(
                found.report.verdict,
                Verdict::NotLinearizable,
                "bound {bound}"
            );
            assert!(
                found.report.tree.stuck_leaves > 0,
                "bound {bound}: no livelock"
            );
        }
    }
}

/// Each thread publishes a flag and then spins until the other's is set: the runs end only
/// when each is preempted once after its store.
fn hand_in_hand() {
    let (mine, theirs) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let t = {
        let (mine, theirs) = (Arc::clone(&mine), Arc::clone(&theirs));
        thread::spawn(move || {
            while !mine.load(Acquire) {
                fgvt_sync::hint::spin_loop();
            }
            theirs.store(true, Release);
        })
    };
    mine.store(true, Release);
    while !theirs.load(Acquire) {
        fgvt_sync::hint::spin_loop();
    }
    t.join().unwrap();
}

#[test]
fn a_bound_that_cuts_every_run_gives_no_verdict() {
    // At bound 0 each thread spins where only a preemption lets the other go on: no run ends,
    // so nothing passed, and the report says to raise the bound. At bound 1 the model passes.
    let cut = (Model::new().name("models").preemption_bound(0))
        .localize(hand_in_hand)
        .unwrap();
    assert_eq!(cut.report.tree.leaves, 0);
    assert_eq!(cut.report.verdict, Verdict::Inconclusive);
    assert!(
        cut.report.notes[0].contains("raise the bound"),
        "{:?}",
        cut.report.notes
    );
    let found = (Model::new().name("models").preemption_bound(1))
        .localize(hand_in_hand)
        .unwrap();
    assert_eq!(found.report.verdict, Verdict::Linearizable);
}
