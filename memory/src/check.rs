//! The consistency check behind the candidate methods: the axioms of [`crate::axioms`], decided
//! from the graph's incremental happens-before instead of relations built from scratch.
//!
//! Three facts make it cheap:
//!
//! * **`hb` is already known.** The graph keeps each event's happens-before row up to date as
//!   events are added ([`crate::execution`]), and no-thin-air holds by construction.
//! * **`eco` is positional.** Once every RMW reads its immediate `mo`-predecessor (atomicity,
//!   checked first), a store at place `p` of its location's `mo` reaches by `eco` exactly the
//!   stores after `p` and the reads of stores at or after `p`; a load of the store at `p`, the
//!   stores after `p` and the reads of stores after `p`. Per location, two tables of suffix
//!   unions give any event's `eco` row in a couple of row unions, and coherence is "no event's
//!   `hb` row meets its `eco` row".
//! * **The middle of `scb` collapses.** `x po|≠loc ; hb ; po|≠loc y` holds exactly when
//!   `first(x) hb last(y)`, where `first(x)` is the first event after `x` in its thread on
//!   another location and `last(y)` the last event before `y` in its thread on another
//!   location: any other witnesses are `po`-after `first(x)` and `po`-before `last(y)`, and
//!   `po ⊆ hb`. So each `scb` row costs one pass over the events, and `psc` is built only
//!   between `SeqCst` events (a few row unions each), then checked for a cycle by peeling
//!   events with no predecessor.
//!
//! The check looks at the whole graph, not only at the newest event: an event that is not
//! `SeqCst` can still add `psc` edges between older events (a relaxed store placed before a
//! `SeqCst` store in `mo`, after a `SeqCst` fence in its thread, orders the two).

use crate::bits::{self, Matrix};
use crate::event::{EventId, Kind};
use crate::Execution;

/// Per location, the suffix unions that give `eco` rows.
struct Locations {
    /// Per location, row `p`: its stores at places after `p` in `mo`.
    later_stores: Vec<Matrix>,
    /// Per location, row `p`: the reads of its stores at places `p` or later (one row more than
    /// stores, the last empty).
    later_readers: Vec<Matrix>,
}

impl Locations {
    fn new(x: &Execution) -> Locations {
        let n = x.len();
        let later_stores =
            x.mo.iter()
                .map(|mo| {
                    let mut stores = Matrix::new(mo.len(), n);
                    for p in (0..mo.len().saturating_sub(1)).rev() {
                        stores.union_rows(p, p + 1);
                        stores.set(p, mo[p + 1]);
                    }
                    stores
                })
                .collect();
        let mut later_readers: Vec<Matrix> =
            x.mo.iter().map(|mo| Matrix::new(mo.len() + 1, n)).collect();
        for (r, event) in x.events.iter().enumerate() {
            if let (Some(s), Some(loc)) = (event.rf, event.loc) {
                later_readers[loc as usize].set(x.mo_pos[s], r);
            }
        }
        for readers in &mut later_readers {
            for p in (0..readers.rows() - 1).rev() {
                readers.union_rows(p, p + 1);
            }
        }
        Locations {
            later_stores,
            later_readers,
        }
    }

    /// ORs `e`'s `eco` row into `out` (assuming atomicity).
    fn eco_into(&self, x: &Execution, e: EventId, out: &mut [u64]) {
        let event = &x.events[e];
        let Some(loc) = event.loc else { return };
        let (stores, readers) = (
            &self.later_stores[loc as usize],
            &self.later_readers[loc as usize],
        );
        if event.is_write() {
            let p = x.mo_pos[e];
            bits::union_into(out, stores.row(p));
            bits::union_into(out, readers.row(p));
        }
        if let Some(s) = event.rf {
            let p = x.mo_pos[s];
            bits::union_into(out, stores.row(p));
            bits::union_into(out, readers.row(p + 1));
        }
    }

    /// Whether `e`'s `eco` row meets `set` (assuming atomicity; `e` itself never counts).
    fn eco_meets(&self, x: &Execution, e: EventId, set: &[u64]) -> bool {
        let event = &x.events[e];
        let Some(loc) = event.loc else { return false };
        let (stores, readers) = (
            &self.later_stores[loc as usize],
            &self.later_readers[loc as usize],
        );
        let mut rows: [Option<&[u64]>; 4] = [None; 4];
        if event.is_write() {
            let p = x.mo_pos[e];
            rows[0] = Some(stores.row(p));
            rows[1] = Some(readers.row(p));
        }
        if let Some(s) = event.rf {
            let p = x.mo_pos[s];
            rows[2] = Some(stores.row(p));
            rows[3] = Some(readers.row(p + 1));
        }
        rows.into_iter().flatten().any(|row| {
            row.iter().zip(set).enumerate().any(|(w, (a, b))| {
                let mut both = a & b;
                if w == e / 64 {
                    both &= !(1 << (e % 64));
                }
                both != 0
            })
        })
    }
}

impl Execution {
    /// Whether the execution is consistent, decided from the incremental happens-before (see
    /// the module docs). Agrees with [`Execution::is_consistent`] on every graph built by the
    /// public methods.
    pub(crate) fn consistent_by_views(&self) -> bool {
        if !self.atomic_by_positions() {
            return false;
        }
        let locations = Locations::new(self);
        self.coherent_by_views(&locations) && self.sequentially_consistent_by_views()
    }

