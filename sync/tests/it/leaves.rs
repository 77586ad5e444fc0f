//! A panic, a deadlock and an endless spin in real code each end their run as the leaf kind
//! a model's would: fault, stuck, bounded.

use fgvt_sync::atomic::{AtomicBool, AtomicI64, Ordering::SeqCst};
use fgvt_sync::{unknown, Call, Mutex, Object, Test, Value};
use fgvt_tree::{LeafKind, Tree};

/// Kinds of the leaves of `tree` that some root path reaches, with their counts.
fn kinds(tree: &Tree) -> Vec<(LeafKind, usize)> {
    let mut out: Vec<(LeafKind, usize)> = Vec::new();
    for (_, leaf, _) in tree.leaves() {
        match out.iter_mut().find(|(k, _)| *k == leaf.kind) {
            Some((_, n)) => *n += 1,
            None => out.push((leaf.kind, 1)),
        }
    }
    out.sort_by_key(|(k, _)| format!("{k:?}"));
    out
}

/// `check()` panics when it sees the flag another thread set.
struct Panicky(AtomicBool);

impl Object for Panicky {
    fn new() -> Self {
        Panicky(AtomicBool::new(false))
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match call.op.as_str() {
            "set" => {
                self.0.store(true, SeqCst);
                Ok(Value::Unit)
            }
            "check" => {
                if self.0.load(SeqCst) {
                    panic!("the flag was set");
                }
                Ok(Value::Unit)
            }
            _ => Err(unknown(call)),
        }
    }
}

#[test]
fn a_panic_is_a_fault_leaf_with_its_message_and_line() {
    let test = Test::<Panicky>::new("panicky")
        .thread(&["set()"])
        .thread(&["check()"]);
    let tree = test.explore().unwrap();
    assert_eq!(
        kinds(&tree),
        vec![(LeafKind::Complete, 1), (LeafKind::Fault, 1)]
    );
    let (_, fault, _) = tree
        .leaves()
        .find(|(_, l, _)| l.kind == LeafKind::Fault)
        .unwrap();
    let fault = fault.fault.as_ref().unwrap();
    assert_eq!(fault.message, "the flag was set");
    assert!(fault.span.is_some(), "the panic's line is known");
    let found = test.localize().unwrap();
    assert_eq!(found.report.verdict, fgvt_reports::Verdict::NotLinearizable);
}

/// Two locks taken in opposite orders.
struct TwoLocks {
    a: Mutex<i64>,
    b: Mutex<i64>,
}

impl Object for TwoLocks {
    fn new() -> Self {
        TwoLocks {
            a: Mutex::new(0),
            b: Mutex::new(0),
        }
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        let (first, second) = match call.op.as_str() {
            "ab" => (&self.a, &self.b),
            "ba" => (&self.b, &self.a),
            _ => return Err(unknown(call)),
        };
        let mut x = first.lock().unwrap();
        let mut y = second.lock().unwrap();
        *x += 1;
        *y += 1;
        Ok(Value::Unit)
    }
}

#[test]
fn locks_taken_in_opposite_orders_deadlock_in_a_stuck_leaf() {
    let tree = Test::<TwoLocks>::new("two_locks")
        .thread(&["ab()"])
        .thread(&["ba()"])
        .explore()
        .unwrap();
    let kinds = kinds(&tree);
    assert!(
        kinds.iter().any(|(k, _)| *k == LeafKind::Complete),
        "{kinds:?}"
    );
    let stuck: Vec<_> = tree
        .leaves()
        .filter(|(_, l, _)| l.kind == LeafKind::Stuck)
        .collect();
    assert!(!stuck.is_empty(), "{kinds:?}");
    for (_, leaf, _) in stuck {
        assert_eq!(
            leaf.waiting.len(),
            2,
            "both threads wait: {:?}",
            leaf.waiting
        );
        assert!(leaf.waiting.iter().all(|w| w.reason.contains("held by")));
        assert!(leaf.history.stuck);
    }
}

/// `wait()` spins until a flag that nothing sets.
struct Spinner(AtomicI64);

