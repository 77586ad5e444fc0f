//! fgvt: localizes linearizability faults in concurrent objects down to the racing statements.
//!
//! The library holds what the binary needs beyond the workspace crates (the modeling language
//! is `fgvt-lang`, the tree `fgvt-tree`, the checker `fgvt-checker`, labels and CDRS
//! `fgvt-labeling`, the renderings `fgvt-reports`):
//!
//! * [`testcase`] loads a test (`failing.json`): the object, the spec and each thread's calls;
//! * [`pipeline`] runs explore → judge → label → CDRS → report on it, once for every front end;
//! * [`hunt`] draws random tests until one fails, and shrinks it;
//! * [`cli`] is the command line, a thin layer over the above.
//!
//! Localizing a racy counter written inline:
//!
//! ```
//! use fgvt::pipeline::{localize, Limits, LocalizeOptions};
//! use fgvt_reports::Verdict;
//!
//! let dir = tempfile::tempdir()?;
//! std::fs::write(
//!     dir.path().join("counter.fgv"),
//!     "object Counter {
//!          shared int count = 0;
//!          op inc() { count = count + 1; }
//!          op get() { return count; }
//!      }",
//! )?;
//! let path = dir.path().join("failing.json");
//! std::fs::write(
//!     &path,
//!     r#"{"object": "counter.fgv", "threads": [["inc()"], ["inc()"]], "final": ["get()"]}"#,
//! )?;
//! let test = fgvt::testcase::load(&path)?;
//! let localized = localize(&test, &Limits::default(), &LocalizeOptions::default(), &mut ())?;
//! // Two increments can lose one: `get()` returns 1, which no serial order gives.
//! assert_eq!(localized.report.verdict, Verdict::NotLinearizable);
//! // The race is on `count`, in `inc`.
//! let race = &localized.report.cdrs[0].nodes[0].races[0];
//! assert_eq!((race.op.as_str(), race.target.as_str()), ("inc", "count"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod cli;
pub mod hunt;
pub mod json_pos;
pub mod memory;
pub mod pipeline;
pub mod testcase;
