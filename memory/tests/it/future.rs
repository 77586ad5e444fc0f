//! Future keys ([`Execution::future_key`]): executions with equal keys offer the same choices
//! to every next access, on every state of random litmus programs.

use std::collections::HashMap;

use fgvt_memory::litmus::{
    brute_force, operational_with, reachable, Instr, Merge, OperationalOptions, Program,
};
use fgvt_memory::Order::{self, AcqRel, Acquire, Relaxed, Release, SeqCst};
use fgvt_memory::{Execution, Loc, Numbered, ThreadId};
use proptest::prelude::*;

/// Everything a next access of `thread` could be offered, as (value, place in mo) of each
/// store it could read, and each place a store could go: for every location and every order.
fn choices(x: &Execution, thread: ThreadId) -> Vec<Vec<(u64, usize)>> {
    let stores = |ids: Vec<fgvt_memory::StoreId>| -> Vec<(u64, usize)> {
        ids.into_iter()
            .map(|s| (x.value(s), x.mo_position(s)))
            .collect()
    };
    let mut all = Vec::new();
    for loc in 0..x.locations() as Loc {
        for order in [Relaxed, Acquire, SeqCst] {
            all.push(stores(x.load_candidates(thread, loc, order)));
        }
        for order in [Relaxed, Release, SeqCst] {
            let places = x.store_placements(thread, loc, order);
            all.push(places.into_iter().map(|p| (0, p)).collect());
        }
        for order in Order::ALL {
            all.push(stores(x.rmw_candidates(thread, loc, order)));
            for expected in 0..3 {
                let cas = x.cas_choices(thread, loc, expected, order, Relaxed);
                all.push(
                    cas.iter()
                        .map(|c| (u64::from(c.succeeds), x.mo_position(c.from)))
                        .collect(),
                );
            }
        }
    }
    all
}

fn instr() -> impl Strategy<Value = Instr> {
    let loc = 0u32..2;
    prop_oneof![
        (
            loc.clone(),
            prop::sample::select(vec![Relaxed, Acquire, SeqCst])
        )
            .prop_map(|(loc, order)| Instr::Load { loc, order, reg: 0 }),
        (
            loc.clone(),
            1u64..3,
            prop::sample::select(vec![Relaxed, Release, SeqCst])
        )
            .prop_map(|(loc, value, order)| Instr::Store { loc, value, order }),
        (loc, prop::sample::select(Order::ALL.to_vec())).prop_map(|(loc, order)| Instr::FetchAdd {
            loc,
            add: 1,
            order,
            reg: 1
        }),
        prop::sample::select(Order::ALL.to_vec()).prop_map(Instr::Fence),
    ]
}

/// The accesses a thread may try next, for [`same_futures`]: every kind on every location,
/// with the orders that change what happens after (the candidates of every order are in
/// [`choices`]).
fn menu(locations: u32) -> Vec<Instr> {
    let mut menu = Vec::new();
    for loc in 0..locations {
        menu.push(Instr::Load {
            loc,
            order: Relaxed,
            reg: 0,
        });
        menu.push(Instr::Load {
            loc,
            order: Acquire,
            reg: 0,
        });
        menu.push(Instr::Store {
            loc,
            value: 7,
            order: Relaxed,
        });
        menu.push(Instr::Store {
            loc,
            value: 7,
            order: Release,
        });
        menu.push(Instr::FetchAdd {
            loc,
            add: 1,
            order: AcqRel,
            reg: 0,
        });
    }
    menu.extend([Release, Acquire, SeqCst].map(Instr::Fence));
    menu
}

