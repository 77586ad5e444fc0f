//! Mutual exclusion under weak memory: a lock whose threads wait spinning on `SeqCst` loads is
//! explored completely (a turn that saw nothing new is a loop edge whatever its orderings), and
//! a lock that store buffering breaks gets the fix that needs `SeqCst`: a fence, or, where RC11
//! makes a fence not enough, the accesses themselves.

use fgvt_reports::{LocalizeReport, Verdict};
use fgvt_sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use fgvt_sync::cell::UnsafeCell;
use fgvt_sync::hint::spin_loop;
use fgvt_sync::Test;

/// Peterson's lock around a plain counter: `SeqCst` flags and turn with a `Release` unlock (the
/// correct one), or `Release` stores and `Acquire` loads (store buffering lets both in).
struct Peterson<const SEQ_CST: bool> {
    flag: [AtomicBool; 2],
    turn: AtomicUsize,
    count: UnsafeCell<i64>,
}

// SAFETY: `count` is only touched under the lock, which the tests check for data races.
unsafe impl<const SEQ_CST: bool> Sync for Peterson<SEQ_CST> {}

#[fgvt_sync::operations]
impl<const SEQ_CST: bool> Peterson<SEQ_CST> {
    fn new() -> Self {
        Peterson {
            flag: [AtomicBool::new(false), AtomicBool::new(false)],
            turn: AtomicUsize::new(0),
            count: UnsafeCell::new(0),
        }
    }

    pub fn inc(&self, me: usize) -> i64 {
        let other = 1 - me;
        let (store, load) = if SEQ_CST {
            (Ordering::SeqCst, Ordering::SeqCst)
        } else {
            (Ordering::Release, Ordering::Acquire)
        };
        self.flag[me].store(true, store);
        self.turn.store(other, store);
        while self.flag[other].load(load) && self.turn.load(load) == other {
            spin_loop();
        }
        // SAFETY: under the lock.
        let v = self.count.with_mut(|p| unsafe {
            *p += 1;
            *p
        });
        self.flag[me].store(false, Ordering::Release);
        v
    }
}

/// A try-lock in Dekker's manner: raise your flag, and enter if the other's is down.
struct Dekker {
    flag: [AtomicBool; 2],
    count: UnsafeCell<i64>,
}

// SAFETY: as `Peterson`.
unsafe impl Sync for Dekker {}

#[fgvt_sync::operations]
impl Dekker {
    fn new() -> Self {
        Dekker {
            flag: [AtomicBool::new(false), AtomicBool::new(false)],
            count: UnsafeCell::new(0),
        }
    }

    /// Returns nothing: whether it entered is the schedule's, so only a data race fails.
    pub fn try_inc(&self, me: usize) {
        self.flag[me].store(true, Ordering::Release);
        let entered = !self.flag[1 - me].load(Ordering::Acquire);
        if entered {
            // SAFETY: under the lock.
            self.count.with_mut(|p| unsafe { *p += 1 });
        }
        self.flag[me].store(false, Ordering::Release);
    }
}

/// The fix a report found, as (what, from, to, line).
fn fix_of(report: &LocalizeReport) -> Vec<(String, String, String, usize)> {
    let memory = report.memory.as_ref().expect("a weak-memory run");
    (memory.fix.iter())
        .map(|c| {
            let line = c.location.as_ref().expect("a place in the source").line;
            // `store to flag#1`: which of the two flags is the run's numbering.
            let access = c.access.split('#').next().unwrap_or_default().to_string();
            (access, c.from.clone(), c.change.clone() + ":" + &c.to, line)
        })
        .collect()
}

/// The line of this file that starts with `text`, where an access of the objects above is.
fn line_of(text: &str) -> usize {
    let source = include_str!("exclusion.rs");
    1 + source
        .lines()
        .position(|l| l.trim_start().starts_with(text))
        .expect("the line is in this file")
}

#[test]
fn a_seq_cst_peterson_lock_spinning_with_a_release_unlock_is_explored_completely() {
    let found = Test::<Peterson<true>>::new("peterson_seq_cst")
        .thread(&["inc(0)"])
        .thread(&["inc(1)"])
        .localize()
        .unwrap();
    let report = &found.report;
    assert_eq!(report.verdict, Verdict::Linearizable, "{:?}", report.notes);
    assert_eq!(report.tree.unknown_leaves, 0);
    assert!(report.partial.is_none());
}

#[test]
fn the_release_acquire_peterson_lock_is_fixed_by_three_seq_cst_accesses_not_a_fence() {
    let found = Test::<Peterson<false>>::new("peterson_release_acquire")
        .thread(&["inc(0)"])
        .thread(&["inc(1)"])
        .localize()
        .unwrap();
    let report = &found.report;
    assert_eq!(report.verdict, Verdict::NotLinearizable);
    let order = |what: &str, from: &str, line: &str| {
        (
            what.to_string(),
            from.to_string(),
            "order:SeqCst".to_string(),
            line_of(line),
        )
    };
    assert_eq!(
        fix_of(report),
        [
            order("store to flag", "Release", "self.flag[me].store(true"),
            order("store to turn", "Release", "self.turn.store(other"),
            order("load of flag", "Acquire", "while self.flag[other]"),
        ]
    );
    let text = fgvt_reports::render_text(report, false);
    assert!(text.contains("with those 3 every run passes"), "{text}");
}

#[test]
fn store_buffering_in_a_try_lock_is_fixed_by_a_seq_cst_fence() {
    let found = Test::<Dekker>::new("dekker")
        .thread(&["try_inc(0)"])
        .thread(&["try_inc(1)"])
        .localize()
        .unwrap();
    let report = &found.report;
    assert_eq!(report.verdict, Verdict::NotLinearizable);
    let fix = fix_of(report);
    let fence_after_store = (
        "store to flag".to_string(),
        "Release".to_string(),
        "fence-after:SeqCst".to_string(),
        line_of("self.flag[me].store(true, Ordering::Release)"),
    );
    let fence_before_load = (
        "load of flag".to_string(),
        "Acquire".to_string(),
        "fence-before:SeqCst".to_string(),
        line_of("let entered"),
    );
    assert!(
        fix == [fence_after_store] || fix == [fence_before_load],
        "{fix:?}"
    );
}
