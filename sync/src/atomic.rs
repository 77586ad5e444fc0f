//! Atomics whose every operation is one step of the interleaving tree: drop-in for
//! `std::sync::atomic`.
//!
//! Each call records its kind (read, write, CAS), the atomic's identity, the value it read or
//! wrote and the caller's `file:line:col`. A test whose accesses are all `SeqCst` runs
//! sequentially consistent; one where some access declares a weaker `Ordering` runs under the
//! C++20 / Rust memory model, where a load may read an older store than the latest, a store may
//! go before a later one, and only what a `Release` store (or fence) publishes reaches an
//! `Acquire` load (or fence) that reads it: each such choice is a branch of the tree (see
//! [`Test::memory`](crate::Test::memory)).
//!
//! A read-modify-write (`swap`, `fetch_add`, `fetch_max`, …) is one step, shown as a write
//! with the value it found and the value it left: `write seq#0 = 0 → 1 (fetch_add 1)`.
//! [`fetch_update`](AtomicUsize::fetch_update) is what `std` makes it: a read, then one CAS
//! step per attempt, the closure called again on the value a failed CAS found.
//!
//! `new` is not `const`: it registers the atomic with the execution that makes it, which
//! names it and checks the accesses that follow its making for data races. Where a constant is
//! needed (a `static`, a `const fn new` of the code under test), `const_new` makes one that is
//! registered at its first access in each run, counts as made before the run's threads, and
//! starts each run from its initial value. A crate that builds on `std` and on fgvt swaps the
//! constructor where it swaps the type (`src/sync.rs` under its `fgvt` feature):
//!
//! ```
//! use fgvt_sync::atomic::{AtomicUsize, Ordering::SeqCst};
//!
//! static RUNS: AtomicUsize = AtomicUsize::const_new(0);
//!
//! struct SpinLock { held: fgvt_sync::atomic::AtomicBool }
//! impl SpinLock {
//!     const fn new() -> SpinLock {
//!         SpinLock { held: fgvt_sync::atomic::AtomicBool::const_new(false) }
//!     }
//! }
//! static LOCK: SpinLock = SpinLock::new();
//! assert_eq!(RUNS.fetch_add(1, SeqCst), 0);
//! assert!(!LOCK.held.load(SeqCst));
//! ```
//!
//! ```
//! use fgvt_sync::atomic::{AtomicPtr, AtomicUsize, Ordering::{AcqRel, Acquire}};
//!
//! // As with std: the same methods, the same `Ordering`s.
//! let hits = AtomicUsize::new(0).named("hits");
//! assert_eq!(hits.fetch_add(2, AcqRel), 0);
//! assert_eq!(hits.compare_exchange(2, 5, AcqRel, Acquire), Ok(2));
//! assert_eq!(hits.load(Acquire), 5);
//! let top: AtomicPtr<u64> = AtomicPtr::new(std::ptr::null_mut());
//! assert!(top.load(Acquire).is_null());
//! ```

use std::fmt;
use std::panic::Location;

pub use std::sync::atomic::Ordering;

use fgvt_tree::EventKind;

use crate::fingerprint::{Effect, Word};
use crate::identity::Identity;
use crate::object_id::ObjectId;
use crate::races::Making;
use crate::runtime::{access, weak_access, Acted, Initial};
use crate::shown::{Raw, Rmw, Shown};
use crate::weak::{Request, Shape, Target};

/// A memory fence, drop-in for `std::sync::atomic::fence`: not a step of the tree (it has no
/// choice to make). Under weak memory it orders what the model says: a `Release` fence makes
/// the thread's later stores publish what came before it, an `Acquire` fence makes what its
/// earlier loads read publish to what comes after, and `SeqCst` fences are in one total order.
/// A test whose accesses are all `SeqCst` is sequentially consistent, where a fence adds
/// nothing. It still calls `std`'s fence (which panics for `Relaxed`, as `std` does).
#[track_caller]
pub fn fence(order: Ordering) {
    std::sync::atomic::fence(order);
    crate::runtime::weak_fence(std::panic::Location::caller(), order.into());
}

/// A compiler fence, drop-in for `std::sync::atomic::compiler_fence`: not a step, as
/// [`fence`] is not (fgvt's scheduler never reorders the accesses of a thread).
pub fn compiler_fence(order: Ordering) {
    std::sync::atomic::compiler_fence(order);
}

/// How an integer or boolean value is shown in reports, from its bits.
fn show<V: Bits + fmt::Debug>(bits: u64) -> String {
    format!("{:?}", V::from_bits(bits))
}