/// The executions `instr` by `thread` leads to, one per choice, in the order offered.
fn take(x: &Execution, thread: ThreadId, instr: Instr) -> Vec<Execution> {
    let forks = |n: usize, apply: &dyn Fn(&mut Execution, usize)| -> Vec<Execution> {
        (0..n)
            .map(|i| {
                let mut next = x.clone();
                apply(&mut next, i);
                next
            })
            .collect()
    };
    match instr {
        Instr::Load { loc, order, .. } => {
            let c = x.load_candidates(thread, loc, order);
            forks(c.len(), &|y, i| {
                y.load(thread, loc, order, c[i]);
            })
        }
        Instr::Store { loc, value, order } => {
            let c = x.store_placements(thread, loc, order);
            forks(c.len(), &|y, i| {
                y.store(thread, loc, value, order, c[i]);
            })
        }
        Instr::FetchAdd {
            loc, add, order, ..
        } => {
            let c = x.rmw_candidates(thread, loc, order);
            forks(c.len(), &|y, i| {
                y.rmw(thread, loc, order, c[i], |v| v + add);
            })
        }
        Instr::Fence(order) => forks(1, &|y, _| y.fence(thread, order)),
        Instr::Cas { .. } | Instr::Read { .. } | Instr::Write { .. } | Instr::SkipUnless { .. } => {
            unreachable!("not on the menu")
        }
    }
}

/// Checks that `a` and `b` have the same future `depth` accesses deep: every access of every
/// thread is offered the same choices in both, and each choice leads to executions with the
/// same future again. (Their keys after a step may differ where the equal ones were merged
/// views and a `SeqCst` access makes the key the whole graph: equal futures, finer keys.)
fn same_futures(a: &Execution, b: &Execution, depth: usize) -> Result<(), TestCaseError> {
    if depth == 0 {
        return Ok(());
    }
    for thread in 0..a.threads() {
        prop_assert_eq!(
            choices(a, thread),
            choices(b, thread),
            "T{}:\n{:?}\n{:?}",
            thread,
            a,
            b
        );
        for instr in menu(a.locations() as u32) {
            for (x, y) in take(a, thread, instr).iter().zip(&take(b, thread, instr)) {
                same_futures(x, y, depth - 1)?;
            }
        }
    }
    Ok(())
}

/// Random programs that make the views matter: a reader that reads a location twice into one
/// register (its second read hides what the first saw, not what the view learned), fences.
fn program() -> impl Strategy<Value = Program> {
    prop::collection::vec(prop::collection::vec(instr(), 1..6), 2..4).prop_map(|threads| Program {
        locations: vec![0, 0],
        threads,
    })
}

