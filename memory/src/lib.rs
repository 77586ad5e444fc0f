//! The C++20 / Rust weak memory model (RC11), as execution graphs built one event at a time.
//!
//! A program's threads run atomic loads, stores, read-modify-writes and fences. Under a weak
//! memory model a load does not simply read "the last value written": which stores it may read
//! depends on how the threads synchronized. This crate decides that with the *axiomatic* model of
//! Lahav et al., "Repairing sequential consistency in C/C++11" (PLDI 2017), known as RC11, with
//! the release sequences of C++20. It is meant for a runtime that explores a program's
//! executions: at each access the runtime asks which choices are possible, forks the execution
//! for each, and goes on.
//!
//! # Execution graphs
//!
//! An [`Execution`] is a graph of *events*: one initial store per location, then the accesses
//! and fences of each thread. Three relations are chosen as the program runs:
//!
//! * **program order** `po`: each thread's events, in order;
//! * **reads-from** `rf`: the store each read reads;
//! * **modification order** `mo`: per location, a total order of its stores, the initial store
//!   first. It is the order in which the stores "happened" to that location, which need not be
//!   the order in which threads performed them.
//!
//! From these, the model derives *happens-before* (`hb`: program order plus synchronization,
//! where an acquire read of a release store, possibly through a chain of RMWs or with fences
//! in between, *synchronizes with* it) and the `SeqCst` order (`psc`), and calls the graph
//! **consistent** when four axioms hold: no thin air, coherence, atomicity and SC. Their exact
//! definitions are in [module `axioms`](axioms). In short:
//!
//! * a thread never reads a value older than one it has seen, or one that happens before it;
//! * an RMW reads the store right before it in modification order;
//! * the `SeqCst` events agree on one order with everything they observe.
//!
//! # Building an execution
//!
//! The runtime adds events in the order the threads run them. Before each access it asks for
//! the *candidates*, the choices that keep the graph consistent ([module
//! `candidates`](candidates)):
//!
//! | access | choices | then |
//! |---|---|---|
//! | load | [`Execution::load_candidates`]: stores to read | [`Execution::load`] |
//! | store | [`Execution::store_placements`]: places in `mo` | [`Execution::store`] |
//! | RMW | [`Execution::rmw_candidates`]: stores to read | [`Execution::rmw`] |
//! | compare-exchange | [`Execution::cas_choices`]: store read, success | [`Execution::cas`] |
//! | fence | none | [`Execution::fence`] |
//!
//! Every list is exact and, on a consistent execution, never empty: the mo-latest store (the
//! end of `mo` for a store) is always a choice, so a runtime that always takes the last one
//! runs the program sequentially consistently. The execution is cloned to try several.
//!
//! ```
//! use fgvt_memory::{Execution, Order};
//!
//! // Message passing: thread 0 writes the data, then raises a flag with a release store;
//! // thread 1 reads the flag with an acquire load, then the data.
//! let mut x = Execution::new(2);
//! let data = x.add_location(0);
//! let flag = x.add_location(0);
//! x.store(0, data, 1, Order::Relaxed, 0);
//! x.store(0, flag, 1, Order::Release, 0);
//!
//! // The flag may still read 0 (the initial store) or 1.
//! let flags = x.load_candidates(1, flag, Order::Acquire);
//! assert_eq!(flags, [x.initial(flag), x.latest(flag)]);
//!
//! // Having read 1, thread 1 synchronized with thread 0: the data can only be 1.
//! let before = x.clone();
//! assert_eq!(x.load(1, flag, Order::Acquire, x.latest(flag)), 1);
//! assert_eq!(x.load_candidates(1, data, Order::Relaxed), [x.latest(data)]);
//! assert!(x.is_consistent());
//!
//! // Had it read the flag with a relaxed load, the stale data would still be a choice.
//! let mut y = before;
//! assert_eq!(y.load(1, flag, Order::Relaxed, y.latest(flag)), 1);
//! assert_eq!(y.load_candidates(1, data, Order::Relaxed), [y.initial(data), y.latest(data)]);
//! ```
//!
//! # What is left out
//!
//! * **Non-atomic accesses** in the graph: every event is atomic. A runtime that checks plain
//!   memory for data races keeps its plain accesses beside the graph, placed in their threads'
//!   program order ([module `plain`](plain)), and asks the graph what happens before them;
//!   [`litmus::brute_force_races`] is the reference it is tested against.
//! * **`Consume`**: Rust has no such ordering; whoever maps C++ orders treats it as `Acquire`,
//!   as every C++ compiler does.
//! * **Out-of-thin-air values and load buffering**: events are added in the order threads run
//!   them and a read only reads a store already added, so `po ∪ rf` is acyclic by
//!   construction. RC11 requires that too; C++ itself allows some `po ∪ rf` cycles (the weak
//!   outcome of [`litmus::lb`]), which no runtime can produce by running the program.
//!
//! # Litmus tests
//!
//! [Module `litmus`](litmus) holds straight-line programs (the classic message passing, store
//! buffering, load buffering, IRIW and 2+2W tests among them) and two ways to list their
//! outcomes: an enumeration of every candidate graph filtered by the axioms, and an exploration
//! through the candidate methods. The tests check the two agree, and agree with the literature.
//!
//! # Modules
//!
//! * [`execution`]: the graph and how it keeps happens-before as it grows;
//! * [`candidates`]: the choices an access has;
//! * [`axioms`]: the model, and [`Execution::is_consistent`] by the definitions;
//! * [`check`]: the faster check behind the candidates;
//! * [`canonical`]: executions compared as graphs, whatever order their events came in;
//! * [`future`]: what of an execution decides its future, for merging equal states;
//! * [`plain`]: plain (non-atomic) accesses beside the graph, for data-race checks;
//! * [`fix`]: which changes of orderings to try when a program fails only under weak memory;
//! * [`order`]: memory orders;
//! * [`litmus`]: litmus programs and their outcomes.

#![warn(missing_docs)]

pub mod axioms;
mod bits;
pub mod candidates;
pub mod canonical;
pub mod check;
mod error;
mod event;
pub mod execution;
pub mod fix;
pub mod future;
pub mod litmus;
pub mod order;
pub mod plain;
mod psc;
mod turns;

pub use candidates::CasChoice;
pub use error::AccessError;
pub use execution::{EventRef, Execution, StoreId};
pub use future::{Naming, Numbered};
pub use order::{AccessKind, Order};
pub use plain::PlainAt;

/// A memory location, numbered from 0 in the order [`Execution::add_location`] added them.
pub type Loc = u32;

/// A value stored at a location.
pub type Val = u64;

/// A thread, numbered from 0.
pub type ThreadId = usize;
