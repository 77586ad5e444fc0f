//! Building a [`LocalizeReport`] from the tree, its labeling and its CDRS.

use fgvt_labeling::cdrs::{find_cdrs, Cdrs, CdrsGroup, CdrsOptions, RaceNode};
use fgvt_labeling::labels::{label_tree, Label, Labeling, LeafOutcome};
use fgvt_labeling::pattern::Pattern;
use fgvt_tree::{
    Bound, Choice, CoarseEvent, Event, History, Lane, LeafKind, Limit, NodeId, SourceMap, Span,
    Tree,
};

use crate::model::{
    CdrsReport, DataRaceReport, Explanation, FaultReport, HistoryItem, HistoryKind, HistoryReport,
    LabelTotals, LocalizeReport, MemoryWayReport, RaceNodeReport, RaceReport, RacingAccessReport,
    SourceLocation, Statement, StoreReport, TestInfo, TraceStep, TreeSummary, Verdict, WaitReport,
    WitnessReport, SCHEMA_ID,
};

/// Everything a report is made from.
#[derive(Clone, Copy)]
pub struct ReportInput<'a> {
    /// The explored interleaving tree.
    pub tree: &'a Tree,
    /// Its labels.
    pub labeling: &'a Labeling,
    /// Its CDRS, ranked.
    pub cdrs: &'a Cdrs,
    /// The pattern the CDRS were matched against.
    pub pattern: &'a Pattern,
    /// The model's sources, to resolve event spans.
    pub sources: &'a SourceMap,
    /// What was tested.
    pub test: &'a TestInfo,
    /// Report at most this many CDRS (the best ones).
    pub max_cdrs: usize,
    /// How a witness is replayed.
    pub replay: Replay<'a>,
}

/// How a report tells its reader to replay a witness: a command that prints the run's
/// per-thread columns and its verdict.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Replay<'a> {
    /// `fgvt explore TEST --schedule 0,1,1` ([`replay_command`]): a model's test file.
    #[default]
    Explore,
    /// `PROGRAM explore TEST --schedule 0,1,1 OPTIONS`: a `fgvt_sync::main!` program (the
    /// command that runs it), its test file, and the options it ran with (the limits).
    Program {
        /// The command that runs the program.
        program: &'a str,
        /// Options that follow, each with its leading space.
        options: &'a str,
    },
    /// `FGVT_REPLAY=0,1,1 COMMAND`: a Rust test, run again by `COMMAND` (its `cargo test`
    /// line), which replays the run its environment names.
    Environment(&'a str),
}

impl Replay<'_> {
    /// What to tell the reader for the witness of `test_file` that follows `schedule`.
    pub fn command(self, test_file: &str, schedule: &[Choice]) -> String {
        match self {
            Replay::Explore => replay_command(test_file, schedule),
            Replay::Program { program, options } => format!(
                "{program} explore {}{}{options}",
                shell_quote(test_file),
                schedule_option(schedule)
            ),
            Replay::Environment(command) => {
                format!("FGVT_REPLAY={} {command}", schedule_text(schedule))
            }
        }
    }
}

/// The `--schedule` option of a replay, with its leading space (none for the empty run).
fn schedule_option(schedule: &[Choice]) -> String {
    if schedule.is_empty() {
        String::new()
    } else {
        format!(" --schedule {}", schedule_text(schedule))
    }
}

/// What a localization reports about its test besides the tree: the input of
/// [`localize_tree`].
#[derive(Clone, Copy)]
pub struct ReportContext<'a> {
    /// The pattern a CDRS's word of decisive labels must match.
    pub pattern: &'a Pattern,
    /// The sources, to resolve event spans.
    pub sources: &'a SourceMap,
    /// What was tested.
    pub test: &'a TestInfo,
    /// Report at most this many CDRS in full (all are found and counted).
    pub max_cdrs: usize,
    /// How a witness is replayed.
    pub replay: Replay<'a>,
    /// Stops the search for CDRS when raised (Ctrl-C): the report is then partial, marked
    /// INTERRUPTED, with the CDRS found until then.
    pub interrupt: Option<fgvt_tree::Interrupt>,
}

/// A judged tree's labels, CDRS and report.
pub struct Localization {
    /// The report.
    pub report: LocalizeReport,
    /// The tree's labels.
    pub labeling: Labeling,
    /// Its critical data race sequences.
    pub cdrs: Cdrs,
}

