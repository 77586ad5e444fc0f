//! Data races: two accesses to one location of plain (non-atomic) memory, at least one a write,
//! that happens-before does not order. In Rust, as in C++, a program with one has undefined
//! behaviour, so a run that meets one ends there in a fault leaf that carries it.

use serde::{Deserialize, Serialize};

use crate::history::ThreadId;
use crate::source::Span;

/// A data race a run met: the access it ended at and the earlier one it races with.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DataRace {
    /// The location, as reports name objects: `data#0`.
    pub location: String,
    /// The earlier access, which happens-before does not order before `second`.
    pub first: RacingAccess,
    /// The access the run ended at.
    pub second: RacingAccess,
    /// What would order the two, for people.
    pub hint: String,
}

/// One of the two accesses of a [`DataRace`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RacingAccess {
    /// The test thread that made it.
    pub thread: ThreadId,
    /// What it did: `read`, `write`, or `creation` (the object was made by that thread).
    pub access: String,
    /// Where, when known.
    pub span: Option<Span>,
}

impl DataRace {
    /// The fault message of a run that met the race: `data race on data#0 (undefined
    /// behaviour): T1's read and T0's write are not ordered by happens-before`.
    pub fn message(&self) -> String {
        format!(
            "data race on {} (undefined behaviour): T{}'s {} and T{}'s {} are not ordered by \
             happens-before",
            self.location,
            self.second.thread,
            self.second.access,
            self.first.thread,
            self.first.access
        )
    }
}
