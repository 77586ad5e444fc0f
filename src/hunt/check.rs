//! Judging one test the way Line-Up's `Check` does: phase 1 (its serial runs are
//! deterministic), then phase 2 (every leaf of its interleaving tree is linearizable).

use std::time::Instant;

use fgvt_tree::{ExploreOptions, LeafKind, Limit, Search};

use super::nondet::{serial_nondeterminism, Nondeterminism};
use crate::pipeline::{search_test, PipelineError};
use crate::testcase::{SpecSource, TestCase};

/// The verdict on one test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TestVerdict {
    /// No leaf fails (some may be unknown when a limit cut the tree: see [`TestReport::partial`]).
    Passes,
    /// Some leaf fails. A verdict-only search stops at the first failing leaf, which is then
    /// counted alone (a 1 in one of the two); a test explored whole has only faults left to
    /// count (see [`search_leaves`]). At least one of the two is positive.
    Fails {
        /// Failing leaves whose history is not linearizable.
        not_linearizable: u64,
        /// Failing leaves where the model faulted.
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
    /// The limit that cut exploration short, if one did.
    pub partial: Option<Limit>,
    /// Set when a verdict-only search ([`search_leaves`]) stopped at the first failing leaf,
    /// to the distinct states it had met: the verdict's counts are then of that one leaf (the
    /// rest of the tree was never built).
    pub stopped_at_first: Option<u64>,
}

impl TestReport {
    /// The report when phase 1 already failed: no tree was explored.
    fn nondeterministic(found: Nondeterminism) -> TestReport {
        TestReport {
            verdict: TestVerdict::Nondeterministic(found),
            partial: None,
            stopped_at_first: None,
        }
    }
}

/// Line-Up's phase 1 on `test`: the first disagreement between serial runs, if any. Only a
/// spec run by the interpreter (`self` or a model spec) is checked: built-in specs are
/// deterministic by construction.
pub fn phase1(test: &TestCase) -> Option<Nondeterminism> {
    // Built-in specs are deterministic by construction.
    let SpecSource::Serial(model) = test.spec_source() else {
        return None;
    };
    serial_nondeterminism(
        &test.self_spec(model),
        &test.init,
        &test.threads,
        &test.finals,
    )
}

/// Checks `test` the way Line-Up does, verdict only: [`phase1`], then [`search_leaves`] (what
/// a hunt needs: whether the test fails).
pub fn check_test(
    test: &TestCase,
    options: &ExploreOptions,
    deadline: Option<Instant>,
) -> Result<TestReport, PipelineError> {
    match phase1(test) {
        Some(found) => Ok(TestReport::nondeterministic(found)),
        None => search_leaves(test, options, deadline, false),
    }
}

/// Phase 2, verdict only: explores `test` until its first failing leaf, judging leaves as
/// they are made, so a failing test costs only the states before that leaf and nothing is
/// labeled. With `violations_only`, faults of the model do not count as failing (a test with
/// faults and no violation then fails with its fault count). A test without a failing leaf is
/// explored whole.
pub fn search_leaves(
    test: &TestCase,
    options: &ExploreOptions,
    deadline: Option<Instant>,
    violations_only: bool,
) -> Result<TestReport, PipelineError> {
    Ok(
        match search_test(test, options, deadline, violations_only)? {
            Search::Found {
                leaf,
                distinct_states,
                ..
            } => {
                let fault = leaf.kind == LeafKind::Fault;
                TestReport {
                    verdict: TestVerdict::Fails {
                        not_linearizable: u64::from(!fault),
                        faults: u64::from(fault),
                    },
                    partial: None,
                    stopped_at_first: Some(distinct_states),
                }
            }
            Search::Explored(tree) => {
                // Every leaf with a verdict was judged on the way and none failed the search; only
                // faults, when they do not count, may remain.
                let stats = tree.stats();
                TestReport {
                    verdict: if stats.fault > 0 {
                        TestVerdict::Fails {
                            not_linearizable: 0,
                            faults: stats.fault,
                        }
                    } else {
                        TestVerdict::Passes
                    },
                    partial: tree.partial,
                    stopped_at_first: None,
                }
            }
        },
    )
}
