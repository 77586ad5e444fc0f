//! A cell for plain shared data: every read and write is a step, so an unsynchronized field is
//! visible as a race in the tree.

use std::fmt;
use std::panic::Location;

use fgvt_tree::EventKind;

use crate::runtime::{access, new_object, Acted, Pending};

/// Shared data read and written whole, without synchronization: what a plain field shared
/// between threads is. Each [`get`](Shared::get) and [`set`](Shared::set) is one step.
pub struct Shared<T> {
    // A real lock keeps the cell sound if it is used outside fgvt's scheduler; under it, only
    // one task runs at a time, so the lock is never contended.
    inner: std::sync::Mutex<T>,
    id: u32,
}

impl<T: Clone + fmt::Debug> Shared<T> {
    /// A new cell holding `value`.
    pub fn new(value: T) -> Self {
        Shared {
            inner: std::sync::Mutex::new(value),
            id: new_object(),
        }
    }

    #[track_caller]
    fn pending(&self, kind: EventKind) -> Pending {
        Pending {
            kind,
            object: self.id,
            name: format!("Shared#{}", self.id),
            caller: Location::caller(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, T> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reads the value (one read step).
    #[track_caller]
    pub fn get(&self) -> T {
        access(self.pending(EventKind::Read), || {
            let v = self.lock().clone();
            let value = format!("{v:?}");
            (
                v,
                Acted {
                    kind: EventKind::Read,
                    value,
                },
            )
        })
    }

    /// Writes `value` (one write step).
    #[track_caller]
    pub fn set(&self, value: T) {
        access(self.pending(EventKind::Write), || {
            let shown = format!("{value:?}");
            *self.lock() = value;
            (
                (),
                Acted {
                    kind: EventKind::Write,
                    value: shown,
                },
            )
        })
    }
}

impl<T: fmt::Debug> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Shared").field(&self.inner).finish()
    }
}
