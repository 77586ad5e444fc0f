//! The explorer's table of states: every distinct state stored once (an [`Interner`]), named
//! by a dense id, with what the search knows of it (on the path, explored, ...) beside it as a
//! [`Slot`].

use std::hash::Hash;

use crate::graph::NodeId;
use crate::interner::{Interner, KeyHash};

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

/// The most states one search may open: a [`Packed`] slot keeps a discovery index in 30 bits.
/// The search stops there as at its state limit (no memory holds that many states anyway).
pub(crate) const MAX_OPENED: usize = 1 << 30;

/// A [`Slot`] as the table stores it, in 8 bytes (an enum of two `u32`s would take 12, and
/// with a 32-byte key every entry 48 instead of 40): the variant in the top two bits of the
/// first word and a discovery index in the rest, a depth or a node in the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Packed(u32, u32);

impl Packed {
    const ON_PATH: u32 = 1 << 30;
    const MEMBER: u32 = 2 << 30;
    const DONE: u32 = 3 << 30;
    const VARIANT: u32 = 3 << 30;

    fn pack(slot: Slot) -> Packed {
        let index = |index: u32| {
            debug_assert!((index as usize) < MAX_OPENED, "the search stops before");
            index & !Packed::VARIANT
        };
        let node = |node: NodeId| u32::try_from(node.index()).expect("node ids are u32");
        match slot {
            Slot::Unexplored => Packed(0, 0),
            Slot::OnPath { depth, index: i } => Packed(Packed::ON_PATH | index(i), depth),
            Slot::Member { node: n, index: i } => Packed(Packed::MEMBER | index(i), node(n)),
            Slot::Done(n) => Packed(Packed::DONE, node(n)),
        }
    }

    fn unpack(self) -> Slot {
        let index = self.0 & !Packed::VARIANT;
        match self.0 & Packed::VARIANT {
            0 => Slot::Unexplored,
            Packed::ON_PATH => Slot::OnPath {
                depth: self.1,
                index,
            },
            Packed::MEMBER => Slot::Member {
                node: NodeId::new(self.1 as usize),
                index,
            },
            _ => Slot::Done(NodeId::new(self.1 as usize)),
        }
    }
}

/// Every state met, with its slot.
pub(crate) struct States<K>(Interner<K, Packed>);

impl<K: Hash + Eq> States<K> {
    pub(crate) fn new() -> States<K> {
        States(Interner::new())
    }

    /// The id of `key`, storing it if it is new (its slot then [`Slot::Unexplored`]).
    pub(crate) fn intern(&mut self, key: K) -> StateId {
        StateId(self.0.intern(key, || Packed::pack(Slot::Unexplored)))
    }

    /// The hash of `key`, whose slot is brought into the cache for a lookup soon after:
    /// several children looked up at once wait for memory together.
    pub(crate) fn prefetch(&self, key: &K) -> KeyHash {
        let hash = self.0.hash(key);
        self.0.prefetch(hash);
        hash
    }

    /// After [`States::prefetch`], brings the stored state the hash points at into the cache.
    pub(crate) fn prefetch_entry(&self, hash: KeyHash) {
        self.0.prefetch_entry(hash);
    }

    /// [`States::intern`] for a key whose hash is `hash` ([`States::prefetch`]).
    pub(crate) fn intern_hashed(&mut self, hash: KeyHash, key: K) -> StateId {
        StateId(
            self.0
                .intern_hashed(hash, key, || Packed::pack(Slot::Unexplored)),
        )
    }

    /// The key of `id`.
    pub(crate) fn key(&self, id: StateId) -> &K {
        self.0.key(id.0)
    }

    /// The key of `id`, to change what its [`Hash`] and [`Eq`] do not read.
    pub(crate) fn key_mut(&mut self, id: StateId) -> &mut K {
        self.0.key_mut(id.0)
    }

    /// What the search knows of `id`.
    pub(crate) fn slot(&self, id: StateId) -> Slot {
        self.0.value(id.0).unpack()
    }

    /// Records what the search knows of `id`.
    pub(crate) fn set(&mut self, id: StateId, slot: Slot) {
        *self.0.value_mut(id.0) = Packed::pack(slot);
    }

    /// How many distinct states were met.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
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

    proptest::proptest! {
        /// Every slot comes back as it was set, at the ends of its fields' ranges too.
        #[test]
        fn a_slot_comes_back_as_set(
            variant in 0..4u8,
            index in proptest::prop_oneof![0..16u32, (MAX_OPENED as u32 - 16)..MAX_OPENED as u32],
            word in proptest::prop_oneof![0..16u32, (u32::MAX - 16)..u32::MAX],
        ) {
            let slot = match variant {
                0 => Slot::Unexplored,
                1 => Slot::OnPath { depth: word, index },
                2 => Slot::Member { node: NodeId::new(word as usize), index },
                _ => Slot::Done(NodeId::new(word as usize)),
            };
            proptest::prop_assert_eq!(Packed::pack(slot).unpack(), slot);
        }
    }

    #[test]
    fn a_slot_takes_eight_bytes() {
        assert_eq!(std::mem::size_of::<Packed>(), 8);
        // What the explorer stores per state: a 32-byte key (a fgvt-sync state, a history, a
        // turn) and its slot.
        assert_eq!(std::mem::size_of::<([u64; 4], Packed)>(), 40);
    }
}
