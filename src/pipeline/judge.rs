//! Leaf verdicts: every leaf of an interleaving tree judged against the test's spec.
//!
//! Complete and stuck leaves have their coarse history checked for linearizability (once per
//! distinct history, in parallel); fault leaves fail; bounded and cut leaves are unknown and are
//! left out of the labels.
//!
//! Under a time limit, leaves are judged as exploration makes them ([`explore_judged`]): the
//! timeout then cuts exploration, not judging, and every distinct history reached before the
//! cut has its verdict, unless the cut fell inside the checker's search for it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use fgvt_checker::{check, CheckError, CheckOptions, Outcome, Spec, Verdict, VerdictCache};
use fgvt_tree::{
    ExploreOptions, Fault, History, Interrupt, Leaf, LeafKind, NodeId, Progress, Search, Tree,
};
use rayon::prelude::*;

use crate::testcase::{SpecChoice, SpecSource, TestCase};

/// A leaf's history as a map key, by the address of its `Arc`. A tree shares one `Arc` among
/// its leaves with equal histories, and shows each leaf to its judge with it
/// ([`fgvt_tree::TreeBuilder::leaf_judged`]), so a lookup per leaf hashes one word: hashing
/// every event of the history instead was a seventh of a model's whole exploration. Equal
/// histories under two `Arc`s would be two keys, judged twice alike. A key stays its history's
/// only while something holds that `Arc`: the tree, or the map's value.
pub(crate) fn address(history: &Arc<History>) -> usize {
    Arc::as_ptr(history) as usize
}

/// A map keyed by [`address`] of history.
pub(crate) type ByAddress<V> = HashMap<usize, V, foldhash::fast::RandomState>;

/// Verdicts known so far, each with the history it is of (holding the `Arc` keeps its address).
type Known = ByAddress<(Arc<History>, Option<Arc<Outcome>>)>;

/// The verdict on one leaf.
#[derive(Clone, Debug)]
pub enum LeafVerdict {
    /// Its history is linearizable.
    Linearizable,
    /// Its history is not; the outcome holds the explanation.
    NotLinearizable(Arc<Outcome>),
    /// The model itself failed on this path.
    Fault,
    /// Unknown: a bounded or cut leaf, a history never checked (time ran out or the run was
    /// interrupted first), or one the checker gave up on.
    Unknown,
}

impl LeafVerdict {
    /// Whether the leaf counts as failing (a violation or a fault).
    pub fn is_failing(&self) -> bool {
        matches!(self, LeafVerdict::NotLinearizable(_) | LeafVerdict::Fault)
    }
}

/// Every leaf's verdict, with counts over the unfolded tree.
pub struct Judgement {
    /// Verdict per leaf node.
    pub verdicts: HashMap<NodeId, LeafVerdict>,
    /// Leaves of the unfolded tree whose history is linearizable.
    pub linearizable: u64,
    /// Leaves of the unfolded tree whose history is not linearizable.
    pub not_linearizable: u64,
    /// Fault leaves of the unfolded tree.
    pub faults: u64,
    /// Leaves whose verdict is unknown: the sum of the four counts below.
    pub unknown: u64,
    /// Unknown leaves cut by a limit that stopped exploration: states never explored.
    pub cut: u64,
    /// Unknown leaves bounded by an operation's limits (`--max-steps`, `--max-local-steps`).
    pub bounded: u64,
    /// Unknown complete or stuck leaves whose history was never handed to the checker: time
    /// ran out, or the run was interrupted, before the checker reached it.
    pub unchecked: u64,
    /// Unknown complete or stuck leaves whose history the checker gave up on (its deadline
    /// fell inside the search).
    pub undecided: u64,
    /// Whether an interrupt left histories unchecked (exploration itself may have ended).
    pub interrupted: bool,
    /// Distinct histories of complete and stuck leaves (each checked at most once).
    pub distinct_histories: usize,
    /// Stuck leaves accepted by a spec synthesized from serial runs: the object blocks in its
    /// own serial runs too, so `self` cannot see a bug there (Line-Up's blind spot).
    pub stuck_accepted_by_self: u64,
    /// The spec's name.
    pub spec: String,
}

/// How long judging may go on, and what stops it early.
#[derive(Clone, Copy, Debug, Default)]
pub struct CheckBudget {
    /// Checks give up (their verdict unknown) at this instant, and no history is handed to
    /// the checker after it.
    pub deadline: Option<Instant>,
    /// No history is handed to the checker once this is raised.
    pub interrupt: Option<Interrupt>,
}

impl CheckBudget {
    /// Whether no more history may be checked.
    fn exhausted(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d) || self.interrupted()
    }

    fn interrupted(&self) -> bool {
        self.interrupt.is_some_and(Interrupt::is_raised)
    }
}

