//! [`Arc`]: `std::sync::Arc` whose allocations a model's run keeps count of.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::panic::Location;

use crate::runtime;

/// A reference-counted pointer, drop-in for `std::sync::Arc` (and `loom::sync::Arc`), whose
/// allocations a model's run keeps count of: one still held when every thread has returned is
/// a *leak*, and the run fails (see [`Model`](crate::Model)).
///
/// The counting is `std`'s; what fgvt adds is the bookkeeping of which allocations a run made
/// and has not freed, by address, with the line that made each. A leak is a bug of reference
/// counts: a cycle of `Arc`s, an `into_raw` never taken back, a clone forgotten with
/// `mem::forget`. Outside an execution it is `std`'s `Arc` and nothing more.
///
/// ```
/// use fgvt_sync::Arc;
///
/// let a = Arc::new(5);
/// let b = Arc::clone(&a);
/// assert_eq!(*b, 5);
/// assert_eq!(Arc::strong_count(&a), 2);
/// assert!(Arc::ptr_eq(&a, &b));
/// drop(b);
/// assert_eq!(Arc::try_unwrap(a), Ok(5));
/// ```
///
/// A value made into `Arc<dyn Trait>` comes through `std`'s: `Arc::from_std(std::sync::Arc::new(x)
/// as std::sync::Arc<dyn Trait>)`, as with loom (the coercion itself is not stable Rust).
pub struct Arc<T: ?Sized> {
    inner: std::sync::Arc<T>,
}

impl<T> Arc<T> {
    /// A new allocation holding `value`, counted by the run that makes it.
    #[track_caller]
    pub fn new(value: T) -> Arc<T> {
        Arc::from_std_at(std::sync::Arc::new(value), Location::caller())
    }

    /// The value, if this is the only reference; else the `Arc` back.
    pub fn try_unwrap(this: Arc<T>) -> Result<T, Arc<T>> {
        let inner = this.into_std();
        let address = address_of(&inner);
        match std::sync::Arc::try_unwrap(inner) {
            Ok(value) => {
                runtime::arc_freed(address);
                Ok(value)
            }
            Err(inner) => Err(Arc { inner }),
        }
    }

    /// The value, if this is the only reference left (as `std`'s `Arc::into_inner`).
    pub fn into_inner(this: Arc<T>) -> Option<T> {
        let inner = this.into_std();
        let address = address_of(&inner);
        let value = std::sync::Arc::into_inner(inner);
        // Freed only if this was the last reference.
        if value.is_some() {
            runtime::arc_freed(address);
        }
        value
    }

    /// The pointer to the value, keeping its reference (take it back with [`Arc::from_raw`]).
    pub fn into_raw(this: Arc<T>) -> *const T {
        std::sync::Arc::into_raw(this.into_std())
    }

    /// Takes back a reference [`Arc::into_raw`] gave.
    ///
    /// # Safety
    ///
    /// As `std::sync::Arc::from_raw`: `ptr` comes from `into_raw` and is taken back once.
    pub unsafe fn from_raw(ptr: *const T) -> Arc<T> {
        // SAFETY: the caller's promise, as std's.
        Arc {
            inner: unsafe { std::sync::Arc::from_raw(ptr) },
        }
    }

    /// Adds a reference to the allocation `ptr` points into.
    ///
    /// # Safety
    ///
    /// As `std::sync::Arc::increment_strong_count`.
    pub unsafe fn increment_strong_count(ptr: *const T) {
        // SAFETY: the caller's promise, as std's.
        unsafe { std::sync::Arc::increment_strong_count(ptr) }
    }

    /// Drops a reference to the allocation `ptr` points into (which may free it).
    ///
    /// # Safety
    ///
    /// As `std::sync::Arc::decrement_strong_count`.
    pub unsafe fn decrement_strong_count(ptr: *const T) {
        // Through a reference of ours, so that freeing the allocation is counted.
        // SAFETY: the caller's promise, as std's.
        drop(unsafe { Arc::from_raw(ptr) });
    }
}

impl<T: ?Sized> Arc<T> {
    /// An `Arc` of `std`'s, counted by the run from now on: how a value becomes an
    /// `Arc<dyn Trait>` (`std`'s coerces).
    #[track_caller]
    pub fn from_std(inner: std::sync::Arc<T>) -> Arc<T> {
        Arc::from_std_at(inner, Location::caller())
    }

