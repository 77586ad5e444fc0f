//! `fgvt minimize`: shrink a failing test greedily while it keeps failing (stage B).

use std::path::Path;
use std::time::Instant;

use miette::IntoDiagnostic;

use super::jobs::with_jobs;
use super::output::{emit, Exit};
use super::pipeline_error;
use super::written::{summary, write_test};
use super::MinimizeArgs;
use crate::hunt::{minimize_test, Matrix, MinimizeOutcome, ModelRefs, Subject};

/// Runs `fgvt minimize`.
pub fn run(args: &MinimizeArgs) -> miette::Result<Exit> {
    let test = args.limits.load_test(&args.test)?;
    let refs = test_refs(&args.test)?;
    let deadline = args.limits.timeout.map(|t| Instant::now() + t);
    let start = Matrix::of(&test);
    let outcome = with_jobs(args.jobs, || {
        minimize_test(
            &Subject::of(&test),
            &start,
            test.path.clone(),
            &args.limits.limits().explore_options(),
            deadline,
        )
    })?
    .map_err(pipeline_error)?;
    let (minimized, timed_out) = match outcome {
        MinimizeOutcome::NotFailing(report) => {
            emit(&format!(
                "{}: the test does not fail; nothing to minimize\n",
                args.test.display()
            ))?;
            if let Some(limit) = report.partial {
                emit(&format!(
                    "PARTIAL: exploration hit {}; raise the limit to check the whole tree\n",
                    fgvt_reports::limit_option(limit)
                ))?;
                return Ok(Exit::Inconclusive);
            }
            return Ok(Exit::Ok);
        }
        MinimizeOutcome::Minimized {
            minimized,
            timed_out,
            ..
        } => (minimized, timed_out),
    };
    let description = format!(
        "Minimized by `fgvt minimize` from {}.{}",
        args.test.display(),
        refs.description
            .as_deref()
            .map(|d| format!(" {d}"))
            .unwrap_or_default()
    );
    let summary = summary(
        &args.test.display().to_string(),
        &start,
        &minimized,
        timed_out,
    );
    write_test(
        &minimized.matrix,
        &refs.models,
        args.output.as_deref(),
        &description,
        test.seed,
        &summary,
    )?;
    Ok(Exit::Violation)
}

/// The `object`, `spec` and `description` of a test file as written.
pub(super) struct TestRefs {
    /// The model references and the directory they are relative to.
    pub models: ModelRefs,
    /// The test's description, if any.
    pub description: Option<String>,
}

/// Reads the references of the test at `path` (which has loaded, so they are well-formed).
fn test_refs(path: &Path) -> miette::Result<TestRefs> {
    let text = std::fs::read_to_string(path).into_diagnostic()?;
    let json: serde_json::Value = serde_json::from_str(&text).into_diagnostic()?;
    let string = |key: &str| json.get(key).and_then(|v| v.as_str()).map(str::to_string);
    Ok(TestRefs {
        models: ModelRefs {
            object: string("object").unwrap_or_default(),
            spec: string("spec"),
            base: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        },
        description: string("description"),
    })
}
