//! What a re-executed program's executions are: the vocabulary between the explorer and a
//! backend that runs real code.
//!
//! Real code under a controlled scheduler keeps its state in the heap and on thread stacks; it
//! can neither be copied at a branch point nor read whole. Such a backend (`fgvt-sync`) runs
//! the program from scratch for every step it is asked for, following a schedule of thread
//! choices given by a [`Choose`] callback, and says how each execution went ([`Run`],
//! [`RunEnd`]). It still implements [`Program`](crate::Program) and is explored by
//! [`explore`](crate::explore()) like a model: a state is a schedule, told apart from others by a
//! fingerprint the backend computes, so equal states are merged and loops found as for models.
//! [`ReplayError`] is what makes such an exploration void: a schedule that did not replay.

use crate::event::Event;
use crate::history::{History, ThreadId};
use crate::program::{Fault, Wait};

/// The scheduler callback of an execution: given the enabled threads, in increasing order,
/// the thread to run, or `None` to abandon the execution.
///
/// Only threads are offered: a step's event is what the execution that takes it records (real
/// code learns a step's value only by taking it), and building events for the threads not
/// chosen would cost more than the step itself.
pub type Choose<'a> = dyn FnMut(&[ThreadId]) -> Option<ThreadId> + 'a;

/// One execution: the steps taken, in order, and how it ended.
#[derive(Clone, Debug)]
pub struct Run {
    /// The steps, one per choice the scheduler made.
    pub steps: Vec<Event>,
    /// How the execution ended after the last step.
    pub end: RunEnd,
}

/// How an execution ended.
#[derive(Clone, Debug)]
pub enum RunEnd {
    /// Every thread finished; the coarse history includes the `final` operations.
    Complete {
        /// The coarse history of the execution.
        history: History,
    },
    /// Threads are left but none is enabled (a deadlock).
    Stuck {
        /// The coarse history, with the blocked calls.
        history: History,
        /// What each blocked thread waits for.
        waiting: Vec<Wait>,
    },
    /// The program failed (a panic in user code).
    Fault {
        /// The coarse history up to the failure.
        history: History,
        /// The failure: message and location.
        fault: Fault,
    },
    /// The scheduler callback returned `None`.
    Abandoned,
}

/// Why re-execution could not build a tree.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// Re-executing a schedule prefix did not reach the same node: the program depends on
    /// something other than the scheduler's choices (time, randomness, a `thread_local!`).
    #[error("the program is not deterministic: replaying {prefix:?}, thread T{thread} was not enabled at step {step}")]
    Nondeterministic {
        /// The schedule being replayed.
        prefix: Vec<ThreadId>,
        /// The step at which it diverged.
        step: usize,
        /// The thread the prefix named there.
        thread: ThreadId,
    },
}
