//! Litmus tests: tiny straight-line programs, and the set of outcomes RC11 allows them.
//!
//! A [`Program`] is a few threads of [`Instr`]uctions on a few locations, with no branches. Its
//! [`Outcome`]s are what can be observed at the end: every thread's registers and every
//! location's final value (the value of the mo-last store). Two functions list them, in two
//! independent ways:
//!
//! * [`brute_force`] enumerates *complete* candidate graphs straight from the axioms: every
//!   choice of `rf` for every read and every modification order of every location, computes
//!   the values, and keeps the graphs [`Execution::is_consistent`](crate::Execution::is_consistent)
//!   accepts. It never asks the candidate methods anything.
//! * [`operational`] runs the program the way a runtime would: every interleaving of the
//!   threads, and at each access every choice the candidate methods offer. It asserts that
//!   there always is one (extensibility).
//!
//! The crate's tests check that the two agree on random programs, which tests the candidate
//! methods against the axioms, and that both agree with the literature on the classic tests
//! ([`mp`], [`sb`], [`lb`], [`iriw`], [`two_plus_two_w`] and fenced variants), each of which
//! comes with the [`Pattern`] of its *weak* outcome, the one sequential consistency forbids.
//!
//! Programs may also access plain (non-atomic) memory ([`Instr::Read`], [`Instr::Write`]) and
//! branch ([`Instr::SkipUnless`]). [`brute_force_races`] then says whether some consistent
//! execution has a data race, and what the race-free ones give: the reference a runtime's
//! race check is tested against, on the tests of [module `races`](races) (message passing with
//! plain data, a node published by a compare-exchange, a cell behind a lock) and on random
//! programs.
//!
//! ```
//! use fgvt_memory::litmus::{self, MP_WEAK};
//! use fgvt_memory::Order::{Acquire, Relaxed, Release};
//!
//! // Relaxed message passing lets the reader see the flag and still the old data...
//! let relaxed = litmus::mp(Relaxed, Relaxed, Relaxed, Relaxed);
//! assert!(MP_WEAK.allowed_in(&litmus::operational(&relaxed)));
//! // ...a release flag store read by an acquire load does not.
//! let synchronized = litmus::mp(Relaxed, Release, Acquire, Relaxed);
//! assert!(!MP_WEAK.allowed_in(&litmus::brute_force(&synchronized)));
//! ```

mod brute_force;
mod classic;
mod operational;
pub mod races;

use std::collections::BTreeSet;
use std::fmt;

use crate::{AccessKind, Loc, Order, ThreadId, Val};

pub use brute_force::{brute_force, brute_force_races, RaceOutcomes};
pub use classic::{
    iriw, iriw_fenced, lb, mp, mp_fenced, sb, sb_fenced, two_plus_two_w, IRIW_WEAK, LB_WEAK,
    MP_WEAK, SB_WEAK, TWO_PLUS_TWO_W_WEAK,
};
pub use operational::{operational, operational_with, reachable, Merge, OperationalOptions};

/// A register of a thread, numbered from 0. Registers start at 0.
pub type Reg = usize;

/// A straight-line concurrent program.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Program {
    /// The initial value of each location; location `i` is `locations[i]`.
    pub locations: Vec<Val>,
    /// Each thread's instructions, in program order.
    pub threads: Vec<Vec<Instr>>,
}

/// One instruction of a litmus [`Program`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Instr {
    /// `reg := loc`.
    Load {
        /// The location read.
        loc: Loc,
        /// A load's order: `Relaxed`, `Acquire` or `SeqCst`.
        order: Order,
        /// The register that receives the value.
        reg: Reg,
    },
    /// `loc := value`.
    Store {
        /// The location written.
        loc: Loc,
        /// The value written.
        value: Val,
        /// A store's order: `Relaxed`, `Release` or `SeqCst`.
        order: Order,
    },
    /// `reg := loc; loc := reg + add` as one atomic step (wrapping).
    FetchAdd {
        /// The location updated.
        loc: Loc,
        /// What is added.
        add: Val,
        /// Any order.
        order: Order,
        /// The register that receives the old value.
        reg: Reg,
    },
    /// `reg := loc; if reg == expected { loc := new }` as one atomic step: a strong
    /// compare-exchange, an RMW with `success` when it succeeds, else a load with `failure`.
    Cas {
        /// The location updated.
        loc: Loc,
        /// The value it must hold to be replaced.
        expected: Val,
        /// The value written on success.
        new: Val,
        /// The order of a success (any).
        success: Order,
        /// The order of a failure (a load's).
        failure: Order,
        /// The register that receives the value read.
        reg: Reg,
    },
    /// A fence. A `Relaxed` fence does nothing.
    Fence(Order),
    /// `reg := loc`, a plain (non-atomic) read: what reading an `UnsafeCell`'s content is. A
    /// location read or written plainly is never accessed atomically.
    Read {
        /// The location read.
        loc: Loc,
        /// The register that receives the value.
        reg: Reg,
    },
    /// `loc := value`, a plain (non-atomic) write.
    Write {
        /// The location written.
        loc: Loc,
        /// The value written.
        value: Val,
    },
    /// `if reg != value { skip the next skip instructions }`: a branch of the thread's own,
    /// which makes no event (what a plain read only made once a flag is seen needs).
    SkipUnless {
        /// The register tested.
        reg: Reg,
        /// The value it must hold for the next instructions to run.
        value: Val,
        /// How many instructions are skipped when it does not.
        skip: usize,
    },
}

