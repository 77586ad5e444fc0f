//! loom's `sync`: atomics, locks and condition variables are fgvt-sync's (each access a step of
//! fgvt's runs); [`Arc`] is fgvt-sync's, `std`'s counted by the run, so that an allocation
//! still held when the model's threads have returned fails the run as a leak, as loom's does;
//! [`Notify`], [`Barrier`] and [`mpsc`] are built on them.

pub mod atomic;
mod barrier;
pub mod mpsc;
mod notify;

pub use barrier::{Barrier, BarrierWaitResult};
pub use fgvt_sync::{
    Arc, Condvar, LockResult, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
    TryLockResult,
};
pub use notify::Notify;