/// The last stages of every localization, for models and Rust objects alike: labels the tree
/// from its leaves' outcomes (`outcome` is asked for leaves only), finds the CDRS, and builds
/// the report, with `explain` giving a failing leaf's explanation (see [`build_report`]).
pub fn localize_tree(
    tree: &Tree,
    outcome: impl Fn(NodeId) -> LeafOutcome,
    explain: impl Fn(NodeId, &History) -> Option<Explanation>,
    context: &ReportContext<'_>,
) -> Localization {
    let labeling = label_tree(tree, |node, _| outcome(node));
    let options = CdrsOptions {
        interrupt: context.interrupt,
        ..CdrsOptions::default()
    };
    let cdrs = find_cdrs(tree, &labeling, context.pattern, &options);
    let input = ReportInput {
        tree,
        labeling: &labeling,
        cdrs: &cdrs,
        pattern: context.pattern,
        sources: context.sources,
        test: context.test,
        max_cdrs: context.max_cdrs,
        replay: context.replay,
    };
    let report = build_report(&input, explain);
    Localization {
        report,
        labeling,
        cdrs,
    }
}

/// Builds the report. `explain` gives the checker's explanation of a failing leaf reached by a
/// run whose history is the one given (called once per reported witness): the leaf keeps the
/// history of the first path to it, and a witness may be another path, whose history differs
/// as far as the verdict allows (states are shared). Return `None` when there is none (fault
/// leaves, timeouts).
pub fn build_report(
    input: &ReportInput<'_>,
    explain: impl Fn(NodeId, &History) -> Option<Explanation>,
) -> LocalizeReport {
    let ReportInput {
        tree,
        labeling,
        cdrs,
        pattern,
        test,
        max_cdrs,
        ..
    } = *input;
    let summary = tree_summary(tree, labeling);
    let verdict = if summary.failing_leaves > 0 {
        // A failing leaf is a real execution: the verdict holds even in a partial tree.
        Verdict::NotLinearizable
    } else if tree.partial.is_some() || summary.unknown_leaves > 0 || summary.leaves == 0 {
        // No leaf at all: no run ended (a bounded search cut every one), so nothing passed.
        Verdict::Inconclusive
    } else {
        Verdict::Linearizable
    };
    // A walk for CDRS that a signal stopped makes the report partial too, the tree whole or not.
    let partial = match (tree.partial, cdrs.interrupted) {
        (_, true) => Some(Limit::Interrupted.name().to_string()),
        (limit, false) => limit.map(|limit| limit.name().to_string()),
    };
    let reported: Vec<CdrsReport> = cdrs
        .groups
        .iter()
        .take(max_cdrs)
        .enumerate()
        .map(|(i, group)| cdrs_report(i + 1, group, input, &explain))
        .collect();
    let notes = notes(input, &summary, reported.len());
    let failing_run = if reported.is_empty() && summary.failing_leaves > 0 {
        failing_run(input, &explain)
    } else {
        None
    };
    let symptom = reported
        .first()
        .map(|c| &c.witness)
        .or(failing_run.as_ref())
        .and_then(|w| w.explanation.as_ref())
        .map(|e| e.headline.clone());
    LocalizeReport {
        schema: SCHEMA_ID.to_string(),
        verdict,
        partial,
        test: test.clone(),
        tree: summary,
        labels: totals(labeling.unfolded_counts().iter()),
        labels_distinct: totals(labeling.distinct_counts().iter()),
        pattern: pattern.as_str().to_string(),
        cdrs: reported,
        cdrs_found: cdrs.groups.len(),
        truncated: cdrs.truncated,
        symptom,
        drawing: None,
        notes,
        failing_run,
        memory: None,
    }
}

fn tree_summary(tree: &Tree, labeling: &Labeling) -> TreeSummary {
    let stats = tree.stats();
    TreeSummary {
        nodes: stats.nodes,
        graph_nodes: stats.graph_nodes,
        distinct_states: stats.distinct_states,
        leaves: stats.leaves,
        passing_leaves: labeling.passing_leaves(),
        failing_leaves: labeling.failing_leaves(),
        unknown_leaves: labeling.unknown_leaves(),
        complete_leaves: stats.complete,
        stuck_leaves: stats.stuck,
        fault_leaves: stats.fault,
        bounded_leaves: stats.bounded,
        cut_leaves: stats.cut,
        max_depth: stats.max_depth,
        loop_edges: stats.loop_edges,
        elapsed_ms: u64::try_from(tree.elapsed.as_millis()).unwrap_or(u64::MAX),
        saturated: stats.saturated
            || [
                labeling.passing_leaves(),
                labeling.failing_leaves(),
                labeling.unknown_leaves(),
            ]
            .contains(&u64::MAX)
            || labeling
                .unfolded_counts()
                .iter()
                .any(|(_, n)| n == u64::MAX),
    }
}

