//! How far the pipeline may go: the limits of one exploration.

use std::time::{Duration, Instant};

use fgvt_tree::ExploreOptions;

/// Limits of one exploration. A limit that is hit makes the result partial, not an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Stop after this many distinct tree nodes.
    pub max_states: usize,
    /// Most steps one operation may take on one path before that path is cut as bounded.
    pub max_steps: usize,
    /// Stop after this long (exploration and checking together).
    pub timeout: Option<Duration>,
    /// Merge identical states (faster; the counts are the same).
    pub memoize: bool,
}

impl Limits {
    /// The default limit on distinct tree nodes.
    pub const MAX_STATES: usize = 2_000_000;
    /// The default limit on the steps of one operation.
    pub const MAX_STEPS: usize = 1_000;

    /// The exploration options these limits give.
    pub fn explore_options(&self) -> ExploreOptions {
        ExploreOptions {
            memoize: self.memoize,
            max_states: Some(self.max_states),
            max_steps: Some(self.max_steps),
            timeout: self.timeout,
        }
    }

    /// When a run that began at `started` must stop, if it must.
    pub fn deadline(&self, started: Instant) -> Option<Instant> {
        self.timeout.map(|t| started + t)
    }
}

impl Default for Limits {
    /// The command line's defaults: 2,000,000 states, 1,000 steps, no timeout, memoized.
    fn default() -> Limits {
        Limits {
            max_states: Limits::MAX_STATES,
            max_steps: Limits::MAX_STEPS,
            timeout: None,
            memoize: true,
        }
    }
}
