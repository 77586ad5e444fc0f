//! loom's `sync::atomic`: fgvt-sync's atomics (`unsync_load` and `with_mut` included) and
//! fences, whose orderings fgvt's weak-memory model follows.

pub use fgvt_sync::atomic::{
    fence, AtomicBool, AtomicI16, AtomicI32, AtomicI64, AtomicI8, AtomicIsize, AtomicPtr,
    AtomicU16, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering,
};

/// The old name of [`std::hint::spin_loop`]: marks an iteration of a waiting loop.
#[deprecated(note = "use `loom::hint::spin_loop` instead")]
pub fn spin_loop_hint() {
    fgvt_sync::hint::spin_loop();
}
