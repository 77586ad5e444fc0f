//! loom's `hint`: marks an iteration of a waiting loop, so that fgvt treats the loop as
//! waiting for another thread rather than as ever more steps.

pub use fgvt_sync::hint::spin_loop;

/// `std::hint::unreachable_unchecked`, which a model reaching it makes a failing run (a
/// panic) instead of undefined behaviour.
///
/// # Safety
///
/// As `std`'s: the caller promises it is never reached; under fgvt a run that reaches it
/// fails, naming the line.
#[track_caller]
pub unsafe fn unreachable_unchecked() -> ! {
    unreachable!("`unreachable_unchecked` was reached")
}
