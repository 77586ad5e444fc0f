//! Plain memory: cells whose content is read and written without synchronization, as Rust code
//! keeps the data of a lock or of a lock-free structure's nodes. Drop-in for loom's
//! `loom::cell`, whose API they share.
//!
//! An access to a cell's content is not a step of the tree: it happens inside the step before
//! it, as a plain field access does in compiled code. It is checked for a **data race**
//! instead: two accesses to one cell by different threads, at least one a write, that
//! happens-before does not order (no lock taken around both, no `Release` store after the first
//! read by an `Acquire` load before the second, ...) are undefined behaviour in Rust, and end the
//! run in a fault leaf that names both lines. A cell made by a test thread during an operation is
//! written by its making: a thread that reaches it without happening after that races with it.
//! Under weak memory a read sees the write that happens before it; with every access `SeqCst`,
//! the check still finds two threads touching a cell with nothing ordering them.
//!
//! ```
//! use fgvt_sync::atomic::{AtomicBool, Ordering};
//! use fgvt_sync::cell::UnsafeCell;
//! use fgvt_sync::{Test, Verdict};
//!
//! /// A value published through a flag: `Relaxed` publishes nothing.
//! struct Mailbox {
//!     data: UnsafeCell<i64>,
//!     ready: AtomicBool,
//! }
//!
//! // SAFETY: `data` is written before `ready` is raised and read only once it is.
//! unsafe impl Sync for Mailbox {}
//!
//! #[fgvt_sync::operations]
//! impl Mailbox {
//!     fn new() -> Self {
//!         Mailbox { data: UnsafeCell::new(0), ready: AtomicBool::new(false) }
//!     }
//!
//!     pub fn send(&self, v: i64) {
//!         self.data.with_mut(|p| unsafe { *p = v });
//!         self.ready.store(true, Ordering::Relaxed); // BUG: should be Release
//!     }
//!
//!     pub fn receive(&self) -> Option<i64> {
//!         if self.ready.load(Ordering::Acquire) {
//!             Some(self.data.with(|p| unsafe { *p }))
//!         } else {
//!             None
//!         }
//!     }
//! }
//!
//! let found = Test::<Mailbox>::new("mailbox")
//!     .thread(&["send(1)"])
//!     .thread(&["receive()"])
//!     .localize()
//!     .unwrap();
//! assert_eq!(found.report.verdict, Verdict::NotLinearizable);
//! // What went wrong: `data race on data#0 (undefined behaviour): T1's read and T0's write
//! // are not ordered by happens-before`, with both lines in the report.
//! let symptom = found.report.symptom.as_deref().unwrap_or_default();
//! assert!(symptom.starts_with("data race on "), "{symptom}");
//! // The fix the report names: the flag's store made `Release`.
//! let fix = &found.report.memory.as_ref().unwrap().fix;
//! assert_eq!((fix[0].from.as_str(), fix[0].to.as_str()), ("Relaxed", "Release"));
//! ```

use std::fmt;
use std::panic::Location;

use crate::fingerprint::Effect;
use crate::identity::Identity;
use crate::object_id::ObjectId;
use crate::races::{Making, Touch};
use crate::runtime::{self, Initial};

/// A cell of plain memory, drop-in for `loom::cell::UnsafeCell`: its content is reached
/// through raw pointers, and every access is checked for a data race (see the
/// [module docs](self)).
///
/// Like `std`'s, it is not `Sync`: an object that shares one between threads says why that
/// is sound with `unsafe impl Sync`, and fgvt checks the claim.
pub struct UnsafeCell<T> {
    data: std::cell::UnsafeCell<T>,
    id: Identity,
}

impl<T> UnsafeCell<T> {
    /// A new cell holding `data`, named in reports after the field or variable it is made for
    /// (made by a test thread in an operation, its making is a write).
    #[track_caller]
    pub fn new(data: T) -> UnsafeCell<T> {
        UnsafeCell::made(data, "UnsafeCell")
    }

    /// A new cell holding `data`, named after its type `kind` where the line names nothing.
    #[track_caller]
    fn made(data: T, kind: &'static str) -> UnsafeCell<T> {
        UnsafeCell {
            data: std::cell::UnsafeCell::new(data),
            id: Identity::Made(ObjectId::new(kind, Initial::Version, Making::Plain)),
        }
    }

    /// A new cell holding `data`, made in a `const` context: a `static`, or a `const fn new`
    /// of the code under test. Its first access in each run gives it its identity, as made
    /// before the run's threads; its data is not reset between runs (as a `static`'s is not
    /// under loom): a test that reads it resets it.
    #[track_caller]
    pub const fn const_new(data: T) -> UnsafeCell<T> {
        UnsafeCell {
            data: std::cell::UnsafeCell::new(data),
            id: Identity::lazy("UnsafeCell", Location::caller()),
        }
    }

    /// Names the cell in reports, where the line that makes it names no field or variable.
    pub fn named(mut self, name: &'static str) -> Self {
        self.id.named(name);
        self
    }

