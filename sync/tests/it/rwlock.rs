//! `RwLock`: readers share it, a writer has it alone, and a thread that cannot have it waits,
//! up to a stuck leaf when no one can move.

use fgvt_reports::Verdict;
use fgvt_sync::{unknown, Call, IntoValue, Object, RwLock, Shared, Test, Value};
use fgvt_tree::{EventKind, LeafKind};

/// A counter behind a reader-writer lock.
struct RwCounter(RwLock<Shared<i64>>);

impl Object for RwCounter {
    fn new() -> Self {
        RwCounter(RwLock::new(Shared::new(0)))
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match call.op.as_str() {
            // Right: the increment under the write lock.
            "inc" => {
                let count = self.0.write().unwrap();
                let v = count.get();
                count.set(v + 1);
                Ok(Value::Unit)
            }
            // Wrong: a mutation under a read lock, which other readers share.
            "inc_shared" => {
                let count = self.0.read().unwrap();
                let v = count.get();
                count.set(v + 1);
                Ok(Value::Unit)
            }
            "get" => Ok(self.0.read().unwrap().get().into_value()),
            // A reader asking to write: it waits for itself.
            "upgrade" => {
                let _reading = self.0.read().unwrap();
                let _writing = self.0.write().unwrap();
                Ok(Value::Unit)
            }
            _ => Err(unknown(call)),
        }
    }
}

fn test(name: &str, threads: &[&[&str]], finals: &[&str]) -> Test<RwCounter> {
    threads
        .iter()
        .fold(Test::new(name), |t, calls| t.thread(calls))
        .finally(finals)
}

#[test]
fn increments_under_the_write_lock_are_linearizable() {
    let found = test("rw_inc", &[&["inc()"], &["inc()"]], &["get()"])
        .localize()
        .unwrap();
    assert_eq!(found.report.verdict, Verdict::Linearizable);
    // The write lock serializes the increments: of the two orders of the lock steps, each
    // runs one increment whole before the other starts (lock, get, set, unlock).
    assert_eq!(found.report.tree.leaves, 2);
}

#[test]
fn a_mutation_under_the_read_lock_loses_an_update() {
    let found = test(
        "rw_inc_shared",
        &[&["inc_shared()"], &["inc_shared()"]],
        &["get()"],
    )
    .localize()
    .unwrap();
    assert_eq!(found.report.verdict, Verdict::NotLinearizable);
    // Both readers hold the lock at once: T0 then T1 take it before anyone releases it.
    let (steps, _) = found.tree.follow(&[0, 1]).unwrap();
    assert!(steps.iter().all(|e| e.kind == EventKind::Lock), "{steps:?}");
    // The lost update is decided by the cell's read and write, inside the read lock.
    let last = found.report.cdrs[0].nodes.last().unwrap();
    for race in &last.races {
        assert!(
            race.line_text.contains("count.get()") || race.line_text.contains("count.set("),
            "{}",
            race.line_text
        );
    }
}

#[test]
fn a_writer_waits_for_a_reader_and_readers_for_a_writer() {
    let tree = test("rw_wait", &[&["inc()"], &["get()"]], &[])
        .explore()
        .unwrap();
    // Once T0 holds the write lock, only T0 can move until it releases it.
    let (_, after_write) = tree.follow(&[0]).unwrap();
    let movers: Vec<usize> = tree
        .children(after_write)
        .iter()
        .map(|(e, _)| e.thread)
        .collect();
    assert_eq!(movers, [0]);
    // Once T1 holds a read lock, T0's write lock waits too.
    let (_, after_read) = tree.follow(&[1]).unwrap();
    let movers: Vec<usize> = tree
        .children(after_read)
        .iter()
        .map(|(e, _)| e.thread)
        .collect();
    assert_eq!(movers, [1]);
}

#[test]
fn upgrading_a_read_lock_is_a_stuck_leaf_naming_the_reader() {
    let tree = test("rw_upgrade", &[&["upgrade()"]], &[])
        .explore()
        .unwrap();
    let (_, leaf, _) = tree.leaves().next().unwrap();
    assert_eq!(leaf.kind, LeafKind::Stuck);
    let reason = &leaf.waiting[0].reason;
    assert!(reason.contains("held by readers T0"), "{reason}");
}