impl Object for Spinner {
    fn new() -> Self {
        Spinner(AtomicI64::new(0))
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match call.op.as_str() {
            "wait" => {
                while self.0.load(SeqCst) == 0 {}
                Ok(Value::Unit)
            }
            _ => Err(unknown(call)),
        }
    }
}

#[test]
fn an_endless_spin_is_bounded_by_the_step_limit() {
    let tree = Test::<Spinner>::new("spinner")
        .thread(&["wait()"])
        .max_steps(5)
        .implied_hints(false)
        .cut_bare_spins(false)
        .explore()
        .unwrap();
    let leaves: Vec<_> = tree.leaves().collect();
    assert_eq!(leaves.len(), 1);
    let leaf = leaves[0].1;
    assert_eq!(leaf.kind, LeafKind::Bounded);
    assert!(
        leaf.bound
            .as_ref()
            .unwrap()
            .to_string()
            .contains("more than 5 steps"),
        "{:?}",
        leaf.bound
    );
    // Five steps, and the sixth, which would pass the limit, ends the path at the bound (as
    // for a model).
    assert_eq!(tree.stats().max_depth, 6);
}

/// Issue 42: a loop without the hint that fgvt does not take for a retry is cut at its fourth
/// identical turn (the same load seeing the same value, nothing written), long before the step
/// limit.
#[test]
fn a_loop_without_the_hint_is_cut_where_its_turns_repeat() {
    let tree = Test::<Spinner>::new("spinner")
        .thread(&["wait()"])
        .implied_hints(false)
        .explore()
        .unwrap();
    let leaves: Vec<_> = tree.leaves().collect();
    assert_eq!(leaves.len(), 1);
    let bound = leaves[0].1.bound.as_deref().expect("a bounded leaf");
    assert!(
        matches!(bound, fgvt_sync::report::Bound::Spin { thread: 0, .. }),
        "{bound:?}"
    );
    assert_eq!(tree.partial, Some(fgvt_sync::report::Limit::Spin));
    assert_eq!(tree.stats().max_depth, 4);
}

#[test]
fn the_report_names_the_line_that_spins_and_how_to_mark_it() {
    let found = Test::<Spinner>::new("spinner")
        .thread(&["wait()"])
        .implied_hints(false)
        .localize()
        .unwrap();
    let note = found
        .report
        .notes
        .iter()
        .find(|n| n.contains("spins at") && n.contains("without a spin hint"))
        .expect("a note on the cut");
    let line = include_str!("leaves.rs")
        .lines()
        .position(|l| l.contains("while self.0.load(SeqCst) == 0 {}"))
        .unwrap()
        + 1;
    assert!(note.contains(&format!("leaves.rs:{line}:")), "{note}");
    assert!(note.contains("fgvt_sync::hint::spin_loop()"), "{note}");
}

/// The line of `BareLock`'s loop.
fn bare_lock_line() -> usize {
    let source = include_str!("leaves.rs").lines();
    1 + (source.enumerate())
        .find(|(_, l)| l.trim_start().starts_with("while held.compare_exchange("))
        .unwrap()
        .0
}

/// Issue 42: the same lock, its loop not taken for a retry, is judged at once: its loop is cut
/// where its turns repeat, the result is partial, and the note names the compare-exchange's
/// line.
#[test]
fn a_spin_lock_without_the_hint_is_named_with_its_line_at_once() {
    let found = Test::<BareLock>::new("bare_lock")
        .thread(&["inc()"])
        .thread(&["inc()"])
        .implied_hints(false)
        .localize()
        .unwrap();
    assert_eq!(found.report.verdict, fgvt_reports::Verdict::Inconclusive);
    assert_eq!(found.report.partial.as_deref(), Some("spin"));
    let line = bare_lock_line();
    let note = (found.report.notes.iter())
        .find(|n| n.contains(&format!("spins at sync/tests/it/leaves.rs:{line}:")))
        .unwrap_or_else(|| panic!("{:#?}", found.report.notes));
    assert!(
        note.contains("call `fgvt_sync::hint::spin_loop()` once per iteration"),
        "{note}"
    );
    // A few hundred states, not the step limit's depth on every path.
    assert!(found.report.tree.max_depth < 40, "{:?}", found.report.tree);
}

