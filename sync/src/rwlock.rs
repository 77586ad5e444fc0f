//! A reader-writer lock whose acquires and releases are steps: readers share it, a writer has
//! it alone, and a thread asking for it while it cannot have it is not offered to the explorer
//! until it can, as a real lock blocks.

use std::cell::UnsafeCell;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::panic::Location;

use crate::lock::RawLock;

/// A reader-writer lock protecting a `T`, drop-in for `std::sync::RwLock` (without poisoning:
/// `read` and `write` return the guards themselves).
///
/// Under fgvt's scheduler, a thread whose next step takes the lock in a mode it cannot have
/// now cannot move; when no thread can, the run is a *stuck* leaf saying who holds what.
/// Outside it (the object's own serial runs), taking the lock in a conflicting mode panics: a
/// serial run has no one to release it.
pub struct RwLock<T> {
    raw: RawLock,
    data: UnsafeCell<T>,
}

// SAFETY: `data` is reached only through guards. A write guard exists only while its `write`
// holds the raw lock alone; read guards exist only while the raw lock counts them, and give
// shared references only (hence `T: Sync`).
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
    /// A new, free lock around `value`, named in reports after the field or variable it is
    /// created for.
    #[track_caller]
    pub fn new(value: T) -> Self {
        RwLock {
            raw: RawLock::new("RwLock"),
            data: UnsafeCell::new(value),
        }
    }

    /// Takes the lock shared (one step, which waits while a writer holds it).
    #[track_caller]
    pub fn read(&self) -> RwLockReadGuard<'_, T> {
        let caller = Location::caller();
        self.raw.acquire(true, caller, "read");
        RwLockReadGuard {
            lock: self,
            taken_at: caller,
        }
    }

    /// Takes the lock exclusively (one step, which waits while anyone holds it).
    #[track_caller]
    pub fn write(&self) -> RwLockWriteGuard<'_, T> {
        let caller = Location::caller();
        self.raw.acquire(false, caller, "write");
        RwLockWriteGuard {
            lock: self,
            taken_at: caller,
        }
    }

    /// The value, from an owned lock.
    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }
}

impl<T> Drop for RwLockReadGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.raw.release(true, self.taken_at, "read");
    }
}

impl<T> Drop for RwLockWriteGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.raw.release(false, self.taken_at, "write");
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
        // SAFETY: the guard holds the lock alone (see `Sync for RwLock`).
        unsafe { &*self.lock.data.get() }
    }
}

impl<T> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the lock alone, and `&mut self` makes this the only
        // reference.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T> fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.raw.id())
    }
}
