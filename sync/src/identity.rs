//! An object's identity as the object holds it ([`Identity`]): given when the object is made,
//! or, for an object made in a `const` context (a `static`, a `const fn new`), at its first
//! access in each run.
//!
//! A `const fn` cannot reach the run (it may run at compile time), so `const_new` leaves the
//! identity to be given later ([`Identity::lazy`]): the object's first access in a run
//! registers it, as made before the run's threads (a `static` is), and an atomic goes back to
//! its initial value then, so that every run starts alike. A cell's data is not reset (fgvt
//! cannot make a `T` again): a `static` cell keeps what the last run left, as a `static` does
//! under loom.

use std::panic::Location;
use std::sync::Mutex;

use fgvt_tree::EventKind;

use crate::object_id::ObjectId;
use crate::runtime::{self, Pending};

/// An object's identity as the object holds it (see the [module docs](self)).
pub(crate) enum Identity {
    /// Given when the object was made.
    Made(ObjectId),
    /// Made in a `const` context: given at the object's first access in each run.
    Lazy(Lazy),
}

/// What a `const`-made object keeps for the identity it is given in each run.
pub(crate) struct Lazy {
    /// Its type's name, and the name reports give it.
    name: &'static str,
    /// Where it was made (`const_new`'s caller).
    at: &'static Location<'static>,
    /// The identity given in the latest run that touched it.
    given: Mutex<Option<ObjectId>>,
}

impl Identity {
    /// The identity of an object made in a `const` context at `at`, named `name` until
    /// [`Identity::named`] says otherwise.
    pub(crate) const fn lazy(name: &'static str, at: &'static Location<'static>) -> Identity {
        Identity::Lazy(Lazy {
            name,
            at,
            given: Mutex::new(None),
        })
    }

    /// The identity in the run under way. A lazy one is given at its first access in a run:
    /// `register(name, at)` makes it (and puts the object back to its initial state).
    pub(crate) fn get(
        &self,
        register: impl FnOnce(&'static str, &'static Location<'static>) -> ObjectId,
    ) -> ObjectId {
        match self {
            Identity::Made(id) => *id,
            Identity::Lazy(lazy) => {
                if runtime::on_worker() {
                    // Shared by every execution in the process: not a worker's to touch.
                    runtime::leave_static_to_main();
                }
                let mut given = lazy.given.lock().unwrap_or_else(|e| e.into_inner());
                match *given {
                    Some(id) if runtime::made_in_this_run(&id) != Some(false) => id,
                    _ => {
                        let id = register(lazy.name, lazy.at);
                        *given = Some(id);
                        id
                    }
                }
            }
        }
    }

    /// The identity given in this run, if any: what a drop reports (a lazy object not yet
    /// touched in the run was never part of it).
    pub(crate) fn given(&self) -> Option<ObjectId> {
        match self {
            Identity::Made(id) => Some(*id),
            Identity::Lazy(lazy) => *lazy.given.lock().unwrap_or_else(|e| e.into_inner()),
        }
    }

    /// Names the object in reports.
    pub(crate) fn named(&mut self, name: &'static str) {
        match self {
            Identity::Made(id) => *id = id.named(name),
            Identity::Lazy(lazy) => lazy.name = name,
        }
    }

    /// Where the identity lives: inside its object, so the object's place while it is
    /// borrowed (see `runtime/freed.rs`).
    pub(crate) fn address(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    /// An access of `kind` at `at` to the object whose identity in the run is `id` (from
    /// [`Identity::get`]), which says where the object is.
    pub(crate) fn pending_at(
        &self,
        id: ObjectId,
        kind: EventKind,
        at: &'static Location<'static>,
    ) -> Pending {
        Pending {
            address: self.address(),
            ..id.pending_at(kind, at)
        }
    }

    /// Tells the run the object is dropped (see `runtime/freed.rs`).
    pub(crate) fn dropped(&self) {
        if let Some(id) = self.given() {
            runtime::dropped(&id, self.address());
        }
    }
}

impl std::fmt::Display for Identity {
    /// As its identity in the run (`head#0`), or its name before it has one.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.given(), self) {
            (Some(id), _) => id.fmt(f),
            (None, Identity::Lazy(lazy)) => f.write_str(lazy.name),
            (None, Identity::Made(id)) => id.fmt(f),
        }
    }
}
