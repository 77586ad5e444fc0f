//! The classic litmus tests, with the orders of their accesses as parameters.
//!
//! Each test has two locations, `x` (location 0) and `y` (location 1), both initially 0, except
//! IRIW and 2+2W, laid out as documented. The orders are given thread by thread, in program
//! order. Each comes with the [`Pattern`] of its *weak* outcome: the one no interleaving of the
//! threads produces, which weaker orders may allow. Under RC11:
//!
//! | test | weak outcome forbidden iff |
//! |---|---|
//! | [`mp`] | the flag store is `Release` or stronger and the flag load `Acquire` or stronger |
//! | [`sb`] | all four accesses are `SeqCst` |
//! | [`lb`] | always (`po ∪ rf` is acyclic) |
//! | [`iriw`] | all six accesses are `SeqCst` |
//! | [`two_plus_two_w`] | all four stores are `SeqCst` |
//! | [`mp_fenced`] | both fences are there (release side, acquire side) |
//! | [`sb_fenced`] | both fences are `SeqCst` |
//! | [`iriw_fenced`] | both readers' fences are `SeqCst` |

use super::{Instr, Pattern, Program};
use crate::Order;

const X: u32 = 0;
const Y: u32 = 1;

fn load(loc: u32, order: Order, reg: usize) -> Instr {
    Instr::Load { loc, order, reg }
}

fn store(loc: u32, value: u64, order: Order) -> Instr {
    Instr::Store { loc, value, order }
}

/// A fence if there is an order, else nothing.
fn fence(order: Option<Order>) -> Option<Instr> {
    order.map(Instr::Fence)
}

/// Message passing:
///
/// ```text
/// T0: x := 1 (store_data); y := 1 (store_flag)
/// T1: r0 := y (load_flag); r1 := x (load_data)
/// ```
///
/// Weak outcome ([`MP_WEAK`]): T1 sees the flag but not the data, `r0 = 1, r1 = 0`. RC11
/// forbids it exactly when the flag store is a release and the flag load an acquire: they then
/// synchronize, the data store happens before the data load, and coherence forbids reading the
/// older initial store.
pub fn mp(store_data: Order, store_flag: Order, load_flag: Order, load_data: Order) -> Program {
    Program {
        locations: vec![0, 0],
        threads: vec![
            vec![store(X, 1, store_data), store(Y, 1, store_flag)],
            vec![load(Y, load_flag, 0), load(X, load_data, 1)],
        ],
    }
}

/// The weak outcome of [`mp`] and [`mp_fenced`]: T1's `r0 = 1, r1 = 0`.
pub const MP_WEAK: Pattern = Pattern {
    registers: &[(1, 0, 1), (1, 1, 0)],
    memory: &[],
};

/// Message passing with relaxed accesses and fences:
///
/// ```text
/// T0: x := 1; fence(writer_fence); y := 1
/// T1: r0 := y; fence(reader_fence); r1 := x
/// ```
///
/// (a `None` fence is left out). Weak outcome: [`MP_WEAK`]. A release fence before a relaxed
/// store and an acquire fence after the relaxed load that reads it synchronize like a release
/// store and an acquire load: RC11 forbids the weak outcome exactly when the writer's fence is
/// `Release` or stronger and the reader's `Acquire` or stronger.
pub fn mp_fenced(writer_fence: Option<Order>, reader_fence: Option<Order>) -> Program {
    let relaxed = Order::Relaxed;
    Program {
        locations: vec![0, 0],
        threads: vec![
            [
                Some(store(X, 1, relaxed)),
                fence(writer_fence),
                Some(store(Y, 1, relaxed)),
            ]
            .into_iter()
            .flatten()
            .collect(),
            [
                Some(load(Y, relaxed, 0)),
                fence(reader_fence),
                Some(load(X, relaxed, 1)),
            ]
            .into_iter()
            .flatten()
            .collect(),
        ],
    }
}

/// Store buffering (Dekker):
///
/// ```text
/// T0: x := 1 (store_x); r0 := y (load_y)
/// T1: y := 1 (store_y); r0 := x (load_x)
/// ```
///
/// Weak outcome ([`SB_WEAK`]): both read 0, as if each store sat in a store buffer while the
/// other thread loaded. Only `SeqCst` forbids it, and only on all four accesses: the `SeqCst`
/// order must then put each store before the other thread's load.
pub fn sb(store_x: Order, load_y: Order, store_y: Order, load_x: Order) -> Program {
    Program {
        locations: vec![0, 0],
        threads: vec![
            vec![store(X, 1, store_x), load(Y, load_y, 0)],
            vec![store(Y, 1, store_y), load(X, load_x, 0)],
        ],
    }
}

/// The weak outcome of [`sb`] and [`sb_fenced`]: T0's `r0 = 0` and T1's `r0 = 0`.
pub const SB_WEAK: Pattern = Pattern {
    registers: &[(0, 0, 0), (1, 0, 0)],
    memory: &[],
};

/// Store buffering with relaxed accesses and fences between each thread's store and load:
///
/// ```text
/// T0: x := 1; fence(fence0); r0 := y
/// T1: y := 1; fence(fence1); r0 := x
/// ```
///
/// (a `None` fence is left out). Weak outcome: [`SB_WEAK`]. Forbidden exactly when both fences
/// are `SeqCst` (`psc_F` orders them both ways); one `SeqCst` fence alone orders nothing.
pub fn sb_fenced(fence0: Option<Order>, fence1: Option<Order>) -> Program {
    let relaxed = Order::Relaxed;
    Program {
        locations: vec![0, 0],
        threads: vec![
            [
                Some(store(X, 1, relaxed)),
                fence(fence0),
                Some(load(Y, relaxed, 0)),
            ]
            .into_iter()
            .flatten()
            .collect(),
            [
                Some(store(Y, 1, relaxed)),
                fence(fence1),
                Some(load(X, relaxed, 0)),
            ]
            .into_iter()
            .flatten()
            .collect(),
        ],
    }
}

