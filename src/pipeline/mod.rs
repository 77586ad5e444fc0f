//! The pipeline of fgvt, composed once for every front end: explore → judge → label → CDRS →
//! report.
//!
//! The command line, `hunt`/`minimize`, the benchmarks and the examples all call these
//! functions; none composes the stages itself. Limits are a plain [`Limits`] value and errors a
//! typed [`PipelineError`]: rendering them for people, and choosing exit codes, is the front
//! end's business.
//!
//! * [`explore_test`] builds the interleaving tree of a test;
//! * [`judge_test`] gives every leaf its verdict against the test's spec ([`judge`] module);
//! * [`explore_and_judge`] does both, and when a limit cuts the tree before any leaf fails,
//!   scouts for a failing run with few preemptions and explores again taking it first;
//! * [`localize`] does that, then labels the tree, finds the CDRS and builds the report;
//! * [`search_test`] explores only until a leaf fails, judging leaves as they are made (the
//!   verdict-only exploration of `hunt` and `minimize`);
//! * [`weak::memory_report`] says, for a test run under weak memory, whether a failure is only
//!   under weak memory and which change of orderings fixes it.

mod error;
mod explore;
pub mod judge;
mod limits;
mod localize;
pub mod weak;

pub use error::PipelineError;
pub use explore::{explore_and_judge, explore_test, judge_test, search_test, Judged};
pub use judge::{explain_run, CheckBudget, Judgement, LeafVerdict};
pub use limits::{exploration_budget, Limits};
pub use localize::{localize, LocalizeOptions, Localized};

#[cfg(test)]
mod tests;