/// `wait()` spins until `set()` sets the flag, saying that it retries.
struct Waiter(AtomicI64);

impl Object for Waiter {
    fn new() -> Self {
        Waiter(AtomicI64::new(0))
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match call.op.as_str() {
            "wait" => {
                while self.0.load(SeqCst) == 0 {
                    fgvt_sync::hint::spin_loop();
                }
                Ok(Value::Unit)
            }
            "set" => {
                self.0.store(1, SeqCst);
                Ok(Value::Unit)
            }
            _ => Err(unknown(call)),
        }
    }
}

#[test]
fn a_marked_spin_waits_in_a_loop_edge_and_ends_when_the_flag_is_set() {
    let tree = Test::<Waiter>::new("waiter")
        .thread(&["wait()"])
        .thread(&["set()"])
        // The full tree, whose loop edges this looks at.
        .partial_order_reduction(false)
        .explore()
        .unwrap();
    let stats = tree.stats();
    assert!(tree.partial.is_none());
    assert_eq!(stats.bounded, 0, "no path runs into the step limit");
    assert!(stats.loop_edges > 0, "the spin is a loop edge");
    // Every leaf is a complete run: the waiter returns once `set()` has run, however long
    // it spun before.
    assert!(stats.leaves > 0);
    assert_eq!(stats.complete, stats.leaves);
}

#[test]
fn a_marked_spin_that_nothing_ends_is_a_livelock() {
    let tree = Test::<Waiter>::new("waiter_alone")
        .thread(&["wait()"])
        .explore()
        .unwrap();
    let stats = tree.stats();
    assert!(tree.partial.is_none(), "{:?} {stats:?}", tree.partial);
    assert_eq!((stats.leaves, stats.stuck, stats.bounded), (1, 1, 0));
}

/// How many bytes the memory probe below reports in use.
static IN_USE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A memory budget stops the exploration with a partial result marked as such, and a probe
/// that never reaches its budget measures the peak (what the probe reported beyond what was in
/// use before the exploration).
#[test]
fn a_memory_budget_stops_the_exploration_and_says_so() {
    use fgvt_sync::MemoryBudget;
    let used = || IN_USE.load(std::sync::atomic::Ordering::Relaxed);
    let test = || {
        Test::<Panicky>::new("budget")
            .thread(&["set()"])
            .thread(&["set()"])
    };
    IN_USE.store(1 << 20, std::sync::atomic::Ordering::Relaxed);
    let over = test()
        .max_memory(MemoryBudget {
            bytes: 1 << 10,
            used,
        })
        .explore()
        .unwrap();
    assert_eq!(over.partial, Some(fgvt_sync::report::Limit::Memory));
    let found = test()
        .max_memory(MemoryBudget {
            bytes: 1 << 10,
            used,
        })
        .localize()
        .unwrap();
    assert_eq!(found.report.partial.as_deref(), Some("memory"));
    let under = test()
        .max_memory(MemoryBudget {
            bytes: usize::MAX,
            used,
        })
        .explore()
        .unwrap();
    assert!(under.partial.is_none());
    // The probe stood still: the exploration measured nothing beyond what was in use.
    assert_eq!(under.memory, Some(0));
}

/// A counter incremented by a CAS loop: no operation ever waits for another thread.
struct CasCounter(AtomicI64);

#[fgvt_sync::operations]
impl CasCounter {
    fn new() -> Self {
        CasCounter(AtomicI64::new(0))
    }

    pub fn inc(&self) {
        let mut seen = self.0.load(SeqCst);
        while let Err(now) = self.0.compare_exchange(seen, seen + 1, SeqCst, SeqCst) {
            seen = now;
        }
    }

    pub fn get(&self) -> i64 {
        self.0.load(SeqCst)
    }
}

/// The same counter behind a mutex: a thread paused while it holds the lock keeps the others
/// waiting.
struct LockedCounter(Mutex<i64>);

