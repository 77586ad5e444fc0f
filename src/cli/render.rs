//! `fgvt render`: draw the labeled interleaving tree of a test as SVG or DOT.

use std::path::Path;

use super::drawing::{draw, engine};
use super::localize::localize;
use super::output::{emit, write_atomically, Exit};
use super::{parse_pattern, RenderArgs, TreeFormat};
use crate::pipeline::LocalizeOptions;
use crate::testcase;

/// Runs `fgvt render`.
pub fn run(args: &RenderArgs) -> miette::Result<Exit> {
    let format = output_format(args.format, args.output.as_deref())?;
    // Check the engine before the (possibly long) exploration.
    let engine = engine(args.draw.engine)?;
    let options = LocalizeOptions {
        limits: (&args.limits).into(),
        pattern: parse_pattern(args.pattern.as_deref())?,
        max_cdrs: args.max_cdrs,
    };
    let test = testcase::load(&args.test)?;
    let localized = localize(&test, &options)?;
    let text = draw(&test, &localized, args.max_cdrs, &args.draw, format, engine)?;
    match &args.output {
        Some(path) => write_atomically(path, text.as_bytes())?,
        None => emit(&text)?,
    }
    Ok(Exit::of_report(&localized.report))
}

/// `--format`, else the extension of `-o`, else DOT (on stdout).
fn output_format(format: Option<TreeFormat>, output: Option<&Path>) -> miette::Result<TreeFormat> {
    if let Some(format) = format {
        return Ok(format);
    }
    let Some(path) = output else {
        return Ok(TreeFormat::Dot);
    };
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("svg") => Ok(TreeFormat::Svg),
        Some("dot" | "gv") => Ok(TreeFormat::Dot),
        _ => Err(miette::miette!(
            help = "name the file `*.svg` or `*.dot`, or pass `--format svg|dot`",
            "cannot tell the format of `{}` from its extension",
            path.display()
        )),
    }
}
