//! The weak-memory runtime against the axioms: litmus programs run as Rust code on
//! `fgvt_sync`'s atomics and cells, every leaf of the explored tree read as an outcome (or a
//! data race), and the set of outcomes compared with the brute-force enumeration of
//! C11-consistent executions (`fgvt_memory::litmus::brute_force`, and `brute_force_races` for
//! programs with plain memory: whether one races, and what the race-free ones give): the classic
//! tests with every combination of orders, the race tests, and small random programs.

use std::cell::RefCell;
use std::collections::BTreeSet;

use fgvt_memory::litmus::{self, brute_force, brute_force_races, races, Instr, Outcome, Program};
use fgvt_memory::Order::{self, AcqRel, Acquire, Relaxed, Release, SeqCst};
use fgvt_sync::atomic::{fence, AtomicU64, Ordering};
use fgvt_sync::cell::UnsafeCell;
use fgvt_sync::report::{CoarseEvent, LeafKind};
use fgvt_sync::{unknown, Call, Object, Test, Value};
use proptest::prelude::*;

thread_local! {
    /// The program the next [`Litmus`] runs: every execution of a test runs on the OS
    /// thread that explores it.
    static PROGRAM: RefCell<Program> = RefCell::new(Program { locations: Vec::new(), threads: Vec::new() });
}

/// A litmus program as an object: `run(t)` runs thread `t`'s instructions and returns its
/// registers, `memory()` the locations' values.
struct Litmus {
    program: Program,
    locations: Vec<Location>,
}

/// A location of a litmus program: plain memory where some instruction accesses it plainly.
enum Location {
    Atomic(AtomicU64),
    Plain(UnsafeCell<u64>),
}

// SAFETY: the plain locations are what the test checks for data races; a race ends the run
// before its access is made.
unsafe impl Sync for Litmus {}

impl Location {
    fn atomic(&self) -> &AtomicU64 {
        match self {
            Location::Atomic(a) => a,
            Location::Plain(_) => panic!("an atomic access to a plain location"),
        }
    }

    fn cell(&self) -> &UnsafeCell<u64> {
        match self {
            Location::Plain(c) => c,
            Location::Atomic(_) => panic!("a plain access to an atomic location"),
        }
    }

    fn value(&self) -> u64 {
        match self {
            Location::Atomic(a) => a.load(Ordering::SeqCst),
            // SAFETY: read in `final`, after every thread.
            Location::Plain(c) => c.with(|p| unsafe { *p }),
        }
    }
}

fn ordering(order: Order) -> Ordering {
    match order {
        Relaxed => Ordering::Relaxed,
        Release => Ordering::Release,
        Acquire => Ordering::Acquire,
        AcqRel => Ordering::AcqRel,
        SeqCst => Ordering::SeqCst,
    }
}

impl Litmus {
    fn run(&self, thread: usize) -> Vec<u64> {
        let mut registers = self.program.initial_registers()[thread].clone();
        let instrs = &self.program.threads[thread];
        let mut next = 0;
        while let Some(&instr) = instrs.get(next) {
            let at = |loc: u32| self.locations[loc as usize].atomic();
            let cell = |loc: u32| self.locations[loc as usize].cell();
            next = self.program.next_instruction(thread, next, &registers);
            match instr {
                Instr::Load { loc, order, reg } => registers[reg] = at(loc).load(ordering(order)),
                Instr::Store { loc, value, order } => at(loc).store(value, ordering(order)),
                Instr::FetchAdd {
                    loc,
                    add,
                    order,
                    reg,
                } => {
                    registers[reg] = at(loc).fetch_add(add, ordering(order));
                }
                Instr::Cas {
                    loc,
                    expected,
                    new,
                    success,
                    failure,
                    reg,
                } => {
                    let read = at(loc).compare_exchange(
                        expected,
                        new,
                        ordering(success),
                        ordering(failure),
                    );
                    registers[reg] = read.unwrap_or_else(|v| v);
                }
                Instr::Fence(Relaxed) | Instr::SkipUnless { .. } => {}
                Instr::Fence(order) => fence(ordering(order)),
                // SAFETY: the test checks exactly this access for a data race.
                Instr::Read { loc, reg } => registers[reg] = cell(loc).with(|p| unsafe { *p }),
                Instr::Write { loc, value } => cell(loc).with_mut(|p| unsafe { *p = value }),
            }
        }
        registers
    }
}

fn values(values: &[u64]) -> Value {
    Value::Tuple(values.iter().map(|&v| Value::Int(v as i64)).collect())
}

