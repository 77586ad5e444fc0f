//! `fgvt explore`: the interleaving tree of a test, as counts or as one path.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use fgvt_reports::{
    render_sorted_json, ExplorePath, ExploreSummary, PathLeaf, TreeCounts, VerdictCounts,
    EXPLORE_SCHEMA_ID,
};
use fgvt_tree::{CoarseEvent, Tree};

use super::output::{emit, Exit, Progress};
use super::{pipeline_error, ExploreArgs, Format};
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
    emit(&format!("{}\n", out.trim_end()))?;
    // The process ends here: freeing a large tree node by node would only delay the exit
    // (by a tenth of a second per few hundred thousand nodes), past `--timeout`.
    std::mem::forget((tree, judgement));
    Ok(exit)
}

/// The exit code of `fgvt explore` (design.md): 3 when a limit cut the tree; then 1 for a
/// violation and 3 when some leaf has no verdict (the checker ran out of time), as `localize`
/// decides.
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
    Schedule(&'a [usize]),
    Leaf(u64),
}

/// Results of every operation over the unfolded tree's leaves: `"T1 read()" -> {"(1, 2)": 3}`.
/// The serial parts are named `init` and `final` rather than by the thread that runs them.
fn results(test: &TestCase, tree: &Tree) -> BTreeMap<String, BTreeMap<String, u64>> {
    let mut out: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let concurrent: usize = test.threads.iter().map(Vec::len).sum();
    for (_, leaf, multiplicity) in tree.leaves() {
        let mut pending: BTreeMap<usize, String> = BTreeMap::new();
        let mut calls = 0;
        for event in &leaf.history.events {
            match event {
                CoarseEvent::Call { thread, call } => {
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
                        *out.entry(op).or_default().entry(value).or_default() += multiplicity;
                    }
                }
            }
        }
    }
    out
}

fn summary_text(test: &TestCase, tree: &Tree, judgement: &Judgement, scouted: bool) -> String {
    let s = tree.stats();
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
        s.nodes, s.edges, s.max_depth
    );
    let _ = writeln!(
        out,
        "  leaves {} (complete {}, stuck {}, fault {}, bounded {})",
        s.leaves, s.complete, s.stuck, s.fault, s.bounded
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
    if s.saturated {
        let _ = writeln!(out, "  ({})", fgvt_reports::saturated_note());
    }
    let _ = writeln!(
        out,
        "  verdicts (spec {}): linearizable {}, not linearizable {}, fault {}, unknown {}  ({} distinct histories)",
        judgement.spec,
        judgement.linearizable,
        judgement.not_linearizable,
        judgement.faults,
        judgement.unknown,
        judgement.distinct_histories
    );
    let _ = writeln!(out, "results over all leaves (value ×leaves):");
    for (op, values) in results(test, tree) {
        let values: Vec<String> = values.iter().map(|(v, n)| format!("{v} ×{n}")).collect();
        let _ = writeln!(out, "  {op}: {}", values.join(", "));
    }
    if let Some(limit) = tree.partial {
        let _ = writeln!(
            out,
            "PARTIAL: exploration hit {} — unexplored states are counted as bounded leaves; raise the limit for a full tree",
            fgvt_reports::limit_option(limit)
        );
    }
    if scouted {
        let _ = writeln!(out, "note: {}", fgvt_reports::scouted_note(tree.partial));
    }
    out
}

