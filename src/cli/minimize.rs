//! `fgvt minimize`: shrink a failing test greedily while it keeps failing (stage B).

use std::path::Path;
use std::time::Instant;

use super::jobs::with_jobs;
use super::output::{check_output, emit, is_stdout, Exit};
use super::pipeline_error;
use super::written::{summary, write_test, Stopped};
use super::MinimizeArgs;
use crate::hunt::{minimize_test, Judge, Matrix, MinimizeOutcome, ModelJudge, ModelRefs, Subject};
use fgvt_tree::ExploreOptions;

/// Runs `fgvt minimize`.
pub fn run(args: &MinimizeArgs) -> miette::Result<Exit> {
    if let Some(output) = args.output.as_deref().filter(|p| !is_stdout(p)) {
        check_output(output)?;
    }
    // The test, and the file as written for the references and description of the minimal test.
    let (test, file) = args.limits.load_test_with_file(&args.test)?;
    let judge = ModelJudge {
        subject: Subject::of(&test),
        path: test.path.clone(),
    };
    minimize_with(&MinimizeSubject {
        test: &args.test,
        start: Matrix::of(&test),
        refs: ModelRefs::model(&file.object, file.spec.as_deref(), &args.test),
        description: file.description,
        seed: file.seed,
        judge: &judge,
        explore: args.limits.limits().explore_options(),
        deadline: args.limits.timeout.map(|t| Instant::now() + t),
        jobs: args.jobs,
        output: args.output.as_deref(),
        program: "fgvt",
    })
}

/// One shrinking, whatever the object is written in (a model here, a Rust object in
/// `fgvt_sync::main!`).
pub struct MinimizeSubject<'a> {
    /// The failing test file.
    pub test: &'a Path,
    /// Its operations.
    pub start: Matrix,
    /// Its `object` and `spec`, as the minimal test names them.
    pub refs: ModelRefs,
    /// Its description, carried into the minimal test's.
    pub description: Option<String>,
    /// The seed it was drawn with, kept in the minimal test.
    pub seed: Option<u64>,
    /// Whether a candidate fails.
    pub judge: &'a dyn Judge,
    /// The limits of each candidate.
    pub explore: ExploreOptions,
    /// When the whole search must stop.
    pub deadline: Option<Instant>,
    /// Worker threads (default: one per core).
    pub jobs: Option<usize>,
    /// Where the minimal test goes (stdout without).
    pub output: Option<&'a Path>,
    /// The program, for the minimal test's description: `fgvt` or a `main!` program's path.
    pub program: &'a str,
}

/// Shrinks `subject`'s test while it keeps failing, and writes the smallest one; an interrupt
/// (in `subject.explore`) stops the shrinking, and the smallest failing test so far is
/// written all the same (exit 130).
pub fn minimize_with(subject: &MinimizeSubject<'_>) -> miette::Result<Exit> {
    let interrupted = || (subject.explore.interrupt).is_some_and(fgvt_tree::Interrupt::is_raised);
    let outcome = with_jobs(subject.jobs, || {
        minimize_test(
            subject.judge,
            &subject.start,
            &subject.explore,
            subject.deadline,
        )
    })?
    .map_err(pipeline_error)?;
    let (minimized, timed_out) = match outcome {
        MinimizeOutcome::NotFailing(_) if interrupted() => {
            emit(&format!(
                "{}: INTERRUPTED before the test was checked; nothing minimized\n",
                subject.test.display()
            ))?;
            return Ok(Exit::Inconclusive);
        }
        MinimizeOutcome::NotFailing(report) => {
            emit(&format!(
                "{}: the test does not fail; nothing to minimize\n",
                subject.test.display()
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
        "Minimized by `{} minimize` from {}.{}",
        subject.program,
        subject.test.display(),
        subject
            .description
            .as_deref()
            .map(|d| format!(" {d}"))
            .unwrap_or_default()
    );
    let stopped = match (timed_out, interrupted()) {
        (_, true) => Some(Stopped::Interrupted),
        (true, false) => Some(Stopped::Timeout),
        (false, false) => None,
    };
    let summary = summary(
        &subject.test.display().to_string(),
        &subject.start,
        &minimized,
        stopped,
    );
    write_test(
        &minimized.matrix,
        &subject.refs,
        subject.output,
        &description,
        subject.seed,
        &summary,
    )?;
    Ok(if stopped == Some(Stopped::Interrupted) {
        Exit::Inconclusive
    } else {
        Exit::Violation
    })
}
