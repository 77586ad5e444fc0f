//! Fine-grained events: one shared-memory access per step of the recording scheduler.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::history::{Call, ThreadId};
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
        }
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "T{} {} {}", self.thread, self.kind, self.location)?;
        if !self.value.is_empty() {
            write!(f, " = {}", self.value)?;
        }
        Ok(())
    }
}
