//! The integration tests of this package, one module per topic, in one test binary: each
//! binary links the whole package and instantiates its generic code anew, so one binary
//! compiles and links in a fraction of the time many would (`cargo test --test it`).

mod explore;
mod parallel;
mod reduced;
mod scout;
#[path = "../toy/mod.rs"]
mod toy;
