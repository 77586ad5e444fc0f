//! The Treiber stack, its buggy twin and the seqlock on loom's types, and the test bodies loom's
//! model runs.
//!
//! The algorithms are the same text as in `under_fgvt.rs` and `under_shuttle.rs`; only the
//! imports differ (and the spin hint: `loom::hint::spin_loop`, which yields in loom).

use std::ptr::null_mut;

use loom::hint::spin_loop;
use loom::sync::atomic::{AtomicBool, AtomicI64, AtomicPtr, AtomicU64, Ordering::SeqCst};
use loom::sync::Arc;
use loom::thread;

use crate::arena::Arena;
use crate::cases::{count_execution, executions_outcome, Case, Outcome};
use crate::invariants::{check_pair, check_pops};

/// A node of the stack: its item, fixed when it is made, and the node below it.
struct Node {
    item: i64,
    next: AtomicPtr<Node>,
}

/// A Treiber stack whose nodes are never reused while it lives (see [`Arena`]).
pub struct TreiberStack {
    top: AtomicPtr<Node>,
    nodes: Arena<Node>,
}

impl TreiberStack {
    /// An empty stack.
    pub fn new() -> Self {
        TreiberStack {
            top: AtomicPtr::new(null_mut()),
            nodes: Arena::new(),
        }
    }

    /// The node at `at`, a non-null address this stack's arena handed out.
    fn node(&self, at: *mut Node) -> &Node {
        // SAFETY: every non-null pointer in `top` or a `next` came from `self.nodes`, whose
        // nodes are freed only when the stack is dropped, after every borrow of it.
        unsafe { &*at }
    }

    /// Pushes `v`: links a new node above the top it read, and CASes `top` to it.
    pub fn push(&self, v: i64) {
        let n = self.nodes.alloc(Node {
            item: v,
            next: AtomicPtr::new(null_mut()),
        });
        loop {
            let t = self.top.load(SeqCst);
            self.node(n).next.store(t, SeqCst);
            if self.top.compare_exchange(t, n, SeqCst, SeqCst).is_ok() {
                return;
            }
        }
    }

    /// Pops the top item, `None` when empty: CASes `top` from the node read to its `next`.
    pub fn pop(&self) -> Option<i64> {
        loop {
            let t = self.top.load(SeqCst);
            if t.is_null() {
                return None;
            }
            let next = self.node(t).next.load(SeqCst);
            if self.top.compare_exchange(t, next, SeqCst, SeqCst).is_ok() {
                return Some(self.node(t).item);
            }
        }
    }
}

impl Default for TreiberStack {
    fn default() -> Self {
        TreiberStack::new()
    }
}

/// A buggy Treiber stack (the `buggy-stack-*` cases): its `push` stores `top` where it should
/// CAS it, so two pushes that read the same top both link their node above it and the later
/// store unlinks the earlier node (and a push that read a node a pop has since unlinked links
/// it back). Its `pop` is [`TreiberStack::pop`]; nodes are never reused while it lives.
pub struct RacyTreiberStack(TreiberStack);

impl RacyTreiberStack {
    /// An empty stack.
    pub fn new() -> Self {
        RacyTreiberStack(TreiberStack::new())
    }

    /// Pushes `v`: links a new node above the top it read, and stores `top` to it, whether or
    /// not `top` still holds what it read (the bug: a plain store, no CAS).
    pub fn push(&self, v: i64) {
        let stack = &self.0;
        let n = stack.nodes.alloc(Node {
            item: v,
            next: AtomicPtr::new(null_mut()),
        });
        let t = stack.top.load(SeqCst);
        stack.node(n).next.store(t, SeqCst);
        stack.top.store(n, SeqCst);
    }

    /// Pops the top item, `None` when empty: [`TreiberStack::pop`].
    pub fn pop(&self) -> Option<i64> {
        self.0.pop()
    }
}

impl Default for RacyTreiberStack {
    fn default() -> Self {
        RacyTreiberStack::new()
    }
}

