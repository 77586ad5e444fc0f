//! The objects of the GenMC bench as Rust code on fgvt-sync (Peterson's lock is the fixture's,
//! `fgvt_fixtures_rust::peterson`), with the orderings the C11 programs beside them (`c/`)
//! declare: `run.py` runs each test of `tests/` here and the matching C
//! program under GenMC, side by side.
//!
//! Every object keeps its data in `UnsafeCell`s, as the C programs keep theirs in plain
//! variables, so a missing synchronization is a data race in both tools.

use fgvt_fixtures_rust::peterson::{ReleaseAcquirePeterson, SeqCstPeterson};
use fgvt_sync::atomic::{fence, AtomicPtr, AtomicUsize, Ordering::*};
use fgvt_sync::cell::UnsafeCell;
use fgvt_sync::hint::spin_loop;

/// A Treiber stack node: its item and next pointer are plain data, published by the push's
/// compare-exchange.
struct Node {
    item: UnsafeCell<i64>,
    next: UnsafeCell<*mut Node>,
}

/// A Treiber stack with the orderings Rust code declares: `Acquire` loads, `AcqRel`
/// compare-exchanges. `BUGGY`: the push stores the new top instead of a compare-exchange (a
/// concurrent push is lost).
pub struct Treiber<const BUGGY: bool> {
    top: AtomicPtr<Node>,
}

// SAFETY: nodes are shared by pointer; the test checks every plain access for data races.
unsafe impl<const BUGGY: bool> Sync for Treiber<BUGGY> {}

#[fgvt_sync::operations]
impl<const BUGGY: bool> Treiber<BUGGY> {
    fn new() -> Self {
        Treiber {
            top: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    pub fn push(&self, v: i64) {
        // Nodes are never freed, as in the C program: no reuse, no ABA.
        let n = Box::leak(Box::new(Node {
            item: UnsafeCell::new(v),
            next: UnsafeCell::new(std::ptr::null_mut()),
        }));
        loop {
            let top = self.top.load(Acquire);
            // SAFETY: the node is not published yet.
            n.next.with_mut(|p| unsafe { *p = top });
            if BUGGY {
                self.top.store(n, Release);
                return;
            }
            if self.top.compare_exchange(top, n, AcqRel, Acquire).is_ok() {
                return;
            }
            spin_loop();
        }
    }

    pub fn pop(&self) -> Option<i64> {
        loop {
            let top = self.top.load(Acquire);
            if top.is_null() {
                return None;
            }
            // SAFETY: nodes are never freed; their fields were written before publishing.
            let node = unsafe { &*top };
            let next = node.next.with(|p| unsafe { *p });
            if self
                .top
                .compare_exchange(top, next, AcqRel, Acquire)
                .is_ok()
            {
                return Some(node.item.with(|p| unsafe { *p }));
            }
            spin_loop();
        }
    }
}

/// A single-producer single-consumer ring of two slots. `RELEASE_ACQUIRE`: the indices are
/// published `Release` and read `Acquire` (correct); else `Relaxed` (the slot's data races).
pub struct Ring<const RELEASE_ACQUIRE: bool> {
    slots: [UnsafeCell<i64>; 2],
    head: AtomicUsize,
    tail: AtomicUsize,
}

// SAFETY: a slot is written by the producer before the tail publishes it and read by the
// consumer before the head frees it; the test checks exactly that.
unsafe impl<const RELEASE_ACQUIRE: bool> Sync for Ring<RELEASE_ACQUIRE> {}

impl<const RELEASE_ACQUIRE: bool> Ring<RELEASE_ACQUIRE> {
    fn orders() -> (fgvt_sync::atomic::Ordering, fgvt_sync::atomic::Ordering) {
        if RELEASE_ACQUIRE {
            (Release, Acquire)
        } else {
            (Relaxed, Relaxed)
        }
    }
}

#[fgvt_sync::operations]
impl<const RELEASE_ACQUIRE: bool> Ring<RELEASE_ACQUIRE> {
    fn new() -> Self {
        Ring {
            slots: [UnsafeCell::new(0), UnsafeCell::new(0)],
            head: AtomicUsize::new(0),
            tail: AtomicUsize::new(0),
        }
    }

    pub fn push(&self, v: i64) -> bool {
        let (publish, observe) = Self::orders();
        let tail = self.tail.load(Relaxed);
        if tail - self.head.load(observe) == 2 {
            return false;
        }
        // SAFETY: the slot is free (see the `Sync` impl).
        self.slots[tail % 2].with_mut(|p| unsafe { *p = v });
        self.tail.store(tail + 1, publish);
        true
    }

    pub fn pop(&self) -> Option<i64> {
        let (publish, observe) = Self::orders();
        let head = self.head.load(Relaxed);
        if self.tail.load(observe) == head {
            return None;
        }
        // SAFETY: the slot is full (see the `Sync` impl).
        let v = self.slots[head % 2].with(|p| unsafe { *p });
        self.head.store(head + 1, publish);
        Some(v)
    }
}

/// Boehm's seqlock with `Relaxed` atomic data and the two fences that make it correct.
pub struct Seqlock {
    seq: AtomicUsize,
    data: [AtomicUsize; 2],
}

#[fgvt_sync::operations]
impl Seqlock {
    fn new() -> Self {
        Seqlock {
            seq: AtomicUsize::new(0),
            data: [AtomicUsize::new(0), AtomicUsize::new(0)],
        }
    }

    pub fn write(&self, v: usize) {
        let s = self.seq.load(Relaxed);
        self.seq.store(s + 1, Relaxed);
        fence(Release);
        self.data[0].store(v, Relaxed);
        self.data[1].store(v, Relaxed);
        self.seq.store(s + 2, Release);
    }

    pub fn read(&self) -> (usize, usize) {
        loop {
            let s1 = self.seq.load(Acquire);
            if s1 % 2 == 0 {
                let a = self.data[0].load(Relaxed);
                let b = self.data[1].load(Relaxed);
                fence(Acquire);
                if self.seq.load(Relaxed) == s1 {
                    return (a, b);
                }
            }
            spin_loop();
        }
    }
}

/// The bench's objects, by the names the tests give.
pub type TreiberStack = Treiber<false>;
/// The Treiber stack whose push stores the top.
pub type BuggyTreiberStack = Treiber<true>;
/// The ring, `Release`/`Acquire`.
pub type RingReleaseAcquire = Ring<true>;
/// The ring, `Relaxed`.
pub type RingRelaxed = Ring<false>;

fgvt_sync::main!(
    TreiberStack,
    BuggyTreiberStack,
    SeqCstPeterson,
    ReleaseAcquirePeterson,
    RingReleaseAcquire,
    RingRelaxed,
    Seqlock
);
