//! Fine-grained events: one shared-memory access per step of the recording scheduler.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::choice::Choice;
use crate::history::{Call, Clock, CoarseEvent, ThreadId};
use crate::source::Span;
use crate::value::Value;

/// What kind of shared-memory access an event is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    /// A read of one shared location.
    Read,
    /// A write to one shared location.
    Write,
    /// A compare-and-swap; `success` tells whether it swapped.
    Cas {
        /// Whether the comparison held and the new value was written.
        success: bool,
    },
    /// A double compare-and-swap on two locations.
    Dcas {
        /// Whether both comparisons held and both values were written.
        success: bool,
    },
    /// Acquiring a lock (blocks while another thread holds it).
    Lock,
    /// Releasing a lock.
    Unlock,
    /// A blocking `await(cond)` whose condition held.
    Await,
    /// An `atomic { }` block, executed as one event.
    Atomic,
    /// A step that touched no shared memory (an operation with no shared access).
    Local,
}

impl EventKind {
    /// A short lower-case name for reports: `read`, `write`, `cas`, `dcas`, ...
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Read => "read",
            EventKind::Write => "write",
            EventKind::Cas { .. } => "cas",
            EventKind::Dcas { .. } => "dcas",
            EventKind::Lock => "lock",
            EventKind::Unlock => "unlock",
            EventKind::Await => "await",
            EventKind::Atomic => "atomic",
            EventKind::Local => "local",
        }
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EventKind::Cas { success } | EventKind::Dcas { success } => {
                write!(
                    f,
                    "{}({})",
                    self.name(),
                    if *success { "ok" } else { "fail" }
                )
            }
            _ => f.write_str(self.name()),
        }
    }
}

/// One step of one thread: a shared-memory event, with the coarse events emitted with it.
///
/// An operation's call is emitted in the same step as its first shared event
/// (`call` is `Some`), its return in the same step as its last (`ret` is `Some`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Event {
    /// The thread that took the step.
    pub thread: ThreadId,
    /// Index of the operation within the thread's list (0-based).
    pub op_index: usize,
    /// The operation's name, e.g. `write`.
    pub op: String,
    /// The kind of access.
    pub kind: EventKind,
    /// The location(s) touched, as a person reads them: `d[0]`, `n.next`, `{d[0], d[1]}`.
    pub location: String,
    /// The value read or written (for a CAS: `expected -> new`), rendered for people.
    pub value: String,
    /// Where in the model the access is written.
    pub span: Span,
    /// The call emitted with this step, if it is the operation's first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call: Option<Call>,
    /// The return value emitted with this step, if it is the operation's last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ret: Option<Value>,
    /// With the call, under weak memory: what the call happens after (see
    /// [`CoarseEvent::Call`](crate::CoarseEvent::Call)'s `seen`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seen: Option<Clock>,
    /// The memory ordering the access declares, when the program runs under weak memory
    /// (`None`: every access is sequentially consistent, and reports say nothing of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<MemoryOrder>,
    /// Under weak memory, for an access that could go more than one way (a load that could
    /// read one of several stores, a store that could go before later ones): which way it
    /// went, and what that means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Box<MemoryChoice>>,
    /// What of shared memory the step touches, as the partial-order reduction of
    /// [`crate::reduced`] compares steps: not shown, not kept in JSON (read back, an event
    /// touches [`Footprint::Everything`]).
    #[serde(skip)]
    pub footprint: Footprint,
}

/// What of shared memory a step touches: what tells [`crate::reduced`] which steps of two
/// threads *commute* (taken in either order from a state, they reach the same state with the
/// same outcomes) and which do not.
///
/// A program that cannot tell says [`Footprint::Everything`] (the default): such a step is
/// ordered with every other, and a search over such steps reduces nothing. Saying less than a
/// step touches makes a reduced search miss runs, so a program says `Reads` only of an access
/// that cannot write and, for everything that changes what another thread can do (a spawn, a
/// join, a wait on a condition variable, a fence under weak memory), `Everything`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Footprint {
    /// Anything: ordered with every other step.
    #[default]
    Everything,
    /// Nothing shared (an operation's only step when it has no shared access): ordered with
    /// no step but through the calls and returns it carries.
    Nothing,
    /// Reads the object numbered so and writes nothing.
    Reads(u64),
    /// May write the object numbered so (a store, a read-modify-write, a lock or unlock).
    Writes(u64),
    /// May write both objects numbered so (a condition variable's wait: its mutex and the
    /// condition variable).
    WritesBoth(u64, u64),
}

impl Footprint {
    /// The objects touched (at most two; none for `Everything` and `Nothing`), and whether
    /// the step may write them.
    /// The one object it reads or writes, if it touches exactly one.
    pub fn object(self) -> Option<u64> {
        match self {
            Footprint::Reads(a) | Footprint::Writes(a) => Some(a),
            _ => None,
        }
    }

    fn objects(self) -> ([u64; 2], usize, bool) {
        match self {
            Footprint::Reads(a) => ([a, a], 1, false),
            Footprint::Writes(a) => ([a, a], 1, true),
            Footprint::WritesBoth(a, b) => ([a, b], 2, true),
            Footprint::Everything | Footprint::Nothing => ([0, 0], 0, false),
        }
    }

