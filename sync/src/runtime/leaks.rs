//! Leaks: an [`Arc`](crate::Arc) allocation a model's run made and still holds when every
//! thread has returned.
//!
//! Each allocation is kept, by address, from its making to the drop of its last reference;
//! after a model's threads have all returned ([`check`], from `test.rs`'s `run_model`), one
//! still kept can never be freed (nothing is left to drop it): the run ends in a fault naming
//! the line that made it. A test of an object has no such point (the object itself holds what
//! it made until the run is over), so only models check.

use std::panic::Location;

use fgvt_tree::Fault;

use super::{sources, with_free_recorder, with_recorder};

/// How the fault of a leak begins, which tells it from a panic's.
pub(crate) const LEAK: &str = "leak: ";

/// Records an allocation made at `at`, while an execution runs.
pub(crate) fn arc_made(address: usize, at: &'static Location<'static>) {
    with_free_recorder(|rec| {
        if rec.end.is_none() {
            rec.arcs.insert(address, at);
        }
    });
}

/// Records that the allocation at `address` is freed (its last reference dropped).
pub(crate) fn arc_freed(address: usize) {
    with_free_recorder(|rec| rec.arcs.remove(&address));
}

/// Ends the run in a leak's fault if an allocation it made is still held; whether it did.
/// Called when every thread of a model has returned.
pub(crate) fn check() -> bool {
    with_recorder(|rec| {
        if rec.end.is_some() || rec.arcs.is_empty() {
            return false;
        }
        let mut held: Vec<&'static Location<'static>> = rec.arcs.values().copied().collect();
        held.sort_by_key(|at| (at.file(), at.line(), at.column()));
        let at = held[0];
        let more = match held.len() - 1 {
            0 => String::new(),
            1 => " (and 1 more)".to_string(),
            n => format!(" (and {n} more)"),
        };
        let message = format!(
            "{LEAK}the `Arc` made at {}:{}:{}{more} is never freed: every thread has returned \
             and a reference to it is left (a cycle of `Arc`s, an `into_raw` never taken back, \
             a clone forgotten)",
            at.file(),
            at.line(),
            at.column()
        );
        rec.end_with_fault(Fault::new(message, Some(sources::span_at(at))));
        true
    })
    .unwrap_or(false)
}
