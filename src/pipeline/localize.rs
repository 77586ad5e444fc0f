//! The stages composed: explore the test, judge every leaf, label the tree, find the CDRS and
//! build the report.

use std::time::Instant;

use fgvt_checker::Verdict as CheckVerdict;
use fgvt_labeling::cdrs::Cdrs;
use fgvt_labeling::labels::{Labeling, LeafOutcome};
use fgvt_labeling::pattern::Pattern;
use fgvt_reports::{
    localize_tree, Explanation, Localization, LocalizeReport, Replay, ReportContext, TestInfo,
};
use fgvt_tree::{ExploreOptions, NodeId, Progress, Search, Tree};

use super::error::PipelineError;
use super::judge::{explore_judged, judge, CheckBudget, Inline, Judgement, LeafVerdict};
use super::limits::Limits;
use crate::testcase::TestCase;

/// What a localization reports beyond the limits.
#[derive(Clone, Debug)]
pub struct LocalizeOptions {
    /// The pattern a CDRS's word of decisive labels must match.
    pub pattern: Pattern,
    /// How many CDRS groups the report shows in full (all are found and counted).
    pub max_cdrs: usize,
}

impl Default for LocalizeOptions {
    fn default() -> Self {
        LocalizeOptions {
            pattern: Pattern::default(),
            max_cdrs: 3,
        }
    }
}

/// A localization: the report, and the tree, labels and CDRS it was built from.
pub struct Localized {
    /// The report.
    pub report: LocalizeReport,
    /// The explored tree.
    pub tree: Tree,
    /// Its labels.
    pub labeling: Labeling,
    /// Every CDRS group found, best first (the report shows the first `max_cdrs`).
    pub cdrs: Cdrs,
}

/// Explores the test's program, reporting progress to `progress`; a fault of the serial
/// `init` part is an error (the test cannot even start).
pub fn explore_test(
    test: &TestCase,
    options: &ExploreOptions,
    progress: &mut dyn Progress,
) -> Result<Tree, PipelineError> {
    let program = test.program();
    fgvt_tree::explore_with_progress(&program, options, progress)
        .map_err(|fault| init_fault(test, fault))
}

/// The error for a fault of `test`'s serial `init` part, located in its sources.
fn init_fault(test: &TestCase, fault: fgvt_tree::Fault) -> PipelineError {
    PipelineError::InitFault {
        test: test.path.clone(),
        message: fault.message,
        location: fault
            .span
            .and_then(|s| test.sources.locate(s))
            .map(|l| l.to_string()),
    }
}

/// A tree with every leaf judged, and how it was found.
pub struct Judged {
    /// The explored tree.
    pub tree: Tree,
    /// Its leaves' verdicts.
    pub judgement: Judgement,
    /// Whether the tree's failing run was found by a [`fgvt_tree::scout`] after a limit cut
    /// the first exploration before any leaf failed, and then explored first.
    pub scouted: bool,
}

/// The share of the exploration's time budget the first exploration may take when a timeout
/// is set: what is left goes to a scout and to exploring again along its run, should the
/// first exploration end cut short without a failing leaf.
const FIRST_SHARE: f64 = 0.8;

/// The share of the exploration's time budget by which the scout must have ended.
const SCOUT_SHARE: f64 = 0.9;

