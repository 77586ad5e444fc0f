//! The fgvt guide, as rustdoc renders it: one module per chapter of `docs/book/src`, in the
//! order of `SUMMARY.md`. The chapters are the mdBook's sources, included here so that
//! `cargo test` compiles and runs every Rust block of the guide as a doctest (and fails if a
//! chapter is missing); the root package's `tests/it/guide.rs` checks the other blocks, runs
//! the `console` ones and keeps this list and `SUMMARY.md` the same.
#![doc = include_str!("src/introduction.md")]

#[doc = include_str!("src/rust.md")]
pub mod rust {}

#[doc = include_str!("src/report.md")]
pub mod report {}

#[doc = include_str!("src/waiting.md")]
pub mod waiting {}

#[doc = include_str!("src/weak-memory.md")]
pub mod weak_memory {}

#[doc = include_str!("src/loom.md")]
pub mod loom {}

#[doc = include_str!("src/hunting.md")]
pub mod hunting {}

#[doc = include_str!("src/histories.md")]
pub mod histories {}

#[doc = include_str!("src/command-line.md")]
pub mod command_line {}

#[doc = include_str!("src/ci.md")]
pub mod ci {}

#[doc = include_str!("src/modeling-language.md")]
pub mod modeling_language {}

#[doc = include_str!("src/performance.md")]
pub mod performance {}