/// An integer or boolean value as an event keeps it until it is shown.
fn raw<V: Bits + fmt::Debug>(value: &V) -> Raw {
    Raw::Bits(value.bits(), show::<V>)
}

/// A pointer value as an event keeps it until it is shown (`null` or `ptr#n`, numbered per
/// execution).
fn raw_ptr<T>(value: &*mut T) -> Raw {
    Raw::Ptr(*value as usize, std::mem::align_of::<T>())
}

/// A value as fingerprints and the weak-memory model see it: its bits, and back.
trait Bits: Copy {
    fn bits(self) -> u64;
    fn from_bits(bits: u64) -> Self;
}

macro_rules! bits {
    ($($t:ty),*) => {
        $(impl Bits for $t {
            #[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)]
            fn bits(self) -> u64 {
                self as u64
            }

            #[allow(clippy::cast_possible_wrap, clippy::cast_possible_truncation)]
            fn from_bits(bits: u64) -> Self {
                bits as $t
            }
        })*
    };
}
bits!(usize, isize, u8, i8, u16, i16, u32, i32, u64, i64);

impl Bits for bool {
    fn bits(self) -> u64 {
        u64::from(self)
    }

    fn from_bits(bits: u64) -> Self {
        bits != 0
    }
}

impl<T> Bits for *mut T {
    fn bits(self) -> u64 {
        self as usize as u64
    }

    #[allow(clippy::cast_possible_truncation)]
    fn from_bits(bits: u64) -> Self {
        bits as usize as *mut T
    }
}

/// How the model shows a value of type `V`: as reports show it.
fn shape_of<V: Bits + fmt::Debug>() -> Shape {
    Shape::Value(show::<V>)
}

/// How the model shows a pointer to `T`: by the address's number in the execution.
fn shape_ptr<T>() -> Shape {
    Shape::Ptr(std::mem::align_of::<T>())
}

/// An integer or boolean value as a fingerprint word.
fn word<V: Bits>(value: &V) -> Word {
    Word::Int(value.bits())
}

/// A pointer value as a fingerprint word: the address, with its pointee's alignment.
fn word_ptr<T>(value: &*mut T) -> Word {
    Word::Ptr(*value as usize, std::mem::align_of::<T>())
}

