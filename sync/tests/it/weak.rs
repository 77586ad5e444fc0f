//! Weak memory for Rust code: a test whose accesses declare weaker orderings than `SeqCst`
//! runs under the C++20 / Rust model, where a `Relaxed` flag publishes nothing.

use fgvt_reports::Verdict;
use fgvt_sync::atomic::{fence, AtomicBool, AtomicI64, Ordering};
use fgvt_sync::{Memory, Test};

/// A value published through a flag, with the flag's store and load orders as parameters.
pub(crate) struct Publish<const RELEASE: bool, const ACQUIRE: bool> {
    data: AtomicI64,
    ready: AtomicBool,
}

#[fgvt_sync::operations]
impl<const RELEASE: bool, const ACQUIRE: bool> Publish<RELEASE, ACQUIRE> {
    fn new() -> Self {
        Publish {
            data: AtomicI64::new(0),
            ready: AtomicBool::new(false),
        }
    }

    pub fn publish(&self, v: i64) {
        self.data.store(v, Ordering::Relaxed);
        let order = if RELEASE {
            Ordering::Release
        } else {
            Ordering::Relaxed
        };
        self.ready.store(true, order);
    }

    pub fn read(&self) -> Option<i64> {
        let order = if ACQUIRE {
            Ordering::Acquire
        } else {
            Ordering::Relaxed
        };
        if self.ready.load(order) {
            Some(self.data.load(Ordering::Relaxed))
        } else {
            None
        }
    }
}

fn publish_then_read<const R: bool, const A: bool>(name: &str) -> Test<Publish<R, A>> {
    Test::new(name).thread(&["publish(1)"]).thread(&["read()"])
}

#[test]
fn a_relaxed_flag_publishes_nothing() {
    let test = publish_then_read::<false, false>("relaxed_flag");
    let found = test.localize().unwrap();
    assert_eq!(test.memory_model(), Some(Memory::Weak));
    assert_eq!(
        found.report.verdict,
        Verdict::NotLinearizable,
        "{}",
        fgvt_reports::render_text(&found.report, false)
    );
    let text = fgvt_reports::render_text(&found.report, false);
    // The flag seen, the data not: a value no serial order gives.
    assert!(text.contains("T1 read() returned 0"), "{text}");
    assert!(
        text.contains("every order that respects happens-before"),
        "{text}"
    );
}

#[test]
fn a_release_flag_read_by_an_acquire_load_publishes_the_data() {
    let test = publish_then_read::<true, true>("release_acquire_flag");
    let found = test.localize().unwrap();
    assert_eq!(test.memory_model(), Some(Memory::Weak));
    assert_eq!(
        found.report.verdict,
        Verdict::Linearizable,
        "{}",
        fgvt_reports::render_text(&found.report, false)
    );
}

#[test]
fn either_half_alone_is_not_enough() {
    for found in [
        publish_then_read::<true, false>("release_only")
            .localize()
            .unwrap(),
        publish_then_read::<false, true>("acquire_only")
            .localize()
            .unwrap(),
    ] {
        assert_eq!(found.report.verdict, Verdict::NotLinearizable);
    }
}

#[test]
fn sequentially_consistent_the_relaxed_flag_passes() {
    let test =
        publish_then_read::<false, false>("relaxed_flag_sc").memory(Memory::SequentiallyConsistent);
    let found = test.localize().unwrap();
    assert_eq!(found.report.verdict, Verdict::Linearizable);
}

/// The same object with every access `SeqCst`.
struct SeqCstPublish {
    data: AtomicI64,
    ready: AtomicBool,
}

#[fgvt_sync::operations]
impl SeqCstPublish {
    fn new() -> Self {
        SeqCstPublish {
            data: AtomicI64::new(0),
            ready: AtomicBool::new(false),
        }
    }

    pub fn publish(&self, v: i64) {
        self.data.store(v, Ordering::SeqCst);
        self.ready.store(true, Ordering::SeqCst);
    }

    pub fn read(&self) -> Option<i64> {
        if self.ready.load(Ordering::SeqCst) {
            Some(self.data.load(Ordering::SeqCst))
        } else {
            None
        }
    }
}

