//! `Condvar`: a one-slot channel (a blocking queue of capacity one) on a `Mutex` and two
//! condition variables is linearizable when every change notifies, and gets stuck, naming the
//! condition variable and the line of the wait, when `put` forgets to notify. Merging states
//! changes nothing a report says about it.

use crate::common;

use common::results;
use fgvt_sync::atomic::{AtomicBool, Ordering::SeqCst};
use fgvt_sync::report::{CoarseEvent, LeafKind, LocalizeReport, Verdict};
use fgvt_sync::{unknown, Arg, Call, Condvar, IntoValue, Mutex, Object, Test, Value};

/// A channel of one slot: `put(v)` waits while the slot is full, `take()` while it is empty.
/// With `NOTIFY` false, `put` forgets to wake a waiting `take`.
struct Channel<const NOTIFY: bool> {
    slot: Mutex<Option<i64>>,
    filled: Condvar,
    emptied: Condvar,
}

impl<const NOTIFY: bool> Channel<NOTIFY> {
    fn put(&self, v: i64) {
        let slot = self.slot.lock().unwrap();
        let mut slot = self.emptied.wait_while(slot, |s| s.is_some()).unwrap();
        *slot = Some(v);
        if NOTIFY {
            self.filled.notify_one();
        }
    }

    fn take(&self) -> i64 {
        let slot = self.slot.lock().unwrap();
        let mut slot = self.filled.wait_while(slot, |s| s.is_none()).unwrap();
        let v = slot.take().expect("the slot is full after the wait");
        self.emptied.notify_one();
        v
    }
}

impl<const NOTIFY: bool> Object for Channel<NOTIFY> {
    fn new() -> Self {
        Channel {
            slot: Mutex::new(None),
            filled: Condvar::new(),
            emptied: Condvar::new(),
        }
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match (call.op.as_str(), call.args.as_slice()) {
            ("put", [v]) => {
                self.put(v.int()?);
                Ok(Value::Unit)
            }
            ("take", []) => Ok(self.take().into_value()),
            _ => Err(unknown(call)),
        }
    }
}

type Correct = Channel<true>;
type Forgetful = Channel<false>;

/// A test of `O` on `threads`, checked against the built-in blocking queue (`put` appends,
/// `take` blocks while it is empty). The tests put no more than they take, so a one-slot
/// channel that works has the runs of an unbounded queue.
fn test<O: Object>(name: &str, threads: &[&[&str]]) -> Test<O> {
    threads
        .iter()
        .fold(Test::new(name), |t, calls| t.thread(calls))
        .spec("queue")
}

/// The 1-based line of this file that contains `text`.
fn line_of(text: &str) -> usize {
    include_str!("condvar.rs")
        .lines()
        .position(|l| l.contains(text))
        .expect("the line is in this file")
        + 1
}

#[test]
fn a_channel_that_notifies_is_linearizable_and_never_stuck() {
    let found = test::<Correct>("channel", &[&["put(1)", "put(2)"], &["take()", "take()"]])
        .localize()
        .unwrap();
    assert_eq!(found.report.verdict, Verdict::Linearizable);
    let t = &found.report.tree;
    assert_eq!(
        (t.stuck_leaves, t.fault_leaves, t.bounded_leaves),
        (0, 0, 0)
    );
    assert!(found.tree.partial.is_none());
    // Some run makes a taker wait: the channel is empty when it comes.
    let waited = (0..found.tree.stats().leaves).any(|i| {
        let (events, _) = found.tree.nth_leaf(i).unwrap();
        events.iter().any(|e| e.value == "wait on filled#1")
    });
    assert!(waited);
}

#[test]
fn a_put_that_forgets_to_notify_leaves_the_taker_waiting_forever() {
    let found = test::<Forgetful>("forgetful", &[&["put(1)"], &["take()"]])
        .localize()
        .unwrap();
    assert_eq!(found.report.verdict, Verdict::NotLinearizable);
    assert!(found.report.tree.stuck_leaves > 0);
    let (_, leaf, _) = found
        .tree
        .leaves()
        .find(|(_, l, _)| l.kind == LeafKind::Stuck)
        .unwrap();
    let wait = &leaf.waiting[0];
    assert_eq!(wait.thread, 1);
    assert_eq!(
        wait.reason,
        "waits on filled#1 (to take slot#0 back), and no thread is left to notify it"
    );
    // The report locates the wait on the `wait_while` line of `take`.
    let run = &found.report.cdrs[0].witness;
    assert_eq!(run.leaf, "stuck");
    let at = run.waiting[0].location.as_ref().unwrap();
    assert_eq!(
        at.line,
        line_of("let mut slot = self.filled.wait_while(slot, |s| s.is_none()).unwrap();")
    );
    assert!(at.file.ends_with("condvar.rs"), "{at}");
}

