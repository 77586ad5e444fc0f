//! Judging one test the way Line-Up's `Check` does: phase 1 (its serial runs are
//! deterministic), then phase 2 (every leaf of its interleaving tree is linearizable).

use std::time::Instant;

use fgvt_tree::{ExploreOptions, Limit};

use super::nondet::{serial_nondeterminism, Nondeterminism};
use crate::pipeline::{explore_test, judge_test, PipelineError};
use crate::testcase::{SpecChoice, TestCase};

/// The verdict on one test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TestVerdict {
    /// No leaf fails (some may be unknown when a limit cut the tree: see [`TestReport::partial`]).
    Passes,
    /// Some leaves fail: `not_linearizable` leaves of the unfolded tree are not linearizable and
    /// `faults` leaves end in a fault of the model.
    Fails {
        /// Leaves whose history is not linearizable.
        not_linearizable: u64,
        /// Leaves where the model faulted.
        faults: u64,
    },
    /// The object's serial runs disagree: it is not deterministic, so its own serial runs are
    /// no spec (Line-Up's phase 1). Not a linearizability failure.
    Nondeterministic(Nondeterminism),
}

impl TestVerdict {
    /// Whether the test found a violation (failing leaves, or nondeterminism).
    pub fn is_finding(&self) -> bool {
        !matches!(self, TestVerdict::Passes)
    }
}

/// The outcome of checking one test.
#[derive(Clone, Debug)]
pub struct TestReport {
    /// The verdict.
    pub verdict: TestVerdict,
    /// Leaves of the unfolded interleaving tree (0 when phase 1 already failed).
    pub leaves: u64,
    /// The limit that cut exploration short, if one did.
    pub partial: Option<Limit>,
}

/// Checks `test` the way Line-Up does: [`phase1`], then [`check_leaves`].
pub fn check_test(
    test: &TestCase,
    options: &ExploreOptions,
    deadline: Option<Instant>,
) -> Result<TestReport, PipelineError> {
    if let Some(found) = phase1(test) {
        return Ok(TestReport {
            verdict: TestVerdict::Nondeterministic(found),
            leaves: 0,
            partial: None,
        });
    }
    check_leaves(test, options, deadline)
}

/// Line-Up's phase 1 on `test`: the first disagreement between serial runs, if any. Only a
/// spec run by the interpreter (`self` or a model spec) is checked: built-in specs are
/// deterministic by construction.
pub fn phase1(test: &TestCase) -> Option<Nondeterminism> {
    let model = match &test.spec {
        SpecChoice::SelfSpec => &test.model,
        SpecChoice::Model(model) => model,
        SpecChoice::Builtin(_) => return None,
    };
    serial_nondeterminism(
        &test.self_spec(model),
        &test.init,
        &test.threads,
        &test.finals,
    )
}

/// Phase 2: explores every interleaving of `test` with `options` and judges every leaf;
/// `deadline` also bounds each history check.
pub fn check_leaves(
    test: &TestCase,
    options: &ExploreOptions,
    deadline: Option<Instant>,
) -> Result<TestReport, PipelineError> {
    let tree = explore_test(test, options, &mut ())?;
    let judgement = judge_test(test, &tree, deadline)?;
    let verdict = if judgement.not_linearizable + judgement.faults > 0 {
        TestVerdict::Fails {
            not_linearizable: judgement.not_linearizable,
            faults: judgement.faults,
        }
    } else {
        TestVerdict::Passes
    };
    Ok(TestReport {
        verdict,
        leaves: tree.stats().leaves,
        partial: tree.partial,
    })
}
