//! loom's `sync`: atomics, locks and condition variables are fgvt-sync's (each access a step of
//! fgvt's runs); [`Arc`] is std's; [`Notify`], [`Barrier`] and [`mpsc`] are built on them.

pub mod atomic;
mod barrier;
pub mod mpsc;
mod notify;

pub use barrier::{Barrier, BarrierWaitResult};
pub use fgvt_sync::{
    Condvar, LockResult, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
    TryLockResult,
};
pub use notify::Notify;
pub use std::sync::Arc;