/// Two reachable states of `p` whose threads are at the same instructions and whose executions
/// have the same future key (all threads live) have the same futures, two accesses deep.
fn equal_keys_have_equal_futures(p: &Program) -> Result<(), TestCaseError> {
    let mut by_key: HashMap<(Vec<u64>, Vec<usize>), Execution> = HashMap::new();
    let mut checked = 0;
    for (x, next) in reachable(p) {
        let key = x.future_key(&Numbered, |_| true);
        match by_key.get(&(key.clone(), next.clone())) {
            // A few pairs per program: each check tries every access twice over.
            Some(first) if checked < 2 && first != &x => {
                checked += 1;
                same_futures(first, &x, 2)?;
            }
            Some(_) => {}
            None => {
                by_key.insert((key, next), x);
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Two reachable states whose threads are at the same instructions and whose executions
    /// have the same future key (all threads live) have the same futures, two accesses deep.
    #[test]
    fn equal_future_keys_have_equal_futures(p in program()) {
        equal_keys_have_equal_futures(&p)?;
    }
}

/// A relaxed spin: T1 reads the flag over and over while T0 sets it. A turn that read the same
/// store as the one before leaves the key as it was, though the graph grew by a load.
#[test]
fn a_load_that_saw_nothing_new_leaves_the_key_as_it_was() {
    let mut x = Execution::new(2);
    let flag = x.add_location(0);
    x.store(0, flag, 1, Relaxed, 0);
    let live = |_| true;
    // T1 reads the initial 0 (stale): allowed with relaxed orders.
    x.load(1, flag, Relaxed, x.initial(flag));
    let once = x.future_key(&Numbered, live);
    x.load(1, flag, Relaxed, x.initial(flag));
    assert_eq!(
        x.future_key(&Numbered, live),
        once,
        "a second stale read changes nothing"
    );
    // Reading the 1 moves T1's view: it can never read 0 again.
    x.load(1, flag, Relaxed, x.latest(flag));
    assert_ne!(x.future_key(&Numbered, live), once);
    assert_eq!(x.load_candidates(1, flag, Relaxed), [x.latest(flag)]);
    let twice = x.future_key(&Numbered, live);
    x.load(1, flag, Relaxed, x.latest(flag));
    assert_eq!(x.future_key(&Numbered, live), twice);
}

/// While a `SeqCst` event of a thread is not known to every live thread, the key is the
/// graph: two stale reads of different locations are then two states, though a repeated load
/// (a spin loop's turn that read what the last one read) leaves it as it was.
#[test]
fn an_unsettled_seq_cst_event_keeps_the_whole_graph() {
    let mut x = Execution::new(2);
    let (a, b, c) = (x.add_location(0), x.add_location(0), x.add_location(0));
    x.store(0, a, 1, SeqCst, 0);
    x.store(0, b, 1, Relaxed, 0);
    x.store(0, c, 1, Relaxed, 0);
    let live = |_| true;
    x.load(1, b, Relaxed, x.initial(b));
    let once = x.future_key(&Numbered, live);
    x.load(1, b, Relaxed, x.initial(b));
    assert_eq!(
        x.future_key(&Numbered, live),
        once,
        "a repeated load is left out"
    );
    x.load(1, c, Relaxed, x.initial(c));
    let other = x.future_key(&Numbered, live);
    x.load(1, b, Relaxed, x.initial(b));
    assert_ne!(x.future_key(&Numbered, live), other, "the graph grew");
    // Once T0 is done, its SeqCst store is settled for the only live thread? Not yet: T1 has
    // not synchronized with it. After an acquire read of it, it has.
    let mut y = x.clone();
    y.load(1, a, Acquire, y.latest(a));
    let settled = y.future_key(&Numbered, |t| t == 1);
    y.load(1, b, Relaxed, y.latest(b));
    let later = y.future_key(&Numbered, |t| t == 1);
    y.load(1, b, Relaxed, y.latest(b));
    assert_eq!(y.future_key(&Numbered, |t| t == 1), later);
    assert_ne!(settled, later);
}

/// A spin loop's turn of several events (Peterson's: the other's flag and the turn, `SeqCst`,
/// here with a fence between): a turn that read what the turn before read leaves the graph key
/// as it was, one that read a newer store does not, and neither does a turn of a different
/// shape.
#[test]
fn a_turn_of_seq_cst_reads_that_saw_nothing_new_leaves_the_key_as_it_was() {
    let mut x = Execution::new(2);
    let (flag, turn) = (x.add_location(0), x.add_location(0));
    x.store(0, flag, 1, SeqCst, 0);
    x.store(0, turn, 1, SeqCst, 0);
    let live = |_| true;
    let spin = |x: &mut Execution, flag_from, turn_from| {
        x.load(1, flag, SeqCst, flag_from);
        x.fence(1, SeqCst);
        x.load(1, turn, SeqCst, turn_from);
    };
    let (old_flag, old_turn) = (x.initial(flag), x.initial(turn));
    spin(&mut x, old_flag, old_turn);
    let once = x.future_key(&Numbered, live);
    for _ in 0..3 {
        spin(&mut x, old_flag, old_turn);
        assert_eq!(
            x.future_key(&Numbered, live),
            once,
            "a turn that saw nothing new"
        );
    }
    let mut newer = x.clone();
    let t0_turn = newer.latest(turn);
    spin(&mut newer, old_flag, t0_turn);
    assert_ne!(
        newer.future_key(&Numbered, live),
        once,
        "a turn that read T0's turn"
    );
    let mut shorter = x.clone();
    shorter.load(1, flag, SeqCst, old_flag);
    shorter.load(1, turn, SeqCst, old_turn);
    assert_ne!(
        shorter.future_key(&Numbered, live),
        once,
        "a turn without the fence"
    );
}

/// Two executions that differ only in one view: T0 reads `x` (stale in `a`, fresh in `b`),
/// publishes `y` with a release store, then reads `x` fresh in both. T0's own view ends equal;
/// what a reader of `y` acquires does not, so the keys must differ, and do: an acquire reader
/// of `y` may still read the stale `x` in `a` only.
#[test]
fn a_store_carries_its_release_view() {
    let build = |fresh_first: bool| {
        let mut x = Execution::new(3);
        let (loc_x, loc_y) = (x.add_location(0), x.add_location(0));
        x.store(2, loc_x, 1, Relaxed, 0);
        let first = if fresh_first {
            x.latest(loc_x)
        } else {
            x.initial(loc_x)
        };
        x.load(0, loc_x, Relaxed, first);
        x.store(0, loc_y, 1, Release, 0);
        x.load(0, loc_x, Relaxed, x.latest(loc_x));
        (x, loc_x, loc_y)
    };
    let ((mut a, lx, ly), (mut b, _, _)) = (build(false), build(true));
    assert_ne!(
        a.future_key(&Numbered, |_| true),
        b.future_key(&Numbered, |_| true)
    );
    for x in [&mut a, &mut b] {
        let flag = x.latest(ly);
        x.load(1, ly, Acquire, flag);
    }
    assert_eq!(a.load_candidates(1, lx, Relaxed).len(), 2);
    assert_eq!(b.load_candidates(1, lx, Relaxed).len(), 1);
}

/// A relaxed read of a release store leaves what it would synchronize with for the thread's
/// next acquire fence: two executions whose reader read the flag's release store in one and
/// the initial flag in the other, then read the flag's latest store relaxed in both, differ.
#[test]
fn a_thread_keeps_what_its_next_acquire_fence_acquires() {
    let build = |read_release: bool| {
        let mut x = Execution::new(2);
        let (data, flag) = (x.add_location(0), x.add_location(0));
        x.store(0, data, 1, Relaxed, 0);
        x.store(0, flag, 1, Release, 0);
        x.store(0, flag, 2, Relaxed, 1);
        // Reads the release store of 1 (a) or the initial 0 (b), into one register.
        let stores = x.modification_order(flag);
        x.load(
            1,
            flag,
            Relaxed,
            if read_release { stores[1] } else { stores[0] },
        );
        (x, data)
    };
    let ((mut a, data), (mut b, _)) = (build(true), build(false));
    assert_ne!(
        a.future_key(&Numbered, |_| true),
        b.future_key(&Numbered, |_| true)
    );
    a.fence(1, Acquire);
    b.fence(1, Acquire);
    assert_eq!(a.load_candidates(1, data, Relaxed).len(), 1);
    assert_eq!(b.load_candidates(1, data, Relaxed).len(), 2);
}

/// A release fence is a release head for the thread's later relaxed stores: what happened
/// before the fence is what their acquire readers see.
#[test]
fn a_release_fence_heads_the_later_stores_release_sequences() {
    let build = |fence_after_read: bool| {
        let mut x = Execution::new(3);
        let (data, flag) = (x.add_location(0), x.add_location(0));
        x.store(2, data, 1, Relaxed, 0);
        // T0 reads the data's 1 before or after its fence, then publishes with a relaxed store.
        if fence_after_read {
            x.load(0, data, Relaxed, x.latest(data));
            x.fence(0, Release);
        } else {
            x.fence(0, Release);
            x.load(0, data, Relaxed, x.latest(data));
        }
        (x, data, flag)
    };
    let ((mut a, data, flag), (mut b, _, _)) = (build(true), build(false));
    assert_ne!(
        a.future_key(&Numbered, |_| true),
        b.future_key(&Numbered, |_| true)
    );
    for x in [&mut a, &mut b] {
        x.store(0, flag, 1, Relaxed, 0);
        let published = x.latest(flag);
        x.load(1, flag, Acquire, published);
    }
    assert_eq!(a.load_candidates(1, data, Relaxed).len(), 1);
    assert_eq!(b.load_candidates(1, data, Relaxed).len(), 2);
}

/// Stores that every live thread has seen past are gone from the future: a writer that
/// stored `1` twice, once its reader has read the second, is the writer that stored it once.
#[test]
fn stores_every_live_thread_has_passed_are_forgotten() {
    let run = |stores: usize, read_latest: bool| {
        let mut x = Execution::new(2);
        let loc = x.add_location(0);
        for at in 0..stores {
            x.store(0, loc, 1, Relaxed, at);
        }
        let read = if read_latest {
            x.latest(loc)
        } else {
            x.modification_order(loc)[1]
        };
        x.load(1, loc, Relaxed, read);
        x
    };
    let reader = |t: ThreadId| t == 1;
    let once = run(1, true).future_key(&Numbered, reader);
    assert_eq!(run(2, true).future_key(&Numbered, reader), once);
    // A reader that read the first 1 may still read the second: both stay.
    assert_ne!(run(2, false).future_key(&Numbered, reader), once);
}

/// A reader-writer lock's reader, thread 0, turning while the writer, thread 1, holds the lock
/// word (location 0) and has not looked at it since: `turns` turns of a `fetch_add(4)` and,
/// with `undo`, the `fetch_sub(4)` that takes it back; with `look`, the writer then loads the
/// word's newest store.
fn reader_turns(turns: usize, undo: bool, look: bool) -> Execution {
    let mut x = Execution::new(2);
    let word = x.add_location(0);
    let init = x.latest(word);
    x.rmw(1, word, Acquire, init, |v| v + 1);
    for _ in 0..turns {
        let (_, added) = x.rmw(0, word, Acquire, x.latest(word), |v| v + 4);
        if undo {
            x.rmw(0, word, Release, added, |v| v - 4);
        }
    }
    if look {
        x.load(1, word, Relaxed, x.latest(word));
    }
    x
}

/// A turn that puts back what it changed, repeating the turn before it, is left out of the
/// key (`turns`): the reader that turned once, twice or five times has one future. The writer
/// may still read any turn's stores, each of which is one of the first turn's again.
#[test]
fn a_turn_that_takes_back_what_it_added_leaves_the_key_as_it_was() {
    let key = |x: &Execution| x.future_key(&Numbered, |_| true);
    let once = key(&reader_turns(1, true, false));
    assert_ne!(key(&reader_turns(0, true, false)), once);
    for turns in [2, 3, 5] {
        assert_eq!(
            key(&reader_turns(turns, true, false)),
            once,
            "{turns} turns"
        );
    }
}

/// A turn whose store leaves another value is no repeat (a counter that counts its turns):
/// its key stays apart.
#[test]
fn a_turn_that_changes_the_value_is_kept() {
    let key = |x: &Execution| x.future_key(&Numbered, |_| true);
    assert_ne!(
        key(&reader_turns(2, false, false)),
        key(&reader_turns(1, false, false))
    );
}

/// A program whose threads repeat each of their loads one to three times, as a spin loop's turns
/// do: where a `SeqCst` event is unsettled the key is the graph with repeated loads left out.
fn spinning_program() -> impl Strategy<Value = Program> {
    let thread = prop::collection::vec((instr(), 1usize..4), 1..4).prop_map(|instrs| {
        instrs
            .into_iter()
            .flat_map(|(instr, times)| {
                let times = if matches!(instr, Instr::Load { .. }) {
                    times
                } else {
                    1
                };
                std::iter::repeat_n(instr, times)
            })
            .collect::<Vec<Instr>>()
    });
    prop::collection::vec(thread, 2..4).prop_map(|threads| Program {
        locations: vec![0, 0],
        threads,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// With repeated loads left out of graph keys, merging states by future key still reaches
    /// exactly the outcomes the axioms allow, and equal keys still have equal futures.
    #[test]
    fn repeated_loads_merge_without_losing_an_outcome(p in spinning_program()) {
        let merged = operational_with(
            &p,
            OperationalOptions { seq_cst_shortcut: true, merge: Merge::Future },
        );
        prop_assert_eq!(merged, brute_force(&p), "on\n{}", p);
        equal_keys_have_equal_futures(&p)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// An execution cleared after another program's largest state (its tables wider and longer
    /// than a new one's) is the new execution again: the same graph, the same key, and the same
    /// choices for every access two deep. What lets fgvt-sync reuse one graph run after run.
    #[test]
    fn a_cleared_execution_has_the_future_of_a_new_one(used in program(), threads in 2usize..4) {
        let mut cleared = reachable(&used)
            .into_iter()
            .map(|(x, _)| x)
            .max_by_key(|x| x.len())
            .expect("the initial state is reachable");
        cleared.clear(threads);
        let mut new = Execution::new(threads);
        for x in [&mut cleared, &mut new] {
            x.add_location(0);
            x.add_location(1);
        }
        prop_assert!(cleared == new);
        prop_assert_eq!(cleared.future_key(&Numbered, |_| true), new.future_key(&Numbered, |_| true));
        same_futures(&new, &cleared, 2)?;
    }
}
