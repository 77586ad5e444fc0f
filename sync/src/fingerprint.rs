//! Fingerprints of execution points: what lets the explorer merge equal states of real code.
//!
//! Real code keeps its state on thread stacks and in the heap, where fgvt cannot read it. What
//! fgvt can see is every instrumented access: which object, what it read, what it wrote. The
//! fingerprint of a point of an execution is built from that alone:
//!
//! * **memory** — the value of every instrumented atomic (a pointer by its identity, below);
//!   for a [`Shared`](crate::Shared) cell or a lock's data, which fgvt does not read, a
//!   *version* that names the write that produced it (the writer and everything it had
//!   observed in its operation when it wrote);
//! * **locks** — who holds each lock, and how;
//! * **threads** — for each thread, the index of its operation, its pending access, and the
//!   log of what its accesses in this operation observed (kind, object, value seen, source
//!   position).
//!
//! The coarse history is not part of it: the explorer keys states by (fingerprint, history)
//! itself.
//!
//! # Why equal fingerprints have equal futures
//!
//! A test thread runs its operations one after another, each a call of a deterministic method
//! on `&self`. Between two accesses it computes on its own locals, which are a function of the
//! call and of what its accesses in the operation returned: its observation log. Two points
//! with equal logs for a thread therefore have equal locals for it, hence the same next
//! access, the same values to write, the same plain data in the nodes it allocates. Shared
//! state is the instrumented objects, whose values (or versions, which name a function of the
//! writer's log) are in the fingerprint, and the plain data behind pointers, which was written
//! by the thread that made the pointer known: a pointer is identified by that thread's log when
//! it first appeared. So every thread takes the same steps from both points, with the same
//! results, for every schedule.
//!
//! What this assumes of the code, and the README says: an operation carries nothing over from
//! the last one but what it stored in instrumented objects (no `thread_local!`, no
//! uninstrumented shared counter); plain data shared between threads is written before it is
//! published through an instrumented object and only read after; an address is not reused for
//! a new node while the test runs (an arena, a pool of numbered slots or a leak; a pool that
//! hands out slot numbers is plain integers and fine).
//!
//! Fingerprints are 128-bit sums of hashes (an incremental multiset hash, updated at every
//! write), so two distinct states share one with probability about n² / 2¹²⁹ for n states.
//!
//! # Retry loops
//!
//! [`Observations::retry`] implements `fgvt_sync::hint::spin_loop()`: the user's word that an
//! iteration of this loop carries nothing into the next but what it reads. An iteration that
//! observed exactly what the previous one did is dropped from the log, so the thread is back at
//! the fingerprint it had at the previous hint, and the explorer sees a loop edge: a waiting
//! loop is one state, not an ever deeper path.

use std::collections::HashMap;
use std::panic::Location;

/// A 128-bit fingerprint, or one of its summands.
pub(crate) type Fingerprint = u128;

/// The SplitMix64 finalizer: a bijection of `u64` that mixes every input bit into every output
/// bit.
pub(crate) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `hash` extended with `x` (order matters).
pub(crate) fn combine(hash: u64, x: u64) -> u64 {
    mix(hash.rotate_left(23) ^ mix(x))
}

/// Hashes a sequence of words.
pub(crate) fn hash_of(words: &[u64]) -> u64 {
    words.iter().fold(0x5eed, |h, &w| combine(h, w))
}

/// The summand of a fingerprint for the pair (`key`, `value`): two independent 64-bit hashes.
pub(crate) fn summand(key: u64, value: u64) -> Fingerprint {
    let high = mix(key ^ mix(value ^ 0x0123_4567_89ab_cdef));
    let low = mix(value.rotate_left(32) ^ mix(key ^ 0xfedc_ba98_7654_3210));
    (u128::from(high) << 64) | u128::from(low)
}

/// A value as an access saw or left it, before pointers are given their identities.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Word {
    /// An integer or boolean, as its bits.
    Int(u64),
    /// An address, with the alignment of what it points to (its low bits below that are a
    /// tag, as a mark bit in a lock-free list).
    Ptr(usize, usize),
}

