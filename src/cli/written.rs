//! Writing the tests that `hunt` finds and `minimize` shrinks, with a line about each.

use std::path::{Path, PathBuf};

use super::output::{emit, write_atomically};
use crate::hunt::{render_test, Matrix, Minimized, ModelRefs};

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
