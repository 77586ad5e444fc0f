//! The JSON of `fgvt check-history` (schema `fgvt.check/1`): one file's verdict
//! ([`CheckReport`]), or several with a summary ([`CheckReports`]). See `SCHEMA.md`.

use serde::{Deserialize, Serialize};

/// The schema id of [`CheckReport`] and [`CheckReports`].
pub const CHECK_SCHEMA_ID: &str = "fgvt.check/1";

/// The verdict on one history file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckVerdict {
    /// The history is linearizable.
    Linearizable,
    /// It is not.
    NotLinearizable,
    /// The checker ran out of time.
    Unknown,
    /// The file could not be checked (bad input, unknown spec, ...).
    Error,
}

/// The check of one history file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    /// Always [`CHECK_SCHEMA_ID`].
    pub schema: String,
    /// The file as the user named it (or as found in a named directory).
    pub file: String,
    /// Its format (`json`, `jepsen`, `kv`, `edn`), once known.
    pub format: Option<String>,
    /// The spec it was checked against, once known.
    pub spec: Option<String>,
    /// The spec's initial state when one was given (`--initial`, or the file's `initial`).
    #[serde(default)]
    pub initial: Option<String>,
    /// The verdict.
    pub verdict: CheckVerdict,
    /// `true`/`false` for a verdict, `null` when unknown or on error.
    pub linearizable: Option<bool>,
    /// Into how many independent parts (keys) the history was split, when checked.
    pub partitions: Option<usize>,
    /// Why the history is not linearizable, in the checker's JSON form.
    pub explanation: Option<serde_json::Value>,
    /// Why the file could not be checked.
    pub error: Option<String>,
    /// Time spent on the file, in milliseconds.
    pub elapsed_ms: f64,
}

/// The check of several files.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckReports {
    /// Always [`CHECK_SCHEMA_ID`].
    pub schema: String,
    /// One report per file, in the order checked.
    pub results: Vec<CheckReport>,
    /// How many files got each verdict.
    pub summary: CheckSummary,
}

/// How many files got each verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckSummary {
    /// Files checked.
    pub files: usize,
    /// Linearizable ones.
    pub linearizable: usize,
    /// Not linearizable ones.
    pub not_linearizable: usize,
    /// Ones the checker gave up on.
    pub unknown: usize,
    /// Ones that could not be checked.
    pub errors: usize,
}

impl CheckSummary {
    /// Counts the verdicts of `reports`.
    pub fn of<'a>(reports: impl IntoIterator<Item = &'a CheckReport>) -> CheckSummary {
        let mut summary = CheckSummary {
            files: 0,
            linearizable: 0,
            not_linearizable: 0,
            unknown: 0,
            errors: 0,
        };
        for report in reports {
            summary.files += 1;
            *match report.verdict {
                CheckVerdict::Linearizable => &mut summary.linearizable,
                CheckVerdict::NotLinearizable => &mut summary.not_linearizable,
                CheckVerdict::Unknown => &mut summary.unknown,
                CheckVerdict::Error => &mut summary.errors,
            } += 1;
        }
        summary
    }
}
