//! loom's `thread`: threads a model spawns, each a thread of fgvt's runs (fgvt-sync's), and
//! thread-locals per thread of each run.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;

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

thread_local! {
    /// The values of the run under way on this OS thread, by key address and thread: emptied
    /// when the next run starts.
    static LOCALS: RefCell<(u64, HashMap<(usize, usize), Box<dyn Any>>)> =
        RefCell::new((u64::MAX - 1, HashMap::new()));
}

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
        // Outside a model, the OS thread's value, which lives as long as the OS thread (no run
        // number is `u64::MAX`).
        let (run, lane) = fgvt_sync::thread::execution_and_lane().unwrap_or((u64::MAX, 0));
        let key = (self as *const LocalKey<T> as usize, lane);
        let found = LOCALS.with(|locals| {
            let mut locals = locals.borrow_mut();
            if locals.0 != run {
                locals.1.clear();
                locals.0 = run;
            }
            locals.1.get(&key).map(|v| v.as_ref() as *const dyn Any)
        });
        let value = match found {
            Some(value) => value,
            None => {
                let made: Box<dyn Any> = Box::new((self.init)());
                let value = made.as_ref() as *const dyn Any;
                LOCALS.with(|locals| locals.borrow_mut().1.insert(key, made));
                value
            }
        };
        // SAFETY: the box stays in the map, unmoved, until the next run starts on this OS
        // thread, after every thread of this one has ended.
        let value = unsafe { &*value };
        f(value
            .downcast_ref::<T>()
            .expect("a thread-local's value has its type"))
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
