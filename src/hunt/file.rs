//! The hunt file (`hunt.json`): what `fgvt hunt` draws random tests from.
//!
//! ```json
//! {
//!   "object": "set.fgv#LazySet",
//!   "spec": "self",
//!   "operations": ["add(1)", "remove(1)", "contains(1)"],
//!   "init": [],
//!   "final": [],
//!   "threads": 2,
//!   "ops_per_thread": 3,
//!   "samples": 100
//! }
//! ```
//!
//! Each sampled test has `threads` threads of `ops_per_thread` operations drawn uniformly from
//! `operations` (Line-Up's RandomCheck); `init` and `final` run serially around every test.
//! `object` and `spec` mean what they mean in a test case and are relative to the hunt file.
//! Mistakes are reported like those of a test case: JSON path, line, column and a hint.

use std::path::{Path, PathBuf};

use fgvt_tree::Call;
use serde::Deserialize;

use crate::json_pos::JsonPath;
use crate::testcase::{
    load_subject, parse_checked_calls, Document, Errors, JsonHelp, LoadError, OtherKind, Subject,
};
use fgvt_lang::Model;

/// How many tests a hunt draws when neither the file nor the command line says.
pub const DEFAULT_SAMPLES: usize = 100;

/// The raw JSON document, exactly as a user writes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHunt {
    object: String,
    #[serde(default)]
    spec: Option<String>,
    operations: Vec<String>,
    #[serde(default)]
    init: Vec<String>,
    #[serde(default, rename = "final")]
    finals: Vec<String>,
    threads: usize,
    ops_per_thread: usize,
    #[serde(default)]
    samples: Option<usize>,
    /// Free text for people; copied into the tests a hunt writes.
    #[serde(default)]
    description: Option<String>,
}

/// What a hunt draws its tests from, as the hunt file says it: everything but the object
/// itself, so that the same file serves a model and a Rust object.
#[derive(Clone, Debug)]
pub struct HuntPlan {
    /// The hunt file as the user named it.
    pub path: PathBuf,
    /// The `object` value as written: `file.fgv#Name` relative to the hunt file, or a Rust
    /// object's name.
    pub object_ref: String,
    /// The `spec` value as written, if any.
    pub spec_ref: Option<String>,
    /// The hunt file's `description`, if any.
    pub description: Option<String>,
    /// The invocations test matrices are drawn from.
    pub operations: Vec<Call>,
    /// Operations run serially before every test's threads.
    pub init: Vec<Call>,
    /// Operations run serially after every test's threads.
    pub finals: Vec<Call>,
    /// Threads per test (matrix columns).
    pub threads: usize,
    /// Operations per thread (matrix rows).
    pub ops_per_thread: usize,
    /// How many tests to draw unless the command line says otherwise.
    pub samples: usize,
}

/// A loaded, checked hunt file of a model.
pub struct HuntFile {
    /// What the file says, its calls checked against the model.
    pub plan: HuntPlan,
    /// The model, its spec and sources, which every test drawn shares.
    pub subject: super::Subject,
}

/// Reads the hunt file at `path` without loading its object: its calls are checked for syntax
/// only (what a Rust object's hunt needs; its operations are known when it runs).
pub fn read_plan(path: &Path) -> Result<HuntPlan, LoadError> {
    let document = Document::read(path, "hunt file")?;
    let errors = document.errors();
    let raw = parse_raw(&errors)?;
    plan(&errors, path, raw, None)
}

/// Loads and checks the hunt file at `path`, and the model it names.
pub fn load(path: &Path) -> Result<HuntFile, LoadError> {
    let document = Document::read(path, "hunt file")?;
    let errors = document.errors();
    let raw = parse_raw(&errors)?;
    let Subject {
        model,
        spec,
        sources,
    } = load_subject(&errors, path, &raw.object, raw.spec.as_deref())?;
    let plan = plan(&errors, path, raw, Some(&model))?;
    Ok(HuntFile {
        plan,
        subject: super::Subject {
            model,
            spec,
            sources,
            local_budget: fgvt_lang::DEFAULT_BUDGET,
            max_stale: fgvt_lang::DEFAULT_MAX_STALE,
        },
    })
}

/// The hunt file of `errors`' document, as written.
fn parse_raw(errors: &Errors<'_>) -> Result<RawHunt, LoadError> {
    errors.parse(&JsonHelp {
        unknown_field: "a hunt file has the keys object, spec, operations, init, final, threads, ops_per_thread, samples (and description)",
        missing_field: "add the missing key; see fixtures/pair_snapshot/hunt.json for a complete hunt file",
        wrong_type: Some("threads, ops_per_thread and samples are positive integers; the other keys are strings or lists of strings"),
        other_kind: Some(OtherKind {
            list_key: "threads",
            it_is: "a test",
            expected: "a hunt file",
            command: "fgvt localize",
        }),
    })
}

/// The plan of `raw`, its calls parsed (and checked against `model`, if given) and its
/// counts checked, with mistakes located in `errors`' document.
fn plan(
    errors: &Errors<'_>,
    path: &Path,
    raw: RawHunt,
    model: Option<&Model>,
) -> Result<HuntPlan, LoadError> {
    let root = JsonPath::default();
    let calls = |list: &[String], at: JsonPath| parse_checked_calls(errors, model, &at, list);
    let operations = calls(&raw.operations, root.key("operations"))?;
    let init = calls(&raw.init, root.key("init"))?;
    let finals = calls(&raw.finals, root.key("final"))?;
    if operations.is_empty() {
        return Err(errors.at_path(
            &root.key("operations"),
            "a hunt needs at least one operation to draw from".into(),
            "empty",
            Some("list the invocations tests are made of: \"operations\": [\"add(1)\", \"remove(1)\"]".into()),
        ));
    }
    let positive = |value: usize, key: &str, what: &str| {
        if value == 0 {
            Err(errors.at_path(
                &root.key(key),
                format!("{key} must be at least 1"),
                "zero",
                Some(format!(
                    "give the number of {what}, e.g. 2 or 3 (Line-Up samples 3×3 matrices)"
                )),
            ))
        } else {
            Ok(value)
        }
    };
    let threads = positive(raw.threads, "threads", "threads of each test")?;
    let ops_per_thread = positive(
        raw.ops_per_thread,
        "ops_per_thread",
        "operations of each thread",
    )?;
    let samples = match raw.samples {
        Some(n) => positive(n, "samples", "tests to draw")?,
        None => DEFAULT_SAMPLES,
    };
    Ok(HuntPlan {
        path: path.to_path_buf(),
        object_ref: raw.object,
        spec_ref: raw.spec,
        description: raw.description,
        operations,
        init,
        finals,
        threads,
        ops_per_thread,
        samples,
    })
}
