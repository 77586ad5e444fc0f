//! This package's integration test: what the attributes reject, with the compiler's messages
//! (trybuild). Their behaviour is tested where they are used, in fgvt-sync's tests
//! (`sync/tests/it/operations.rs`).
//!
//! It lives here, not in fgvt-sync's binary, because trybuild builds its crates with the
//! features the package under test has in the test build: in a workspace build fgvt-sync has
//! `cli` (the Rust ports' example turns it on), which would bring the whole command line into
//! trybuild's build, whereas this package's dev-dependency is fgvt-sync with its defaults.

mod compile_fail;
