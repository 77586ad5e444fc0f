//! The atomics as drop-ins for `std::sync::atomic`: every width, `fetch_update` as `std` makes
//! it (a read, then a CAS per attempt), read-modify-writes shown `old → new`, fences that are
//! no steps, names given with `.named` in the report's races, and `std`'s deprecated
//! `compare_and_swap`.

use std::cell::Cell;

use fgvt_sync::atomic::{
    compiler_fence, fence, AtomicBool, AtomicI16, AtomicI32, AtomicI64, AtomicI8, AtomicIsize,
    AtomicPtr, AtomicU16, AtomicU32, AtomicU64, AtomicU8, AtomicUsize,
    Ordering::{Acquire, Relaxed, Release, SeqCst},
};
use fgvt_sync::report::{EventKind, Tree};
use fgvt_sync::{unknown, Call, IntoValue, Object, Test, Value};

#[test]
fn every_width_of_std_is_here_and_wraps_as_std_does() {
    let a = AtomicU8::new(250);
    assert_eq!(a.fetch_add(10, SeqCst), 250);
    assert_eq!(a.load(SeqCst), 4, "u8 wraps");
    let b = AtomicI8::new(-128);
    assert_eq!(b.fetch_sub(1, SeqCst), -128);
    assert_eq!(b.load(SeqCst), 127, "i8 wraps");
    let c = AtomicU16::new(0b1100);
    assert_eq!(c.fetch_nand(0b1010, SeqCst), 0b1100);
    assert_eq!(c.load(SeqCst), !0b1000);
    let d = AtomicI16::new(3);
    assert_eq!(d.fetch_max(9, SeqCst), 3);
    assert_eq!(d.fetch_min(-2, SeqCst), 9);
    assert_eq!(d.into_inner(), -2);
    let mut e = AtomicU32::default();
    *e.get_mut() = 5;
    assert_eq!(e.fetch_xor(1, SeqCst), 5);
    assert_eq!(e.swap(7, SeqCst), 4);
    let f = AtomicI32::from(-1);
    assert_eq!(f.compare_exchange_weak(-1, 1, SeqCst, Relaxed), Ok(-1));
    assert_eq!(f.compare_exchange(-1, 2, SeqCst, Relaxed), Err(1));
    let g = AtomicU64::new(1);
    assert_eq!(g.fetch_or(6, SeqCst), 1);
    assert_eq!(g.fetch_and(3, SeqCst), 7);
    assert_eq!(g.load(SeqCst), 3);
    assert_eq!(AtomicI64::new(-5).into_inner(), -5);
    assert_eq!(AtomicUsize::new(usize::MAX).into_inner(), usize::MAX);
    assert_eq!(AtomicIsize::new(isize::MIN).into_inner(), isize::MIN);
    let h = AtomicBool::new(true);
    assert!(h.fetch_not(SeqCst));
    assert!(!h.fetch_nand(true, SeqCst));
    assert!(h.load(SeqCst), "!(false & true)");
    let mut slots = [0u64; 2];
    let p = AtomicPtr::new(slots.as_mut_ptr());
    assert_eq!(p.fetch_ptr_add(1, SeqCst), slots.as_mut_ptr());
    assert_eq!(p.load(SeqCst), slots.as_mut_ptr().wrapping_add(1));
    assert!(AtomicPtr::<u64>::default().load(SeqCst).is_null());
}

#[test]
fn fetch_update_returns_what_std_returns() {
    let a = AtomicU16::new(7);
    assert_eq!(a.fetch_update(SeqCst, SeqCst, |v| v.checked_add(1)), Ok(7));
    assert_eq!(a.load(SeqCst), 8);
    assert_eq!(a.fetch_update(SeqCst, SeqCst, |_| None), Err(8));
    let b = AtomicBool::new(false);
    assert_eq!(b.fetch_update(SeqCst, SeqCst, |v| Some(!v)), Ok(false));
    assert!(b.load(SeqCst));
    let mut x = 0u8;
    let p = AtomicPtr::<u8>::new(std::ptr::null_mut());
    let at: *mut u8 = &mut x;
    assert_eq!(
        p.fetch_update(SeqCst, SeqCst, |old| old.is_null().then_some(at)),
        Ok(std::ptr::null_mut())
    );
    assert_eq!(
        p.fetch_update(SeqCst, SeqCst, |old| old.is_null().then_some(at)),
        Err(at)
    );
}

