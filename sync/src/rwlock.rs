//! A reader-writer lock whose acquires and releases are steps: readers share it, a writer has
//! it alone, and a thread asking for it while it cannot have it is not offered to the explorer
//! until it can, as a real lock blocks.

use std::cell::UnsafeCell;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::sync::{LockResult, TryLockError, TryLockResult};

use crate::lock::{poisoned_if, RawLock};

/// A reader-writer lock protecting a `T`, drop-in for `std::sync::RwLock`, poisoning
/// included: a write guard dropped while its thread panics poisons the lock (a read guard does
/// not, as in `std`), and every later [`read`](RwLock::read) or [`write`](RwLock::write)
/// returns `Err` with the guard inside.
///
/// Under fgvt's scheduler, a thread whose next step takes the lock in a mode it cannot have
/// now cannot move; when no thread can, the run is a *stuck* leaf saying who holds what, and
/// where. Outside it (the object's own serial runs), taking the lock in a conflicting mode
/// panics: a serial run has no one to release it.
///
/// ```
/// use fgvt_sync::RwLock;
///
/// let config = RwLock::new(1);
/// assert_eq!(*config.read().unwrap(), 1);
/// *config.write().unwrap() = 2;
/// assert_eq!(config.into_inner().unwrap(), 2);
/// ```
pub struct RwLock<T: ?Sized> {
    raw: RawLock,
    data: UnsafeCell<T>,
}

// SAFETY: `data` is reached only through guards. A write guard exists only while its `write`
// holds the raw lock alone; read guards exist only while the raw lock counts them, and give
// shared references only (hence `T: Sync`).
unsafe impl<T: ?Sized + Send + Sync> Sync for RwLock<T> {}
unsafe impl<T: ?Sized + Send> Send for RwLock<T> {}

/// Shared access to a [`RwLock`] until dropped; dropping it is the release step.
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct RwLockReadGuard<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
    /// Where the lock was taken: the release is reported there (a destructor has no caller).
    taken_at: &'static Location<'static>,
}

/// Exclusive access to a [`RwLock`] until dropped; dropping it is the release step.
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct RwLockWriteGuard<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
    taken_at: &'static Location<'static>,
    /// Whether the thread was already panicking when it took the lock: only a panic that
    /// starts while the guard is held poisons the lock (as in `std`).
    panicking: bool,
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

    /// A free lock holding `value`, made in a `const` context, as
    /// [`Mutex::const_new`](crate::Mutex::const_new) is: free and sound again at its first
    /// access in each run, its data not reset.
    #[track_caller]
    pub const fn const_new(value: T) -> Self {
        RwLock {
            raw: RawLock::const_new("RwLock"),
            data: UnsafeCell::new(value),
        }
    }

    /// Names the lock in reports (`"table"` is shown `table#3`), where the line that creates
    /// it names no field or variable (an array, a macro).
    pub fn named(self, name: &'static str) -> Self {
        RwLock {
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

impl<T: ?Sized> RwLock<T> {
    /// Takes the lock shared (one step, which waits while a writer holds it); `Err` with the
    /// guard if a writer panicked (the lock is poisoned).
    #[track_caller]
    pub fn read(&self) -> LockResult<RwLockReadGuard<'_, T>> {
        let caller = Location::caller();
        self.raw.acquire(true, caller, "read");
        poisoned_if(self.raw.poisoned(), self.read_guard(caller))
    }

    /// Takes the lock exclusively (one step, which waits while anyone holds it); `Err` with
    /// the guard if a writer panicked (the lock is poisoned).
    #[track_caller]
    pub fn write(&self) -> LockResult<RwLockWriteGuard<'_, T>> {
        let caller = Location::caller();
        self.raw.acquire(false, caller, "write");
        poisoned_if(self.raw.poisoned(), self.write_guard(caller))
    }

    /// Takes the lock shared if no writer holds it (one step, which never waits: it observes
    /// the lock): `Err(TryLockError::WouldBlock)` while a writer holds it,
    /// `Err(TryLockError::Poisoned)` with the guard if it is poisoned.
    #[track_caller]
    pub fn try_read(&self) -> TryLockResult<RwLockReadGuard<'_, T>> {
        let caller = Location::caller();
        if !self.raw.try_acquire(true, caller, "try_read") {
            return Err(TryLockError::WouldBlock);
        }
        poisoned_if(self.raw.poisoned(), self.read_guard(caller)).map_err(TryLockError::from)
    }

    /// Takes the lock exclusively if no one holds it (one step, which never waits: it
    /// observes the lock): `Err(TryLockError::WouldBlock)` while anyone holds it,
    /// `Err(TryLockError::Poisoned)` with the guard if it is poisoned.
    #[track_caller]
    pub fn try_write(&self) -> TryLockResult<RwLockWriteGuard<'_, T>> {
        let caller = Location::caller();
        if !self.raw.try_acquire(false, caller, "try_write") {
            return Err(TryLockError::WouldBlock);
        }
        poisoned_if(self.raw.poisoned(), self.write_guard(caller)).map_err(TryLockError::from)
    }

    fn read_guard(&self, taken_at: &'static Location<'static>) -> RwLockReadGuard<'_, T> {
        RwLockReadGuard {
            lock: self,
            taken_at,
        }
    }

    fn write_guard(&self, taken_at: &'static Location<'static>) -> RwLockWriteGuard<'_, T> {
        RwLockWriteGuard {
            lock: self,
            taken_at,
            panicking: std::thread::panicking(),
        }
    }

    /// Whether a writer panicked (one read step of the lock's poison flag).
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

impl<T: Default> Default for RwLock<T> {
    /// A free lock around `T::default()`.
    #[track_caller]
    fn default() -> Self {
        RwLock::new(T::default())
    }
}

impl<T> From<T> for RwLock<T> {
    /// A free lock around `value`.
    #[track_caller]
    fn from(value: T) -> Self {
        RwLock::new(value)
    }
}

impl<T: ?Sized> Drop for RwLockReadGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.raw.release(true, self.taken_at, "read");
    }
}

impl<T: ?Sized> Drop for RwLockWriteGuard<'_, T> {
    fn drop(&mut self) {
        // A thread unwound because its run has ended (fgvt's cancelling, not the code's panic)
        // poisons nothing: the lock's next holders are in that ended run, which a poisoned lock
        // would only make fail in its destructors.
        let poison = !self.panicking && std::thread::panicking() && !crate::runtime::ended();
        self.lock.raw.release(false, self.taken_at, "write");
        if poison {
            self.lock.raw.poison();
        }
    }
}

impl<T: ?Sized> Deref for RwLockReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock shared (see `Sync for RwLock`).
        unsafe { &*self.lock.data.get() }
    }
}

impl<T: ?Sized> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock alone (see `Sync for RwLock`).
        unsafe { &*self.lock.data.get() }
    }
}

impl<T: ?Sized> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the lock alone, and `&mut self` makes this the only
        // reference.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLockReadGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLockWriteGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized> fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Showing the data would take the lock, a step: show the lock's name.
        write!(f, "{}", self.raw.id())
    }
}
