//! Litmus tests of plain (non-atomic) memory: whether some consistent execution has a data race
//! ([`brute_force_races`](super::brute_force_races) decides it by the definitions).
//!
//! Location 0 (`d`) is the plain data, the others atomics, all initially 0. A reader reads the
//! data only once it has seen it published (a [`Instr::SkipUnless`]): without the branch, the run
//! where it reads first would race whatever the orders. Under RC11:
//!
//! | test | race-free iff |
//! |---|---|
//! | [`mp_plain`] | the flag store is `Release` or stronger and the flag load `Acquire` or stronger |
//! | [`mp_plain_fenced`] | both fences are there (release side, acquire side) |
//! | [`cas_publish`] | the publishing compare-exchange is a release and the load an acquire |
//! | [`locked_cell`] | the lock is taken with an acquire and released with a release |
//! | [`unsynchronized`] | never: two threads write the data and nothing orders them |

use super::{Instr, Program};
use crate::Order;

/// The plain data.
const D: u32 = 0;
/// The flag, the pointer, the lock word.
const F: u32 = 1;

/// A reader of published data: `r0 := f (load); if r0 == 1 { r1 := d (plain) }`.
fn published_reader(load: Order) -> Vec<Instr> {
    vec![
        Instr::Load {
            loc: F,
            order: load,
            reg: 0,
        },
        skip_unless(0, 1, 1),
        Instr::Read { loc: D, reg: 1 },
    ]
}

fn skip_unless(reg: usize, value: u64, skip: usize) -> Instr {
    Instr::SkipUnless { reg, value, skip }
}

/// Message passing with plain data:
///
/// ```text
/// T0: d := 1 (plain); f := 1 (store_flag)
/// T1: r0 := f (load_flag); if r0 == 1 { r1 := d (plain) }
/// ```
///
/// Race-free exactly when the flag's store and load synchronize; then `r1` is 1 whenever `r0`
/// is.
pub fn mp_plain(store_flag: Order, load_flag: Order) -> Program {
    Program {
        locations: vec![0, 0],
        threads: vec![
            vec![
                Instr::Write { loc: D, value: 1 },
                Instr::Store {
                    loc: F,
                    value: 1,
                    order: store_flag,
                },
            ],
            published_reader(load_flag),
        ],
    }
}

/// Message passing with plain data and relaxed flag accesses between fences:
///
/// ```text
/// T0: d := 1 (plain); fence(writer_fence); f := 1 (Relaxed)
/// T1: r0 := f (Relaxed); if r0 == 1 { fence(reader_fence); r1 := d (plain) }
/// ```
///
/// (a `None` fence is left out). Race-free exactly when the writer's fence is `Release` or
/// stronger and the reader's `Acquire` or stronger.
pub fn mp_plain_fenced(writer_fence: Option<Order>, reader_fence: Option<Order>) -> Program {
    let relaxed = Order::Relaxed;
    let mut writer = vec![Instr::Write { loc: D, value: 1 }];
    writer.extend(writer_fence.map(Instr::Fence));
    writer.push(Instr::Store {
        loc: F,
        value: 1,
        order: relaxed,
    });
    let mut guarded: Vec<Instr> = reader_fence.map(Instr::Fence).into_iter().collect();
    guarded.push(Instr::Read { loc: D, reg: 1 });
    let mut reader = vec![
        Instr::Load {
            loc: F,
            order: relaxed,
            reg: 0,
        },
        skip_unless(0, 1, guarded.len()),
    ];
    reader.extend(guarded);
    Program {
        locations: vec![0, 0],
        threads: vec![writer, reader],
    }
}

/// A node published by a compare-exchange, as a lock-free stack's push does:
///
/// ```text
/// T0: d := 1 (plain: the new node's field); r0 := cas(f, 0 → 1) (publish, Relaxed on failure)
/// T1: r0 := f (load); if r0 == 1 { r1 := d (plain) }
/// ```
///
/// Race-free exactly when the compare-exchange is a release and the load an acquire.
pub fn cas_publish(publish: Order, load: Order) -> Program {
    Program {
        locations: vec![0, 0],
        threads: vec![
            vec![
                Instr::Write { loc: D, value: 1 },
                Instr::Cas {
                    loc: F,
                    expected: 0,
                    new: 1,
                    success: publish,
                    failure: Order::Relaxed,
                    reg: 0,
                },
            ],
            published_reader(load),
        ],
    }
}

/// A cell behind a lock word taken with a compare-exchange, by two threads that each give up
/// if it is held:
///
/// ```text
/// T0: r0 := cas(f, 0 → 1) (lock); if r0 == 0 { d := 1 (plain); f := 0 (unlock) }
/// T1: r0 := cas(f, 0 → 1) (lock); if r0 == 0 { r1 := d (plain); f := 0 (unlock) }
/// ```
///
/// Race-free exactly when the lock is taken with an acquire (or stronger) and released with a
/// release: the second holder then happens after the first one's unlock.
pub fn locked_cell(lock: Order, unlock: Order) -> Program {
    let take = Instr::Cas {
        loc: F,
        expected: 0,
        new: 1,
        success: lock,
        failure: Order::Relaxed,
        reg: 0,
    };
    let release = Instr::Store {
        loc: F,
        value: 0,
        order: unlock,
    };
    Program {
        locations: vec![0, 0],
        threads: vec![
            vec![
                take,
                skip_unless(0, 0, 2),
                Instr::Write { loc: D, value: 1 },
                release,
            ],
            vec![
                take,
                skip_unless(0, 0, 2),
                Instr::Read { loc: D, reg: 1 },
                release,
            ],
        ],
    }
}

/// Two threads that write the data with nothing between them: always a race.
///
/// ```text
/// T0: d := 1 (plain)
/// T1: d := 2 (plain)
/// ```
pub fn unsynchronized() -> Program {
    Program {
        locations: vec![0],
        threads: vec![
            vec![Instr::Write { loc: D, value: 1 }],
            vec![Instr::Write { loc: D, value: 2 }],
        ],
    }
}
