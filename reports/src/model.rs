//! The report model: one localization, ready to render. Its serde form is the JSON schema
//! `fgvt.localize/1` (see `SCHEMA.md` next to this crate's `Cargo.toml`).
//!
//! Field names are stable within a schema version: new optional fields may be added, nothing is
//! renamed or removed without bumping the version. Values that people read (calls, return
//! values, event values) are strings, as fgvt displays them.

use fgvt_labeling::labels::{Category, Label};
use fgvt_tree::Choice;
use std::fmt;

use serde::{Deserialize, Serialize};

/// The schema id of [`LocalizeReport`]'s JSON form.
pub const SCHEMA_ID: &str = "fgvt.localize/1";

/// The result of localizing one failing test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LocalizeReport {
    /// Always [`SCHEMA_ID`].
    pub schema: String,
    /// The overall verdict.
    pub verdict: Verdict,
    /// The limit that cut exploration short (`max-states`, `timeout`, `max-steps`,
    /// `step-budget`, `memory`), `interrupted` when a signal stopped the run, or `null` when
    /// the tree is complete.
    pub partial: Option<String>,
    /// What was tested and how to reproduce it.
    pub test: TestInfo,
    /// Counts of the unfolded interleaving tree.
    pub tree: TreeSummary,
    /// How many nodes of the unfolded tree carry each label.
    pub labels: LabelTotals,
    /// How many distinct graph nodes carry each label (memoized states counted once).
    pub labels_distinct: LabelTotals,
    /// The CDRS pattern the words were matched against, e.g. `(WG|BG|WBG)*(BG|G|WBG)`.
    pub pattern: String,
    /// The reported CDRS, best first (those ending in a G race, then fewest races, then most
    /// failing leaves; see `fgvt_labeling::cdrs::rank`).
    pub cdrs: Vec<CdrsReport>,
    /// How many CDRS were found in all (`cdrs` may show fewer).
    pub cdrs_found: usize,
    /// Whether path enumeration hit its cap: the CDRS and their leaf counts are a sample.
    pub truncated: bool,
    /// What went wrong, in one sentence (the headline of the first witness's explanation), or
    /// `null` when nothing failed.
    #[serde(default)]
    pub symptom: Option<String>,
    /// The file the labeled tree was drawn to (`--svg`), when one was, for the report to link.
    #[serde(default)]
    pub drawing: Option<String>,
    /// Remarks for people: partial results, sampling, a fault that no race decides, ...
    pub notes: Vec<String>,
    /// One failing run, when the test fails but no CDRS is reported (every interleaving fails,
    /// or no failing path matches the pattern): what went wrong, with its history and the
    /// checker's explanation. `null` otherwise.
    #[serde(default)]
    pub failing_run: Option<WitnessReport>,
    /// Under weak memory (code that declares orderings weaker than `SeqCst`, run under the
    /// C++20 / Rust model): what the run says of its orderings. Absent for sequentially
    /// consistent runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryReport>,
}

/// What a weak-memory run says of the test's orderings ([`LocalizeReport::memory`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryReport {
    /// The model the run used: `rc11` (the C++20 / Rust memory model).
    pub model: String,
    /// For a failing test: whether it passes with every access `SeqCst` (checked by exploring
    /// it again so): then the bug is only under weak memory. `null` when not checked.
    #[serde(default)]
    pub passes_sequentially_consistent: Option<bool>,
    /// For a failing test: the smallest change of orderings found that makes every run pass,
    /// checked by exploring the test again with it (one access, else two); empty when none
    /// was found.
    #[serde(default)]
    pub fix: Vec<OrderChange>,
    /// What the search for a fix came to, for people (which change, or why none).
    #[serde(default)]
    pub fix_note: Option<String>,
}

/// One change of a fix: an access's ordering strengthened, or a fence added next to it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderChange {
    /// What changes: `order` (the access's ordering becomes `to`), `fence-before` or
    /// `fence-after` (a fence of ordering `to` is added right before or after the access).
    pub change: String,
    /// The access: `load of ready#1`, `store to data#0`, `compare_exchange on head#0`,
    /// `fence`.
    pub access: String,
    /// Where it is.
    pub location: Option<SourceLocation>,
    /// Its source text.
    pub snippet: String,
    /// The ordering it declares.
    pub from: String,
    /// The ordering that fixes it (of the access, or of the fence added).
    pub to: String,
}

impl LocalizeReport {
    /// The `(line, column)` of every racing statement of its CDRS: where a change of
    /// orderings most likely fixes a failure under weak memory.
    pub fn racing_positions(&self) -> Vec<(usize, usize)> {
        (self.cdrs.iter())
            .flat_map(|c| c.statements.iter())
            .map(|s| (s.location.line, s.location.column))
            .collect()
    }
}

