//! The recording scheduler of fgvt and the interleaving tree it builds.
//!
//! A [`Program`] is explored by [`explore`]: every enabled thread's next step is taken from
//! every state, giving the interleaving tree of the test's shared-memory events (a DAG when
//! identical states are merged). Each leaf carries its coarse [`History`], ready for the
//! linearizability checker. This crate never depends on the modeling language.

pub mod event;
pub mod explore;
pub mod history;
pub mod program;
pub mod source;
pub mod value;

pub use event::{Event, EventKind};
pub use explore::{
    explore, explore_with_progress, Counts, ExploreOptions, Leaf, LeafKind, Limit, Node, NodeId,
    Progress, Stats, Tree,
};
pub use history::{Call, CoarseEvent, History, Operation, ThreadId};
pub use program::{Fault, Program, Step, Wait};
pub use source::{Location, SourceMap, Span};
pub use value::Value;
