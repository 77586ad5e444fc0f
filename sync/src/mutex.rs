//! A mutual-exclusion lock whose acquire and release are steps: a thread asking for a held lock
//! is not offered to the explorer until the lock is free, as a real lock blocks.

use std::cell::UnsafeCell;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::sync::{LockResult, TryLockError, TryLockResult};

use crate::lock::{poisoned_if, RawLock};

/// A lock protecting a `T`, drop-in for `std::sync::Mutex`, poisoning included: a guard
/// dropped while its thread panics poisons the lock, and every later [`lock`](Mutex::lock)
/// returns `Err` with the guard inside.
///
/// Under fgvt's scheduler, a thread whose next step takes a held lock cannot move; when no
/// thread can, the run is a *stuck* leaf saying who waits for what, and where each holder took
/// the lock. Outside it (the object's own serial runs), taking a held lock panics: a serial
/// run has no one to release it.
///
/// ```
/// use fgvt_sync::Mutex;
///
/// let count = Mutex::new(0);
/// *count.lock().unwrap() += 1;
/// assert_eq!(count.into_inner().unwrap(), 1);
/// ```
pub struct Mutex<T: ?Sized> {
    pub(crate) raw: RawLock,
    data: UnsafeCell<T>,
}

// SAFETY: `data` is reached only through a guard, and a guard exists only while its `lock`
// holds the raw lock alone: one at a time, as with any mutex.
unsafe impl<T: ?Sized + Send> Sync for Mutex<T> {}
unsafe impl<T: ?Sized + Send> Send for Mutex<T> {}

/// Holds a [`Mutex`] until dropped; dropping it is the release step.
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct MutexGuard<'a, T: ?Sized> {
    pub(crate) mutex: &'a Mutex<T>,
    /// Where the lock was taken: the release is reported there (a destructor has no caller).
    pub(crate) taken_at: &'static Location<'static>,
    /// Whether the thread was already panicking when it took the lock: only a panic that
    /// starts while the guard is held poisons the lock (as in `std`).
    pub(crate) panicking: bool,
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

    /// A free lock holding `value`, made in a `const` context: a `static`, or a `const fn
    /// new` of the code under test. Its first access in each run gives it its identity, free
    /// and unpoisoned, as made before the run's threads; its data is not reset between runs
    /// (as a `static`'s is not under loom): a test that reads it resets it.
    #[track_caller]
    pub const fn const_new(value: T) -> Self {
        Mutex {
            raw: RawLock::const_new("Mutex"),
            data: UnsafeCell::new(value),
        }
    }

    /// Names the lock in reports (`"slot"` is shown `slot#3`), where the line that creates it
    /// names no field or variable (an array, a macro).
    pub fn named(self, name: &'static str) -> Self {
        Mutex {
            raw: self.raw.named(name),
            data: self.data,
        }
    }

    /// The value, from an owned lock (no step: nothing else can see it); `Err` with the value
    /// if the lock is poisoned.
    pub fn into_inner(self) -> LockResult<T> {
        let poisoned = self.raw.poisoned();
        poisoned_if(poisoned, self.data.into_inner())
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Takes the lock (one step, which waits while another thread holds it); `Err` with the
    /// guard if a holder panicked (the lock is poisoned).
    #[track_caller]
    pub fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
        let caller = Location::caller();
        self.raw.acquire(false, caller, "");
        self.guard(caller)
    }

    /// Takes the lock if it is free (one step, which never waits: it observes the lock, as a
    /// failed CAS does): `Err(TryLockError::WouldBlock)` while another thread holds it,
    /// `Err(TryLockError::Poisoned)` with the guard if it is poisoned.
    #[track_caller]
    pub fn try_lock(&self) -> TryLockResult<MutexGuard<'_, T>> {
        let caller = Location::caller();
        if !self.raw.try_acquire(false, caller, "try_lock") {
            return Err(TryLockError::WouldBlock);
        }
        self.guard(caller).map_err(TryLockError::from)
    }

    /// The guard of a lock just taken at `taken_at`, poisoned or not.
    pub(crate) fn guard(
        &self,
        taken_at: &'static Location<'static>,
    ) -> LockResult<MutexGuard<'_, T>> {
        let guard = MutexGuard {
            mutex: self,
            taken_at,
            panicking: std::thread::panicking(),
        };
        // The lock step just taken observed the data's version, which says whether the lock
        // is poisoned: no step of its own.
        poisoned_if(self.raw.poisoned(), guard)
    }

    /// Whether a holder panicked (one read step of the lock's poison flag).
    #[track_caller]
    pub fn is_poisoned(&self) -> bool {
        self.raw.read_poisoned(Location::caller())
    }

    /// Makes a poisoned lock sound again (one write step of the lock), as `std`'s does.
    #[track_caller]
    pub fn clear_poison(&self) {
        self.raw.clear_poison(Location::caller());
    }

    /// The value, through an exclusive reference (no step: nothing else can see it); `Err`
    /// with the reference if the lock is poisoned.
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        let poisoned = self.raw.poisoned();
        poisoned_if(poisoned, self.data.get_mut())
    }
}

impl<T: Default> Default for Mutex<T> {
    /// A free lock around `T::default()`.
    #[track_caller]
    fn default() -> Self {
        Mutex::new(T::default())
    }
}

impl<T> From<T> for Mutex<T> {
    /// A free lock around `value`.
    #[track_caller]
    fn from(value: T) -> Self {
        Mutex::new(value)
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        // A thread unwound because its run has ended (fgvt's cancelling, not the code's panic)
        // poisons nothing: the lock's next holders are in that ended run, which a poisoned lock
        // would only make fail in its destructors.
        let poison = !self.panicking && std::thread::panicking() && !crate::runtime::ended();
        self.mutex.raw.release(false, self.taken_at, "");
        if poison {
            self.mutex.raw.poison();
        }
    }
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock (see `Sync for Mutex`).
        unsafe { &*self.mutex.data.get() }
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the lock, and `&mut self` makes this the only reference.
        unsafe { &mut *self.mutex.data.get() }
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

impl<T: ?Sized> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Showing the data would take the lock, a step: show the lock's name.
        write!(f, "{}", self.raw.id())
    }
}
