//! Writing the tests that `hunt` finds and `minimize` shrinks, with a line about each.

use std::path::{Path, PathBuf};

use super::output::{emit, is_stdout, output_name, write_atomically};
use crate::hunt::{render_test, render_test_anywhere, Matrix, Minimized, ModelRefs};

/// What stopped a shrinking before it was done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// `--timeout`.
    Timeout,
    /// SIGINT or SIGTERM.
    Interrupted,
}

/// One line about the shrinking of the test named `what`, then the minimal test.
pub(super) fn summary(
    what: &str,
    start: &Matrix,
    minimized: &Minimized,
    stopped: Option<Stopped>,
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
    match stopped {
        Some(Stopped::Timeout) => {
            out.push_str("stopped by --timeout: the test fails but may not be minimal\n")
        }
        Some(Stopped::Interrupted) => out.push_str(
            "INTERRUPTED: a signal stopped the shrinking: the test fails but may not be minimal\n",
        ),
        None => {}
    }
    out
}

/// Writes the test to `output` (atomically, model paths relative to it) with `summary` on
/// stdout; without `output` (or with `-`), prints the test on stdout and the summary on
/// stderr, so that stdout can be redirected to a file: model paths are then relative to the
/// file stdout goes to when it is one (`> found.json`), else absolute, so that the test loads
/// wherever it ends up.
pub(super) fn write_test(
    matrix: &Matrix,
    refs: &ModelRefs,
    output: Option<&Path>,
    description: &str,
    seed: Option<u64>,
    summary: &str,
) -> miette::Result<()> {
    match output.filter(|p| !is_stdout(p)) {
        Some(path) => {
            let text = render_test(matrix, refs, &directory_of(path), Some(description), seed);
            write_atomically(path, text.as_bytes())?;
            emit(&format!("{summary}wrote {}\n", output_name(path)))?;
        }
        None => {
            eprint!("{summary}");
            let text = match stdout_directory() {
                Some(dir) => render_test(matrix, refs, &dir, Some(description), seed),
                None => render_test_anywhere(matrix, refs, Some(description), seed),
            };
            emit(&text)?;
        }
    }
    Ok(())
}

/// The directory of the regular file stdout is redirected to (`fgvt hunt … > found.json`), if
/// it is one and the system says which.
fn stdout_directory() -> Option<PathBuf> {
    // Linux names every open descriptor's file under /proc; elsewhere the test gets absolute
    // paths, which load from anywhere too.
    let file = std::fs::read_link("/proc/self/fd/1").ok()?;
    let meta = std::fs::metadata(&file).ok()?;
    (file.is_absolute() && meta.is_file())
        .then(|| file.parent().map(Path::to_path_buf))
        .flatten()
}

/// The directory a file goes into (`.` for a bare file name).
pub(super) fn directory_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    }
}