fn totals(counts: impl Iterator<Item = (Label, u64)>) -> LabelTotals {
    let mut t = LabelTotals::default();
    for (label, n) in counts {
        let slot = match label {
            Label::W => &mut t.w,
            Label::B => &mut t.b,
            Label::G => &mut t.g,
            Label::WG => &mut t.wg,
            Label::BG => &mut t.bg,
            Label::GG => &mut t.gg,
            Label::WBG => &mut t.wbg,
        };
        *slot = n;
    }
    t
}

/// The access `thread` took most often among the last steps of the path from the root to
/// `leaf` (by each node's first parent), with how many times: on a path cut by `max-steps`,
/// the line a waiting loop spins on. The path's last step may be another thread's, or the
/// spinning thread's way out of its loop, so the count, not the last step, names the loop.
fn most_repeated(tree: &Tree, leaf: NodeId, thread: usize) -> Option<(Span, usize)> {
    /// How many steps back from the leaf are counted: a spin fills them.
    const WINDOW: usize = 400;
    let parents = tree.graph.parents();
    let mut counts: Vec<(Span, usize)> = Vec::new();
    let mut node = leaf;
    for _ in 0..WINDOW {
        let Some(&(step, parent)) = parents.of(node).first() else {
            break;
        };
        let event = &tree.events[step as usize];
        if event.thread == thread {
            match counts.iter_mut().find(|(span, _)| *span == event.span) {
                Some((_, n)) => *n += 1,
                None => counts.push((event.span, 1)),
            }
        }
        node = parent;
    }
    counts.into_iter().max_by_key(|&(_, n)| n)
}

/// Why the first path cut by an operation's limits was cut, with the option that raises the
/// limit: an operation that spins (on shared memory, or locally) is the usual cause, so the
/// note names the access the operation repeated most on that path and how each kind of object
/// marks a waiting loop.
fn first_cut(tree: &Tree, sources: &SourceMap) -> Option<String> {
    tree.graph.node_indices().find_map(|node| {
        let bound = tree.leaf(node)?.bound.as_deref()?;
        match bound {
            Bound::Stopped { .. } => None,
            Bound::MaxSteps { thread, op, max } => {
                let at = most_repeated(tree, node, *thread)
                    .and_then(|(span, times)| {
                        let (loc, snippet, _) = locate(sources, span);
                        loc.map(|loc| {
                            format!(" (it took `{snippet}` at {loc} {times} times on that path)")
                        })
                    })
                    .unwrap_or_default();
                Some(format!(
                    "thread {thread}'s `{op}` took more than {max} steps on one path{at}: if it \
                     spins waiting for another thread, make it wait instead (a model writes \
                     `await(cond);`, Rust code calls `fgvt_sync::hint::spin_loop()` once per \
                     iteration of the loop); if it already does, its turns differ, so they \
                     cannot be merged (a turn that writes, such as a read-modify-write and its \
                     undoing, or one that reads something new each time); else raise {}",
                    option(Limit::MaxSteps)
                ))
            }
            Bound::StepBudget { reason } => Some(format!(
                "{reason}; if the operation only needs longer, raise {}",
                option(Limit::StepBudget)
            )),
            Bound::Stale { .. } => Some(format!(
                "{bound}: the older ones are a bounded leaf; raise {} to explore them",
                option(Limit::MaxStale)
            )),
            Bound::Spin { .. } => Some(format!(
                "{bound}, so another turn could only spin, and fgvt cut the path there: if the \
                 loop waits for another thread, call `fgvt_sync::hint::spin_loop()` once per \
                 iteration (from your `src/sync.rs` under the `fgvt` feature, in place of \
                 `std::hint::spin_loop()`) and fgvt explores it whole; if it retries a bounded \
                 number of times, `Test::cut_bare_spins(false)` lets it run to the step limit"
            )),
        }
    })
}

