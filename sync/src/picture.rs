//! The labeled interleaving tree of a localized test, drawn as SVG or DOT (the `svg` feature).

use fgvt_reports::draw::{select, DrawInput, DrawOptions, Focus};
use fgvt_reports::{render_dot, render_svg, SvgEngine};

use crate::localized::Localized;

/// The drawing formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// A standalone SVG document, laid out by Graphviz's `dot` when it is installed and by the
    /// builtin layout otherwise.
    Svg,
    /// Graphviz's DOT language.
    Dot,
}

/// The labeled tree of `found`, drawn around its reported CDRS (whole when it has none).
pub(crate) fn drawing(found: &Localized, format: Format) -> Result<String, String> {
    let shown = found.report.cdrs.len();
    let groups = &found.cdrs.groups[..found.cdrs.groups.len().min(shown)];
    let sources = crate::sources::map();
    let title = format!("{} — {}", found.report.test.object, found.report.test.file);
    let input = DrawInput {
        tree: &found.tree,
        labeling: &found.labeling,
        groups,
        sources: &sources,
        title: &title,
    };
    let focus = if groups.is_empty() {
        Focus::All
    } else {
        Focus::Cdrs
    };
    let options = DrawOptions {
        focus,
        ..DrawOptions::default()
    };
    let picture = select(&input, &options);
    match format {
        Format::Dot => Ok(render_dot(&picture)),
        Format::Svg => render_svg(&picture, SvgEngine::detect()).map_err(|e| e.to_string()),
    }
}
