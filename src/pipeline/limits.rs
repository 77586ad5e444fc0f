//! How far a run may go: the limits of exploration, whatever front end sets them.

use std::time::{Duration, Instant};

use fgvt_tree::ExploreOptions;

/// The limits of one run of the pipeline. A limit that is hit makes the result partial (the
/// unexplored states become bounded leaves), never a silent cut.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Stop after this many stored tree nodes.
    pub max_states: usize,
    /// Most steps one operation may take on one path before that path is cut as bounded.
    pub max_steps: usize,
    /// Stop exploring (and checking) after this long.
    pub timeout: Option<Duration>,
    /// Share the node of identical states (the counts are the same either way; sharing is
    /// much faster).
    pub memoize: bool,
}

impl Default for Limits {
    fn default() -> Self {
        let explore = ExploreOptions::default();
        Limits {
            max_states: explore.max_states.unwrap_or(usize::MAX),
            max_steps: explore.max_steps.unwrap_or(usize::MAX),
            timeout: None,
            memoize: true,
        }
    }
}

impl Limits {
    /// The share of [`Limits::timeout`] exploration may use. The rest is for the work that
    /// follows it and grows with the tree: freeing the explorer's state table, judging the
    /// leaves, labeling, the report, and freeing the tree (about 40 % of the exploration time
    /// on a tree cut by the timeout, measured on a 3-thread `linked_list` test).
    pub const EXPLORE_SHARE: f64 = 0.7;
    /// The share of [`Limits::timeout`] after which no history is checked any more.
    pub const CHECK_SHARE: f64 = 0.85;

    /// The exploration options these limits give; exploration stops after
    /// [`Limits::EXPLORE_SHARE`] of the timeout.
    pub fn explore_options(&self) -> ExploreOptions {
        ExploreOptions {
            memoize: self.memoize,
            max_states: Some(self.max_states),
            max_steps: Some(self.max_steps),
            timeout: self.timeout.map(|t| t.mul_f64(Self::EXPLORE_SHARE)),
        }
    }

    /// When the checks of a run that began at `started` must stop: after
    /// [`Limits::CHECK_SHARE`] of the timeout, so that labeling and the report fit in it too.
    pub fn check_deadline(&self, started: Instant) -> Option<Instant> {
        self.timeout.map(|t| started + t.mul_f64(Self::CHECK_SHARE))
    }
}