/// Code whose accesses are all `SeqCst` is never explored under the weak model: its tree is
/// the sequentially consistent one, node for node, and its report has no weak-memory part.
#[test]
fn all_seq_cst_code_explores_exactly_the_sequentially_consistent_tree() {
    let seq_cst = Test::<SeqCstPublish>::new("seq_cst_flag")
        .thread(&["publish(1)"])
        .thread(&["read()"]);
    let found = seq_cst.localize().unwrap();
    assert_eq!(seq_cst.memory_model(), Some(Memory::SequentiallyConsistent));
    assert!(found.report.memory.is_none());
    // The relaxed flag run sequentially consistent is the same program step for step.
    let relaxed = publish_then_read::<false, false>("relaxed_flag_forced_sc")
        .memory(Memory::SequentiallyConsistent)
        .localize()
        .unwrap();
    let counts = |t: &fgvt_reports::model::TreeSummary| {
        (
            t.nodes,
            t.graph_nodes,
            t.leaves,
            t.passing_leaves,
            t.failing_leaves,
        )
    };
    assert_eq!(counts(&found.report.tree), counts(&relaxed.report.tree));
    assert_eq!(found.report.verdict, Verdict::Linearizable);
    // Every step of the tree went one way only: no step is a weak-memory choice.
    let tree = &found.tree;
    let mut stack = vec![tree.root];
    while let Some(node) = stack.pop() {
        for (event, child) in tree.children(node) {
            assert!(event.memory.is_none(), "{event:?}");
            stack.push(child);
        }
    }
}

/// Message passing through fences: relaxed accesses, a release fence before the flag's store
/// and an acquire fence after its load.
struct Fenced<const WRITER: bool, const READER: bool> {
    data: AtomicI64,
    ready: AtomicBool,
}

#[fgvt_sync::operations]
impl<const WRITER: bool, const READER: bool> Fenced<WRITER, READER> {
    fn new() -> Self {
        Fenced {
            data: AtomicI64::new(0),
            ready: AtomicBool::new(false),
        }
    }

    pub fn publish(&self, v: i64) {
        self.data.store(v, Ordering::Relaxed);
        if WRITER {
            fence(Ordering::Release);
        }
        self.ready.store(true, Ordering::Relaxed);
    }

    pub fn read(&self) -> Option<i64> {
        if !self.ready.load(Ordering::Relaxed) {
            return None;
        }
        if READER {
            fence(Ordering::Acquire);
        }
        Some(self.data.load(Ordering::Relaxed))
    }
}

#[test]
fn two_fences_publish_as_a_release_acquire_pair_does() {
    let verdict = |found: fgvt_sync::Localized| found.report.verdict;
    let test = |name| {
        Test::<Fenced<true, true>>::new(name)
            .thread(&["publish(1)"])
            .thread(&["read()"])
    };
    assert_eq!(
        verdict(test("fenced").localize().unwrap()),
        Verdict::Linearizable
    );
    let writer_only = Test::<Fenced<true, false>>::new("writer_fence")
        .thread(&["publish(1)"])
        .thread(&["read()"]);
    assert_eq!(
        verdict(writer_only.localize().unwrap()),
        Verdict::NotLinearizable
    );
}

/// The report of the relaxed flag: the stale read in the CDRS, the bug only under weak
/// memory, and the release/acquire pair that fixes it, checked by exploring again.
#[test]
fn the_report_names_the_stale_read_and_the_pair_of_orderings_that_fixes_it() {
    let found = publish_then_read::<false, false>("relaxed_flag")
        .localize()
        .unwrap();
    let text = fgvt_reports::render_text(&found.report, false);
    assert!(
        text.contains("T1 read data#0 → 0 (Relaxed; stale: reads the initial 0"),
        "{text}"
    );
    let memory = found
        .report
        .memory
        .as_ref()
        .expect("a weak-memory run says so");
    assert_eq!(memory.model, "rc11");
    assert_eq!(memory.passes_sequentially_consistent, Some(true));
    let fix: Vec<(&str, &str, &str, u32)> = memory
        .fix
        .iter()
        .map(|c| {
            (
                c.access.as_str(),
                c.from.as_str(),
                c.to.as_str(),
                c.location.as_ref().unwrap().line as u32,
            )
        })
        .collect();
    assert_eq!(
        fix,
        [
            ("store to ready#1", "Relaxed", "Release", 30),
            ("load of ready#1", "Relaxed", "Acquire", 39)
        ]
    );
    assert!(text.contains("only under weak memory"), "{text}");
    assert!(text.contains("no one change is enough"), "{text}");
    let json = fgvt_reports::render_json(&found.report);
    assert!(
        json.contains("\"passes_sequentially_consistent\": true"),
        "{json}"
    );
}

/// A counter whose increment loads and then stores (`Acquire`, `Release`): two increments can
/// read the same count, whatever the orderings.
struct LostUpdate {
    count: AtomicI64,
}

#[fgvt_sync::operations]
impl LostUpdate {
    fn new() -> Self {
        LostUpdate {
            count: AtomicI64::new(0),
        }
    }

    pub fn inc(&self) {
        let seen = self.count.load(Ordering::Acquire);
        self.count.store(seen + 1, Ordering::Release);
    }

