//! Histories, sequential specs, the linearizability checker, node labels and CDRS.

pub mod spec;

pub use spec::{Apply, Spec};
