//! Memoized steps: a thread's step is taken once per distinct (thread, its state, memory).
//!
//! A step reads only its own thread's frames and shared memory, never another thread's
//! state; so in a state graph where four threads each have a handful of states, most of the
//! explorer's steps repeat one already taken from another state with the same memory (on the
//! seqlock benchmark, 1.6 M steps are 2,378 distinct ones). Each is interpreted once and its
//! effect — the new numbers of the thread's state and of memory's parts, and its event — is
//! replayed on every later state that asks for it.

use std::collections::HashMap;
use std::sync::Arc;

use fgvt_tree::Event;

use super::parts::{StepEffect, StepKey};

/// What a step did, as far as it can be replayed on another state.
#[derive(Clone, Debug)]
pub(crate) enum Known {
    /// The thread had run all its operations.
    Done,
    /// The thread could not move.
    Blocked,
    /// The thread moved, with this effect and event (one allocation for every replay, which
    /// the tree numbers by address).
    Moved(StepEffect, Arc<Event>),
}

/// The steps taken so far. Faults and bounded steps are not kept: they end a path, and are
/// rare.
#[derive(Default)]
pub(crate) struct Steps {
    known: HashMap<StepKey, Known, foldhash::fast::FixedState>,
    /// By thread, the number of its state once it has run all its operations, when met. A
    /// finished thread is asked for its step from every later state (a third of all steps on
    /// the seqlock benchmark) and its answer depends on its own state alone, whatever memory
    /// holds: it is told without looking up the step.
    done: Vec<Option<u32>>,
}

impl std::fmt::Debug for Steps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Steps")
            .field("known", &self.known.len())
            .finish()
    }
}

impl Steps {
    /// The step taken before from `key`, if any.
    pub fn get(&self, key: &StepKey) -> Option<&Known> {
        let (thread, state) = key.thread_and_state();
        if self.done.get(thread).copied().flatten() == Some(state) {
            return Some(&Known::Done);
        }
        self.known.get(key)
    }

    /// Remembers what the step from `key` did.
    pub fn insert(&mut self, key: StepKey, known: Known) {
        if let Known::Done = known {
            let (thread, state) = key.thread_and_state();
            if self.done.len() <= thread {
                self.done.resize(thread + 1, None);
            }
            self.done[thread] = Some(state);
        }
        self.known.insert(key, known);
    }
}
