//! The weak-memory fixtures on loom's types (message passing, the seqlock with `Relaxed` cells,
//! the Treiber stack whose push publishes `Relaxed`), each buggy and corrected, and the test
//! bodies loom's model runs: an assertion a user would write at the end of each execution.
//!
//! fgvt runs the fixtures themselves (`fgvt_fixtures_rust::{message_passing, fenced_seqlock,
//! release_stack}`); these are the same text on `loom::sync::atomic` and `loom::cell`
//! (plain data in `UnsafeCell`s, as the fixtures keep it, and the bench's arena for the stack's
//! nodes), with the buggy and corrected versions told apart by a parameter where the fixtures
//! have two types.

use std::ptr::null_mut;

use loom::cell::UnsafeCell;
use loom::hint::spin_loop;
use loom::sync::atomic::{fence, AtomicBool, AtomicI64, AtomicPtr, AtomicU64, Ordering};
use loom::sync::Arc;
use loom::thread;

use crate::arena::Arena;
use crate::cases::{count_execution, executions_outcome, Outcome, Weak};
use crate::invariants::{check_conserved, check_pair, check_published};

/// Message passing (`RelaxedFlag`, `ReleaseAcquireFlag`): the flag's orders as parameters.
struct Flag {
    data: UnsafeCell<i64>,
    ready: AtomicBool,
    /// The flag's store and load orders.
    orders: (Ordering, Ordering),
}

// SAFETY: `data` is meant to be published by `ready`; loom checks that it is.
unsafe impl Sync for Flag {}

impl Flag {
    fn new(fixed: bool) -> Flag {
        let orders = if fixed {
            (Ordering::Release, Ordering::Acquire)
        } else {
            (Ordering::Relaxed, Ordering::Relaxed)
        };
        Flag {
            data: UnsafeCell::new(0),
            ready: AtomicBool::new(false),
            orders,
        }
    }

    fn publish(&self, v: i64) {
        self.data.with_mut(|p| unsafe { *p = v });
        self.ready.store(true, self.orders.0);
    }

    fn read(&self) -> Option<i64> {
        if self.ready.load(self.orders.1) {
            Some(self.data.with(|p| unsafe { *p }))
        } else {
            None
        }
    }
}

/// The seqlock with `Relaxed` cells (`UnfencedSeqLock`, `FencedSeqLock`): Boehm's two fences
/// when `fenced`.
struct Cells {
    seq: AtomicU64,
    a: AtomicI64,
    b: AtomicI64,
    fenced: bool,
}

impl Cells {
    fn new(fenced: bool) -> Cells {
        Cells {
            seq: AtomicU64::new(0),
            a: AtomicI64::new(0),
            b: AtomicI64::new(0),
            fenced,
        }
    }

    fn write(&self, a: i64, b: i64) {
        let s = self.seq.load(Ordering::Relaxed);
        self.seq.store(s + 1, Ordering::Relaxed);
        if self.fenced {
            fence(Ordering::Release);
        }
        self.a.store(a, Ordering::Relaxed);
        self.b.store(b, Ordering::Relaxed);
        self.seq.store(s + 2, Ordering::Release);
    }

    fn read(&self) -> (i64, i64) {
        loop {
            let s1 = self.seq.load(Ordering::Acquire);
            if s1.is_multiple_of(2) {
                let a = self.a.load(Ordering::Relaxed);
                let b = self.b.load(Ordering::Relaxed);
                if self.fenced {
                    fence(Ordering::Acquire);
                }
                let s2 = self.seq.load(Ordering::Relaxed);
                if s1 == s2 {
                    return (a, b);
                }
            }
            spin_loop();
        }
    }
}

/// A node of the stack: plain memory.
struct Node {
    item: UnsafeCell<i64>,
    next: UnsafeCell<*mut Node>,
}

// SAFETY: a node is written by its pusher before it is published; loom checks the orderings.
unsafe impl Send for Node {}
unsafe impl Sync for Node {}

/// The Treiber stack (`RelaxedPushStack`, `ReleasePushStack`): push's compare-exchange
/// `Release` when `fixed`.
struct Stack {
    top: AtomicPtr<Node>,
    nodes: Arena<Node>,
    publish: Ordering,
}

impl Stack {
    fn new(fixed: bool) -> Stack {
        Stack {
            top: AtomicPtr::new(null_mut()),
            nodes: Arena::new(),
            publish: if fixed {
                Ordering::Release
            } else {
                Ordering::Relaxed
            },
        }
    }