impl Object for Litmus {
    fn new() -> Self {
        let program = PROGRAM.with(|p| p.borrow().clone());
        let plain = |loc: usize| {
            (program.threads.iter().flatten()).any(|i| i.is_plain() && i.loc() == Some(loc as u32))
        };
        let locations = (program.locations.iter().enumerate())
            .map(|(loc, &v)| {
                if plain(loc) {
                    Location::Plain(UnsafeCell::new(v))
                } else {
                    Location::Atomic(AtomicU64::new(v))
                }
            })
            .collect();
        Litmus { program, locations }
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match (call.op.as_str(), call.args.as_slice()) {
            ("run", [Value::Int(t)]) => Ok(values(&self.run(*t as usize))),
            ("memory", []) => {
                let memory: Vec<u64> = self.locations.iter().map(Location::value).collect();
                Ok(values(&memory))
            }
            _ => Err(unknown(call)),
        }
    }
}

/// Whether some run of `p` under fgvt-sync met a data race, and the outcomes of every complete
/// run.
fn outcomes(p: &Program) -> (bool, BTreeSet<Outcome>) {
    PROGRAM.with(|program| *program.borrow_mut() = p.clone());
    // Every access of the interpreted program is made at one line of `Litmus`: straight-line
    // loads that see one value would look like a bare spin's turns.
    let mut test = Test::<Litmus>::new("litmus")
        .finally(&["memory()"])
        .max_stale(16)
        .cut_bare_spins(false);
    for t in 0..p.threads.len() {
        test = test.thread(&[&format!("run({t})")]);
    }
    let tree = test.explore().expect("replays");
    let read = |v: &Value| -> Vec<u64> {
        match v {
            Value::Tuple(items) => items
                .iter()
                .map(|i| match i {
                    Value::Int(n) => *n as u64,
                    _ => panic!("{i:?}"),
                })
                .collect(),
            Value::Unit => Vec::new(),
            _ => panic!("{v:?}"),
        }
    };
    let mut found = BTreeSet::new();
    let mut racy = false;
    for (_, leaf, _) in tree.leaves() {
        if let Some(fault) = &leaf.fault {
            assert!(fault.race.is_some(), "{p}\n{}", fault.message);
            racy = true;
            continue;
        }
        assert_eq!(leaf.kind, LeafKind::Complete, "{p}\n{:?}", leaf.bound);
        let mut registers = p.initial_registers();
        let mut memory = Vec::new();
        let mut calls = Vec::new();
        for event in &leaf.history.events {
            match event {
                CoarseEvent::Call { call, .. } => calls.push(call.clone()),
                CoarseEvent::Return {
                    thread,
                    value: Some(value),
                } => {
                    if *thread < p.threads.len() {
                        registers[*thread] = read(value);
                    } else {
                        memory = read(value);
                    }
                }
                CoarseEvent::Return { .. } => {}
            }
        }
        found.insert(Outcome { registers, memory });
    }
    (racy, found)
}

/// What the axioms say of `p`: whether it races, and its race-free outcomes.
fn axioms(p: &Program) -> (bool, BTreeSet<Outcome>) {
    if p.threads.iter().flatten().any(Instr::is_plain) {
        let races = brute_force_races(p);
        (races.racy, races.race_free)
    } else {
        (false, brute_force(p))
    }
}

fn agree(p: &Program) {
    assert_eq!(
        outcomes(p),
        axioms(p),
        "fgvt-sync and the axioms disagree on\n{p}"
    );
}

const LOADS: [Order; 3] = [Relaxed, Acquire, SeqCst];
const STORES: [Order; 3] = [Relaxed, Release, SeqCst];

#[test]
fn message_passing_with_every_combination_of_orders() {
    for a in STORES {
        for b in STORES {
            for c in LOADS {
                for d in LOADS {
                    agree(&litmus::mp(a, b, c, d));
                }
            }
        }
    }
}

#[test]
fn store_buffering_with_every_combination_of_orders() {
    for a in STORES {
        for b in LOADS {
            for c in STORES {
                for d in LOADS {
                    agree(&litmus::sb(a, b, c, d));
                }
            }
        }
    }
}

#[test]
fn load_buffering_with_every_combination_of_orders() {
    for a in LOADS {
        for b in STORES {
            for c in LOADS {
                for d in STORES {
                    agree(&litmus::lb(a, b, c, d));
                }
            }
        }
    }
}

#[test]
fn two_plus_two_w_with_every_combination_of_orders() {
    for a in STORES {
        for b in STORES {
            for c in STORES {
                for d in STORES {
                    agree(&litmus::two_plus_two_w(a, b, c, d));
                }
            }
        }
    }
}

/// [`agree`] on every program of `programs`, on every core: each explores on the OS thread
/// that runs it (see [`PROGRAM`]), so they are independent.
fn agree_on_every_core(programs: &[Program]) {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, usize::from);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while let Some(p) =
                    programs.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                {
                    agree(p);
                }
            });
        }
    });
}