/// Why leaves have no verdict, as far as the tree tells: cut (never explored), bounded (a path
/// cut by an operation's limits), or complete and stuck leaves without a verdict from the
/// checker (the front end says why: never checked, or given up on).
fn unknown_note(tree: &Tree, summary: &TreeSummary) -> String {
    let mut why = Vec::new();
    if summary.cut_leaves > 0 {
        let limit = tree.partial.map_or_else(
            || "a limit".to_string(),
            |l| match l {
                Limit::Interrupted => "the interrupt".to_string(),
                l => format!("the {} limit", option(l)),
            },
        );
        why.push(format!(
            "{} cut (exploration stopped at {limit} before reaching them)",
            count_text(summary.cut_leaves)
        ));
    }
    if summary.bounded_leaves > 0 {
        let by = match tree.partial {
            Some(Limit::Spin) => "a loop without a spin hint, or an operation's limits".to_string(),
            _ => format!(
                "{} or {}",
                option(Limit::MaxSteps),
                option(Limit::StepBudget)
            ),
        };
        why.push(format!(
            "{} bounded (a path cut by {by})",
            count_text(summary.bounded_leaves),
        ));
    }
    let judged = summary
        .unknown_leaves
        .saturating_sub(summary.cut_leaves)
        .saturating_sub(summary.bounded_leaves);
    if judged > 0 {
        why.push(format!(
            "{} complete or stuck without a verdict from the checker",
            count_text(judged)
        ));
    }
    let leaves = counted(
        summary.unknown_leaves,
        "leaf has no verdict and is",
        "leaves have no verdict and are",
    );
    format!("{leaves} left out of the labels: {}", why.join("; "))
}

/// What loop edges do to the counts, for people.
pub fn loops_note(loop_edges: u64) -> String {
    format!(
        "the state graph has {loop_edges} loop edge(s) (a spin or retry loop returns to a state): \
         the unfolded tree is infinite, and its counts are those of the tree in which a step back \
         to a state on the path ends the path; labels and verdicts cover every run"
    )
}

/// The note of a tree explored taking a scout's failing run first: the first exploration
/// stopped at `limit` before any run failed (see `fgvt_tree::scout`).
pub fn scouted_note(limit: Option<Limit>) -> String {
    // The limit's own name: a Rust test sets it by a method, not the command line's option.
    let cut = limit.map_or_else(|| "a limit".into(), |l| format!("the `{}` limit", l.name()));
    format!(
        "the first exploration stopped at {cut} before any run failed; a search of the runs with \
         at most {} preemptions found a failing one, and this tree was explored taking it first",
        fgvt_tree::SCOUT_PREEMPTIONS
    )
}

/// What a saturated count means, for people.
pub fn saturated_note() -> String {
    format!(
        "the unfolded tree is too large to count exactly: a count shown as \"{}\" stopped at \
         the largest 64-bit number (in JSON, that number with `saturated` true)",
        count_text(u64::MAX)
    )
}

/// `n` followed by the word for one thing or for several: `1 step`, `7 steps` (a saturated
/// count as [`count_text`] says it).
pub fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", count_text(n), if n == 1 { one } else { many })
}

/// A count of the unfolded tree as people read it: the number, or, when it reached the largest
/// 64-bit number and stopped there (counts saturate), "more than 1.8 × 10¹⁹" (never the
/// saturated number itself, which reads as exact).
pub fn count_text(n: u64) -> String {
    if n == u64::MAX {
        "more than 1.8 × 10¹⁹".to_string()
    } else {
        n.to_string()
    }
}

/// What a report says about its `partial` limit (a [`fgvt_tree::Limit::name`]): `INTERRUPTED`
/// for an interrupt, else the option that set the limit (`--max-states`).
pub(crate) fn partial_text(name: &str) -> String {
    if name == fgvt_tree::Limit::Interrupted.name() {
        "INTERRUPTED".to_string()
    } else {
        limit_option(name)
    }
}

