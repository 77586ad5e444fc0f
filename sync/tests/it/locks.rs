//! `Mutex` and `RwLock` as drop-ins for `std`'s: poisoning, `try_lock`, `get_mut` and
//! `into_inner`, names given with `.named`, and stuck leaves that say where each holder took
//! its lock.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use fgvt_sync::report::{LeafKind, Tree};
use fgvt_sync::{
    unknown, Call, IntoValue, Mutex, Object, RwLock, Shared, Test, TryLockError, Value,
};

/// The values the operations named `op` returned, over every leaf of `tree`.
fn returns(tree: &Tree, op: &str) -> Vec<Value> {
    let mut seen = Vec::new();
    for (_, leaf, _) in tree.leaves() {
        let ops = leaf.history.operations().expect("a well-formed history");
        for o in ops.iter().filter(|o| o.call.op == op) {
            if let Some(value) = o.ret.as_ref().and_then(|r| r.value.as_ref()) {
                if !seen.contains(value) {
                    seen.push(value.clone());
                }
            }
        }
    }
    seen.sort_by_key(|v| format!("{v:?}"));
    seen
}

/// A counter behind a lock, whose `boom()` panics while holding it and catches the panic.
struct Poisonable(Mutex<i64>);

impl Object for Poisonable {
    fn new() -> Self {
        Poisonable(Mutex::new(0))
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match call.op.as_str() {
            "boom" => {
                let caught = catch_unwind(AssertUnwindSafe(|| {
                    let _held = self.0.lock().unwrap();
                    panic!("boom while holding the lock");
                }));
                Ok(caught.is_err().into_value())
            }
            // Whether the lock is poisoned, as `lock()` says it: `Err` still has the guard.
            "check" => match self.0.lock() {
                Ok(_) => Ok(false.into_value()),
                Err(poisoned) => {
                    assert_eq!(
                        *poisoned.into_inner(),
                        0,
                        "the value stays behind the poison"
                    );
                    Ok(true.into_value())
                }
            },
            "peek" => Ok(self.0.is_poisoned().into_value()),
            _ => Err(unknown(call)),
        }
    }
}

#[test]
fn a_holder_that_panics_poisons_the_lock_for_the_threads_after_it() {
    let tree = Test::<Poisonable>::new("poison")
        .thread(&["boom()"])
        .thread(&["check()"])
        .explore()
        .unwrap();
    let stats = tree.stats();
    // The panic is caught: no fault, and the lock is free again for `check()`.
    assert_eq!((stats.fault, stats.stuck), (0, 0), "{stats:?}");
    // `check()` before `boom()` sees a sound lock, after it a poisoned one with the value.
    assert_eq!(
        returns(&tree, "check"),
        [Value::Bool(false), Value::Bool(true)]
    );
    assert_eq!(returns(&tree, "boom"), [Value::Bool(true)]);
}

#[test]
fn is_poisoned_is_a_step_that_sees_the_poison_after_the_panic() {
    let tree = Test::<Poisonable>::new("peek")
        .thread(&["boom()"])
        .thread(&["peek()"])
        .explore()
        .unwrap();
    assert_eq!(
        returns(&tree, "peek"),
        [Value::Bool(false), Value::Bool(true)]
    );
    // `peek()` reads the flag in one step, before or after `boom()`'s lock step: two
    // threads of one step each, two orders.
    assert_eq!(tree.stats().leaves, 2);
    let (steps, _) = tree.follow(&[0, 1]).unwrap();
    assert_eq!(steps[1].to_string(), "T1 read Mutex#0 = poisoned");
}

#[test]
fn poisoning_works_on_real_threads_as_std_does() {
    let count = Arc::new(Mutex::new(1));
    let held = Arc::clone(&count);
    let panicked = std::thread::spawn(move || {
        let _guard = held.lock().unwrap();
        panic!("the holder panics");
    })
    .join();
    assert!(panicked.is_err());
    assert!(count.is_poisoned());
    let guard = count.lock().unwrap_err().into_inner();
    assert_eq!(*guard, 1, "the poisoned lock keeps its value");
    drop(guard);
    assert!(matches!(count.try_lock(), Err(TryLockError::Poisoned(_))));
    count.clear_poison();
    assert_eq!(*count.lock().unwrap(), 1, "a cleared lock is sound again");
    let held = Arc::clone(&count);
    let _ = std::thread::spawn(move || {
        let _guard = held.lock().unwrap();
        panic!("the holder panics again");
    })
    .join();
    let mut count = Arc::into_inner(count).unwrap();
    assert_eq!(*count.get_mut().unwrap_err().into_inner(), 1);
    assert_eq!(count.into_inner().unwrap_err().into_inner(), 1);

    let table = Arc::new(RwLock::new(5));
    let reader = Arc::clone(&table);
    let _ = std::thread::spawn(move || {
        let _guard = reader.read().unwrap();
        panic!("a reader panics");
    })
    .join();
    assert!(
        !table.is_poisoned(),
        "a reader does not poison the lock, as in std"
    );
    let writer = Arc::clone(&table);
    let _ = std::thread::spawn(move || {
        let _guard = writer.write().unwrap();
        panic!("a writer panics");
    })
    .join();
    assert!(table.is_poisoned());
    assert_eq!(*table.read().unwrap_err().into_inner(), 5);
    assert!(matches!(table.try_write(), Err(TryLockError::Poisoned(_))));
    table.clear_poison();
    assert!(!table.is_poisoned());
    assert_eq!(*table.write().unwrap(), 5);
}