/// The methods every atomic has: `[generics] Type, std type, value type, "name", raw, word,
/// shape` (how a value is kept for reports, seen by fingerprints, and by the weak-memory
/// model).
macro_rules! common {
    ([$($g:ident),*] $name:ty, $std:ty, $t:ty, $kind:expr, $raw:expr, $word:expr, $shape:expr) => {
        /// Dropping it tells the run where it lived: a later access there is a use after free.
        impl<$($g),*> Drop for $name {
            fn drop(&mut self) {
                self.id.dropped();
            }
        }

        impl<$($g),*> $name {
            /// Its identity in the run under way: one made by [`Self::const_new`] is given it
            /// at its first access in each run, and starts again from its initial value.
            fn object_id(&self) -> ObjectId {
                self.id.get(|name, at| {
                    let initial = self.init.load(Ordering::SeqCst);
                    self.inner.store(initial, Ordering::SeqCst);
                    ObjectId::lazy(name, Initial::Value($word(&initial)), at)
                })
            }

            /// An access of `kind` by the caller.
            #[track_caller]
            fn pending(&self, kind: EventKind) -> crate::runtime::Pending {
                self.id.pending_at(self.object_id(), kind, Location::caller())
            }

            /// The atomic as the weak-memory model sees it (asked by an access, after its
            /// [`Self::pending`] gave it its identity in the run).
            fn target(&self) -> Target {
                let id = self.id.given().unwrap_or_else(|| self.object_id());
                Target {
                    key: id.key(),
                    object: Some(id),
                    now: self.inner.load(Ordering::SeqCst).bits(),
                    shape: $shape,
                }
            }

            /// Leaves the latest value in modification order in `inner`, where `Debug`,
            /// `into_inner` and runs outside an execution read it.
            fn keep_latest(&self, latest: u64) {
                self.inner.store(<$t>::from_bits(latest), Ordering::SeqCst);
            }

            /// A new atomic holding `value`; its identity is its creation order in the test, and
            /// reports name it after the field or variable it is created for.
            #[track_caller]
            pub fn new(value: $t) -> Self {
                Self {
                    inner: <$std>::new(value),
                    id: Identity::Made(ObjectId::new(
                        $kind,
                        Initial::Value($word(&value)),
                        Making::Synchronizing,
                    )),
                    init: <$std>::new(value),
                }
            }

            /// A new atomic holding `value`, made in a `const` context: a `static`, or a
            /// `const fn new` of the code under test, where [`Self::new`] cannot be called.
            /// Its first access in each run gives it its identity and puts it back to `value`
            /// (every run starts alike); it counts as made before the run's threads, so no
            /// access races with its making (see the [module docs](self)).
            #[track_caller]
            pub const fn const_new(value: $t) -> Self {
                Self {
                    inner: <$std>::new(value),
                    id: Identity::lazy($kind, Location::caller()),
                    init: <$std>::new(value),
                }
            }

            /// Names the atomic in reports (`"d[0]"` is shown `d[0]#3`), where the line that
            /// creates it names no field or variable (an array, a macro).
            pub fn named(mut self, name: &'static str) -> Self {
                self.id.named(name);
                self
            }

            /// Reads the value (one read step; under weak memory, maybe an older store's).
            #[track_caller]
            pub fn load(&self, order: Ordering) -> $t {
                let pending = self.pending(EventKind::Read);
                access(
                    pending,
                    || match weak_access(pending.caller, || self.target(), order.into(), None, Request::Load) {
                        Some(done) => <$t>::from_bits(done.read),
                        None => self.inner.load(Ordering::SeqCst),
                    },
                    |v| Acted::shown(EventKind::Read, Shown::One($raw(v))),
                    |v| Effect::Read($word(v)),
                )
            }

            /// Writes `value` (one write step).
            #[track_caller]
            pub fn store(&self, value: $t, order: Ordering) {
                let pending = self.pending(EventKind::Write);
                access(
                    pending,
                    || match weak_access(pending.caller, || self.target(), order.into(), None, Request::Store(value.bits())) {
                        Some(done) => self.keep_latest(done.latest),
                        None => self.inner.store(value, Ordering::SeqCst),
                    },
                    |()| Acted::shown(EventKind::Write, Shown::One($raw(&value))),
                    |()| Effect::Write($word(&value)),
                )
            }

            /// Writes `value` and returns the old one (one step, shown `old → value (swap)`).
            #[track_caller]
            pub fn swap(&self, value: $t, order: Ordering) -> $t {
                let pending = self.pending(EventKind::Write);
                let bits = value.bits();
                access(
                    pending,
                    || match weak_access(pending.caller, || self.target(), order.into(), None, Request::Rmw(&|_| bits)) {
                        Some(done) => {
                            self.keep_latest(done.latest);
                            <$t>::from_bits(done.read)
                        }
                        None => self.inner.swap(value, Ordering::SeqCst),
                    },
                    |old| {
                        let shown = Shown::Changed { old: $raw(old), new: $raw(&value), how: Rmw::Swap };
                        Acted::shown(EventKind::Write, shown)
                    },
                    |old| Effect::Update { seen: $word(old), now: $word(&value) },
                )
            }

            /// Writes `new` if the value is `current` (one CAS step, successful or not).
            #[track_caller]
            pub fn compare_exchange(
                &self,
                current: $t,
                new: $t,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$t, $t> {
                let pending = crate::runtime::Pending {
                    // A loop that carries what a failed CAS read into the next one's
                    // expected value gives it other arguments each turn.
                    args: crate::fingerprint::hash_of(&[current.bits(), new.bits()]),
                    ..self.pending(EventKind::Cas { success: true })
                };
                let request = Request::Cas {
                    expected: current.bits(),
                    new: new.bits(),
                    failure: failure.into(),
                };
                access(
                    pending,
                    || match weak_access(pending.caller, || self.target(), success.into(), Some(failure.into()), request) {
                        Some(done) => {
                            self.keep_latest(done.latest);
                            let read = <$t>::from_bits(done.read);
                            if done.succeeded { Ok(read) } else { Err(read) }
                        }
                        None => self
                            .inner
                            .compare_exchange(current, new, Ordering::SeqCst, Ordering::SeqCst),
                    },
                    |r| {
                        let kind = EventKind::Cas { success: r.is_ok() };
                        Acted::shown(kind, Shown::Cas { expected: $raw(&current), new: $raw(&new) })
                    },
                    |r| match r {
                        Ok(old) => Effect::Update { seen: $word(old), now: $word(&new) },
                        Err(actual) => Effect::Read($word(actual)),
                    },
                )
            }

            /// As [`Self::compare_exchange`]: fgvt never fails a weak CAS spuriously (a
            /// spurious failure is a retry, which the loop around a weak CAS makes anyway).
            #[track_caller]
            pub fn compare_exchange_weak(
                &self,
                current: $t,
                new: $t,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$t, $t> {
                self.compare_exchange(current, new, success, failure)
            }

            /// Writes `new` if the value is `current`, and returns the value found either way
            /// (one CAS step): `std`'s deprecated form, which code such as spin 0.5 still
            /// calls. The failure ordering is `std`'s: `order` without its release side
            /// (`AcqRel` fails `Acquire`, `Release` fails `Relaxed`).
            #[deprecated(note = "use `compare_exchange` or `compare_exchange_weak`, as `std` says")]
            #[track_caller]
            pub fn compare_and_swap(&self, current: $t, new: $t, order: Ordering) -> $t {
                let failure = match order {
                    Ordering::Release | Ordering::Relaxed => Ordering::Relaxed,
                    Ordering::AcqRel | Ordering::Acquire => Ordering::Acquire,
                    _ => Ordering::SeqCst,
                };
                match self.compare_exchange(current, new, order, failure) {
                    Ok(found) | Err(found) => found,
                }
            }

            /// Sets the value to `f(old)` while `f` returns `Some`, as `std` does: one read
            /// step, then one CAS step per attempt; a CAS that finds another value than the
            /// one `f` was given calls `f` again on the value found. `Ok(old)` once a CAS
            /// succeeds, `Err(value)` as soon as `f` returns `None`.
            #[track_caller]
            pub fn fetch_update<F>(
                &self,
                set_order: Ordering,
                fetch_order: Ordering,
                mut f: F,
            ) -> Result<$t, $t>
            where
                F: FnMut($t) -> Option<$t>,
            {
                let mut prev = self.load(fetch_order);
                while let Some(next) = f(prev) {
                    match self.compare_exchange_weak(prev, next, set_order, fetch_order) {
                        Ok(old) => return Ok(old),
                        Err(now) => prev = now,
                    }
                }
                Err(prev)
            }

            /// The value, from an owned atomic (no step: nothing else can see it).
            pub fn into_inner(self) -> $t {
                self.inner.load(Ordering::SeqCst)
            }

            /// The value, through an exclusive reference (no step: nothing else can see it).
            pub fn get_mut(&mut self) -> &mut $t {
                self.inner.get_mut()
            }

            /// Runs `f` on the value through an exclusive reference (no step: nothing else can
            /// see it), as loom's atomics do.
            pub fn with_mut<R>(&mut self, f: impl FnOnce(&mut $t) -> R) -> R {
                f(self.inner.get_mut())
            }

            /// The latest value, read without a step or any synchronization, as loom's
            /// `unsync_load`.
            ///
            /// # Safety
            ///
            /// As loom's: no other thread may access the atomic meanwhile (fgvt does not check
            /// it).
            pub unsafe fn unsync_load(&self) -> $t {
                self.inner.load(Ordering::SeqCst)
            }
        }

        impl<$($g),*> From<$t> for $name {
            /// A new atomic holding `value`.
            #[track_caller]
            fn from(value: $t) -> Self {
                Self::new(value)
            }
        }

        impl<$($g),*> fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                // Debug-printing is not a step of the test: read the value directly.
                fmt::Debug::fmt(&self.inner, f)
            }
        }
    };
}

