//! The modeling language: objects under test, written like the papers' pseudo-code.
//!
//! A model file holds `object` and `record` declarations. [`Model::compile`] parses one object,
//! resolves every name (reporting mistakes as miette diagnostics) and compiles it to a small
//! stack bytecode. [`TestProgram`] runs a test of it for the recording scheduler: one step
//! is one shared-memory event. [`SelfSpec`] is the sequential spec synthesized from the
//! object's own serial runs.
//!
//! # Syntax cheat-sheet
//!
//! ```text
//! file      := (object | record)*
//! object    := "object" Name "{" member* "}"
//! member    := "shared" "final"? type name ("[" INT "]")? ("=" expr | "=" "{" expr,* "}")? ";"
//!            | "lock" name ("," name)* ";"
//!            | "constructor" block
//!            | ("op" | "fn") name "(" (type? name),* ")" block
//!            | record
//! record    := "record" Name "{" ("final"? type name ("," name)* ";")* "}"
//! type      := "int" | "bool" | RecordName | "(" type ("," type)+ ")"
//! stmt      := type name ("=" expr)? ";" | "var" name "=" expr ";" | "var" "(" name,+ ")" "=" expr ";"
//!            | place "=" expr ";"          place := name | a[i] | e.f | "(" place,+ ")"
//!            | loc ".store" "(" expr "," order ")" ";"   loc := name | a[i] | e.f (shared)
//!            | "fence" "(" order ")" ";"
//!            | expr ";" | block | ";"
//!            | "if" "(" expr ")" stmt ("else" stmt)?
//!            | (label ":")? "while" "(" expr ")" stmt | (label ":")? "loop" block
//!            | "break" label? ";" | "continue" label? ";" | "return" expr? ";"
//!            | "atomic" block | "await" "(" expr ")" ";" | "assert" "(" expr ("," STRING)? ")" ";"
//!            | "lock" "(" mon ")" ";" | "unlock" "(" mon ")" ";" | "synchronized" "(" mon ")" block
//! mon       := lockName | "this" | expr (a record: its monitor)
//! expr      := literals (INT, true, false, null, STRING) | name | a[i] | e.f | e.0 | "(" expr,+ ")"
//!            | f(args) | new R(args) | cas(loc, exp, new) | cas(loc, exp, new, order)
//!            | cas(loc, exp, new, order, order) | dcas(p1, p2, e1, e2, n1, n2)
//!            | loc ".load" "(" order ")"
//! order     := "relaxed" | "acquire" | "release" | "acq_rel" | "seq_cst"
//!            | "-" e | "!" e | e (* / % + - < <= > >= == != && ||) e   (C precedence)
//! ```
//!
//! `final` marks a field or shared variable that never changes once constructed (Java's
//! `final`): reading it races with nothing, so it is not an event and adds no step to the tree.
//! Only `new` and the constructor may set it; a field is treated as final only if every record
//! that declares a field of that name declares it `final`.
//!
//! # Memory orderings
//!
//! Shared accesses may declare the orderings of C++20 and Rust, so that code written for weak
//! memory ports line for line: `x.load(acquire)` (Rust's `x.load(Ordering::Acquire)`),
//! `x.store(v, release)`, `cas(x, e, n, acq_rel, acquire)` (success, then failure, as
//! `compare_exchange`; with one ordering the failure is its load side, as in C++), and the
//! statement `fence(release)`. An access written without one (`x`, `x = v`, `cas(x, e, n)`)
//! is `seq_cst`. A load takes `relaxed`, `acquire` or `seq_cst`, a store `relaxed`, `release`
//! or `seq_cst`, a `cas` any ordering (its failure a load's), a fence any but `relaxed`: any
//! other is an error at its place, as are orderings inside `atomic { }` and `await`, which run
//! sequentially consistent as a whole. `fence` is no keyword: only `fence` applied to an
//! ordering is a fence.
//!
//! A model that declares no ordering weaker than `seq_cst` is explored sequentially
//! consistent, exactly as a model without orderings. One that declares a weaker one runs under
//! the C++20 / Rust memory model (RC11, the `fgvt-memory` crate): a load may read an older
//! store, each choice a *way* of its step. Locks hand over like `std`'s mutexes (an acquire
//! read-modify-write, a release store); `atomic { }`, `await` and `dcas` run as one
//! sequentially consistent step that reads the latest store of each location; a record's
//! fields as `new` sets them are their initial stores, seen by every thread (store after `new`
//! to publish through a record); `init` happens before the threads and `final` after them.
//! Calls carry a vector clock of the operations that returned before them in happens-before,
//! by which the checker orders operations. See [`TestProgram`] for the bound on ways
//! ([`TestProgram::with_max_stale`], [`DEFAULT_MAX_STALE`]).

//!
//! # Example
//!
//! A model compiled from text, then a test of it explored: two threads increment a counter
//! without a lock, so one of the interleavings loses an update.
//!
//! ```
//! use std::sync::Arc;
//!
//! use fgvt_lang::{parse_call, Model, TestProgram};
//! use fgvt_tree::{explore, ExploreOptions, SourceMap};
//!
//! let text = "object Counter {\n    shared int n = 0;\n    op inc() { int t = n; n = t + 1; }\n    op get() { return n; }\n}\n";
//! let model = Model::compile(&mut SourceMap::new(), "counter.fgv", text, None).unwrap();
//! let names: Vec<String> = model.operations().iter().map(|op| op.name.clone()).collect();
//! assert_eq!(names, ["inc", "get"]);
//!
//! let call = |text: &str| parse_call(text).unwrap();
//! let test = TestProgram::new(
//!     Arc::new(model),
//!     vec![],
//!     vec![vec![call("inc()")], vec![call("inc()")]],
//!     vec![call("get()")],
//! );
//! let tree = explore(&test, &ExploreOptions::default()).unwrap();
//! // Each inc() is two steps (read n, write n): 4!/(2!·2!) = 6 interleavings.
//! assert_eq!(tree.stats().complete, 6);
//! // The final get() returns 1 where the two increments interleave.
//! let histories: Vec<String> = tree.leaves().map(|(_, leaf, _)| leaf.history.to_string()).collect();
//! assert!(histories.iter().any(|h| h.ends_with("final:ret 1")), "{histories:?}");
//! assert!(histories.iter().any(|h| h.ends_with("final:ret 2")), "{histories:?}");
//! ```
#![warn(missing_docs)]

mod ast;
mod bytecode;
mod compile;
mod error;
mod interp;
mod lexer;
mod model;
mod parser;
mod parts;
mod self_spec;
mod snippet;
mod steps;
mod test_program;
mod value;
mod weak;

#[cfg(test)]
mod tests;

pub use error::{ErrorKind, LangError};
/// Calls in tests are parsed by the tree crate, which Rust objects use without this language.
pub use fgvt_tree::{parse_call, CallSyntaxError};
pub use interp::{Memory, DEFAULT_BUDGET};
pub use model::{Model, OpSignature, OrderedAccess};
pub use parser::{ordering_name, MAX_NESTING};
pub use self_spec::SelfSpec;
pub use snippet::SnippetSource;
pub use test_program::{TestProgram, TestState};
pub use value::render_value;
pub use weak::DEFAULT_MAX_STALE;