#[fgvt_sync::operations]
impl LockedCounter {
    fn new() -> Self {
        LockedCounter(Mutex::new(0))
    }

    pub fn inc(&self) {
        let mut value = self.0.lock().unwrap();
        *value += 1;
    }

    pub fn get(&self) -> i64 {
        *self.0.lock().unwrap()
    }
}

/// Most executions are abandoned midway by the explorer (at a state it knows, or to start the
/// next schedule). Their threads then finish the operation they are in, alone, instead of being
/// unwound; only a thread that would wait for another one there is unwound.
#[test]
fn an_abandoned_execution_unwinds_only_the_threads_that_would_wait() {
    fn localize<O: Object>(name: &str) -> fgvt_sync::Localized {
        Test::<O>::new(name)
            .thread(&["inc()", "inc()"])
            .thread(&["inc()"])
            .finally(&["get()"])
            // Every interleaving, whose executions are abandoned for the next schedule.
            .partial_order_reduction(false)
            .localize()
            .unwrap()
    }
    let free = localize::<CasCounter>("cas_counter");
    assert_eq!(free.report.verdict, fgvt_reports::Verdict::Linearizable);
    assert!(free.report.partial.is_none());
    assert!(
        free.runs.started > 10 && free.runs.steps > free.runs.started,
        "{:?}",
        free.runs
    );
    assert_eq!(free.runs.unwound, 0, "no thread of lock-free code waits");

    let locked = localize::<LockedCounter>("locked_counter");
    assert_eq!(locked.report.verdict, fgvt_reports::Verdict::Linearizable);
    assert!(
        locked.runs.unwound > 0,
        "a thread waiting for the lock a paused thread holds is unwound: {:?}",
        locked.runs
    );
}

/// Issue 41: once a run has failed, localizing goes on for the report budget and then
/// reports what it found, marked partial; without a budget it explores the whole tree.
#[test]
fn the_report_budget_ends_the_exploration_after_the_first_failing_run() {
    let test = || {
        Test::<crate::common::LossyCounter>::new("report_budget")
            .thread(&["inc()", "inc()"])
            .thread(&["inc()", "inc()"])
            .thread(&["inc()"])
            .finally(&["get()"])
    };
    let cut = test()
        .report_budget(std::time::Duration::ZERO)
        .localize()
        .unwrap();
    assert_eq!(cut.report.verdict, fgvt_sync::Verdict::NotLinearizable);
    assert_eq!(cut.report.partial.as_deref(), Some("report-budget"));
    let text = fgvt_sync::report::render_text(&cut.report, false);
    assert!(text.contains("report budget"), "{text}");
    let whole = test().report_budget(None).localize().unwrap();
    assert_eq!(whole.report.partial, None);
    assert!(whole.tree.stats().leaves > cut.tree.stats().leaves);
}

/// A counter behind a CAS spin lock whose loop has no hint, as code written for `std` has.
struct BareLock {
    held: AtomicBool,
    count: AtomicI64,
}

impl Object for BareLock {
    fn new() -> Self {
        BareLock {
            held: AtomicBool::new(false),
            count: AtomicI64::new(0),
        }
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match call.op.as_str() {
            "inc" => {
                let held = &self.held;
                while held.compare_exchange(false, true, SeqCst, SeqCst).is_err() {}
                let n = self.count.load(SeqCst);
                self.count.store(n + 1, SeqCst);
                self.held.store(false, SeqCst);
                Ok(Value::Unit)
            }
            _ => Err(unknown(call)),
        }
    }
}

/// Issue 42: where two threads share the loop, the path cut by `max_steps` may end with a
/// step of another line; the note names the access the loop repeats, the CAS.
#[test]
fn the_note_on_a_spinning_lock_names_the_line_its_loop_repeats() {
    let found = Test::<BareLock>::new("bare_lock")
        .thread(&["inc()"])
        .thread(&["inc()"])
        .max_steps(40)
        .implied_hints(false)
        .cut_bare_spins(false)
        .localize()
        .unwrap();
    let note = (found.report.notes.iter())
        .find(|n| n.contains("took more than 40 steps"))
        .unwrap_or_else(|| panic!("{:#?}", found.report.notes));
    let line = bare_lock_line();
    assert!(
        note.contains(&format!("leaves.rs:{line}:")) && note.contains("times on that path"),
        "{note}"
    );
    assert!(note.contains("fgvt_sync::hint::spin_loop()"), "{note}");
}

