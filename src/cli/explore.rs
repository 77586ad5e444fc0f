//! `fgvt explore`: the interleaving tree of a test, as counts or as one path.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use fgvt_reports::{
    count_text, render_sorted_json, ExplorePath, ExploreSummary, PathLeaf, TreeCounts,
    VerdictCounts, EXPLORE_SCHEMA_ID, FAILING_LEAVES_LISTED,
};
use fgvt_tree::{CoarseEvent, History, Limit, NodeId, Tree};

use super::output::{emit, Exit, Progress};
use super::{pipeline_error, ExploreArgs, Format};
use crate::pipeline::judge::{address, ByAddress};
use crate::pipeline::{self, Judgement, LeafVerdict};
use crate::testcase::TestCase;

/// Runs `fgvt explore`.
pub fn run(args: &ExploreArgs) -> miette::Result<Exit> {
    let test = args.limits.load_test(&args.test)?;
    let limits = args.limits.limits();
    let mut progress = Progress::new("exploring");
    let judged = pipeline::explore_and_judge(&test, &limits, &mut progress);
    progress.finish();
    let pipeline::Judged {
        tree,
        judgement,
        scouted,
    } = judged.map_err(pipeline_error)?;
    // The summary answers "is this test linearizable?" with design.md's exit codes; one path
    // answers "does this run fail?" with the same codes.
    let path = match (&args.schedule, args.leaf) {
        (Some(schedule), _) => Some(Path::Schedule(schedule)),
        (None, Some(leaf)) => Some(Path::Leaf(leaf)),
        (None, None) => None,
    };
    let (out, exit) = match path {
        Some(path) => path_report(&test, &tree, &judgement, path, args.format)?,
        None => {
            let out = match args.format {
                Format::Text => summary_text(&test, &tree, &judgement, scouted),
                Format::Json => {
                    render_sorted_json(&summary_json(&test, &tree, &judgement, scouted))
                }
            };
            (out, exit_code(tree.partial.is_some(), &judgement))
        }
    };
    let exit = if partial_limit(&tree, &judgement) == Some(Limit::Interrupted) {
        Exit::Inconclusive
    } else {
        exit
    };
    emit(&format!("{}\n", out.trim_end()))?;
    // The process ends here: freeing a large tree node by node would only delay the exit
    // (by a tenth of a second per few hundred thousand nodes), past `--timeout`.
    std::mem::forget((tree, judgement));
    Ok(exit)
}

/// What cut the result short: the limit that cut the tree, or an interrupt that left
/// histories unchecked after exploration ended.
fn partial_limit(tree: &Tree, judgement: &Judgement) -> Option<Limit> {
    tree.partial
        .or(judgement.interrupted.then_some(Limit::Interrupted))
}

/// The exit code of `fgvt explore` (design.md): 3 when a limit cut the tree; then 1 for a
/// violation and 3 when some leaf has no verdict (the checker ran out of time), as `localize`
/// decides (an interrupt makes it 130, by the caller).
fn exit_code(partial: bool, judgement: &Judgement) -> Exit {
    if partial {
        Exit::Inconclusive
    } else if judgement.not_linearizable + judgement.faults > 0 {
        Exit::Violation
    } else if judgement.unknown > 0 {
        Exit::Inconclusive
    } else {
        Exit::Ok
    }
}

/// Which single path to print.
enum Path<'a> {
    Schedule(&'a [fgvt_tree::Choice]),
    Leaf(u64),
}

/// Results of every operation over the unfolded tree's leaves: `"T1 read()" -> {"(1, 2)": 3}`.
/// The serial parts are named `init` and `final` rather than by the thread that runs them.
fn results(test: &TestCase, tree: &Tree) -> BTreeMap<String, BTreeMap<String, u64>> {
    // Many leaves share a history (the tree keeps one `Arc` of each, so its address tells it):
    // their multiplicities are added up first, and each history's operations are named once,
    // not once per leaf.
    let mut histories: ByAddress<(&History, u64)> = ByAddress::default();
    for (_, leaf, multiplicity) in tree.leaves() {
        let (_, slot) = histories
            .entry(address(&leaf.history))
            .or_insert((&leaf.history, 0));
        // Saturating, as every count of the unfolded tree.
        *slot = slot.saturating_add(multiplicity);
    }
    let mut out: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let concurrent: usize = test.threads.iter().map(Vec::len).sum();
    for (history, multiplicity) in histories.into_values() {
        let mut pending: BTreeMap<usize, String> = BTreeMap::new();
        let mut calls = 0;
        for event in &history.events {
            match event {
                CoarseEvent::Call { thread, call, .. } => {
                    let who = if calls < test.init.len() {
                        "init".to_string()
                    } else if calls >= test.init.len() + concurrent {
                        "final".to_string()
                    } else {
                        format!("T{thread}")
                    };
                    calls += 1;
                    pending.insert(*thread, format!("{who} {call}"));
                }
                CoarseEvent::Return { thread, value } => {
                    if let Some(op) = pending.remove(thread) {
                        let value = value.as_ref().map_or("?".to_string(), |v| v.to_string());
                        let slot = out.entry(op).or_default().entry(value).or_default();
                        // Saturating, as every count of the unfolded tree.
                        *slot = slot.saturating_add(multiplicity);
                    }
                }
            }
        }
    }
    out
}

