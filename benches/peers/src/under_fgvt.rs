//! The Treiber stack and the seqlock on fgvt-sync's types, named for fgvt's tests.
//!
//! The algorithms are the same text as in `under_loom.rs` and `under_shuttle.rs`; only the
//! imports differ (and the spin hint: `fgvt_sync::hint::spin_loop`, which fgvt turns into a
//! loop edge when an iteration saw what the previous one saw). fgvt runs the threads itself:
//! instead of a test body, each object names its operations ([`Object`]) and a [`Test`] lists
//! the calls of each thread; every run is checked against a sequential spec.

use std::ptr::null_mut;

use fgvt_reports::Verdict;
use fgvt_sync::atomic::{AtomicBool, AtomicI64, AtomicPtr, AtomicU64, Ordering::SeqCst};
use fgvt_sync::hint::spin_loop;
use fgvt_sync::{unknown, Arg, Call, IntoValue, Object, Test, Value};

use crate::arena::Arena;
use crate::cases::{group, Case, Outcome};

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

/// The stack's operations by name: `push(v)` and `pop()`.
impl Object for TreiberStack {
    fn new() -> Self {
        TreiberStack::new()
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match (call.op.as_str(), call.args.as_slice()) {
            ("push", [v]) => {
                self.push(v.int()?);
                Ok(Value::Unit)
            }
            ("pop", []) => Ok(self.pop().into_value()),
            _ => Err(unknown(call)),
        }
    }
}

/// The seqlock's operations by name: `write(a, b)` and `read()`.
impl Object for SeqLock {
    fn new() -> Self {
        SeqLock::new()
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match (call.op.as_str(), call.args.as_slice()) {
            ("write", [a, b]) => {
                self.write(a.int()?, b.int()?);
                Ok(Value::Unit)
            }
            ("read", []) => Ok(self.read().into_value()),
            _ => Err(unknown(call)),
        }
    }
}

/// `case` as an fgvt test, with fgvt's default limits: thread `i` of the stack runs
/// `push(i + 1)` then `pop()`, checked against the built-in `stack` spec; the seqlock's two
/// writers and its readers are checked against the object's own serial runs (`self`), as the
/// fixtures' `FixedSeqLock` is.
fn localize(case: Case) -> Result<fgvt_sync::Localized, String> {
    let localized = match case {
        Case::Stack { threads } => {
            let pushes: Vec<String> = (1..=threads).map(|v| format!("push({v})")).collect();
            let test = pushes
                .iter()
                .fold(Test::<TreiberStack>::new(&case.name()), |test, push| {
                    test.thread(&[push, "pop()"])
                });
            test.spec("stack").localize()
        }
        Case::SeqLock { readers } => {
            let test = Test::<SeqLock>::new(&case.name())
                .thread(&["write(1, 1)"])
                .thread(&["write(2, 2)"]);
            let test = (0..readers).fold(test, |test, _| test.thread(&["read()"]));
            test.spec("self").localize()
        }
    };
    localized.map_err(|e| e.to_string())
}

/// Times `Test::localize` of `case` to its verdict; passes when the verdict is linearizable
/// and the tree complete (not cut by a limit).
pub fn run(case: Case) -> Outcome {
    let started = std::time::Instant::now();
    let localized = localize(case);
    let elapsed = started.elapsed();
    let localized = match localized {
        Ok(l) => l,
        Err(e) => return Outcome::new(elapsed, String::new(), false, format!("error: {e}")),
    };
    let report = &localized.report;
    let tree = &report.tree;
    let explored = format!(
        "{} states; tree {} nodes ({} stored)",
        group(tree.distinct_states),
        group(tree.nodes),
        group(tree.graph_nodes)
    );
    let (ok, verdict) = match (report.verdict, &report.partial) {
        (Verdict::Linearizable, None) => (true, "linearizable (complete)".to_string()),
        (Verdict::NotLinearizable, _) => (false, "NOT LINEARIZABLE".to_string()),
        (_, Some(limit)) => (false, format!("partial: {limit} limit hit, no failing run")),
        (verdict, None) => (false, verdict.name().to_string()),
    };
    Outcome::new(elapsed, explored, ok, verdict)
}
