//! A table of distinct values, each stored once, named by a dense number and found with one
//! hash.
//!
//! Exploration looks things up far more often than it stores them: a child state once per
//! edge (most are shared or loop back), a step once per edge, a thread's state once per step.
//! The table hashes a key once per lookup and compares whole keys only when their hashes
//! match. Its slots are eight bytes, a number and 32 bits of its key's hash: the explorer
//! stores hundreds of thousands of states, and growing the table reads the kept hashes in
//! order instead of every stored key at random (which took a tenth of an exploration). A
//! value may carry data of its own beside it (`V`), read and written by number: what the
//! explorer knows of a state sits in the same cache line as the state.
//!
//! The explorer's states and histories, the tree's steps and `fgvt-lang`'s state parts all use
//! it.

use std::borrow::Borrow;
use std::hash::{BuildHasher, Hash};

use hashbrown::HashTable;

/// Distinct keys, each stored once with a value beside it, numbered in the order they were
/// first met.
#[derive(Clone)]
pub struct Interner<K, V = ()> {
    entries: Vec<(K, V)>,
    /// Numbers of the keys in `entries`, each with its key's [`Short`] hash.
    table: HashTable<(Short, u32)>,
    /// Fast, not DoS-resistant: the keys are the program's own.
    hasher: foldhash::fast::FixedState,
}

impl<K, V> Default for Interner<K, V> {
    fn default() -> Self {
        Interner {
            entries: Vec::new(),
            table: HashTable::new(),
            hasher: foldhash::fast::FixedState::with_seed(0x5eed),
        }
    }
}

impl<K: Hash + Eq, V> Interner<K, V> {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of `key`, stored with `value()` if it is new.
    pub fn intern(&mut self, key: K, value: impl FnOnce() -> V) -> u32 {
        let hash = Short::of(self.hasher.hash_one(&key));
        match self.find(hash, &key) {
            Some(id) => id,
            None => self.insert(hash, (key, value())),
        }
    }

    /// The number of the key equal to `key`, and whether it is new; only a new key is made
    /// (by `make`), so looking up a stored one copies nothing.
    pub fn intern_with<Q>(&mut self, key: &Q, make: impl FnOnce() -> (K, V)) -> (u32, bool)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let hash = Short::of(self.hasher.hash_one(key));
        match self.find(hash, key) {
            Some(id) => (id, false),
            None => (self.insert(hash, make()), true),
        }
    }

    /// The number of the stored key equal to `key`, whose hash is `hash`.
    fn find<Q>(&self, hash: Short, key: &Q) -> Option<u32>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        let entries = &self.entries;
        self.table
            .find(hash.wide(), |&(h, id)| {
                h == hash && entries[id as usize].0.borrow() == key
            })
            .map(|&(_, id)| id)
    }

    /// Stores a new entry whose key hashes to `hash`.
    fn insert(&mut self, hash: Short, entry: (K, V)) -> u32 {
        let id = u32::try_from(self.entries.len()).expect("fewer than 2^32 distinct keys");
        self.entries.push(entry);
        self.table
            .insert_unique(hash.wide(), (hash, id), |&(h, _)| h.wide());
        id
    }

    /// The key numbered `id`.
    pub fn key(&self, id: u32) -> &K {
        &self.entries[id as usize].0
    }

    /// The value beside the key numbered `id`.
    pub fn value(&self, id: u32) -> &V {
        &self.entries[id as usize].1
    }

    /// The value beside the key numbered `id`, to change it.
    pub fn value_mut(&mut self, id: u32) -> &mut V {
        &mut self.entries[id as usize].1
    }

    /// How many distinct keys are stored.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no key is stored.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The keys, in the order of their numbers.
    pub fn into_keys(self) -> Vec<K> {
        self.entries.into_iter().map(|(key, _)| key).collect()
    }
}

/// 32 bits of a key's hash, which the table keeps beside its number.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Short(u32);

impl Short {
    fn of(hash: u64) -> Short {
        // Both halves: the hasher's output is well mixed, but this costs nothing.
        Short((hash >> 32) as u32 ^ hash as u32)
    }

    /// The hash the table works with. `hashbrown` picks a slot with the low bits and tells
    /// keys apart in a group with the top seven; both come from the 32 kept bits, which stay
    /// independent up to 2^25 slots (beyond, more keys are compared: slower, never wrong).
    fn wide(self) -> u64 {
        u64::from(self.0) << 32 | u64::from(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_stored_once_and_keeps_its_number_and_value() {
        let mut table: Interner<u64, u32> = Interner::new();
        let ids: Vec<u32> = (0..10_000u64).map(|k| table.intern(k * 7, || 0)).collect();
        assert_eq!(table.len(), 10_000);
        for (k, &id) in ids.iter().enumerate() {
            assert_eq!(
                table.intern(k as u64 * 7, || 99),
                id,
                "found again after growing"
            );
            assert_eq!(*table.key(id), k as u64 * 7);
        }
        *table.value_mut(ids[5]) = 3;
        assert_eq!(*table.value(ids[5]), 3);
        assert_eq!(*table.value(ids[6]), 0, "a found key keeps its value");
        assert_eq!(table.len(), 10_000);
    }

    #[test]
    fn a_stored_key_is_found_by_reference_without_making_one() {
        let mut table: Interner<String> = Interner::new();
        let (a, new) = table.intern_with("x", || ("x".to_string(), ()));
        assert!(new);
        let (b, new) = table.intern_with("x", || unreachable!("found, not made"));
        assert_eq!((a, new), (b, false));
        assert_eq!(table.into_keys(), vec!["x".to_string()]);
    }
}
