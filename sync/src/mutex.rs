//! A mutual-exclusion lock whose acquire and release are steps: a thread asking for a held lock
//! is not offered to the explorer until the lock is free, as a real lock blocks.

use std::cell::UnsafeCell;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::panic::Location;

use crate::lock::RawLock;

/// A lock protecting a `T`, drop-in for `std::sync::Mutex` (without poisoning: `lock` returns
/// the guard itself).
///
/// Under fgvt's scheduler, a thread whose next step takes a held lock cannot move; when no
/// thread can, the run is a *stuck* leaf saying who waits for what. Outside it (the object's
/// own serial runs), taking a held lock panics: a serial run has no one to release it.
pub struct Mutex<T> {
    raw: RawLock,
    data: UnsafeCell<T>,
}

// SAFETY: `data` is reached only through a guard, and a guard exists only while its `lock`
// holds the raw lock alone: one at a time, as with any mutex.
unsafe impl<T: Send> Sync for Mutex<T> {}
unsafe impl<T: Send> Send for Mutex<T> {}

/// Holds a [`Mutex`] until dropped; dropping it is the release step.
pub struct MutexGuard<'a, T> {
    mutex: &'a Mutex<T>,
    /// Where the lock was taken: the release is reported there (a destructor has no caller).
    taken_at: &'static Location<'static>,
}

impl<T> Mutex<T> {
    /// A new, free lock around `value`, named in reports after the field or variable it is
    /// created for.
    #[track_caller]
    pub fn new(value: T) -> Self {
        Mutex {
            raw: RawLock::new("Mutex"),
            data: UnsafeCell::new(value),
        }
    }

    /// Takes the lock (one step, which waits while another thread holds it).
    #[track_caller]
    pub fn lock(&self) -> MutexGuard<'_, T> {
        let caller = Location::caller();
        self.raw.acquire(false, caller, "");
        MutexGuard {
            mutex: self,
            taken_at: caller,
        }
    }

    /// The value, from an owned lock.
    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }
}

impl<T> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        self.mutex.raw.release(false, self.taken_at, "");
    }
}

impl<T> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock (see `Sync for Mutex`).
        unsafe { &*self.mutex.data.get() }
    }
}

impl<T> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the lock, and `&mut self` makes this the only reference.
        unsafe { &mut *self.mutex.data.get() }
    }
}

impl<T> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.raw.id())
    }
}
