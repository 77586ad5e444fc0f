//! loom's `thread`: threads a model spawns, each a thread of fgvt's runs (fgvt-sync's), and
//! thread-locals per thread of each run.

pub use fgvt_sync::thread::{
    current, park, spawn, yield_now, Builder, JoinHandle, Thread, ThreadId,
};
pub use std::thread::panicking;

/// A thread-local value, as [`thread_local!`](crate::thread_local!) declares one: each thread
/// of each run has its own, made by the initializer the first time the thread asks.
pub struct LocalKey<T> {
    init: fn() -> T,
}

/// Why [`LocalKey::try_with`] could not give the value (loom's, which never happens here: a
/// value lives until its run ends).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessError;

impl std::fmt::Display for AccessError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("already destroyed")
    }
}

impl std::error::Error for AccessError {}

impl<T: 'static> LocalKey<T> {
    /// A key whose values `init` makes.
    #[doc(hidden)]
    pub const fn new(init: fn() -> T) -> LocalKey<T> {
        LocalKey { init }
    }

    /// Runs `f` on the calling thread's value, made now if it has none yet.
    pub fn with<F, R>(&'static self, f: F) -> R
    where
        F: FnOnce(&T) -> R,
    {
        // Outside a model, one value per OS thread, until a model runs on it (run `u64::MAX - 1`,
        // which no model's is).
        let (run, lane) = fgvt_sync::thread::execution_and_lane().unwrap_or((u64::MAX - 1, 0));
        f(crate::per_run::value(
            run,
            self as *const Self as usize,
            lane,
            self.init,
        ))
    }

    /// [`LocalKey::with`], which always has a value to give.
    pub fn try_with<F, R>(&'static self, f: F) -> Result<R, AccessError>
    where
        F: FnOnce(&T) -> R,
    {
        Ok(self.with(f))
    }
}

impl<T> std::fmt::Debug for LocalKey<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalKey").finish_non_exhaustive()
    }
}
