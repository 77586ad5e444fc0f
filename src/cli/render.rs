//! `fgvt render`: draw the labeled interleaving tree of a test as SVG or DOT; also the
//! `--svg`/`--dot` files of `fgvt localize`.

use std::path::Path;

use fgvt_reports::draw::{select, DrawInput, DrawOptions, Focus, TreeDrawing};
use fgvt_reports::{render_dot, render_svg, SvgEngine};

use super::output::{emit, write_atomically, Exit};
use super::{localize_with_progress, DrawArgs, EngineArg, FocusArg, RenderArgs, TreeFormat};
use crate::pipeline::Localized;
use crate::testcase::TestCase;

/// Runs `fgvt render`.
pub fn run(args: &RenderArgs) -> miette::Result<Exit> {
    let format = output_format(args.format, args.output.as_deref())?;
    // Check the engine before the (possibly long) exploration.
    let engine = engine(args.draw.engine)?;
    let test = args.limits.load_test(&args.test)?;
    let localized =
        localize_with_progress(&test, &args.limits, args.pattern.clone(), args.max_cdrs)?;
    let (text, drawing) = draw(&test, &localized, args.max_cdrs, &args.draw, format, engine)?;
    match &args.output {
        Some(path) => {
            write_atomically(path, text.as_bytes())?;
            eprintln!(
                "wrote {}: {}",
                path.display(),
                what_was_drawn(&localized, &drawing)
            );
        }
        None => emit(&text)?,
    }
    // The picture is what was asked for: `render … && open tree.svg` must work for a failing
    // test too. The verdict is `localize`'s to give.
    Ok(Exit::Ok)
}

/// "14 of 546 nodes, CDRS 1 highlighted": what a drawing shows of its tree.
fn what_was_drawn(localized: &Localized, drawing: &TreeDrawing) -> String {
    let total = localized.tree.stats().nodes;
    let highlighted = localized.report.cdrs.len();
    let cdrs = match highlighted {
        0 => "no CDRS".to_string(),
        1 => "CDRS 1 highlighted".to_string(),
        n => format!("CDRS 1–{n} highlighted"),
    };
    let partial = localized
        .report
        .partial
        .as_deref()
        .map(|limit| format!(" (partial: exploration hit the {limit} limit)"))
        .unwrap_or_default();
    format!("{} of {total} nodes, {cdrs}{partial}", drawing.nodes.len())
}

/// Where `localize` writes its drawings, if anywhere.
pub struct TreeFiles<'a> {
    /// The SVG file (`--svg`).
    pub svg: Option<&'a Path>,
    /// The DOT file (`--dot`).
    pub dot: Option<&'a Path>,
}

/// Writes the drawings `files` asks for (nothing when it names none).
pub fn write_tree_files(
    test: &TestCase,
    localized: &Localized,
    max_cdrs: usize,
    draw_args: &DrawArgs,
    files: &TreeFiles<'_>,
) -> miette::Result<()> {
    for (path, format) in [(files.svg, TreeFormat::Svg), (files.dot, TreeFormat::Dot)] {
        let Some(path) = path else { continue };
        let engine = engine(draw_args.engine)?;
        let (text, _) = draw(test, localized, max_cdrs, draw_args, format, engine)?;
        write_atomically(path, text.as_bytes())?;
    }
    Ok(())
}

/// The drawing of `localized` in `format`, and what it selected of the tree.
fn draw(
    test: &TestCase,
    localized: &Localized,
    max_cdrs: usize,
    args: &DrawArgs,
    format: TreeFormat,
    engine: SvgEngine,
) -> miette::Result<(String, TreeDrawing)> {
    let groups = &localized.cdrs.groups[..localized.cdrs.groups.len().min(max_cdrs)];
    let title = format!("{} — {}", test.model.name(), test.path.display());
    let input = DrawInput {
        tree: &localized.tree,
        labeling: &localized.labeling,
        groups,
        sources: &test.sources,
        title: &title,
    };
    let drawing = select(&input, &draw_options(args, !groups.is_empty()));
    let text = match format {
        TreeFormat::Dot => render_dot(&drawing),
        TreeFormat::Svg => render_svg(&drawing, engine).map_err(|e| miette::miette!("{e}"))?,
    };
    Ok((text, drawing))
}

/// The drawing options the arguments give; without `--focus`, a test with CDRS is drawn
/// around them (a realistic tree drawn whole is far wider than a screen).
fn draw_options(args: &DrawArgs, has_cdrs: bool) -> DrawOptions {
    DrawOptions {
        depth: args.depth,
        focus: match args.focus {
            Some(FocusArg::All) => Focus::All,
            Some(FocusArg::Cdrs) => Focus::Cdrs,
            None if has_cdrs => Focus::Cdrs,
            None => Focus::All,
        },
        max_nodes: args.max_nodes,
        dag: args.dag,
        fold: !args.no_fold,
    }
}

/// The SVG engine `--engine` asks for; an error when it asks for Graphviz and `dot` is missing.
fn engine(arg: EngineArg) -> miette::Result<SvgEngine> {
    match arg {
        EngineArg::Auto => Ok(SvgEngine::detect()),
        EngineArg::Builtin => Ok(SvgEngine::Builtin),
        EngineArg::Graphviz if fgvt_reports::svg::graphviz_available() => Ok(SvgEngine::Graphviz),
        EngineArg::Graphviz => Err(miette::miette!(
            help = "install Graphviz, or use `--engine builtin` (or `auto`)",
            "--engine graphviz: Graphviz's `dot` is not on PATH"
        )),
    }
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
