//! Sequential specs, recorded histories and the linearizability checker of fgvt.
//!
//! * [`spec`]: the [`Spec`] trait a sequential specification implements;
//! * [`builtin`](mod@builtin): built-in specs (register, counter, set, map, queue, stack, deque, snapshot, kv);
//! * [`check`](mod@check): the WGL linearizability checker, with partitioning, pending and stuck
//!   operations, a deadline, and a verdict cache;
//! * [`explain`]: why a history is not linearizable;
//! * [`formats`] (the `formats` feature, on by default): recorded histories (Jepsen etcd logs,
//!   kv EDN logs, fgvt JSON);
//! * [`workload`]: generated histories for benchmarks.
//!
//! The [`History`] type itself belongs to `fgvt-tree`, which produces histories and must not
//! depend on the checker; it is re-exported here.
//!
//! # Example
//!
//! A register written with 1 while it is read: the read may return 0 or 1, never 2.
//!
//! ```
//! use fgvt_checker::{builtin, check, CheckOptions, Verdict};
//! use fgvt_checker::{Call, History, Value};
//!
//! fn history(read_result: i64) -> History {
//!     let mut h = History::new();
//!     h.call(0, Call::new("write", vec![Value::Int(1)]));
//!     h.call(1, Call::new("read", vec![]));
//!     h.ret(0, Value::Unit);
//!     h.ret(1, Value::Int(read_result));
//!     h
//! }
//!
//! let register = builtin("register").unwrap();
//! let options = CheckOptions::default();
//! let ok = check(&register, &history(1), &options).unwrap();
//! assert!(matches!(ok.verdict, Verdict::Linearizable { .. }));
//! let bad = check(&register, &history(2), &options).unwrap();
//! assert!(matches!(bad.verdict, Verdict::NotLinearizable(_)));
//! ```

#![warn(missing_docs)]

pub mod builtin;
pub mod check;
pub mod explain;
#[cfg(feature = "formats")]
pub mod formats;
pub mod linearizations;
mod op;
pub mod spec;
pub mod workload;

pub use builtin::{builtin, BuiltinSpec, BuiltinState, BUILTIN_NAMES};
pub use check::{
    check, check_parallel, CheckError, CheckOptions, Outcome, SearchStats, Verdict, VerdictCache,
};
pub use explain::{Details, Explanation};
pub use fgvt_tree::{Call, CoarseEvent, History, Operation, ThreadId, Value};
pub use spec::{Apply, Initialized, Spec};
