//! The runtime's way through the model (every interleaving, every candidate the execution
//! offers) against the axioms enumerated by brute force, on the classic litmus tests with every
//! combination of orders and on small random programs.

use std::collections::BTreeSet;

use fgvt_memory::litmus::{
    self, brute_force, brute_force_races, operational, operational_with, races, Instr, Merge,
    OperationalOptions, Outcome, Pattern, Program, IRIW_WEAK, LB_WEAK, MP_WEAK, SB_WEAK,
    TWO_PLUS_TWO_W_WEAK,
};
use fgvt_memory::Order::{self, AcqRel, Acquire, Relaxed, Release, SeqCst};
use proptest::prelude::*;

const LOADS: [Order; 3] = [Relaxed, Acquire, SeqCst];
const STORES: [Order; 3] = [Relaxed, Release, SeqCst];
const FENCES: [Option<Order>; 5] = [
    None,
    Some(Release),
    Some(Acquire),
    Some(AcqRel),
    Some(SeqCst),
];

/// The outcomes of `p` by brute force, after checking that running it gives the same ones,
/// with the all-`SeqCst` shortcut and without, and merging states by their future keys.
fn agreed(p: &Program) -> BTreeSet<Outcome> {
    let axioms = brute_force(p);
    assert!(!axioms.is_empty(), "no consistent execution of\n{p}");
    let run = operational(p);
    assert_eq!(run, axioms, "running disagrees with the axioms on\n{p}");
    let unshortened = operational_with(
        p,
        OperationalOptions {
            seq_cst_shortcut: false,
            merge: Merge::Graph,
        },
    );
    assert_eq!(
        unshortened, axioms,
        "the SeqCst shortcut changes the outcomes of\n{p}"
    );
    let merged = operational_with(
        p,
        OperationalOptions {
            seq_cst_shortcut: true,
            merge: Merge::Future,
        },
    );
    assert_eq!(
        merged, axioms,
        "merging by future keys changes the outcomes of\n{p}"
    );
    axioms
}

/// Checks that `p`'s weak outcome is allowed exactly when `allowed` says, both ways.
fn weak(p: &Program, pattern: Pattern, allowed: bool) {
    let outcomes = agreed(p);
    assert_eq!(
        pattern.allowed_in(&outcomes),
        allowed,
        "weak outcome {} for\n{p}",
        if allowed { "missing" } else { "allowed" }
    );
}

#[test]
fn message_passing_needs_a_release_flag_store_read_by_an_acquire_load() {
    for data in STORES {
        for flag in STORES {
            for load_flag in LOADS {
                for load_data in LOADS {
                    let p = litmus::mp(data, flag, load_flag, load_data);
                    let synchronized = flag.is_release() && load_flag.is_acquire();
                    weak(&p, MP_WEAK, !synchronized);
                }
            }
        }
    }
}

#[test]
fn message_passing_through_fences_needs_both_of_them() {
    let release = |f: Option<Order>| f.is_some_and(Order::is_release);
    let acquire = |f: Option<Order>| f.is_some_and(Order::is_acquire);
    for writer in FENCES {
        for reader in FENCES {
            let p = litmus::mp_fenced(writer, reader);
            weak(&p, MP_WEAK, !(release(writer) && acquire(reader)));
        }
    }
}

#[test]
fn store_buffering_is_forbidden_only_when_all_four_accesses_are_seq_cst() {
    for store_x in STORES {
        for load_y in LOADS {
            for store_y in STORES {
                for load_x in LOADS {
                    let p = litmus::sb(store_x, load_y, store_y, load_x);
                    let all = [store_x, load_y, store_y, load_x]
                        .iter()
                        .all(|o| o.is_seq_cst());
                    weak(&p, SB_WEAK, !all);
                }
            }
        }
    }
}

#[test]
fn store_buffering_through_fences_needs_two_seq_cst_fences() {
    for f0 in FENCES {
        for f1 in FENCES {
            let p = litmus::sb_fenced(f0, f1);
            weak(&p, SB_WEAK, !(f0 == Some(SeqCst) && f1 == Some(SeqCst)));
        }
    }
}

