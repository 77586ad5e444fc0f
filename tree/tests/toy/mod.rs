//! A toy program language for the explorer's tests: threads of operations of instructions,
//! each instruction one shared event; small enough to generate at random and to explore by
//! brute force. Shared by the tree's and the labeling's tests (`#[path]`-included there).
#![allow(dead_code)] // each test file uses its own part

use fgvt_tree::{
    Call, Event, EventKind, ExploreOptions, Fault, Footprint, History, Program, Readiness, Span,
    Step, Value,
};
use proptest::prelude::*;

/// One instruction of a toy thread; every instruction is one shared event.
#[derive(Clone, Debug)]
pub enum Instr {
    Read(usize),
    Write(usize, i64),
    /// Reads the variable and stays at this instruction until it holds the value.
    SpinUntil(usize, i64),
    /// Blocks while the variable is non-zero, then sets it to 1.
    Acquire(usize),
    Release(usize),
    /// Loops forever incrementing a local counter: never touches shared memory again.
    LocalLoop,
    /// Adds 1 to the variable by a retry loop of two steps (a compare-and-swap loop): a read,
    /// then a write if the variable still holds what was read, else back to the read. Each
    /// turn that fails writes nothing and leaves the thread where the turn began
    /// ([`Program::turn_ended`]). The operation's results get the value replaced.
    CasAdd(usize),
    /// Waits for the variable to hold the value by a retry loop of two steps: a read, then a
    /// local check. A turn whose read saw another value writes nothing and ends at its check,
    /// back where it began ([`Program::turn_ended`]), though no other thread need have moved.
    Await(usize, i64),
}

/// Threads, each a list of operations, each a list of instructions.
#[derive(Clone, Debug)]
pub struct Toy {
    /// Per thread, its operations, each a list of instructions.
    pub threads: Vec<Vec<Vec<Instr>>>,
    /// Shared variables, all 0 at first.
    pub vars: usize,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct State {
    pub vars: Vec<i64>,
    /// Per thread: (operation, instruction, values read so far in the operation, started).
    pub pcs: Vec<(usize, usize, Vec<i64>, bool)>,
    /// Per thread, in a [`Instr::CasAdd`] or [`Instr::Await`] turn: the value its read saw.
    pub turns: Vec<Option<i64>>,
    /// Whether the step here ended a [`Instr::CasAdd`] or [`Instr::Await`] turn that failed.
    pub failed_turn: bool,
}

impl Program for Toy {
    type State = State;

    fn threads(&self) -> usize {
        self.threads.len()
    }

    fn initial_state(&self) -> Result<(State, History), Fault> {
        let state = State {
            vars: vec![0; self.vars],
            pcs: vec![(0, 0, vec![], false); self.threads.len()],
            turns: vec![None; self.threads.len()],
            failed_turn: false,
        };
        Ok((state, History::new()))
    }

