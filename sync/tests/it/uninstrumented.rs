//! An object written with `std`'s atomics is invisible to fgvt: the report says so, and
//! `assert_linearizable` fails on it unless the test opts out.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicI64, Ordering::SeqCst};

use fgvt_reports::Verdict;
use fgvt_sync::{unknown, Call, IntoValue, Object, Test, Value};

/// The lost-update counter, but on `std`'s atomic: fgvt sees none of its accesses.
struct StdCounter(AtomicI64);

impl Object for StdCounter {
    fn new() -> Self {
        StdCounter(AtomicI64::new(0))
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match call.op.as_str() {
            "inc" => {
                let v = self.0.load(SeqCst);
                self.0.store(v + 1, SeqCst);
                Ok(Value::Unit)
            }
            "get" => Ok(self.0.load(SeqCst).into_value()),
            _ => Err(unknown(call)),
        }
    }
}

fn test() -> Test<StdCounter> {
    Test::<StdCounter>::new("std_counter")
        .thread(&["inc()"])
        .thread(&["inc()"])
        .finally(&["get()"])
}

#[test]
fn the_report_names_the_threads_that_touched_no_fgvt_sync_type() {
    let found = test().localize().unwrap();
    // Nothing instrumented: no race to explore, and every run passes.
    assert_eq!(found.report.verdict, Verdict::Linearizable);
    let notes = &found.report.notes;
    let note = (notes.iter())
        .find(|n| n.contains("the operations of T0, T1 touched no fgvt_sync type"))
        .unwrap_or_else(|| panic!("{notes:?}"));
    assert!(note.contains("std's atomics"), "{note}");
    // fgvt-sync's own files, where the operations' local steps are, are not warned about.
    assert!(!notes.iter().any(|n| n.contains("sync/src/")), "{notes:?}");
    let text = fgvt_reports::render_text(&found.report, false);
    assert!(text.contains("touched no fgvt_sync type"), "{text}");
}

#[test]
fn assert_linearizable_fails_on_it_unless_the_test_opts_out() {
    let failed = catch_unwind(AssertUnwindSafe(|| test().assert_linearizable()));
    let message = failed.expect_err("a blind test must not pass");
    let message = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(message.contains(".allow_uninstrumented()"), "{message}");
    test().allow_uninstrumented().assert_linearizable();
}

/// One thread uses the instrumented object, the other only computes.
struct Mixed(fgvt_sync::atomic::AtomicI64);

impl Object for Mixed {
    fn new() -> Self {
        Mixed(fgvt_sync::atomic::AtomicI64::new(0))
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match call.op.as_str() {
            "inc" => Ok(self.0.fetch_add(1, SeqCst).into_value()),
            "answer" => Ok(42i64.into_value()),
            _ => Err(unknown(call)),
        }
    }
}

#[test]
fn only_the_threads_that_touched_nothing_are_named() {
    let found = Test::<Mixed>::new("mixed")
        .thread(&["inc()"])
        .thread(&["answer()"])
        .localize()
        .unwrap();
    let notes = &found.report.notes;
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("T1's operations touched no fgvt_sync type")),
        "{notes:?}"
    );
}
