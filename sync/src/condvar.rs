//! A condition variable whose wait and notifies are steps: a waiting thread is not offered to
//! the explorer until a notify has woken it, as a real waiter sleeps.
//!
//! A [`Condvar::wait`] is two steps. The first releases the mutex and queues the thread on the
//! condition variable, at once, as `std` does (no notify can slip in between). The thread then
//! cannot move until a notify wakes it; the second step takes the mutex back, once it is free.
//! A notify is one step; `notify_one` wakes the thread that has waited longest, `notify_all`
//! every waiting thread, and a notify with no waiter is lost, as with `std`. fgvt invents no
//! spurious wake-up: a wait returns only after a notify. A waiter that no thread is left to
//! notify ends the run in a *stuck* leaf naming the condition variable and the line of the
//! wait.

use std::fmt;
use std::panic::Location;
use std::sync::LockResult;

use fgvt_tree::EventKind;

use crate::fingerprint::Effect;
use crate::identity::Identity;
use crate::mutex::MutexGuard;
use crate::object_id::ObjectId;
use crate::races::Making;
use crate::runtime::{self, access, Acted, Initial, Role};

/// A condition variable, drop-in for `std::sync::Condvar`: a thread waits on it with a held
/// [`Mutex`](crate::Mutex) until another notifies it.
///
/// ```
/// use fgvt_sync::{Condvar, Mutex};
///
/// let ready = Mutex::new(true);
/// let changed = Condvar::new();
/// // The condition holds already: no wait, so no thread is needed to notify.
/// let guard = changed.wait_while(ready.lock().unwrap(), |ready| !*ready).unwrap();
/// assert!(*guard);
/// changed.notify_all();
/// ```
///
/// `notify_one` wakes the thread that has waited longest. `std` promises only that it wakes
/// one: fgvt chooses which thread runs, not which waiter a notify picks, so an object whose
/// correctness depends on which waiter wakes is explored with the oldest one only.
///
/// Outside fgvt's scheduler (the object's own serial runs), a wait unwinds as a panic does
/// (without printing): no other thread could notify it, so it would block forever.
pub struct Condvar {
    id: Identity,
}

impl Condvar {
    /// A new condition variable with no waiter, named in reports after the field or variable
    /// it is created for.
    #[track_caller]
    pub fn new() -> Condvar {
        Condvar {
            id: Identity::Made(ObjectId::new(
                "Condvar",
                Initial::Version,
                Making::Unchecked,
            )),
        }
    }

    /// A condition variable with no waiter, made in a `const` context (a `static`, a `const
    /// fn new`): given its identity at its first access in each run.
    #[track_caller]
    pub const fn const_new() -> Condvar {
        Condvar {
            id: Identity::lazy("Condvar", Location::caller()),
        }
    }

    /// Names the condition variable in reports (`"nonempty"` is shown `nonempty#3`), where the
    /// line that creates it names no field or variable (an array, a macro).
    pub fn named(mut self, name: &'static str) -> Condvar {
        self.id.named(name);
        self
    }

    /// Its identity in the run under way.
    fn id(&self) -> ObjectId {
        self.id
            .get(|name, at| ObjectId::lazy(name, Initial::Version, at))
    }

    /// Releases the guard's mutex and waits until a notify wakes this thread, then takes the
    /// mutex back (two steps: the release with the start of the wait, and the lock, which
    /// can happen only once woken and the mutex is free). `Err` with the guard if the mutex
    /// is poisoned.
    ///
    /// # Panics
    ///
    /// Outside a test thread under fgvt's scheduler (a serial run): nothing could notify it.
    /// It unwinds without calling the panic hook (nothing is printed), with the message as
    /// the payload.
    #[track_caller]
    pub fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> LockResult<MutexGuard<'a, T>> {
        let caller = Location::caller();
        let id = self.id();
        if !runtime::in_thread() {
            runtime::would_block(format!(
                "{} waits in a serial run: no other thread could notify it, so it would block \
                 forever",
                id
            ));
        }
        let mutex = guard.mutex;
        // The wait step releases the lock in the guard's stead: the guard must not release it
        // again.
        std::mem::forget(guard);
        mutex.raw.release_as(
            false,
            Role::Wait(id),
            caller,
            format!("wait on {}", id).into(),
        );
        mutex.raw.acquire_as(
            false,
            Role::Woken(id),
            caller,
            format!("woken by {}", id).into(),
        );
        mutex.guard(caller)
    }

    /// Waits while `condition` holds of the guarded value: checks it, and [`wait`s](Self::wait)
    /// again after every wake-up while it still holds (no wait at all if it does not hold).
    /// `Err` with the guard if the mutex is poisoned.
    ///
    /// # Panics
    ///
    /// If it must wait outside a test thread under fgvt's scheduler (a serial run): nothing
    /// could notify it.
    #[track_caller]
    pub fn wait_while<'a, T, F>(
        &self,
        mut guard: MutexGuard<'a, T>,
        mut condition: F,
    ) -> LockResult<MutexGuard<'a, T>>
    where
        F: FnMut(&mut T) -> bool,
    {
        while condition(&mut *guard) {
            guard = self.wait(guard)?;
        }
        Ok(guard)
    }

    /// Wakes the thread that has waited longest on this condition variable, if any (one step;
    /// with no waiter the notify is lost).
    #[track_caller]
    pub fn notify_one(&self) {
        self.notify(false);
    }

    /// Wakes every thread waiting on this condition variable (one step; with no waiter the
    /// notify is lost).
    #[track_caller]
    pub fn notify_all(&self) {
        self.notify(true);
    }

    #[track_caller]
    fn notify(&self, all: bool) {
        let name = if all { "notify_all" } else { "notify_one" };
        let id = self.id();
        access(
            self.id.pending_at(id, EventKind::Write, Location::caller()),
            || runtime::notify(id, all),
            |woken| {
                Acted::text_if_shown(EventKind::Write, || {
                    let woken: Vec<String> = woken.iter().map(|t| format!("T{t}")).collect();
                    let woken = if woken.is_empty() {
                        "no waiter".to_string()
                    } else {
                        format!("wakes {}", woken.join(", "))
                    };
                    format!("{name}: {woken}")
                })
            },
            // Who was woken is in the waiters' states; the notifier learns nothing.
            |_| Effect::Nothing,
        );
    }
}

impl Default for Condvar {
    /// A new condition variable with no waiter.
    #[track_caller]
    fn default() -> Condvar {
        Condvar::new()
    }
}

impl fmt::Debug for Condvar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.id)
    }
}
