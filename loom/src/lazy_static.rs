//! What [`lazy_static!`](crate::lazy_static!) stores: a value made once per run.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;

/// A static made by `init` the first time a run asks for it (see
/// [`lazy_static!`](crate::lazy_static!)); outside a model, once for the whole program.
pub struct Lazy<T> {
    init: fn() -> T,
    once: std::sync::OnceLock<T>,
}

thread_local! {
    /// The values of the run under way on this OS thread, by the address of their `Lazy`:
    /// emptied when the next run starts. Boxed so that a value stays where it is while the
    /// map grows.
    static VALUES: RefCell<(u64, HashMap<usize, Box<dyn Any>>)> =
        RefCell::new((u64::MAX, HashMap::new()));
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
        let Some((run, _)) = fgvt_sync::thread::execution_and_lane() else {
            return self.once.get_or_init(self.init);
        };
        let key = self as *const Lazy<T> as usize;
        let found = VALUES.with(|values| {
            let mut values = values.borrow_mut();
            if values.0 != run {
                // A new run: the last one's values go (they are never read again).
                values.1.clear();
                values.0 = run;
            }
            values.1.get(&key).map(|v| v.as_ref() as *const dyn Any)
        });
        let value = match found {
            Some(value) => value,
            None => {
                // Made outside the borrow: the initializer may ask for another lazy static.
                let made: Box<dyn Any> = Box::new((self.init)());
                let value = made.as_ref() as *const dyn Any;
                VALUES.with(|values| values.borrow_mut().1.insert(key, made));
                value
            }
        };
        // SAFETY: the box stays in the map, unmoved, until the next run starts on this OS
        // thread; no reference of this run outlives it (a model's threads end with the run).
        let value: &'static dyn Any = unsafe { &*value };
        value
            .downcast_ref::<T>()
            .expect("a lazy static's value has its type")
    }
}

impl<T> std::fmt::Debug for Lazy<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lazy").finish_non_exhaustive()
    }
}
