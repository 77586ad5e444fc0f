//! A cell for data raced on by design: every read and write is a step, so an unsynchronized
//! field is visible as a race in the tree.

use std::fmt;

use fgvt_tree::EventKind;

use crate::fingerprint::Effect;
use crate::object_id::ObjectId;
use crate::races::{Making, Touch};
use crate::runtime::{data_access, Acted, Initial};

/// Shared data read and written whole, without synchronization: a field raced on by design, as
/// the fields of the Java objects in the papers fgvt comes from are. Each [`get`](Shared::get)
/// and [`set`](Shared::set) is one step, so the races on it are races of the tree.
///
/// Which to use: plain memory of Rust code is an [`UnsafeCell`](crate::cell::UnsafeCell) (or a
/// [`Cell`](crate::cell::Cell)), whose accesses are not steps and whose data races are faults,
/// undefined behaviour as in Rust. A `Shared` cell is for a port of an algorithm that reads and
/// writes a field without synchronization on purpose and is correct (or not) whatever the
/// interleaving: its races are what the tree localizes. A test can check it for data races too
/// ([`Test::races`](crate::Test::races)).
///
/// The FGVT paper's PairSnapshot, whose `read` re-validates only the first cell:
///
/// ```
/// use fgvt_sync::{Shared, Test, Verdict};
///
/// struct PairSnapshot {
///     d: [Shared<i64>; 2],
/// }
///
/// #[fgvt_sync::operations]
/// impl PairSnapshot {
///     fn new() -> Self {
///         PairSnapshot { d: [Shared::new(0).named("d[0]"), Shared::new(0).named("d[1]")] }
///     }
///
///     pub fn write(&self, i: usize, v: i64) {
///         self.d[i].set(v);
///     }
///
///     pub fn read(&self) -> (i64, i64) {
///         loop {
///             let (x, y) = (self.d[0].get(), self.d[1].get());
///             if x == self.d[0].get() {
///                 return (x, y);
///             }
///         }
///     }
/// }
///
/// let found = Test::<PairSnapshot>::new("pair_snapshot")
///     .init(&["write(0, 1)", "write(1, 1)"])
///     .thread(&["write(0, 2)", "write(1, 2)", "write(1, 1)", "write(0, 1)"])
///     .thread(&["read()"])
///     .localize()
///     .unwrap();
/// assert_eq!(found.report.verdict, Verdict::NotLinearizable);
/// // The paper's CDRS: five races that keep the bug possible, then the one that decides it.
/// assert_eq!(found.report.cdrs[0].pattern, "WG WG WG WG WG G");
/// ```
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
            id: ObjectId::new("Shared", Initial::Version, Making::Shared),
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
        data_access(
            self.id.pending(EventKind::Read),
            Touch::Read,
            || self.lock().clone(),
            |v| Acted::text_if_shown(EventKind::Read, || format!("{v:?}")),
            // The value is a function of the writer's observations: its version says which.
            |_| Effect::ReadVersion,
        )
    }

    /// Writes `value` (one write step).
    #[track_caller]
    pub fn set(&self, value: T) {
        data_access(
            self.id.pending(EventKind::Write),
            Touch::Write,
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
