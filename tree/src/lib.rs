//! The recording scheduler of fgvt and the interleaving tree it builds.
//!
//! * [`model`]: the interleaving [`Tree`] — nodes ([`graph`]), [`leaf`]s, counts over the
//!   unfolded tree ([`Counts`]) — and the [`TreeBuilder`] every backend builds it with;
//! * [`limit`]: the typed limits, which one cut an exploration ([`Limit`]) and why a bounded
//!   leaf ends its path ([`Bound`]);
//! * [`program`]: the [`Program`] trait, a deterministic transition system whose threads take one
//!   shared-memory [`Event`] per step;
//! * [`explore`](mod@explore): the state-space explorer, which takes every enabled thread's next
//!   step from every state, depth-first, sharing the nodes of identical states (a DAG);
//! * [`reduced`]: a verdict search that runs one execution of each class of equivalent runs
//!   (a partial-order reduction, told which steps commute by each event's [`Footprint`]);
//! * [`event`], [`history`], [`value`], [`source`]: what a step is, the coarse history of calls
//!   and returns a leaf carries for the linearizability checker, the values of operations, and
//!   source spans.
//!
//! This crate never depends on the modeling language, the checker or the reports, and never
//! names a command-line option: limits are typed ([`Limit`], [`Bound`]).
//!
//! # A second backend
//!
//! A program whose state cannot be cloned or hashed (real code under a controlled scheduler)
//! cannot implement [`Program`]; it is explored by re-executing schedule prefixes instead, and
//! builds the same [`Tree`] with a [`TreeBuilder`], leaves carrying the same [`Leaf`] data. The
//! labels, CDRS and reports downstream only ever see the `Tree`.
//!
//! # Example
//!
//! Two threads each write one shared cell once: two interleavings.
//!
//! ```
//! use fgvt_tree::{explore, Call, Event, EventKind, ExploreOptions, Fault, Footprint, History, Program, Span, Step, Value};
//!
//! /// Thread `t` writes cell `t`; a state says which threads have written.
//! struct TwoWriters;
//!
//! impl Program for TwoWriters {
//!     type State = [bool; 2];
//!
//!     fn threads(&self) -> usize {
//!         2
//!     }
//!
//!     fn initial_state(&self) -> Result<([bool; 2], History), Fault> {
//!         Ok(([false, false], History::new()))
//!     }
//!
//!     fn step(&self, state: &[bool; 2], thread: usize) -> Step<[bool; 2]> {
//!         if state[thread] {
//!             return Step::Done;
//!         }
//!         let mut next = *state;
//!         next[thread] = true;
//!         let event = Event {
//!             thread,
//!             op_index: 0,
//!             op: "write".into(),
//!             kind: EventKind::Write,
//!             location: format!("x[{thread}]"),
//!             value: "1".into(),
//!             span: Span::default(),
//!             // The operation's only step is both its first and its last.
//!             call: Some(Call::new("write", vec![])),
//!             ret: Some(Value::Unit),
//!             // Sequentially consistent: no ordering, one way.
//!             order: None,
//!             memory: None,
//!             seen: None,
//!             // Each thread writes its own cell: the two steps commute.
//!             footprint: Footprint::Writes(thread as u64),
//!         };
//!         Step::Moved { state: next, event: event.into() }
//!     }
//!
//!     fn finish(&self, _state: &[bool; 2]) -> Result<History, Fault> {
//!         Ok(History::new())
//!     }
//!
//!     fn blocked_calls(&self, _state: &[bool; 2]) -> Vec<(usize, Call)> {
//!         Vec::new()
//!     }
//! }
//!
//! let tree = explore(&TwoWriters, &ExploreOptions::default()).unwrap();
//! let stats = tree.stats();
//! assert_eq!((stats.leaves, stats.complete), (2, 2));
//! // T0 first or T1 first: each leaf's history has both calls and returns.
//! let (_, leaf) = tree.nth_leaf(0).unwrap();
//! assert_eq!(tree.leaf(leaf).unwrap().history.events.len(), 4);
//! ```

#![warn(missing_docs)]

pub mod ahead;
mod call_text;
pub mod choice;
mod count_table;
pub mod event;
pub mod explore;
pub mod graph;
mod growth;
pub mod history;
mod history_tree;
pub mod interner;
pub mod leaf;
pub mod limit;
pub mod model;
pub mod parallel;
mod pins;
pub mod program;
pub mod race;
pub mod reduced;
pub mod replay;
pub mod resident;
pub mod source;
mod states;
mod turn;
pub mod value;

pub use call_text::{parse_call, unescape, CallSyntaxError};
pub use choice::Choice;
pub use count_table::Counts;
pub use event::{Event, EventKind, Footprint, MemoryChoice, MemoryOrder, StoreRef};
pub use explore::{
    explore, explore_judging, explore_with_progress, scout, search_failing, ExploreOptions,
    Interrupt, MemoryBudget, Progress, Search, DEFAULT_REPORT_BUDGET, SCOUT_PREEMPTIONS,
};
pub use graph::{EventId, NodeId, Parents, StateGraph};
pub use history::{
    precedes, Call, Clock, CoarseEvent, History, Lane, Operation, ThreadId, FINAL_LANE, INIT_LANE,
};
pub use history_tree::{HistoryKeys, HistoryKeysFactory, MakeHistoryKeys, ThreadResults};
pub use leaf::{Leaf, LeafKind};
pub use limit::{Bound, Limit};
pub use model::{Exploration, LoopEdge, Stats, Tree, TreeBuilder};
pub use program::{Fault, Program, QuietTurn, Readiness, Step, StoreAccess, Wait};
pub use race::{DataRace, RacingAccess};
pub use source::{Location, SourceMap, Span};
pub use value::Value;