/// Read-modify-write methods: `[generics] Type, operand type, value type, raw, word, method,
/// …`. Each is one step that returns the old value; its event shows `old → new (method
/// operand)`.
macro_rules! fetch {
    ([$($g:ident),*] $name:ty, $std:ty, $arg:ty, $t:ty, $raw:expr, $word:expr, $($op:ident),*) => {
        impl<$($g),*> $name {
            $(
                #[doc = concat!(
                    "`", stringify!($op), "` as one step (a write that shows the value it found \
                     and the one it left); returns the old value."
                )]
                #[track_caller]
                pub fn $op(&self, value: $arg, order: Ordering) -> $t {
                    let pending = self.pending(EventKind::Write);
                    // The operation on a value, as `std` does it.
                    let apply = |old: u64| {
                        let scratch = <$std>::new(<$t>::from_bits(old));
                        scratch.$op(value, Ordering::SeqCst);
                        scratch.into_inner().bits()
                    };
                    let (old, _) = access(
                        pending,
                        // What is left: only this task runs until the next switch.
                        || match weak_access(pending.caller, || self.target(), order.into(), None, Request::Rmw(&apply)) {
                            Some(done) => {
                                self.keep_latest(done.latest);
                                (<$t>::from_bits(done.read), <$t>::from_bits(apply(done.read)))
                            }
                            None => {
                                let old = self.inner.$op(value, Ordering::SeqCst);
                                (old, self.inner.load(Ordering::SeqCst))
                            }
                        },
                        |(old, new)| {
                            let how = Rmw::Fetch(stringify!($op), raw(&value));
                            let shown = Shown::Changed { old: $raw(old), new: $raw(new), how };
                            Acted::shown(EventKind::Write, shown)
                        },
                        |(old, new)| Effect::Update { seen: $word(old), now: $word(new) },
                    );
                    old
                }
            )*
        }
    };
}

