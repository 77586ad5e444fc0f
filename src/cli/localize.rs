//! `fgvt localize`: label the interleaving tree and report the critical data race sequences.

use super::output::{exit_code, stdout_color, write_or_emit, Exit};
use super::render::{write_tree_files, TreeFiles};
use super::{localize_with_progress, LocalizeArgs};

/// Runs `fgvt localize`.
pub fn run(args: &LocalizeArgs) -> miette::Result<Exit> {
    let test = args.limits.load_test(&args.test)?;
    let mut localized =
        localize_with_progress(&test, &args.limits, args.pattern.clone(), args.max_cdrs)?;
    localized.report.drawing = args
        .svg
        .as_deref()
        .map(|svg| link_from(args.output.as_deref(), svg));
    let report = &localized.report;
    let text = args
        .format
        .render(report, args.output.is_none() && stdout_color());
    write_or_emit(args.output.as_deref(), &text)?;
    let trees = TreeFiles {
        svg: args.svg.as_deref(),
        dot: args.dot.as_deref(),
    };
    write_tree_files(&test, &localized, args.max_cdrs, &args.draw, &trees)?;
    let exit = exit_code(report);
    // The process ends here: freeing a large tree node by node would only delay the exit
    // (by a tenth of a second per few hundred thousand nodes), past `--timeout`.
    std::mem::forget(localized);
    Ok(exit)
}

/// How the report at `report` (stdout when `None`) links the drawing at `svg`: by file name
/// when both sit in one directory, else by the path as given.
fn link_from(report: Option<&std::path::Path>, svg: &std::path::Path) -> String {
    let same_dir = report.is_some_and(|r| r.parent() == svg.parent());
    match svg.file_name() {
        Some(name) if same_dir => name.to_string_lossy().into_owned(),
        _ => svg.display().to_string(),
    }
}
