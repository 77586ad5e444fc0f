//! loom's `cell`: [`UnsafeCell`] (`with`, `with_mut`, `get`, `get_mut`), whose accesses are
//! checked for data races, and [`Cell`]; fgvt-sync's types.

pub use fgvt_sync::cell::{Cell, ConstPtr, MutPtr, UnsafeCell};
