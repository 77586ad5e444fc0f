//! How far a run may go: the limits of exploration, whatever front end sets them.

use std::time::Duration;

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
    /// The exploration options these limits give.
    pub fn explore_options(&self) -> ExploreOptions {
        ExploreOptions {
            memoize: self.memoize,
            max_states: Some(self.max_states),
            max_steps: Some(self.max_steps),
            timeout: self.timeout,
        }
    }
}
