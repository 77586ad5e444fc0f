//! What `Mutex` and `RwLock` share: a lock word whose acquire and release are steps. A thread
//! whose next step takes the lock in a mode it cannot have now is not offered to the explorer
//! until it can (`runtime.rs` keeps who holds what), as a real lock blocks.

use std::panic::Location;
use std::sync::atomic::{AtomicIsize, Ordering};

use fgvt_tree::EventKind;

use crate::fingerprint::Effect;
use crate::runtime::{access, Acted, Initial, ObjectId, Pending};

/// A lock: free, held by readers, or held by one thread alone.
pub(crate) struct RawLock {
    /// Readers holding the lock, or -1 while one thread holds it alone.
    state: AtomicIsize,
    id: ObjectId,
}

impl RawLock {
    /// A free lock, named in reports after the field or variable it is created for, else
    /// `kind` (`Mutex#3`).
    #[track_caller]
    pub(crate) fn new(kind: &'static str) -> RawLock {
        RawLock {
            state: AtomicIsize::new(0),
            id: ObjectId::new(kind, Initial::Version),
        }
    }

    /// The lock's identity, as reports name it.
    pub(crate) fn id(&self) -> ObjectId {
        self.id
    }

    /// The step of taking (`EventKind::Lock`) or releasing the lock, shared or not.
    fn step(&self, kind: EventKind, shared: bool, at: &'static Location<'static>) -> Pending {
        Pending {
            shared,
            ..self.id.pending_at(kind, at)
        }
    }

    /// Takes the lock, shared or alone, as one step at `caller`; the event shows `shown`.
    ///
    /// Under the scheduler the step waits until the lock can be had. Outside it (a serial
    /// run), a lock that cannot be had panics: no one could release it.
    pub(crate) fn acquire(
        &self,
        shared: bool,
        caller: &'static Location<'static>,
        shown: &'static str,
    ) {
        access(
            self.step(EventKind::Lock, shared, caller),
            || {
                let free = if shared {
                    self.state.fetch_add(1, Ordering::SeqCst) >= 0
                } else {
                    let taken =
                        self.state
                            .compare_exchange(0, -1, Ordering::SeqCst, Ordering::SeqCst);
                    taken.is_ok()
                };
                assert!(free, "{} is held: taking it would block forever", self.id);
            },
            |()| Acted::new(EventKind::Lock, shown.to_string()),
            // The holder sees the data as the last writer left it: its version.
            |()| Effect::ReadVersion,
        );
    }

    /// Releases the lock taken at `taken_at` (a destructor has no caller of its own), as one
    /// step whose event shows `shown`.
    pub(crate) fn release(
        &self,
        shared: bool,
        taken_at: &'static Location<'static>,
        shown: &'static str,
    ) {
        access(
            self.step(EventKind::Unlock, shared, taken_at),
            || {
                if shared {
                    self.state.fetch_sub(1, Ordering::SeqCst);
                } else {
                    self.state.store(0, Ordering::SeqCst);
                }
            },
            |()| Acted::new(EventKind::Unlock, shown.to_string()),
            // A writer leaves data that is a function of what it observed; readers change
            // nothing.
            |()| {
                if shared {
                    Effect::Nothing
                } else {
                    Effect::WriteVersion
                }
            },
        );
    }
}
