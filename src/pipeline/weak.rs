//! What a report says of a test run under weak memory: that it ran so, whether a failure is
//! only under weak memory, and the smallest change of orderings found that fixes it.
//!
//! Each answer comes from exploring the test again: once with every access `seq_cst`
//! (sequential consistency, exact for such a program), then, unless a run fails so (every
//! change of orderings keeps such a run: [`fgvt_reports::no_fix_note`]), with one change of
//! orderings at a time, in the order of [`fgvt_memory::fix::trials`] (the order `fgvt-sync`
//! uses for Rust code), until one makes every run pass. A trial may explore about as many
//! states as the test itself (a change that makes a spin's turns distinct states is no fix to
//! tell of).

use std::time::Instant;

use fgvt_memory::fix::{self, Change};
use fgvt_reports::model::{MemoryReport, OrderChange, SourceLocation, Verdict};
use fgvt_reports::LocalizeReport;
use fgvt_tree::{ExploreOptions, Tree};

use super::explore::search_test;
use super::limits::Limits;
use crate::testcase::{MemoryMode, TestCase};

/// The most explorations the search for a fix makes (a seqlock's two fences are the 168th
/// trial of its nine sites).
const MAX_FIX_TRIALS: usize = 400;

/// The report's weak-memory part for `test` (which runs under weak memory), whose localization
/// is `report` over `tree`.
pub fn memory_report(
    test: &TestCase,
    limits: &Limits,
    report: &LocalizeReport,
    tree: &Tree,
) -> MemoryReport {
    let mut memory = MemoryReport {
        model: "rc11".to_string(),
        ..MemoryReport::default()
    };
    if report.verdict != Verdict::NotLinearizable {
        return memory;
    }
    // The report budget runs from here: the exploration that found the failure is over.
    let deadline = limits.report_budget.map(|budget| Instant::now() + budget);
    let options = limits.explore_options();
    let sequential = test.under(MemoryMode::SequentiallyConsistent);
    memory.passes_sequentially_consistent =
        fails(&sequential, &options.clone().until(deadline)).map(|fails| !fails);
    if memory.passes_sequentially_consistent == Some(false) {
        memory.fix_note = Some(fgvt_reports::no_fix_note());
        return memory;
    }

    let (max_states, max_steps) = fix::trial_limits(
        tree.graph.node_count(),
        usize::try_from(tree.stats().max_depth).unwrap_or(usize::MAX),
    );
    let budget = ExploreOptions {
        max_states: Some(max_states.min(limits.max_states)),
        max_steps: Some(max_steps.min(limits.max_steps)),
        ..options
    };
    let accesses = test.model.ordered_accesses();
    let racing_at = report.racing_positions();
    let located: Vec<Option<fgvt_tree::Location>> = accesses
        .iter()
        .map(|a| test.sources.locate(a.span))
        .collect();
    let racing: Vec<bool> = located
        .iter()
        .map(|l| {
            l.as_ref()
                .is_some_and(|l| racing_at.contains(&(l.line, l.column)))
        })
        .collect();
    let sites: Vec<_> = accesses.iter().map(|a| (a.kind, a.order)).collect();
    let out_of_budget = || deadline.is_some_and(|d| Instant::now() >= d);
    let found = fix::search(&sites, &racing, MAX_FIX_TRIALS, |trial| {
        if (limits.interrupt).is_some_and(fgvt_tree::Interrupt::is_raised) || out_of_budget() {
            return None;
        }
        let changes = trial
            .iter()
            .map(|&(i, change)| (accesses[i].site, change))
            .collect();
        let options = budget.clone().until(deadline);
        Some(fails(&test.under(MemoryMode::Changed(changes)), &options) == Some(false))
    });
    memory.fix = (found.changes.iter())
        .map(|&(i, change)| order_change(&accesses[i], located[i].as_ref(), change))
        .collect();
    memory.fix_note = Some(fgvt_reports::fix_note(
        memory.fix.len(),
        found.tried,
        out_of_budget(),
    ));
    memory
}

/// Whether some run of `test` fails, by a search that stops at the first failing leaf:
/// `Some(false)` when the whole tree was explored and every leaf passed, `None` when a limit
/// (or a bound) left some run unjudged, or the search could not run.
fn fails(test: &TestCase, options: &ExploreOptions) -> Option<bool> {
    search_test(test, options, None, false).ok()?.fails()
}

/// A change of a fix, as the report names it; orderings are spelled as the language writes
/// them.
fn order_change(
    access: &fgvt_lang::OrderedAccess,
    at: Option<&fgvt_tree::Location>,
    change: Change,
) -> OrderChange {
    let (kind, to) = match change {
        Change::Order(order) => ("order", fix::valid_for(access.kind, order)),
        Change::FenceBefore(order) => ("fence-before", order),
        Change::FenceAfter(order) => ("fence-after", order),
    };
    OrderChange {
        change: kind.to_string(),
        access: access.access.clone(),
        location: at.map(|l| SourceLocation {
            file: l.file.clone(),
            line: l.line,
            column: l.column,
            width: l.snippet.chars().count().max(1),
        }),
        snippet: at.map(|l| l.snippet.clone()).unwrap_or_default(),
        from: fgvt_lang::ordering_name(access.order).to_string(),
        to: fgvt_lang::ordering_name(to).to_string(),
    }
}
