//! What `#[fgvt_sync::operations]` puts at the start of every function of its impl block:
//! a guard that tells the runtime the thread is in a call of that function until it returns.
//!
//! A loop that calls no retry hint fgvt sees is taken for a retry loop when its turn wrote
//! nothing and the thread is back at the access the turn began with (see `crate::loops`). That
//! is wrong when the thread left the loop and called its function again: the access repeats,
//! but the thread is one call further on. The text tells such a second call by name only, and
//! a name is not a call: in a stack whose nodes come from a pool, `free.push(slot)` on the
//! pool's `Vec` looks like a call of the stack's own `push` from inside `pop`'s loop, which
//! would make neither loop a retry loop. For a function of the impl block the attribute is on,
//! the runtime knows instead: two accesses are in one call of it, or they are not.
//!
//! Not part of the API: the attribute's expansion names it.

/// A function of an `#[fgvt_sync::operations]` impl, as its guard names it: what tells one
/// function's calls from another's in a thread's log (`Observations::same_call`).
#[derive(Debug)]
pub struct Method {
    /// Its name.
    pub name: &'static str,
    /// The file it is in, as `file!()` names it.
    pub file: &'static str,
    /// The line of its body's opening brace.
    pub line: u32,
}

/// A call of a marked function, from its start to its return (or unwinding).
#[must_use = "the call lasts as long as the guard"]
pub struct Entered(u32);

/// Enters `method`, marked by `#[fgvt_sync::operations]`: the guard its call holds. Outside
/// an execution's concurrent part, and outside a test thread, nothing is recorded.
pub fn enter(method: &'static Method) -> Entered {
    Entered(crate::runtime::enter_marked(method))
}

impl Drop for Entered {
    fn drop(&mut self) {
        crate::runtime::leave_marked(self.0);
    }
}
