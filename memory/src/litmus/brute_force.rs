//! Outcomes by brute force: every complete candidate graph, filtered by the axioms.
//!
//! A candidate graph of a straight-line program is fixed by three choices:
//!
//! 1. which compare-exchanges succeed (a success is an RMW, a failure a load);
//! 2. `rf`: for each read, a store of its location (or its initial store);
//! 3. `mo`: for each location, an order of its stores after the initial store.
//!
//! Given 1 and 2, the values follow in a topological order of `po ∪ rf`; a guess in 1 that the
//! values contradict is dropped. The graph is then built with the plain event-adding methods of
//! [`Execution`] (never the candidate methods) and kept when
//! [`Execution::is_consistent`] accepts it.
//!
//! Two axioms prune the enumeration instead of filtering it afterwards, which changes no
//! result: *no thin air* (an `rf` choice that closes a `po ∪ rf` cycle is not pursued) and
//! *atomicity* (two RMWs never read the same store, and every RMW comes right after the store
//! it read, so `mo` is enumerated as orders of *blocks*: a plain store followed by the chain of
//! RMWs reading it, then the RMW reading that RMW, and so on). Without that, nine `fetch_add`s
//! on one location would be 9⁹ `rf` choices times 9! orders.

use std::collections::BTreeSet;

use super::{Instr, Outcome, Program};
use crate::{Execution, Loc, StoreId, ThreadId, Val};

/// Every outcome of `p` allowed by RC11, from complete candidate graphs filtered by the axioms
/// (see the module docs: every rf and mo choice, filtered by the axioms).
///
/// # Panics
///
/// If `p` is malformed ([`Program::validate`]).
pub fn brute_force(p: &Program) -> BTreeSet<Outcome> {
    enumerate(p).outcomes
}

/// What RC11 says of a program with plain (non-atomic) accesses: whether some consistent
/// execution has a data race (two accesses of different threads to one location, at least one a
/// write and one plain, that happens-before does not order), which makes the whole program's
/// behaviour undefined, and the outcomes of the consistent executions that have none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RaceOutcomes {
    /// Whether some consistent execution has a data race.
    pub racy: bool,
    /// The outcomes of the consistent executions without one.
    pub race_free: BTreeSet<Outcome>,
}

/// [`brute_force`], with every consistent graph also checked for a data race by the
/// definitions (see [`RaceOutcomes`]): plain accesses are in the graph as `Relaxed` ones
/// ([`Instr::as_atomic`]), and a graph races when two conflicting events, one of them plain,
/// are unordered by happens-before.
///
/// # Panics
///
/// If `p` is malformed ([`Program::validate`]).
pub fn brute_force_races(p: &Program) -> RaceOutcomes {
    enumerate(p).races
}

/// Every consistent candidate graph of `p`, enumerated.
fn enumerate(p: &Program) -> Enumeration<'_> {
    p.expect_valid();
    let ops: Vec<Op> = p
        .threads
        .iter()
        .enumerate()
        .flat_map(|(thread, instrs)| {
            instrs.iter().enumerate().map(move |(index, &instr)| Op {
                thread,
                index,
                instr: instr.as_atomic(),
                plain: instr.is_plain(),
                conditional: instrs[..index]
                    .iter()
                    .any(|i| matches!(i, Instr::SkipUnless { .. })),
            })
        })
        // A relaxed fence and a branch make no event.
        .filter(|op| op.instr.makes_event())
        .collect();
    let po_prev = (0..ops.len())
        .map(|i| (0..i).rev().find(|&j| ops[j].thread == ops[i].thread))
        .collect();
    let cases: Vec<usize> = (0..ops.len())
        .filter(|&i| matches!(ops[i].instr, Instr::Cas { .. }))
        .collect();
    let reads = (0..ops.len())
        .filter(|&i| ops[i].instr.reg().is_some())
        .collect();
    let mut e = Enumeration {
        program: p,
        rmw: vec![false; ops.len()],
        rf: vec![None; ops.len()],
        ops,
        po_prev,
        reads,
        outcomes: BTreeSet::new(),
        races: RaceOutcomes::default(),
    };
    for guess in 0..1u64 << cases.len() {
        for (i, op) in e.ops.iter().enumerate() {
            e.rmw[i] = matches!(op.instr, Instr::FetchAdd { .. });
        }
        for (bit, &i) in cases.iter().enumerate() {
            e.rmw[i] = guess >> bit & 1 == 1;
        }
        e.choose_rf(0);
    }
    e
}