    /// Reads the content: `f` gets a pointer to it (one read).
    #[track_caller]
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        self.touch(Touch::Read, Location::caller());
        f(self.data.get())
    }

    /// Reads or writes the content: `f` gets a mutable pointer to it (one write).
    #[track_caller]
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        self.touch(Touch::Write, Location::caller());
        f(self.data.get())
    }

    /// A pointer to read the content through (one read, now), as loom's `get`.
    #[track_caller]
    pub fn get(&self) -> ConstPtr<T> {
        self.touch(Touch::Read, Location::caller());
        ConstPtr {
            ptr: self.data.get(),
        }
    }

    /// A pointer to read or write the content through (one write, now), as loom's `get_mut`.
    #[track_caller]
    pub fn get_mut(&self) -> MutPtr<T> {
        self.touch(Touch::Write, Location::caller());
        MutPtr {
            ptr: self.data.get(),
        }
    }

    /// The content, taking the cell (no access: nobody else can hold it).
    pub fn into_inner(self) -> T {
        let cell = std::mem::ManuallyDrop::new(self);
        cell.id.dropped();
        // SAFETY: `cell` is never used or dropped again: the data is moved out once.
        unsafe { std::ptr::read(&raw const cell.data) }.into_inner()
    }

    fn touch(&self, touch: Touch, at: &'static Location<'static>) {
        let effect = match touch {
            Touch::Read => Effect::ReadVersion,
            Touch::Write | Touch::Create => Effect::UpdateVersion,
        };
        let id = (self.id).get(|name, made_at| ObjectId::lazy(name, Initial::Version, made_at));
        runtime::plain(id, self.id.address(), touch, at, effect);
    }
}

/// Dropping it tells the run where it lived: a later access there is a use after free.
impl<T> Drop for UnsafeCell<T> {
    fn drop(&mut self) {
        self.id.dropped();
    }
}

impl<T: Default> Default for UnsafeCell<T> {
    #[track_caller]
    fn default() -> Self {
        UnsafeCell::new(T::default())
    }
}

impl<T> From<T> for UnsafeCell<T> {
    #[track_caller]
    fn from(data: T) -> Self {
        UnsafeCell::new(data)
    }
}

impl<T> fmt::Debug for UnsafeCell<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "UnsafeCell({})", self.id)
    }
}

/// A pointer to an [`UnsafeCell`]'s content for reading, as [`UnsafeCell::get`] gives it.
#[derive(Debug)]
pub struct ConstPtr<T> {
    ptr: *const T,
}

impl<T> ConstPtr<T> {
    /// The content.
    ///
    /// # Safety
    ///
    /// As for dereferencing the raw pointer: no write to the content while the reference
    /// lives.
    pub unsafe fn deref(&self) -> &T {
        // SAFETY: the caller's contract.
        unsafe { &*self.ptr }
    }

    /// Calls `f` with the raw pointer.
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.ptr)
    }
}

/// A pointer to an [`UnsafeCell`]'s content for writing, as [`UnsafeCell::get_mut`] gives it.
#[derive(Debug)]
pub struct MutPtr<T> {
    ptr: *mut T,
}

impl<T> MutPtr<T> {
    /// The content.
    ///
    /// # Safety
    ///
    /// As for dereferencing the raw pointer: no other access to the content while the reference
    /// lives.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn deref(&self) -> &mut T {
        // SAFETY: the caller's contract.
        unsafe { &mut *self.ptr }
    }

    /// Calls `f` with the raw pointer.
    pub fn with<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.ptr)
    }
}

/// A cell of plain memory for `Copy` values, drop-in for `loom::cell::Cell` (and `std`'s):
/// every access is checked for a data race, as an [`UnsafeCell`]'s is.
pub struct Cell<T> {
    cell: UnsafeCell<T>,
}

impl<T> Cell<T> {
    /// A new cell holding `value`.
    #[track_caller]
    pub fn new(value: T) -> Cell<T> {
        Cell {
            cell: UnsafeCell::made(value, "Cell"),
        }
    }

    /// Names the cell in reports, where the line that makes it names no field or variable.
    pub fn named(self, name: &'static str) -> Self {
        Cell {
            cell: self.cell.named(name),
        }
    }

    /// Writes `value` (one write).
    #[track_caller]
    pub fn set(&self, value: T) {
        // SAFETY: the cell is not `Sync`, and the data-race check ends the run at any access
        // of another thread that is not ordered with this one.
        self.cell.with_mut(|p| unsafe { *p = value });
    }

    /// Writes `value` and returns the old one (one write).
    #[track_caller]
    pub fn replace(&self, value: T) -> T {
        // SAFETY: as in `set`.
        self.cell
            .with_mut(|p| unsafe { std::mem::replace(&mut *p, value) })
    }

    /// Swaps the contents of two cells (a write of each).
    #[track_caller]
    pub fn swap(&self, other: &Cell<T>) {
        if std::ptr::eq(self, other) {
            return;
        }
        let (a, b) = (self.cell.get_mut(), other.cell.get_mut());
        // SAFETY: as in `set`; the two cells are distinct.
        unsafe { std::ptr::swap(a.ptr, b.ptr) };
    }

    /// The content, taking the cell.
    pub fn into_inner(self) -> T {
        self.cell.into_inner()
    }
}

impl<T: Copy> Cell<T> {
    /// Reads the value (one read).
    #[track_caller]
    pub fn get(&self) -> T {
        // SAFETY: as in `set`.
        self.cell.with(|p| unsafe { *p })
    }
}

impl<T: Default> Cell<T> {
    /// Takes the value, leaving the default (one write).
    #[track_caller]
    pub fn take(&self) -> T {
        self.replace(T::default())
    }
}

impl<T: Default> Default for Cell<T> {
    #[track_caller]
    fn default() -> Self {
        Cell::new(T::default())
    }
}

impl<T> fmt::Debug for Cell<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Cell({})", self.cell.id)
    }
}
