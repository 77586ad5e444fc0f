//! Memory orders, and which of them each kind of access may carry.
//!
//! [`Order`] mirrors [`std::sync::atomic::Ordering`] (C++'s `memory_order` without `consume`).
//! What an order *does* is defined by the axioms in [`crate::execution`]; this module only says
//! which side of a synchronization an order takes part in:
//!
//! | order     | release side ([`Order::is_release`]) | acquire side ([`Order::is_acquire`]) |
//! |-----------|:-----:|:-----:|
//! | `Relaxed` |       |       |
//! | `Release` |   ✓   |       |
//! | `Acquire` |       |   ✓   |
//! | `AcqRel`  |   ✓   |   ✓   |
//! | `SeqCst`  |   ✓   |   ✓   |
//!
//! and which orders an access may carry ([`Order::is_valid_for`]), as Rust's `std` does: a load
//! is never `Release`/`AcqRel` and a store never `Acquire`/`AcqRel` (std panics on those); a
//! read-modify-write and a fence take any order. A `Relaxed` fence orders nothing, so
//! [`Execution::fence`](crate::Execution::fence) adds no event for it (std panics on one).

use std::fmt;

/// The memory order of an atomic access or fence.
///
/// The derived `Ord` is the declaration order, for sorting only: it is *not* "stronger than"
/// (`Release` and `Acquire` are incomparable in strength).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Order {
    /// Atomicity and coherence only; no synchronization.
    Relaxed,
    /// The release side of a synchronization (stores, read-modify-writes, fences).
    Release,
    /// The acquire side of a synchronization (loads, read-modify-writes, fences).
    Acquire,
    /// Both `Acquire` and `Release` (read-modify-writes and fences).
    AcqRel,
    /// `AcqRel`, plus a place in the single total order of sequentially consistent events.
    SeqCst,
}

impl Order {
    /// Every order, in declaration order: handy for tests that try all combinations.
    pub const ALL: [Order; 5] = [
        Order::Relaxed,
        Order::Release,
        Order::Acquire,
        Order::AcqRel,
        Order::SeqCst,
    ];

    /// Whether this order takes the release side of a synchronization (`Release`, `AcqRel`,
    /// `SeqCst`).
    pub const fn is_release(self) -> bool {
        matches!(self, Order::Release | Order::AcqRel | Order::SeqCst)
    }

    /// Whether this order takes the acquire side of a synchronization (`Acquire`, `AcqRel`,
    /// `SeqCst`).
    pub const fn is_acquire(self) -> bool {
        matches!(self, Order::Acquire | Order::AcqRel | Order::SeqCst)
    }

    /// Whether this order is `SeqCst`.
    pub const fn is_seq_cst(self) -> bool {
        matches!(self, Order::SeqCst)
    }

    /// Whether an access of this kind may carry this order (the rules of Rust's `std`).
    pub const fn is_valid_for(self, kind: AccessKind) -> bool {
        match kind {
            AccessKind::Load => matches!(self, Order::Relaxed | Order::Acquire | Order::SeqCst),
            AccessKind::Store => matches!(self, Order::Relaxed | Order::Release | Order::SeqCst),
            AccessKind::Rmw | AccessKind::Fence => true,
        }
    }
}

impl From<std::sync::atomic::Ordering> for Order {
    /// Maps std's orderings one to one. `Ordering` is `#[non_exhaustive]`: an ordering added
    /// to std later maps to `SeqCst`, the strongest, so nothing it forbids is ever allowed.
    fn from(ordering: std::sync::atomic::Ordering) -> Order {
        use std::sync::atomic::Ordering as O;
        match ordering {
            O::Relaxed => Order::Relaxed,
            O::Release => Order::Release,
            O::Acquire => Order::Acquire,
            O::AcqRel => Order::AcqRel,
            _ => Order::SeqCst,
        }
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Order::Relaxed => "Relaxed",
            Order::Release => "Release",
            Order::Acquire => "Acquire",
            Order::AcqRel => "AcqRel",
            Order::SeqCst => "SeqCst",
        })
    }
}

/// What an access does, for [`Order::is_valid_for`] and error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessKind {
    /// An atomic load.
    Load,
    /// An atomic store.
    Store,
    /// A read-modify-write (fetch-and-op, swap, successful compare-exchange).
    Rmw,
    /// A fence.
    Fence,
}

impl fmt::Display for AccessKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AccessKind::Load => "load",
            AccessKind::Store => "store",
            AccessKind::Rmw => "read-modify-write",
            AccessKind::Fence => "fence",
        })
    }
}