    fn step(&self, s: &State, t: usize) -> Step<State> {
        let (op, pc, reads, started) = &s.pcs[t];
        let Some(instrs) = self.threads[t].get(*op) else {
            return Step::Done;
        };
        let mut next = s.clone();
        next.failed_turn = false;
        let call = (!started).then(|| Call::new(format!("op{op}"), vec![]));
        let mut reads = reads.clone();
        let mut new_pc = pc + 1;
        let (kind, location, footprint) = match instrs.get(*pc) {
            None => (EventKind::Local, String::new(), Footprint::Nothing),
            Some(Instr::Read(v)) => {
                reads.push(s.vars[*v]);
                (
                    EventKind::Read,
                    format!("v{v}"),
                    Footprint::Reads(*v as u64),
                )
            }
            Some(Instr::Write(v, x)) => {
                next.vars[*v] = *x;
                (
                    EventKind::Write,
                    format!("v{v}"),
                    Footprint::Writes(*v as u64),
                )
            }
            Some(Instr::SpinUntil(v, x)) => {
                if s.vars[*v] != *x {
                    new_pc = *pc;
                }
                (
                    EventKind::Read,
                    format!("v{v}"),
                    Footprint::Reads(*v as u64),
                )
            }
            Some(Instr::Acquire(v)) => {
                if s.vars[*v] != 0 {
                    return Step::Blocked;
                }
                next.vars[*v] = 1;
                (
                    EventKind::Lock,
                    format!("v{v}"),
                    Footprint::Writes(*v as u64),
                )
            }
            Some(Instr::Release(v)) => {
                next.vars[*v] = 0;
                (
                    EventKind::Unlock,
                    format!("v{v}"),
                    Footprint::Writes(*v as u64),
                )
            }
            Some(Instr::CasAdd(v)) => match s.turns[t] {
                None => {
                    new_pc = *pc;
                    begin_turn(&mut next, s, t, *v)
                }
                Some(seen) => {
                    next.turns[t] = None;
                    let success = s.vars[*v] == seen;
                    if success {
                        next.vars[*v] = seen + 1;
                        reads.push(seen);
                    } else {
                        new_pc = *pc;
                        next.failed_turn = true;
                    }
                    let footprint = if success {
                        Footprint::Writes(*v as u64)
                    } else {
                        Footprint::Reads(*v as u64)
                    };
                    (EventKind::Cas { success }, format!("v{v}"), footprint)
                }
            },
            Some(Instr::Await(v, x)) => match s.turns[t] {
                None => {
                    new_pc = *pc;
                    begin_turn(&mut next, s, t, *v)
                }
                Some(seen) => {
                    next.turns[t] = None;
                    if seen != *x {
                        new_pc = *pc;
                        next.failed_turn = true;
                    }
                    (EventKind::Local, String::new(), Footprint::Nothing)
                }
            },
            Some(Instr::LocalLoop) => {
                return Step::Bounded {
                    reason: "local loop".into(),
                }
            }
        };
        let ret = (new_pc >= instrs.len())
            .then(|| Value::Tuple(reads.iter().map(|r| Value::Int(*r)).collect()));
        if ret.is_some() {
            next.pcs[t] = (op + 1, 0, vec![], false);
        } else {
            next.pcs[t] = (*op, new_pc, reads, true);
        }
        let event = Event {
            thread: t,
            op_index: *op,
            op: format!("op{op}"),
            kind,
            location,
            value: String::new(),
            span: Span::default(),
            call,
            ret,
            order: None,
            memory: None,
            seen: None,
            footprint,
        };
        Step::Moved {
            state: next,
            event: event.into(),
        }
    }

    fn readiness(&self, s: &State, t: usize) -> Readiness {
        let (op, pc, ..) = &s.pcs[t];
        let Some(instrs) = self.threads[t].get(*op) else {
            return Readiness::Done;
        };
        match instrs.get(*pc) {
            Some(Instr::Acquire(v)) if s.vars[*v] != 0 => {
                Readiness::Blocked(Footprint::Writes(*v as u64))
            }
            _ => Readiness::Ready,
        }
    }

    fn turn_ended(&self, s: &State) -> Option<fgvt_tree::QuietTurn> {
        s.failed_turn.then_some(fgvt_tree::QuietTurn {
            steps: 2,
            synchronized: false,
        })
    }

    fn finish(&self, _: &State) -> Result<History, Fault> {
        Ok(History::new())
    }

    fn blocked_calls(&self, s: &State) -> Vec<(usize, Call)> {
        s.pcs
            .iter()
            .enumerate()
            .filter(|(t, (op, _, _, started))| !started && *op < self.threads[*t].len())
            .map(|(t, (op, ..))| (t, Call::new(format!("op{op}"), vec![])))
            .collect()
    }
}

/// A worker's toy is a copy: it learns nothing the main one must know.
impl fgvt_tree::parallel::Parallel for Toy {
    type Recipe = Toy;
    type Learned = ();

    fn recipe(&self) -> Toy {
        self.clone()
    }

    fn worker(recipe: &Toy) -> Toy {
        recipe.clone()
    }

    fn learned(self) {}

