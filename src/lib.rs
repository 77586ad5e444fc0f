//! fgvt: localizes linearizability faults in concurrent objects down to the racing statements.
//!
//! The library holds what the binary needs beyond the workspace crates (the modeling language
//! is `fgvt-lang`): the loading of test cases ([`testcase`]), the pipeline from a test to its
//! report ([`pipeline`]), hunting for
//! failing tests and shrinking them ([`hunt`]) and the command line ([`cli`]).

pub mod cli;
pub mod hunt;
pub mod json_pos;
pub mod pipeline;
pub mod testcase;