#[test]
fn sound_locks_give_their_values_back() {
    let mut count = Mutex::new(3);
    *count.get_mut().unwrap() += 1;
    assert_eq!(*count.try_lock().unwrap(), 4);
    assert_eq!(count.into_inner().unwrap(), 4);
    let mut table = RwLock::new(vec![1]);
    table.get_mut().unwrap().push(2);
    {
        let first = table.try_read().unwrap();
        let second = table.try_read().unwrap();
        assert_eq!(
            (first.len(), second.len()),
            (2, 2),
            "readers share the lock"
        );
        assert!(matches!(table.try_write(), Err(TryLockError::WouldBlock)));
    }
    table.try_write().unwrap().push(3);
    assert_eq!(table.into_inner().unwrap(), [1, 2, 3]);
    let held = Mutex::new(0);
    let _guard = held.lock().unwrap();
    assert!(matches!(held.try_lock(), Err(TryLockError::WouldBlock)));
}

/// `hold()` takes the lock and adds 1; `try()` adds 10 if it can have the lock at once.
struct Attempt(Mutex<i64>);

impl Object for Attempt {
    fn new() -> Self {
        Attempt(Mutex::new(0))
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match call.op.as_str() {
            "hold" => {
                *self.0.lock().unwrap() += 1;
                Ok(Value::Unit)
            }
            "try" => match self.0.try_lock() {
                Ok(mut count) => {
                    *count += 10;
                    Ok(true.into_value())
                }
                Err(TryLockError::WouldBlock) => Ok(false.into_value()),
                Err(TryLockError::Poisoned(_)) => Err("poisoned".to_string()),
            },
            "get" => Ok((*self.0.lock().unwrap()).into_value()),
            _ => Err(unknown(call)),
        }
    }
}

#[test]
fn try_lock_is_one_step_that_sees_the_lock_held_and_never_waits() {
    let tree = Test::<Attempt>::new("try_lock")
        .thread(&["hold()"])
        .thread(&["try()"])
        .finally(&["get()"])
        .explore()
        .unwrap();
    // Once T0 holds the lock, T1's attempt is a step all the same: a read of the lock.
    let (steps, _) = tree.follow(&[0, 1]).unwrap();
    let attempt = steps.last().unwrap();
    assert_eq!(attempt.thread, 1);
    assert_eq!(attempt.kind, fgvt_sync::report::EventKind::Read);
    assert_eq!(attempt.value, "held (try_lock would block)");
    assert_eq!(attempt.location, "Mutex#0");
    assert_eq!(
        returns(&tree, "try"),
        [Value::Bool(false), Value::Bool(true)]
    );
    // The attempt that failed left the count alone.
    assert_eq!(returns(&tree, "get"), [Value::Int(1), Value::Int(11)]);
    assert_eq!(tree.stats().stuck, 0, "an attempt never waits");
}

/// Two locks taken in opposite orders, named by hand.
struct TwoLocks {
    locks: [Mutex<i64>; 2],
}

impl Object for TwoLocks {
    fn new() -> Self {
        TwoLocks {
            locks: [
                Mutex::new(0).named("locks[0]"),
                Mutex::new(0).named("locks[1]"),
            ],
        }
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        let (first, second) = match call.op.as_str() {
            "ab" => (&self.locks[0], &self.locks[1]),
            "ba" => (&self.locks[1], &self.locks[0]),
            _ => return Err(unknown(call)),
        };
        let mut x = first.lock().unwrap();
        let mut y = second.lock().unwrap();
        *x += 1;
        *y += 1;
        Ok(Value::Unit)
    }
}

/// The 1-based line of this file that contains `text`.
fn line_of(text: &str) -> usize {
    include_str!("locks.rs")
        .lines()
        .position(|l| l.contains(text))
        .expect("the line is in this file")
        + 1
}