    fn absorb(&self, _: ()) {}
}

/// The first step of a retry loop's turn by thread `t`: a read of variable `v`, whose value
/// the turn keeps.
fn begin_turn(next: &mut State, s: &State, t: usize, v: usize) -> (EventKind, String, Footprint) {
    next.turns[t] = Some(s.vars[v]);
    (EventKind::Read, format!("v{v}"), Footprint::Reads(v as u64))
}

/// The default options, with the runs cut at `bound` preemptions.
pub fn bounded(bound: u32) -> ExploreOptions {
    ExploreOptions {
        max_preemptions: Some(bound),
        ..ExploreOptions::default()
    }
}

pub fn instr() -> impl Strategy<Value = Instr> {
    prop_oneof![
        (0..2usize).prop_map(Instr::Read),
        (0..2usize, 0..2i64).prop_map(|(v, x)| Instr::Write(v, x)),
        (0..2usize, 0..2i64).prop_map(|(v, x)| Instr::SpinUntil(v, x)),
        Just(Instr::Acquire(2)),
        Just(Instr::Release(2)),
    ]
}

pub fn toy_program() -> impl Strategy<Value = Toy> {
    prop::collection::vec(
        prop::collection::vec(prop::collection::vec(instr(), 0..3), 1..3),
        1..=3,
    )
    .prop_map(|threads| Toy { threads, vars: 3 })
}

/// Toys with compare-and-swap retry loops ([`Instr::CasAdd`]) beside reads, writes and a
/// lock: their state graph has no cycle (a turn fails only after another thread's write).
pub fn retrying_toy_program() -> impl Strategy<Value = Toy> {
    let instr = prop_oneof![
        2 => (0..2usize).prop_map(Instr::CasAdd),
        1 => (0..2usize).prop_map(Instr::Read),
        1 => (0..2usize, 0..2i64).prop_map(|(v, x)| Instr::Write(v, x)),
        1 => Just(Instr::Acquire(2)),
        1 => Just(Instr::Release(2)),
    ];
    two_or_three_threads_of(instr)
}

/// Toys with waiting loops ([`Instr::Await`]) beside compare-and-swap loops, reads, writes and
/// a lock: a waiting turn fails alone, and a thread may wait forever.
pub fn waiting_toy_program() -> impl Strategy<Value = Toy> {
    let instr = prop_oneof![
        2 => (0..2usize, 0..2i64).prop_map(|(v, x)| Instr::Await(v, x)),
        1 => (0..2usize).prop_map(Instr::CasAdd),
        1 => (0..2usize).prop_map(Instr::Read),
        2 => (0..2usize, 0..2i64).prop_map(|(v, x)| Instr::Write(v, x)),
        1 => Just(Instr::Acquire(2)),
        1 => Just(Instr::Release(2)),
    ];
    two_or_three_threads_of(instr)
}

/// Toys of two or three threads, each of one or two operations of one or two of `instr`'s
/// instructions, on three variables.
fn two_or_three_threads_of(instr: impl Strategy<Value = Instr>) -> impl Strategy<Value = Toy> {
    prop::collection::vec(
        prop::collection::vec(prop::collection::vec(instr, 1..3), 1..3),
        2..=3,
    )
    .prop_map(|threads| Toy { threads, vars: 3 })
}

/// Toys without spin loops: their state graph has no cycle.
pub fn loop_free_toy_program() -> impl Strategy<Value = Toy> {
    let instr = prop_oneof![
        (0..2usize).prop_map(Instr::Read),
        (0..2usize, 0..2i64).prop_map(|(v, x)| Instr::Write(v, x)),
        Just(Instr::Acquire(2)),
        Just(Instr::Release(2)),
    ];
    prop::collection::vec(
        prop::collection::vec(prop::collection::vec(instr, 0..3), 1..3),
        1..=3,
    )
    .prop_map(|threads| Toy { threads, vars: 3 })
}

/// What a leaf's history says, for labeling tests: a complete run passes or fails by a
/// function of the *set* of (thread, result) pairs it returned (not of their order, so every
/// history of one real-time order gets one verdict, as linearizability does); a stuck run
/// fails. The function is arbitrary: it only needs to give both verdicts often.
pub fn passes(history: &History) -> bool {
    let score: u64 = history
        .events
        .iter()
        .filter_map(|e| match e {
            fgvt_tree::CoarseEvent::Return {
                thread,
                value: Some(value),
            } => Some(return_score(*thread, value)),
            _ => None,
        })
        .sum();
    !score.is_multiple_of(3)
}

/// One return's share of [`passes`]'s score.
pub fn return_score(thread: usize, value: &Value) -> u64 {
    let sum: i64 = match value {
        Value::Tuple(values) => values
            .iter()
            .map(|v| match v {
                Value::Int(i) => *i,
                _ => 0,
            })
            .sum(),
        _ => 0,
    };
    (thread as u64 + 1) * (sum as u64 + 1)
}

/// A state of the brute-force reference: the toy's state and the score of the returns so far
/// (mod 3, all [`passes`] needs).
type RefState = (State, u64);

/// The brute-force reference for what a state can come to: which verdicts the complete or
/// stuck runs from it reach, found by unfolding the tree from it to a depth beyond the number
/// of states (memoized on state and remaining depth; paths cut by the depth are ignored), plus
/// a failing verdict when some state it reaches can reach no leaf at all (a livelock: every run
/// from there goes on forever).
pub struct Reference<'a> {
    toy: &'a Toy,
    /// Every state reachable from the start, numbered.
    states: Vec<RefState>,
    index: std::collections::HashMap<RefState, usize>,
    /// Successors of each state, or its verdict when no thread can move.
    next: Vec<Result<Vec<usize>, bool>>,
    /// Per state: (some passing run, some failing run) by unfolding.
    unfolded: Vec<(bool, bool)>,
}

