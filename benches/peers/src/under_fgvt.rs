//! The Treiber stack, its buggy twin and the seqlock on fgvt-sync's types, named for fgvt's tests.
//!
//! The algorithms are the same text as in `under_loom.rs` and `under_shuttle.rs`; only the
//! imports differ (and the spin hint: `fgvt_sync::hint::spin_loop`, which fgvt turns into a
//! loop edge when an iteration saw what the previous one saw). fgvt runs the threads itself:
//! instead of a test body, each object names its operations ([`Object`]) and a [`Test`] lists
//! the calls of each thread; every run is checked against a sequential spec.

use std::fmt::Write as _;
use std::ptr::null_mut;

use fgvt_reports::{LocalizeReport, Verdict};
use fgvt_sync::atomic::{AtomicBool, AtomicI64, AtomicPtr, AtomicU64, Ordering::SeqCst};
use fgvt_sync::hint::spin_loop;
use fgvt_sync::{unknown, Arg, Call, IntoValue, Object, Test, Value};

use crate::arena::Arena;
use crate::cases::{group, Case, Found, Outcome, Weak};

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

/// The buggy stack's operations by name, as [`TreiberStack`]'s: `push(v)` and `pop()`.
impl Object for RacyTreiberStack {
    fn new() -> Self {
        RacyTreiberStack::new()
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

/// `case` as an fgvt test, with fgvt's default limits: thread `i` of a stack runs
/// `push(i + 1)` then `pop()`, checked against the built-in `stack` spec; the seqlock's two
/// writers and its readers are checked against the object's own serial runs (`self`), as the
/// fixtures' `FixedSeqLock` is.
fn localize(case: Case) -> Result<fgvt_sync::Localized, String> {
    match case {
        Case::Stack { threads } => localize_stack::<TreiberStack>(case, threads),
        Case::RacyStack { threads } => localize_stack::<RacyTreiberStack>(case, threads),
        Case::SeqLock { readers } => {
            let test = Test::<SeqLock>::new(&case.name())
                .thread(&["write(1, 1)"])
                .thread(&["write(2, 2)"]);
            let test = (0..readers).fold(test, |test, _| test.thread(&["read()"]));
            test.spec("self").localize().map_err(|e| e.to_string())
        }
        Case::Weak(weak) => localize_weak(case, weak),
    }
}

/// A weak-memory fixture on its test file's calls, against the object's own serial runs.
fn localize_weak(case: Case, weak: Weak) -> Result<fgvt_sync::Localized, String> {
    use fgvt_fixtures_rust::fenced_seqlock::{FencedSeqLock, UnfencedSeqLock};
    use fgvt_fixtures_rust::message_passing::{RelaxedFlag, ReleaseAcquireFlag};
    use fgvt_fixtures_rust::release_stack::{RelaxedPushStack, ReleasePushStack};
    fn on<O: Object>(
        name: &str,
        init: &[&str],
        threads: &[&[&str]],
    ) -> Result<fgvt_sync::Localized, String> {
        let test = threads
            .iter()
            .fold(Test::<O>::new(name).init(init), |test, calls| {
                test.thread(calls)
            });
        test.localize().map_err(|e| e.to_string())
    }
    let name = case.name();
    let mp: &[&[&str]] = &[&["publish(1)"], &["read()"]];
    let seqlock: &[&[&str]] = &[&["write(1, 1)"], &["read()"]];
    let stack: &[&[&str]] = &[&["push(2)"], &["pop()", "pop()"]];
    match weak {
        Weak::MpRelaxed => on::<RelaxedFlag>(&name, &[], mp),
        Weak::MpReleaseAcquire => on::<ReleaseAcquireFlag>(&name, &[], mp),
        Weak::SeqlockUnfenced => on::<UnfencedSeqLock>(&name, &[], seqlock),
        Weak::SeqlockFenced => on::<FencedSeqLock>(&name, &[], seqlock),
        Weak::StackRelaxedPush => on::<RelaxedPushStack>(&name, &["push(1)"], stack),
        Weak::StackReleasePush => on::<ReleasePushStack>(&name, &["push(1)"], stack),
    }
}

/// Localizes a stack case on the stack `S`: `threads` threads, thread `i` running
/// `push(i + 1)` then `pop()`, against the built-in `stack` spec.
fn localize_stack<S: Object>(case: Case, threads: usize) -> Result<fgvt_sync::Localized, String> {
    let pushes: Vec<String> = (1..=threads).map(|v| format!("push({v})")).collect();
    let test = pushes
        .iter()
        .fold(Test::<S>::new(&case.name()), |test, push| {
            test.thread(&[push, "pop()"])
        });
    test.spec("stack").localize().map_err(|e| e.to_string())
}

/// Times `Test::localize` of `case` to its verdict (its report, with the CDRS of a failing
/// test): the object is correct when the verdict is linearizable and the tree complete (not cut
/// by a limit), buggy when the verdict is not linearizable.
pub fn run(case: Case) -> Outcome {
    let started = std::time::Instant::now();
    let localized = localize(case);
    let elapsed = started.elapsed();
    let localized = match localized {
        Ok(l) => l,
        Err(e) => {
            let verdict = format!("error: {e}");
            return Outcome::new(elapsed, String::new(), Found::Nothing, verdict);
        }
    };
    let report = &localized.report;
    let tree = &report.tree;
    let runs = localized.runs;
    let mut explored = format!(
        "{} states; {} executions started, {} gone on by a step, {} steps; tree {} nodes ({} \
         stored)",
        group(tree.distinct_states),
        group(runs.started),
        group(runs.went_on),
        group(runs.steps),
        group(tree.nodes),
        group(tree.graph_nodes)
    );
    if tree.failing_leaves > 0 {
        // What share of the runs fails: how hard the bug is to meet.
        let _ = write!(
            explored,
            "; {} of {} leaves fail",
            group(tree.failing_leaves),
            group(tree.leaves)
        );
    }
    let (found, verdict) = match (report.verdict, &report.partial) {
        (Verdict::Linearizable, None) => (Found::Correct, "linearizable (complete)".to_string()),
        (Verdict::NotLinearizable, _) => (Found::Bug, not_linearizable(report)),
        (_, Some(limit)) => (
            Found::Nothing,
            format!("partial: {limit} limit hit, no failing run"),
        ),
        (verdict, None) => (Found::Nothing, verdict.name().to_string()),
    };
    Outcome::new(elapsed, explored, found, verdict).with_executions(runs.started)
}

/// A failing report's verdict in words: whether the tree is complete, and its CDRS (how many,
/// and the best one's races), which is what the report adds to "a run fails".
fn not_linearizable(report: &LocalizeReport) -> String {
    let mut verdict = match &report.partial {
        None => "NOT LINEARIZABLE (complete)".to_string(),
        Some(limit) => format!("NOT LINEARIZABLE (partial: {limit} limit hit)"),
    };
    match report.cdrs.first() {
        Some(best) => {
            let _ = write!(
                verdict,
                "; {} CDRS{}, best {} race{} `{}`",
                group(report.cdrs_found as u64),
                if report.truncated { " (sampled)" } else { "" },
                best.nodes.len(),
                if best.nodes.len() == 1 { "" } else { "s" },
                best.pattern
            );
        }
        None => verdict.push_str("; no CDRS"),
    }
    verdict
}