fn notes(input: &ReportInput<'_>, summary: &TreeSummary, shown: usize) -> Vec<String> {
    let mut notes = Vec::new();
    match input.tree.partial.map(Limit::name) {
        Some(limit) if limit == Limit::Interrupted.name() => notes.push(
            "INTERRUPTED: a signal (Ctrl-C, SIGTERM) stopped the run: the tree is partial and its \
             counts and verdicts cover only the part explored and checked"
                .to_string(),
        ),
        Some(limit) if limit == Limit::ReportBudget.name() => notes.push(format!(
            "a run fails; exploring went on for the report budget after the first failing run \
             and stopped there ({}): the tree is partial, and its counts, labels and CDRS cover \
             the part explored (a larger budget, or `none`, explores more)",
            limit_option(limit)
        )),
        Some(limit) if limit == Limit::Spin.name() => notes.push(
            "paths were cut where an operation spins in a loop without a spin hint (below): the \
             tree is partial, and its counts and verdicts cover the runs that do not spin there"
                .to_string(),
        ),
        Some(limit) => notes.push(format!(
            "exploration stopped at {}: the tree is partial and its counts cover only the explored part",
            limit_option(limit)
        )),
        None => {}
    }
    if let Some(why) = first_cut(input.tree, input.sources) {
        notes.push(why);
    }
    if summary.loop_edges > 0 {
        notes.push(loops_note(summary.loop_edges));
    }
    if summary.saturated {
        notes.push(saturated_note());
    }
    if summary.unknown_leaves > 0 {
        notes.push(unknown_note(input.tree, summary));
    }
    // With leaves unjudged, passing ones may be among them: no claim about every run.
    if summary.failing_leaves > 0 && summary.passing_leaves == 0 && summary.unknown_leaves == 0 {
        notes.push(every_run_fails_note(input.tree));
    } else if input.cdrs.unmatched_failing_leaves > 0 {
        notes.push(format!(
            "{} no race sequence matching `{}`",
            counted(
                input.cdrs.unmatched_failing_leaves,
                "failing leaf has",
                "failing leaves have"
            ),
            input.pattern.as_str()
        ));
    }
    if input.cdrs.interrupted {
        notes.push(format!(
            "INTERRUPTED: a signal (Ctrl-C, SIGTERM) stopped the search for CDRS after {} paths: \
             the CDRS shown are those found until then",
            input.cdrs.paths
        ));
    } else if input.cdrs.truncated {
        notes.push(format!(
            "the tree has too many paths to enumerate: CDRS were sampled from the first {} paths",
            input.cdrs.paths
        ));
    }
    if input.cdrs.groups.len() > shown {
        notes.push(format!(
            "showing the best {shown} of {} CDRS",
            input.cdrs.groups.len()
        ));
    }
    notes
}

fn cdrs_report(
    rank: usize,
    group: &CdrsGroup,
    input: &ReportInput<'_>,
    explain: &impl Fn(NodeId, &History) -> Option<Explanation>,
) -> CdrsReport {
    let nodes: Vec<RaceNodeReport> = group
        .nodes
        .iter()
        .map(|n| race_node(n, input.sources))
        .collect();
    let mut statements: Vec<Statement> = Vec::new();
    for race in nodes.iter().flat_map(|n| &n.races) {
        let Some(location) = &race.location else {
            continue;
        };
        // The whole statement (`int t = x;`) is what a developer recognizes, more than the
        // racing expression alone (`x`).
        let text = race.line_text.trim();
        let snippet = if text.is_empty() {
            race.snippet.clone()
        } else {
            text.to_string()
        };
        let statement = Statement {
            location: location.clone(),
            snippet,
        };
        if !statements.contains(&statement) {
            statements.push(statement);
        }
    }
    CdrsReport {
        rank,
        pattern: group.pattern(),
        failing_leaves: group.failing_leaves,
        statements,
        nodes,
        witness: witness(group, input, explain),
        // Known once the fix search has run: see `memory::name_deciding_accesses`.
        decided_by: Vec::new(),
    }
}

fn race_node(node: &RaceNode, sources: &SourceMap) -> RaceNodeReport {
    let races = node
        .races
        .iter()
        .enumerate()
        .map(|(i, race)| {
            let e = &race.event;
            let (location, snippet, line_text) = locate(sources, e.span);
            RaceReport {
                thread: e.thread,
                op: e.op.clone(),
                event: e.kind.to_string(),
                target: e.location.clone(),
                value: e.value.clone(),
                outcome: race.outcome,
                taken: i == node.taken,
                location,
                snippet,
                line_text,
                order: e.order.map(|o| o.to_string()),
                memory: e.memory.as_ref().map(|m| memory_way(m, sources)),
            }
        })
        .collect();
    RaceNodeReport {
        label: node.label,
        node: node.node.index() as u32,
        step: node.step,
        races,
    }
}