fn summary_json(
    test: &TestCase,
    tree: &Tree,
    judgement: &Judgement,
    scouted: bool,
) -> ExploreSummary {
    ExploreSummary {
        schema: EXPLORE_SCHEMA_ID.to_string(),
        test: test.path.display().to_string(),
        object: test.model.name().to_string(),
        partial: tree.partial.map(|l| l.name().to_string()),
        scouted,
        tree: TreeCounts::from(tree.stats()),
        verdicts: VerdictCounts {
            spec: judgement.spec.clone(),
            linearizable: judgement.linearizable,
            not_linearizable: judgement.not_linearizable,
            fault: judgement.faults,
            unknown: judgement.unknown,
            distinct_histories: judgement.distinct_histories,
        },
        results: results(test, tree),
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

/// The leaf's verdict as people read it, with the checker's explanation when it fails.
fn verdict_text(verdict: &LeafVerdict) -> String {
    match verdict {
        LeafVerdict::Linearizable => "verdict: linearizable".into(),
        LeafVerdict::NotLinearizable(outcome) => match &outcome.verdict {
            fgvt_checker::Verdict::NotLinearizable(e) => {
                format!("verdict: {}", e.to_string().trim_end())
            }
            _ => "verdict: NOT LINEARIZABLE".into(),
        },
        LeafVerdict::Fault => "verdict: fault (the model itself failed on this path)".into(),
        LeafVerdict::Unknown => "verdict: unknown (a bound was hit, or the checker gave up)".into(),
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
                help = "each number is the thread that takes the next step; run without --schedule to see the tree",
                "--schedule: at step {i}, thread {} cannot move",
                schedule[i]
            )
        })?,
        Path::Leaf(n) => tree.nth_leaf(n).ok_or_else(|| {
            miette::miette!(help = "leaves are numbered from 0 in depth-first order", "--leaf {n}: the tree has only {} leaves", tree.stats().leaves)
        })?,
    };
    let trace = fgvt_reports::trace_steps(&steps, &test.sources, |_| None);
    let schedule: Vec<String> = steps.iter().map(|e| e.thread.to_string()).collect();
    let leaf = tree.leaf(end);
    let verdict = leaf.and_then(|_| judgement.verdicts.get(&end));
    let exit = path_exit(tree.partial.is_some(), verdict);
    let out = match format {
        Format::Text => {
            let history = leaf.map(|l| fgvt_reports::history_data(&l.history));
            let mut out = fgvt_reports::render_path_text(
                &trace,
                history.as_ref(),
                super::output::stdout_color(),
            );
            let _ = writeln!(out, "schedule: {}", schedule.join(","));
            match leaf {
                Some(leaf) => {
                    let _ = writeln!(out, "leaf: {}", format!("{:?}", leaf.kind).to_lowercase());
                    if let Some(f) = &leaf.fault {
                        let at = f
                            .span
                            .and_then(|s| test.sources.locate(s))
                            .map(|l| format!(" at {l}"))
                            .unwrap_or_default();
                        let _ = writeln!(out, "fault: {}{at}", f.message);
                    }
                    if let Some(bound) = &leaf.bound {
                        let _ = writeln!(
                            out,
                            "bounded: {bound} ({})",
                            fgvt_reports::limit_option(bound.limit())
                        );
                    }
                    if let Some(verdict) = verdict {
                        let _ = writeln!(out, "{}", verdict_text(verdict));
                    }
                }
                None => {
                    let _ = writeln!(
                        out,
                        "(not a leaf: {} leaves below)",
                        tree.unfolded(end).leaves()
                    );
                }
            }
            out
        }
        Format::Json => render_sorted_json(&ExplorePath {
            schema: EXPLORE_SCHEMA_ID.to_string(),
            test: test.path.display().to_string(),
            schedule: steps.iter().map(|e| e.thread).collect(),
            trace,
            leaf: leaf.map(|l| PathLeaf {
                kind: format!("{:?}", l.kind).to_lowercase(),
                history: fgvt_reports::history_data(&l.history),
                fault: l.fault.as_ref().map(|f| f.message.clone()),
                verdict: verdict.map(|v| verdict_name(v).to_string()),
                explanation: verdict.and_then(|v| match v {
                    LeafVerdict::NotLinearizable(o) => match &o.verdict {
                        fgvt_checker::Verdict::NotLinearizable(e) => Some(e.to_string()),
                        _ => None,
                    },
                    _ => None,
                }),
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
