//! What `Mutex` and `RwLock` share: a lock word whose acquire and release are steps, and a
//! poison flag. A thread whose next step takes the lock in a mode it cannot have now is not
//! offered to the explorer until it can (`runtime.rs` keeps who holds what), as a real lock
//! blocks.

use std::borrow::Cow;
use std::panic::Location;
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};

use fgvt_tree::EventKind;

use crate::fingerprint::{Effect, Word};
use crate::identity::Identity;
use crate::object_id::ObjectId;
use crate::races::Making;
use crate::runtime::{self, access, Acted, Initial, Pending, Role};

/// A lock: free, held by readers, or held by one thread alone; poisoned once a holder panicked.
pub(crate) struct RawLock {
    /// Readers holding the lock, or -1 while one thread holds it alone.
    state: AtomicIsize,
    /// Whether a thread panicked while holding the lock alone (as `std` poisons).
    poisoned: AtomicBool,
    id: Identity,
}

/// What a `try_lock` that found the lock held saw, for fingerprints (a version, what a
/// successful one sees, is a 64-bit hash: it does not meet this value but by chance).
const HELD: u64 = 0x4e1d;

impl RawLock {
    /// A free lock, named in reports after the field or variable it is created for, else
    /// `kind` (`Mutex#3`).
    #[track_caller]
    pub(crate) fn new(kind: &'static str) -> RawLock {
        RawLock {
            state: AtomicIsize::new(0),
            poisoned: AtomicBool::new(false),
            id: Identity::Made(ObjectId::new(kind, Initial::Version, Making::Synchronizing)),
        }
    }

    /// A free lock made in a `const` context (see `identity.rs`): given its identity at its
    /// first access in each run, free and sound again then.
    #[track_caller]
    pub(crate) const fn const_new(kind: &'static str) -> RawLock {
        RawLock {
            state: AtomicIsize::new(0),
            poisoned: AtomicBool::new(false),
            id: Identity::lazy(kind, Location::caller()),
        }
    }

    /// The same lock, shown in reports as `name`.
    pub(crate) fn named(mut self, name: &'static str) -> RawLock {
        self.id.named(name);
        self
    }

    /// The lock's identity in the run under way, as reports name it.
    pub(crate) fn id(&self) -> ObjectId {
        self.id.get(|name, at| {
            self.state.store(0, Ordering::SeqCst);
            self.poisoned.store(false, Ordering::SeqCst);
            ObjectId::lazy(name, Initial::Version, at)
        })
    }

    /// An access of `kind` to the lock at `at`.
    fn pending(&self, kind: EventKind, at: &'static Location<'static>) -> Pending {
        self.id.pending_at(self.id(), kind, at)
    }

    /// The step of taking (`EventKind::Lock`) or releasing the lock, shared or not.
    fn step(
        &self,
        kind: EventKind,
        shared: bool,
        role: Role,
        at: &'static Location<'static>,
    ) -> Pending {
        Pending {
            shared,
            role,
            ..self.pending(kind, at)
        }
    }

