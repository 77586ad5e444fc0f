//! Code that mixes std's synchronization into an object on fgvt_sync's: the report names each
//! use with its line, and a fix never adds the fence the code already has.

use fgvt_sync::atomic::{AtomicI64, AtomicU64, Ordering};
use fgvt_sync::{Test, Verdict};
// The mistake under test: the seqlock's fences come from std, which fgvt cannot see.
use std::sync::atomic::fence;

/// Boehm's seqlock with its two fences, correct on real hardware, written with std's `fence`.
#[derive(Default)]
struct StdFencedSeqLock {
    seq: AtomicU64,
    a: AtomicI64,
    b: AtomicI64,
}

#[fgvt_sync::operations]
impl StdFencedSeqLock {
    pub fn write(&self, a: i64, b: i64) {
        let s = self.seq.load(Ordering::Relaxed);
        self.seq.store(s + 1, Ordering::Relaxed);
        fence(Ordering::Release);
        self.a.store(a, Ordering::Relaxed);
        self.b.store(b, Ordering::Relaxed);
        self.seq.store(s + 2, Ordering::Release);
    }

    pub fn read(&self) -> (i64, i64) {
        loop {
            let s1 = self.seq.load(Ordering::Acquire);
            if s1 % 2 == 0 {
                let a = self.a.load(Ordering::Relaxed);
                let b = self.b.load(Ordering::Relaxed);
                fence(Ordering::Acquire);
                let s2 = self.seq.load(Ordering::Relaxed);
                if s1 == s2 {
                    return (a, b);
                }
            }
            std::hint::spin_loop();
            fgvt_sync::hint::spin_loop();
        }
    }
}

/// The line of this file that holds `text`.
fn line_of(text: &str) -> usize {
    let source = include_str!("unseen.rs");
    1 + source.lines().position(|l| l.contains(text)).unwrap()
}

#[test]
fn std_fences_and_hints_are_named_and_no_fix_adds_them_again() {
    let found = Test::<StdFencedSeqLock>::new("std_fenced_seqlock")
        .thread(&["write(1, 1)"])
        .thread(&["read()"])
        .localize()
        .unwrap();
    let report = found.report;
    // Without the fences fgvt sees a torn read, which only weak memory gives: with fences it
    // cannot see in the code, that is no verdict (a false alarm as likely as a find).
    assert_eq!(report.verdict, Verdict::Inconclusive);
    assert!(
        !report.cdrs.is_empty(),
        "the failing runs are still localized"
    );
    let doubt = &report.notes[0];
    assert!(
        doubt.starts_with("INCONCLUSIVE, not NOT LINEARIZABLE"),
        "{doubt}"
    );
    let file = "sync/tests/it/unseen.rs";
    let release = line_of("fence(Ordering::Release);");
    assert!(doubt.contains(&format!("{file}:{release}")), "{doubt}");
    let warning = &report.notes[1];
    assert!(
        warning.starts_with("warning: fgvt cannot see std's synchronization"),
        "{warning}"
    );
    let file = "sync/tests/it/unseen.rs";
    for text in ["fence(Ordering::Release);", "fence(Ordering::Acquire);"] {
        let named = format!("`std::sync::atomic::fence` at {file}:{}", line_of(text));
        assert!(warning.contains(&named), "{named} in: {warning}");
    }
    assert!(
        warning.contains("use fgvt_sync::atomic::fence instead"),
        "{warning}"
    );
    // The spin hint is named apart: its loop is a retry loop all the same.
    let hint = &report.notes[2];
    let named = format!(
        "`std::hint::spin_loop` at {file}:{}",
        line_of("std::hint::spin_loop();")
    );
    assert!(hint.contains(&named), "{named} in: {hint}");
    assert!(hint.contains("Test::implied_hints"), "{hint}");
    // No fix puts a fence where the code has std's, and the fix's note says so.
    let memory = report.memory.expect("weak memory");
    let said = memory.fix_note.as_deref().unwrap();
    assert!(
        said.contains("no fence was tried beside std's fences"),
        "{said}"
    );
    let std_fences = [
        line_of("fence(Ordering::Release);"),
        line_of("fence(Ordering::Acquire);"),
    ];
    for change in &memory.fix {
        let at = change.location.as_ref().unwrap();
        let fence = change.change != "order";
        assert!(
            !(fence && std_fences.iter().any(|l| l.abs_diff(at.line) <= 2)),
            "a fix adds a fence beside std's: {change:?}"
        );
    }
}
