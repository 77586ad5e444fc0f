//! Reports of fgvt: one model of a localization, rendered as text, Markdown and JSON.
//!
//! * [`model`]: [`LocalizeReport`], whose serde form is the JSON schema `fgvt.localize/1`
//!   (documented field by field here and in `SCHEMA.md`);
//! * [`explore_report`] and [`check_report`]: the JSON of `fgvt explore` (`fgvt.explore/1`) and
//!   of `fgvt check-history` (`fgvt.check/1`), also in `SCHEMA.md`;
//! * [`build_report`]: makes a report from the tree, its labeling, its CDRS and the sources;
//! * [`render_text`], [`render_markdown`], [`render_json`]: the renderings;
//! * [`draw`]: what to draw of the labeled tree, and `render_dot`, `render_svg` to draw it
//!   (with the default feature `graph`, which brings the Graphviz crates and layout-rs).
//!
//! The report depends on neither the checker nor the modeling language: the checker's
//! explanation of a witness arrives already rendered, as an [`Explanation`].
//!
//! Drawing a toy tree as DOT: two threads, and only the runs where thread 1 moves first and
//! thread 0 wins the next race fail, so that race is the critical one:
//!
//! ```
//! use fgvt_labeling::cdrs::{find_cdrs, CdrsOptions};
//! use fgvt_labeling::pattern::Pattern;
//! use fgvt_labeling::testing;
//! use fgvt_reports::{render_dot, select, DrawInput, DrawOptions};
//! use fgvt_tree::SourceMap;
//!
//! // `(a b)` is a node whose child `i` is reached by thread `i`; `P` passes, `F` fails.
//! let (tree, outcomes) = testing::parse("((P P) (F P))");
//! let labeling = testing::label(&tree, &outcomes);
//! let cdrs = find_cdrs(&tree, &labeling, &Pattern::default(), &CdrsOptions::default());
//! assert_eq!(cdrs.groups.len(), 1);
//! let input = DrawInput {
//!     tree: &tree,
//!     labeling: &labeling,
//!     groups: &cdrs.groups,
//!     sources: &SourceMap::new(),
//!     title: "toy",
//! };
//! let dot = render_dot(&select(&input, &DrawOptions::default()));
//! assert!(dot.starts_with("digraph"));
//! assert!(dot.contains("toy"));
//! ```

#![warn(missing_docs)]

mod build;
pub mod check_report;
mod columns;
#[cfg(feature = "graph")]
pub mod dot;
pub mod draw;
pub mod early;
pub mod explore_report;
pub mod history_html;
mod json;
mod markdown;
mod memory;
pub mod model;
pub mod sarif;
mod style;
#[cfg(feature = "graph")]
pub mod svg;
mod text;
mod timeline;
mod xml;

pub use build::{
    build_report, count_text, counted, history_data, leaf_kind, localize_tree, loops_note,
    option as limit_option, replay_command, saturated_note, scouted_note, shell_quote, trace_steps,
    Localization, Replay, ReportContext, ReportInput,
};
pub use check_report::{CheckReport, CheckReports, CheckSummary, CheckVerdict, CHECK_SCHEMA_ID};
#[cfg(feature = "graph")]
pub use dot::render_dot;
pub use draw::{select, shorten, DrawInput, DrawOptions, Focus, TreeDrawing};
pub use explore_report::{
    render_sorted_json, ExplorePath, ExploreSummary, PathLeaf, TreeCounts, VerdictCounts,
    EXPLORE_SCHEMA_ID, FAILING_LEAVES_LISTED,
};
pub use history_html::{render_history_html, HistoryPicture, PictureOp, Role};
pub use json::{parse_json, render_json};
pub use markdown::render_markdown;
pub use memory::{fix_note, name_deciding_accesses, no_fix_note};
pub use model::{Explanation, LocalizeReport, TestInfo, Verdict, SCHEMA_ID};
pub use sarif::{render_history_sarif, render_sarif};
#[cfg(feature = "graph")]
pub use svg::{render_svg, SvgEngine, SvgError};
pub use text::{render_path_text, render_run_text, render_text};

#[cfg(test)]
mod tests;
