//! Outcomes by running the program: every interleaving, every offered choice.
//!
//! This is how a runtime uses the crate. A state is an execution, each thread's next
//! instruction and its registers; from it, each thread with instructions left takes its next
//! one, once per choice the candidate methods offer. The search is depth-first and visits each
//! distinct state once: interleavings that reorder independent events reach the same graph,
//! which [canonical equality](crate::canonical) recognizes.
//!
//! It asserts what the candidate methods promise on the consistent executions they build:
//! every list is non-empty, its last entry is the mo-latest store (the end of mo), and every
//! complete execution is consistent.

use std::collections::BTreeSet;

use super::{Instr, Outcome, Program};
use crate::{Execution, Loc, Numbered, ThreadId, Val};

/// How [`operational_with`] runs a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OperationalOptions {
    /// Whether the candidate methods take the all-`SeqCst` shortcut
    /// ([`Execution::set_seq_cst_shortcut`]); on by default. The outcomes are the same either
    /// way (the tests check it); off, more states are visited.
    pub seq_cst_shortcut: bool,
    /// Which states are one: equal graphs (the default), or equal
    /// [future keys](crate::Execution::future_key), as a runtime that merges states does.
    pub merge: Merge,
}

/// When [`operational_with`] takes two states for one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Merge {
    /// When their execution graphs are equal ([module `canonical`](crate::canonical)).
    #[default]
    Graph,
    /// When their [future keys](crate::Execution::future_key) are equal (with
    /// [`Numbered`](crate::Numbered) names), and so are the threads' next instructions and
    /// registers: the first state met stands for the others.
    Future,
}

impl Default for OperationalOptions {
    fn default() -> OperationalOptions {
        OperationalOptions {
            seq_cst_shortcut: true,
            merge: Merge::Graph,
        }
    }
}

/// Every outcome of `p` reached by running it through the candidate methods, with the default
/// options (see the module docs: every interleaving, every offered choice).
///
/// # Panics
///
/// If `p` is malformed ([`Program::validate`]), or a candidate method breaks its promise
/// (an empty list, a list without the mo-latest store, an inconsistent complete execution).
pub fn operational(p: &Program) -> BTreeSet<Outcome> {
    operational_with(p, OperationalOptions::default())
}

/// Every outcome of `p` reached by running it through the candidate methods.
///
/// # Panics
///
/// As [`operational`].
pub fn operational_with(p: &Program, options: OperationalOptions) -> BTreeSet<Outcome> {
    p.expect_valid();
    let mut execution = Execution::new(p.threads.len());
    execution.set_seq_cst_shortcut(options.seq_cst_shortcut);
    // Every event below is a choice the candidate methods offered.
    execution.promise_offered_choices(true);
    for &initial in &p.locations {
        execution.add_location(initial);
    }
    let start = State {
        execution,
        next: vec![0; p.threads.len()],
        registers: p.initial_registers(),
    };
    let mut seen = foldhash::HashSet::default();
    let mut seen_futures = foldhash::HashSet::default();
    let mut stack = vec![start];
    let mut outcomes = BTreeSet::new();
    while let Some(state) = stack.pop() {
        let new = match options.merge {
            Merge::Graph => !seen.contains(&state),
            Merge::Future => {
                let live = |t: ThreadId| state.next[t] < p.threads[t].len();
                let key = state.execution.future_key(&Numbered, live);
                seen_futures.insert((key, state.next.clone(), state.registers.clone()))
            }
        };
        if !new {
            continue;
        }
        let mut finished = true;
        for (t, instrs) in p.threads.iter().enumerate() {
            if let Some(&instr) = instrs.get(state.next[t]) {
                finished = false;
                stack.extend(state.successors(t, instr));
            }
        }
        if finished {
            assert!(
                state.execution.is_consistent(),
                "a complete execution is inconsistent: {:?}",
                state.execution
            );
            let x = &state.execution;
            let memory = (0..p.locations.len())
                .map(|l| x.value(x.latest(l as Loc)))
                .collect();
            outcomes.insert(Outcome {
                registers: state.registers.clone(),
                memory,
            });
        }
        if options.merge == Merge::Graph {
            seen.insert(state);
        }
    }
    outcomes
}

