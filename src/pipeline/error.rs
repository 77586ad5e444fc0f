//! Why a test could not be run through the pipeline at all.

use std::path::PathBuf;

use fgvt_checker::CheckError;
use fgvt_tree::replay::ReplayError;

/// A test that cannot be explored or judged: bad input rather than a verdict.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The serial `init` part (or the constructor) fails before any thread runs.
    #[error("{}: the test's init part fails{}: {message}", .test.display(), .location.as_deref().map(|l| format!(" at {l}")).unwrap_or_default())]
    InitFault {
        /// The test file.
        test: PathBuf,
        /// What failed.
        message: String,
        /// Where in the model, as `file:line:column`, when known.
        location: Option<String>,
    },
    /// The spec cannot judge a history of the test (an operation it does not know, ...).
    #[error("{}: the spec `{spec}` cannot judge a history: {source}", .test.display())]
    Spec {
        /// The test file.
        test: PathBuf,
        /// The spec's name.
        spec: String,
        /// What the checker said (boxed: the error travels in the `Result`s of hot paths).
        source: Box<CheckError>,
    },
    /// A Rust object ran differently when a schedule was replayed: it depends on something
    /// other than the scheduler's choices.
    #[error("{}: {source}", .test.display())]
    Replay {
        /// The test file.
        test: PathBuf,
        /// What the replay found.
        source: ReplayError,
    },
}

impl PipelineError {
    /// What the user can do about it.
    pub fn help(&self) -> &'static str {
        match self {
            PipelineError::InitFault { .. } => {
                "the `init` operations run serially before the threads; fix them or the model"
            }
            PipelineError::Spec { .. } => {
                "the spec must know every operation of the test with its arguments, and each \
                 must finish when run alone (raise --max-local-steps if one only needs longer)"
            }
            PipelineError::Replay { .. } => {
                "every execution must depend only on the schedule: no clocks, no randomness, \
                 no `thread_local!` or static state kept between executions"
            }
        }
    }
}