#[test]
fn a_deadlock_names_where_each_holder_took_its_lock() {
    let tree = Test::<TwoLocks>::new("deadlock")
        .thread(&["ab()"])
        .thread(&["ba()"])
        .explore()
        .unwrap();
    let first = format!(
        "locks.rs:{}:",
        line_of("let mut x = first.lock().unwrap();")
    );
    let (_, leaf, _) = tree
        .leaves()
        .find(|(_, l, _)| l.kind == LeafKind::Stuck)
        .expect("a deadlock");
    let reasons: Vec<&str> = leaf.waiting.iter().map(|w| w.reason.as_str()).collect();
    // Each thread took its first lock on the `first.lock()` line and waits on the next one.
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(
        reasons[0].starts_with("waits for locks[1]#1 held by T1 (taken at ")
            && reasons[0].contains(&first),
        "{reasons:?}"
    );
    assert!(
        reasons[1].starts_with("waits for locks[0]#0 held by T0 (taken at ")
            && reasons[1].contains(&first),
        "{reasons:?}"
    );
}

#[test]
fn named_locks_are_named_in_the_report_races() {
    let found = Test::<TwoLocks>::new("deadlock_report")
        .thread(&["ab()"])
        .thread(&["ba()"])
        .localize()
        .unwrap();
    assert_eq!(found.report.verdict, fgvt_sync::Verdict::NotLinearizable);
    let targets: Vec<&str> = found
        .report
        .cdrs
        .iter()
        .flat_map(|c| &c.nodes)
        .flat_map(|n| &n.races)
        .map(|r| r.target.as_str())
        .collect();
    assert!(!targets.is_empty());
    assert!(
        targets
            .iter()
            .all(|t| *t == "locks[0]#0" || *t == "locks[1]#1"),
        "{targets:?}"
    );
    // The stuck run's report says where the holders took their locks, too.
    let waiting = &found.report.cdrs[0].witness.waiting;
    assert!(
        waiting.iter().all(|w| w.reason.contains("(taken at ")),
        "{waiting:?}"
    );
}

/// A reader-writer lock named by hand, with a cell under it.
struct NamedTable(RwLock<Shared<i64>>);

impl Object for NamedTable {
    fn new() -> Self {
        NamedTable(RwLock::new(Shared::new(0).named("cell")).named("table"))
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match call.op.as_str() {
            "upgrade" => {
                let _reading = self.0.read().unwrap();
                let _writing = self.0.write().unwrap();
                Ok(Value::Unit)
            }
            _ => Err(unknown(call)),
        }
    }
}

#[test]
fn a_reader_asking_to_write_waits_for_itself_where_it_read() {
    let tree = Test::<NamedTable>::new("upgrade")
        .thread(&["upgrade()"])
        .explore()
        .unwrap();
    let (_, leaf, _) = tree.leaves().next().unwrap();
    assert_eq!(leaf.kind, LeafKind::Stuck);
    let reason = &leaf.waiting[0].reason;
    let read_at = format!(
        "locks.rs:{}:",
        line_of("let _reading = self.0.read().unwrap();")
    );
    assert!(
        reason.starts_with("waits for table#1 held by readers T0 (taken at ")
            && reason.contains(&read_at),
        "{reason}"
    );
}

/// A lock whose operations are `acquire()` and `release()`: a CAS spin, and a store. A thread
/// holds it across calls, so the `self` spec's serial runs meet an `acquire` that spins forever
/// (the lock is held by an earlier call), which they must take for blocking, not run forever.
struct SpinLock {
    held: fgvt_sync::atomic::AtomicBool,
}

impl Object for SpinLock {
    fn new() -> Self {
        SpinLock {
            held: fgvt_sync::atomic::AtomicBool::new(false),
        }
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        use fgvt_sync::atomic::Ordering::SeqCst;
        match call.op.as_str() {
            "acquire" => {
                while (self.held.compare_exchange(false, true, SeqCst, SeqCst)).is_err() {
                    fgvt_sync::hint::spin_loop();
                }
                Ok(Value::Unit)
            }
            "release" => {
                self.held.store(false, SeqCst);
                Ok(Value::Unit)
            }
            _ => Err(unknown(call)),
        }
    }
}

#[test]
fn a_serial_spin_on_a_lock_an_earlier_call_holds_blocks_the_self_spec() {
    let threads = |t: Test<SpinLock>| t.thread(&["acquire()", "release()"]).thread(&["acquire()"]);
    let found = threads(Test::new("spin")).localize().unwrap();
    assert_eq!(
        found.report.verdict,
        fgvt_sync::report::Verdict::Linearizable
    );
    // As the built-in lock spec judges it.
    let by_lock = threads(Test::new("spin")).spec("mutex").localize().unwrap();
    assert_eq!(by_lock.report.verdict, found.report.verdict);
    assert_eq!(by_lock.report.labels, found.report.labels);
}