/// Explores and judges `test`. When a limit cuts the tree before any leaf fails, looks for a
/// failing run with few preemptions ([`fgvt_tree::scout`], within the same limits) and, if
/// there is one, explores again taking that run first: a partial tree then holds a failing run
/// whenever a short one exists, though the depth-first search would have spent its whole budget
/// below the first threads' first choices. With a timeout, the whole stays within it, and
/// leaves are judged as they are made, so that every one reached before the time ran out has
/// its verdict. An interrupt stops it all, the scout included.
pub fn explore_and_judge(
    test: &TestCase,
    limits: &Limits,
    progress: &mut dyn Progress,
) -> Result<Judged, PipelineError> {
    let started = Instant::now();
    let options = limits.explore_options();
    // What is left, at this moment, of `share` of the exploration's time budget.
    let left =
        |share: f64| (options.timeout).map(|t| t.mul_f64(share).saturating_sub(started.elapsed()));
    let interrupted = || {
        options
            .interrupt
            .is_some_and(fgvt_tree::Interrupt::is_raised)
    };
    let first = ExploreOptions {
        timeout: left(FIRST_SHARE),
        ..options.clone()
    };
    let (tree, judgement) = explore_and_judge_once(test, &first, progress)?;
    let failing = judgement.not_linearizable.saturating_add(judgement.faults);
    if tree.partial.is_none()
        || failing > 0
        || interrupted()
        || left(SCOUT_SHARE).is_some_and(|t| t.is_zero())
    {
        return Ok(Judged {
            tree,
            judgement,
            scouted: false,
        });
    }
    let scouting = ExploreOptions {
        timeout: left(SCOUT_SHARE),
        ..options.clone()
    };
    let run = super::judge::scout(
        test,
        &scouting,
        scouting.timeout.map(|t| Instant::now() + t),
    )
    .map_err(|source| spec_error(test, source))?
    .map_err(|fault| init_fault(test, fault))?;
    let Some(run) = run else {
        return Ok(Judged {
            tree,
            judgement,
            scouted: false,
        });
    };
    let again = ExploreOptions {
        timeout: left(1.0),
        first: Some(run.into()),
        ..options
    };
    // The first tree is let go before the second is built: the peak is one tree.
    drop((tree, judgement));
    let (tree, judgement) = explore_and_judge_once(test, &again, progress)?;
    Ok(Judged {
        tree,
        judgement,
        scouted: true,
    })
}

/// One exploration of `test` with `options`, every leaf judged: as the tree grows when a
/// timeout could otherwise cut judging short; else as it grows until the first failing leaf
/// (which `progress` is told at once, [`Progress::failing_run`]), the rest after it, in
/// parallel.
fn explore_and_judge_once(
    test: &TestCase,
    options: &ExploreOptions,
    progress: &mut dyn Progress,
) -> Result<(Tree, Judgement), PipelineError> {
    let inline = if options.timeout.is_some() {
        Inline::Every
    } else {
        Inline::UntilFailure
    };
    explore_judged(test, options, progress, inline)
        .map_err(|source| spec_error(test, source))?
        .map_err(|fault| init_fault(test, fault))
}

/// Judges every leaf of `tree` against the test's spec within `budget`.
pub fn judge_test(
    test: &TestCase,
    tree: &Tree,
    budget: CheckBudget,
) -> Result<Judgement, PipelineError> {
    judge(test, tree, budget).map_err(|source| spec_error(test, source))
}

/// Explores `test` only until a leaf fails, judging leaves as they are made (see
/// [`judge::search`](super::judge::search)): whether the test fails, not which races decide it.
pub fn search_test(
    test: &TestCase,
    options: &ExploreOptions,
    deadline: Option<Instant>,
    violations_only: bool,
) -> Result<Search, PipelineError> {
    super::judge::search(test, options, deadline, violations_only)
        .map_err(|source| spec_error(test, source))?
        .map_err(|fault| init_fault(test, fault))
}

/// The error for a spec that could not judge one of `test`'s histories.
fn spec_error(test: &TestCase, source: fgvt_checker::CheckError) -> PipelineError {
    PipelineError::Spec {
        test: test.path.clone(),
        spec: test.spec.to_string(),
        source: Box::new(source),
    }
}

