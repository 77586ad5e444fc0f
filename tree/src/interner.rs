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
//! The slots are a plain open-addressed array probed linearly, not a general-purpose hash
//! map: a lookup in a table larger than the cache then costs two memory waits (the slot, the
//! entry) where `hashbrown`'s layout, control bytes apart from slots, costs three; and the
//! explorer can [`prefetch`](Interner::prefetch) the slots of all of a state's children
//! before looking any up, so that their waits overlap. On the seqlock benchmark the two
//! together took about a tenth off the model explorer's time.
//!
//! The explorer's states and histories, the tree's steps and `fgvt-lang`'s state parts all use
//! it.

use std::borrow::Borrow;
use std::hash::{BuildHasher, Hash};

/// Distinct keys, each stored once with a value beside it, numbered in the order they were
/// first met.
#[derive(Clone)]
pub struct Interner<K, V = ()> {
    entries: Vec<(K, V)>,
    /// Open addressing with linear probing: each slot is empty (0) or a stored key's
    /// [`Short`] hash (high half) and its number plus one (low half). A lookup reads one slot
    /// line and, when the hashes match, one entry: two cache misses in a table larger than
    /// the cache, where a table that keeps its slots apart from its control bytes takes three.
    /// The length is 0 or a power of two, and at most three quarters of the slots are full
    /// (probes stay short: 2.5 slots on average to find a key at that load, 8.5 to miss,
    /// and eight slots share a cache line).
    slots: Box<[u64]>,
    /// Fast, not DoS-resistant: the keys are the program's own.
    hasher: foldhash::fast::FixedState,
}

/// A key's hash, computed once to look it up later ([`Interner::prefetch`],
/// [`Interner::intern_hashed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyHash(Short);

impl<K, V> Default for Interner<K, V> {
    fn default() -> Self {
        Interner {
            entries: Vec::new(),
            slots: Box::new([]),
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
        let hash = self.hash(&key);
        self.intern_hashed(hash, key, value)
    }

    /// The hash of `key`, for [`Interner::prefetch`] and [`Interner::intern_hashed`].
    pub fn hash<Q: Hash + ?Sized>(&self, key: &Q) -> KeyHash {
        KeyHash(Short::of(self.hasher.hash_one(key)))
    }

    /// Asks the processor to bring the slot where a key of hash `hash` is looked for into
    /// the cache. Several lookups prefetched before any is made wait for memory at once.
    pub fn prefetch(&self, hash: KeyHash) {
        if self.slots.is_empty() {
            return;
        }
        let slot = &self.slots[self.position(hash.0)];
        prefetch(std::ptr::from_ref(slot).cast());
    }

    /// After [`Interner::prefetch`], asks for the stored entry whose hash is `hash` (the
    /// first on its probe), so that the comparison that finds it waits less.
    pub fn prefetch_entry(&self, hash: KeyHash) {
        if self.slots.is_empty() {
            return;
        }
        let mask = self.slots.len() - 1;
        let mut at = self.position(hash.0);
        loop {
            let slot = self.slots[at];
            if slot == 0 {
                return;
            }
            if (slot >> 32) as u32 == hash.0 .0 {
                prefetch_whole(&self.entries[(slot as u32 - 1) as usize]);
                return;
            }
            at = (at + 1) & mask;
        }
    }

    /// [`Interner::intern`] for a key whose hash is already known ([`Interner::hash`]).
    pub fn intern_hashed(&mut self, hash: KeyHash, key: K, value: impl FnOnce() -> V) -> u32 {
        match self.find(hash.0, &key) {
            Ok(id) => id,
            Err(at) => self.insert(at, hash.0, (key, value())),
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
            Ok(id) => (id, false),
            Err(at) => (self.insert(at, hash, make()), true),
        }
    }

    /// Where the probe for a key of hash `hash` starts (the table is not empty).
    fn position(&self, hash: Short) -> usize {
        hash.0 as usize & (self.slots.len() - 1)
    }

    /// The number of the stored key equal to `key`, whose hash is `hash`; or the empty slot
    /// where it would go (`usize::MAX` when the table has no slots yet).
    fn find<Q>(&self, hash: Short, key: &Q) -> Result<u32, usize>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        if self.slots.is_empty() {
            return Err(usize::MAX);
        }
        let mask = self.slots.len() - 1;
        let mut at = self.position(hash);
        loop {
            let slot = self.slots[at];
            if slot == 0 {
                return Err(at);
            }
            if (slot >> 32) as u32 == hash.0 {
                let id = (slot as u32) - 1;
                if self.entries[id as usize].0.borrow() == key {
                    return Ok(id);
                }
            }
            at = (at + 1) & mask;
        }
    }