#[test]
fn load_buffering_is_never_allowed() {
    for load_x in LOADS {
        for store_y in STORES {
            for load_y in LOADS {
                for store_x in STORES {
                    weak(
                        &litmus::lb(load_x, store_y, load_y, store_x),
                        LB_WEAK,
                        false,
                    );
                }
            }
        }
    }
}

#[test]
fn iriw_is_forbidden_only_when_all_six_accesses_are_seq_cst() {
    for store_x in STORES {
        for store_y in STORES {
            for l0 in LOADS {
                for l1 in LOADS {
                    for l2 in LOADS {
                        for l3 in LOADS {
                            let p = litmus::iriw(store_x, store_y, l0, l1, l2, l3);
                            let all = [store_x, store_y, l0, l1, l2, l3]
                                .iter()
                                .all(|o| o.is_seq_cst());
                            weak(&p, IRIW_WEAK, !all);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn iriw_through_fences_needs_two_seq_cst_fences() {
    for f2 in FENCES {
        for f3 in FENCES {
            let p = litmus::iriw_fenced(f2, f3);
            weak(&p, IRIW_WEAK, !(f2 == Some(SeqCst) && f3 == Some(SeqCst)));
        }
    }
}

#[test]
fn two_plus_two_w_is_forbidden_only_when_all_four_stores_are_seq_cst() {
    for x1 in STORES {
        for y2 in STORES {
            for y1 in STORES {
                for x2 in STORES {
                    let p = litmus::two_plus_two_w(x1, y2, y1, x2);
                    let all = [x1, y2, y1, x2].iter().all(|o| o.is_seq_cst());
                    weak(&p, TWO_PLUS_TWO_W_WEAK, !all);
                }
            }
        }
    }
}

/// A release sequence: T0 publishes `x` with a release store of the flag, T1 bumps the flag
/// with a relaxed RMW, T2 reads the bumped flag with an acquire load. The RMW continues T0's
/// release sequence, so T2 synchronizes with T0 and must see the data.
#[test]
fn an_rmw_continues_the_release_sequence_of_what_it_read() {
    let (x, flag) = (0, 1);
    let p = Program {
        locations: vec![0, 0],
        threads: vec![
            vec![
                Instr::Store {
                    loc: x,
                    value: 1,
                    order: Relaxed,
                },
                Instr::Store {
                    loc: flag,
                    value: 1,
                    order: Release,
                },
            ],
            vec![Instr::FetchAdd {
                loc: flag,
                add: 1,
                order: Relaxed,
                reg: 0,
            }],
            vec![
                Instr::Load {
                    loc: flag,
                    order: Acquire,
                    reg: 0,
                },
                Instr::Load {
                    loc: x,
                    order: Relaxed,
                    reg: 1,
                },
            ],
        ],
    };
    let outcomes = agreed(&p);
    // T2 read 2: the RMW read T0's release store, so the data is there.
    let stale = Pattern {
        registers: &[(2, 0, 2), (2, 1, 0)],
        memory: &[],
    };
    assert!(!stale.allowed_in(&outcomes));
    // Without the release on the flag, it may be stale.
    let mut relaxed = p.clone();
    relaxed.threads[0][1] = Instr::Store {
        loc: flag,
        value: 1,
        order: Relaxed,
    };
    assert!(stale.allowed_in(&agreed(&relaxed)));
}

/// Two RMWs on one location never read the same store: `fetch_add`s by three threads leave 3.
#[test]
fn rmws_never_lose_an_update_whatever_their_orders() {
    for order in Order::ALL {
        let add = |_| {
            vec![Instr::FetchAdd {
                loc: 0,
                add: 1,
                order,
                reg: 0,
            }]
        };
        let p = Program {
            locations: vec![0],
            threads: (0..3).map(add).collect(),
        };
        let outcomes = agreed(&p);
        assert!(
            outcomes.iter().all(|o| o.memory == [3]),
            "{order}: {outcomes:?}"
        );
        // Each thread saw a different old value: 0, 1 and 2 in some order.
        for o in &outcomes {
            let mut seen: Vec<u64> = (0..3).map(|t| o.register(t, 0)).collect();
            seen.sort_unstable();
            assert_eq!(seen, [0, 1, 2]);
        }
    }
}

/// One instruction of a random program: 2 locations, small values, any valid order.
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

fn program() -> impl Strategy<Value = Program> {
    prop::collection::vec(prop::collection::vec(instr(), 1..4), 2..4).prop_map(|threads| Program {
        locations: vec![0, 0],
        threads,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    /// Running a program through the candidate methods reaches exactly the outcomes of the
    /// consistent complete graphs, with and without the all-`SeqCst` shortcut.
    #[test]
    fn running_a_random_program_gives_exactly_the_axioms_outcomes(p in program()) {
        agreed(&p);
    }
}

/// `p`'s verdict on data races, after checking that running it agrees with the axioms on its
/// outcomes (plain accesses as relaxed ones): whether it races, and its race-free outcomes.
fn races_of(p: &Program) -> (bool, BTreeSet<Outcome>) {
    agreed(p);
    let races = brute_force_races(p);
    (races.racy, races.race_free)
}

/// Every race-free outcome where the reader saw the data published (`r0 == seen`) read it
/// (`r1 == 1`).
fn reads_what_was_published(outcomes: &BTreeSet<Outcome>, seen: u64) -> bool {
    outcomes
        .iter()
        .filter(|o| o.register(1, 0) == seen)
        .all(|o| o.register(1, 1) == 1)
}

#[test]
fn plain_data_published_by_a_flag_races_unless_the_flag_synchronizes() {
    for store_flag in STORES {
        for load_flag in LOADS {
            let p = races::mp_plain(store_flag, load_flag);
            let (racy, race_free) = races_of(&p);
            let synchronizes = store_flag.is_release() && load_flag.is_acquire();
            assert_eq!(racy, !synchronizes, "{p}");
            // The runs where the reader does not see the flag never race, whatever the orders.
            assert!(race_free.iter().any(|o| o.register(1, 0) == 0), "{p}");
            assert!(reads_what_was_published(&race_free, 1), "{p}");
        }
    }
}

#[test]
fn plain_data_published_between_fences_races_unless_both_fences_are_there() {
    for writer in FENCES {
        for reader in FENCES {
            let p = races::mp_plain_fenced(writer, reader);
            let (racy, race_free) = races_of(&p);
            let synchronizes =
                writer.is_some_and(Order::is_release) && reader.is_some_and(Order::is_acquire);
            assert_eq!(racy, !synchronizes, "{p}");
            assert!(reads_what_was_published(&race_free, 1), "{p}");
        }
    }
}

#[test]
fn a_node_published_by_a_compare_exchange_races_unless_it_is_a_release_read_by_an_acquire() {
    for publish in Order::ALL {
        for load in LOADS {
            let p = races::cas_publish(publish, load);
            let (racy, race_free) = races_of(&p);
            assert_eq!(racy, !(publish.is_release() && load.is_acquire()), "{p}");
            assert!(reads_what_was_published(&race_free, 1), "{p}");
        }
    }
}

#[test]
fn a_cell_behind_a_lock_races_unless_it_is_taken_with_acquire_and_released_with_release() {
    for lock in Order::ALL {
        for unlock in STORES {
            let p = races::locked_cell(lock, unlock);
            let (racy, race_free) = races_of(&p);
            assert_eq!(racy, !(lock.is_acquire() && unlock.is_release()), "{p}");
            // Whoever takes the lock second sees what the first left.
            assert!(!race_free.is_empty(), "{p}");
        }
    }
}

#[test]
fn two_unordered_plain_writes_race() {
    let (racy, race_free) = races_of(&races::unsynchronized());
    assert!(racy);
    assert!(race_free.is_empty());
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// With plain accesses and branches too, running a program reaches exactly the outcomes of
    /// the consistent complete graphs; the race-free ones are among them.
    #[test]
    fn running_a_random_program_with_plain_memory_gives_the_axioms_outcomes(
        threads in prop::collection::vec(prop::collection::vec(plain_instr(), 1..5), 2..4)
    ) {
        let p = Program { locations: vec![0, 0], threads };
        let outcomes = agreed(&p);
        let races = brute_force_races(&p);
        prop_assert!(races.race_free.is_subset(&outcomes));
        prop_assert!(races.racy || races.race_free == outcomes, "{}", p);
    }
}