#[test]
fn a_wait_releases_the_lock_and_a_notify_wakes_the_waiter() {
    let tree = test::<Correct>("wake", &[&["take()"], &["put(7)"]])
        .explore()
        .unwrap();
    // T0 takes the lock, finds nothing, waits: the lock is free for T1, and T0 cannot move
    // until T1's notify.
    let (steps, after_wait) = tree.follow(&[0, 0]).unwrap();
    assert_eq!(steps[1].value, "wait on filled#1");
    assert_eq!(steps[1].kind, fgvt_sync::report::EventKind::Unlock);
    let movers: Vec<usize> = tree
        .children(after_wait)
        .iter()
        .map(|(e, _)| e.thread)
        .collect();
    assert_eq!(movers, [1]);
    // T1 puts and notifies (lock, notify, unlock): the notify names the thread it wakes.
    let (steps, _) = tree.follow(&[0, 0, 1, 1]).unwrap();
    assert_eq!(steps[3].value, "notify_one: wakes T0");
    // Every run ends with the taker holding 7.
    for (_, leaf, _) in tree.leaves() {
        assert_eq!(leaf.kind, LeafKind::Complete);
        assert!(leaf.history.events.iter().any(|e| matches!(
            e,
            CoarseEvent::Return {
                thread: 0,
                value: Some(Value::Int(7))
            }
        )));
    }
}

#[test]
fn a_notify_with_no_waiter_is_lost_and_named_so() {
    let tree = test::<Correct>("lost", &[&["put(1)"]]).explore().unwrap();
    let (events, _) = tree.nth_leaf(0).unwrap();
    let notify = events
        .iter()
        .find(|e| e.value.starts_with("notify_one"))
        .unwrap();
    assert_eq!(notify.value, "notify_one: no waiter");
    assert_eq!(notify.location, "filled#1");
}

/// A condition variable named by hand, as reports show it.
struct Named {
    slot: Mutex<bool>,
    cvs: [Condvar; 1],
}

impl Object for Named {
    fn new() -> Self {
        Named {
            slot: Mutex::new(false).named("flag"),
            cvs: [Condvar::new().named("cvs[0]")],
        }
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match call.op.as_str() {
            "wait" => {
                let flag = self.slot.lock().unwrap();
                drop(self.cvs[0].wait_while(flag, |set| !*set).unwrap());
                Ok(Value::Unit)
            }
            _ => Err(unknown(call)),
        }
    }
}

#[test]
fn a_named_condvar_is_named_in_the_stuck_leaf() {
    let tree = test::<Named>("named", &[&["wait()"]]).explore().unwrap();
    let (_, leaf, _) = tree.leaves().next().unwrap();
    assert_eq!(leaf.kind, LeafKind::Stuck);
    assert_eq!(
        leaf.waiting[0].reason,
        "waits on cvs[0]#1 (to take flag#0 back), and no thread is left to notify it"
    );
}

#[test]
fn a_wait_outside_the_scheduler_unwinds_rather_than_block() {
    let channel = Correct::new();
    let waited = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| channel.take()));
    assert!(waited.is_err());
}

/// The object's own serial runs (the default `self` spec) say that a `take` on an empty
/// channel blocks, as the built-in blocking queue does: the verdicts are the same without it.
#[test]
fn serial_runs_say_a_wait_blocks_so_the_self_spec_judges_blocking_objects() {
    let plans: [&[&[&str]]; 3] = [
        &[&["take()"], &["put(7)"]],
        &[&["put(1)", "put(2)"], &["take()", "take()"]],
        &[&["take()"], &["take()"], &["put(1)", "put(2)"]],
    ];
    for threads in plans {
        let own = |t: Test<Correct>| t.spec("self");
        let by_self = own(test::<Correct>("self", threads)).localize().unwrap();
        let by_queue = test::<Correct>("queue", threads).localize().unwrap();
        assert_eq!(by_self.report.verdict, Verdict::Linearizable, "{threads:?}");
        assert_eq!(
            summary(&by_self.report),
            summary(&by_queue.report),
            "{threads:?}"
        );
        let forgetful = test::<Forgetful>("self", threads).spec("self").localize();
        let forgetful = forgetful.unwrap().report.verdict;
        assert_eq!(forgetful, Verdict::NotLinearizable, "{threads:?}");
    }
}

/// What must not change with merging: unfolded counts, label totals and the CDRS found.
fn summary(report: &LocalizeReport) -> impl PartialEq + std::fmt::Debug {
    let t = &report.tree;
    let mut cdrs: Vec<(String, u64, Vec<usize>)> = report
        .cdrs
        .iter()
        .map(|c| {
            let steps = c.nodes.iter().map(|n| n.step).collect();
            (c.pattern.clone(), c.failing_leaves, steps)
        })
        .collect();
    cdrs.sort();
    (
        report.verdict,
        (t.nodes, t.leaves, t.passing_leaves, t.failing_leaves),
        (t.unknown_leaves, t.complete_leaves, t.stuck_leaves),
        (t.fault_leaves, t.bounded_leaves, t.max_depth),
        report.labels,
        report.cdrs_found,
        cdrs,
    )
}

