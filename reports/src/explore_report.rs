//! The JSON of `fgvt explore` (schema `fgvt.explore/1`): a tree's counts and verdicts
//! ([`ExploreSummary`]), or one path of it ([`ExplorePath`]). See `SCHEMA.md`.

use std::collections::BTreeMap;

use fgvt_tree::{Choice, Stats};
use serde::{Deserialize, Serialize};

use crate::model::{HistoryReport, TraceStep};

/// The schema id of [`ExploreSummary`] and [`ExplorePath`].
pub const EXPLORE_SCHEMA_ID: &str = "fgvt.explore/1";

/// `fgvt explore TEST --format json`: the counts of a test's interleaving tree and the
/// verdicts of its leaves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExploreSummary {
    /// Always [`EXPLORE_SCHEMA_ID`].
    pub schema: String,
    /// The test file as the user named it.
    pub test: String,
    /// The object under test.
    pub object: String,
    /// The limit that cut exploration short (`max-states`, `timeout`, ...), `interrupted`,
    /// or `null`.
    pub partial: Option<String>,
    /// Whether a first exploration was cut before any run failed, and a search of the runs
    /// with few preemptions found a failing one, which this tree was explored taking first.
    #[serde(default)]
    pub scouted: bool,
    /// Counts of the unfolded tree.
    pub tree: TreeCounts,
    /// How many leaves of the unfolded tree got each verdict.
    pub verdicts: VerdictCounts,
    /// The indices (0-based, depth-first, as `--leaf N` takes them) of the first failing
    /// leaves, at most [`FAILING_LEAVES_LISTED`].
    #[serde(default)]
    pub failing_leaves: Vec<u64>,
    /// The results of each operation over all leaves: `"T1 read()" -> {"(1, 2)": 3}`; the
    /// serial parts are named `init` and `final` instead of a thread.
    pub results: BTreeMap<String, BTreeMap<String, u64>>,
    /// Exploration time, in milliseconds.
    pub elapsed_ms: f64,
}

/// How many failing leaf indices `fgvt explore` lists.
pub const FAILING_LEAVES_LISTED: usize = 20;

/// Counts of an unfolded interleaving tree: `fgvt_tree::Stats` as the schema
/// spells it (a copy, so that the schema does not change when the tree's counts do).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeCounts {
    /// Nodes, leaves included.
    pub nodes: u64,
    /// Edges (steps).
    pub edges: u64,
    /// All leaves.
    pub leaves: u64,
    /// Leaves where every operation returned.
    pub complete: u64,
    /// Leaves where operations are pending and no thread can move.
    pub stuck: u64,
    /// Leaves where the model failed.
    pub fault: u64,
    /// Leaves where an operation's bound cut the path (`--max-steps`, `--max-local-steps`).
    pub bounded: u64,
    /// States never explored because a limit stopped exploration (`--max-states`,
    /// `--timeout`, `--max-memory`, an interrupt).
    #[serde(default)]
    pub cut: u64,
    /// Distinct states met.
    pub distinct_states: u64,
    /// Nodes of the stored (memoized) graph.
    pub graph_nodes: u64,
    /// The longest root-to-leaf path, in steps.
    pub max_depth: u64,
    /// Some count (here, in `verdicts` or in `results`) reached the largest 64-bit number and
    /// stopped there: it means "more than".
    pub saturated: bool,
    /// Steps back to a state on the path (spin and retry loops): when not 0, the unfolded tree
    /// is infinite and the counts are those of the tree in which such a step ends its path.
    pub loop_edges: u64,
}

impl From<Stats> for TreeCounts {
    fn from(s: Stats) -> TreeCounts {
        TreeCounts {
            nodes: s.nodes,
            edges: s.edges,
            leaves: s.leaves,
            complete: s.complete,
            stuck: s.stuck,
            fault: s.fault,
            bounded: s.bounded,
            cut: s.cut,
            distinct_states: s.distinct_states,
            graph_nodes: s.graph_nodes,
            max_depth: s.max_depth,
            saturated: s.saturated,
            loop_edges: s.loop_edges,
        }
    }
}

/// How many leaves of the unfolded tree got each verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerdictCounts {
    /// The spec the histories were checked against.
    pub spec: String,
    /// Leaves whose history is linearizable.
    pub linearizable: u64,
    /// Leaves whose history is not.
    pub not_linearizable: u64,
    /// Leaves where the model faulted.
    pub fault: u64,
    /// Leaves without a verdict: the sum of `cut`, `bounded`, `unchecked` and `undecided`.
    pub unknown: u64,
    /// Unknown leaves never explored (a limit stopped exploration).
    #[serde(default)]
    pub cut: u64,
    /// Unknown leaves whose path an operation's bound cut.
    #[serde(default)]
    pub bounded: u64,
    /// Complete or stuck leaves whose history was never checked (time ran out, or the run
    /// was interrupted, first).
    #[serde(default)]
    pub unchecked: u64,
    /// Complete or stuck leaves whose history the checker gave up on (cut inside its search).
    #[serde(default)]
    pub undecided: u64,
    /// Distinct histories checked.
    pub distinct_histories: usize,
}

/// `fgvt explore TEST --schedule ... --format json` (or `--leaf N`): one path of the tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExplorePath {
    /// Always [`EXPLORE_SCHEMA_ID`].
    pub schema: String,
    /// The test file as the user named it.
    pub test: String,
    /// The choice made at each step from the root (see [`WitnessReport::schedule`](crate::model::WitnessReport::schedule)).
    pub schedule: Vec<Choice>,
    /// The steps of the path.
    pub trace: Vec<TraceStep>,
    /// How the path ends, when it ends in a leaf; `null` when it stops at an inner node.
    pub leaf: Option<PathLeaf>,
}

/// The leaf a path ends in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathLeaf {
    /// `complete`, `stuck`, `fault` or `bounded`.
    pub kind: String,
    /// Its coarse history.
    pub history: HistoryReport,
    /// The fault's message, for a fault leaf.
    pub fault: Option<String>,
    /// The leaf's verdict: `linearizable`, `not-linearizable`, `fault` or `unknown`.
    pub verdict: Option<String>,
    /// Why the leaf's history is not linearizable, from the checker; `null` otherwise.
    pub explanation: Option<String>,
}

/// Renders a JSON output of fgvt pretty-printed, keys sorted, ending with a newline.
///
/// Keys are sorted (through [`serde_json::Value`]'s ordered map) so that the output does not
/// depend on the order of a struct's fields.
pub fn render_sorted_json<T: Serialize>(value: &T) -> String {
    // Models hold strings, numbers, bools, lists and maps: serializing cannot fail.
    let value = serde_json::to_value(value).expect("an fgvt model serializes");
    let mut s = serde_json::to_string_pretty(&value).expect("a JSON value serializes");
    s.push('\n');
    s
}