/// Every state [`operational`] visits (merging equal graphs): its execution, and each
/// thread's next instruction. The tests of [future keys](crate::future) compare the choices
/// of states whose keys are equal.
///
/// # Panics
///
/// As [`operational`].
pub fn reachable(p: &Program) -> Vec<(Execution, Vec<usize>)> {
    p.expect_valid();
    let mut execution = Execution::new(p.threads.len());
    for &initial in &p.locations {
        execution.add_location(initial);
    }
    let start = State {
        execution,
        next: vec![0; p.threads.len()],
        registers: p.initial_registers(),
    };
    let mut seen = foldhash::HashSet::default();
    let mut stack = vec![start];
    let mut states = Vec::new();
    while let Some(state) = stack.pop() {
        if seen.contains(&state) {
            continue;
        }
        for (t, instrs) in p.threads.iter().enumerate() {
            if let Some(&instr) = instrs.get(state.next[t]) {
                stack.extend(state.successors(t, instr));
            }
        }
        states.push((state.execution.clone(), state.next.clone()));
        seen.insert(state);
    }
    states
}

/// A point of a run: the execution so far, each thread's next instruction, the registers.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct State {
    execution: Execution,
    next: Vec<usize>,
    registers: Vec<Vec<Val>>,
}

impl State {
    /// The states after thread `t` runs `instr`, one per choice.
    fn successors(&self, t: ThreadId, instr: Instr) -> Vec<State> {
        let x = &self.execution;
        let step = |apply: &dyn Fn(&mut Execution) -> Option<Val>| {
            let mut next = self.clone();
            let read = apply(&mut next.execution);
            if let (Some(value), Some(reg)) = (read, instr.reg()) {
                next.registers[t][reg] = value;
            }
            next.next[t] += 1;
            next
        };
        let expect_choices = |len: usize, latest_last: bool| {
            assert!(len > 0, "no choice for T{t}'s {instr} in {x:?}");
            assert!(
                latest_last,
                "the mo-latest store is not the last choice for T{t}'s {instr} in {x:?}"
            );
        };
        if let Instr::SkipUnless { reg, value, skip } = instr {
            let mut next = self.clone();
            next.next[t] += 1 + if self.registers[t][reg] == value {
                0
            } else {
                skip
            };
            return vec![next];
        }
        match instr.as_atomic() {
            Instr::Load { loc, order, .. } => {
                let choices = x.load_candidates(t, loc, order);
                expect_choices(choices.len(), choices.last() == Some(&x.latest(loc)));
                choices
                    .into_iter()
                    .map(|s| step(&|x| Some(x.load(t, loc, order, s))))
                    .collect()
            }
            Instr::Store { loc, value, order } => {
                let choices = x.store_placements(t, loc, order);
                let end = x.modification_order(loc).len() - 1;
                expect_choices(choices.len(), choices.last() == Some(&end));
                choices
                    .into_iter()
                    .map(|at| {
                        step(&|x| {
                            x.store(t, loc, value, order, at);
                            None
                        })
                    })
                    .collect()
            }
            Instr::FetchAdd {
                loc, add, order, ..
            } => {
                let choices = x.rmw_candidates(t, loc, order);
                expect_choices(choices.len(), choices.last() == Some(&x.latest(loc)));
                choices
                    .into_iter()
                    .map(|s| step(&|x| Some(x.rmw(t, loc, order, s, |v| v.wrapping_add(add)).0)))
                    .collect()
            }
            Instr::Cas {
                loc,
                expected,
                new,
                success,
                failure,
                ..
            } => {
                let choices = x.cas_choices(t, loc, expected, success, failure);
                expect_choices(
                    choices.len(),
                    choices.last().map(|c| c.from) == Some(x.latest(loc)),
                );
                choices
                    .into_iter()
                    .map(|c| step(&|x| Some(x.cas(t, loc, c, new, success, failure))))
                    .collect()
            }
            Instr::Fence(order) => vec![step(&|x| {
                x.fence(t, order);
                None
            })],
            Instr::Read { .. } | Instr::Write { .. } | Instr::SkipUnless { .. } => {
                unreachable!("as_atomic maps them, and a skip is taken above")
            }
        }
    }
}
