//! Shared bookkeeping that is not a step: what an allocator's free list is to a data structure.

use std::hash::{BuildHasher, Hash};
use std::panic::Location;

use crate::fingerprint::Word;
use crate::object_id::ObjectId;
use crate::races::Making;
use crate::runtime::{self, Initial};

/// Shared data whose accesses are not steps of the tree, but whose value decides what the
/// object does next: a pool of free node slots, an allocator's free list.
///
/// A node pool written with `std`'s `Mutex` works under fgvt, but fgvt cannot see it: two runs
/// that differ only in which slots are free would look like one state to the explorer, which
/// merges states it cannot tell apart. Keep such bookkeeping in a `Silent`: every
/// [`with`](Silent::with) runs at once, inside the current step (no other thread runs meanwhile,
/// as `malloc` does not branch the tree), and tells fgvt's fingerprints what the caller saw and
/// what it left (by the value's `Hash`).
///
/// ```
/// use fgvt_sync::Silent;
///
/// let free = Silent::new(vec![3, 2, 1]);
/// let slot = free.with(|slots| slots.pop());
/// assert_eq!(slot, Some(1));
/// free.with(|slots| slots.push(1));
/// ```
pub struct Silent<T> {
    // Under the scheduler only one task runs at a time; the lock keeps the type sound outside
    // it.
    inner: std::sync::Mutex<T>,
    id: ObjectId,
}

/// The value as fingerprints see it.
fn digest<T: Hash>(value: &T) -> u64 {
    foldhash::fast::FixedState::with_seed(0x0511_1e27).hash_one(value)
}

impl<T: Hash> Silent<T> {
    /// Bookkeeping holding `value`.
    #[track_caller]
    pub fn new(value: T) -> Self {
        let id = ObjectId::new(
            "Silent",
            Initial::Value(Word::Int(digest(&value))),
            Making::Unchecked,
        );
        Silent {
            inner: std::sync::Mutex::new(value),
            id,
        }
    }

    /// Runs `f` on the value, at once (not a step).
    #[track_caller]
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        // A poisoned lock only means that a test thread panicked inside `f`: that run has
        // ended in a fault, and the value is as it left it.
        let mut value = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let before = digest(&*value);
        let result = f(&mut value);
        let after = digest(&*value);
        runtime::silent(self.id, Location::caller(), before, after);
        result
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Silent<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Silent").field(&self.inner).finish()
    }
}