    /// Stores a new entry whose key hashes to `hash`, in the empty slot `at` found for it.
    fn insert(&mut self, at: usize, hash: Short, entry: (K, V)) -> u32 {
        let id = u32::try_from(self.entries.len())
            .ok()
            .filter(|&id| id < u32::MAX)
            .expect("fewer than 2^32 - 1 distinct keys");
        crate::growth::reserve(&mut self.entries, 1);
        self.entries.push(entry);
        let slot = u64::from(hash.0) << 32 | u64::from(id + 1);
        if 4 * self.entries.len() > 3 * self.slots.len() {
            self.grow();
            let at = self.free_slot(hash);
            self.slots[at] = slot;
        } else {
            self.slots[at] = slot;
        }
        id
    }

    /// Doubles the slots, placing the stored keys again by their kept hashes (no key is read).
    fn grow(&mut self) {
        let len = (self.slots.len() * 2).max(16);
        let old = std::mem::replace(&mut self.slots, vec![0; len].into_boxed_slice());
        for slot in old.iter().copied().filter(|&slot| slot != 0) {
            let at = self.free_slot(Short((slot >> 32) as u32));
            self.slots[at] = slot;
        }
    }

    /// The first empty slot on the probe of `hash`.
    fn free_slot(&self, hash: Short) -> usize {
        let mask = self.slots.len() - 1;
        let mut at = self.position(hash);
        while self.slots[at] != 0 {
            at = (at + 1) & mask;
        }
        at
    }

    /// The key numbered `id`.
    pub fn key(&self, id: u32) -> &K {
        &self.entries[id as usize].0
    }

    /// The key numbered `id`, to change what its [`Hash`] and [`Eq`] do not read (a change
    /// of what they read would leave it where its old hash put it).
    pub(crate) fn key_mut(&mut self, id: u32) -> &mut K {
        &mut self.entries[id as usize].0
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

/// Asks the processor to bring the line at `address` into its cache (a hint: nothing on
/// processors without the instruction).
fn prefetch(address: *const i8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults, whatever the address; ours are live anyway.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(address);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

/// Asks the processor to bring every cache line of `value` into its cache: an entry that
/// straddles two lines (most do, unless their size divides 64) is compared whole, and a line
/// left out would cost a wait of its own after the first.
pub(crate) fn prefetch_whole<T>(value: &T) {
    let start = std::ptr::from_ref(value).cast::<i8>();
    prefetch(start);
    let size = std::mem::size_of::<T>();
    if size > 1 {
        // The last byte's line; the same line as the first for a value within one.
        prefetch(start.wrapping_add(size - 1));
    }
}

/// 32 bits of a key's hash, which the table keeps beside its number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Short(u32);

impl Short {
    fn of(hash: u64) -> Short {
        // Both halves: the hasher's output is well mixed, but this costs nothing.
        Short((hash >> 32) as u32 ^ hash as u32)
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

    /// A key whose hash is chosen by the test: many keys on one probe chain.
    #[derive(Debug, PartialEq, Eq)]
    struct Colliding {
        bucket: u8,
        key: u16,
    }

    impl Hash for Colliding {
        fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
            state.write_u8(self.bucket);
        }
    }

    proptest::proptest! {
        /// Against a map: every key gets the number of its first appearance, whether it is
        /// looked up directly or hashed and prefetched first, across the table's growth and
        /// with whole runs of keys sharing a hash.
        #[test]
        fn numbers_keys_as_a_map_does(
            keys in proptest::collection::vec((0u8..4, 0u16..300, proptest::bool::ANY), 0..2_000)
        ) {
            let mut table: Interner<Colliding, u16> = Interner::new();
            let mut model: std::collections::HashMap<(u8, u16), u32> = Default::default();
            for (bucket, key, prefetched) in keys {
                let expected = model.len() as u32;
                let expected = *model.entry((bucket, key)).or_insert(expected);
                let k = Colliding { bucket, key };
                let id = if prefetched {
                    let hash = table.hash(&k);
                    table.prefetch(hash);
                    table.prefetch_entry(hash);
                    table.intern_hashed(hash, k, || key)
                } else {
                    table.intern(k, || key)
                };
                proptest::prop_assert_eq!(id, expected);
                proptest::prop_assert_eq!(*table.value(id), key);
                proptest::prop_assert_eq!(table.key(id).bucket, bucket);
            }
            proptest::prop_assert_eq!(table.len(), model.len());
        }
    }
}
