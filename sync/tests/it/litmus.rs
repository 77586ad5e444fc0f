//! The weak-memory runtime against the axioms: litmus programs run as Rust code on
//! `fgvt_sync`'s atomics and cells, every leaf of the explored tree read as an outcome (or a
//! data race), and the set of outcomes compared with the brute-force enumeration of
//! C11-consistent executions (`fgvt_memory::litmus::brute_force`, and `brute_force_races` for
//! programs with plain memory: whether one races, and what the race-free ones give): the classic
//! tests with every combination of orders, the race tests, and small random programs.

use std::cell::{Cell, RefCell};
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
    /// Whether waiting loops' turns may add (see [`waits`]): a failed turn then takes its
    /// additions back, the way a reader-writer lock's `read()` takes back its reader count.
    static TAKE_BACK: Cell<bool> = const { Cell::new(false) };
    /// With [`TAKE_BACK`], whether waiting loops are made straight-line instead: this many
    /// failed turns, then the one that ends it, with no hint (see [`take_back_outcomes`]);
    /// the first number for thread 0's loops, the second for the other threads'.
    static UNROLLED: Cell<Option<(usize, usize)>> = const { Cell::new(None) };
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
        let waits = waits(instrs);
        let unrolled = UNROLLED
            .with(Cell::get)
            .map(|(first, rest)| if thread == 0 { first } else { rest });
        // Whether every turn ended as an unrolled loop's must: only the last saw the value.
        let mut as_unrolled = true;
        let mut next = 0;
        while let Some(&instr) = instrs.get(next) {
            if let Some(&(_, marker)) = waits.iter().find(|&&(start, _)| start == next) {
                let Instr::SkipUnless { reg, value, .. } = instrs[marker] else {
                    unreachable!("a wait ends at its marker")
                };
                let mut failed = 0;
                loop {
                    for &turn in &instrs[next..marker] {
                        self.step(turn, &mut registers);
                    }
                    let seen = registers[reg] == value;
                    match unrolled {
                        None if seen => break,
                        None => {}
                        Some(turns) => {
                            // A run whose turns did not end as the unrolled loop's is dropped:
                            // it ends here.
                            as_unrolled &= seen == (failed == turns);
                            if failed == turns || !as_unrolled {
                                break;
                            }
                        }
                    }
                    failed += 1;
                    for &turn in instrs[next..marker].iter().rev() {
                        if let Instr::FetchAdd {
                            loc, add, order, ..
                        } = turn
                        {
                            self.locations[loc as usize]
                                .atomic()
                                .fetch_add(add.wrapping_neg(), ordering(order));
                        }
                    }
                    if unrolled.is_none() {
                        fgvt_sync::hint::spin_loop();
                    }
                }
                next = marker + 1;
                continue;
            }
            next = self.program.next_instruction(thread, next, &registers);
            self.step(instr, &mut registers);
        }
        if TAKE_BACK.with(Cell::get) {
            registers.push(u64::from(as_unrolled));
        }
        registers
    }

    /// Makes one instruction's access, into `registers`.
    fn step(&self, instr: Instr, registers: &mut [u64]) {
        let at = |loc: u32| self.locations[loc as usize].atomic();
        let cell = |loc: u32| self.locations[loc as usize].cell();
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
                let read =
                    at(loc).compare_exchange(expected, new, ordering(success), ordering(failure));
                registers[reg] = read.unwrap_or_else(|v| v);
            }
            Instr::Fence(Relaxed) | Instr::SkipUnless { .. } => {}
            Instr::Fence(order) => fence(ordering(order)),
            // SAFETY: the test checks exactly this access for a data race.
            Instr::Read { loc, reg } => registers[reg] = cell(loc).with(|p| unsafe { *p }),
            Instr::Write { loc, value } => cell(loc).with_mut(|p| unsafe { *p = value }),
        }
    }
}