/// Judges every leaf of `tree` against the test's spec, each distinct history once, in
/// parallel, within `budget`.
pub fn judge(test: &TestCase, tree: &Tree, budget: CheckBudget) -> Result<Judgement, CheckError> {
    // Only `self` is synthesized from the very object under test (Line-Up's blind spot).
    let synthesized = matches!(test.spec, SpecChoice::SelfSpec);
    match test.spec_source() {
        SpecSource::Serial(model) => judge_with(
            test.self_spec(model),
            tree,
            budget,
            synthesized,
            Known::default(),
        ),
        SpecSource::Builtin(name) => {
            judge_with(builtin(name), tree, budget, false, Known::default())
        }
    }
}

/// Which leaves [`explore_judged`] judges as the exploration makes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inline {
    /// Every leaf: a limit that stops exploration then leaves no leaf it reached unjudged.
    Every,
    /// Leaves until the first that fails (which [`Progress::failing_run`] is told at once);
    /// the rest are judged after the exploration, in parallel.
    UntilFailure,
}

/// Explores `test` (as `program`, one of [`TestCase::program`]'s, which may have explored it
/// before: it keeps the steps it has taken) with `options`, judging leaves as they are made
/// (each distinct history once): the first failing leaf is told to `progress` as soon as it is
/// made, and with [`Inline::Every`] a limit that stops exploration leaves no leaf it reached
/// unjudged: checks end with the exploration's timeout (a check cut there is the only unknown
/// verdict of a leaf reached) and stop at its interrupt. The inner error is a fault of the
/// serial `init` part.
pub fn explore_judged(
    test: &TestCase,
    program: &fgvt_lang::TestProgram,
    options: &ExploreOptions,
    progress: &mut dyn Progress,
    inline: Inline,
) -> Result<Result<(Tree, Judgement), Fault>, CheckError> {
    let budget = CheckBudget {
        deadline: options.timeout.map(|t| Instant::now() + t),
        interrupt: options.interrupt,
    };
    let synthesized = matches!(test.spec, SpecChoice::SelfSpec);
    match test.spec_source() {
        SpecSource::Serial(model) => {
            let spec = test.self_spec(model);
            judge_inline(
                spec,
                program,
                options,
                progress,
                budget,
                synthesized,
                inline,
            )
        }
        SpecSource::Builtin(name) => {
            let spec = builtin(name);
            judge_inline(spec, program, options, progress, budget, false, inline)
        }
    }
}

/// [`explore_judged`] against `spec`.
fn judge_inline<S: Spec + Sync>(
    spec: S,
    program: &fgvt_lang::TestProgram,
    options: &ExploreOptions,
    progress: &mut dyn Progress,
    budget: CheckBudget,
    synthesized: bool,
    inline: Inline,
) -> Result<Result<(Tree, Judgement), Fault>, CheckError>
where
    S::State: Send + Sync,
{
    let check_options = CheckOptions {
        deadline: budget.deadline,
        // Most failing leaves are only counted: a report explains the runs it shows.
        explain: false,
        ..CheckOptions::default()
    };
    let mut outcomes = Known::default();
    let mut error = None;
    let mut interrupted = false;
    let mut failed = false;
    let mut fails = |leaf: &Leaf| {
        if failed && inline == Inline::UntilFailure {
            return false;
        }
        let judged = matches!(leaf.kind, LeafKind::Complete | LeafKind::Stuck);
        if leaf.kind == LeafKind::Fault {
            failed = true;
            return true;
        }
        if !judged || error.is_some() {
            return false;
        }
        if let Some((_, outcome)) = outcomes.get(&address(&leaf.history)) {
            return outcome.as_ref().is_some_and(|o| o.verdict.is_violation());
        }
        // Past the deadline the history still goes to the checker, which gives up at once on
        // one it cannot decide quickly: the explorer stops at its own next look at the clock,
        // and every leaf it made until then is judged. Only an interrupt skips the check.
        let outcome = if budget.interrupted() {
            interrupted = true;
            None
        } else {
            match check(&spec, &leaf.history, &check_options) {
                Ok(outcome) => Some(Arc::new(outcome)),
                Err(e) => {
                    // The spec cannot judge: the whole run is an error, reported at the end.
                    error = Some(e);
                    None
                }
            }
        };
        let violation = outcome.as_ref().is_some_and(|o| o.verdict.is_violation());
        failed |= violation;
        outcomes.insert(address(&leaf.history), (leaf.history.clone(), outcome));
        violation
    };
    let tree = match fgvt_tree::explore_judging(program, options, progress, &mut fails) {
        Ok(tree) => tree,
        Err(fault) => return Ok(Err(fault)),
    };
    if let Some(e) = error {
        return Err(e);
    }
    if inline == Inline::UntilFailure {
        // The leaves after the first failure: judged now, in parallel, with what is known.
        let mut judgement = judge_with(spec, &tree, budget, synthesized, outcomes)?;
        judgement.interrupted |= interrupted;
        return Ok(Ok((tree, judgement)));
    }
    let mut judgement = tally(&tree, spec.name(), synthesized, |h| {
        outcomes.get(&address(h)).and_then(|(_, o)| o.clone())
    });
    judgement.distinct_histories = outcomes.len();
    judgement.interrupted = interrupted;
    Ok(Ok((tree, judgement)))
}

