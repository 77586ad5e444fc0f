//! A mutual-exclusion lock whose acquire and release are steps: a thread asking for a held lock
//! is not offered to the explorer until the lock is free, as a real lock blocks.

use std::cell::UnsafeCell;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::sync::atomic::{AtomicBool, Ordering};

use fgvt_tree::EventKind;

use crate::runtime::{access, Acted, ObjectId};

/// A lock protecting a `T`, drop-in for `std::sync::Mutex` (without poisoning: `lock` returns
/// the guard itself).
///
/// Under fgvt's scheduler, a thread whose next step takes a held lock cannot move; when no
/// thread can, the run is a *stuck* leaf saying who waits for what. Outside it (the object's
/// own serial runs), taking a held lock panics: a serial run has no one to release it.
pub struct Mutex<T> {
    held: AtomicBool,
    data: UnsafeCell<T>,
    id: ObjectId,
}

// SAFETY: `data` is reached only through a guard, and a guard exists only while `held` was
// swapped from false to true by its `lock`: one at a time, as with any mutex.
unsafe impl<T: Send> Sync for Mutex<T> {}
unsafe impl<T: Send> Send for Mutex<T> {}

/// Holds a [`Mutex`] until dropped; dropping it is the release step.
pub struct MutexGuard<'a, T> {
    mutex: &'a Mutex<T>,
    /// Where the lock was taken: the release is reported there (a destructor has no caller).
    taken_at: &'static Location<'static>,
}

impl<T> Mutex<T> {
    /// A new, free lock around `value`.
    pub fn new(value: T) -> Self {
        Mutex {
            held: AtomicBool::new(false),
            data: UnsafeCell::new(value),
            id: ObjectId::new("Mutex"),
        }
    }

    /// Takes the lock (one step, which waits while another thread holds it).
    #[track_caller]
    pub fn lock(&self) -> MutexGuard<'_, T> {
        let caller = Location::caller();
        access(
            self.id.pending_at(EventKind::Lock, caller),
            || {
                let was_held = self.held.swap(true, Ordering::SeqCst);
                assert!(
                    !was_held,
                    "{} is already held: taking it again would block forever",
                    self.id
                );
                MutexGuard {
                    mutex: self,
                    taken_at: caller,
                }
            },
            |_| Acted::new(EventKind::Lock, String::new()),
        )
    }

    /// The value, from an owned lock.
    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }
}

impl<T> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        let mutex = self.mutex;
        access(
            mutex.id.pending_at(EventKind::Unlock, self.taken_at),
            || mutex.held.store(false, Ordering::SeqCst),
            |()| Acted::new(EventKind::Unlock, String::new()),
        );
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
        write!(f, "{}", self.id)
    }
}