/// The indices (0-based, depth-first: what `--leaf N` takes) of the first `max` failing
/// leaves of the unfolded tree, found without walking the subtrees that have none.
fn failing_leaf_indices(tree: &Tree, judgement: &Judgement, max: usize) -> Vec<u64> {
    // Whether a failing leaf lies below each node: children are added before their parents,
    // so one pass in index order sees every child first.
    let mut failing_below = vec![false; tree.graph.node_count()];
    for index in 0..tree.graph.node_count() {
        let node = NodeId::new(index);
        failing_below[index] = match tree.leaf(node) {
            Some(_) => judgement
                .verdicts
                .get(&node)
                .is_some_and(|v| v.is_failing()),
            None => tree
                .children(node)
                .iter()
                .any(|(_, child)| failing_below[child.index()]),
        };
    }
    let mut found = Vec::new();
    // Depth-first, children in order; `first` is the index of the subtree's first leaf.
    let mut stack = vec![(tree.root, 0u64)];
    while let Some((node, first)) = stack.pop() {
        if found.len() >= max {
            break;
        }
        if !failing_below[node.index()] {
            continue;
        }
        if tree.leaf(node).is_some() {
            found.push(first);
            continue;
        }
        let mut at = first;
        let mut children = Vec::new();
        for (_, child) in tree.children(node) {
            children.push((child, at));
            at = at.saturating_add(tree.unfolded(child).leaves());
        }
        // The first child on top.
        stack.extend(children.into_iter().rev());
    }
    found
}

/// The failing leaves' indices as a line: `3, 17, 42 (the first 20 of 1550)`.
fn failing_leaves_line(indices: &[u64], failing: u64) -> String {
    let list: Vec<String> = indices.iter().map(u64::to_string).collect();
    let more = if failing > indices.len() as u64 {
        format!(" (the first {} of {})", indices.len(), count_text(failing))
    } else {
        String::new()
    };
    format!("{}{more}", list.join(", "))
}

fn summary_text(test: &TestCase, tree: &Tree, judgement: &Judgement, scouted: bool) -> String {
    let s = tree.stats();
    let n = count_text;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} — {} on {} thread(s)",
        test.path.display(),
        test.model.name(),
        test.threads.len()
    );
    let _ = writeln!(
        out,
        "  nodes {}  edges {}  max depth {}",
        n(s.nodes),
        n(s.edges),
        s.max_depth
    );
    let cut = if s.cut > 0 {
        format!(", cut {}", n(s.cut))
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "  leaves {} (complete {}, stuck {}, fault {}, bounded {}{cut})",
        n(s.leaves),
        n(s.complete),
        n(s.stuck),
        n(s.fault),
        n(s.bounded)
    );
    let _ = writeln!(
        out,
        "  distinct states {}  graph nodes {}  time {:.1?}",
        s.distinct_states, s.graph_nodes, tree.elapsed
    );
    if let Some(bytes) = tree.memory {
        let states = s.distinct_states.max(1) as f64;
        let _ = writeln!(
            out,
            "  memory {:.1} MB ({:.0} bytes/state)  speed {:.0} states/s",
            bytes as f64 / 1e6,
            bytes as f64 / states,
            states / tree.elapsed.as_secs_f64().max(1e-9)
        );
    }
    if s.loop_edges > 0 {
        let _ = writeln!(out, "  ({})", fgvt_reports::loops_note(s.loop_edges));
    }
    let results = results(test, tree);
    if saturated(&s, judgement, &results) {
        let _ = writeln!(out, "  ({})", fgvt_reports::saturated_note());
    }
    let _ = writeln!(
        out,
        "  verdicts (spec {}): linearizable {}, not linearizable {}, fault {}, unknown {}{}  ({} distinct histories)",
        judgement.spec,
        n(judgement.linearizable),
        n(judgement.not_linearizable),
        n(judgement.faults),
        n(judgement.unknown),
        unknown_breakdown(judgement),
        judgement.distinct_histories
    );
    let failing = judgement.not_linearizable.saturating_add(judgement.faults);
    if failing > 0 {
        let indices = failing_leaf_indices(tree, judgement, FAILING_LEAVES_LISTED);
        let _ = writeln!(
            out,
            "  failing leaves (--leaf N): {}",
            failing_leaves_line(&indices, failing)
        );
    }
    let _ = writeln!(out, "results over all leaves (value ×leaves):");
    for (op, values) in &results {
        let values: Vec<String> = values
            .iter()
            .map(|(v, c)| format!("{v} ×{}", n(*c)))
            .collect();
        let _ = writeln!(out, "  {op}: {}", values.join(", "));
    }
    match partial_limit(tree, judgement) {
        Some(Limit::Interrupted) => {
            let _ = writeln!(
                out,
                "INTERRUPTED: a signal stopped the run — the counts and verdicts cover the part explored and checked"
            );
        }
        Some(limit) => {
            let _ = writeln!(
                out,
                "PARTIAL: exploration hit {} — unexplored states are counted as cut leaves; raise the limit for a full tree",
                fgvt_reports::limit_option(limit)
            );
        }
        None => {}
    }
    if scouted {
        let _ = writeln!(out, "note: {}", fgvt_reports::scouted_note(tree.partial));
    }
    out
}

