//! fgvt: localizes linearizability faults in concurrent objects down to the racing statements.
//!
//! The library holds what the binary needs beyond the workspace crates: the modeling language
//! ([`lang`]) and the loading of test cases.

pub mod lang;
