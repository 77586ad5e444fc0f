//! loom's `alloc`: `std::alloc`'s functions (loom tracks what they allocate to report leaks;
//! fgvt does not, so a leak goes unreported).

pub use std::alloc::{alloc, alloc_zeroed, dealloc, realloc, Layout};