/// Which way a weak-memory access went, for a report.
fn memory_way(m: &fgvt_tree::MemoryChoice, sources: &SourceMap) -> MemoryWayReport {
    let store = |s: &fgvt_tree::StoreRef| StoreReport {
        thread: s.thread,
        value: s.value.clone(),
        location: s.span.and_then(|span| locate(sources, span).0),
    };
    MemoryWayReport {
        way: m.way,
        ways: m.ways,
        read: m.read.as_ref().map(store),
        latest: m.latest.as_ref().map(store),
        before: m.before.as_ref().map(store),
    }
}

/// Resolves a span: its location, snippet and line. Empty spans are events with no source.
fn locate(sources: &SourceMap, span: Span) -> (Option<SourceLocation>, String, String) {
    if span.start >= span.end {
        return (None, String::new(), String::new());
    }
    match sources.locate(span) {
        Some(loc) => {
            let width = loc.snippet.chars().count().max(1);
            let snippet = if loc.snippet.is_empty() {
                loc.line_text.trim().to_string()
            } else {
                loc.snippet
            };
            (
                Some(SourceLocation {
                    file: loc.file,
                    line: loc.line,
                    column: loc.column,
                    width,
                }),
                snippet,
                loc.line_text,
            )
        }
        None => (None, String::new(), String::new()),
    }
}

/// The note of a tree whose every judged run fails. Where each ends in a data race, no order of
/// the threads avoids it: what is missing is an ordering or a lock, not a sequential fix.
fn every_run_fails_note(tree: &Tree) -> String {
    let raced = (tree.leaves())
        .filter(|(_, leaf, _)| leaf.kind != LeafKind::Bounded)
        .all(|(_, leaf, _)| leaf.fault.as_ref().is_some_and(|f| f.race.is_some()));
    if raced {
        "every interleaving ends in a data race: no order of the threads avoids it, so what is \
         missing is an ordering or a lock (the fix, where one is given), not a sequential change"
            .to_string()
    } else {
        "every interleaving fails: no race decides the outcome, so the fault is in the \
         sequential behaviour of the operations (or in the spec)"
            .to_string()
    }
}

/// The witness of a CDRS group: its schedule, with the group's races marked on the trace.
fn witness(
    group: &CdrsGroup,
    input: &ReportInput<'_>,
    explain: &impl Fn(NodeId, &History) -> Option<Explanation>,
) -> WitnessReport {
    run_report(&group.witness, group.witness_leaf, input, explain, |i| {
        group.nodes.iter().find(|n| n.step == i).map(|n| n.label)
    })
}

/// One failing run when no CDRS is reported (every interleaving fails, or no failing path
/// matches the pattern): the first failing leaf in depth-first order, so the report still
/// shows what went wrong.
fn failing_run(
    input: &ReportInput<'_>,
    explain: &impl Fn(NodeId, &History) -> Option<Explanation>,
) -> Option<WitnessReport> {
    let (tree, labeling) = (input.tree, input.labeling);
    let mut node = tree.root;
    let mut schedule = Vec::new();
    while tree.leaf(node).is_none() {
        let (event, child) = tree
            .children(node)
            .into_iter()
            .find(|(_, c)| labeling.failing_below(*c) > 0)?;
        schedule.push(event.choice());
        node = child;
    }
    (labeling.outcome(node) == Some(fgvt_labeling::labels::LeafOutcome::Fail))
        .then(|| run_report(&schedule, node, input, explain, |_| None))
}