/// The checker's outcome on `history` against `test`'s spec, with the whole explanation of a
/// violation: for a run a report shows, whose history is its own ([`History::retraced`]), where
/// judging a tree's leaves explains none.
pub fn explain_run(test: &TestCase, history: &History) -> Result<Outcome, CheckError> {
    let options = CheckOptions::default();
    match test.spec_source() {
        SpecSource::Serial(model) => check(&test.self_spec(model), history, &options),
        SpecSource::Builtin(name) => check(&builtin(name), history, &options),
    }
}

/// The built-in spec `name`, which the test loader has checked exists.
fn builtin(name: &str) -> fgvt_checker::BuiltinSpec {
    fgvt_checker::builtin(name).expect("built-in spec names are checked when the test loads")
}

/// Explores `test` only until a leaf fails, judging each leaf against the test's spec as it is
/// made (each distinct history once): the verdict-only exploration of a hunt. With
/// `violations_only`, a fault of the model does not stop the search. The inner error is a
/// fault of the serial `init` part.
pub fn search(
    test: &TestCase,
    explore: &ExploreOptions,
    deadline: Option<Instant>,
    violations_only: bool,
) -> Result<Result<Search, Fault>, CheckError> {
    with_failing(
        test,
        &test.program(),
        deadline,
        violations_only,
        |program, fails| fgvt_tree::search_failing(program, explore, fails),
    )
}

/// Looks for a failing run of `test` (as `program`, see [`explore_judged`]) with few
/// preemptions ([`fgvt_tree::scout`]), judging leaves as [`search`] does: its thread choices,
/// if there is one. The inner error is a fault of the serial `init` part.
pub fn scout(
    test: &TestCase,
    program: &fgvt_lang::TestProgram,
    explore: &ExploreOptions,
    deadline: Option<Instant>,
) -> Result<Result<Option<Vec<fgvt_tree::Choice>>, Fault>, CheckError> {
    with_failing(test, program, deadline, false, |program, fails| {
        fgvt_tree::scout(program, explore, fails)
    })
}

/// Runs `search` on `test`'s program with a judge of leaves against its spec, each distinct
/// history once: a fault fails unless `violations_only`, a bounded leaf or an unknown verdict
/// does not. A spec that cannot judge a history stops the search (the judge says it fails)
/// and is the error.
fn with_failing<R>(
    test: &TestCase,
    program: &fgvt_lang::TestProgram,
    deadline: Option<Instant>,
    violations_only: bool,
    search: impl FnOnce(&fgvt_lang::TestProgram, &mut dyn FnMut(&Leaf) -> bool) -> R,
) -> Result<R, CheckError> {
    let options = CheckOptions {
        deadline,
        ..CheckOptions::default()
    };
    match test.spec_source() {
        SpecSource::Serial(model) => {
            let checker = VerdictCache::new(test.self_spec(model), options);
            with_checker(program, &checker, violations_only, search)
        }
        SpecSource::Builtin(name) => {
            let checker = VerdictCache::new(builtin(name), options);
            with_checker(program, &checker, violations_only, search)
        }
    }
}

/// [`with_failing`] against the spec of `checker`.
fn with_checker<S: Spec, R>(
    program: &fgvt_lang::TestProgram,
    checker: &VerdictCache<S>,
    violations_only: bool,
    search: impl FnOnce(&fgvt_lang::TestProgram, &mut dyn FnMut(&Leaf) -> bool) -> R,
) -> Result<R, CheckError> {
    let mut error = None;
    let mut fails = |leaf: &Leaf| match leaf.kind {
        LeafKind::Fault => !violations_only,
        LeafKind::Bounded => false,
        // An unknown verdict is not a violation.
        LeafKind::Complete | LeafKind::Stuck => match checker.check_shared(&leaf.history) {
            Ok(outcome) => matches!(outcome.verdict, Verdict::NotLinearizable(_)),
            Err(e) => {
                // The spec cannot judge: stop, and say so.
                error = Some(e);
                true
            }
        },
    };
    let searched = search(program, &mut fails);
    match error {
        Some(e) => Err(e),
        None => Ok(searched),
    }
}