/// `double()` doubles the value with `fetch_update`, counting the closure's calls; `inc()`
/// adds one.
struct Doubler(AtomicI64);

impl Object for Doubler {
    fn new() -> Self {
        Doubler(AtomicI64::new(1))
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match call.op.as_str() {
            "double" => {
                let calls = Cell::new(0);
                let old = self.0.fetch_update(SeqCst, SeqCst, |v| {
                    calls.set(calls.get() + 1);
                    Some(v * 2)
                });
                Ok((old.unwrap(), calls.get()).into_value())
            }
            "inc" => Ok(self.0.fetch_add(1, SeqCst).into_value()),
            "get" => Ok(self.0.load(SeqCst).into_value()),
            _ => Err(unknown(call)),
        }
    }
}

/// Every run's (`double()`'s result, the final value), sorted.
fn double_runs(tree: &Tree) -> Vec<(Value, Value)> {
    let mut runs: Vec<(Value, Value)> = tree
        .leaves()
        .map(|(_, leaf, _)| {
            let ops = leaf.history.operations().unwrap();
            let ret = |op: &str| {
                let o = ops.iter().find(|o| o.call.op == op).unwrap();
                o.ret.as_ref().unwrap().value.clone().unwrap()
            };
            (ret("double"), ret("get"))
        })
        .collect();
    runs.sort_by_key(|r| format!("{r:?}"));
    runs.dedup();
    runs
}

#[test]
fn fetch_update_calls_its_closure_again_when_another_thread_wrote_in_between() {
    let tree = Test::<Doubler>::new("fetch_update")
        .thread(&["double()"])
        .thread(&["inc()"])
        .finally(&["get()"])
        .explore()
        .unwrap();
    let pair = |a: i64, b: i64| Value::Tuple(vec![Value::Int(a), Value::Int(b)]);
    // `inc()` before the read: 2 doubled once; after the CAS: 1 doubled once, then 3; between
    // the read and the CAS: the CAS fails on 2, the closure runs again and doubles 2.
    assert_eq!(
        double_runs(&tree),
        [
            (pair(1, 1), Value::Int(3)),
            (pair(2, 1), Value::Int(4)),
            (pair(2, 2), Value::Int(4)),
        ]
    );
    // The failed attempt is a CAS step of its own: read, failed CAS, CAS.
    let (steps, _) = tree.follow(&[0, 1, 0, 0]).unwrap();
    let kinds: Vec<EventKind> = steps.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [
            EventKind::Read,
            EventKind::Write,
            EventKind::Cas { success: false },
            EventKind::Cas { success: true }
        ]
    );
}

/// A sequence number, bumped with read-modify-writes.
struct Seq {
    seq: AtomicU64,
    flag: AtomicBool,
}

impl Object for Seq {
    fn new() -> Self {
        Seq {
            seq: AtomicU64::new(0),
            flag: AtomicBool::new(false),
        }
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match call.op.as_str() {
            "bump" => {
                self.seq.fetch_add(1, SeqCst);
                self.seq.fetch_max(5, SeqCst);
                self.seq.swap(2, SeqCst);
                self.flag.fetch_not(SeqCst);
                Ok(Value::Unit)
            }
            _ => Err(unknown(call)),
        }
    }
}

#[test]
fn a_read_modify_write_shows_the_value_it_found_and_the_value_it_left() {
    let tree = Test::<Seq>::new("rmw")
        .thread(&["bump()"])
        .explore()
        .unwrap();
    let (steps, _) = tree.nth_leaf(0).unwrap();
    let shown: Vec<String> = steps.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        shown,
        [
            "T0 write seq#0 = 0 → 1 (fetch_add 1)",
            "T0 write seq#0 = 1 → 5 (fetch_max 5)",
            "T0 write seq#0 = 5 → 2 (swap)",
            "T0 write flag#1 = false → true (fetch_xor true)",
        ]
    );
}

/// `store()` writes once; `fenced()` writes once between fences.
struct Fenced(AtomicI32);

impl Object for Fenced {
    fn new() -> Self {
        Fenced(AtomicI32::new(0))
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match call.op.as_str() {
            "store" => {
                self.0.store(1, SeqCst);
                Ok(Value::Unit)
            }
            "fenced" => {
                fence(SeqCst);
                self.0.store(1, SeqCst);
                compiler_fence(SeqCst);
                Ok(Value::Unit)
            }
            _ => Err(unknown(call)),
        }
    }
}

