//! Leaf verdicts: every leaf of an interleaving tree judged against the test's spec.
//!
//! Complete and stuck leaves have their coarse history checked for linearizability (once per
//! distinct history, in parallel); fault leaves fail; bounded leaves are unknown and are left
//! out of the labels.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use fgvt_checker::{check, CheckError, CheckOptions, Outcome, Spec, Verdict, VerdictCache};
use fgvt_tree::{ExploreOptions, Fault, History, Leaf, LeafKind, NodeId, Search, ThreadId, Tree};
use rayon::prelude::*;

use crate::testcase::{SpecChoice, SpecSource, TestCase};

/// The verdict on one leaf.
#[derive(Clone, Debug)]
pub enum LeafVerdict {
    /// Its history is linearizable.
    Linearizable,
    /// Its history is not; the outcome holds the explanation.
    NotLinearizable(Arc<Outcome>),
    /// The model itself failed on this path.
    Fault,
    /// Unknown: a bounded leaf, or the checker ran out of time.
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
    /// Leaves whose verdict is unknown (bounded, or the checker timed out).
    pub unknown: u64,
    /// Distinct histories checked.
    pub distinct_histories: usize,
    /// Stuck leaves accepted by a spec synthesized from serial runs: the object blocks in its
    /// own serial runs too, so `self` cannot see a bug there (Line-Up's blind spot).
    pub stuck_accepted_by_self: u64,
    /// The spec's name.
    pub spec: String,
}

/// Judges every leaf of `tree` against the test's spec; `deadline` bounds each check.
pub fn judge(
    test: &TestCase,
    tree: &Tree,
    deadline: Option<Instant>,
) -> Result<Judgement, CheckError> {
    let options = CheckOptions {
        deadline,
        ..CheckOptions::default()
    };
    // Only `self` is synthesized from the very object under test (Line-Up's blind spot).
    let synthesized = matches!(test.spec, SpecChoice::SelfSpec);
    match test.spec_source() {
        SpecSource::Serial(model) => judge_with(test.self_spec(model), tree, options, synthesized),
        SpecSource::Builtin(name) => judge_with(builtin(name), tree, options, false),
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
    with_failing(test, deadline, violations_only, |program, fails| {
        fgvt_tree::search_failing(program, explore, fails)
    })
}

/// Looks for a failing run of `test` with few preemptions ([`fgvt_tree::scout`]), judging
/// leaves as [`search`] does: its thread choices, if there is one. The inner error is a fault
/// of the serial `init` part.
pub fn scout(
    test: &TestCase,
    explore: &ExploreOptions,
    deadline: Option<Instant>,
) -> Result<Result<Option<Vec<ThreadId>>, Fault>, CheckError> {
    with_failing(test, deadline, false, |program, fails| {
        fgvt_tree::scout(program, explore, fails)
    })
}

/// Runs `search` on `test`'s program with a judge of leaves against its spec, each distinct
/// history once: a fault fails unless `violations_only`, a bounded leaf or an unknown verdict
/// does not. A spec that cannot judge a history stops the search (the judge says it fails)
/// and is the error.
fn with_failing<R>(
    test: &TestCase,
    deadline: Option<Instant>,
    violations_only: bool,
    search: impl FnOnce(&fgvt_lang::TestProgram, &mut dyn FnMut(&Leaf) -> bool) -> R,
) -> Result<R, CheckError> {
    let options = CheckOptions {
        deadline,
        ..CheckOptions::default()
    };
    let program = test.program();
    match test.spec_source() {
        SpecSource::Serial(model) => {
            let checker = VerdictCache::new(test.self_spec(model), options);
            with_checker(&program, &checker, violations_only, search)
        }
        SpecSource::Builtin(name) => {
            let checker = VerdictCache::new(builtin(name), options);
            with_checker(&program, &checker, violations_only, search)
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
        LeafKind::Complete | LeafKind::Stuck => match checker.check(&leaf.history) {
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

fn judge_with<S: Spec + Sync>(
    spec: S,
    tree: &Tree,
    options: CheckOptions,
    synthesized: bool,
) -> Result<Judgement, CheckError>
where
    S::State: Send + Sync,
{
    let leaves: Vec<_> = tree.leaves().collect();
    // Check each distinct history once, in parallel; leaves then look their verdict up.
    let histories: HashSet<&History> = leaves
        .iter()
        .filter(|(_, leaf, _)| matches!(leaf.kind, LeafKind::Complete | LeafKind::Stuck))
        .map(|(_, leaf, _)| &leaf.history)
        .collect();
    let past_deadline = || options.deadline.is_some_and(|d| Instant::now() >= d);
    // Once the deadline has passed, a history is not even handed to the checker (whose setup
    // alone costs time on a large tree): it has no verdict. `None` is that missing verdict.
    let outcomes: HashMap<&History, Option<Arc<Outcome>>> = histories
        .par_iter()
        .map(|&h| {
            if past_deadline() {
                return Ok((h, None));
            }
            check(&spec, h, &options).map(|o| (h, Some(Arc::new(o))))
        })
        .collect::<Result<_, CheckError>>()?;

    let mut judgement = Judgement {
        verdicts: HashMap::with_capacity(leaves.len()),
        linearizable: 0,
        not_linearizable: 0,
        faults: 0,
        unknown: 0,
        distinct_histories: outcomes.len(),
        stuck_accepted_by_self: 0,
        spec: spec.name(),
    };
    for (node, leaf, multiplicity) in leaves {
        let verdict = match leaf.kind {
            LeafKind::Fault => LeafVerdict::Fault,
            LeafKind::Bounded => LeafVerdict::Unknown,
            LeafKind::Complete | LeafKind::Stuck => match &outcomes[&leaf.history] {
                None => LeafVerdict::Unknown,
                Some(outcome) => match outcome.verdict {
                    Verdict::Unknown => LeafVerdict::Unknown,
                    Verdict::Linearizable { .. } => {
                        if synthesized && leaf.kind == LeafKind::Stuck {
                            judgement.stuck_accepted_by_self += multiplicity;
                        }
                        LeafVerdict::Linearizable
                    }
                    Verdict::NotLinearizable(_) => LeafVerdict::NotLinearizable(outcome.clone()),
                },
            },
        };
        *match verdict {
            LeafVerdict::Linearizable => &mut judgement.linearizable,
            LeafVerdict::NotLinearizable(_) => &mut judgement.not_linearizable,
            LeafVerdict::Fault => &mut judgement.faults,
            LeafVerdict::Unknown => &mut judgement.unknown,
        } += multiplicity;
        judgement.verdicts.insert(node, verdict);
    }
    Ok(judgement)
}
