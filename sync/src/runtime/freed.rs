//! Use after free: an access to an instrumented object that its execution has dropped.
//!
//! A lock-free object frees memory that another thread may still reach (a node popped and
//! freed while a slower pop still reads its `next`, a channel freed by one side while the other
//! side finishes with it). The access then reads or writes freed memory: undefined behaviour
//! that, run for real, shows only when the allocator has reused the memory, rarely and far from
//! the cause. Each atomic and cell says where it lives when it is dropped
//! ([`dropped`]); an access through an identity that was dropped at that place, in the same
//! run, ends the run in a fault naming the object and the thread that dropped it, before the
//! access acts.
//!
//! An object is told apart by where its identity lives *and* by its number in the run: memory
//! reused by a new object holds a new number, and memory the allocator overwrote holds no
//! number that matches. So a reuse is never taken for a use after free; an access through
//! memory the allocator has already overwritten goes unseen (it still is undefined behaviour).

use crate::object_id::ObjectId;

use super::{with_free_recorder, Recorder, ThreadId, RECORDER};

/// How the fault of a use after free begins, which tells it from a panic's.
pub(crate) const USE_AFTER_FREE: &str = "use after free: ";

/// An object dropped in the run (kept by where its identity lived): which identity, and who
/// dropped it (`None`: the serial part).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Freed {
    id: ObjectId,
    by: Option<ThreadId>,
}

/// Records that the object whose identity is `id` (which lives at `address`) is dropped,
/// while the execution that made it runs; nothing outside it or once it has ended.
pub(crate) fn dropped(id: &ObjectId, address: usize) {
    // The runtime may hold the recorder while it drops what a run kept: nothing to record.
    with_free_recorder(|rec| {
        // An object an earlier execution made and kept (a thread-local) is no object of this
        // one, though it may have the same number and key.
        #[allow(clippy::cast_possible_truncation)]
        if rec.end.is_none() && id.made_in(rec.number as u32) {
            let by = rec.who();
            // The latest object dropped at a place is the one an access there may mean.
            rec.freed.insert(address, Freed { id: *id, by });
        }
    });
}

impl Recorder {
    /// If `object`, whose identity lives at `address`, was dropped earlier in the run: the
    /// fault's message for an access to it by `thread`.
    pub(crate) fn use_after_free(
        &self,
        object: &ObjectId,
        address: usize,
        thread: Option<ThreadId>,
    ) -> Option<String> {
        let freed = self.freed.get(&address).filter(|f| f.id.same_as(object))?;
        let who =
            |t: Option<ThreadId>| t.map_or("the serial part".to_string(), |t| format!("T{t}"));
        Some(format!(
            "{USE_AFTER_FREE}{} accesses `{object}`, which {} dropped earlier in this run (its \
             memory was freed: the access reads or writes memory that is no longer the object's)",
            who(thread),
            who(freed.by)
        ))
    }
}

/// Whether `id` was given by the execution running on this OS thread: `None` when the
/// runtime is busy with the recorder (the caller is inside a step: the id it has is the run's).
pub(crate) fn made_in_this_run(id: &ObjectId) -> Option<bool> {
    RECORDER.with(|r| {
        let rec = r.try_borrow().ok()?;
        #[allow(clippy::cast_possible_truncation)]
        Some(
            rec.as_ref()
                .is_some_and(|rec| id.made_in(rec.number as u32)),
        )
    })
}
