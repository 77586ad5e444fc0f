//! The library's errors as diagnostics for people: what went wrong, in which file, what to do.

use std::path::Path;

use crate::pipeline::PipelineError;

/// A test `file` that could not go through the pipeline, as a diagnostic with its help.
pub fn pipeline_error(file: &Path, e: &PipelineError) -> miette::Report {
    miette::miette!(help = e.help(), "{}: {e}", file.display())
}