/// A seqlock guarding a pair: writers serialize on a CAS spin lock and make `seq` odd while
/// they write; readers take no lock and retry until they read an even, unchanged `seq` around
/// both cells (fgvt's `FixedSeqLock`).
pub struct SeqLock {
    /// The writers' spin lock.
    locked: AtomicBool,
    /// Odd while a write is in progress; bumped twice by every write.
    seq: AtomicU64,
    a: AtomicI64,
    b: AtomicI64,
}

impl SeqLock {
    /// The pair `(0, 0)`.
    pub fn new() -> Self {
        SeqLock {
            locked: AtomicBool::new(false),
            seq: AtomicU64::new(0),
            a: AtomicI64::new(0),
            b: AtomicI64::new(0),
        }
    }

    /// Writes the pair `(a, b)`.
    pub fn write(&self, a: i64, b: i64) {
        while self
            .locked
            .compare_exchange(false, true, SeqCst, SeqCst)
            .is_err()
        {
            spin_loop();
        }
        self.seq.fetch_add(1, SeqCst);
        self.a.store(a, SeqCst);
        self.b.store(b, SeqCst);
        self.seq.fetch_add(1, SeqCst);
        self.locked.store(false, SeqCst);
    }

    /// Reads the pair, waiting out writes in progress and retrying after one overlapped.
    pub fn read(&self) -> (i64, i64) {
        loop {
            let s1 = self.seq.load(SeqCst);
            if s1.is_multiple_of(2) {
                let a = self.a.load(SeqCst);
                let b = self.b.load(SeqCst);
                let s2 = self.seq.load(SeqCst);
                if s1 == s2 {
                    return (a, b);
                }
            }
            spin_loop();
        }
    }
}

impl Default for SeqLock {
    fn default() -> Self {
        SeqLock::new()
    }
}

/// One execution of `case`: spawns its threads, runs their operations, asserts the invariant.
fn body(case: Case) {
    count_execution();
    match case {
        Case::Stack { threads } => stack_body(
            TreiberStack::new(),
            threads,
            TreiberStack::push,
            TreiberStack::pop,
        ),
        Case::RacyStack { threads } => stack_body(
            RacyTreiberStack::new(),
            threads,
            RacyTreiberStack::push,
            RacyTreiberStack::pop,
        ),
        Case::SeqLock { readers } => {
            let lock = Arc::new(SeqLock::new());
            let writers: Vec<_> = [1, 2]
                .into_iter()
                .map(|v| {
                    let lock = Arc::clone(&lock);
                    thread::spawn(move || lock.write(v, v))
                })
                .collect();
            let readers: Vec<_> = (0..readers)
                .map(|_| {
                    let lock = Arc::clone(&lock);
                    thread::spawn(move || lock.read())
                })
                .collect();
            for writer in writers {
                writer.join().unwrap();
            }
            for reader in readers {
                check_pair(reader.join().unwrap());
            }
        }
        Case::Weak(_) => unreachable!("loom runs the weak-memory fixtures in `weak_loom.rs`"),
    }
}

/// One execution of a stack case on `stack`, whose operations are `push` and `pop`: thread `i`
/// runs `push(i + 1)` then `pop()`, and the pops are checked once every thread is joined.
fn stack_body<S: Send + Sync + 'static>(
    stack: S,
    threads: usize,
    push: fn(&S, i64),
    pop: fn(&S) -> Option<i64>,
) {
    let stack = Arc::new(stack);
    let handles: Vec<_> = (1..=threads as i64)
        .map(|v| {
            let stack = Arc::clone(&stack);
            thread::spawn(move || {
                push(&stack, v);
                pop(&stack)
            })
        })
        .collect();
    let popped: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    check_pops(&popped);
}

/// Runs `case` under loom's model checker, with its default settings but for
/// `preemption_bound` (`None`, the default, explores every interleaving loom's DPOR needs).
pub fn run(case: Case, preemption_bound: Option<usize>) -> Outcome {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = preemption_bound;
    executions_outcome(move || builder.check(move || body(case)))
}
