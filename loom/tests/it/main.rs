//! fgvt-loom's tests, written as a crate's loom tests are (`use loom::…`), with the verdicts
//! worked out by hand: what passes under loom passes, what fails fails, and a failure's panic
//! names what went wrong and the racing lines.

mod api;
mod failing;
mod seq_cst;
