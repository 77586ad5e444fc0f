//! The localization pipeline, composed once: explore → judge → label → CDRS → report.
//!
//! Every front end (the command line, `hunt`, benches, examples) calls these functions:
//!
//! * [`explore_test`] builds the interleaving tree of a test within [`Limits`];
//! * [`judge_test`] gives every leaf its verdict against the test's spec ([`judge`]);
//! * [`localize`] runs the whole pipeline and returns a [`Localized`]: the report with the
//!   tree, labels and CDRS it was built from.
//!
//! Errors are [`PipelineError`]s: a test whose serial `init` part faults, or whose spec cannot
//! judge one of its histories. Limits are not errors: they make the result partial.

pub mod judge;
mod limits;
mod localize;

use std::time::Instant;

use fgvt_labeling::CheckError;
use fgvt_tree::explore::Progress;
use fgvt_tree::{Location, Tree};

use crate::testcase::TestCase;
pub use judge::{Judgement, LeafVerdict};
pub use limits::Limits;
pub use localize::{localize, localize_with_progress, LocalizeOptions, Localized};

/// Why a test could not go through the pipeline at all.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The serial `init` part (or the constructor) fails before any thread runs.
    #[error("the test's init part fails{}: {message}", at(location))]
    InitFault {
        /// What the model said.
        message: String,
        /// Where in the model, when known (boxed: errors travel in `Result`s of hot paths).
        location: Option<Box<Location>>,
    },
    /// The spec cannot judge a history of the test.
    #[error("the spec `{spec}` cannot judge a history: {source}")]
    Spec {
        /// The spec's name.
        spec: String,
        /// What the checker said.
        source: CheckError,
    },
}

impl PipelineError {
    /// What a user can do about the error.
    pub fn help(&self) -> &'static str {
        match self {
            PipelineError::InitFault { .. } => {
                "the `init` operations run serially before the threads; fix them or the model"
            }
            PipelineError::Spec { .. } => {
                "the spec must know every operation of the test with its arguments"
            }
        }
    }
}

/// ` at file:line:col`, or nothing without a location.
fn at(location: &Option<Box<Location>>) -> String {
    location
        .as_ref()
        .map(|l| format!(" at {}:{}:{}", l.file, l.line, l.column))
        .unwrap_or_default()
}

/// Explores every interleaving of `test` within `limits`, reporting progress to `progress`
/// (`&mut ()` for none).
pub fn explore_test(
    test: &TestCase,
    limits: &Limits,
    progress: &mut dyn Progress,
) -> Result<Tree, PipelineError> {
    fgvt_tree::explore_with_progress(&test.program(), &limits.explore_options(), progress).map_err(
        |fault| PipelineError::InitFault {
            location: fault
                .span
                .and_then(|s| test.sources.locate(s))
                .map(Box::new),
            message: fault.message,
        },
    )
}

/// Judges every leaf of `tree` against the test's spec; `deadline` bounds each check.
pub fn judge_test(
    test: &TestCase,
    tree: &Tree,
    deadline: Option<Instant>,
) -> Result<Judgement, PipelineError> {
    judge::judge(test, tree, deadline).map_err(|source| PipelineError::Spec {
        spec: test.spec.to_string(),
        source,
    })
}

#[cfg(test)]
mod tests;
