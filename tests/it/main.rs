//! The integration tests of this package, one module per topic, in one test binary: each
//! binary links the whole package and instantiates its generic code anew, so one binary
//! compiles and links in a fraction of the time many would (`cargo test --test it`).

mod actionable;
mod bad_input;
mod check_history;
mod common;
mod counts;
mod explore;
mod first_failure;
mod fixtures;
mod guide;
mod hunt_outputs;
mod interrupt;
mod loaders_fuzz;
mod localize;
mod manual;
mod outputs;
mod pipeline;
mod publish;
mod render;
mod sarif;
mod scout;
mod shard;
mod timeout;
mod weak_models;