/// The waiting loops of a thread's instructions, as (first instruction, marker): a marker is a
/// `SkipUnless` that skips nothing, which the axioms read as no instruction at all, and the
/// loads and fences right before it are a loop that `run` turns until the marker's register
/// holds its value, with a spin hint per turn. A run of the loop reaches the outcome of the
/// run of the program with the loop's instructions made once and the register holding the
/// value (a turn that failed wrote nothing and can be taken away: GenMC's spin-assume), so
/// [`axioms_waiting`] is the reference. With [`TAKE_BACK`] a turn may also add
/// (`FetchAdd`), and a failed turn takes its additions back before the next: a turn that
/// stores, whose runs [`take_back_outcomes`] compares with the runs unfolded.
fn waits(instrs: &[Instr]) -> Vec<(usize, usize)> {
    let adds = TAKE_BACK.with(Cell::get);
    (instrs.iter().enumerate())
        .filter(|(_, i)| matches!(i, Instr::SkipUnless { skip: 0, .. }))
        .map(|(marker, _)| {
            let turn = instrs[..marker]
                .iter()
                .rev()
                .take_while(|i| match i {
                    Instr::Load { .. } | Instr::Fence(_) => true,
                    Instr::FetchAdd { .. } => adds,
                    _ => false,
                })
                .count();
            (marker - turn, marker)
        })
        .filter(|&(start, marker)| start < marker)
        .collect()
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
/// run: of every run, or with `reduce`, of the runs of the partial-order reduced search
/// (`Test::partial_order_reduction`), which must reach every outcome too.
fn outcomes(p: &Program, reduce: bool) -> (bool, BTreeSet<Outcome>) {
    explored_outcomes(p, |test| test.partial_order_reduction(reduce), false)
}

/// [`outcomes`] of the tree `configure` asks for; runs cut by a bound are left out where
/// `cut` allows them, and fail the test where it does not.
fn explored_outcomes(
    p: &Program,
    configure: impl FnOnce(Test<Litmus>) -> Test<Litmus>,
    cut: bool,
) -> (bool, BTreeSet<Outcome>) {
    let (racy, found, bounded) = explored(p, configure, cut);
    assert!(cut || !bounded);
    (racy, found)
}

/// [`explored_outcomes`], and whether some run was cut by a bound (which `cut` allows).
fn explored(
    p: &Program,
    configure: impl FnOnce(Test<Litmus>) -> Test<Litmus>,
    cut: bool,
) -> (bool, BTreeSet<Outcome>, bool) {
    PROGRAM.with(|program| *program.borrow_mut() = p.clone());
    // Every access of the interpreted program is made at one line of `Litmus`: straight-line
    // loads that see one value would look like a bare spin's turns.
    // The program is in this thread's `PROGRAM`: executions run here, none on workers.
    let mut test = configure(
        Test::<Litmus>::new("litmus")
            .jobs(1)
            .finally(&["memory()"])
            .max_stale(16)
            .cut_bare_spins(false),
    );
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
    let mut bounded = false;
    let waiting = p.threads.iter().any(|instrs| !waits(instrs).is_empty());
    for (_, leaf, _) in tree.leaves() {
        if let Some(fault) = &leaf.fault {
            assert!(fault.race.is_some(), "{p}\n{}", fault.message);
            racy = true;
            continue;
        }
        // Threads that all wait for what none of them will write: a run that never ends.
        if waiting && leaf.kind == LeafKind::Stuck {
            continue;
        }
        if cut && leaf.kind == LeafKind::Bounded {
            bounded = true;
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
    (racy, found, bounded)
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

/// fgvt-sync's outcomes of `p`, explored in full and with the partial-order reduction, are
/// `axioms` (`what` names the two in the message).
fn agree_with(p: &Program, axioms: (bool, BTreeSet<Outcome>), what: &str) {
    for reduce in [false, true] {
        assert_eq!(
            outcomes(p, reduce),
            axioms,
            "{what} disagree on\n{p}(reduced: {reduce})"
        );
    }
}

fn agree(p: &Program) {
    agree_with(p, axioms(p), "fgvt-sync and the axioms");
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
        let axioms = axioms(&p);
        prop_assert_eq!(outcomes(&p, false), axioms.clone(), "on\n{}", p);
        prop_assert_eq!(outcomes(&p, true), axioms, "reduced, on\n{}", p);
    }

    /// Random programs with plain memory (location 0) and branches: the same races, and the
    /// same race-free outcomes.
    #[test]
    fn random_programs_with_plain_memory_race_exactly_when_the_axioms_say(
        threads in prop::collection::vec(prop::collection::vec(plain_instr(), 1..5), 2..4)
    ) {
        let p = Program { locations: vec![0, 0], threads };
        let axioms = axioms(&p);
        prop_assert_eq!(outcomes(&p, false), axioms.clone(), "on\n{}", p);
        prop_assert_eq!(outcomes(&p, true), axioms, "reduced, on\n{}", p);
    }
}

/// An order of a random program in which `SeqCst` is the common case: two thirds of the
/// accesses and fences, the rest any order the access allows.
fn mostly_seq_cst(orders: &'static [Order]) -> impl Strategy<Value = Order> {
    prop_oneof![2 => Just(SeqCst), 1 => prop::sample::select(orders.to_vec())]
}

/// One instruction on three locations, mostly `SeqCst` (see [`mostly_seq_cst`]).
fn seq_cst_instr() -> impl Strategy<Value = Instr> {
    let loc = 0u32..3;
    let reg = 0usize..2;
    prop_oneof![
        (loc.clone(), mostly_seq_cst(&LOADS), reg.clone())
            .prop_map(|(loc, order, reg)| Instr::Load { loc, order, reg }),
        (loc.clone(), 1u64..3, mostly_seq_cst(&STORES))
            .prop_map(|(loc, value, order)| Instr::Store { loc, value, order }),
        (loc.clone(), mostly_seq_cst(&Order::ALL), reg.clone()).prop_map(|(loc, order, reg)| {
            Instr::FetchAdd {
                loc,
                add: 1,
                order,
                reg,
            }
        }),
        // A compare-exchange that fails is a load with its failure order, which may read an
        // older store than the latest: the reduced search leaves such a read to the order where
        // it comes before the newer store it missed, a `SeqCst` one too.
        (
            loc,
            0u64..3,
            mostly_seq_cst(&Order::ALL),
            mostly_seq_cst(&LOADS),
            reg
        )
            .prop_map(|(loc, expected, success, failure, reg)| Instr::Cas {
                loc,
                expected,
                new: expected + 1,
                success,
                failure,
                reg,
            }),
        mostly_seq_cst(&Order::ALL).prop_map(Instr::Fence),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random programs of two or three threads on three locations, mostly `SeqCst`: the
    /// partial-order reduced search lets `SeqCst` accesses to different locations commute
    /// (the execution graph, not the order they were made in, decides what later reads may
    /// read), leaves a weaker read of an older store (a failed compare-exchange's too) to the
    /// order where it comes before the newer store it missed, `SeqCst` or not, and still
    /// reaches exactly the axioms' outcomes.
    #[test]
    fn random_mostly_seq_cst_programs_give_exactly_the_axioms_outcomes(
        threads in prop::collection::vec(prop::collection::vec(seq_cst_instr(), 1..4), 2..4)
    ) {
        let p = Program { locations: vec![0, 0, 0], threads };
        let axioms = axioms(&p);
        prop_assert_eq!(outcomes(&p, true), axioms, "reduced, on\n{}", p);
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

/// What the axioms say of `p` with waiting loops ([`waits`]): the outcomes in which every
/// marker's register holds its value (a run whose loop never sees it never ends).
fn axioms_waiting(p: &Program) -> (bool, BTreeSet<Outcome>) {
    let (racy, mut outcomes) = axioms(p);
    outcomes.retain(|o| {
        (p.threads.iter().enumerate()).all(|(t, instrs)| {
            waits(instrs)
                .iter()
                .all(|&(_, marker)| match instrs[marker] {
                    Instr::SkipUnless { reg, value, .. } => o.registers[t][reg] == value,
                    _ => unreachable!("a wait ends at its marker"),
                })
        })
    });
    (racy, outcomes)
}

/// The marker of a waiting loop: turn until register `reg` holds `value`.
fn until(reg: usize, value: u64) -> Instr {
    Instr::SkipUnless {
        reg,
        value,
        skip: 0,
    }
}

fn agree_waiting(p: &Program) {
    agree_with(
        p,
        axioms_waiting(p),
        "fgvt-sync's waiting loops and the axioms",
    );
}

/// Message passing whose reader spins on the flag: a turn that saw the old flag is a loop
/// edge, whatever the orders, and the outcomes are those of the reader that saw it at once.
#[test]
fn message_passing_waiting_for_the_flag_with_every_combination_of_orders() {
    for a in STORES {
        for b in STORES {
            for c in LOADS {
                for d in LOADS {
                    let p = Program {
                        locations: vec![0, 0],
                        threads: vec![
                            vec![
                                Instr::Store {
                                    loc: 0,
                                    value: 1,
                                    order: a,
                                },
                                Instr::Store {
                                    loc: 1,
                                    value: 1,
                                    order: b,
                                },
                            ],
                            vec![
                                Instr::Load {
                                    loc: 1,
                                    order: c,
                                    reg: 0,
                                },
                                until(0, 1),
                                Instr::Load {
                                    loc: 0,
                                    order: d,
                                    reg: 1,
                                },
                            ],
                        ],
                    };
                    agree_waiting(&p);
                }
            }
        }
    }
}

/// Peterson's entry, each thread's turn two loads (the other's flag, the turn) and with a fence
/// between them or not: `SeqCst` loads after a fence, where a later turn orders more than one
/// turn alone, still merge into the loop's head without an outcome gained or lost.
#[test]
fn peterson_entries_spinning_on_two_loads_with_every_order() {
    for store in STORES {
        for load in LOADS {
            for fence in [None, Some(SeqCst), Some(Acquire)] {
                let thread = |me: u32, other: u32| {
                    let mut turn = vec![Instr::Load {
                        loc: other,
                        order: load,
                        reg: 0,
                    }];
                    turn.extend(fence.map(Instr::Fence));
                    turn.push(Instr::Load {
                        loc: 2,
                        order: load,
                        reg: 1,
                    });
                    let mut instrs = vec![
                        Instr::Store {
                            loc: me,
                            value: 1,
                            order: store,
                        },
                        Instr::Store {
                            loc: 2,
                            value: u64::from(other) + 1,
                            order: store,
                        },
                    ];
                    instrs.extend(turn);
                    instrs.push(until(0, 0));
                    instrs
                };
                let p = Program {
                    locations: vec![0, 0, 0],
                    threads: vec![thread(0, 1), thread(1, 0)],
                };
                agree_waiting(&p);
            }
        }
    }
}

/// One turn of a random waiting loop: loads of either location and fences.
fn turn_instr() -> impl Strategy<Value = Instr> {
    prop_oneof![
        (0u32..2, prop::sample::select(LOADS.to_vec()), 0usize..2)
            .prop_map(|(loc, order, reg)| Instr::Load { loc, order, reg }),
        prop::sample::select(vec![Acquire, Release, AcqRel, SeqCst]).prop_map(Instr::Fence),
    ]
}

/// A thread with a waiting loop somewhere: random instructions, a turn of one to three loads
/// and fences, the marker on a register one of its loads writes, more random instructions that
/// leave that register alone.
fn waiting_thread() -> impl Strategy<Value = Vec<Instr>> {
    (
        prop::collection::vec(instr(), 0..3),
        prop::collection::vec(turn_instr(), 1..4),
        0u64..3,
        prop::collection::vec(instr(), 0..2),
    )
        .prop_filter_map("a turn loads something", |(before, turn, value, after)| {
            let reg = turn.iter().rev().find_map(|i| match i {
                Instr::Load { reg, .. } => Some(*reg),
                _ => None,
            })?;
            // The register keeps what the loop waited for: the reference reads it at the end.
            if after.iter().any(|i| i.reg() == Some(reg)) {
                return None;
            }
            let mut instrs = before;
            instrs.extend(turn);
            instrs.push(until(reg, value));
            instrs.extend(after);
            Some(instrs)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random programs of two or three threads, the first with a waiting loop: the outcomes
    /// of the runs that end are exactly the axioms' with the loop's register as it waits for.
    #[test]
    fn random_programs_with_a_waiting_loop_give_exactly_the_axioms_outcomes(
        waiting in waiting_thread(),
        others in prop::collection::vec(prop::collection::vec(instr(), 1..4), 1..3),
    ) {
        let mut threads = vec![waiting];
        threads.extend(others);
        let p = Program { locations: vec![0, 0], threads };
        let axioms = axioms_waiting(&p);
        prop_assert_eq!(outcomes(&p, false), axioms.clone(), "on\n{}", p);
        prop_assert_eq!(outcomes(&p, true), axioms, "reduced, on\n{}", p);
    }
}

/// A waiting loop whose turn adds and, when it fails, takes the additions back (see
/// [`waits`]), in a thread of random loads, stores and additions, beside threads of those: the
/// outcomes of the runs with merged states (a turn that put back what it changed is left out of
/// the future key, `fgvt_memory`'s `turns`), and the reference, the outcomes of the same
/// program with the loops made straight-line: `failed` failed turns then the one that saw the
/// value, for every `failed` up to `unrolled`, in thread 0 and (independently) in the others
/// (the runs whose turns did not end that way dropped). No `SeqCst`: with one not yet settled
/// the key is the whole graph, which leaves no such turn out.
fn take_back_outcomes(p: &Program, unrolled: usize) -> [(bool, BTreeSet<Outcome>); 2] {
    let merged = merged_take_back(p, false).expect("every run ends or merges");
    [merged, unrolled_take_back(p, unrolled)]
}

/// The outcomes of `p`'s runs with merged states (see [`take_back_outcomes`]); `None` if some
/// run was cut by a bound, which fails the test unless `cut` allows it.
fn merged_take_back(p: &Program, cut: bool) -> Option<(bool, BTreeSet<Outcome>)> {
    TAKE_BACK.with(|t| t.set(true));
    UNROLLED.with(|u| u.set(None));
    // Every turn's stores stay in the graph, merged or not: a load may read any of them. A
    // program whose runs may be cut is cut early: these end in a few dozen steps or never.
    let (racy, found, bounded) = explored(
        p,
        |test| {
            let test = test.partial_order_reduction(false).max_stale(u32::MAX);
            if cut {
                test.max_steps(64)
            } else {
                test
            }
        },
        cut,
    );
    TAKE_BACK.with(|t| t.set(false));
    (!bounded).then_some((racy, found))
}

/// The reference of [`take_back_outcomes`]: `p` with its waiting loops made straight-line.
fn unrolled_take_back(p: &Program, unrolled: usize) -> (bool, BTreeSet<Outcome>) {
    TAKE_BACK.with(|t| t.set(true));
    let mut reference = (false, BTreeSet::new());
    let others_wait = p.threads[1..]
        .iter()
        .any(|instrs| !waits(instrs).is_empty());
    let rest = if others_wait { unrolled } else { 0 };
    for failed in (0..=unrolled).flat_map(|first| (0..=rest).map(move |r| (first, r))) {
        UNROLLED.with(|u| u.set(Some(failed)));
        let (racy, outcomes) = explored_outcomes(
            p,
            |test| {
                test.partial_order_reduction(false)
                    .implied_hints(false)
                    .max_stale(u32::MAX)
            },
            false,
        );
        reference.0 |= racy;
        reference.1.extend(
            outcomes
                .into_iter()
                .filter(|o| o.registers.iter().all(|r| r.last() == Some(&1))),
        );
    }
    UNROLLED.with(|u| u.set(None));
    TAKE_BACK.with(|t| t.set(false));
    reference
}

/// Weaker than `SeqCst`, of every kind.
const WEAK: [Order; 4] = [Relaxed, Acquire, Release, AcqRel];

fn weak_instr() -> impl Strategy<Value = Instr> {
    prop_oneof![
        (0u32..2, prop::sample::select(vec![Relaxed, Acquire]))
            .prop_map(|(loc, order)| Instr::Load { loc, order, reg: 0 }),
        (
            0u32..2,
            1u64..3,
            prop::sample::select(vec![Relaxed, Release])
        )
            .prop_map(|(loc, value, order)| Instr::Store { loc, value, order }),
        (0u32..2, 0u64..3, prop::sample::select(WEAK.to_vec())).prop_map(|(loc, add, order)| {
            Instr::FetchAdd {
                loc,
                add,
                order,
                reg: 1,
            }
        }),
        prop::sample::select(vec![Acquire, Release]).prop_map(Instr::Fence),
    ]
}

/// A thread whose waiting loop's turn adds (one or two additions, a load or fence between
/// them or not) and waits for the value one of them read.
fn taking_back_thread() -> impl Strategy<Value = Vec<Instr>> {
    let add =
        (0u32..2, 0u64..3, prop::sample::select(WEAK.to_vec())).prop_map(|(loc, add, order)| {
            Instr::FetchAdd {
                loc,
                add,
                order,
                reg: 0,
            }
        });
    (
        prop::collection::vec(weak_instr(), 0..2),
        add,
        prop::option::of(prop_oneof![
            (0u32..2, prop::sample::select(vec![Relaxed, Acquire]))
                .prop_map(|(loc, order)| Instr::Load { loc, order, reg: 1 }),
            prop::sample::select(vec![Acquire, Release]).prop_map(Instr::Fence),
        ]),
        0u64..3,
        prop::collection::vec(weak_instr(), 0..2),
    )
        .prop_map(|(before, add, between, value, after)| {
            let mut instrs = before;
            instrs.push(add);
            instrs.extend(between);
            instrs.push(until(0, value));
            // The register keeps what the loop waited for: the reference reads it at the end.
            instrs.extend(after.into_iter().filter(|i| i.reg() != Some(0)));
            instrs
        })
}

/// A reader-writer lock's reader against a writer, the lock word's orders as spin 0.5.2's
/// `RwLock` has them: the writer takes the lock (adds 1) and gives it back (adds 1 again, to
/// 2 = unlocked for the reader's test); the reader adds 4 and takes it back while the low bit
/// is set.
#[test]
fn a_readers_turns_that_take_back_their_count_merge_without_an_outcome_gained_or_lost() {
    for (add, unlock) in [(Acquire, Release), (Relaxed, Relaxed), (AcqRel, Release)] {
        let p = Program {
            locations: vec![0, 0],
            threads: vec![
                vec![
                    Instr::FetchAdd {
                        loc: 0,
                        add: 1,
                        order: Acquire,
                        reg: 0,
                    },
                    Instr::Store {
                        loc: 1,
                        value: 1,
                        order: Relaxed,
                    },
                    Instr::FetchAdd {
                        loc: 0,
                        add: 1,
                        order: unlock,
                        reg: 1,
                    },
                ],
                vec![
                    Instr::FetchAdd {
                        loc: 0,
                        add: 4,
                        order: add,
                        reg: 0,
                    },
                    until(0, 2),
                    Instr::Load {
                        loc: 1,
                        order: Relaxed,
                        reg: 1,
                    },
                ],
            ],
        };
        let [merged, unrolled] = take_back_outcomes(&p, 4);
        assert_eq!(merged, unrolled, "on\n{p}");
        // The reader waited: its load after the loop reads the writer's store in some run.
        assert!(
            merged.1.iter().any(|o| o.registers[1][1] == 1),
            "{merged:?}"
        );
    }
}

/// A waiting thread whose turns add 4 and take it back, below a store of 2 another thread
/// placed above them, and a third thread that reads three times: it may read the end of one
/// turn (0), the next turn's 4, then the 2, which merging the turns must keep.
#[test]
fn a_reader_sees_the_turns_below_another_threads_store() {
    let load = |reg| Instr::Load {
        loc: 0,
        order: Relaxed,
        reg,
    };
    let p = Program {
        locations: vec![0],
        threads: vec![
            vec![
                Instr::FetchAdd {
                    loc: 0,
                    add: 4,
                    order: Relaxed,
                    reg: 0,
                },
                until(0, 2),
            ],
            vec![Instr::Store {
                loc: 0,
                value: 2,
                order: Relaxed,
            }],
            vec![load(0), load(1), load(2)],
        ],
    };
    let [merged, unrolled] = take_back_outcomes(&p, 4);
    assert_eq!(merged, unrolled, "on\n{p}");
    let sees = |reads: [u64; 3]| merged.1.iter().any(|o| o.registers[2][..3] == reads);
    assert!(sees([0, 4, 2]), "{merged:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Random programs of two or three threads, the first with a waiting loop whose failed
    /// turns add and take back: merged, the runs end with exactly the outcomes of the loop
    /// made straight-line with up to four failed turns.
    #[test]
    fn random_programs_whose_waiting_turns_take_back_what_they_add_merge_exactly(
        waiting in taking_back_thread(),
        others in prop::collection::vec(prop::collection::vec(weak_instr(), 1..3), 1..3),
    ) {
        let mut threads = vec![waiting];
        threads.extend(others);
        let p = Program { locations: vec![0, 0], threads };
        let [merged, unrolled] = take_back_outcomes(&p, 4);
        prop_assert_eq!(merged, unrolled, "on\n{}", p);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Two threads with waiting loops whose failed turns add and take back, beside one or no
    /// other thread: their turns interleave on a location (a round of both threads' turns
    /// repeating the round before it is left out), and where every run ends or merges, the
    /// runs end with exactly the outcomes of the loops made straight-line with up to three
    /// failed turns each. (Two threads' turns need not come in rounds that repeat: where they
    /// do not, the runs go on to the step limit, and the case says nothing.)
    #[test]
    fn random_programs_with_two_threads_taking_back_merge_exactly(
        first in taking_back_thread(),
        second in taking_back_thread(),
        others in prop::collection::vec(prop::collection::vec(weak_instr(), 1..3), 0..2),
    ) {
        let mut threads = vec![first, second];
        threads.extend(others);
        let p = Program { locations: vec![0, 0], threads };
        let merged = merged_take_back(&p, true);
        prop_assume!(merged.is_some());
        prop_assert_eq!(merged, Some(unrolled_take_back(&p, 3)), "on\n{}", p);
    }
}
