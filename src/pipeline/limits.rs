//! How far a run may go: the limits of exploration, whatever front end sets them.

use std::time::Duration;

use fgvt_tree::{ExploreOptions, Interrupt, MemoryBudget, DEFAULT_REPORT_BUDGET};

/// The limits of one run of the pipeline. A limit that is hit makes the result partial (the
/// unexplored states become cut leaves), never a silent cut.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Stop after this many stored tree nodes.
    pub max_states: usize,
    /// Most steps one operation may take on one path before that path is cut as bounded.
    pub max_steps: usize,
    /// Stop exploring (and checking) after this long.
    pub timeout: Option<Duration>,
    /// Explore the state graph, each distinct state once (much faster); `false` unfolds every
    /// path. The counts agree on loop-free tests; with spin loops they can differ (see
    /// `fgvt_tree::explore`).
    pub memoize: bool,
    /// Stop exploring when the process uses this many bytes (see [`crate::memory`]).
    pub max_memory: Option<usize>,
    /// Stop exploring and judging when this is raised (the command line raises it on SIGINT
    /// and SIGTERM); the result is then partial, cut by `interrupted`.
    pub interrupt: Option<Interrupt>,
    /// How long localization may go on after the first failing run: exploring the rest of the
    /// tree (past it the tree is partial, cut by `report-budget`), then the fix search of a
    /// weak-memory test (past it the fix note says how many trials were made). `None`: no end.
    pub report_budget: Option<Duration>,
}

impl Default for Limits {
    fn default() -> Self {
        let explore = ExploreOptions::default();
        Limits {
            max_states: explore.max_states.unwrap_or(usize::MAX),
            max_steps: explore.max_steps.unwrap_or(usize::MAX),
            timeout: None,
            memoize: true,
            max_memory: None,
            interrupt: None,
            report_budget: Some(DEFAULT_REPORT_BUDGET),
        }
    }
}

/// The share of [`Limits::timeout`] exploration may take, leaves judged as they are made
/// (`pipeline::explore_and_judge`): labeling, finding the CDRS and reporting grow with the
/// tree explored, and the whole run must end within the timeout (measured: 20–30 % of the
/// exploration time on large trees, more on a loaded machine).
const EXPLORE_SHARE: f64 = 0.7;

/// How long exploration may take when `left` is all the time a run has.
pub fn exploration_budget(left: Duration) -> Duration {
    left.mul_f64(EXPLORE_SHARE)
}

impl Limits {
    /// The exploration options these limits give; exploration gets most of the timeout, the
    /// stages after it the rest.
    pub fn explore_options(&self) -> ExploreOptions {
        ExploreOptions {
            memoize: self.memoize,
            max_states: Some(self.max_states),
            max_steps: Some(self.max_steps),
            timeout: self.timeout.map(exploration_budget),
            max_memory: self.max_memory.map(|bytes| MemoryBudget {
                bytes,
                used: crate::memory::allocated,
            }),
            interrupt: self.interrupt,
            report_budget: self.report_budget,
            ..ExploreOptions::default()
        }
    }
}