macro_rules! atomic_int {
    ($($name:ident($std:ty, $t:ty)),* $(,)?) => {
        $(
            #[doc = concat!("An instrumented `", stringify!($std), "`.")]
            pub struct $name {
                inner: $std,
                id: Identity,
                /// The initial value, which a `const`-made atomic starts each run from.
                init: $std,
            }

            common!([] $name, $std, $t, stringify!($name), raw, word, shape_of::<$t>());
            fetch!(
                [] $name, $std, $t, $t, raw, word,
                fetch_add, fetch_sub, fetch_and, fetch_nand, fetch_or, fetch_xor, fetch_max,
                fetch_min
            );

            impl Default for $name {
                /// A new atomic holding 0.
                #[track_caller]
                fn default() -> Self {
                    $name::new(0)
                }
            }
        )*
    };
}

atomic_int!(
    AtomicU8(std::sync::atomic::AtomicU8, u8),
    AtomicI8(std::sync::atomic::AtomicI8, i8),
    AtomicU16(std::sync::atomic::AtomicU16, u16),
    AtomicI16(std::sync::atomic::AtomicI16, i16),
    AtomicU32(std::sync::atomic::AtomicU32, u32),
    AtomicI32(std::sync::atomic::AtomicI32, i32),
    AtomicU64(std::sync::atomic::AtomicU64, u64),
    AtomicI64(std::sync::atomic::AtomicI64, i64),
    AtomicUsize(std::sync::atomic::AtomicUsize, usize),
    AtomicIsize(std::sync::atomic::AtomicIsize, isize),
);

/// An instrumented `std::sync::atomic::AtomicBool`.
pub struct AtomicBool {
    inner: std::sync::atomic::AtomicBool,
    id: Identity,
    /// The initial value, which a `const`-made atomic starts each run from.
    init: std::sync::atomic::AtomicBool,
}

common!([] AtomicBool, std::sync::atomic::AtomicBool, bool, "AtomicBool", raw, word, shape_of::<bool>());
fetch!([] AtomicBool, std::sync::atomic::AtomicBool, bool, bool, raw, word, fetch_and, fetch_nand, fetch_or, fetch_xor);

impl AtomicBool {
    /// Negates the value as one step (a write that shows the value it found and the one it
    /// left); returns the old value.
    #[track_caller]
    pub fn fetch_not(&self, order: Ordering) -> bool {
        // `fetch_xor(true)` is what `std` does, and shows as `fetch_xor true`.
        self.fetch_xor(true, order)
    }
}

impl Default for AtomicBool {
    /// A new atomic holding `false`.
    #[track_caller]
    fn default() -> Self {
        AtomicBool::new(false)
    }
}

/// An instrumented `std::sync::atomic::AtomicPtr`. Its values are addresses, which differ
/// between executions: reports show `null` or `ptr#n`, the addresses of one execution numbered
/// in the order they first appear in it, with a tag in the low bits as `ptr#n|1`.
pub struct AtomicPtr<T> {
    inner: std::sync::atomic::AtomicPtr<T>,
    id: Identity,
    /// The initial value, which a `const`-made atomic starts each run from.
    init: std::sync::atomic::AtomicPtr<T>,
}

common!([T] AtomicPtr<T>, std::sync::atomic::AtomicPtr<T>, *mut T, "AtomicPtr", raw_ptr::<T>, word_ptr::<T>, shape_ptr::<T>());
// Pointer arithmetic and tag bits (a mark in the low bits of a lock-free list's `next`).
fetch!(
    [T] AtomicPtr<T>, std::sync::atomic::AtomicPtr<T>, usize, *mut T, raw_ptr::<T>, word_ptr::<T>,
    fetch_ptr_add, fetch_ptr_sub, fetch_byte_add, fetch_byte_sub, fetch_and, fetch_or, fetch_xor
);

impl<T> Default for AtomicPtr<T> {
    /// A new atomic holding the null pointer.
    #[track_caller]
    fn default() -> Self {
        AtomicPtr::new(std::ptr::null_mut())
    }
}
