//! `fgvt localize`: label the interleaving tree and report the critical data race sequences.

use super::diagnostic::pipeline_error;
use super::drawing::{write_tree_files, TreeFiles};
use super::output::{emit, stdout_color, write_atomically, Exit, Progress};
use super::{parse_pattern, LocalizeArgs, ReportFormat};
use crate::pipeline::{localize_with_progress, LocalizeOptions, Localized};
use crate::testcase::{self, TestCase};
use fgvt_reports::LocalizeReport;

/// Runs `fgvt localize`.
pub fn run(args: &LocalizeArgs) -> miette::Result<Exit> {
    let options = LocalizeOptions {
        limits: (&args.limits).into(),
        pattern: parse_pattern(args.pattern.as_deref())?,
        max_cdrs: args.max_cdrs,
    };
    let test = testcase::load(&args.test)?;
    let localized = localize(&test, &options)?;
    let report = &localized.report;
    let text = render(report, args.format, args.output.is_none() && stdout_color());
    match &args.output {
        Some(path) => write_atomically(path, text.as_bytes())?,
        None => emit(&text)?,
    }
    let trees = TreeFiles {
        svg: args.svg.as_deref(),
        dot: args.dot.as_deref(),
    };
    write_tree_files(&test, &localized, args.max_cdrs, &args.draw, &trees)?;
    Ok(Exit::of_report(report))
}

/// The library's [`crate::pipeline::localize`] with a progress spinner and its errors as
/// diagnostics.
pub fn localize(test: &TestCase, options: &LocalizeOptions) -> miette::Result<Localized> {
    let mut progress = Progress::new("exploring");
    let localized = localize_with_progress(test, options, &mut progress);
    progress.finish();
    localized.map_err(|e| pipeline_error(&test.path, &e))
}

/// `report` in `format`, coloured when `color`.
pub fn render(report: &LocalizeReport, format: ReportFormat, color: bool) -> String {
    match format {
        ReportFormat::Text => fgvt_reports::render_text(report, color),
        ReportFormat::Markdown => fgvt_reports::render_markdown(report),
        ReportFormat::Json => fgvt_reports::render_json(report),
    }
}