    fn from_std_at(inner: std::sync::Arc<T>, at: &'static Location<'static>) -> Arc<T> {
        runtime::arc_made(address_of(&inner), at);
        Arc { inner }
    }

    /// How many references the allocation has.
    pub fn strong_count(this: &Arc<T>) -> usize {
        std::sync::Arc::strong_count(&this.inner)
    }

    /// Whether two `Arc`s point to the same allocation.
    pub fn ptr_eq(this: &Arc<T>, other: &Arc<T>) -> bool {
        std::sync::Arc::ptr_eq(&this.inner, &other.inner)
    }

    /// A pointer to the value, keeping the reference.
    pub fn as_ptr(this: &Arc<T>) -> *const T {
        std::sync::Arc::as_ptr(&this.inner)
    }

    /// The value, mutably, if this is the only reference.
    pub fn get_mut(this: &mut Arc<T>) -> Option<&mut T> {
        std::sync::Arc::get_mut(&mut this.inner)
    }

    /// The `std` `Arc` inside, taken out without dropping this one's reference.
    fn into_std(self) -> std::sync::Arc<T> {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again: the `std` Arc is moved out once.
        unsafe { std::ptr::read(&raw const this.inner) }
    }
}

impl<T: Clone> Arc<T> {
    /// The value, mutably, cloned first if other references share it (as `std`'s).
    #[track_caller]
    pub fn make_mut(this: &mut Arc<T>) -> &mut T {
        if std::sync::Arc::get_mut(&mut this.inner).is_none() {
            *this = Arc::new(T::clone(&this.inner));
        }
        std::sync::Arc::get_mut(&mut this.inner).expect("the only reference now")
    }
}

/// The address of an allocation (of its value), as the run's bookkeeping names it.
fn address_of<T: ?Sized>(inner: &std::sync::Arc<T>) -> usize {
    std::sync::Arc::as_ptr(inner).cast::<()>() as usize
}

impl<T: ?Sized> Drop for Arc<T> {
    fn drop(&mut self) {
        // The runtime runs one thread at a time: the count cannot change in between.
        if std::sync::Arc::strong_count(&self.inner) == 1 {
            runtime::arc_freed(address_of(&self.inner));
        }
    }
}

impl<T: ?Sized> Clone for Arc<T> {
    fn clone(&self) -> Arc<T> {
        Arc {
            inner: std::sync::Arc::clone(&self.inner),
        }
    }
}

impl<T: ?Sized> Deref for Arc<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T: ?Sized> AsRef<T> for Arc<T> {
    fn as_ref(&self) -> &T {
        &self.inner
    }
}

impl<T: ?Sized> Borrow<T> for Arc<T> {
    fn borrow(&self) -> &T {
        &self.inner
    }
}

impl<T: Default> Default for Arc<T> {
    #[track_caller]
    fn default() -> Arc<T> {
        Arc::new(T::default())
    }
}

impl<T> From<T> for Arc<T> {
    #[track_caller]
    fn from(value: T) -> Arc<T> {
        Arc::new(value)
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Arc<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.inner, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for Arc<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.inner, f)
    }
}

impl<T: ?Sized> fmt::Pointer for Arc<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Pointer::fmt(&self.inner, f)
    }
}

impl<T: ?Sized + PartialEq> PartialEq for Arc<T> {
    fn eq(&self, other: &Arc<T>) -> bool {
        *self.inner == *other.inner
    }
}

impl<T: ?Sized + Eq> Eq for Arc<T> {}

impl<T: ?Sized + PartialOrd> PartialOrd for Arc<T> {
    fn partial_cmp(&self, other: &Arc<T>) -> Option<std::cmp::Ordering> {
        (*self.inner).partial_cmp(&*other.inner)
    }
}

impl<T: ?Sized + Ord> Ord for Arc<T> {
    fn cmp(&self, other: &Arc<T>) -> std::cmp::Ordering {
        (*self.inner).cmp(&*other.inner)
    }
}

impl<T: ?Sized + Hash> Hash for Arc<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (*self.inner).hash(state);
    }
}
