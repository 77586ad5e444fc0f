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
pub(crate) struct Steps {
    /// Each step's number in `steps`, by what it depends on.
    known: HashMap<StepKey, u32, foldhash::fast::FixedState>,
    /// The steps, by number.
    steps: Vec<Known>,
    /// By thread, the number of its state once it has run all its operations, when met. A
    /// finished thread is asked for its step from every later state (a third of all steps on
    /// the seqlock benchmark) and its answer depends on its own state alone, whatever memory
    /// holds: it is told without looking up the step.
    done: Vec<Option<u32>>,
    /// The last step looked up from a thread's state, in a small table indexed by the two (no
    /// hash): a state's children ask their threads again for the steps the state asked, and
    /// where the step that made the child wrote nothing the others find the same memory (over
    /// half the lookups on the seqlock benchmark). The table stays in the nearest cache, where
    /// `known`, read for every step, did not.
    recent: Box<[Option<(StepKey, u32)>]>,
}

/// Entries of [`Steps::recent`] (a power of two).
const RECENT: usize = 1 << 10;

impl Default for Steps {
    fn default() -> Steps {
        Steps {
            known: HashMap::default(),
            steps: Vec::new(),
            done: Vec::new(),
            recent: vec![None; RECENT].into_boxed_slice(),
        }
    }
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
    pub fn get(&mut self, key: &StepKey) -> Option<&Known> {
        let (thread, state) = key.thread_and_state();
        if self.done.get(thread).copied().flatten() == Some(state) {
            return Some(&Known::Done);
        }
        // Threads of one state side by side: a test of up to eight threads shares no entry
        // between two of them.
        let at = (state as usize).wrapping_mul(8).wrapping_add(thread) & (RECENT - 1);
        let number = match self.recent[at] {
            Some((recent, number)) if recent == *key => number,
            _ => {
                let number = *self.known.get(key)?;
                self.recent[at] = Some((*key, number));
                number
            }
        };
        Some(&self.steps[number as usize])
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
        let number = u32::try_from(self.steps.len()).expect("fewer than 2^32 distinct steps");
        self.steps.push(known);
        self.known.insert(key, number);
    }
}
