//! Helpers shared by fgvt-sync's integration tests. Each test file declares `mod common;` and
//! uses what it needs.
#![allow(dead_code)]

pub mod treiber;

use std::collections::{BTreeMap, BTreeSet};

use fgvt_sync::atomic::{AtomicI64, Ordering::SeqCst};
use fgvt_sync::report::{History, Tree};
use fgvt_sync::{unknown, Call, IntoValue, LocalizeReport, Object, Test, Value};

/// The report on `O`, a counter, incremented once by each of two threads and then read.
pub fn two_increments<O: Object>() -> LocalizeReport {
    Test::<O>::new("counter")
        .thread(&["inc()"])
        .thread(&["inc()"])
        .finally(&["get()"])
        .localize()
        .unwrap()
        .report
}

/// A counter whose increment is a load then a store, dispatched by hand: two increments can
/// lose one.
pub struct LossyCounter(AtomicI64);

impl Object for LossyCounter {
    fn new() -> Self {
        LossyCounter(AtomicI64::new(0))
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match (call.op.as_str(), call.args.as_slice()) {
            ("inc", []) => {
                let v = self.0.load(SeqCst);
                self.0.store(v + 1, SeqCst);
                Ok(Value::Unit)
            }
            ("get", []) => Ok(self.0.load(SeqCst).into_value()),
            _ => Err(unknown(call)),
        }
    }
}

/// How many unfolded runs end with each tuple of results (per thread, in order): what merging
/// equal states must not change.
pub fn results(tree: &Tree) -> BTreeMap<Vec<(usize, String)>, u64> {
    let mut runs = BTreeMap::new();
    for (_, leaf, paths) in tree.leaves() {
        *runs.entry(returns(&leaf.history)).or_insert(0) += paths;
    }
    runs
}

/// What `history`'s operations returned, by thread and in each thread's order, as text.
pub fn returns(history: &History) -> Vec<(usize, String)> {
    (history.returns_by_thread().into_iter())
        .map(|(thread, value)| (thread, format!("{value:?}")))
        .collect()
}

/// The verdict of a model of `body` named `name`, and its report as text.
pub fn model_report<F: Fn() + Send + Sync + 'static>(
    name: &str,
    body: F,
) -> (fgvt_sync::Verdict, String) {
    let found = fgvt_sync::Model::new().name(name).localize(body).unwrap();
    let text = fgvt_sync::report::render_text(&found.report, false);
    (found.report.verdict, text)
}

/// What a tree is made of: its states, and its leaves by kind with their histories (two trees
/// with the same shape merged the same runs the same way).
pub fn shape(tree: &Tree) -> (u64, BTreeSet<(String, String)>) {
    let leaves = (tree.leaves())
        .map(|(_, leaf, _)| {
            let history = format!("{:?}", leaf.history.events);
            (format!("{:?}", leaf.kind), history)
        })
        .collect();
    (tree.stats().distinct_states, leaves)
}
