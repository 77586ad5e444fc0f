//! Equality and hashing of executions as graphs, whatever order their events were added in.
//!
//! An explorer reaches the same execution graph through many interleavings: two threads'
//! independent events added in either order give the same graph, but different event numbers
//! (a [`StoreId`](crate::StoreId) is the number of an event in the order it was added). To merge
//! them, `Execution` implements [`PartialEq`], [`Eq`] and [`Hash`] on a *canonical* description
//! that names every event by where it is in the program, not by when it was added:
//!
//! * an event is `(thread, position in the thread's program order)`, an initial store is its
//!   location;
//! * the description is: the number of threads; each location's initial value; each thread's
//!   events in program order, each with its kind, location, order, the values it read and
//!   wrote, and the event it reads from; each location's modification order; the
//!   [`synchronize`](crate::Execution::synchronize) edges, attached and pending.
//!
//! Two executions are equal exactly when these descriptions are: the same events per thread in
//! program order, the same `rf`, the same `mo`. Locations are named by number, so two executions
//! compared must have added their locations in the same order. Whether the all-`SeqCst`
//! shortcut is on is configuration, not part of the graph, and is ignored.
//!
//! [`Execution::canonical_hash`] is that hash with a fixed seed, the same in every process: a
//! fingerprint for tables that outlive one run.

use std::hash::{BuildHasher, Hash, Hasher};

use crate::event::{EventId, Kind};
use crate::Execution;

/// An initial store's name has this bit set (thread events' names do not: threads are fewer
/// than 2^31).
const INITIAL: u64 = 1 << 63;

/// The seed of [`Execution::canonical_hash`]: any fixed number.
const SEED: u64 = 0x6667_7674_6d65_6d00;

impl Execution {
    /// The program-order name of event `e`: `(thread << 32) | position`, or `INITIAL | loc`.
    fn canonical_name(&self, e: EventId) -> u64 {
        let event = &self.events[e];
        match event.thread {
            None => INITIAL | event.index as u64,
            Some(t) => ((t as u64) << 32) | event.index as u64,
        }
    }

    /// Event `e` as words: kind, order and location; values read and written; what it reads.
    fn canonical_event(&self, e: EventId) -> [u64; 4] {
        let event = &self.events[e];
        let kind = match event.kind {
            Kind::Init => 0,
            Kind::Load => 1,
            Kind::Store => 2,
            Kind::Rmw => 3,
            Kind::Fence => 4,
        };
        let loc = event.loc.map_or(0, |l| u64::from(l) + 1);
        let rf = event.rf.map_or(u64::MAX, |s| self.canonical_name(s));
        [
            kind | (event.order as u64) << 8 | loc << 32,
            event.read,
            event.written,
            rf,
        ]
    }

    /// The `synchronize` edges, attached ones as (before, after) and pending ones as
    /// (before, thread), by name, sorted.
    fn canonical_sync(&self) -> Vec<(u64, u64)> {
        let mut edges: Vec<(u64, u64)> = self
            .sync
            .iter()
            .map(|&(a, b)| (self.canonical_name(a), self.canonical_name(b)))
            .collect();
        for (t, thread) in self.threads.iter().enumerate() {
            edges.extend(
                thread
                    .pending
                    .iter()
                    .map(|&a| (self.canonical_name(a), INITIAL | t as u64)),
            );
        }
        edges.sort_unstable();
        edges
    }

    /// A 64-bit hash of the canonical description (see [module `canonical`](crate::canonical)),
    /// with a fixed seed: equal for equal executions, in every run.
    pub fn canonical_hash(&self) -> u64 {
        foldhash::fast::FixedState::with_seed(SEED).hash_one(self)
    }
}

impl PartialEq for Execution {
    /// Whether the two are the same graph (see [module `canonical`](crate::canonical)).
    fn eq(&self, other: &Execution) -> bool {
        let events = |x: &Execution, t: usize| -> Vec<[u64; 4]> {
            x.threads[t]
                .po
                .iter()
                .map(|&e| x.canonical_event(e))
                .collect()
        };
        let mo = |x: &Execution, l: usize| -> Vec<u64> {
            x.mo[l].iter().map(|&e| x.canonical_name(e)).collect()
        };
        self.threads.len() == other.threads.len()
            && self.mo.len() == other.mo.len()
            && (0..self.mo.len())
                .all(|l| self.events[self.mo[l][0]].written == other.events[other.mo[l][0]].written)
            && (0..self.threads.len()).all(|t| events(self, t) == events(other, t))
            && (0..self.mo.len()).all(|l| mo(self, l) == mo(other, l))
            && self.canonical_sync() == other.canonical_sync()
    }
}

impl Eq for Execution {}

impl Hash for Execution {
    /// Hashes the canonical description (see [module `canonical`](crate::canonical)).
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.threads.len());
        state.write_usize(self.mo.len());
        for mo in &self.mo {
            state.write_u64(self.events[mo[0]].written);
        }
        for thread in &self.threads {
            state.write_usize(thread.po.len());
            for &e in &thread.po {
                for word in self.canonical_event(e) {
                    state.write_u64(word);
                }
            }
        }
        for mo in &self.mo {
            state.write_usize(mo.len());
            for &e in mo {
                state.write_u64(self.canonical_name(e));
            }
        }
        if !self.sync.is_empty() || self.threads.iter().any(|t| !t.pending.is_empty()) {
            self.canonical_sync().hash(state);
        }
    }
}