/// Explores, judges, labels and localizes `test`: the report, and the tree it describes.
pub fn localize(
    test: &TestCase,
    limits: &Limits,
    options: &LocalizeOptions,
    progress: &mut dyn Progress,
) -> Result<Localized, PipelineError> {
    let Judged {
        tree,
        judgement,
        scouted,
    } = explore_and_judge(test, limits, progress)?;
    let info = TestInfo {
        file: test.path.display().to_string(),
        object: test.model.name().to_string(),
        spec: test.spec.to_string(),
        command: format!(
            "fgvt localize {}",
            fgvt_reports::shell_quote(&test.path.display().to_string())
        ),
    };
    let context = ReportContext {
        pattern: &options.pattern,
        sources: &test.sources,
        test: &info,
        max_cdrs: options.max_cdrs,
        replay: Replay::Explore,
        interrupt: limits.interrupt,
    };
    let Localization {
        mut report,
        labeling,
        cdrs,
    } = localize_tree(
        &tree,
        |node| outcome(&judgement, node),
        |leaf| explanation(&judgement, &tree, leaf),
        &context,
    );
    if judgement.interrupted && tree.partial != Some(fgvt_tree::Limit::Interrupted) {
        // Exploration ended (or stopped at another limit, which its own note names), but the
        // interrupt left histories unchecked: the run was interrupted all the same.
        report.partial = Some(fgvt_tree::Limit::Interrupted.name().to_string());
        report.notes.insert(
            0,
            "INTERRUPTED: a signal (Ctrl-C, SIGTERM) stopped the run while leaves were being \
             checked: the verdicts cover only the leaves checked"
                .to_string(),
        );
    }
    report.notes.extend(unknown_notes(&judgement, limits));
    report.notes.extend(spec_notes(&judgement));
    if scouted {
        report
            .notes
            .insert(0, fgvt_reports::scouted_note(tree.partial));
    }
    if test.is_weak() {
        report.memory = Some(super::weak::memory_report(test, limits, &report, &tree));
        fgvt_reports::name_deciding_accesses(&mut report);
    }
    Ok(Localized {
        report,
        tree,
        labeling,
        cdrs,
    })
}

fn outcome(judgement: &Judgement, node: NodeId) -> LeafOutcome {
    match judgement.verdicts.get(&node) {
        Some(LeafVerdict::Linearizable) => LeafOutcome::Pass,
        Some(LeafVerdict::NotLinearizable(_) | LeafVerdict::Fault) => LeafOutcome::Fail,
        Some(LeafVerdict::Unknown) | None => LeafOutcome::Unknown,
    }
}

/// The checker's explanation of a failing leaf, or the fault that ended it.
fn explanation(judgement: &Judgement, tree: &Tree, leaf: NodeId) -> Option<Explanation> {
    match judgement.verdicts.get(&leaf)? {
        LeafVerdict::NotLinearizable(outcome) => match &outcome.verdict {
            CheckVerdict::NotLinearizable(e) => {
                // The report's heading says it is not linearizable: the text goes on.
                Some(Explanation::told(e.headline(), e.details().to_string(), e))
            }
            _ => None,
        },
        LeafVerdict::Fault => tree.leaf(leaf)?.fault.as_ref().map(|f| Explanation {
            headline: format!("the model itself failed: {}", f.message),
            text: format!("the model itself failed: {}", f.message),
            json: serde_json::json!({ "fault": f.message }),
        }),
        _ => None,
    }
}

/// Why complete and stuck leaves have no verdict, which the report's own note (built from the
/// tree alone) cannot tell apart: never checked, or given up on by the checker.
fn unknown_notes(judgement: &Judgement, limits: &Limits) -> Vec<String> {
    let mut notes = Vec::new();
    let stopped_by = if judgement.interrupted {
        "the run was interrupted".to_string()
    } else {
        match limits.timeout {
            Some(t) => format!("the --timeout of {} s ran out", t.as_secs_f64()),
            None => "the run stopped".to_string(),
        }
    };
    if judgement.unchecked > 0 {
        notes.push(format!(
            "{} never checked: {stopped_by} before the checker reached {}",
            fgvt_reports::counted(judgement.unchecked, "leaf was", "leaves were"),
            if judgement.unchecked == 1 {
                "its history"
            } else {
                "their histories"
            }
        ));
    }
    if judgement.undecided > 0 {
        notes.push(format!(
            "the checker gave up on the history of {}: {stopped_by} during its search",
            fgvt_reports::counted(judgement.undecided, "leaf", "leaves")
        ));
    }
    notes
}

/// Remarks about the spec that a reader needs to trust (or distrust) the verdict.
fn spec_notes(judgement: &Judgement) -> Vec<String> {
    let mut notes = Vec::new();
    if judgement.stuck_accepted_by_self > 0 {
        notes.push(format!(
            "{} stuck leaves were accepted by the spec synthesized from the object's own serial runs (`self`): \
             the object blocks in its serial runs too, and such a spec cannot see a bug that serial runs share. \
             Check them against a built-in spec (e.g. \"spec\": \"counter\") to learn whether the operations should block.",
            judgement.stuck_accepted_by_self
        ));
    }
    notes
}