/// A run of the tree as the report shows it: `schedule` from the root to `leaf`, with
/// `race_at(step)` naming the label decided at a step, if any.
fn run_report(
    schedule: &[Choice],
    leaf_node: NodeId,
    input: &ReportInput<'_>,
    explain: &impl Fn(NodeId, &History) -> Option<Explanation>,
    race_at: impl Fn(usize) -> Option<Label>,
) -> WitnessReport {
    let tree = input.tree;
    // The schedule was recorded from this very tree, so it replays; an empty trace is the
    // harmless fallback should a caller mix trees up.
    let steps: Vec<&Event> = tree
        .follow(schedule)
        .map(|(steps, _)| steps)
        .unwrap_or_default();
    let trace = trace_steps(&steps, input.sources, race_at);
    let leaf = tree.leaf(leaf_node);
    let fault = leaf
        .and_then(|l| l.fault.as_ref())
        .map(|f| fault_report(f, input.sources));
    let waiting = leaf
        .map(|l| {
            l.waiting
                .iter()
                .map(|w| {
                    let (location, snippet, _) =
                        w.span.map_or((None, String::new(), String::new()), |s| {
                            locate(input.sources, s)
                        });
                    WaitReport {
                        thread: w.thread,
                        op: w.op.clone(),
                        reason: w.reason.clone(),
                        location,
                        snippet,
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let kind = leaf.map_or(LeafKind::Complete, |l| l.kind);
    // The leaf keeps its first path's history; this run may have interleaved the threads'
    // operations otherwise, and the report shows and explains its own.
    let retraced = leaf.map_or_else(History::new, |l| l.history.retraced(steps.iter().copied()));
    let history = history_report(&retraced);
    WitnessReport {
        schedule: schedule.to_vec(),
        replay: input.replay.command(&input.test.file, schedule),
        leaf: leaf_kind_name(kind).to_string(),
        fault,
        waiting,
        trace,
        history,
        explanation: explain(leaf_node, &retraced),
    }
}

/// A fault as a report shows it: its message where it happened, and for a data race both
/// accesses with their code.
fn fault_report(fault: &fgvt_tree::Fault, sources: &SourceMap) -> FaultReport {
    let located = |span: Option<Span>| {
        span.map_or((None, String::new()), |s| {
            let (location, snippet, _) = locate(sources, s);
            (location, snippet)
        })
    };
    let (location, snippet) = located(fault.span);
    let race = fault.race.as_deref().map(|race| {
        let access = |a: &fgvt_tree::RacingAccess| {
            let (location, snippet) = located(a.span);
            RacingAccessReport {
                thread: a.thread,
                access: a.access.clone(),
                location,
                snippet,
            }
        };
        DataRaceReport {
            object: race.location.clone(),
            first: access(&race.first),
            second: access(&race.second),
            hint: race.hint.clone(),
        }
    });
    FaultReport {
        message: fault.message.clone(),
        location,
        snippet,
        race,
    }
}

/// The steps of a path as report rows, resolving each event's span; `race_at(step)` names
/// the CDRS label decided at a step, if any.
pub fn trace_steps(
    steps: &[&Event],
    sources: &SourceMap,
    race_at: impl Fn(usize) -> Option<fgvt_labeling::labels::Label>,
) -> Vec<TraceStep> {
    steps
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let (location, snippet, _) = locate(sources, e.span);
            TraceStep {
                step: i,
                thread: e.thread,
                op: e.op.clone(),
                event: e.kind.to_string(),
                target: e.location.clone(),
                value: e.value.clone(),
                file: location.as_ref().map(|l| l.file.clone()),
                line: location.map(|l| l.line),
                snippet,
                call: e.call.as_ref().map(|c| c.to_string()),
                ret: e.ret.as_ref().map(|v| v.to_string()),
                race: race_at(i),
                stale: e.memory.as_ref().is_some_and(|m| m.way > 0),
            }
        })
        .collect()
}

/// A coarse history as report data (one-line text and structured events).
pub fn history_data(history: &History) -> HistoryReport {
    history_report(history)
}

fn leaf_kind_name(kind: LeafKind) -> &'static str {
    match kind {
        LeafKind::Complete => "complete",
        LeafKind::Stuck => "stuck",
        LeafKind::Fault => "fault",
        LeafKind::Bounded => "bounded",
    }
}

/// How reports name the kind of `leaf`: `complete`, `stuck`, `fault`, `bounded` (a path cut by
/// an operation's limits) or `cut` (a state never explored: exploration stopped).
pub fn leaf_kind(leaf: &fgvt_tree::Leaf) -> &'static str {
    if leaf.is_cut() {
        "cut"
    } else {
        leaf_kind_name(leaf.kind)
    }
}

/// The command-line option that set the limit a report's `partial` names (its
/// [`fgvt_tree::Limit::name`]).
pub(crate) fn limit_option(name: &str) -> String {
    fgvt_tree::Limit::from_name(name).map_or_else(|| format!("--{name}"), |l| option(l).to_string())
}

/// The `fgvt` command-line option that raises `limit` (the tree crate names no option: the
/// reports speak the command line's vocabulary, as their replay commands do); for an
/// interrupt, which no option sets, `Ctrl-C`.
pub fn option(limit: fgvt_tree::Limit) -> &'static str {
    match limit {
        fgvt_tree::Limit::MaxStates => "--max-states",
        fgvt_tree::Limit::Timeout => "--timeout",
        fgvt_tree::Limit::MaxSteps => "--max-steps",
        fgvt_tree::Limit::StepBudget => "--max-local-steps",
        fgvt_tree::Limit::Memory => "--max-memory",
        // No option sets it: a signal does.
        fgvt_tree::Limit::Interrupted => "Ctrl-C",
        fgvt_tree::Limit::MaxStale => "--max-stale",
        fgvt_tree::Limit::ReportBudget => "--report-budget",
        // No option: the code's loop needs the hint (`Test::cut_bare_spins` for Rust tests).
        fgvt_tree::Limit::Spin => "a loop without a spin hint",
    }
}

