//! `fgvt localize`: label the interleaving tree and report the critical data race sequences.

use std::time::Instant;

use fgvt_checker::Verdict as CheckVerdict;
use fgvt_labeling::cdrs::{find_cdrs, Cdrs, CdrsOptions};
use fgvt_labeling::labels::{label_tree, Labeling, LeafOutcome};
use fgvt_labeling::pattern::Pattern;
use fgvt_reports::{build_report, Explanation, LocalizeReport, ReportInput, TestInfo, Verdict};
use fgvt_tree::Tree;

use super::explore::{build_tree, judge_tree};
use super::output::{emit, stdout_color, write_atomically, Exit};
use super::{LimitArgs, LocalizeArgs, ReportFormat};
use crate::judge::{Judgement, LeafVerdict};
use crate::testcase::{self, TestCase};

/// Runs `fgvt localize`.
pub fn run(args: &LocalizeArgs) -> miette::Result<Exit> {
    let pattern = parse_pattern(args.pattern.as_deref())?;
    let test = testcase::load(&args.test)?;
    let localized = localize(&test, args, &pattern)?;
    let report = &localized.report;
    let text = match args.format {
        ReportFormat::Text => {
            fgvt_reports::render_text(report, args.output.is_none() && stdout_color())
        }
        ReportFormat::Markdown => fgvt_reports::render_markdown(report),
        ReportFormat::Json => fgvt_reports::render_json(report),
    };
    match &args.output {
        Some(path) => write_atomically(path, text.as_bytes())?,
        None => emit(&text)?,
    }
    let trees = super::render::TreeFiles {
        svg: args.svg.as_deref(),
        dot: args.dot.as_deref(),
    };
    super::render::write_tree_files(&test, &localized, args.max_cdrs, &args.draw, &trees)?;
    Ok(exit_code(report))
}

/// The `--pattern` argument, or the paper's pattern.
pub fn parse_pattern(pattern: Option<&str>) -> miette::Result<Pattern> {
    match pattern {
        Some(p) => Pattern::parse(p).map_err(|e| {
            miette::miette!(
                help = "labels are W, B, G, WG, BG, GG, WBG, with | * + ? ( ) between them",
                "--pattern: {e}"
            )
        }),
        None => Ok(Pattern::default()),
    }
}

/// The exit code of a localization (design.md): 1 for a violation, 3 when partial.
pub fn exit_code(report: &LocalizeReport) -> Exit {
    match report.verdict {
        // A limit makes the run partial whatever was found: the CDRS may change with the rest
        // of the tree.
        _ if report.partial.is_some() => Exit::Inconclusive,
        Verdict::NotLinearizable => Exit::Violation,
        Verdict::Linearizable => Exit::Ok,
        Verdict::Inconclusive => Exit::Inconclusive,
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
    /// Every CDRS group found, best first (the report shows the first `--max-cdrs`).
    pub cdrs: Cdrs,
}

/// Explores, judges, labels and localizes `test`: the report, and the tree it describes.
pub fn localize(
    test: &TestCase,
    args: &LocalizeArgs,
    pattern: &Pattern,
) -> miette::Result<Localized> {
    localize_with(test, &args.limits, args.max_cdrs, pattern)
}

/// [`localize`] with the limits and the number of reported CDRS given apart.
pub fn localize_with(
    test: &TestCase,
    limits: &LimitArgs,
    max_cdrs: usize,
    pattern: &Pattern,
) -> miette::Result<Localized> {
    let started = Instant::now();
    let tree = build_tree(test, limits)?;
    let deadline = limits.timeout.map(|t| started + t);
    let judgement = judge_tree(test, &tree, deadline)?;
    let labeling = label_tree(&tree, |node, _| outcome(&judgement, node));
    let cdrs = find_cdrs(&tree, &labeling, pattern, &CdrsOptions::default());
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
        pattern,
        sources: &test.sources,
        test: &info,
        max_cdrs,
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

fn outcome(judgement: &Judgement, node: fgvt_tree::NodeId) -> LeafOutcome {
    match judgement.verdicts.get(&node) {
        Some(LeafVerdict::Linearizable) => LeafOutcome::Pass,
        Some(LeafVerdict::NotLinearizable(_) | LeafVerdict::Fault) => LeafOutcome::Fail,
        Some(LeafVerdict::Unknown) | None => LeafOutcome::Unknown,
    }
}

/// The checker's explanation of a failing leaf, or the fault that ended it.
fn explanation(judgement: &Judgement, tree: &Tree, leaf: fgvt_tree::NodeId) -> Option<Explanation> {
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