#[test]
fn fences_are_no_steps() {
    let stats = |op: &str| {
        let stats = Test::<Fenced>::new("fence")
            .thread(&[op])
            .thread(&[op])
            .explore()
            .unwrap()
            .stats();
        (stats.nodes, stats.leaves, stats.max_depth)
    };
    // Two threads of one write each: the same tree, fences or not.
    assert_eq!(stats("fenced()"), stats("store()"));
    assert_eq!(stats("store()"), (5, 2, 2));
}

/// A lost update on a cell of an array, named by hand.
struct Cells {
    d: [AtomicI64; 1],
}

impl Object for Cells {
    fn new() -> Self {
        Cells {
            d: [AtomicI64::new(0).named("d[0]")],
        }
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match call.op.as_str() {
            "inc" => {
                let v = self.d[0].load(SeqCst);
                self.d[0].store(v + 1, SeqCst);
                Ok(Value::Unit)
            }
            "get" => Ok(self.d[0].load(SeqCst).into_value()),
            _ => Err(unknown(call)),
        }
    }
}

#[test]
fn a_named_atomic_is_named_in_the_race_text() {
    let found = Test::<Cells>::new("named_cells")
        .thread(&["inc()"])
        .thread(&["inc()"])
        .finally(&["get()"])
        .localize()
        .unwrap();
    // Read with `fgvt_sync`'s own report types: no second dependency.
    assert_eq!(found.report.verdict, fgvt_sync::Verdict::NotLinearizable);
    let races = &found.report.cdrs[0].nodes[0].races;
    assert!(!races.is_empty());
    assert!(races.iter().all(|r| r.target == "d[0]#0"), "{races:?}");
    let text = fgvt_sync::report::render_text(&found.report, false);
    assert!(text.contains("T1 read d[0]#0 → 0 at "), "{text}");
}

/// Issue 42: `compare_and_swap`, as `std` had it: the value found, whether or not it wrote.
#[test]
#[allow(deprecated)]
fn compare_and_swap_returns_the_value_it_found() {
    let a = AtomicI64::new(1);
    assert_eq!(a.compare_and_swap(1, 2, SeqCst), 1);
    assert_eq!(a.compare_and_swap(1, 3, SeqCst), 2);
    assert_eq!(a.load(SeqCst), 2);
}

/// A counter behind spin 0.5's lock, written with `compare_and_swap` as spin 0.5 wrote it:
/// with `Acquire` on the lock and `Release` on the unlock every run passes; with `Relaxed`
/// on the lock the increment may read a stale count.
struct SwapLocked<const ACQUIRE: bool> {
    lock: AtomicBool,
    count: AtomicI64,
}

impl<const ACQUIRE: bool> Object for SwapLocked<ACQUIRE> {
    fn new() -> Self {
        SwapLocked {
            lock: AtomicBool::new(false),
            count: AtomicI64::new(0),
        }
    }

    #[allow(deprecated)]
    fn call(&self, call: &Call) -> Result<Value, String> {
        match call.op.as_str() {
            "inc" => {
                let order = if ACQUIRE { Acquire } else { Relaxed };
                while self.lock.compare_and_swap(false, true, order) {
                    fgvt_sync::hint::spin_loop();
                }
                let n = self.count.load(Relaxed);
                self.count.store(n + 1, Relaxed);
                self.lock.store(false, Release);
                Ok(Value::Unit)
            }
            "get" => Ok(self.count.load(SeqCst).into_value()),
            _ => Err(unknown(call)),
        }
    }
}

#[test]
fn a_lock_taken_by_compare_and_swap_is_explored_under_weak_memory() {
    let found = crate::common::two_increments::<SwapLocked<true>>();
    assert_eq!(found.verdict, fgvt_sync::Verdict::Linearizable);
    assert_eq!(found.partial, None);
    let relaxed = crate::common::two_increments::<SwapLocked<false>>();
    assert_eq!(relaxed.verdict, fgvt_sync::Verdict::NotLinearizable);
    let text = fgvt_sync::report::render_text(&relaxed, false);
    // The stale read of the count is the victim; the CAS of `compare_and_swap`'s line, the
    // cause, is named beside it.
    assert!(
        text.contains(
            "the ordering that decides it: make the compare-exchange on lock#0 at \
             sync/tests/it/atomics.rs:"
        ) && text.contains("Acquire (was Relaxed)"),
        "{text}"
    );
}
