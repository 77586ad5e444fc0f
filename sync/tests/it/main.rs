//! The integration tests of this package, one module per topic, in one test binary: each
//! binary links the whole package and instantiates its generic code anew, so one binary
//! compiles and links in a fraction of the time many would (`cargo test --test it`).

mod atomics;
mod bad_calls;
mod common;
mod condvar;
mod consumer;
mod exclusion;
mod implied;
mod jobs;
mod leaves;
mod litmus;
mod locks;
mod marked;
mod merging;
mod models;
mod names;
mod operations;
mod put_back;
mod races;
mod readme;
mod readme_counter;
mod reduced_weak;
mod retry;
mod rwlock;
mod spawning;
mod statics;
mod uninstrumented;
mod unseen;
mod values;
mod weak;
