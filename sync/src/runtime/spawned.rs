//! Threads a test's own code spawns (`fgvt_sync::thread::spawn`, a loom model's threads): each
//! takes a free lane of the execution, and its end is a lock its `JoinHandle::join` takes.
//!
//! A test's lanes are made before its first execution ([`crate::program::Reexecuted`] has a
//! fixed number of threads): the test's own threads first, then *spare* lanes that spawned
//! threads take in the order they are spawned, which is the same in every execution that
//! follows the same schedule. A lane nobody has spawned yet has no pending step, so it looks
//! finished at every point and is offered to no choice.
//!
//! Spawning is no step: the spawner goes on at once, and the new thread runs to its first
//! access before the next choice. What it does is decided by what it was given, which its
//! spawner's local state decides: so its observation log starts with the spawner's context
//! (`seed`), and two points where it was given different things are told apart.
//!
//! A thread's end is a *handle lock* the thread holds from its spawning and releases when it
//! returns (no step: its last access was its last step). `join` is a step that takes that lock
//! once it is free (a [`Role::Join`], which leaves no holder): it waits while the thread runs,
//! and hands over happens-before from everything the thread did, under weak memory (the lock's
//! word) and sequentially consistent (the clocks) alike. What the thread returned is decided by
//! its observations, so a finished thread that nobody has joined yet keeps their hash in its
//! lane's part of the fingerprint ([`Lane::result`]), and `join` reads it: the joiner's log then
//! holds it.

use std::panic::Location;

use fgvt_tree::{Call, EventKind, ThreadId};

use crate::engine::{self, TaskId};

use super::{
    combine, hash_of, with_recorder, with_thread, Access, Acted, Effect, Held, Initial, Making,
    ObjectId, Pending, Role, Stamp, Word, Wrote,
};

/// The tag of a spawned thread's first observation.
const SPAWNED: u64 = 0x5ba3_e0ed;

/// What a spawned thread needs to start on its lane.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Spawned {
    /// Its lane.
    pub thread: ThreadId,
    /// The lock its end releases, which `join` takes.
    pub handle: ObjectId,
    /// What its spawner's local state was: its first observation.
    seed: u64,
}

/// Why a thread cannot be spawned inside an execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SpawnError {
    /// Every spare lane is taken: the test allows `lanes` threads in all.
    NoLane { lanes: usize },
}

impl std::fmt::Display for SpawnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpawnError::NoLane { lanes } => write!(
                f,
                "spawns more threads than the test has room for ({lanes} in all): raise the \
                 model's `max_threads`, or make room with `Test::spawns` in a test of an \
                 object, though each thread multiplies the runs to explore"
            ),
        }
    }
}

/// Says that the first `fixed` lanes belong to the test's own threads: spawned threads take
/// the lanes after them. With `own_ops`, a spawned thread's run is an operation of its own in
/// the history (a model's threads); else it is part of its spawner's operation (an object's
/// helper thread, which the spec does not know). Called by an execution's main task before
/// any thread runs.
pub(crate) fn lanes_taken(fixed: usize, own_ops: bool) {
    with_recorder(|rec| {
        rec.next_lane = fixed;
        rec.spawned_ops = own_ops;
    });
}

/// Takes a lane for a thread the caller spawns at `at`: `None` outside an execution (the
/// thread is then an OS thread of its own).
pub(crate) fn spawn_lane(at: &'static Location<'static>) -> Option<Result<Spawned, SpawnError>> {
    let handle = ObjectId::new_at("JoinHandle", Initial::Version, Making::Unchecked, at);
    with_recorder(|rec| {
        let thread = rec.next_lane;
        if thread >= rec.lanes.len() {
            return Err(SpawnError::NoLane {
                lanes: rec.lanes.len(),
            });
        }
        rec.next_lane += 1;
        let who = rec.who();
        // The new thread's steps follow the spawner's: the step whose code spawns it is
        // ordered with every step, for the partial-order reduction.
        rec.touches_everything(who);
        let seed = combine(rec.context(who), SPAWNED ^ thread as u64);
        // The new thread holds its end until it returns.
        rec.locks.insert(
            handle.key(),
            Held {
                exclusive: true,
                holders: vec![(thread, at)],
            },
        );
        let key = combine(handle.key(), SPAWNED);
        if let Some(weak) = &mut rec.weak {
            weak.spawned(who, thread, key);
        }
        if let Some(clocks) = rec.races.as_mut().and_then(|r| r.clocks()) {
            if let Some(spawner) = who {
                clocks.release(spawner, key, false);
            }
            clocks.acquire(thread, key);
        }
        Ok(Spawned {
            thread,
            handle,
            seed,
        })
    })
}

/// Starts the spawned thread `spawned` on its lane, in the calling task: its one operation is
/// `call`, and its log starts with its spawner's context.
pub(crate) fn enter(spawned: Spawned, call: &Call) {
    super::enter_thread(spawned.thread);
    if with_recorder(|rec| rec.spawned_ops).unwrap_or(false) {
        super::begin_op(spawned.thread, 0, call);
    }
    with_recorder(|rec| {
        let lane = &mut rec.lanes[spawned.thread];
        // The seed is no access: no loop of the source holds it.
        let seed = Access {
            shape: SPAWNED,
            at: std::panic::Location::caller(),
            args: 0,
        };
        (lane.observed).push(seed, spawned.seed, Wrote::Nothing, Stamp::default());
    });
}

/// The spawned thread on the calling task has returned (its operation ended): its handle lock
/// is free for `join`, which will read what it observed.
pub(crate) fn finish(spawned: Spawned) {
    with_thread(|rec, thread| {
        let lane = &mut rec.lanes[thread];
        lane.result = Some(lane.observed.hash());
        let key = spawned.handle.key();
        rec.unlock(key, thread);
        if let Some(weak) = &mut rec.weak {
            weak.unlock(Some(thread), key);
        }
        if let Some(clocks) = rec.races.as_mut().and_then(|r| r.clocks()) {
            clocks.release(thread, key, true);
        }
    });
}

/// Waits, as a step of the calling thread at `at`, until the spawned thread `spawned` has
/// returned.
pub(crate) fn join(spawned: Spawned, at: &'static Location<'static>) {
    let pending = Pending {
        role: Role::Join,
        ..spawned.handle.pending_at(EventKind::Lock, at)
    };
    let thread = spawned.thread;
    super::access(
        pending,
        || with_recorder(|rec| rec.lanes[thread].result.take()).flatten(),
        |_| Acted::new(EventKind::Lock, format!("joined T{thread}")),
        |seen| Effect::Read(Word::Int(seen.map_or(0, |h| hash_of(&[h, thread as u64])))),
    );
}

/// Whether `thread` has returned (its handle lock is free).
pub(crate) fn finished(spawned: Spawned) -> bool {
    with_recorder(|rec| !rec.locks.contains_key(&spawned.handle.key())).unwrap_or(true)
}

/// The engine made `task` for the spawned thread `spawned`: its lane runs on it.
pub(crate) fn started(spawned: Spawned, task: TaskId) {
    with_recorder(|rec| rec.lanes[spawned.thread].task = Some(task));
}

/// Waits, in the execution's main task, until every spawned thread has returned (those they
/// spawn in the meantime too): no step, as the main task is none of the threads.
pub(crate) fn join_every_lane() {
    let task_of = |lane: usize| with_recorder(|rec| rec.lanes.get(lane)?.task).flatten();
    let mut lane = 0;
    // Lanes are taken in order, so the first without a task ends the list.
    while let Some(task) = task_of(lane) {
        engine::join(task);
        lane += 1;
    }
}