    fn node(&self, at: *mut Node) -> &Node {
        // SAFETY: every non-null pointer in `top` or a `next` came from `self.nodes`, whose
        // nodes are freed only when the stack is dropped, after every borrow of it.
        unsafe { &*at }
    }

    fn push(&self, v: i64) {
        let node = self.nodes.alloc(Node {
            item: UnsafeCell::new(v),
            next: UnsafeCell::new(null_mut()),
        });
        let n = self.node(node);
        loop {
            let top = self.top.load(Ordering::Relaxed);
            n.next.with_mut(|p| unsafe { *p = top });
            if self
                .top
                .compare_exchange(top, node, self.publish, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
        }
    }

    fn pop(&self) -> Option<i64> {
        loop {
            let top = self.top.load(Ordering::Acquire);
            if top.is_null() {
                return None;
            }
            let t = self.node(top);
            let next = t.next.with(|p| unsafe { *p });
            if self
                .top
                .compare_exchange(top, next, Ordering::Acquire, Ordering::Acquire)
                .is_ok()
            {
                return Some(t.item.with(|p| unsafe { *p }));
            }
        }
    }
}

/// One execution of `case`, as its test file runs it, with the assertion a user would write.
fn body(case: Weak) {
    count_execution();
    let fixed = !case.buggy();
    match case {
        Weak::MpRelaxed | Weak::MpReleaseAcquire => {
            let flag = Arc::new(Flag::new(fixed));
            let writer = {
                let flag = Arc::clone(&flag);
                thread::spawn(move || flag.publish(1))
            };
            let reader = {
                let flag = Arc::clone(&flag);
                thread::spawn(move || flag.read())
            };
            writer.join().unwrap();
            check_published(reader.join().unwrap(), 1);
        }
        Weak::SeqlockUnfenced | Weak::SeqlockFenced => {
            let cells = Arc::new(Cells::new(fixed));
            let writer = {
                let cells = Arc::clone(&cells);
                thread::spawn(move || cells.write(1, 1))
            };
            let reader = {
                let cells = Arc::clone(&cells);
                thread::spawn(move || cells.read())
            };
            writer.join().unwrap();
            check_pair(reader.join().unwrap());
        }
        Weak::StackRelaxedPush | Weak::StackReleasePush => {
            let stack = Arc::new(Stack::new(fixed));
            stack.push(1);
            let pusher = {
                let stack = Arc::clone(&stack);
                thread::spawn(move || stack.push(2))
            };
            let popper = {
                let stack = Arc::clone(&stack);
                thread::spawn(move || [stack.pop(), stack.pop()])
            };
            pusher.join().unwrap();
            let popped = popper.join().unwrap();
            let mut left = Vec::new();
            while let Some(v) = stack.pop() {
                left.push(v);
            }
            check_conserved(&[1, 2], &popped, &left);
        }
    }
}

/// Runs `case` under loom's model checker, with its default settings but for
/// `preemption_bound`.
pub fn run(case: Weak, preemption_bound: Option<usize>) -> Outcome {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = preemption_bound;
    executions_outcome(move || builder.check(move || body(case)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::{Case, Found, CAUSALITY};

    /// Whether loom's check of `case` failed because of the object (the body's assertion, or a
    /// data race loom found), read from its verdict so that other tests' failed assertions in
    /// this process cannot be taken for it.
    fn loom_finds_a_bug(case: Weak) -> bool {
        let verdict = run(case, None).verdict;
        let ours = [
            "message passing:",
            "seqlock: torn",
            "stack: pushed",
            CAUSALITY,
        ];
        verdict.starts_with("FAILED") && ours.iter().any(|m| verdict.contains(m))
    }

    /// fgvt's verdict (not linearizable, or linearizable on a complete tree) and loom's (an
    /// assertion a user would write, or a data race loom reports) agree on every weak-memory
    /// fixture, and both find exactly the buggy ones.
    #[test]
    fn fgvt_and_loom_agree_on_every_weak_memory_fixture() {
        let all = [
            Weak::MpRelaxed,
            Weak::MpReleaseAcquire,
            Weak::SeqlockUnfenced,
            Weak::SeqlockFenced,
            Weak::StackRelaxedPush,
            Weak::StackReleasePush,
        ];
        for weak in all {
            let fgvt = crate::under_fgvt::run(Case::Weak(weak)).found;
            let expected = if weak.buggy() {
                Found::Bug
            } else {
                Found::Correct
            };
            assert_eq!(fgvt, expected, "fgvt on {weak:?}");
            assert_eq!(loom_finds_a_bug(weak), weak.buggy(), "loom on {weak:?}");
        }
    }
}