/// What an access did to its object and what its thread learned.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Effect {
    /// Read a value; the object is unchanged.
    Read(Word),
    /// Wrote a value; the thread learned nothing.
    Write(Word),
    /// Read one value and left another (a swap, a `fetch_*`, a successful CAS).
    Update {
        /// What the thread read.
        seen: Word,
        /// What the object holds now.
        now: Word,
    },
    /// Read an object whose value fgvt does not see (a cell, a lock's data): the thread
    /// learns its version.
    ReadVersion,
    /// Wrote an object whose value fgvt does not see: a new version, named after the writer.
    WriteVersion,
    /// Neither read nor wrote anything another thread sees (a shared unlock, a local step).
    Nothing,
}

/// One access in a thread's log.
#[derive(Clone, Copy, Debug)]
struct Logged {
    /// What the access was, without what it saw: iterations of one loop that took the same
    /// path have the same shapes.
    shape: u64,
    /// The hash of the log up to and with this access.
    hash: u64,
}

/// A thread's observations in its current operation (see the module docs).
#[derive(Default)]
pub(crate) struct Observations {
    /// One entry per access.
    log: Vec<Logged>,
    /// Log lengths at the retry hints of this operation that were kept.
    hints: Vec<usize>,
}

impl Observations {
    /// Forgets everything: a new operation starts.
    pub(crate) fn clear(&mut self) {
        self.log.clear();
        self.hints.clear();
    }

    /// The hash of the log.
    pub(crate) fn hash(&self) -> u64 {
        self.log.last().map_or(EMPTY_LOG, |l| l.hash)
    }

    /// Appends one access: its `entry` (what it was and saw) and `shape` (what it was).
    pub(crate) fn push(&mut self, entry: u64, shape: u64) {
        let hash = combine(self.hash(), entry);
        self.log.push(Logged { shape, hash });
    }

    /// A retry hint: if the iteration since the last hint took the same path as the one
    /// before it (the same accesses, whatever values they saw), it is dropped: the thread is
    /// back at the head of its loop with nothing carried over, where it was at the last hint.
    /// Else the hint is kept. The first iteration counts from the start of the operation, so
    /// it only matches when the loop is where the operation starts.
    ///
    /// Comparing paths, not values, is what the hint promises: an iteration carries nothing
    /// into the next, so the values an iteration saw are gone at the next hint (what it wrote
    /// is in memory, which the fingerprint has). A reader that retried on different values
    /// is then one state, not one per history of retries. Comparing paths, not just counting
    /// hints, keeps apart the iterations of two loops that share a hint (a `lock` helper
    /// taken twice in one operation): the segment between them is not an iteration of either.
    pub(crate) fn retry(&mut self) {
        let now = self.log.len();
        let Some(&last) = self.hints.last() else {
            self.hints.push(now);
            return;
        };
        let before = self.hints.len().checked_sub(2).map_or(0, |i| self.hints[i]);
        let shapes = |from: usize, to: usize| self.log[from..to].iter().map(|l| l.shape);
        if now > last && shapes(before, last).eq(shapes(last, now)) {
            self.log.truncate(last);
        } else if now > last {
            self.hints.push(now);
        }
    }
}

/// The hash of an empty log.
const EMPTY_LOG: u64 = 0x1095_eed0;

/// One access's log shape: its kind, object and source position.
pub(crate) fn shape(kind: u64, object: u64, at: &'static Location<'static>) -> u64 {
    let at = std::ptr::from_ref(at) as usize as u64;
    hash_of(&[kind, object, at])
}

/// One access's log entry: its shape and what it saw.
pub(crate) fn entry(shape: u64, seen: u64) -> u64 {
    combine(shape, seen)
}

/// The memory of an execution as fingerprints see it: the value or version of every
/// instrumented object, and the identities of the addresses seen.
#[derive(Default)]
pub(crate) struct Memory {
    /// Object key → value word (or version).
    values: HashMap<u64, u64, foldhash::fast::RandomState>,
    /// The sum of `summand(key, value)` over `values`.
    sum: Fingerprint,
    /// Address → identity (see the module docs).
    pointers: HashMap<usize, u64, foldhash::fast::RandomState>,
}

impl Memory {
    /// The fingerprint of the values alone.
    pub(crate) fn sum(&self) -> Fingerprint {
        self.sum
    }