/// An instruction that makes an event.
struct Op {
    thread: ThreadId,
    /// Its place among its thread's instructions.
    index: usize,
    /// The instruction as the graph holds it ([`Instr::as_atomic`]).
    instr: Instr,
    /// Whether the program's instruction is a plain access.
    plain: bool,
    /// Whether a branch before it may skip it.
    conditional: bool,
}

/// A store: a location's initial store, or the op that writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    Init(Loc),
    Op(usize),
    /// The read does not run: a branch skips it.
    Skipped,
}

/// The state of the enumeration: the ops, and the choices made so far.
struct Enumeration<'p> {
    program: &'p Program,
    ops: Vec<Op>,
    /// Each op's predecessor in its thread.
    po_prev: Vec<Option<usize>>,
    /// The ops that read (loads, fetch-adds, compare-exchanges).
    reads: Vec<usize>,
    /// Whether each op is an RMW, under the current guess of which compare-exchanges succeed.
    rmw: Vec<bool>,
    /// What each read reads, as chosen so far.
    rf: Vec<Option<Source>>,
    outcomes: BTreeSet<Outcome>,
    races: RaceOutcomes,
}

impl Enumeration<'_> {
    /// Whether op `i` writes under the current guess.
    fn writes(&self, i: usize) -> bool {
        matches!(self.ops[i].instr, Instr::Store { .. }) || self.rmw[i]
    }

    /// Chooses `rf` for reads `k..`, then goes on to values and `mo`.
    fn choose_rf(&mut self, k: usize) {
        let Some(&r) = self.reads.get(k) else {
            self.with_rf();
            return;
        };
        let loc = self.ops[r].instr.loc().expect("a read has a location");
        let skipped = self.ops[r].conditional.then_some(Source::Skipped);
        let stores: Vec<Source> = skipped
            .into_iter()
            .chain(std::iter::once(Source::Init(loc)))
            .chain(
                (0..self.ops.len())
                    .filter(|&j| j != r && self.writes(j) && self.ops[j].instr.loc() == Some(loc))
                    .map(Source::Op),
            )
            .collect();
        for s in stores {
            // Atomicity: no two RMWs read the same store.
            let taken = |u: usize| self.rmw[u] && self.rf[u] == Some(s);
            if s != Source::Skipped && self.rmw[r] && (0..self.ops.len()).any(taken) {
                continue;
            }
            // No thin air: `s` must not come after `r` in po ∪ rf.
            if matches!(s, Source::Op(j) if self.reaches(r, j)) {
                continue;
            }
            self.rf[r] = Some(s);
            self.choose_rf(k + 1);
            self.rf[r] = None;
        }
    }

    /// Whether `to` is reachable from `from` by `po ∪ rf` edges chosen so far.
    fn reaches(&self, from: usize, to: usize) -> bool {
        let mut seen = vec![false; self.ops.len()];
        let mut stack = vec![from];
        while let Some(a) = stack.pop() {
            if a == to {
                return true;
            }
            if std::mem::replace(&mut seen[a], true) {
                continue;
            }
            for b in 0..self.ops.len() {
                if self.po_prev[b] == Some(a) || self.rf[b] == Some(Source::Op(a)) {
                    stack.push(b);
                }
            }
        }
        false
    }

    /// With `rf` chosen: an order of the ops, the compare-exchange guesses checked against the
    /// values, then every `mo`.
    fn with_rf(&mut self) {
        let n = self.ops.len();
        // A topological order of po ∪ rf (acyclic: choose_rf kept it so).
        let mut order = Vec::with_capacity(n);
        let mut placed = vec![false; n];
        while order.len() < n {
            let next = (0..n)
                .find(|&i| {
                    !placed[i]
                        && self.po_prev[i].is_none_or(|j| placed[j])
                        && !matches!(self.rf[i], Some(Source::Op(j)) if !placed[j])
                })
                .expect("po ∪ rf is acyclic");
            placed[next] = true;
            order.push(next);
        }
        // Which ops run (a branch skips the others), and the values, to check the guesses of
        // which compare-exchanges succeed. A skipped op reads nothing and succeeds at nothing:
        // one guess of each stands for it.
        let p = self.program;
        let mut written: Vec<Val> = vec![0; n];
        let mut runs = vec![false; n];
        let mut next = vec![0; p.threads.len()];
        let mut registers = p.initial_registers();
        for &i in &order {
            let Op {
                thread: t, index, ..
            } = self.ops[i];
            while next[t] < index {
                next[t] = p.next_instruction(t, next[t], &registers[t]);
            }
            let reads = self.ops[i].instr.reg().is_some();
            if next[t] > index {
                if (reads && self.rf[i] != Some(Source::Skipped))
                    || (self.rmw[i] && matches!(self.ops[i].instr, Instr::Cas { .. }))
                {
                    return;
                }
                continue;
            }
            next[t] = index + 1;
            runs[i] = true;
            let read = match self.rf[i] {
                Some(Source::Init(l)) => p.locations[l as usize],
                Some(Source::Op(j)) if runs[j] => written[j],
                Some(Source::Op(_) | Source::Skipped) => return,
                None => 0,
            };
            if let Some(reg) = self.ops[i].instr.reg() {
                registers[t][reg] = read;
            }
            written[i] = match self.ops[i].instr {
                Instr::Store { value, .. } => value,
                Instr::FetchAdd { add, .. } => read.wrapping_add(add),
                Instr::Cas { expected, new, .. } => {
                    if (read == expected) != self.rmw[i] {
                        return;
                    }
                    new
                }
                Instr::Load { .. } | Instr::Fence(_) => 0,
                Instr::Read { .. } | Instr::Write { .. } | Instr::SkipUnless { .. } => {
                    unreachable!("ops hold as_atomic, and make events")
                }
            };
        }
        // Per location, the blocks `mo` orders: a plain store and the chain of RMWs after it.
        let chain = |head: Source| {
            let mut block = vec![head];
            while let Some(u) = (0..n).find(|&u| {
                self.rmw[u] && self.rf[u] == Some(*block.last().expect("a block has a head"))
            }) {
                block.push(Source::Op(u));
            }
            block
        };
        let blocks: Vec<(Vec<Source>, Vec<Vec<Source>>)> = (0..self.program.locations.len())
            .map(|l| {
                let loc = l as Loc;
                let heads = (0..n).filter(|&j| {
                    runs[j]
                        && matches!(self.ops[j].instr, Instr::Store { .. })
                        && self.ops[j].instr.loc() == Some(loc)
                });
                (
                    chain(Source::Init(loc)),
                    heads.map(|j| chain(Source::Op(j))).collect(),
                )
            })
            .collect();
        let mut mo = Vec::with_capacity(blocks.len());
        let order: Vec<usize> = order.into_iter().filter(|&i| runs[i]).collect();
        self.choose_mo(&order, &blocks, &mut mo);
    }

    /// Chooses `mo` for the locations after those in `mo`, then builds and checks the graph.
    fn choose_mo(
        &mut self,
        order: &[usize],
        blocks: &[(Vec<Source>, Vec<Vec<Source>>)],
        mo: &mut Vec<Vec<Source>>,
    ) {
        let Some((initial, rest)) = blocks.get(mo.len()) else {
            if let Some((outcome, racy)) = self.build(order, mo) {
                self.races.racy |= racy;
                if !racy {
                    self.races.race_free.insert(outcome.clone());
                }
                self.outcomes.insert(outcome);
            }
            return;
        };
        for permutation in permutations(rest.len()) {
            let mut stores = initial.clone();
            for b in permutation {
                stores.extend_from_slice(&rest[b]);
            }
            mo.push(stores);
            self.choose_mo(order, blocks, mo);
            mo.pop();
        }
    }

    /// Builds the graph with the plain event-adding methods, adding ops in `order` (the ops
    /// that run), and returns its outcome if it is consistent, with whether it has a data
    /// race.
    fn build(&self, order: &[usize], mo: &[Vec<Source>]) -> Option<(Outcome, bool)> {
        let p = self.program;
        let mut x = Execution::new(p.threads.len());
        for &initial in &p.locations {
            x.add_location(initial);
        }
        // Each writing op's place in its location's final mo.
        let mut place = vec![0; self.ops.len()];
        for stores in mo {
            for (k, s) in stores.iter().enumerate() {
                if let Source::Op(j) = *s {
                    place[j] = k;
                }
            }
        }
        let mut added: Vec<Vec<usize>> = vec![vec![0]; p.locations.len()];
        let mut ids: Vec<Option<StoreId>> = vec![None; self.ops.len()];
        let id = |ids: &[Option<StoreId>], x: &Execution, s: Option<Source>| match s
            .expect("a read has a store")
        {
            Source::Init(l) => x.initial(l),
            Source::Op(j) => ids[j].expect("po ∪ rf order adds stores before their readers"),
            Source::Skipped => unreachable!("only ops that run are built"),
        };
        let mut registers = p.initial_registers();
        // The events of plain accesses.
        let mut plain = vec![false; x.len() + self.ops.len()];
        for &i in order {
            let Op {
                thread: t, instr, ..
            } = self.ops[i];
            plain[x.len()] = self.ops[i].plain;
            let from = self.rf[i];
            match instr {
                Instr::Load { loc, order, reg } => {
                    registers[t][reg] = x.load(t, loc, order, id(&ids, &x, from))
                }
                Instr::Store { loc, value, order } => {
                    // Right after the stores added so far that come before it in the final mo.
                    let before = added[loc as usize]
                        .iter()
                        .filter(|&&k| k < place[i])
                        .count();
                    ids[i] = Some(x.store(t, loc, value, order, before - 1));
                }
                Instr::FetchAdd {
                    loc,
                    add,
                    order,
                    reg,
                } => {
                    let (old, store) =
                        x.rmw(t, loc, order, id(&ids, &x, from), |v| v.wrapping_add(add));
                    (registers[t][reg], ids[i]) = (old, Some(store));
                }
                Instr::Cas {
                    loc,
                    new,
                    success,
                    failure,
                    reg,
                    ..
                } => {
                    if self.rmw[i] {
                        let (old, store) = x.rmw(t, loc, success, id(&ids, &x, from), |_| new);
                        (registers[t][reg], ids[i]) = (old, Some(store));
                    } else {
                        registers[t][reg] = x.load(t, loc, failure, id(&ids, &x, from));
                    }
                }
                Instr::Fence(order) => x.fence(t, order),
                Instr::Read { .. } | Instr::Write { .. } | Instr::SkipUnless { .. } => {
                    unreachable!("ops hold as_atomic, and make events")
                }
            }
            if let Some(loc) = instr.loc().filter(|_| ids[i].is_some()) {
                added[loc as usize].push(place[i]);
            }
        }
        debug_assert!(
            (0..self.ops.len()).all(|i| ids[i].is_none_or(|s| x.mo_position(s) == place[i])),
            "the graph built has the modification order chosen"
        );
        if !x.is_consistent() {
            return None;
        }
        let racy = x.has_data_race(|e| plain[e]);
        let outcome = Outcome {
            registers,
            memory: (0..p.locations.len())
                .map(|l| x.value(x.latest(l as Loc)))
                .collect(),
        };
        Some((outcome, racy))
    }
}

/// Every permutation of `0..n`.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut all = Vec::new();
    for shorter in permutations(n - 1) {
        for at in 0..n {
            let mut p = shorter.clone();
            p.insert(at, n - 1);
            all.push(p);
        }
    }
    all
}
