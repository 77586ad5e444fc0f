//! What can be wrong with a request to an [`Execution`](crate::Execution).
//!
//! Every method that adds an event or lists choices checks its arguments first and panics with
//! one of these (a wrong thread or location is a bug in the caller, like an out-of-bounds
//! index). A caller that maps user code onto an execution and wants an error instead calls
//! [`Execution::check_access`](crate::Execution::check_access) before.

use crate::{AccessKind, Loc, Order, StoreId, ThreadId};

/// Why an access cannot be added to an execution.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AccessError {
    /// The thread number is not one of the execution's threads.
    #[error("thread {thread} does not exist (the execution has {threads} threads)")]
    UnknownThread {
        /// The thread asked for.
        thread: ThreadId,
        /// How many threads there are.
        threads: usize,
    },
    /// The location is not one of the execution's locations.
    #[error("location {loc} does not exist (the execution has {locations} locations)")]
    UnknownLocation {
        /// The location asked for.
        loc: Loc,
        /// How many locations there are.
        locations: usize,
    },
    /// An access of this kind cannot carry this order (as in Rust's `std`).
    #[error("a {kind} cannot be {order}")]
    InvalidOrder {
        /// What the access does.
        kind: AccessKind,
        /// The order it was given.
        order: Order,
    },
    /// The store to read from is not a store of the location accessed.
    #[error("{store:?} is not a store of location {loc}")]
    NotAStoreOf {
        /// The store named.
        store: StoreId,
        /// The location accessed.
        loc: Loc,
    },
    /// A store placement past the end of the location's modification order.
    #[error(
        "placement {at} is past the end of location {loc}'s modification order of {len} stores"
    )]
    PlacementOutOfRange {
        /// The placement asked for ("right after the `at`-th store").
        at: usize,
        /// The location stored to.
        loc: Loc,
        /// How many stores its modification order has.
        len: usize,
    },
}