    /// Takes the lock word if it is free for the mode asked (no step: the caller's step does).
    fn take(&self, shared: bool) -> bool {
        if shared {
            // Another reader may come and go between the load and the swap (outside the
            // scheduler, on real threads): retry while no writer holds it.
            let mut readers = self.state.load(Ordering::SeqCst);
            while readers >= 0 {
                let next = readers + 1;
                match (self.state).compare_exchange(
                    readers,
                    next,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                ) {
                    Ok(_) => return true,
                    Err(now) => readers = now,
                }
            }
            false
        } else {
            self.state
                .compare_exchange(0, -1, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        }
    }

    /// Frees the lock word for one holder (no step: the caller's step does).
    fn free(&self, shared: bool) {
        if shared {
            self.state.fetch_sub(1, Ordering::SeqCst);
        } else {
            self.state.store(0, Ordering::SeqCst);
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
        self.acquire_as(shared, Role::Plain, caller, shown.into());
    }

    /// [`RawLock::acquire`] with the step's role (a condition variable's waiter taking the lock
    /// back) and the text the event shows.
    pub(crate) fn acquire_as(
        &self,
        shared: bool,
        role: Role,
        caller: &'static Location<'static>,
        shown: Cow<'static, str>,
    ) {
        access(
            self.step(EventKind::Lock, shared, role, caller),
            || {
                // Under the scheduler the step is offered only when the lock is free; outside
                // it (a serial run), a lock an earlier operation kept is held for good. A
                // destructor that locks while its thread unwinds from a run that has ended
                // acts at once (see `runtime::step`): nobody can release the lock, and a panic
                // now would abort the process; the run is over, so it goes on as if it had it.
                if !self.take(shared) && !std::thread::panicking() {
                    crate::runtime::would_block(format!(
                        "{} is held: taking it would block forever",
                        self.id()
                    ));
                }
            },
            |()| Acted::new(EventKind::Lock, shown),
            // The holder sees the data as the last writer left it: its version.
            |()| Effect::ReadVersion,
        );
    }

    /// Takes the lock, shared or alone, if it can be had now, as one step at `caller` that
    /// never waits: the event is a lock showing `shown`, or a read of the lock that saw it
    /// held. Whether it took the lock.
    pub(crate) fn try_acquire(
        &self,
        shared: bool,
        caller: &'static Location<'static>,
        shown: &'static str,
    ) -> bool {
        access(
            self.step(EventKind::Lock, shared, Role::Attempt, caller),
            || self.take(shared),
            |&taken| {
                if taken {
                    Acted::new(EventKind::Lock, shown)
                } else {
                    Acted::text_if_shown(EventKind::Read, || format!("held ({shown} would block)"))
                }
            },
            |&taken| {
                if taken {
                    Effect::ReadVersion
                } else {
                    Effect::Read(Word::Int(HELD))
                }
            },
        )
    }

    /// Releases the lock taken at `taken_at` (a destructor has no caller of its own), as one
    /// step whose event shows `shown`.
    pub(crate) fn release(
        &self,
        shared: bool,
        taken_at: &'static Location<'static>,
        shown: &'static str,
    ) {
        self.release_as(shared, Role::Plain, taken_at, shown.into());
    }

    /// [`RawLock::release`] with the step's role (a condition variable's wait) and the text
    /// the event shows.
    pub(crate) fn release_as(
        &self,
        shared: bool,
        role: Role,
        at: &'static Location<'static>,
        shown: Cow<'static, str>,
    ) {
        access(
            self.step(EventKind::Unlock, shared, role, at),
            || self.free(shared),
            |()| Acted::new(EventKind::Unlock, shown),
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

    /// Marks the lock poisoned: a thread panicked while holding it alone. Called after the
    /// release, so that the next holder's version says it.
    pub(crate) fn poison(&self) {
        self.poisoned.store(true, Ordering::SeqCst);
        runtime::poisoned(self.id());
    }

    /// Clears the poison flag, as one write step of the lock at `caller` (its data gets a new
    /// version, named after the caller: the next holder sees a sound lock).
    pub(crate) fn clear_poison(&self, caller: &'static Location<'static>) {
        access(
            self.pending(EventKind::Write, caller),
            || self.poisoned.store(false, Ordering::SeqCst),
            |()| Acted::new(EventKind::Write, "clear_poison"),
            |()| Effect::WriteVersion,
        );
    }

    /// Whether a holder panicked, as the lock step just taken saw it (its version says so):
    /// no step of its own.
    pub(crate) fn poisoned(&self) -> bool {
        self.poisoned.load(Ordering::SeqCst)
    }

    /// Whether a holder panicked, read by `caller` outside a lock step: one read step of the
    /// flag (not free: another thread's panic may come before or after it).
    pub(crate) fn read_poisoned(&self, caller: &'static Location<'static>) -> bool {
        access(
            Pending {
                role: Role::Inspect,
                ..self.pending(EventKind::Read, caller)
            },
            || self.poisoned(),
            |&poisoned| {
                let shown = if poisoned { "poisoned" } else { "not poisoned" };
                Acted::new(EventKind::Read, shown)
            },
            |&poisoned| Effect::Read(Word::Int(u64::from(poisoned))),
        )
    }
}

/// `Ok(value)`, or `Err` with it when `poisoned`: std's `LockResult` around a guard, a
/// reference or the data. For a guard, whether the lock is poisoned is what the lock step just
/// taken observed (the data's version says it): no step of its own.
pub(crate) fn poisoned_if<T>(poisoned: bool, value: T) -> std::sync::LockResult<T> {
    if poisoned {
        Err(std::sync::PoisonError::new(value))
    } else {
        Ok(value)
    }
}