/// The overall verdict of a localization.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Every leaf has a verdict and every one is linearizable.
    Linearizable,
    /// Some leaf is not linearizable (or the model faulted): a real violation.
    NotLinearizable,
    /// No failing leaf was found, but some leaves have no verdict or a limit was hit.
    Inconclusive,
}

impl Verdict {
    /// The verdict as the JSON spells it: `linearizable`, `not-linearizable`, `inconclusive`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Linearizable => "linearizable",
            Verdict::NotLinearizable => "not-linearizable",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// What was tested.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestInfo {
    /// Path of the test file (`failing.json`), as the user gave it.
    pub file: String,
    /// The object under test (`pair_snapshot.fgv#PairSnapshot` or its name).
    pub object: String,
    /// The spec it was checked against (`self`, `register`, `spec.fgv#SetSpec`, ...).
    pub spec: String,
    /// The command that reproduces this report, e.g. `fgvt localize tests/failing.json`.
    pub command: String,
}

/// Counts of the unfolded interleaving tree.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeSummary {
    /// Nodes of the unfolded tree (leaves included).
    pub nodes: u64,
    /// Nodes of the stored graph (fewer than `nodes` when identical states were merged).
    pub graph_nodes: u64,
    /// Distinct states met during exploration.
    pub distinct_states: u64,
    /// Leaves of the unfolded tree.
    pub leaves: u64,
    /// Leaves whose history is linearizable.
    pub passing_leaves: u64,
    /// Leaves whose history is not linearizable, or where the model faulted.
    pub failing_leaves: u64,
    /// Leaves with no verdict (bounded and cut leaves, histories left unchecked or undecided
    /// when time ran out); not counted in labels.
    pub unknown_leaves: u64,
    /// Leaves where every operation returned.
    pub complete_leaves: u64,
    /// Leaves where operations were pending and no thread could progress.
    pub stuck_leaves: u64,
    /// Leaves where the model itself failed (null dereference, failed assert, ...).
    pub fault_leaves: u64,
    /// Leaves where an operation's bound cut the path (`--max-steps`, `--max-local-steps`).
    pub bounded_leaves: u64,
    /// States never explored because a limit stopped exploration (`--max-states`,
    /// `--timeout`, `--max-memory`, an interrupt): *cut* leaves.
    #[serde(default)]
    pub cut_leaves: u64,
    /// Longest root-to-leaf path, in steps.
    pub max_depth: u64,
    /// Steps back to a state on the path (spin and retry loops): when not 0, the unfolded tree
    /// is infinite and the counts are those of the tree in which such a step ends its path.
    #[serde(default)]
    pub loop_edges: u64,
    /// Time spent exploring, in milliseconds.
    pub elapsed_ms: u64,
    /// Some count of the report (here, in `labels` or in a CDRS) reached the largest 64-bit
    /// number, 18446744073709551615, and stopped there: that count means "more than".
    #[serde(default)]
    pub saturated: bool,
}

/// A count per label: `{"W": .., "B": .., "G": .., "WG": .., "BG": .., "GG": .., "WBG": ..}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelTotals {
    /// White nodes: every leaf below passes.
    #[serde(rename = "W")]
    pub w: u64,
    /// Black nodes: every leaf below fails.
    #[serde(rename = "B")]
    pub b: u64,
    /// Grey nodes: children are OK- and ERR-trees.
    #[serde(rename = "G")]
    pub g: u64,
    /// Children are OK- and MIX-trees.
    #[serde(rename = "WG")]
    pub wg: u64,
    /// Children are ERR- and MIX-trees.
    #[serde(rename = "BG")]
    pub bg: u64,
    /// Every child is a MIX-tree.
    #[serde(rename = "GG")]
    pub gg: u64,
    /// Children are OK-, ERR- and MIX-trees.
    #[serde(rename = "WBG")]
    pub wbg: u64,
}

impl LabelTotals {
    /// The count of `label`.
    pub fn get(&self, label: Label) -> u64 {
        match label {
            Label::W => self.w,
            Label::B => self.b,
            Label::G => self.g,
            Label::WG => self.wg,
            Label::BG => self.bg,
            Label::GG => self.gg,
            Label::WBG => self.wbg,
        }
    }
}

/// One critical data race sequence: a group of failing paths sharing their races.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CdrsReport {
    /// 1-based rank among the CDRS found.
    pub rank: usize,
    /// The word of decisive labels, space-separated: `WG WG G`.
    pub pattern: String,
    /// Failing leaves of the unfolded tree whose path has this CDRS.
    pub failing_leaves: u64,
    /// The distinct racing statements, as `file:line` and source text, in order of first race.
    pub statements: Vec<Statement>,
    /// The decisive nodes (races), root first.
    pub nodes: Vec<RaceNodeReport>,
    /// One failing execution with this CDRS.
    pub witness: WitnessReport,
    /// Under weak memory, for a CDRS with a stale read (a read of an older store than the
    /// latest) when a fix was found: the accesses whose orderings decide the failure, as the
    /// fix changes them ([`MemoryReport::fix`]): the cause beside the stale read it allows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decided_by: Vec<OrderChange>,
}