impl<'a> Reference<'a> {
    /// Explores every state `toy` can reach from its initial state.
    pub fn new(toy: &'a Toy) -> Reference<'a> {
        let (initial, _) = toy.initial_state().expect("toys have no init part");
        let mut r = Reference {
            toy,
            states: Vec::new(),
            index: Default::default(),
            next: Vec::new(),
            unfolded: Vec::new(),
        };
        r.intern((initial, 0));
        let mut i = 0;
        while i < r.states.len() {
            let (state, score) = r.states[i].clone();
            let mut succ = Vec::new();
            let mut all_done = true;
            for t in 0..toy.threads() {
                match toy.step(&state, t) {
                    Step::Done => {}
                    Step::Moved { state: s, event } => {
                        all_done = false;
                        let add = event.ret.as_ref().map_or(0, |v| return_score(t, v));
                        succ.push(r.intern((s, (score + add) % 3)));
                    }
                    Step::Blocked => all_done = false,
                    other => panic!("toys for the reference neither fault nor bound: {other:?}"),
                }
            }
            let entry = if succ.is_empty() {
                // Complete: the score decides; stuck (deadlock): fails.
                Err(all_done && score % 3 != 0)
            } else {
                Ok(succ)
            };
            r.next.push(entry);
            i += 1;
        }
        // Unfold: layer d holds what runs of at most d steps reach.
        let n = r.states.len();
        let mut layer: Vec<(bool, bool)> = (0..n)
            .map(|s| match r.next[s] {
                Err(pass) => (pass, !pass),
                Ok(_) => (false, false),
            })
            .collect();
        for _ in 0..=n {
            layer = (0..n)
                .map(|s| match &r.next[s] {
                    Err(pass) => (*pass, !*pass),
                    Ok(succ) => succ.iter().fold((false, false), |(p, f), &c| {
                        (p || layer[c].0, f || layer[c].1)
                    }),
                })
                .collect();
        }
        r.unfolded = layer;
        r
    }

    fn intern(&mut self, s: RefState) -> usize {
        if let Some(&i) = self.index.get(&s) {
            return i;
        }
        self.states.push(s.clone());
        self.index.insert(s, self.states.len() - 1);
        self.states.len() - 1
    }

    /// How many states the toy can reach.
    pub fn len(&self) -> usize {
        self.states.len()
    }

    /// The state a schedule of thread choices reaches from the start.
    pub fn follow(&self, schedule: &[usize]) -> usize {
        let mut at = 0;
        let mut state = self.states[0].clone();
        for &t in schedule {
            let Step::Moved { state: s, event } = self.toy.step(&state.0, t) else {
                panic!("the schedule names a thread that cannot move");
            };
            let add = event.ret.as_ref().map_or(0, |v| return_score(t, v));
            state = (s, (state.1 + add) % 3);
            at = self.index[&state];
        }
        at
    }

    /// (some run from state `s` passes, some fails), livelocks counted as failing.
    pub fn verdicts(&self, s: usize) -> (bool, bool) {
        let (pass, mut fail) = self.unfolded[s];
        // Every state reachable from `s`, by depth-first search.
        let mut seen = vec![false; self.len()];
        let mut stack = vec![s];
        seen[s] = true;
        while let Some(at) = stack.pop() {
            if self.unfolded[at] == (false, false) {
                fail = true; // reaches no leaf: a livelock
            }
            if let Ok(succ) = &self.next[at] {
                for &c in succ {
                    if !seen[c] {
                        seen[c] = true;
                        stack.push(c);
                    }
                }
            }
        }
        (pass, fail)
    }
}

/// Toys full of spin loops and locks, for the cyclic state graphs.
pub fn spinning_toy_program() -> impl Strategy<Value = Toy> {
    let instr = prop_oneof![
        1 => (0..2usize).prop_map(Instr::Read),
        2 => (0..2usize, 0..2i64).prop_map(|(v, x)| Instr::Write(v, x)),
        3 => (0..2usize, 0..2i64).prop_map(|(v, x)| Instr::SpinUntil(v, x)),
        1 => Just(Instr::Acquire(2)),
        1 => Just(Instr::Release(2)),
    ];
    prop::collection::vec(
        prop::collection::vec(prop::collection::vec(instr, 1..4), 1..3),
        2..=3,
    )
    .prop_map(|threads| Toy { threads, vars: 3 })
}
