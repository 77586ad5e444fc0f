//! The coarse histories of the explorer's paths, shared as a prefix tree.
//!
//! Most steps emit no call or return, and paths that diverge keep their common prefix: a
//! history is stored as one entry per coarse event pointing at its prefix, and named by a small
//! [`HistoryId`]. The explorer keys states by (program state, history id), so telling two states
//! apart never compares or hashes whole histories, and only leaves materialize theirs.

use std::collections::HashMap;

use crate::event::Event;
use crate::history::{CoarseEvent, History};

/// A history of the prefix tree: the base history followed by the events on the way to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct HistoryId(u32);

/// Interned histories: every distinct history extended from the base one event at a time.
pub(crate) struct HistoryTree {
    /// The history every path starts from (the serial `init` part).
    base: History,
    /// Entry `i` is history `i + 1`: its prefix and its last event.
    entries: Vec<(HistoryId, CoarseEvent)>,
    /// The history reached from a prefix by one more event.
    index: HashMap<(HistoryId, CoarseEvent), HistoryId>,
}

impl HistoryTree {
    /// A tree holding only `base`, whose id is [`HistoryTree::ROOT`].
    pub(crate) fn new(base: History) -> HistoryTree {
        HistoryTree {
            base,
            entries: Vec::new(),
            index: HashMap::new(),
        }
    }

    /// The base history.
    pub(crate) const ROOT: HistoryId = HistoryId(0);

    /// `history` followed by `event`.
    fn push(&mut self, history: HistoryId, event: CoarseEvent) -> HistoryId {
        let next =
            HistoryId(u32::try_from(self.entries.len() + 1).expect("fewer than 2^32 histories"));
        *self
            .index
            .entry((history, event))
            .or_insert_with_key(|(prefix, event)| {
                self.entries.push((*prefix, event.clone()));
                next
            })
    }

    /// `history` followed by the call and the return that `step` emits, if any.
    pub(crate) fn after(&mut self, history: HistoryId, step: &Event) -> HistoryId {
        let mut h = history;
        if let Some(call) = &step.call {
            h = self.push(
                h,
                CoarseEvent::Call {
                    thread: step.thread,
                    call: call.clone(),
                },
            );
        }
        if let Some(value) = &step.ret {
            h = self.push(
                h,
                CoarseEvent::Return {
                    thread: step.thread,
                    value: Some(value.clone()),
                },
            );
        }
        h
    }

    /// The whole history `id` names.
    pub(crate) fn history(&self, id: HistoryId) -> History {
        let mut tail = Vec::new();
        let mut at = id;
        while at != Self::ROOT {
            let (prefix, event) = &self.entries[at.0 as usize - 1];
            tail.push(event.clone());
            at = *prefix;
        }
        let mut history = self.base.clone();
        history.events.extend(tail.into_iter().rev());
        history
    }
}