#[test]
fn iriw_with_every_combination_of_orders() {
    // 729 programs of four threads: the longest test of the suite, spread over the cores.
    let mut programs = Vec::new();
    for a in STORES {
        for b in STORES {
            for c in LOADS {
                for d in LOADS {
                    for e in LOADS {
                        for f in LOADS {
                            programs.push(litmus::iriw(a, b, c, d, e, f));
                        }
                    }
                }
            }
        }
    }
    assert_eq!(programs.len(), 729);
    agree_on_every_core(&programs);
}

#[test]
fn the_fenced_forms_with_every_pair_of_fences() {
    let fences = [
        None,
        Some(Release),
        Some(Acquire),
        Some(AcqRel),
        Some(SeqCst),
    ];
    for f in fences {
        for g in fences {
            agree(&litmus::mp_fenced(f, g));
            agree(&litmus::sb_fenced(f, g));
            agree(&litmus::iriw_fenced(f, g));
        }
    }
}

fn instr() -> impl Strategy<Value = Instr> {
    let loc = 0u32..2;
    let reg = 0usize..2;
    prop_oneof![
        (
            loc.clone(),
            prop::sample::select(LOADS.to_vec()),
            reg.clone()
        )
            .prop_map(|(loc, order, reg)| Instr::Load { loc, order, reg }),
        (loc.clone(), 1u64..3, prop::sample::select(STORES.to_vec()))
            .prop_map(|(loc, value, order)| Instr::Store { loc, value, order }),
        (
            loc.clone(),
            prop::sample::select(Order::ALL.to_vec()),
            reg.clone()
        )
            .prop_map(|(loc, order, reg)| Instr::FetchAdd {
                loc,
                add: 1,
                order,
                reg
            }),
        (
            loc,
            0u64..2,
            prop::sample::select(Order::ALL.to_vec()),
            prop::sample::select(LOADS.to_vec()),
            reg
        )
            .prop_map(|(loc, expected, success, failure, reg)| Instr::Cas {
                loc,
                expected,
                new: 2,
                success,
                failure,
                reg
            }),
        prop::sample::select(Order::ALL.to_vec()).prop_map(Instr::Fence),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random programs of two or three threads of up to three instructions on two locations.
    #[test]
    fn random_programs_give_exactly_the_axioms_outcomes(
        threads in prop::collection::vec(prop::collection::vec(instr(), 1..4), 2..4)
    ) {
        let p = Program { locations: vec![0, 0], threads };
        prop_assert_eq!(outcomes(&p), axioms(&p), "on\n{}", p);
    }

    /// Random programs with plain memory (location 0) and branches: the same races, and the
    /// same race-free outcomes.
    #[test]
    fn random_programs_with_plain_memory_race_exactly_when_the_axioms_say(
        threads in prop::collection::vec(prop::collection::vec(plain_instr(), 1..5), 2..4)
    ) {
        let p = Program { locations: vec![0, 0], threads };
        prop_assert_eq!(outcomes(&p), axioms(&p), "on\n{}", p);
    }
}

/// One instruction of a random program with plain memory: location 0 plain, 1 atomic, and
/// branches on the registers.
fn plain_instr() -> impl Strategy<Value = Instr> {
    let reg = 0usize..2;
    prop_oneof![
        reg.clone().prop_map(|reg| Instr::Read { loc: 0, reg }),
        (1u64..3).prop_map(|value| Instr::Write { loc: 0, value }),
        (prop::sample::select(LOADS.to_vec()), reg.clone()).prop_map(|(order, reg)| Instr::Load {
            loc: 1,
            order,
            reg
        }),
        (1u64..3, prop::sample::select(STORES.to_vec())).prop_map(|(value, order)| Instr::Store {
            loc: 1,
            value,
            order
        }),
        (
            0u64..2,
            prop::sample::select(Order::ALL.to_vec()),
            reg.clone()
        )
            .prop_map(|(expected, success, reg)| Instr::Cas {
                loc: 1,
                expected,
                new: 2,
                success,
                failure: Relaxed,
                reg
            }),
        prop::sample::select(Order::ALL.to_vec()).prop_map(Instr::Fence),
        (reg, 0u64..3, 1usize..3).prop_map(|(reg, value, skip)| Instr::SkipUnless {
            reg,
            value,
            skip
        }),
    ]
}

#[test]
fn plain_data_races_unless_a_release_is_read_by_an_acquire() {
    for a in STORES {
        for b in LOADS {
            agree(&races::mp_plain(a, b));
        }
    }
    let fences = [None, Some(Release), Some(Acquire), Some(SeqCst)];
    for f in fences {
        for g in fences {
            agree(&races::mp_plain_fenced(f, g));
        }
    }
    for publish in Order::ALL {
        for load in LOADS {
            agree(&races::cas_publish(publish, load));
        }
    }
    for lock in Order::ALL {
        for unlock in STORES {
            agree(&races::locked_cell(lock, unlock));
        }
    }
    agree(&races::unsynchronized());
}