/// Load buffering:
///
/// ```text
/// T0: r0 := x (load_x); y := 1 (store_y)
/// T1: r0 := y (load_y); x := 1 (store_x)
/// ```
///
/// Weak outcome ([`LB_WEAK`]): both read 1, each load reading the other thread's later store.
/// C++ allows it with relaxed accesses; RC11 never does (`po ∪ rf` would be cyclic), nor can a
/// runtime that runs the program produce it.
pub fn lb(load_x: Order, store_y: Order, load_y: Order, store_x: Order) -> Program {
    Program {
        locations: vec![0, 0],
        threads: vec![
            vec![load(X, load_x, 0), store(Y, 1, store_y)],
            vec![load(Y, load_y, 0), store(X, 1, store_x)],
        ],
    }
}

/// The weak outcome of [`lb`]: T0's `r0 = 1` and T1's `r0 = 1`.
pub const LB_WEAK: Pattern = Pattern {
    registers: &[(0, 0, 1), (1, 0, 1)],
    memory: &[],
};

/// Independent reads of independent writes:
///
/// ```text
/// T0: x := 1 (store_x)
/// T1: y := 1 (store_y)
/// T2: r0 := x (load_x2); r1 := y (load_y2)
/// T3: r0 := y (load_y3); r1 := x (load_x3)
/// ```
///
/// Weak outcome ([`IRIW_WEAK`]): the readers see the two writes in opposite orders, T2
/// `r0 = 1, r1 = 0` and T3 `r0 = 1, r1 = 0`. RC11 forbids it only when all six accesses are
/// `SeqCst`: with release stores the `fr` edge from a reader's second load leads to a store
/// that is not `SeqCst`, and with acquire loads the loads are not in the `SeqCst` order at all.
pub fn iriw(
    store_x: Order,
    store_y: Order,
    load_x2: Order,
    load_y2: Order,
    load_y3: Order,
    load_x3: Order,
) -> Program {
    Program {
        locations: vec![0, 0],
        threads: vec![
            vec![store(X, 1, store_x)],
            vec![store(Y, 1, store_y)],
            vec![load(X, load_x2, 0), load(Y, load_y2, 1)],
            vec![load(Y, load_y3, 0), load(X, load_x3, 1)],
        ],
    }
}

/// The weak outcome of [`iriw`] and [`iriw_fenced`]: T2 and T3 both `r0 = 1, r1 = 0`.
pub const IRIW_WEAK: Pattern = Pattern {
    registers: &[(2, 0, 1), (2, 1, 0), (3, 0, 1), (3, 1, 0)],
    memory: &[],
};

/// IRIW with relaxed accesses and fences between each reader's two loads:
///
/// ```text
/// T0: x := 1
/// T1: y := 1
/// T2: r0 := x; fence(fence2); r1 := y
/// T3: r0 := y; fence(fence3); r1 := x
/// ```
///
/// (a `None` fence is left out). Weak outcome: [`IRIW_WEAK`]. Forbidden exactly when both
/// fences are `SeqCst`: each fence reaches the other by `hb ; eco ; hb`, through the `fr` edge
/// of its second load and the `rf` edge into the other reader's first.
pub fn iriw_fenced(fence2: Option<Order>, fence3: Option<Order>) -> Program {
    let relaxed = Order::Relaxed;
    Program {
        locations: vec![0, 0],
        threads: vec![
            vec![store(X, 1, relaxed)],
            vec![store(Y, 1, relaxed)],
            [
                Some(load(X, relaxed, 0)),
                fence(fence2),
                Some(load(Y, relaxed, 1)),
            ]
            .into_iter()
            .flatten()
            .collect(),
            [
                Some(load(Y, relaxed, 0)),
                fence(fence3),
                Some(load(X, relaxed, 1)),
            ]
            .into_iter()
            .flatten()
            .collect(),
        ],
    }
}

/// 2+2W, two threads writing two locations in opposite orders:
///
/// ```text
/// T0: x := 1 (x1); y := 2 (y2)
/// T1: y := 1 (y1); x := 2 (x2)
/// ```
///
/// Weak outcome ([`TWO_PLUS_TWO_W_WEAK`]): the final values are `x = 1` and `y = 1`, each
/// thread's first store last in `mo`. Any interleaving ends with some thread's second store,
/// which leaves a 2 somewhere; so `mo` would have to contradict program order on both
/// locations. Without reads nothing synchronizes, so only `SeqCst` forbids it, and only on all
/// four stores (`po` and `mo` between them then form a `psc` cycle).
pub fn two_plus_two_w(x1: Order, y2: Order, y1: Order, x2: Order) -> Program {
    Program {
        locations: vec![0, 0],
        threads: vec![
            vec![store(X, 1, x1), store(Y, 2, y2)],
            vec![store(Y, 1, y1), store(X, 2, x2)],
        ],
    }
}

/// The weak outcome of [`two_plus_two_w`]: final `x = 1` and `y = 1`.
pub const TWO_PLUS_TWO_W_WEAK: Pattern = Pattern {
    registers: &[],
    memory: &[(0, 1), (1, 1)],
};
