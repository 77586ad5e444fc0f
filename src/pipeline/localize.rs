//! The stages composed: explore the test and judge every leaf (`explore.rs`), label the tree,
//! find the CDRS and build the report.

use fgvt_checker::Verdict as CheckVerdict;
use fgvt_labeling::cdrs::Cdrs;
use fgvt_labeling::labels::{Labeling, LeafOutcome};
use fgvt_labeling::pattern::Pattern;
use fgvt_reports::{
    localize_tree, Explanation, Localization, LocalizeReport, Replay, ReportContext, TestInfo,
};
use fgvt_tree::{History, NodeId, Progress, Tree};

use super::error::PipelineError;
use super::explore::{explore_and_judge, Judged};
use super::judge::{explain_run, Judgement, LeafVerdict};
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
        |leaf, run| explanation(test, &judgement, &tree, leaf, run),
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

/// The checker's explanation of a failing leaf reached by a run whose history is `run`, or the
/// fault that ended it.
fn explanation(
    test: &TestCase,
    judgement: &Judgement,
    tree: &Tree,
    leaf: NodeId,
    run: &History,
) -> Option<Explanation> {
    match judgement.verdicts.get(&leaf)? {
        LeafVerdict::NotLinearizable(_) => match explain_run(test, run).ok()?.verdict {
            CheckVerdict::NotLinearizable(e) => {
                // The report's heading says it is not linearizable: the text goes on.
                Some(Explanation::told(e.headline(), e.details().to_string(), &e))
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
