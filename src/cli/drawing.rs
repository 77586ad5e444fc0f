//! Drawing a localized tree as SVG or DOT: shared by `fgvt render` and by the `--svg`/`--dot`
//! files of `fgvt localize`.

use std::path::Path;

use fgvt_reports::draw::{select, DrawInput, DrawOptions, Focus};
use fgvt_reports::{render_dot, render_svg, SvgEngine};

use super::output::write_atomically;
use super::{DrawArgs, EngineArg, FocusArg, TreeFormat};
use crate::pipeline::Localized;
use crate::testcase::TestCase;

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
        let text = draw(test, localized, max_cdrs, draw_args, format, engine)?;
        write_atomically(path, text.as_bytes())?;
    }
    Ok(())
}

/// The drawing of `localized` in `format`.
pub fn draw(
    test: &TestCase,
    localized: &Localized,
    max_cdrs: usize,
    args: &DrawArgs,
    format: TreeFormat,
    engine: SvgEngine,
) -> miette::Result<String> {
    let groups = &localized.cdrs.groups[..localized.cdrs.groups.len().min(max_cdrs)];
    let title = format!("{} — {}", test.model.name(), test.path.display());
    let input = DrawInput {
        tree: &localized.tree,
        labeling: &localized.labeling,
        groups,
        sources: &test.sources,
        title: &title,
    };
    let drawing = select(&input, &draw_options(args));
    Ok(match format {
        TreeFormat::Dot => render_dot(&drawing),
        TreeFormat::Svg => render_svg(&drawing, engine).map_err(|e| miette::miette!("{e}"))?,
    })
}

/// The drawing options the arguments give.
fn draw_options(args: &DrawArgs) -> DrawOptions {
    DrawOptions {
        depth: args.depth,
        focus: match args.focus {
            FocusArg::All => Focus::All,
            FocusArg::Cdrs => Focus::Cdrs,
        },
        max_nodes: args.max_nodes,
        dag: args.dag,
        fold: !args.no_fold,
    }
}

/// The SVG engine `--engine` asks for; an error when it asks for Graphviz and `dot` is missing.
pub fn engine(arg: EngineArg) -> miette::Result<SvgEngine> {
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
