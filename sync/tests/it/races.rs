//! Data races on plain memory in real code: two threads touching an `UnsafeCell` (or a `Cell`,
//! or a `Shared` cell when the test asks) with nothing ordering them end the run in a fault leaf
//! that names both accesses, sequentially consistent or not; a lock, a synchronizing atomic or
//! the serial part between them is no race; a cell made during an operation is written by its
//! making.

use fgvt_sync::atomic::{AtomicBool, AtomicPtr, Ordering::SeqCst};
use fgvt_sync::cell::{Cell, UnsafeCell};
use fgvt_sync::report::{LeafKind, Tree};
use fgvt_sync::{Memory, Mutex, RwLock, Shared, Test, Verdict};

/// The data races of `tree`'s leaves, as `(first, second)` accesses `(thread, access)`.
fn races(tree: &Tree) -> Vec<((usize, String), (usize, String))> {
    let mut found: Vec<_> = tree
        .leaves()
        .filter_map(|(_, leaf, _)| leaf.fault.as_ref()?.race.as_deref())
        .map(|r| {
            (
                (r.first.thread, r.first.access.clone()),
                (r.second.thread, r.second.access.clone()),
            )
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

fn access(thread: usize, what: &str) -> (usize, String) {
    (thread, what.to_string())
}

/// A counter in plain memory that threads add to without any synchronization.
struct Unsynchronized {
    count: UnsafeCell<i64>,
}

// SAFETY: it is not, which is what the test finds.
unsafe impl Sync for Unsynchronized {}

#[fgvt_sync::operations]
impl Unsynchronized {
    fn new() -> Self {
        Unsynchronized {
            count: UnsafeCell::new(0),
        }
    }

    pub fn inc(&self) {
        self.count.with_mut(|p| unsafe { *p += 1 });
    }

    pub fn get(&self) -> i64 {
        self.count.with(|p| unsafe { *p })
    }
}

#[test]
fn two_threads_writing_a_cell_race_even_sequentially_consistent() {
    let test = Test::<Unsynchronized>::new("unsynchronized")
        .thread(&["inc()"])
        .thread(&["inc()"])
        .finally(&["get()"]);
    let found = test.localize().unwrap();
    assert_eq!(test.memory_model(), Some(Memory::SequentiallyConsistent));
    assert_eq!(found.report.verdict, Verdict::NotLinearizable);
    // No step between the two writes: every run meets the race, whichever thread goes first.
    assert!(found
        .tree
        .leaves()
        .all(|(_, leaf, _)| leaf.kind == LeafKind::Fault));
    assert_eq!(
        races(&found.tree),
        [(access(0, "write"), access(1, "write"))]
    );
    let text = fgvt_sync::report::render_text(&found.report, false);
    assert!(
        text.contains("data race on count#0 (undefined behaviour)"),
        "{text}"
    );
    assert!(text.contains("nothing orders them: no lock"), "{text}");
    // The final part reads the cell after every thread: never a race.
    let serial = Test::<Unsynchronized>::new("serial")
        .init(&["inc()"])
        .thread(&["get()"])
        .finally(&["inc()", "get()"]);
    assert_eq!(
        serial.localize().unwrap().report.verdict,
        Verdict::Linearizable
    );
}

/// The same counter behind a lock.
struct Locked {
    count: Mutex<()>,
    value: UnsafeCell<i64>,
}

unsafe impl Sync for Locked {}

#[fgvt_sync::operations]
impl Locked {
    fn new() -> Self {
        Locked {
            count: Mutex::new(()),
            value: UnsafeCell::new(0),
        }
    }

    pub fn inc(&self) {
        let _held = self.count.lock().unwrap();
        self.value.with_mut(|p| unsafe { *p += 1 });
    }

    pub fn get(&self) -> i64 {
        let _held = self.count.lock().unwrap();
        self.value.with(|p| unsafe { *p })
    }
}

#[test]
fn a_lock_orders_what_its_holders_do() {
    let test = Test::<Locked>::new("locked")
        .thread(&["inc()", "get()"])
        .thread(&["inc()", "get()"]);
    let found = test.localize().unwrap();
    assert_eq!(found.report.verdict, Verdict::Linearizable);
    assert!(races(&found.tree).is_empty());
}

/// Readers share an `RwLock` around plain data, then a writer takes it: every reader's read
/// happens before the write, whichever released last (under weak memory too: a release of the
/// lock continues the release sequence of the ones before).
struct Shared2 {
    lock: RwLock<()>,
    value: UnsafeCell<i64>,
}

unsafe impl Sync for Shared2 {}

#[fgvt_sync::operations]
impl Shared2 {
    fn new() -> Self {
        Shared2 {
            lock: RwLock::new(()),
            value: UnsafeCell::new(0),
        }
    }

    pub fn read(&self) -> i64 {
        let _held = self.lock.read().unwrap();
        self.value.with(|p| unsafe { *p })
    }

    pub fn write(&self, v: i64) {
        let _held = self.lock.write().unwrap();
        self.value.with_mut(|p| unsafe { *p = v });
    }
}

#[test]
fn a_writer_happens_after_every_reader_that_released_the_lock() {
    for memory in [Memory::SequentiallyConsistent, Memory::Weak] {
        let test = Test::<Shared2>::new("readers")
            .thread(&["read()"])
            .thread(&["read()"])
            .thread(&["write(1)"])
            .memory(memory);
        let found = test.localize().unwrap();
        assert_eq!(found.report.verdict, Verdict::Linearizable, "{memory:?}");
        assert!(races(&found.tree).is_empty(), "{memory:?}");
    }
}

/// A value published through a `SeqCst` flag: the flag orders it.
struct Flagged {
    data: UnsafeCell<i64>,
    ready: AtomicBool,
}

unsafe impl Sync for Flagged {}

#[fgvt_sync::operations]
impl Flagged {
    fn new() -> Self {
        Flagged {
            data: UnsafeCell::new(0),
            ready: AtomicBool::new(false),
        }
    }

    pub fn publish(&self, v: i64) {
        self.data.with_mut(|p| unsafe { *p = v });
        self.ready.store(true, SeqCst);
    }

    pub fn read(&self) -> Option<i64> {
        if self.ready.load(SeqCst) {
            Some(self.data.with(|p| unsafe { *p }))
        } else {
            None
        }
    }

    /// Reads the data whatever the flag says: a race with an unpublished write.
    pub fn peek(&self) -> i64 {
        self.data.with(|p| unsafe { *p })
    }
}

#[test]
fn a_seq_cst_flag_orders_the_data_it_publishes() {
    let published = Test::<Flagged>::new("published")
        .thread(&["publish(1)"])
        .thread(&["read()"]);
    let found = published.localize().unwrap();
    assert_eq!(found.report.verdict, Verdict::Linearizable);
    assert!(races(&found.tree).is_empty());
    let peeked = Test::<Flagged>::new("peeked")
        .thread(&["publish(1)"])
        .thread(&["peek()"]);
    let found = peeked.localize().unwrap();
    // The peek and the write are both made before either thread's first step: whichever
    // thread starts first, the other's access races with it.
    let found = races(&found.tree);
    assert!(!found.is_empty());
    for race in found {
        let pair = [race.0, race.1];
        assert!(
            pair.contains(&access(0, "write")) && pair.contains(&access(1, "read")),
            "{pair:?}"
        );
    }
}

/// A node made in an operation and published through a `Shared` cell (raced on by design,
/// which orders nothing) or through a `SeqCst` pointer (which does).
struct Node {
    value: UnsafeCell<i64>,
}

unsafe impl Sync for Node {}
unsafe impl Send for Node {}

struct Publisher {
    racy: Shared<usize>,
    ordered: AtomicPtr<Node>,
}

#[fgvt_sync::operations]
impl Publisher {
    fn new() -> Self {
        Publisher {
            racy: Shared::new(0),
            ordered: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// Makes a node holding `v` and publishes it in the `Shared` cell.
    pub fn publish_racy(&self, v: i64) {
        let node = Box::leak(Box::new(Node {
            value: UnsafeCell::new(v),
        }));
        self.racy.set(node as *mut Node as usize);
    }

    /// Reads the node the `Shared` cell points to, if any.
    pub fn read_racy(&self) -> Option<i64> {
        let node = self.racy.get() as *const Node;
        // SAFETY: nodes are leaked, so the pointer stays valid.
        (!node.is_null()).then(|| unsafe { (*node).value.with(|p| *p) })
    }

    /// Makes a node holding `v` and publishes it with a `SeqCst` store.
    pub fn publish(&self, v: i64) {
        let node = Box::leak(Box::new(Node {
            value: UnsafeCell::new(v),
        }));
        self.ordered.store(node, SeqCst);
    }

    /// Reads the node the atomic pointer points to, if any.
    pub fn read(&self) -> Option<i64> {
        let node = self.ordered.load(SeqCst);
        // SAFETY: nodes are leaked, so the pointer stays valid.
        (!node.is_null()).then(|| unsafe { (*node).value.with(|p| *p) })
    }
}

#[test]
fn a_cell_made_in_an_operation_is_written_by_its_making() {
    let racy = Test::<Publisher>::new("racy")
        .thread(&["publish_racy(1)"])
        .thread(&["read_racy()"]);
    let found = racy.localize().unwrap();
    assert_eq!(
        races(&found.tree),
        [(access(0, "creation"), access(1, "read"))]
    );
    let ordered = Test::<Publisher>::new("ordered")
        .thread(&["publish(1)"])
        .thread(&["read()"]);
    let found = ordered.localize().unwrap();
    assert_eq!(found.report.verdict, Verdict::Linearizable);
    assert!(races(&found.tree).is_empty());
}

/// A `Shared` cell two threads write: raced on by design, unless the test asks.
struct Field {
    value: Shared<i64>,
}

#[fgvt_sync::operations]
impl Field {
    fn new() -> Self {
        Field {
            value: Shared::new(0),
        }
    }

    pub fn set(&self, v: i64) {
        self.value.set(v);
    }

    pub fn get(&self) -> i64 {
        self.value.get()
    }
}

#[test]
fn shared_cells_are_checked_for_races_only_when_the_test_asks() {
    let by_design = Test::<Field>::new("by_design")
        .thread(&["set(1)"])
        .thread(&["set(2)"])
        .finally(&["get()"]);
    let found = by_design.localize().unwrap();
    assert!(races(&found.tree).is_empty());
    // The writes are steps: their two orders are two leaves, each linearizable.
    assert_eq!(found.report.tree.leaves, 2);
    let checked = by_design.races(true);
    let found = checked.localize().unwrap();
    assert_eq!(
        races(&found.tree),
        [
            (access(0, "write"), access(1, "write")),
            (access(1, "write"), access(0, "write"))
        ]
    );
    assert_eq!(found.report.tree.fault_leaves, 2);
}

/// A thread that waits on plain memory for another's write (each first takes a step, so that
/// either may go first).
struct PlainSpin {
    started: AtomicBool,
    flag: Cell<bool>,
}

unsafe impl Sync for PlainSpin {}

#[fgvt_sync::operations]
impl PlainSpin {
    fn new() -> Self {
        PlainSpin {
            started: AtomicBool::new(false),
            flag: Cell::new(false),
        }
    }

    pub fn wait(&self) {
        self.started.store(true, SeqCst);
        while !self.flag.get() {}
    }

    pub fn set(&self) {
        self.started.load(SeqCst);
        self.flag.set(true);
    }
}

#[test]
fn waiting_on_plain_memory_ends_in_a_fault_that_says_so_not_a_hang() {
    let test = Test::<PlainSpin>::new("plain_spin")
        .thread(&["wait()"])
        .thread(&["set()"]);
    let found = test.localize().unwrap();
    assert_eq!(found.report.verdict, Verdict::NotLinearizable);
    let messages: Vec<String> = (found.tree.leaves())
        .filter_map(|(_, leaf, _)| leaf.fault.as_ref().map(|f| f.message.clone()))
        .collect();
    // Where the setter goes first the waiter races with its write; where the waiter goes first
    // it spins alone and is stopped.
    assert!(
        messages
            .iter()
            .any(|m| m.contains("plain accesses in a row")),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.starts_with("data race on flag#")),
        "{messages:?}"
    );
}

/// A spin lock written the ordinary way: a `SeqCst` compare-exchange takes it, a store gives it
/// back, the count is in an `UnsafeCell`. With a `Relaxed` unlock every run ends in a data race
/// on the count (the second holder's write is ordered after nothing of the first's), and the
/// report says what that means: an ordering is missing, not a sequential fix; with `Release`
/// the model passes.
#[test]
fn a_data_race_in_every_run_is_told_as_a_missing_ordering() {
    use fgvt_sync::atomic::Ordering::{Relaxed, Release};
    use fgvt_sync::{thread, Model};
    use std::sync::Arc;
    struct SpinLock {
        locked: AtomicBool,
        count: UnsafeCell<u64>,
    }
    // SAFETY: the count is what the test checks for data races.
    unsafe impl Sync for SpinLock {}
    fn inc(lock: &SpinLock, unlock: fgvt_sync::atomic::Ordering) {
        while (lock.locked)
            .compare_exchange(false, true, SeqCst, SeqCst)
            .is_err()
        {
            std::hint::spin_loop();
        }
        // SAFETY: the lock is held.
        lock.count.with_mut(|p| unsafe { *p += 1 });
        lock.locked.store(false, unlock);
    }
    let run = |unlock: fgvt_sync::atomic::Ordering| {
        let body = move || {
            let lock = Arc::new(SpinLock {
                locked: AtomicBool::new(false),
                count: UnsafeCell::new(0),
            });
            let other = Arc::clone(&lock);
            let t = thread::spawn(move || inc(&other, unlock));
            inc(&lock, unlock);
            t.join().unwrap();
        };
        Model::new()
            .name("spin_lock")
            .localize(body)
            .unwrap()
            .report
    };
    let relaxed = run(Relaxed);
    assert_eq!(relaxed.verdict, Verdict::NotLinearizable);
    let note = |text: &str| relaxed.notes.iter().any(|n| n.contains(text));
    assert!(
        note("every interleaving ends in a data race"),
        "{:#?}",
        relaxed.notes
    );
    assert!(!note("sequential behaviour"), "{:#?}", relaxed.notes);
    assert_eq!(run(Release).verdict, Verdict::Linearizable);
}
