//! Mutual exclusion under weak memory: a try-lock that store buffering breaks gets the fix
//! that needs `SeqCst`, a fence between its store and its load. (Peterson's lock, whose fix
//! needs the accesses themselves `SeqCst`, is a fixture: `fixtures/rust/src/peterson.rs`.)

use fgvt_reports::{LocalizeReport, Verdict};
use fgvt_sync::atomic::{AtomicBool, Ordering};
use fgvt_sync::cell::UnsafeCell;
use fgvt_sync::Test;

/// A try-lock in Dekker's manner: raise your flag, and enter if the other's is down.
struct Dekker {
    flag: [AtomicBool; 2],
    count: UnsafeCell<i64>,
}

// SAFETY: `count` is only touched under the lock, which the test checks for data races.
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