    pub fn get(&self) -> i64 {
        self.count.load(Ordering::Acquire)
    }
}

/// A failure that some run shows with every access `SeqCst` has no fix in orderings: that run
/// is a run of the code whatever its orderings. The report says so and tries none, where it
/// explored the test again for every change it could make.
#[test]
fn a_failure_under_seq_cst_gets_no_fix_search() {
    let found = Test::<LostUpdate>::new("lost_update")
        .thread(&["inc()"])
        .thread(&["inc()"])
        .finally(&["get()"])
        .localize()
        .unwrap();
    assert_eq!(found.report.verdict, Verdict::NotLinearizable);
    let memory = found.report.memory.as_ref().expect("a weak-memory run");
    assert_eq!(memory.passes_sequentially_consistent, Some(false));
    assert!(memory.fix.is_empty());
    assert_eq!(memory.fix_note, Some(fgvt_reports::no_fix_note()));
    let text = fgvt_reports::render_text(&found.report, false);
    assert!(
        text.contains("with every access SeqCst, some run still fails"),
        "{text}"
    );
    assert!(text.contains("(none tried)"), "{text}");
}

/// A correct release/acquire flag: the report says which model ran, and has no fix to make.
#[test]
fn a_passing_weak_test_reports_its_model_and_no_fix() {
    let found = publish_then_read::<true, true>("fixed_flag")
        .localize()
        .unwrap();
    let memory = found.report.memory.as_ref().expect("a weak-memory run");
    assert_eq!(
        (memory.passes_sequentially_consistent, memory.fix.len()),
        (None, 0)
    );
}

/// A relaxed flag beside a mutex: under weak memory only atomic accesses go several ways, never
/// a lock step (whatever another thread's unrecorded access chose before it).
struct FlagAndLock {
    flag: AtomicI64,
    count: fgvt_sync::Mutex<i64>,
}

#[fgvt_sync::operations]
impl FlagAndLock {
    fn new() -> Self {
        FlagAndLock {
            flag: AtomicI64::new(0),
            count: fgvt_sync::Mutex::new(0),
        }
    }

    pub fn set(&self) {
        self.flag.store(1, Ordering::Relaxed);
    }

    pub fn bump(&self) -> i64 {
        let seen = self.flag.load(Ordering::Relaxed);
        *self.count.lock().unwrap() += 1;
        seen
    }
}

#[test]
fn only_atomic_accesses_go_several_ways() {
    let test = Test::<FlagAndLock>::new("flag_and_lock")
        .thread(&["set()"])
        .thread(&["bump()"])
        .thread(&["set()"]);
    let tree = test.explore().unwrap();
    assert_eq!(test.memory_model(), Some(Memory::Weak));
    let mut ways = 0;
    for event in &tree.events {
        let several = event.ways() > 1;
        ways += usize::from(several);
        let atomic = matches!(
            event.kind,
            fgvt_sync::report::EventKind::Read | fgvt_sync::report::EventKind::Write
        );
        assert!(!several || atomic, "{event:?}");
    }
    assert!(ways > 0, "the relaxed accesses go several ways");
}

/// A writer that stores 1 five times, relaxed, and a reader that may read any of the stores.
struct Counter5 {
    x: AtomicI64,
}

#[fgvt_sync::operations]
impl Counter5 {
    fn new() -> Self {
        Counter5 {
            x: AtomicI64::new(0),
        }
    }

    pub fn write(&self) {
        for _ in 0..5 {
            self.x.store(1, Ordering::Relaxed);
        }
    }

    pub fn read(&self) -> i64 {
        self.x.load(Ordering::Relaxed)
    }
}

/// A load that could read more stores than `max_stale` allows: the older ones are one bounded
/// leaf, the result is partial, and the report names the bound and how to raise it.
#[test]
fn a_load_with_more_stale_stores_than_the_bound_is_cut_and_says_so() {
    let test = |max| {
        Test::<Counter5>::new("five_stores")
            .thread(&["write()"])
            .thread(&["read()"])
            .max_stale(max)
            .localize()
            .unwrap()
            .report
    };
    let cut = test(1);
    assert_eq!(cut.partial.as_deref(), Some("max-stale"));
    assert!(cut.tree.bounded_leaves > 0);
    assert_eq!(cut.verdict, Verdict::Inconclusive);
    let text = fgvt_reports::render_text(&cut, false);
    assert!(text.contains("only the newest 2 were explored"), "{text}");
    assert!(text.contains("--max-stale"), "{text}");
    // With room for every store, nothing is cut.
    let whole = test(8);
    assert_eq!((whole.partial, whole.tree.bounded_leaves), (None, 0));
    assert_eq!(whole.verdict, Verdict::Linearizable);
}
