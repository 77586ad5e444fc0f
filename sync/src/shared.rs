//! A cell for plain shared data: every read and write is a step, so an unsynchronized field is
//! visible as a race in the tree.

use std::fmt;

use fgvt_tree::EventKind;

use crate::fingerprint::Effect;
use crate::runtime::{access, Acted, Initial, ObjectId};

/// Shared data read and written whole, without synchronization: what a plain field shared
/// between threads is. Each [`get`](Shared::get) and [`set`](Shared::set) is one step.
pub struct Shared<T> {
    // A real lock keeps the cell sound if it is used outside fgvt's scheduler; under it, only
    // one task runs at a time, so the lock is never contended.
    inner: std::sync::Mutex<T>,
    id: ObjectId,
}

impl<T: Clone + fmt::Debug> Shared<T> {
    /// A new cell holding `value`, named in reports after the field or variable it is
    /// created for.
    #[track_caller]
    pub fn new(value: T) -> Self {
        Shared {
            inner: std::sync::Mutex::new(value),
            id: ObjectId::new("Shared", Initial::Version),
        }
    }

    /// Names the cell in reports, where the line that creates it names no field or variable.
    pub fn named(self, name: &'static str) -> Self {
        Shared {
            id: self.id.named(name),
            ..self
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, T> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reads the value (one read step).
    #[track_caller]
    pub fn get(&self) -> T {
        access(
            self.id.pending(EventKind::Read),
            || self.lock().clone(),
            |v| Acted::text_if_shown(EventKind::Read, || format!("{v:?}")),
            // The value is a function of the writer's observations: its version says which.
            |_| Effect::ReadVersion,
        )
    }

    /// Writes `value` (one write step).
    #[track_caller]
    pub fn set(&self, value: T) {
        access(
            self.id.pending(EventKind::Write),
            || *self.lock() = value,
            // The cell holds the value just written.
            |()| Acted::text_if_shown(EventKind::Write, || format!("{:?}", *self.lock())),
            |()| Effect::WriteVersion,
        )
    }
}

impl<T: fmt::Debug> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Shared").field(&self.inner).finish()
    }
}
