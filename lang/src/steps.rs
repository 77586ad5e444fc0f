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
#[derive(Clone, Copy, Debug)]
pub(crate) enum Known {
    /// The thread had run all its operations.
    Done,
    /// The thread could not move.
    Blocked,
    /// The thread moved, with this effect and the event of this number (see [`Steps::event`]).
    Moved(StepEffect, u32),
}

/// The steps taken so far. Faults and bounded steps are not kept: they end a path, and are
/// rare.
#[derive(Clone, Debug, Default)]
pub(crate) struct Steps {
    known: HashMap<StepKey, Known, foldhash::fast::FixedState>,
    /// Each thread's last step looked up. A depth-first search opens a state right after its
    /// parent, and a thread that did not move, over memory the move did not write, asks for the
    /// same step again: this answers from a line in cache instead of the table.
    last: Vec<Option<(StepKey, Known)>>,
    /// The events of the steps, by number: one allocation for every replay, which the tree
    /// numbers by address. (Numbers, not `Arc`s, in the tables: a lookup then costs no atomic
    /// reference count, which on the hottest path was a fifth of the time.)
    events: Vec<Arc<Event>>,
}

impl Steps {
    /// The step taken before from `key`, if any.
    pub fn get(&mut self, key: &StepKey) -> Option<Known> {
        let thread = key.thread();
        if let Some(Some((last, known))) = self.last.get(thread) {
            if last == key {
                return Some(*known);
            }
        }
        let known = *self.known.get(key)?;
        self.remember_last(*key, known);
        Some(known)
    }

    /// The event numbered `number`.
    pub fn event(&self, number: u32) -> &Arc<Event> {
        &self.events[number as usize]
    }

    /// Remembers that the step from `key` was blocked or done.
    pub fn insert(&mut self, key: StepKey, known: Known) {
        self.remember_last(key, known);
        self.known.insert(key, known);
    }

    /// Remembers that the step from `key` moved with `effect` and `event`.
    pub fn insert_move(&mut self, key: StepKey, effect: StepEffect, event: Arc<Event>) {
        let number = u32::try_from(self.events.len()).expect("fewer than 2^32 distinct steps");
        self.events.push(event);
        self.insert(key, Known::Moved(effect, number));
    }

    fn remember_last(&mut self, key: StepKey, known: Known) {
        let thread = key.thread();
        if self.last.len() <= thread {
            self.last.resize(thread + 1, None);
        }
        self.last[thread] = Some((key, known));
    }
}