/// A test-then-set lock without the hint: two threads can both see it free and both enter.
struct BareTestThenSet {
    held: AtomicBool,
    count: AtomicI64,
}

impl Object for BareTestThenSet {
    fn new() -> Self {
        BareTestThenSet {
            held: AtomicBool::new(false),
            count: AtomicI64::new(0),
        }
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match call.op.as_str() {
            "inc" => {
                while self.held.load(SeqCst) {}
                self.held.store(true, SeqCst);
                let n = self.count.load(SeqCst);
                self.count.store(n + 1, SeqCst);
                self.held.store(false, SeqCst);
                Ok(Value::Unit)
            }
            "get" => Ok(Value::Int(self.count.load(SeqCst))),
            _ => Err(unknown(call)),
        }
    }
}

/// Issue 42: cutting the spinning turns leaves the other paths explored, so the bug of a lock
/// without the hint is found, with the loop named beside it.
#[test]
fn a_buggy_lock_without_the_hint_still_fails_with_its_loop_named() {
    let found = Test::<BareTestThenSet>::new("bare_test_then_set")
        .thread(&["inc()"])
        .thread(&["inc()"])
        .finally(&["get()"])
        .implied_hints(false)
        .localize()
        .unwrap();
    assert_eq!(found.report.verdict, fgvt_reports::Verdict::NotLinearizable);
    assert_eq!(found.report.partial.as_deref(), Some("spin"));
    assert!(!found.report.cdrs.is_empty());
    assert!(
        (found.report.notes.iter()).any(|n| n.contains("without a spin hint")),
        "{:#?}",
        found.report.notes
    );
}

/// A counter whose every `inc` leaks a mebibyte it has written to, as an object that never
/// frees its nodes does: every state's steps run it again, so the process grows with the
/// exploration.
#[derive(Default)]
struct Leaky(fgvt_sync::atomic::AtomicI64);

#[fgvt_sync::operations]
impl Leaky {
    pub fn inc(&self) -> i64 {
        // `black_box`: else the compiler may drop an allocation nothing reads again.
        let block: &'static mut [u8] =
            std::hint::black_box(Box::leak(vec![1u8; 1 << 20].into_boxed_slice()));
        let one = i64::from(block[block.len() - 1]);
        self.0
            .fetch_add(one, std::sync::atomic::Ordering::SeqCst.into())
    }
}

/// The resident size is the probe of a test that sets no budget (`Tree::memory` is measured),
/// and it counts what the object's runs leak: a budget 64 MiB above where it stands stops
/// the exploration of a leaking object, marked partial.
#[cfg(target_os = "linux")]
#[test]
fn the_resident_size_bounds_an_object_that_leaks() {
    use fgvt_sync::MemoryBudget;
    use fgvt_tree::resident::{read_resident, resident};
    let test = || {
        Test::<Leaky>::new("leaky")
            .thread(&["inc()", "inc()", "inc()"])
            .thread(&["inc()", "inc()", "inc()"])
            .thread(&["inc()", "inc()", "inc()"])
            .partial_order_reduction(false)
    };
    let small = Test::<Leaky>::new("leaky")
        .thread(&["inc()"])
        .explore()
        .unwrap();
    assert!(small.memory.is_some(), "a default budget measures the peak");
    let now = read_resident().expect("Linux tells the resident size");
    let cut = test()
        .max_memory(MemoryBudget {
            bytes: now + (64 << 20),
            used: resident,
        })
        .explore()
        .unwrap();
    assert_eq!(
        cut.partial,
        Some(fgvt_sync::report::Limit::Memory),
        "{:?}",
        cut.stats()
    );
}