    /// Sets the value (or version) of the object `key`.
    pub(crate) fn set(&mut self, key: u64, value: u64) {
        if let Some(old) = self.values.insert(key, value) {
            self.sum = self.sum.wrapping_sub(summand(key, old));
        }
        self.sum = self.sum.wrapping_add(summand(key, value));
    }

    /// The value (or version) of the object `key`.
    pub(crate) fn get(&self, key: u64) -> u64 {
        self.values.get(&key).copied().unwrap_or(0)
    }

    /// `word` as fingerprints see it: an integer as it is, an address by its identity, given
    /// by `fresh` the first time the address is seen (from the context of the thread that
    /// makes it known).
    pub(crate) fn word(&mut self, word: Word, fresh: impl FnOnce() -> u64) -> u64 {
        match word {
            Word::Int(bits) => bits,
            Word::Ptr(address, align) => {
                let tag = address % align.max(1);
                let base = address - tag;
                let identity = if base == 0 {
                    0
                } else {
                    *self.pointers.entry(base).or_insert_with(fresh)
                };
                combine(identity, tag as u64)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn here() -> &'static Location<'static> {
        Location::caller()
    }

    /// Logs a read of `object` at `at` that saw `seen`.
    fn log(obs: &mut Observations, object: u64, at: &'static Location<'static>, seen: u64) {
        let shape = shape(1, object, at);
        obs.push(entry(shape, seen), shape);
    }

    #[test]
    fn an_iteration_on_the_path_of_the_last_one_is_dropped_whatever_it_saw() {
        let at = here();
        let mut obs = Observations::default();
        log(&mut obs, 1, at, 1);
        obs.retry();
        let after_first = obs.hash();
        log(&mut obs, 1, at, 3);
        obs.retry();
        assert_eq!(
            obs.hash(),
            after_first,
            "another value on the same path: back at the hint"
        );
    }

    #[test]
    fn an_iteration_that_saw_what_the_last_one_saw_is_dropped() {
        let at = here();
        let mut obs = Observations::default();
        log(&mut obs, 1, at, 1);
        obs.retry();
        let after_first = obs.hash();
        log(&mut obs, 1, at, 1);
        obs.retry();
        assert_eq!(
            obs.hash(),
            after_first,
            "the same observation again: back at the hint"
        );
        log(&mut obs, 2, at, 2);
        obs.retry();
        assert_ne!(obs.hash(), after_first, "a new value is progress");
    }

    #[test]
    fn an_iteration_is_compared_with_the_one_before_it_only() {
        let at = here();
        let mut obs = Observations::default();
        // Something before the loop, then two equal iterations.
        log(&mut obs, 9, at, 0);
        log(&mut obs, 1, at, 1);
        obs.retry();
        let first = obs.hash();
        log(&mut obs, 1, at, 1);
        obs.retry();
        let second = obs.hash();
        assert_ne!(first, second, "the first iteration saw the prologue too");
        log(&mut obs, 1, at, 1);
        obs.retry();
        assert_eq!(obs.hash(), second);
    }

    #[test]
    fn a_hint_without_an_access_since_the_last_changes_nothing() {
        let mut obs = Observations::default();
        log(&mut obs, 1, here(), 1);
        obs.retry();
        let h = obs.hash();
        obs.retry();
        obs.retry();
        assert_eq!(obs.hash(), h);
        assert_eq!(obs.hints.len(), 1);
    }

    #[test]
    fn memory_sums_do_not_depend_on_the_order_of_writes() {
        let mut a = Memory::default();
        a.set(1, 10);
        a.set(2, 20);
        a.set(1, 11);
        let mut b = Memory::default();
        b.set(2, 20);
        b.set(1, 11);
        assert_eq!(a.sum(), b.sum());
        b.set(1, 12);
        assert_ne!(a.sum(), b.sum());
    }

    #[test]
    fn addresses_keep_the_identity_they_were_first_given() {
        let mut m = Memory::default();
        let p = m.word(Word::Ptr(0x1000, 8), || 77);
        assert_eq!(m.word(Word::Ptr(0x1000, 8), || 99), p);
        assert_eq!(
            m.word(Word::Ptr(0, 8), || 5),
            combine(0, 0),
            "null has no identity"
        );
        assert_ne!(
            m.word(Word::Ptr(0x1001, 8), || 5),
            p,
            "a tag is part of the value"
        );
    }
}
