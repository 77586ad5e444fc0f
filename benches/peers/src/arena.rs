//! Deferred freeing for the Treiber stacks: every node lives until its stack is dropped.
//!
//! A `pop` that loses its CAS may still read the `next` of a node another `pop` has just
//! unlinked, so an unlinked node cannot be freed while the threads run (that needs hazard
//! pointers or epochs, which none of the three tools is being asked about here). Leaking would
//! do, but the tools run the test body up to millions of times in one process: the arena frees
//! an execution's nodes when that execution drops its stack. fgvt also asks that no address be
//! reused for a new node while an execution runs, which this gives.

use std::sync::Mutex;

/// Nodes allocated by one stack, freed together when it is dropped.
///
/// Allocating is plain `std` code, invisible to every tool (as `malloc` is): it touches nothing
/// another thread reads until the node is published through the stack's atomic `top`. The
/// `std` lock is never held across a step of a tool's scheduler, so it never blocks.
pub struct Arena<T> {
    nodes: Mutex<Vec<*mut T>>,
}

// SAFETY: the arena only hands out addresses; it owns the nodes (each a `Box` turned into a raw
// pointer) and frees them once, on drop, when no thread can use them any more. Sending or
// sharing it sends or shares `T`s.
unsafe impl<T: Send> Send for Arena<T> {}
// SAFETY: as above; threads reach nodes only through `&T` (their mutable parts are atomics).
unsafe impl<T: Send + Sync> Sync for Arena<T> {}

impl<T> Arena<T> {
    /// An empty arena.
    pub fn new() -> Self {
        Arena {
            nodes: Mutex::new(Vec::new()),
        }
    }

    /// Moves `node` to the heap and returns its address, valid until the arena is dropped.
    pub fn alloc(&self, node: T) -> *mut T {
        let address = Box::into_raw(Box::new(node));
        // A poisoned lock only means a thread panicked while pushing: the list is still whole.
        self.nodes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(address);
        address
    }
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Arena::new()
    }
}

impl<T> Drop for Arena<T> {
    fn drop(&mut self) {
        let nodes = self.nodes.get_mut().unwrap_or_else(|e| e.into_inner());
        for address in nodes.drain(..) {
            // SAFETY: each address came from `Box::into_raw` in `alloc` and is freed only here.
            drop(unsafe { Box::from_raw(address) });
        }
    }
}
