//! `fgvt render`: draw the labeled interleaving tree of a test as SVG or DOT; also the
//! `--svg`/`--dot` files of `fgvt localize`.

use std::path::Path;

use fgvt_reports::draw::{select, DrawInput, DrawOptions, Focus, TreeDrawing};
use fgvt_reports::{render_dot, render_svg, SvgEngine};

use super::output::{check_output, emit, is_stdout, output_name, write_atomically, Exit};
use super::{localize_with_progress, DrawArgs, EngineArg, FocusArg, RenderArgs, TreeFormat};
use crate::pipeline::Localized;
use crate::testcase::TestCase;

/// Runs `fgvt render`.
pub fn run(args: &RenderArgs) -> miette::Result<Exit> {
    let format = output_format(args.format, args.output.as_deref())?;
    // Check the output and the engine before the (possibly long) exploration; DOT needs no
    // engine.
    if let Some(path) = &args.output {
        check_output(path)?;
    }
    let engine = match format {
        TreeFormat::Svg => Some(engine(args.draw.engine)?),
        TreeFormat::Dot => None,
    };
    let test = args.limits.load_test(&args.test)?;
    let localized =
        localize_with_progress(&test, &args.limits, args.pattern.clone(), args.max_cdrs)?;
    let (text, drawing) = draw(&test, &localized, args.max_cdrs, &args.draw, format, engine)?;
    match &args.output {
        Some(path) if !is_stdout(path) => {
            write_atomically(path, text.as_bytes())?;
            eprintln!(
                "wrote {}: {}",
                output_name(path),
                what_was_drawn(&localized, &drawing, &args.draw)
            );
        }
        _ => emit(&text)?,
    }
    if let Some(why) = focus_note(&localized, &args.draw) {
        eprintln!("note: {why}");
    }
    if let Some(limit) = localized.tree.partial {
        if limit == fgvt_tree::Limit::Interrupted {
            eprintln!("INTERRUPTED: the drawing shows the part of the tree explored");
            return Ok(Exit::Inconclusive);
        }
    }
    // The picture is what was asked for: `render … && open tree.svg` must work for a failing
    // test too. The verdict is `localize`'s to give.
    Ok(Exit::Ok)
}

/// Why `--focus cdrs` drew nothing but the root, when it did: the test has no CDRS.
fn focus_note(localized: &Localized, args: &DrawArgs) -> Option<String> {
    if args.focus != Some(FocusArg::Cdrs) || !localized.cdrs.groups.is_empty() {
        return None;
    }
    let why = match localized.report.verdict {
        fgvt_reports::Verdict::Linearizable => "every interleaving passes",
        fgvt_reports::Verdict::NotLinearizable => "no failing path matches the --pattern",
        fgvt_reports::Verdict::Inconclusive => "no interleaving fails in the part explored",
    };
    Some(format!(
        "--focus cdrs: the test has no CDRS ({why}), so only the root is drawn; \
         --focus all draws the whole tree"
    ))
}

/// "14 of 546 nodes, CDRS 1 highlighted": what a drawing shows of its tree, counted as the
/// drawing counts (the DAG's states with `--dag`).
fn what_was_drawn(localized: &Localized, drawing: &TreeDrawing, args: &DrawArgs) -> String {
    let stats = localized.tree.stats();
    let total = fgvt_reports::count_text(fgvt_reports::draw::of_nodes(&stats, args.dag));
    let of = if args.dag {
        " states of the DAG"
    } else {
        " nodes"
    };
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
    format!("{} of {total}{of}, {cdrs}{partial}", drawing.nodes.len())
}

/// Where `localize` writes its drawings, if anywhere.
pub struct TreeFiles<'a> {
    /// The SVG file (`--svg`).
    pub svg: Option<&'a Path>,
    /// The DOT file (`--dot`).
    pub dot: Option<&'a Path>,
}

/// Checks before exploring that the drawings `files` asks for can be made: the SVG engine
/// asked for is there (DOT needs none).
pub fn check_tree_files(draw_args: &DrawArgs, files: &TreeFiles<'_>) -> miette::Result<()> {
    if files.svg.is_some() {
        engine(draw_args.engine)?;
    }
    Ok(())
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
        let engine = match format {
            TreeFormat::Svg => Some(engine(draw_args.engine)?),
            TreeFormat::Dot => None,
        };
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
    engine: Option<SvgEngine>,
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
        TreeFormat::Svg => render_svg(&drawing, engine.unwrap_or_else(SvgEngine::detect))
            .map_err(|e| miette::miette!("{e}"))?,
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

/// `--format`, else the extension of `-o`, else DOT (on stdout). A `--format` that the
/// extension contradicts (`-o tree.svg --format dot`) is refused: the file would lie about
/// what it holds.
fn output_format(format: Option<TreeFormat>, output: Option<&Path>) -> miette::Result<TreeFormat> {
    let named = output.filter(|p| !is_stdout(p)).and_then(|path| {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("svg") => Some(TreeFormat::Svg),
            Some("dot" | "gv") => Some(TreeFormat::Dot),
            _ => None,
        }
    });
    let name = |f: TreeFormat| match f {
        TreeFormat::Svg => "svg",
        TreeFormat::Dot => "dot",
    };
    match (format, named, output) {
        (Some(asked), Some(ext), Some(path)) if asked != ext => Err(miette::miette!(
            help = format!(
                "name the file `*.{}`, or drop `--format` (the extension decides)",
                name(asked)
            ),
            "`{}` names {} but --format asks for {}",
            path.display(),
            name(ext).to_uppercase(),
            name(asked).to_uppercase()
        )),
        (Some(asked), _, _) => Ok(asked),
        (None, Some(ext), _) => Ok(ext),
        (None, None, Some(path)) if !is_stdout(path) => Err(miette::miette!(
            help = "name the file `*.svg` or `*.dot`, or pass `--format svg|dot`",
            "cannot tell the format of `{}` from its extension",
            path.display()
        )),
        (None, None, _) => Ok(TreeFormat::Dot),
    }
}
