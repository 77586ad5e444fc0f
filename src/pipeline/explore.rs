//! The stages before labeling: explore a test, judge its leaves, or search it for a failing
//! leaf, with the judge's and the explorer's failures turned into a [`PipelineError`] that
//! names the test.
//!
//! They sit below `localize.rs`, which composes them with labeling and the report, and below
//! `weak.rs` and the hunt, which search a test verdict-only (a change of orderings, a sample).

use std::time::Instant;

use fgvt_tree::{ExploreOptions, Progress, Search, Tree};

use super::error::PipelineError;
use super::judge::{explore_judged, judge, CheckBudget, Inline, Judgement};
use super::limits::Limits;
use crate::testcase::TestCase;

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
/// its verdict. An interrupt stops it all, the scout included. All three explore one
/// program, whose steps taken are kept from one to the next: the scout and the second
/// exploration step through states the first met without interpreting them again, and hold
/// no second copy of their parts.
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
    let program = test.program();
    let (tree, judgement) = explore_and_judge_once(test, &program, &first, progress)?;
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
        &program,
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
    let (tree, judgement) = explore_and_judge_once(test, &program, &again, progress)?;
    Ok(Judged {
        tree,
        judgement,
        scouted: true,
    })
}

/// One exploration of `test` (as `program`) with `options`, every leaf judged: as the tree
/// grows when a timeout could otherwise cut judging short; else as it grows until the first
/// failing leaf (which `progress` is told at once, [`Progress::failing_run`]), the rest after
/// it, in parallel.
fn explore_and_judge_once(
    test: &TestCase,
    program: &fgvt_lang::TestProgram,
    options: &ExploreOptions,
    progress: &mut dyn Progress,
) -> Result<(Tree, Judgement), PipelineError> {
    let inline = if options.timeout.is_some() {
        Inline::Every
    } else {
        Inline::UntilFailure
    };
    explore_judged(test, program, options, progress, inline)
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
