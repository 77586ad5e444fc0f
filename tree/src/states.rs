//! The explorer's table of states: every distinct state stored once, named by a dense id, and
//! found with one hash.
//!
//! A child state is looked up once per edge, and most lookups hit (a shared state, a loop); the
//! table hashes a key once, keeps the hash beside the id (growing never rehashes a state), and
//! compares whole keys only when hashes match. What the search knows of a state (on the path,
//! explored, ...) lives beside it as a [`Slot`].

use std::hash::{BuildHasher, Hash};

use hashbrown::HashTable;

use crate::model::NodeId;

/// A state's number in the table, in the order states were first met.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct StateId(u32);

/// What the search knows of a state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    /// Met but not explored (or, unfolding paths, explored on another path: nothing is shared).
    Unexplored,
    /// On the current path, at this depth, opened as the `index`-th state of the search.
    OnPath { depth: u32, index: u32 },
    /// Explored into `node`, in a strongly connected component still being built; `index` is
    /// its discovery index.
    Member { node: NodeId, index: u32 },
    /// Explored into `node`, its component finished.
    Done(NodeId),
}

/// Every state met, with its slot.
pub(crate) struct States<K> {
    /// Each state with its slot side by side: a lookup that finds a state reads its slot next,
    /// from the same cache line.
    entries: Vec<(K, Slot)>,
    /// Ids by hash, with the hash kept so that growing the table rehashes nothing.
    table: HashTable<(u64, StateId)>,
    hasher: foldhash::fast::FixedState,
}

impl<K: Hash + Eq> States<K> {
    pub(crate) fn new() -> States<K> {
        States {
            entries: Vec::new(),
            table: HashTable::new(),
            hasher: foldhash::fast::FixedState::with_seed(0x5eed),
        }
    }

    /// The id of `key`, storing it if it is new (its slot then [`Slot::Unexplored`]).
    pub(crate) fn intern(&mut self, key: K) -> StateId {
        let hash = self.hasher.hash_one(&key);
        let entries = &self.entries;
        if let Some(&(_, id)) = self.table.find(hash, |&(h, id)| {
            h == hash && entries[id.0 as usize].0 == key
        }) {
            return id;
        }
        let id = StateId(u32::try_from(self.entries.len()).expect("fewer than 2^32 states"));
        self.entries.push((key, Slot::Unexplored));
        self.table.insert_unique(hash, (hash, id), |&(h, _)| h);
        id
    }

    /// The key of `id`.
    pub(crate) fn key(&self, id: StateId) -> &K {
        &self.entries[id.0 as usize].0
    }

    /// What the search knows of `id`.
    pub(crate) fn slot(&self, id: StateId) -> Slot {
        self.entries[id.0 as usize].1
    }

    /// Records what the search knows of `id`.
    pub(crate) fn set(&mut self, id: StateId, slot: Slot) {
        self.entries[id.0 as usize].1 = slot;
    }

    /// How many distinct states were met.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_stored_once_and_keeps_its_id_and_slot() {
        let mut states = States::new();
        let ids: Vec<StateId> = (0..10_000u64).map(|k| states.intern(k * 7)).collect();
        assert_eq!(states.len(), 10_000);
        for (k, &id) in ids.iter().enumerate() {
            assert_eq!(states.intern(k as u64 * 7), id, "found again after growing");
            assert_eq!(*states.key(id), k as u64 * 7);
        }
        let node = NodeId::new(3);
        states.set(ids[5], Slot::Done(node));
        assert_eq!(states.slot(ids[5]), Slot::Done(node));
        assert_eq!(states.slot(ids[6]), Slot::Unexplored);
        assert_eq!(states.len(), 10_000);
    }
}