/// What one run of a [`Program`] leaves: every thread's registers and every location's value.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Outcome {
    /// `registers[t][r]`: thread `t`'s register `r` (each thread has as many registers as its
    /// highest register number plus one; unwritten ones are 0).
    pub registers: Vec<Vec<Val>>,
    /// `memory[l]`: the value of location `l`'s mo-last store.
    pub memory: Vec<Val>,
}

impl Outcome {
    /// Thread `thread`'s register `reg` (0 if the thread has no such register).
    pub fn register(&self, thread: ThreadId, reg: Reg) -> Val {
        self.registers
            .get(thread)
            .and_then(|r| r.get(reg))
            .copied()
            .unwrap_or(0)
    }
}

/// Part of an outcome: some registers' and some locations' values. It describes a litmus
/// test's weak outcome, and matches every outcome with those values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pattern {
    /// `(thread, register, value)` triples.
    pub registers: &'static [(ThreadId, Reg, Val)],
    /// `(location, final value)` pairs.
    pub memory: &'static [(Loc, Val)],
}

impl Pattern {
    /// Whether `outcome` has all the values of the pattern.
    pub fn matches(&self, outcome: &Outcome) -> bool {
        self.registers
            .iter()
            .all(|&(t, r, v)| outcome.register(t, r) == v)
            && self
                .memory
                .iter()
                .all(|&(l, v)| outcome.memory.get(l as usize) == Some(&v))
    }

    /// Whether some outcome of the set matches.
    pub fn allowed_in(&self, outcomes: &BTreeSet<Outcome>) -> bool {
        outcomes.iter().any(|o| self.matches(o))
    }
}

/// Why a [`Program`] cannot run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProgramError {
    /// An instruction names a location the program does not have.
    #[error("thread {thread}, instruction {index}: location {loc} does not exist")]
    UnknownLocation {
        /// The thread of the instruction.
        thread: ThreadId,
        /// Its place in the thread.
        index: usize,
        /// The location named.
        loc: Loc,
    },
    /// An instruction's order is not one its kind of access may have.
    #[error("thread {thread}, instruction {index}: a {kind} cannot be {order}")]
    InvalidOrder {
        /// The thread of the instruction.
        thread: ThreadId,
        /// Its place in the thread.
        index: usize,
        /// What the access does.
        kind: AccessKind,
        /// The order it was given.
        order: Order,
    },
    /// A location is accessed both plainly and atomically.
    #[error("thread {thread}, instruction {index}: location {loc} is accessed plainly elsewhere")]
    MixedLocation {
        /// The thread of the atomic access.
        thread: ThreadId,
        /// Its place in the thread.
        index: usize,
        /// The location.
        loc: Loc,
    },
}

impl Instr {
    /// The location accessed, if any.
    pub fn loc(&self) -> Option<Loc> {
        match *self {
            Instr::Load { loc, .. }
            | Instr::Store { loc, .. }
            | Instr::FetchAdd { loc, .. }
            | Instr::Cas { loc, .. }
            | Instr::Read { loc, .. }
            | Instr::Write { loc, .. } => Some(loc),
            Instr::Fence(_) | Instr::SkipUnless { .. } => None,
        }
    }

    /// The register written, if any.
    pub fn reg(&self) -> Option<Reg> {
        match *self {
            Instr::Load { reg, .. }
            | Instr::FetchAdd { reg, .. }
            | Instr::Cas { reg, .. }
            | Instr::Read { reg, .. } => Some(reg),
            Instr::Store { .. }
            | Instr::Fence(_)
            | Instr::Write { .. }
            | Instr::SkipUnless { .. } => None,
        }
    }

    /// Each order of the instruction with the kind of access it is for.
    fn orders(&self) -> Vec<(AccessKind, Order)> {
        match *self {
            Instr::Load { order, .. } => vec![(AccessKind::Load, order)],
            Instr::Store { order, .. } => vec![(AccessKind::Store, order)],
            Instr::FetchAdd { order, .. } => vec![(AccessKind::Rmw, order)],
            Instr::Cas {
                success, failure, ..
            } => vec![(AccessKind::Rmw, success), (AccessKind::Load, failure)],
            Instr::Fence(order) => vec![(AccessKind::Fence, order)],
            Instr::Read { .. } | Instr::Write { .. } | Instr::SkipUnless { .. } => Vec::new(),
        }
    }

    /// Whether it makes an event of the graph (a `Relaxed` fence and a branch do not).
    pub fn makes_event(&self) -> bool {
        !matches!(
            self,
            Instr::Fence(Order::Relaxed) | Instr::SkipUnless { .. }
        )
    }

