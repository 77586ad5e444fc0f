//! The whole pipeline on one test: explore, judge, label, find the CDRS, build the report.

use std::time::Instant;

use fgvt_labeling::cdrs::{find_cdrs, Cdrs, CdrsOptions, Pattern};
use fgvt_labeling::labels::{label_tree, Labeling, LeafOutcome};
use fgvt_labeling::Verdict as CheckVerdict;
use fgvt_reports::{build_report, Explanation, LocalizeReport, ReportInput, TestInfo};
use fgvt_tree::explore::Progress;
use fgvt_tree::{NodeId, Tree};

use super::judge::{Judgement, LeafVerdict};
use super::{explore_test, judge_test, Limits, PipelineError};
use crate::testcase::TestCase;

/// What [`localize`] needs besides the test.
#[derive(Clone, Debug, Default)]
pub struct LocalizeOptions {
    /// The limits of the exploration (and of the checks, for the timeout).
    pub limits: Limits,
    /// The CDRS pattern over labels (default: the paper's `(WG|BG|WBG)*(BG|G|WBG)`).
    pub pattern: Pattern,
    /// How many CDRS the report shows, best first.
    pub max_cdrs: usize,
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
pub fn localize(test: &TestCase, options: &LocalizeOptions) -> Result<Localized, PipelineError> {
    localize_with_progress(test, options, &mut ())
}

/// [`localize`], reporting the exploration's progress to `progress`.
pub fn localize_with_progress(
    test: &TestCase,
    options: &LocalizeOptions,
    progress: &mut dyn Progress,
) -> Result<Localized, PipelineError> {
    let started = Instant::now();
    let tree = explore_test(test, &options.limits, progress)?;
    let judgement = judge_test(test, &tree, options.limits.deadline(started))?;
    let labeling = label_tree(&tree, |node, _| outcome(&judgement, node));
    let cdrs = find_cdrs(&tree, &labeling, &options.pattern, &CdrsOptions::default());
    let info = TestInfo {
        file: test.path.display().to_string(),
        object: test.model.name().to_string(),
        spec: test.spec.to_string(),
        command: format!(
            "fgvt localize {}",
            fgvt_reports::shell_quote(&test.path.display().to_string())
        ),
    };
    let input = ReportInput {
        tree: &tree,
        labeling: &labeling,
        cdrs: &cdrs,
        pattern: &options.pattern,
        sources: &test.sources,
        test: &info,
        max_cdrs: options.max_cdrs,
    };
    let mut report = build_report(&input, |leaf| explanation(&judgement, &tree, leaf));
    report.notes.extend(spec_notes(&judgement));
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
pub(crate) fn explanation(judgement: &Judgement, tree: &Tree, leaf: NodeId) -> Option<Explanation> {
    match judgement.verdicts.get(&leaf)? {
        LeafVerdict::NotLinearizable(outcome) => match &outcome.verdict {
            CheckVerdict::NotLinearizable(e) => Some(Explanation {
                text: e.to_string(),
                json: serde_json::to_value(e).unwrap_or_default(),
            }),
            _ => None,
        },
        LeafVerdict::Fault => tree.leaf(leaf)?.fault.as_ref().map(|f| Explanation {
            text: format!("the model itself failed: {}", f.message),
            json: serde_json::json!({ "fault": f.message }),
        }),
        _ => None,
    }
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