/// A source statement that takes part in a race.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Statement {
    /// Where it is.
    pub location: SourceLocation,
    /// Its source line, trimmed (`int x = d[0];`).
    pub snippet: String,
}

/// A decisive node of a CDRS: a high-level data race.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RaceNodeReport {
    /// The node's label (`WG`, `BG`, `G`, `WBG`).
    pub label: Label,
    /// The node's id in the interleaving graph (as in the DOT rendering).
    pub node: u32,
    /// Steps from the root to the node along the witness: the race is decided by witness
    /// step number `step` (0-based index into `witness.trace`).
    pub step: usize,
    /// The competing next events, one per thread that can move, in thread order.
    pub races: Vec<RaceReport>,
}

/// One competing event of a race, with what happens if it wins.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RaceReport {
    /// The thread that takes this step.
    pub thread: usize,
    /// The operation it runs (`write`, `read`, ...).
    pub op: String,
    /// The kind of access: `read`, `write`, `cas(ok)`, `cas(fail)`, `dcas(ok)`, `dcas(fail)`,
    /// `lock`, `unlock`, `await`, `atomic`, `local`.
    pub event: String,
    /// The shared location(s) touched: `d[0]`, `n.next`.
    pub target: String,
    /// The value read or written (for a CAS: `expected -> new`).
    pub value: String,
    /// The category of the subtree this event's win leads to: `ok` (every run passes), `err`
    /// (every run fails), `mix`, or `null` when no leaf below has a verdict.
    pub outcome: Option<Category>,
    /// Whether the witness took this event.
    pub taken: bool,
    /// Where the statement is, or `null` when the event has no known source.
    pub location: Option<SourceLocation>,
    /// The source text of the racing expression (empty when unknown).
    pub snippet: String,
    /// The whole source line the expression starts on (for carets).
    pub line_text: String,
    /// Under weak memory: the ordering the access declares (`Relaxed`, `Acquire`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
    /// Under weak memory, where the access could go several ways: which store it read (or
    /// went before), and whether that is a stale one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryWayReport>,
}

/// Which way a weak-memory access went ([`RaceReport::memory`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryWayReport {
    /// Its way: 0 is what a sequentially consistent run does (read the latest store, go last
    /// in modification order), 1, 2, … older stores, newest first.
    pub way: u32,
    /// How many ways the access had.
    pub ways: u32,
    /// For a read: the store it read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<StoreReport>,
    /// For a read of an older store: the latest, which it did not see.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest: Option<StoreReport>,
    /// For a store that went before a later one in modification order: that store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<StoreReport>,
}

/// A store, as a weak-memory access read it or went before it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreReport {
    /// The thread that stored it; `null` for the initial value (or one `init` stored).
    pub thread: Option<usize>,
    /// The value.
    pub value: String,
    /// Where it is stored, when known.
    pub location: Option<SourceLocation>,
}

/// A resolved source position.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SourceLocation {
    /// The file, as the user named it.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// Width of the span on its first line, in characters (at least 1).
    pub width: usize,
}

impl fmt::Display for SourceLocation {
    /// `file:line:column`, as compilers and editors write positions.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// One failing execution: how to reach it and why it fails.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WitnessReport {
    /// The choice made at each step, from the root: the thread, written `1`, or the thread
    /// and the way its step went under weak memory, written `"1/2"`.
    pub schedule: Vec<Choice>,
    /// The command that replays this execution.
    pub replay: String,
    /// How the execution ends: `complete`, `stuck` or `fault`.
    pub leaf: String,
    /// The model's failure, for a `fault` leaf.
    pub fault: Option<FaultReport>,
    /// For a `stuck` leaf: what each blocked thread waits for.
    #[serde(default)]
    pub waiting: Vec<WaitReport>,
    /// The steps of the execution.
    pub trace: Vec<TraceStep>,
    /// The coarse history of the execution.
    pub history: HistoryReport,
    /// Why the history is not linearizable, as the checker explains it; `null` when there is
    /// no explanation (a fault leaf, a timeout).
    pub explanation: Option<Explanation>,
}

impl WitnessReport {
    /// Whether the run ends at a data race.
    pub fn ends_in_data_race(&self) -> bool {
        self.fault.as_ref().is_some_and(|f| f.race.is_some())
    }