    /// Atomicity: every RMW sits right after the store it read.
    fn atomic_by_positions(&self) -> bool {
        self.events
            .iter()
            .enumerate()
            .filter(|(_, e)| e.kind == Kind::Rmw)
            .all(|(u, e)| {
                let read = e.rf.expect("an RMW reads");
                self.mo_pos[read] + 1 == self.mo_pos[u]
            })
    }

    /// Coherence: nothing that happens before an event is `eco`-after it.
    fn coherent_by_views(&self, locations: &Locations) -> bool {
        (0..self.len()).all(|e| !locations.eco_meets(self, e, self.hb.row(e)))
    }

    /// SC: `psc` between the `SeqCst` events is acyclic.
    fn sequentially_consistent_by_views(&self) -> bool {
        self.seq_cst == 0 || acyclic(&self.psc_from_scratch())
    }

    /// `psc` built from the whole graph: row `a` holds the events `b` with `a psc b` (only
    /// `SeqCst` events have edges). The graph keeps the same relation as it grows (module
    /// [`psc`](crate::psc)); this is what it starts again from when a `SeqCst` fence is added,
    /// and what the tests compare it with.
    pub(crate) fn psc_from_scratch(&self) -> Matrix {
        let locations = Locations::new(self);
        let locations = &locations;
        let n = self.len();
        let ev = &self.events;
        let sc: Vec<EventId> = (0..n).filter(|&e| ev[e].is_seq_cst()).collect();

        // hb successors, the transpose of the rows kept.
        let mut after = Matrix::new(n, n);
        for b in 0..n {
            for a in bits::ones(self.hb.row(b)) {
                after.set(a, b);
            }
        }
        // first(x): the first event po-after x on another location; last(y): the last event
        // po-before y on another location (fences are on no location).
        let same_loc = |a: EventId, b: EventId| ev[a].loc.is_some() && ev[a].loc == ev[b].loc;
        let mut first = vec![None; n];
        let mut last = vec![None; n];
        for thread in &self.threads {
            let po = &thread.po;
            for (i, &x) in po.iter().enumerate() {
                first[x] = po[i + 1..].iter().copied().find(|&c| !same_loc(x, c));
                last[x] = po[..i].iter().rev().copied().find(|&d| !same_loc(x, d));
            }
        }
        let mut at_loc = Matrix::new(self.mo.len(), n);
        for (e, event) in ev.iter().enumerate() {
            if let Some(loc) = event.loc {
                at_loc.set(loc as usize, e);
            }
        }

        // scb rows, for the events psc_base starts from: the SeqCst events and what happens
        // after a SeqCst fence.
        let mut needed = vec![false; n];
        for &a in &sc {
            needed[a] = true;
            if ev[a].is_fence() {
                for x in bits::ones(after.row(a)) {
                    needed[x] = true;
                }
            }
        }
        let mut scb = Matrix::new(n, n);
        for x in (0..n).filter(|&x| needed[x]) {
            let event = &ev[x];
            if let Some(t) = event.thread {
                for &y in &self.threads[t].po[event.index + 1..] {
                    scb.set(x, y);
                }
            }
            if let Some(c) = first[x] {
                for y in 0..n {
                    if last[y].is_some_and(|d| after.get(c, d)) {
                        scb.set(x, y);
                    }
                }
            }
            if let Some(loc) = event.loc {
                let row: Vec<u64> = after
                    .row(x)
                    .iter()
                    .zip(at_loc.row(loc as usize))
                    .map(|(a, b)| a & b)
                    .collect();
                scb.union_row_with(x, &row);
                let stores = &locations.later_stores[loc as usize];
                if event.is_write() {
                    scb.union_row_with(x, stores.row(self.mo_pos[x]));
                }
                if let Some(s) = event.rf {
                    scb.union_row_with(x, stores.row(self.mo_pos[s]));
                    bits::remove(scb.row_mut(x), x);
                }
            }
        }

        let mut psc = Matrix::new(n, n);
        let words = bits::words_for(n);
        for &a in &sc {
            let fence = ev[a].is_fence();
            // psc_base: what ([Esc] ∪ [Fsc] ; hb?) ; scb reaches from a.
            let mut reach = scb.row(a)[..words].to_vec();
            // psc_F: what hb ; eco reaches from a fence.
            let mut hb_eco = vec![0; words];
            if fence {
                for x in bits::ones(after.row(a)) {
                    bits::union_into(&mut reach, scb.row(x));
                    locations.eco_into(self, x, &mut hb_eco);
                }
            }
            for &b in &sc {
                let into_b =
                    |set: &[u64]| bits::contains(set, b) || bits::intersects(set, self.hb.row(b));
                let base = bits::contains(&reach, b) || (ev[b].is_fence() && into_b(&reach));
                let fences = fence && ev[b].is_fence() && (after.get(a, b) || into_b(&hb_eco));
                if base || fences {
                    psc.set(a, b);
                }
            }
        }
        psc
    }
}

/// Whether the relation (a square matrix) has no cycle: peel nodes with no predecessor left
/// until none remain (Kahn's algorithm).
pub(crate) fn acyclic(r: &Matrix) -> bool {
    let k = r.rows();
    let mut preds = vec![0usize; k];
    for a in 0..k {
        for b in bits::ones(r.row(a)).filter(|&b| b < k) {
            preds[b] += 1;
        }
    }
    let mut ready: Vec<usize> = (0..k).filter(|&a| preds[a] == 0).collect();
    let mut peeled = 0;
    while let Some(a) = ready.pop() {
        peeled += 1;
        for b in bits::ones(r.row(a)).filter(|&b| b < k) {
            preds[b] -= 1;
            if preds[b] == 0 {
                ready.push(b);
            }
        }
    }
    peeled == k
}