/// `fgvt explore TEST --schedule 0,1,1`, with the test path quoted for a POSIX shell if needed
/// (an empty schedule, a failure before any step, gives just `fgvt explore TEST`).
pub fn replay_command(test_file: &str, schedule: &[Choice]) -> String {
    format!(
        "fgvt explore {}{}",
        shell_quote(test_file),
        schedule_option(schedule)
    )
}

/// A schedule as `--schedule` takes it: choices (`1`, or `1/2` for a way other than the
/// sequentially consistent one) joined by commas.
fn schedule_text(schedule: &[Choice]) -> String {
    let choices: Vec<String> = schedule.iter().map(Choice::to_string).collect();
    choices.join(",")
}

/// Quotes `s` for a POSIX shell when it holds anything but plain path characters.
pub fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:=@,#".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

fn history_report(history: &History) -> HistoryReport {
    let mut pending: std::collections::HashMap<usize, String> = Default::default();
    // The serial parts run on thread 0; their lane says which part they are.
    let item = |kind, thread: usize, call: String, value| HistoryItem {
        kind,
        thread: if Lane(thread).is_serial() { 0 } else { thread },
        lane: Lane(thread).to_string(),
        call,
        value,
    };
    let events = history
        .events
        .iter()
        .map(|e| match e {
            CoarseEvent::Call { thread, call, .. } => {
                let text = call.to_string();
                pending.insert(*thread, text.clone());
                item(HistoryKind::Call, *thread, text, None)
            }
            CoarseEvent::Return { thread, value } => item(
                HistoryKind::Return,
                *thread,
                pending.remove(thread).unwrap_or_default(),
                value.as_ref().map(|v| v.to_string()),
            ),
        })
        .collect();
    HistoryReport {
        text: history.to_string(),
        stuck: history.stuck,
        events,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saturated_count_reads_as_a_lower_bound() {
        assert_eq!(count_text(12), "12");
        assert_eq!(count_text(u64::MAX - 1), (u64::MAX - 1).to_string());
        assert_eq!(count_text(u64::MAX), "more than 1.8 × 10¹⁹");
        assert!(!saturated_note().contains(&u64::MAX.to_string()));
        assert_eq!(partial_text("interrupted"), "INTERRUPTED");
        assert_eq!(partial_text("max-states"), "--max-states");
    }

    #[test]
    fn counts_take_the_word_their_number_asks_for() {
        assert_eq!(counted(1, "step", "steps"), "1 step");
        assert_eq!(counted(0, "step", "steps"), "0 steps");
        assert_eq!(counted(7, "leaf has", "leaves have"), "7 leaves have");
        assert_eq!(
            counted(u64::MAX, "leaf", "leaves"),
            "more than 1.8 × 10¹⁹ leaves"
        );
    }

    #[test]
    fn quotes_test_paths_for_the_shell() {
        assert_eq!(
            replay_command("tests/a.json", &fgvt_tree::choice::threads(&[0, 1, 1])),
            "fgvt explore tests/a.json --schedule 0,1,1"
        );
        assert_eq!(
            replay_command("my tests/a.json", &[]),
            "fgvt explore 'my tests/a.json'"
        );
        assert_eq!(
            replay_command("it's.json", &[Choice::thread(0)]),
            r"fgvt explore 'it'\''s.json' --schedule 0"
        );
        // Under weak memory a step's way follows its thread.
        assert_eq!(
            replay_command("a.json", &[Choice::thread(0), Choice::new(1, 2)]),
            "fgvt explore a.json --schedule 0,1/2"
        );
    }
}