/// Judges every leaf of `tree` against `spec`, each distinct history once, in parallel, but
/// those whose outcome is `known` already.
fn judge_with<S: Spec + Sync>(
    spec: S,
    tree: &Tree,
    budget: CheckBudget,
    synthesized: bool,
    known: Known,
) -> Result<Judgement, CheckError>
where
    S::State: Send + Sync,
{
    let options = CheckOptions {
        deadline: budget.deadline,
        // Most failing leaves are only counted: a report explains the runs it shows.
        explain: false,
        ..CheckOptions::default()
    };
    // Check each distinct history once, in parallel; leaves then look their verdict up.
    let histories: ByAddress<&Arc<History>> = tree
        .leaves()
        .filter(|(_, leaf, _)| matches!(leaf.kind, LeafKind::Complete | LeafKind::Stuck))
        .map(|(_, leaf, _)| (address(&leaf.history), &leaf.history))
        .collect();
    // Once the budget is spent, a history is not even handed to the checker (whose setup
    // alone costs time on a large tree): it has no verdict. `None` is that missing verdict.
    // The tree holds every history while this map lives: its keys' addresses stay theirs.
    let outcomes: ByAddress<Option<Arc<Outcome>>> = histories
        .par_iter()
        .map(|(&at, &h)| {
            if let Some((_, outcome)) = known.get(&at) {
                return Ok((at, outcome.clone()));
            }
            if budget.exhausted() {
                return Ok((at, None));
            }
            check(&spec, h, &options).map(|o| (at, Some(Arc::new(o))))
        })
        .collect::<Result<_, CheckError>>()?;
    let mut judgement = tally(tree, spec.name(), synthesized, |h| {
        outcomes.get(&address(h)).cloned().flatten()
    });
    judgement.distinct_histories = outcomes.len();
    judgement.interrupted = judgement.unchecked > 0 && budget.interrupted();
    Ok(judgement)
}

/// Every leaf's verdict and the counts, from `outcome`, the checker's outcome on a history
/// (`None`: never checked).
fn tally(
    tree: &Tree,
    spec: String,
    synthesized: bool,
    outcome: impl Fn(&Arc<History>) -> Option<Arc<Outcome>>,
) -> Judgement {
    let leaves: Vec<_> = tree.leaves().collect();
    let mut judgement = Judgement {
        verdicts: HashMap::with_capacity(leaves.len()),
        linearizable: 0,
        not_linearizable: 0,
        faults: 0,
        unknown: 0,
        cut: 0,
        bounded: 0,
        unchecked: 0,
        undecided: 0,
        interrupted: false,
        distinct_histories: 0,
        stuck_accepted_by_self: 0,
        spec,
    };
    // Counts saturate, as the tree's do: a multiplicity can be the largest u64 already.
    let add = |slot: &mut u64, n: u64| *slot = slot.saturating_add(n);
    for (node, leaf, multiplicity) in leaves {
        let verdict = match leaf.kind {
            LeafKind::Fault => LeafVerdict::Fault,
            LeafKind::Bounded => {
                let why = if leaf.is_cut() {
                    &mut judgement.cut
                } else {
                    &mut judgement.bounded
                };
                add(why, multiplicity);
                LeafVerdict::Unknown
            }
            LeafKind::Complete | LeafKind::Stuck => match outcome(&leaf.history) {
                None => {
                    add(&mut judgement.unchecked, multiplicity);
                    LeafVerdict::Unknown
                }
                Some(outcome) => match outcome.verdict {
                    Verdict::Unknown => {
                        add(&mut judgement.undecided, multiplicity);
                        LeafVerdict::Unknown
                    }
                    Verdict::Linearizable { .. } => {
                        if synthesized && leaf.kind == LeafKind::Stuck {
                            add(&mut judgement.stuck_accepted_by_self, multiplicity);
                        }
                        LeafVerdict::Linearizable
                    }
                    Verdict::NotLinearizable(_) => {
                        LeafVerdict::NotLinearizable(Arc::clone(&outcome))
                    }
                },
            },
        };
        add(
            match verdict {
                LeafVerdict::Linearizable => &mut judgement.linearizable,
                LeafVerdict::NotLinearizable(_) => &mut judgement.not_linearizable,
                LeafVerdict::Fault => &mut judgement.faults,
                LeafVerdict::Unknown => &mut judgement.unknown,
            },
            multiplicity,
        );
        judgement.verdicts.insert(node, verdict);
    }
    judgement
}
