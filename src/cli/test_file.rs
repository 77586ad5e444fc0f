//! Writing a test a command found or shrank (`hunt`, `minimize`), to a file or to stdout.

use std::path::Path;

use super::output::{emit, write_atomically};
use crate::hunt::{directory_of, render_test, Matrix, ModelRefs};

/// Writes the test to `output` (atomically, model paths relative to it) with `summary` on
/// stdout; without `output`, prints the test on stdout (paths relative to the current
/// directory) and the summary on stderr, so that stdout can be redirected to a file.
pub fn write_test(
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
