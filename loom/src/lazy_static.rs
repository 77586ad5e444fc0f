//! What [`lazy_static!`](crate::lazy_static!) stores: a value made once per run.

/// A static made by `init` the first time a run asks for it (see
/// [`lazy_static!`](crate::lazy_static!)); outside a model, once for the whole program.
pub struct Lazy<T> {
    init: fn() -> T,
    once: std::sync::OnceLock<T>,
}

impl<T: 'static> Lazy<T> {
    /// A static made by `init`.
    pub const fn new(init: fn() -> T) -> Lazy<T> {
        Lazy {
            init,
            once: std::sync::OnceLock::new(),
        }
    }

    /// The value of the run under way, made now if the run has not asked for it yet.
    pub fn get(&'static self) -> &'static T {
        match fgvt_sync::thread::execution_and_lane() {
            // One value for every thread of the run.
            Some((run, _)) => {
                crate::per_run::value(run, self as *const Self as usize, 0, self.init)
            }
            None => self.once.get_or_init(self.init),
        }
    }
}

impl<T> std::fmt::Debug for Lazy<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lazy").finish_non_exhaustive()
    }
}
