//! Reports of fgvt: one model of a localization, rendered as text, Markdown and JSON.
//!
//! * [`model`]: [`LocalizeReport`], whose serde form is the JSON schema `fgvt.localize/1`
//!   (documented field by field here and in `SCHEMA.md`);
//! * [`build_report`]: makes a report from the tree, its labeling, its CDRS and the sources;
//! * [`render_text`], [`render_markdown`], [`render_json`]: the renderings;
//! * [`draw`]: what to draw of the labeled tree, and [`render_dot`], [`render_svg`] to draw it.
//!
//! The report depends on neither the checker nor the modeling language: the checker's
//! explanation of a witness arrives already rendered, as an [`Explanation`].

#![warn(missing_docs)]

mod build;
mod columns;
pub mod dot;
pub mod draw;
mod json;
mod markdown;
pub mod model;
mod style;
pub mod svg;
mod text;
mod timeline;

pub use build::{
    build_report, history_data, option as limit_option, replay_command, shell_quote, trace_steps,
    ReportInput,
};
pub use dot::render_dot;
pub use draw::{select, DrawInput, DrawOptions, Focus, TreeDrawing};
pub use json::{parse_json, render_json};
pub use markdown::render_markdown;
pub use model::{Explanation, LocalizeReport, TestInfo, Verdict, SCHEMA_ID};
pub use svg::{render_svg, SvgEngine, SvgError};
pub use text::{render_path_text, render_text};

#[cfg(test)]
mod tests;
