//! Histories, sequential specs, the linearizability checker, node labels and CDRS.
//!
//! * [`spec`]: the [`Spec`] trait a sequential specification implements;
//! * [`builtin`](mod@builtin): built-in specs (register, counter, set, map, queue, stack, deque, snapshot, kv);
//! * [`check`](mod@check): the WGL linearizability checker, with partitioning, pending and stuck
//!   operations, a deadline, and a verdict cache;
//! * [`explain`]: why a history is not linearizable;
//! * [`formats`]: recorded histories (Jepsen etcd logs, kv EDN logs, fgvt JSON);
//! * [`workload`]: generated histories for benchmarks;
//! * [`rng`]: the small seedable random number generator of the workloads and of `fgvt hunt`;
//! * `testing`: hand-built trees with leaf outcomes, for tests and benchmarks.

pub mod builtin;
pub mod cdrs;
pub mod check;
pub mod explain;
pub mod formats;
pub mod labels;
pub mod rng;
pub mod spec;
#[doc(hidden)]
pub mod testing;
pub mod workload;

pub use builtin::{builtin, BuiltinSpec, BuiltinState, BUILTIN_NAMES};
pub use check::{check, CheckError, CheckOptions, Outcome, SearchStats, Verdict, VerdictCache};
pub use explain::Explanation;
pub use spec::{Apply, Spec};
