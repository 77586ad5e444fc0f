//! Values kept for the run under way: what a lazy static or a thread-local holds in one run
//! of a model, made afresh in the next.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;

thread_local! {
    /// The values of the run under way on this OS thread (its number first), by owner (the
    /// address of the static that declares them) and thread: emptied when the next run starts.
    /// Boxed, so that a value stays where it is while the map grows.
    static VALUES: RefCell<(u64, HashMap<(usize, usize), Box<dyn Any>>)> =
        RefCell::new((u64::MAX, HashMap::new()));
}

/// The value `owner` keeps for `thread` in run `run`, made by `make` if it has none yet.
pub(crate) fn value<T: 'static>(
    run: u64,
    owner: usize,
    thread: usize,
    make: fn() -> T,
) -> &'static T {
    let key = (owner, thread);
    let found = VALUES.with(|values| {
        let mut values = values.borrow_mut();
        if values.0 != run {
            // A new run: the last one's values go (none of its threads is left to read them).
            values.1.clear();
            values.0 = run;
        }
        values.1.get(&key).map(|v| v.as_ref() as *const dyn Any)
    });
    let value = match found {
        Some(value) => value,
        None => {
            // Made outside the borrow: making one value may ask for another.
            let made: Box<dyn Any> = Box::new(make());
            let value = made.as_ref() as *const dyn Any;
            VALUES.with(|values| values.borrow_mut().1.insert(key, made));
            value
        }
    };
    // SAFETY: the box stays in the map, unmoved, until the next run starts on this OS thread,
    // after every thread of this one has ended; no reference of this run outlives it.
    let value: &'static dyn Any = unsafe { &*value };
    value
        .downcast_ref::<T>()
        .expect("a kept value has the type its owner makes")
}