/// Why leaves have no verdict, when some have none: ` (cut 3, never checked 5)`.
fn unknown_breakdown(judgement: &Judgement) -> String {
    let parts: Vec<String> = [
        ("cut", judgement.cut),
        ("bounded", judgement.bounded),
        ("never checked", judgement.unchecked),
        ("checker gave up", judgement.undecided),
    ]
    .iter()
    .filter(|(_, c)| *c > 0)
    .map(|(what, c)| format!("{what} {}", count_text(*c)))
    .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

/// Whether some count printed reached `u64::MAX` and stopped there: the tree's, the verdicts'
/// or an operation's results'.
fn saturated(
    stats: &fgvt_tree::Stats,
    judgement: &Judgement,
    results: &BTreeMap<String, BTreeMap<String, u64>>,
) -> bool {
    let verdicts = [
        judgement.linearizable,
        judgement.not_linearizable,
        judgement.faults,
        judgement.unknown,
    ];
    stats.saturated
        || verdicts.contains(&u64::MAX)
        || results
            .values()
            .any(|values| values.values().any(|&c| c == u64::MAX))
}

fn summary_json(
    test: &TestCase,
    tree: &Tree,
    judgement: &Judgement,
    scouted: bool,
) -> ExploreSummary {
    let stats = tree.stats();
    let results = results(test, tree);
    let mut counts = TreeCounts::from(stats.clone());
    counts.saturated = saturated(&stats, judgement, &results);
    ExploreSummary {
        schema: EXPLORE_SCHEMA_ID.to_string(),
        test: test.path.display().to_string(),
        object: test.model.name().to_string(),
        partial: partial_limit(tree, judgement).map(|l| l.name().to_string()),
        scouted,
        tree: counts,
        verdicts: VerdictCounts {
            spec: judgement.spec.clone(),
            linearizable: judgement.linearizable,
            not_linearizable: judgement.not_linearizable,
            fault: judgement.faults,
            unknown: judgement.unknown,
            cut: judgement.cut,
            bounded: judgement.bounded,
            unchecked: judgement.unchecked,
            undecided: judgement.undecided,
            distinct_histories: judgement.distinct_histories,
        },
        failing_leaves: failing_leaf_indices(tree, judgement, FAILING_LEAVES_LISTED),
        results,
        elapsed_ms: tree.elapsed.as_secs_f64() * 1e3,
    }
}

/// The exit code of one path (design.md): 1 when its leaf fails, 3 when its verdict is unknown
/// or a limit cut the tree, 0 when it passes or ends before a leaf.
fn path_exit(partial: bool, verdict: Option<&LeafVerdict>) -> Exit {
    match verdict {
        _ if partial => Exit::Inconclusive,
        Some(v) if v.is_failing() => Exit::Violation,
        Some(LeafVerdict::Unknown) => Exit::Inconclusive,
        _ => Exit::Ok,
    }
}

/// The leaf's verdict as people read it, with `explained`, the checker's explanation of the
/// run, when it fails.
fn verdict_text(verdict: &LeafVerdict, explained: Option<&str>) -> String {
    match verdict {
        LeafVerdict::Linearizable => "verdict: linearizable".into(),
        LeafVerdict::NotLinearizable(_) => match explained {
            Some(e) => format!("verdict: {}", e.trim_end()),
            None => "verdict: NOT LINEARIZABLE".into(),
        },
        LeafVerdict::Fault => "verdict: fault (the model itself failed on this path)".into(),
        LeafVerdict::Unknown => {
            "verdict: unknown (a limit cut the path, or its history was not checked in time)".into()
        }
    }
}

/// The verdict's stable name in JSON.
fn verdict_name(verdict: &LeafVerdict) -> &'static str {
    match verdict {
        LeafVerdict::Linearizable => "linearizable",
        LeafVerdict::NotLinearizable(_) => "not-linearizable",
        LeafVerdict::Fault => "fault",
        LeafVerdict::Unknown => "unknown",
    }
}