/// Checks that `O` on `threads` reports the same with and without merging, that merging
/// stored no more nodes, and that the verdict is `verdict`; the nodes each stored.
fn same_merged_and_unfolded<O: Object>(threads: &[&[&str]], verdict: Verdict) -> (u64, u64) {
    same_merged_and_unfolded_on(|| test::<O>("merging", threads), verdict, threads)
}

/// [`same_merged_and_unfolded`] for the test `make` makes (`what` names it in failures).
fn same_merged_and_unfolded_on<O: Object>(
    make: impl Fn() -> Test<O>,
    verdict: Verdict,
    what: impl std::fmt::Debug,
) -> (u64, u64) {
    // The whole tree both ways, however long the unfolded one takes to explore, and every
    // interleaving: merging is what this compares.
    let whole = |merge: bool| {
        let test = make().merge(merge).partial_order_reduction(false);
        test.report_budget(None).localize().unwrap()
    };
    let (merged, unfolded) = (whole(true), whole(false));
    assert_eq!(merged.report.verdict, verdict, "{what:?}");
    assert_eq!(
        summary(&merged.report),
        summary(&unfolded.report),
        "{what:?}"
    );
    // Finer than verdicts: a state merged with one that differs (a waiter woken in one and
    // not the other) hands its subtree's results to every path into it.
    assert_eq!(results(&merged.tree), results(&unfolded.tree), "{what:?}");
    let stored = (
        merged.report.tree.graph_nodes,
        unfolded.report.tree.graph_nodes,
    );
    assert!(
        stored.0 <= stored.1,
        "{what:?}: merging stored {}, unfolding {}",
        stored.0,
        stored.1
    );
    stored
}

#[test]
fn merging_changes_nothing_a_report_says_about_waiters() {
    let cases: &[&[&[&str]]] = &[
        &[&["put(1)"], &["take()"]],
        &[&["put(1)", "put(2)"], &["take()", "take()"]],
        &[&["put(1)"], &["put(2)"], &["take()", "take()"]],
        &[&["take()"], &["take()"], &["put(1)", "put(2)"]],
    ];
    // Every step here is under the mutex, whose data version names its last holder and what
    // that one saw: two orders of the lock steps are two states, so merging finds none equal
    // (and must not find any that the unfolded tree tells apart).
    for threads in cases {
        same_merged_and_unfolded::<Correct>(threads, Verdict::Linearizable);
        same_merged_and_unfolded::<Forgetful>(threads, Verdict::NotLinearizable);
    }
}

/// A doorbell: `wait()` waits on the bell once (no condition: a ring before the wait is
/// lost), `ring()` notifies without taking the mutex, and `knock()` writes a flag twice,
/// steps that commute with everything.
struct Doorbell {
    hall: Mutex<()>,
    bell: Condvar,
    knocked: AtomicBool,
}

impl Object for Doorbell {
    fn new() -> Self {
        Doorbell {
            hall: Mutex::new(()),
            bell: Condvar::new(),
            knocked: AtomicBool::new(false),
        }
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match call.op.as_str() {
            "wait" => {
                let hall = self.hall.lock().unwrap();
                drop(self.bell.wait(hall).unwrap());
                Ok(Value::Unit)
            }
            "ring" => {
                self.bell.notify_one();
                Ok(Value::Unit)
            }
            "knock" => {
                self.knocked.store(true, SeqCst);
                self.knocked.store(true, SeqCst);
                Ok(Value::Unit)
            }
            _ => Err(unknown(call)),
        }
    }
}

#[test]
fn a_waiter_woken_and_one_not_are_two_states() {
    // After `T0 lock, T0 wait, T1 ring` T0 is woken; after `T0 lock, T1 ring, T0 wait` the
    // ring was lost. Memory, logs and history are the same: only the waiter's state tells
    // them apart, and merging them would hand one's future to the other.
    let threads: &[&[&str]] = &[&["wait()"], &["ring()"], &["knock()"]];
    let make = || {
        threads
            .iter()
            .fold(Test::<Doorbell>::new("doorbell"), |t, calls| {
                t.thread(calls)
            })
    };
    // Alone, `wait()` always blocks: the `self` spec says so, so a run where the ring wakes it
    // cannot be placed in any serial order (a door bell is no linearizable object). The tree is
    // what matters here.
    let (merged, unfolded) = same_merged_and_unfolded_on(make, Verdict::NotLinearizable, threads);
    // The knocks commute with the rest: merging finds equal states there.
    assert!(merged < unfolded, "{merged} {unfolded}");
    let tree = make().explore().unwrap();
    let kinds: Vec<LeafKind> = tree.leaves().map(|(_, l, _)| l.kind).collect();
    assert!(kinds.contains(&LeafKind::Complete) && kinds.contains(&LeafKind::Stuck));
}