    /// How the run ends, for people: its leaf's kind (`complete`, `stuck`, `fault`), or `a
    /// data race`.
    pub fn ending(&self) -> &str {
        if self.ends_in_data_race() {
            "a data race"
        } else {
            &self.leaf
        }
    }
}

/// A thread blocked forever at a stuck leaf, and what it waits for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitReport {
    /// The blocked thread.
    pub thread: usize,
    /// Its pending operation, e.g. `inc()`.
    pub op: String,
    /// What it waits for: "waits for lock `lk`, held by T0".
    pub reason: String,
    /// Where it waits, when known.
    pub location: Option<SourceLocation>,
    /// The source text there.
    pub snippet: String,
}

/// The failure of the model at a fault leaf.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultReport {
    /// What went wrong.
    pub message: String,
    /// Where, when known.
    pub location: Option<SourceLocation>,
    /// The source text there.
    pub snippet: String,
    /// For a data race: the two accesses, and what would order them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub race: Option<DataRaceReport>,
}

/// A data race a failing run ended at: two accesses to one location of plain memory, at least
/// one a write, that happens-before does not order (undefined behaviour).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataRaceReport {
    /// The location: `data#0`.
    pub object: String,
    /// The earlier access.
    pub first: RacingAccessReport,
    /// The access the run ended at.
    pub second: RacingAccessReport,
    /// What would order them, for people.
    pub hint: String,
}

/// One access of a [`DataRaceReport`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RacingAccessReport {
    /// The thread that made it.
    pub thread: usize,
    /// `read`, `write` or `creation`.
    pub access: String,
    /// Where, when known.
    pub location: Option<SourceLocation>,
    /// The source text there.
    pub snippet: String,
}

/// One step of a witness.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceStep {
    /// 0-based step number.
    pub step: usize,
    /// The thread that moves.
    pub thread: usize,
    /// Its operation.
    pub op: String,
    /// The kind of access (see [`RaceReport::event`]).
    pub event: String,
    /// The location touched.
    pub target: String,
    /// The value read or written.
    pub value: String,
    /// The source file, when known.
    #[serde(default)]
    pub file: Option<String>,
    /// The source line, when known.
    pub line: Option<usize>,
    /// The source text of the access.
    pub snippet: String,
    /// The call this step starts, e.g. `write(0, 2)`.
    pub call: Option<String>,
    /// The value the operation returns at this step, when it is its last.
    #[serde(rename = "return")]
    pub ret: Option<String>,
    /// The label of the race decided by this step, when the step leaves a CDRS node.
    pub race: Option<Label>,
    /// Under weak memory: whether the access did not do what a sequentially consistent run
    /// would (a read of an older store than the latest, a store that went before a later one).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stale: bool,
}

/// A coarse history: calls and returns in real-time order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryReport {
    /// One line: `T0:write(0, 2) T1:read() T0:ret () ...`.
    pub text: String,
    /// Whether the execution ended stuck.
    pub stuck: bool,
    /// The events, in order.
    pub events: Vec<HistoryItem>,
}

/// A call or return of a history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryItem {
    /// `call` or `return`.
    pub kind: HistoryKind,
    /// The thread that ran it (the serial `init` and `final` parts run on thread 0).
    pub thread: usize,
    /// The lane it is drawn in: `T0`, `T1`, …, or `init` / `final` for the serial parts.
    pub lane: String,
    /// The call (for a return: the call it answers), e.g. `read()`.
    pub call: String,
    /// The returned value; `null` for calls and unknown results.
    pub value: Option<String>,
}

/// Whether a history item is a call or a return.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HistoryKind {
    /// An invocation.
    Call,
    /// A response.
    Return,
}

/// Why a witness is not linearizable, as rendered by the caller (the checker's explanation):
/// plain text for people and its JSON form for tools.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    /// What went wrong, in one sentence: "T1 read() returned (1, 2), which no serial order
    /// of the operations gives".
    #[serde(default)]
    pub headline: String,
    /// Ready-to-print text (may span several lines).
    pub text: String,
    /// The same, structured.
    pub json: serde_json::Value,
}

impl Explanation {
    /// The explanation of `what` (the checker's account of a violation): its text as it
    /// prints, its JSON as it serializes.
    pub fn described<E: fmt::Display + Serialize>(headline: String, what: &E) -> Explanation {
        Explanation::told(headline, what.to_string(), what)
    }

    /// An explanation whose text is `text` (a report already says the verdict, so the text
    /// need not repeat it), with `what`'s JSON.
    pub fn told<E: Serialize>(headline: String, text: String, what: &E) -> Explanation {
        Explanation {
            headline,
            text,
            json: serde_json::to_value(what).unwrap_or_default(),
        }
    }
}