    /// Whether two steps of different threads with these footprints may not commute: one of
    /// them touches everything, or both touch an object and one of them may write it.
    pub fn conflicts(self, other: Footprint) -> bool {
        use Footprint::*;
        match (self, other) {
            (Everything, _) | (_, Everything) => true,
            (Nothing, _) | (_, Nothing) => false,
            _ => {
                let (mine, m, writes) = self.objects();
                let (theirs, t, they_write) = other.objects();
                (writes || they_write) && mine[..m].iter().any(|o| theirs[..t].contains(o))
            }
        }
    }

    /// What either of two steps touches: the footprint of a step that may go either way.
    pub fn join(self, other: Footprint) -> Footprint {
        use Footprint::*;
        match (self, other) {
            (Everything, _) | (_, Everything) => Everything,
            (Nothing, f) | (f, Nothing) => f,
            (Reads(a), Reads(b)) if a == b => Reads(a),
            _ => {
                let (mine, m, _) = self.objects();
                let (theirs, t, _) = other.objects();
                let mut all: Vec<u64> = mine[..m].iter().chain(&theirs[..t]).copied().collect();
                all.sort_unstable();
                all.dedup();
                match all[..] {
                    [a] => Writes(a),
                    [a, b] => WritesBoth(a, b),
                    _ => Everything,
                }
            }
        }
    }
}

/// A memory ordering of the C++20 / Rust model, as an access declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum MemoryOrder {
    /// `Relaxed`: atomic, and orders nothing else.
    Relaxed,
    /// `Release`: a store that publishes the writer's earlier accesses.
    Release,
    /// `Acquire`: a load that sees what the store it reads published.
    Acquire,
    /// `AcqRel`: both, on a read-modify-write.
    AcqRel,
    /// `SeqCst`: both, and one total order of all `SeqCst` accesses and fences.
    SeqCst,
}

impl fmt::Display for MemoryOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Which way an access under weak memory went, when it could go several: one *way* of its
/// step (see [`Choice`]). Way 0 is what a sequentially consistent run does (read the latest
/// store, go last in modification order); the others, newest first.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MemoryChoice {
    /// This way's number.
    pub way: u32,
    /// How many ways the step had (a bounded one included, see [`MemoryChoice::cut`]).
    pub ways: u32,
    /// Whether the last way is a cut: older stores were left out by a bound, and that way
    /// ends in a bounded leaf.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut: bool,
    /// For an access that reads (a load, a read-modify-write, a compare-exchange): the store
    /// it read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<StoreRef>,
    /// For a read of an older store than the latest: the latest, which a sequentially
    /// consistent run would have read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest: Option<StoreRef>,
    /// For a store that went before others in modification order (it is overwritten by a
    /// store that ran earlier): the store right after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<StoreRef>,
}

/// A store an access under weak memory read or went before, as reports name it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct StoreRef {
    /// The thread that stored it; `None` for the location's initial value, or a store of
    /// the serial part (`init`).
    pub thread: Option<ThreadId>,
    /// The value stored, rendered for people.
    pub value: String,
    /// Where the store is written, when known (not for an initial value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<Span>,
}

impl Event {
    /// The schedule choice that takes this step: its thread and, under weak memory, its way.
    #[inline]
    pub fn choice(&self) -> Choice {
        Choice::new(self.thread, self.memory.as_ref().map_or(0, |m| m.way))
    }

    /// How many ways this step's thread could go from the state it left (1 but for an
    /// access under weak memory that could read several stores or go before later ones).
    pub fn ways(&self) -> u32 {
        self.memory.as_ref().map_or(1, |m| m.ways)
    }

    /// The call and the return this step emits, as a history holds them (either may be
    /// missing), with the call shared by `share`.
    pub fn coarse(
        &self,
        share: impl FnOnce(&Call) -> std::sync::Arc<Call>,
    ) -> [Option<CoarseEvent>; 2] {
        let call = self.call.as_ref().map(|call| CoarseEvent::Call {
            thread: self.thread,
            call: share(call),
            seen: self.seen.clone(),
        });
        let ret = self.ret.as_ref().map(|value| CoarseEvent::Return {
            thread: self.thread,
            value: Some(value.clone()),
        });
        [call, ret]
    }
}

impl Event {
    /// The edge to a branch that exploration left unexplored (a budget ran out before it was
    /// taken): it names the thread, and nothing of a step that never happened.
    pub fn unexplored(thread: ThreadId) -> Event {
        Event::local(thread, String::new(), Span::default())
    }

    /// A step of `thread` that touches no shared location (an operation's only step, a bound
    /// reached), showing `value`.
    pub(crate) fn local(thread: ThreadId, value: String, span: Span) -> Event {
        Event {
            thread,
            op_index: 0,
            op: String::new(),
            kind: EventKind::Local,
            location: String::new(),
            value,
            span,
            call: None,
            ret: None,
            order: None,
            memory: None,
            seen: None,
            footprint: Footprint::Everything,
        }
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "T{} {} {}", self.thread, self.kind, self.location)?;
        if !self.value.is_empty() {
            write!(f, " = {}", self.value)?;
        }
        if let Some(order) = self.order {
            write!(f, " ({order})")?;
        }
        Ok(())
    }
}
