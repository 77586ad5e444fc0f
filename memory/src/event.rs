//! The events of an execution graph: what each one is, as the graph stores it.
//!
//! An event is an initial store, a load, a store, a read-modify-write or a fence. An RMW is
//! *one* event that is both a read and a write (as in GenMC and most tools since), not a read
//! and a write joined by an `rmw` edge as in the RC11 paper; the axioms are restated for that in
//! [`crate::axioms`].

use crate::{Loc, Order, ThreadId, Val};

/// The number of an event: its position in the order events were added to the execution.
pub(crate) type EventId = usize;

/// What an event does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// A location's initial store: no thread, happens before every other event.
    Init,
    Load,
    Store,
    /// A read-modify-write: reads its immediate predecessor in modification order, writes.
    Rmw,
    Fence,
}

/// One event of an execution graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Event {
    /// The thread that performed it; `None` for an initial store.
    pub(crate) thread: Option<ThreadId>,
    /// Its position in its thread's program order; for an initial store, its location.
    pub(crate) index: usize,
    pub(crate) kind: Kind,
    /// The location it accesses; `None` for a fence.
    pub(crate) loc: Option<Loc>,
    /// `Relaxed` for an initial store.
    pub(crate) order: Order,
    /// The store it reads from (`rf`), for a load or an RMW.
    pub(crate) rf: Option<EventId>,
    /// The value it read (0 unless it reads).
    pub(crate) read: Val,
    /// The value it wrote (0 unless it writes).
    pub(crate) written: Val,
}

impl Event {
    /// Whether it reads a location (load or RMW).
    pub(crate) fn is_read(&self) -> bool {
        matches!(self.kind, Kind::Load | Kind::Rmw)
    }

    /// Whether it writes a location (initial store, store or RMW): it then has a place in
    /// its location's modification order.
    pub(crate) fn is_write(&self) -> bool {
        matches!(self.kind, Kind::Init | Kind::Store | Kind::Rmw)
    }

    /// Whether it is a fence.
    pub(crate) fn is_fence(&self) -> bool {
        self.kind == Kind::Fence
    }

    /// Whether it is a `SeqCst` access or fence (an initial store never is).
    pub(crate) fn is_seq_cst(&self) -> bool {
        self.kind != Kind::Init && self.order.is_seq_cst()
    }

    /// Whether it takes the release side of a synchronization.
    pub(crate) fn is_release(&self) -> bool {
        self.kind != Kind::Init && self.order.is_release()
    }

    /// Whether it takes the acquire side of a synchronization.
    pub(crate) fn is_acquire(&self) -> bool {
        self.kind != Kind::Init && self.order.is_acquire()
    }
}
