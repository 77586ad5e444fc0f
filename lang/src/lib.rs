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
//!            | expr ";" | block | ";"
//!            | "if" "(" expr ")" stmt ("else" stmt)?
//!            | (label ":")? "while" "(" expr ")" stmt | (label ":")? "loop" block
//!            | "break" label? ";" | "continue" label? ";" | "return" expr? ";"
//!            | "atomic" block | "await" "(" expr ")" ";" | "assert" "(" expr ("," STRING)? ")" ";"
//!            | "lock" "(" mon ")" ";" | "unlock" "(" mon ")" ";" | "synchronized" "(" mon ")" block
//! mon       := lockName | "this" | expr (a record: its monitor)
//! expr      := literals (INT, true, false, null, STRING) | name | a[i] | e.f | e.0 | "(" expr,+ ")"
//!            | f(args) | new R(args) | cas(place, exp, new) | dcas(p1, p2, e1, e2, n1, n2)
//!            | "-" e | "!" e | e (* / % + - < <= > >= == != && ||) e   (C precedence)
//! ```
//!
//! `final` marks a field or shared variable that never changes once constructed (Java's
//! `final`): reading it races with nothing, so it is not an event and adds no step to the tree.
//! Only `new` and the constructor may set it; a field is treated as final only if every record
//! that declares a field of that name declares it `final`.

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

#[cfg(test)]
mod tests;

pub use error::{ErrorKind, LangError};
/// Calls in tests are parsed by the tree crate, which Rust objects use without this language.
pub use fgvt_tree::{parse_call, CallSyntaxError};
pub use interp::{Memory, DEFAULT_BUDGET};
pub use model::{Model, OpSignature};
pub use parser::MAX_NESTING;
pub use self_spec::SelfSpec;
pub use snippet::SnippetSource;
pub use test_program::{TestProgram, TestState};
pub use value::render_value;
