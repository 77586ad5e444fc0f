//! A reader-writer lock whose acquires and releases are steps: readers share it, a writer has
//! it alone, and a thread asking for it while it cannot have it is not offered to the explorer
//! until it can, as a real lock blocks.

use std::cell::UnsafeCell;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::sync::atomic::{AtomicIsize, Ordering};

use fgvt_tree::EventKind;

use crate::runtime::{access, Acted, ObjectId, Pending};

/// A reader-writer lock protecting a `T`, drop-in for `std::sync::RwLock` (without poisoning:
/// `read` and `write` return the guards themselves).
///
/// Under fgvt's scheduler, a thread whose next step takes the lock in a mode it cannot have
/// now cannot move; when no thread can, the run is a *stuck* leaf saying who holds what.
/// Outside it (the object's own serial runs), taking the lock in a conflicting mode panics: a
/// serial run has no one to release it.
pub struct RwLock<T> {
    /// Readers holding the lock, or -1 while a writer does.
    state: AtomicIsize,
    data: UnsafeCell<T>,
    id: ObjectId,
}

// SAFETY: `data` is reached only through guards. A write guard exists only while `state` went
// from 0 to -1 by its `write`, so it is alone; read guards exist only while `state` counts
// them, and give shared references only (hence `T: Sync`).
unsafe impl<T: Send + Sync> Sync for RwLock<T> {}
unsafe impl<T: Send> Send for RwLock<T> {}

/// Shared access to a [`RwLock`] until dropped; dropping it is the release step.
pub struct RwLockReadGuard<'a, T> {
    lock: &'a RwLock<T>,
    /// Where the lock was taken: the release is reported there (a destructor has no caller).
    taken_at: &'static Location<'static>,
}

/// Exclusive access to a [`RwLock`] until dropped; dropping it is the release step.
pub struct RwLockWriteGuard<'a, T> {
    lock: &'a RwLock<T>,
    taken_at: &'static Location<'static>,
}

impl<T> RwLock<T> {
    /// A new, free lock around `value`.
    pub fn new(value: T) -> Self {
        RwLock {
            state: AtomicIsize::new(0),
            data: UnsafeCell::new(value),
            id: ObjectId::new("RwLock"),
        }
    }

    /// The step of taking (`EventKind::Lock`) or releasing the lock, shared or not.
    fn step(&self, kind: EventKind, shared: bool, at: &'static Location<'static>) -> Pending {
        Pending {
            shared,
            ..self.id.pending_at(kind, at)
        }
    }

    /// Takes the lock shared (one step, which waits while a writer holds it).
    #[track_caller]
    pub fn read(&self) -> RwLockReadGuard<'_, T> {
        let caller = Location::caller();
        access(
            self.step(EventKind::Lock, true, caller),
            || {
                let before = self.state.fetch_add(1, Ordering::SeqCst);
                assert!(
                    before >= 0,
                    "{} is held for writing: reading it would block forever",
                    self.id
                );
                RwLockReadGuard {
                    lock: self,
                    taken_at: caller,
                }
            },
            |_| Acted::new(EventKind::Lock, "read".into()),
        )
    }

    /// Takes the lock exclusively (one step, which waits while anyone holds it).
    #[track_caller]
    pub fn write(&self) -> RwLockWriteGuard<'_, T> {
        let caller = Location::caller();
        access(
            self.step(EventKind::Lock, false, caller),
            || {
                let free = self
                    .state
                    .compare_exchange(0, -1, Ordering::SeqCst, Ordering::SeqCst);
                assert!(
                    free.is_ok(),
                    "{} is held: writing it would block forever",
                    self.id
                );
                RwLockWriteGuard {
                    lock: self,
                    taken_at: caller,
                }
            },
            |_| Acted::new(EventKind::Lock, "write".into()),
        )
    }

    /// The value, from an owned lock.
    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }
}

impl<T> Drop for RwLockReadGuard<'_, T> {
    fn drop(&mut self) {
        let lock = self.lock;
        access(
            lock.step(EventKind::Unlock, true, self.taken_at),
            || lock.state.fetch_sub(1, Ordering::SeqCst),
            |_| Acted::new(EventKind::Unlock, "read".into()),
        );
    }
}

impl<T> Drop for RwLockWriteGuard<'_, T> {
    fn drop(&mut self) {
        let lock = self.lock;
        access(
            lock.step(EventKind::Unlock, false, self.taken_at),
            || lock.state.store(0, Ordering::SeqCst),
            |()| Acted::new(EventKind::Unlock, "write".into()),
        );
    }
}

impl<T> Deref for RwLockReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock shared (see `Sync for RwLock`).
        unsafe { &*self.lock.data.get() }
    }
}

impl<T> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock exclusively (see `Sync for RwLock`).
        unsafe { &*self.lock.data.get() }
    }
}

impl<T> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the lock exclusively, and `&mut self` makes this the only
        // reference.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T> fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.id)
    }
}