    /// Whether it is a plain (non-atomic) access.
    pub fn is_plain(&self) -> bool {
        matches!(self, Instr::Read { .. } | Instr::Write { .. })
    }

    /// The instruction as the execution graph holds it: a plain read as a `Relaxed` load, a
    /// plain write as a `Relaxed` store (which order nothing either, and need not: in an
    /// execution without a data race every plain read reads the write that happens before it
    /// last), anything else as it is.
    pub fn as_atomic(self) -> Instr {
        match self {
            Instr::Read { loc, reg } => Instr::Load {
                loc,
                order: Order::Relaxed,
                reg,
            },
            Instr::Write { loc, value } => Instr::Store {
                loc,
                value,
                order: Order::Relaxed,
            },
            other => other,
        }
    }
}

impl Program {
    /// Checks that every instruction names an existing location and carries orders its kind
    /// of access may have.
    pub fn validate(&self) -> Result<(), ProgramError> {
        for (thread, instrs) in self.threads.iter().enumerate() {
            for (index, instr) in instrs.iter().enumerate() {
                if let Some(loc) = instr.loc().filter(|&l| l as usize >= self.locations.len()) {
                    return Err(ProgramError::UnknownLocation { thread, index, loc });
                }
                let plain_elsewhere = |loc: Loc| {
                    self.threads
                        .iter()
                        .flatten()
                        .any(|i| i.is_plain() && i.loc() == Some(loc))
                };
                if let Some(loc) = instr
                    .loc()
                    .filter(|&l| !instr.is_plain() && plain_elsewhere(l))
                {
                    return Err(ProgramError::MixedLocation { thread, index, loc });
                }
                for (kind, order) in instr.orders() {
                    if !order.is_valid_for(kind) {
                        return Err(ProgramError::InvalidOrder {
                            thread,
                            index,
                            kind,
                            order,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// Every thread's registers, all 0: the registers an outcome of this program has.
    pub fn initial_registers(&self) -> Vec<Vec<Val>> {
        self.threads
            .iter()
            .map(|instrs| {
                vec![
                    0;
                    instrs
                        .iter()
                        .filter_map(|i| match *i {
                            Instr::SkipUnless { reg, .. } => Some(reg),
                            _ => i.reg(),
                        })
                        .max()
                        .map_or(0, |r| r + 1)
                ]
            })
            .collect()
    }

    /// Where thread `thread` goes after its instruction `at`, given its `registers`: the next
    /// instruction, or past the ones a [`Instr::SkipUnless`] skips.
    pub fn next_instruction(&self, thread: ThreadId, at: usize, registers: &[Val]) -> usize {
        match self.threads[thread][at] {
            Instr::SkipUnless { reg, value, skip } if registers[reg] != value => at + 1 + skip,
            _ => at + 1,
        }
    }

    /// Panics with the error if the program is malformed: the litmus runners' contract.
    fn expect_valid(&self) {
        if let Err(error) = self.validate() {
            panic!("malformed litmus program: {error}");
        }
    }
}

impl fmt::Display for Instr {
    /// `r0 := x1 (Acquire)`, `x0 := 1 (Release)`, `r0 := fetch_add(x0, 1) (Relaxed)`,
    /// `r0 := cas(x0, 0 → 1) (SeqCst/Relaxed)`, `fence(SeqCst)`, `r0 := x2 (plain)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Instr::Load { loc, order, reg } => write!(f, "r{reg} := x{loc} ({order})"),
            Instr::Store { loc, value, order } => write!(f, "x{loc} := {value} ({order})"),
            Instr::FetchAdd {
                loc,
                add,
                order,
                reg,
            } => write!(f, "r{reg} := fetch_add(x{loc}, {add}) ({order})"),
            Instr::Cas {
                loc,
                expected,
                new,
                success,
                failure,
                reg,
            } => {
                write!(
                    f,
                    "r{reg} := cas(x{loc}, {expected} → {new}) ({success}/{failure})"
                )
            }
            Instr::Fence(order) => write!(f, "fence({order})"),
            Instr::Read { loc, reg } => write!(f, "r{reg} := x{loc} (plain)"),
            Instr::Write { loc, value } => write!(f, "x{loc} := {value} (plain)"),
            Instr::SkipUnless { reg, value, skip } => {
                write!(f, "if r{reg} != {value} skip {skip}")
            }
        }
    }
}

impl fmt::Display for Program {
    /// The initial values, then one line per thread.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let init: Vec<String> = self
            .locations
            .iter()
            .enumerate()
            .map(|(l, v)| format!("x{l} = {v}"))
            .collect();
        write!(f, "{}", init.join(", "))?;
        for (t, instrs) in self.threads.iter().enumerate() {
            let line: Vec<String> = instrs.iter().map(Instr::to_string).collect();
            write!(f, "\nT{t}: {}", line.join("; "))?;
        }
        Ok(())
    }
}