fn path_report(
    test: &TestCase,
    tree: &Tree,
    judgement: &Judgement,
    path: Path,
    format: Format,
) -> miette::Result<(String, Exit)> {
    let (steps, end) = match path {
        Path::Schedule(schedule) => tree.follow(schedule).map_err(|i| {
            miette::miette!(
                help = "each number is the thread that takes the next step (`T/W`: and the way its load goes); run without --schedule to see the tree",
                "--schedule: at step {i}, thread {} cannot move",
                schedule[i]
            )
        })?,
        Path::Leaf(n) => tree.nth_leaf(n).ok_or_else(|| {
            miette::miette!(help = "leaves are numbered from 0 in depth-first order; `fgvt explore TEST` lists the failing ones", "--leaf {n}: the tree has only {} leaves", count_text(tree.stats().leaves))
        })?,
    };
    let trace = fgvt_reports::trace_steps(&steps, &test.sources, |_| None);
    let leaf = tree.leaf(end);
    let verdict = leaf.and_then(|_| judgement.verdicts.get(&end));
    let exit = path_exit(tree.partial.is_some(), verdict);
    // The run's own history (the leaf keeps its first path's), and why it fails.
    let history = leaf.map(|l| l.history.retraced(steps.iter().copied()));
    let explained = match (verdict, &history) {
        (Some(LeafVerdict::NotLinearizable(_)), Some(run)) => {
            match crate::pipeline::explain_run(test, run).map(|o| o.verdict) {
                Ok(fgvt_checker::Verdict::NotLinearizable(e)) => Some(e.to_string()),
                _ => None,
            }
        }
        _ => None,
    };
    let out = match format {
        Format::Text => fgvt_reports::render_run_text(
            tree,
            &steps,
            end,
            &test.sources,
            verdict
                .map(|v| verdict_text(v, explained.as_deref()))
                .as_deref(),
            super::output::stdout_color(),
        ),
        Format::Json => render_sorted_json(&ExplorePath {
            schema: EXPLORE_SCHEMA_ID.to_string(),
            test: test.path.display().to_string(),
            schedule: steps.iter().map(|e| e.choice()).collect(),
            trace,
            leaf: leaf.zip(history.as_ref()).map(|(l, run)| PathLeaf {
                kind: fgvt_reports::leaf_kind(l).to_string(),
                history: fgvt_reports::history_data(run),
                fault: l.fault.as_ref().map(|f| f.message.clone()),
                verdict: verdict.map(|v| verdict_name(v).to_string()),
                explanation: explained,
            }),
        }),
    };
    Ok((out, exit))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judgement(not_linearizable: u64, unknown: u64) -> Judgement {
        Judgement {
            verdicts: Default::default(),
            linearizable: 1,
            not_linearizable,
            faults: 0,
            unknown,
            cut: 0,
            bounded: 0,
            unchecked: unknown,
            undecided: 0,
            interrupted: false,
            distinct_histories: 1,
            stuck_accepted_by_self: 0,
            spec: "self".into(),
        }
    }

    #[test]
    fn leaves_the_checker_gave_up_on_make_the_summary_inconclusive_not_ok() {
        assert_eq!(exit_code(false, &judgement(0, 1)), Exit::Inconclusive);
        assert_eq!(exit_code(false, &judgement(1, 1)), Exit::Violation);
        assert_eq!(exit_code(false, &judgement(0, 0)), Exit::Ok);
        assert_eq!(exit_code(true, &judgement(1, 0)), Exit::Inconclusive);
    }

    #[test]
    fn one_path_exits_with_its_leafs_verdict() {
        assert_eq!(path_exit(false, Some(&LeafVerdict::Fault)), Exit::Violation);
        assert_eq!(path_exit(false, Some(&LeafVerdict::Linearizable)), Exit::Ok);
        assert_eq!(
            path_exit(false, Some(&LeafVerdict::Unknown)),
            Exit::Inconclusive
        );
        assert_eq!(
            path_exit(false, None),
            Exit::Ok,
            "a path that ends before a leaf"
        );
        assert_eq!(
            path_exit(true, Some(&LeafVerdict::Linearizable)),
            Exit::Inconclusive
        );
    }
}
