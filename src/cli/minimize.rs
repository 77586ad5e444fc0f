//! `fgvt minimize`: shrink a failing test greedily while it keeps failing (stage B).

use std::path::{Path, PathBuf};
use std::time::Instant;

use miette::IntoDiagnostic;

use super::output::{emit, write_atomically, Exit};
use super::MinimizeArgs;
use crate::hunt::{
    minimize_test, render_test, CheckTestError, Matrix, MinimizeOutcome, Minimized, ModelRefs,
    Subject,
};
use crate::testcase;

/// Runs `fgvt minimize`.
pub fn run(args: &MinimizeArgs) -> miette::Result<Exit> {
    let test = testcase::load(&args.test)?;
    let refs = test_refs(&args.test)?;
    let deadline = args.limits.timeout.map(|t| Instant::now() + t);
    let start = Matrix::of(&test);
    let outcome = with_jobs(args.jobs, || {
        minimize_test(
            &Subject::of(&test),
            &start,
            test.path.clone(),
            &args.limits.explore_options(),
            deadline,
        )
    })?
    .map_err(|e| check_error(&args.test, &e))?;
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

/// Runs `f` on a pool of `jobs` threads (one per core by default).
pub(super) fn with_jobs<T: Send>(
    jobs: Option<usize>,
    f: impl FnOnce() -> T + Send,
) -> miette::Result<T> {
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|e| miette::miette!("cannot start {jobs} worker threads: {e}"))?;
    Ok(pool.install(f))
}

/// A check that could not run, as a diagnostic about `file`.
pub(super) fn check_error(file: &Path, e: &CheckTestError) -> miette::Report {
    let help = match e {
        CheckTestError::InitFault(_) => {
            "the `init` operations run serially before the threads; fix them or the model"
        }
        CheckTestError::Spec { .. } => {
            "the spec must know every operation of the test with its arguments"
        }
    };
    miette::miette!(help = help, "{}: {e}", file.display())
}

/// One line about the shrinking of the test named `what`, then the minimal test.
pub(super) fn summary(
    what: &str,
    start: &Matrix,
    minimized: &Minimized,
    timed_out: bool,
) -> String {
    let m = &minimized.matrix;
    let mut out = format!(
        "{what}: minimized {} → {} operations ({} → {} concurrent) in {} step{}, {} tests checked\n{m}",
        start.total_ops(),
        m.total_ops(),
        start.concurrent_ops(),
        m.concurrent_ops(),
        minimized.steps,
        if minimized.steps == 1 { "" } else { "s" },
        minimized.checks,
    );
    if timed_out {
        out.push_str("stopped by --timeout: the test fails but may not be minimal\n");
    }
    out
}

/// Writes the test to `output` (atomically, model paths relative to it) with `summary` on
/// stdout; without `output`, prints the test on stdout (paths relative to the current
/// directory) and the summary on stderr, so that stdout can be redirected to a file.
pub(super) fn write_test(
    matrix: &Matrix,
    refs: &ModelRefs,
    output: Option<&Path>,
    description: &str,
    seed: Option<u64>,
    summary: &str,
) -> miette::Result<()> {
    match output {
        Some(path) => {
            let text = render_test(matrix, refs, &directory_of(path), Some(description), seed);
            write_atomically(path, text.as_bytes())?;
            emit(&format!("{summary}wrote {}\n", path.display()))?;
        }
        None => {
            eprint!("{summary}");
            emit(&render_test(
                matrix,
                refs,
                Path::new("."),
                Some(description),
                seed,
            ))?;
        }
    }
    Ok(())
}

/// The directory a file goes into (`.` for a bare file name).
pub(super) fn directory_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    }
}
