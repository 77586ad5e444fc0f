//! `fgvt localize`: label the interleaving tree and report the critical data race sequences.

use std::path::Path;

use super::output::{check_output, exit_code, is_stdout, stdout_color, write_or_emit, Exit};
use super::render::{check_tree_files, write_tree_files, TreeFiles};
use super::{localize_with_progress, LocalizeArgs};

/// Runs `fgvt localize`.
pub fn run(args: &LocalizeArgs) -> miette::Result<Exit> {
    let trees = TreeFiles {
        svg: args.svg.as_deref(),
        dot: args.dot.as_deref(),
    };
    // Every output is checked before the (possibly long) exploration.
    check_outputs(args.output.as_deref(), &trees)?;
    check_tree_files(&args.draw, &trees)?;
    let test = args.limits.load_test(&args.test)?;
    let mut localized =
        localize_with_progress(&test, &args.limits, args.pattern.clone(), args.max_cdrs)?;
    localized.report.drawing = args
        .svg
        .as_deref()
        .filter(|svg| !is_stdout(svg))
        .map(|svg| link_from(args.output.as_deref(), svg));
    let report = &localized.report;
    let to_terminal = args.output.as_deref().is_none_or(is_stdout);
    let text = args.format.render(report, to_terminal && stdout_color());
    write_or_emit(args.output.as_deref(), &text)?;
    write_tree_files(&test, &localized, args.max_cdrs, &args.draw, &trees)?;
    let exit = exit_code(report);
    // The process ends here: freeing a large tree node by node would only delay the exit
    // (by a tenth of a second per few hundred thousand nodes), past `--timeout`.
    std::mem::forget(localized);
    Ok(exit)
}

/// Checks that the report and the drawings may be written where asked, and that at most one
/// of them goes to stdout (two would interleave there).
fn check_outputs(report: Option<&Path>, trees: &TreeFiles<'_>) -> miette::Result<()> {
    let mut to_stdout = Vec::new();
    match report {
        Some(path) if !is_stdout(path) => {
            check_output(path)?;
        }
        _ => to_stdout.push("the report"),
    }
    for (flag, path) in [("--svg", trees.svg), ("--dot", trees.dot)] {
        let Some(path) = path else { continue };
        if is_stdout(path) {
            to_stdout.push(flag);
        } else {
            check_output(path)?;
        }
    }
    if to_stdout.len() > 1 {
        return Err(miette::miette!(
            help = "write the report to a file with `-o FILE` (or the drawing to a file)",
            "{} would {} go to stdout",
            to_stdout.join(" and "),
            if to_stdout.len() == 2 { "both" } else { "all" }
        ));
    }
    Ok(())
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
