//! `psc`, RC11's partial `SeqCst` order, kept up to date as the graph grows, so that deciding
//! whether one more event keeps an execution consistent costs a search from that event instead
//! of building `psc` again.
//!
//! # Why a new event adds few edges
//!
//! Events are added at the end of a thread, reading stores already there (module
//! [`execution`](crate::execution)), so a new event `e` happens before nothing and is `po`-before
//! nothing. Between older events, `hb`, `mo`, `rb` and `eco` stay what they were, so every
//! `psc` edge between older events stays, and no other appears between them unless `e` sits in
//! the middle of its chain. Going through the definitions (see [`crate::axioms`]):
//!
//! * `psc_base = ([Esc] ∪ [Fsc]; hb?) ; scb ; ([Esc] ∪ hb?; [Fsc])`. If `e` is `SeqCst` it is
//!   an end: `x → e` for every `SeqCst` event `x` with `x scb e` and every `SeqCst` fence that
//!   happens before (or is) such an `x`; `e → v` for every `SeqCst` event `v` with `e scb v`
//!   and every `SeqCst` fence that such a `v` happens before. Whatever its order, `e` is the
//!   middle of `f hb e scb y` for every `SeqCst` fence `f` that happens before it: `f → v` for
//!   the same `v`. `e` can be in no other place (`e hb y` and `e po y` never hold).
//! * `psc_F = [Fsc] ; (hb ∪ hb; eco; hb) ; [Fsc]`: only `f hb e eco y hb f2`, for the same
//!   fences `f` before `e` and every `SeqCst` fence `f2` that something `eco`-after `e`
//!   happens before.
//!
//! The `scb` successors of `e` are the stores after it in `mo` and, if it reads `s`, the stores
//! after `s` (`rb`); what is `eco`-after it is those and their readers. Its `scb` predecessors
//! are its thread's earlier events (`po`), those whose next event on another location happens
//! before `e`'s last earlier event on another location (`po|≠loc; hb; po|≠loc`), what happens
//! before it on its location (`hb|loc`), and, if it writes, the stores before it in `mo` and
//! the readers of those (`rb`).
//!
//! So an event that is not `SeqCst` and that no `SeqCst` fence happens before adds no edge at
//! all, which the candidate methods use too. A `SeqCst` fence can add edges between older
//! events (everything its `hb` predecessors are `scb`-after ends there), so adding one builds
//! `psc` again from scratch ([`Execution::psc_from_scratch`]), as the tests do to check the
//! kept relation.
//!
//! # Why acyclicity is a search from the new edges
//!
//! The old relation is acyclic (or already known not to be), so a cycle of the new one uses a
//! new edge `u → v`, and then `v` reaches `u`. The new edges start at `e`, at the `SeqCst`
//! fences before it (all with the same targets) and at `e`'s `psc` predecessors (all ending at
//! `e`): a search from `e`'s targets for one of its predecessors, and one from the fences'
//! targets for one of those fences, finds every such cycle.

use crate::bits::{self, Matrix};
use crate::event::EventId;
use crate::{Execution, Loc};

/// `psc` as the graph keeps it: see the [module docs](self).
#[derive(Clone, Debug, Default)]
pub(crate) struct Psc {
    /// Row `a`: the events `b` with `a psc b` (only `SeqCst` events have edges).
    pub(crate) edges: Matrix,
    /// Per event, the first event after it in its thread on another location (a fence is on
    /// none), once there is one.
    first: Vec<Option<EventId>>,
    /// The `SeqCst` fences, as a set.
    pub(crate) fences: Vec<u64>,
    /// Whether `edges` has no cycle.
    pub(crate) acyclic: bool,
}

impl Psc {
    /// The relation of a graph with no events.
    pub(crate) fn new() -> Psc {
        Psc {
            edges: Matrix::new(0, 64),
            first: Vec::new(),
            fences: vec![0],
            acyclic: true,
        }
    }

    /// Back to the relation of a graph with no events, keeping the allocations.
    pub(crate) fn clear(&mut self) {
        // Every field named: one added later must be cleared here too.
        let Psc {
            edges,
            first,
            fences,
            acyclic,
        } = self;
        edges.clear(0);
        first.clear();
        fences.clear();
        fences.push(0);
        *acyclic = true;
    }

    /// Makes room for event `e`, with no edges.
    pub(crate) fn new_row(&mut self, e: EventId) {
        self.edges.reserve_columns(e + 1);
        self.edges.push_row();
        self.first.push(None);
        self.fences
            .resize(bits::words_for(e + 1).max(self.fences.len()), 0);
    }
}

impl Execution {
    /// Whether events `a` and `b` access the same location (fences access none).
    pub(crate) fn same_loc(&self, a: EventId, b: EventId) -> bool {
        let loc = self.events[a].loc;
        loc.is_some() && loc == self.events[b].loc
    }

    /// Adds the `psc` edges of the newest event `e` (just pushed) and keeps acyclicity known.
    pub(crate) fn grow_psc(&mut self, e: EventId) {
        self.note_first(e);
        if self.seq_cst == 0 {
            // No `SeqCst` event, this one included: no end, no edge.
            return;
        }
        let event = &self.events[e];
        if event.is_fence() {
            if event.is_seq_cst() {
                bits::insert(&mut self.psc.fences, e);
                for x in bits::ones(&self.fence_predecessors(e)) {
                    self.psc.edges.set(x, e);
                }
                // Edges into `e` only: no cycle goes through it.
            }
            // Any other fence is no end and `scb`-related to nothing.
            return;
        }
        let after_fences = bits::intersects(self.hb.row(e), &self.psc.fences);
        let seq_cst = event.is_seq_cst();
        if !seq_cst && (!after_fences || self.latest_in_mo(e)) {
            // Not `SeqCst`, `e` adds only edges from the fences before it to what is `scb`- or
            // `eco`-after it: nothing, when it read or wrote its location's latest store.
            return;
        }
        let fences: Vec<u64> = (self.hb.row(e).iter().zip(&self.psc.fences))
            .map(|(a, b)| a & b)
            .collect();

        let words = bits::words_for(self.len());
        let (succ, eco) = self.scb_and_eco_successors(e);
        // f → v for the fences f before e (psc_base), and f → f2 through eco (psc_F).
        let fence_targets = self.fence_targets(&succ, &eco);
        // e → v: what is scb-after e, the fences that happen after it included.
        let targets = self.fence_targets(&succ, &succ);
        let sources = if seq_cst {
            self.psc_predecessors(e)
        } else {
            vec![0; words]
        };

        let mut cycle = false;
        if after_fences {
            for f in bits::ones(&fences) {
                self.psc.edges.union_row_with(f, &fence_targets);
            }
        }
        if seq_cst {
            self.psc.edges.union_row_with(e, &targets);
            for x in bits::ones(&sources) {
                self.psc.edges.set(x, e);
            }
            cycle |= self.psc_reaches(&targets, &sources);
        }
        if after_fences {
            cycle |= self.psc_reaches(&fence_targets, &fences);
        }
        self.psc.acyclic &= !cycle;
    }

    /// Records `e` as the first event on another location after the events of its thread
    /// that had none yet (they are all on one location, or `e` would not be the first).
    fn note_first(&mut self, e: EventId) {
        let thread = self.events[e].thread.expect("an event of a thread");
        let po = &self.threads[thread].po;
        for &z in po[..po.len() - 1].iter().rev() {
            if self.psc.first[z].is_some() || self.same_loc(z, e) {
                break;
            }
            self.psc.first[z] = Some(e);
        }
    }

    /// Whether no store is after the newest event `e` in `mo` (after it or after what it read,
    /// but for `e` itself): then nothing is `scb`- or `eco`-after it
    /// ([`Execution::scb_and_eco_successors`] is empty).
    fn latest_in_mo(&self, e: EventId) -> bool {
        let event = &self.events[e];
        event.loc.is_none_or(|loc| {
            let from = event.rf.map_or(self.mo_pos[e], |s| self.mo_pos[s]);
            self.mo[loc as usize][from + 1..].iter().all(|&y| y == e)
        })
    }

    /// The events `scb`-after the newest event `e` (stores after it or after what it read, in
    /// `mo`), and those with their readers (what is `eco`-after it).
    fn scb_and_eco_successors(&self, e: EventId) -> (Vec<u64>, Vec<u64>) {
        let event = &self.events[e];
        match event.loc {
            Some(loc) => {
                let from = event.rf.map_or(self.mo_pos[e], |s| self.mo_pos[s]);
                self.stores_after(loc, from, Some(e))
            }
            None => {
                let words = bits::words_for(self.len());
                (vec![0; words], vec![0; words])
            }
        }
    }

    /// The stores after place `from` of `loc`'s modification order but `except`, and those
    /// with their readers: what is `scb`- and `eco`-after an event that wrote or read there.
    pub(crate) fn stores_after(
        &self,
        loc: Loc,
        from: usize,
        except: Option<EventId>,
    ) -> (Vec<u64>, Vec<u64>) {
        let words = bits::words_for(self.len());
        let mut succ = vec![0; words];
        for &y in self.mo[loc as usize][from + 1..]
            .iter()
            .filter(|&&y| Some(y) != except)
        {
            bits::insert(&mut succ, y);
        }
        let mut eco = succ.clone();
        // The readers of a store of `succ` are on its location.
        for &r in &self.on_loc[loc as usize] {
            if self.events[r].rf.is_some_and(|s| bits::contains(&succ, s)) {
                bits::insert(&mut eco, r);
            }
        }
        (succ, eco)
    }

    /// The ends of the `psc` edges from a `SeqCst` fence before an event whose `scb`- and
    /// `eco`-successors are `succ` and `eco`: the `SeqCst` events of `succ` (`psc_base`), and
    /// the fences that happen after something of `eco` (`psc_F`; `succ` is in `eco`).
    pub(crate) fn fence_targets(&self, succ: &[u64], eco: &[u64]) -> Vec<u64> {
        let mut targets = vec![0; bits::words_for(self.len())];
        for y in bits::ones(succ).filter(|&y| self.events[y].is_seq_cst()) {
            bits::insert(&mut targets, y);
        }
        for v in bits::ones(&self.psc.fences) {
            if bits::intersects(eco, self.hb.row(v)) {
                bits::insert(&mut targets, v);
            }
        }
        targets
    }

    /// The `SeqCst` events and fences with a `psc` edge into the newest event `e`, if it is
    /// `SeqCst`: those `scb`-before it, and the fences that happen before such an event.
    fn psc_predecessors(&self, e: EventId) -> Vec<u64> {
        let words = bits::words_for(self.len());
        let event = &self.events[e];
        let thread = event.thread.expect("an event of a thread");
        let po = &self.threads[thread].po;
        let before = &po[..po.len() - 1];
        let mut pred = vec![0; words];
        // po.
        for &z in before {
            bits::insert(&mut pred, z);
        }
        // po|≠loc ; hb ; po|≠loc: z's next event on another location happens before e's last
        // earlier event on another location.
        if let Some(&last) = before.iter().rev().find(|&&d| !self.same_loc(d, e)) {
            let into = self.hb.row(last);
            for (z, first) in self.psc.first.iter().enumerate() {
                if first.is_some_and(|c| bits::contains(into, c)) {
                    bits::insert(&mut pred, z);
                }
            }
        }
        if let Some(loc) = event.loc {
            // hb|loc.
            for &z in &self.on_loc[loc as usize] {
                if self.hb.get(e, z) {
                    bits::insert(&mut pred, z);
                }
            }
            // mo and rb, if e writes.
            if event.is_write() {
                let mo = &self.mo[loc as usize];
                let place = self.mo_pos[e];
                let mut earlier = vec![0; words];
                for &s in &mo[..place] {
                    bits::insert(&mut earlier, s);
                }
                for &r in &self.on_loc[loc as usize] {
                    if r != e
                        && self.events[r]
                            .rf
                            .is_some_and(|s| bits::contains(&earlier, s))
                    {
                        bits::insert(&mut pred, r);
                    }
                }
                bits::union_into(&mut pred, &earlier);
            }
        }
        // [Esc] ; scb and [Fsc] ; scb: the `SeqCst` predecessors, fences included.
        let mut sources = vec![0; words];
        let mut before_pred = vec![0; words];
        // What happens before a thread's event holds what happens before its earlier ones:
        // per thread, the row of its last predecessor stands for all of them.
        let mut last_of = vec![None; self.threads.len()];
        for z in bits::ones(&pred) {
            if self.events[z].is_seq_cst() {
                bits::insert(&mut sources, z);
            }
            match self.events[z].thread {
                // `ones` goes in order of event, and a thread's events are added in its order.
                Some(t) => last_of[t] = Some(z),
                None => bits::union_into(&mut before_pred, self.hb.row(z)),
            }
        }
        for z in last_of.into_iter().flatten() {
            bits::union_into(&mut before_pred, self.hb.row(z));
        }
        // [Fsc] ; hb ; scb: the fences that happen before a predecessor.
        for f in bits::ones(&self.psc.fences) {
            if bits::contains(&before_pred, f) {
                bits::insert(&mut sources, f);
            }
        }
        sources
    }

    /// The `SeqCst` events and fences with a `psc` edge into the newest event `e`, a `SeqCst`
    /// fence: those that happen before it, the `SeqCst` accesses `mo`- or `rb`-before a store
    /// that happens before it, and the `SeqCst` fences that happen before something
    /// `eco`-before what happens before it (module docs).
    fn fence_predecessors(&self, e: EventId) -> Vec<u64> {
        let words = bits::words_for(self.len());
        let before = self.hb.row(e);
        // Per location, the latest place a store that happens before `e` has, and the latest
        // place of a store that a read that happens before `e` read.
        let mut stored = vec![0; self.mo.len()];
        let mut read = vec![None; self.mo.len()];
        for x in bits::ones(before).filter(|&x| x < self.len()) {
            let event = &self.events[x];
            let Some(loc) = event.loc else { continue };
            if event.is_write() {
                stored[loc as usize] = stored[loc as usize].max(self.mo_pos[x]);
            }
            if let Some(s) = event.rf {
                let place = self.mo_pos[s];
                read[loc as usize] =
                    Some(read[loc as usize].map_or(place, |p: usize| p.max(place)));
            }
        }
        // `mo ; [W ∩ before]` and `rb ; [W ∩ before]`: the stores before a store of `before`,
        // and their readers. `eco ; [before]` adds the store a read of `before` read and those
        // before it, and their readers.
        let (mut mo_rb, mut eco) = (vec![0; words], vec![0; words]);
        for (loc, mo) in self.mo.iter().enumerate() {
            let stores_below = stored[loc];
            let eco_stores_to = read[loc].map_or(stores_below, |p| stores_below.max(p + 1));
            let readers_below = read[loc].map_or(stores_below, |p| stores_below.max(p));
            for (place, &s) in mo.iter().enumerate() {
                if place < stores_below {
                    bits::insert(&mut mo_rb, s);
                }
                if place < eco_stores_to {
                    bits::insert(&mut eco, s);
                }
            }
            for &r in &self.on_loc[loc] {
                let Some(s) = self.events[r].rf else {
                    continue;
                };
                if self.mo_pos[s] < stores_below {
                    bits::insert(&mut mo_rb, r);
                }
                if self.mo_pos[s] < readers_below {
                    bits::insert(&mut eco, r);
                }
            }
        }
        let mut sources = vec![0; words];
        for x in (bits::ones(before).chain(bits::ones(&mo_rb))).filter(|&x| x < self.len()) {
            if self.events[x].is_seq_cst() {
                bits::insert(&mut sources, x);
            }
        }
        // A fence that happens before `e` is a source already (it is `SeqCst` and in
        // `before`): only the others are looked for in what happens before `eco`.
        for f in bits::ones(&self.psc.fences) {
            if f != e && !bits::contains(before, f) && bits::ones(&eco).any(|x| self.hb.get(x, f)) {
                bits::insert(&mut sources, f);
            }
        }
        sources
    }

    /// Whether some event of `goal` is reached by `psc` edges from `start` (which counts as
    /// reached).
    pub(crate) fn psc_reaches(&self, start: &[u64], goal: &[u64]) -> bool {
        let mut seen = start.to_vec();
        seen.resize(bits::words_for(self.len()).max(seen.len()), 0);
        let mut stack: Vec<EventId> = bits::ones(start).collect();
        while let Some(w) = stack.pop() {
            if bits::contains(goal, w) {
                return true;
            }
            for (i, (&next, s)) in self
                .psc
                .edges
                .row(w)
                .iter()
                .zip(seen.iter_mut())
                .enumerate()
            {
                let mut new = next & !*s;
                *s |= new;
                while new != 0 {
                    stack.push(i * 64 + new.trailing_zeros() as usize);
                    new &= new - 1;
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use crate::Order::{self, AcqRel, Acquire, Relaxed, Release, SeqCst};
    use crate::{bits, Execution, Loc, StoreId, ThreadId};

    /// One access of a test program: what a thread does next.
    #[derive(Clone, Copy, Debug)]
    enum Op {
        Load(Loc, Order),
        Store(Loc, Order),
        Rmw(Loc, Order),
        Fence(Order),
    }
    use Op::{Fence, Load, Rmw, Store};

    /// Every graph of `threads` (each a list of accesses), in every interleaving and with every
    /// well-formed choice, consistent or not: each visited with `check`.
    fn every_graph(threads: &[Vec<Op>], check: &mut dyn FnMut(&Execution)) {
        let mut x = Execution::new(threads.len());
        for _ in 0..3 {
            x.add_location(0);
        }
        let mut next = vec![0; threads.len()];
        walk(threads, &mut next, &x, check);
    }

    fn walk(
        threads: &[Vec<Op>],
        next: &mut Vec<usize>,
        x: &Execution,
        check: &mut dyn FnMut(&Execution),
    ) {
        check(x);
        for t in 0..threads.len() {
            let Some(&op) = threads[t].get(next[t]) else {
                continue;
            };
            next[t] += 1;
            for y in successors(x, t, op) {
                walk(threads, next, &y, check);
            }
            next[t] -= 1;
        }
    }

    fn successors(x: &Execution, t: ThreadId, op: Op) -> Vec<Execution> {
        let with = |f: &dyn Fn(&mut Execution)| {
            let mut y = x.clone();
            f(&mut y);
            y
        };
        match op {
            Load(loc, order) => (x.modification_order(loc).into_iter())
                .map(|s| with(&|y| _ = y.load(t, loc, order, s)))
                .collect(),
            Store(loc, order) => (0..x.modification_order(loc).len())
                .map(|at| with(&|y| _ = y.store(t, loc, 1, order, at)))
                .collect(),
            Rmw(loc, order) => (x.modification_order(loc).into_iter())
                .map(|s: StoreId| with(&|y| _ = y.rmw(t, loc, order, s, |v| v + 1)))
                .collect(),
            Fence(order) => vec![with(&|y| y.fence(t, order))],
        }
    }

    /// Programs with `SeqCst` accesses and fences among weaker ones: store buffering, message
    /// passing, coherence shapes, RMWs, fences on either side.
    fn programs() -> Vec<Vec<Vec<Op>>> {
        let (x, y, z) = (0, 1, 2);
        vec![
            vec![
                vec![Store(x, SeqCst), Load(y, SeqCst)],
                vec![Store(y, SeqCst), Load(x, SeqCst)],
            ],
            vec![
                vec![Store(x, Relaxed), Fence(SeqCst), Load(y, Relaxed)],
                vec![Store(y, Relaxed), Fence(SeqCst), Load(x, Relaxed)],
            ],
            vec![
                vec![Store(x, SeqCst), Load(y, Acquire)],
                vec![Store(y, Release), Fence(SeqCst), Load(x, Relaxed)],
            ],
            vec![
                vec![Store(x, Relaxed), Fence(SeqCst), Store(y, Release)],
                vec![Load(y, Acquire), Load(x, SeqCst)],
                vec![Store(y, SeqCst), Load(x, SeqCst)],
            ],
            vec![
                vec![Rmw(x, SeqCst), Load(y, Relaxed)],
                vec![Store(y, SeqCst), Rmw(x, AcqRel)],
            ],
            vec![
                vec![Store(x, SeqCst), Store(y, Relaxed)],
                vec![Load(y, Relaxed), Fence(SeqCst), Load(x, Relaxed)],
                vec![Rmw(x, SeqCst)],
            ],
            vec![
                vec![Load(x, SeqCst), Store(y, Relaxed), Load(y, SeqCst)],
                vec![Store(y, SeqCst), Fence(Release), Store(x, Relaxed)],
            ],
            vec![
                vec![Store(x, Relaxed)],
                vec![Load(x, Relaxed), Fence(SeqCst), Load(y, Relaxed)],
                vec![Store(y, Relaxed), Fence(SeqCst), Load(x, Relaxed)],
            ],
            vec![
                vec![Store(x, SeqCst)],
                vec![Load(x, Acquire), Load(y, SeqCst)],
                vec![Store(y, SeqCst), Fence(SeqCst), Load(x, Relaxed)],
            ],
            // `scb`'s middle: x's store, then y's, happen before the z accesses after T1's read.
            vec![
                vec![Store(x, SeqCst), Store(y, Release)],
                vec![Load(y, Acquire), Store(z, SeqCst), Load(x, SeqCst)],
            ],
            // Fences ordered through what a read before the second one read (`psc_F`'s `rf`),
            // where neither happens before the other.
            vec![
                vec![Fence(SeqCst), Store(x, Release)],
                vec![Load(x, Acquire), Store(y, Relaxed)],
                vec![Load(y, Relaxed), Fence(SeqCst)],
            ],
            // A fence right before a `SeqCst` access: an end before it through `po` alone.
            vec![
                vec![Store(x, Relaxed), Fence(SeqCst), Load(y, SeqCst)],
                vec![Store(y, SeqCst), Fence(SeqCst), Rmw(x, SeqCst)],
            ],
        ]
    }

    /// On every graph of the programs, consistent or not, `psc` as the graph kept it is the one
    /// built from scratch, and the graph's two flags say exactly whether it is consistent (by
    /// the axioms, from the definitions).
    #[test]
    fn the_kept_psc_is_the_one_built_from_scratch_and_decides_consistency() {
        let (mut graphs, mut inconsistent) = (0, 0);
        for program in programs() {
            every_graph(&program, &mut |x| {
                let scratch = x.psc_from_scratch();
                let words = bits::words_for(x.len());
                for e in 0..x.len() {
                    assert_eq!(
                        &x.psc.edges.row(e)[..words],
                        &scratch.row(e)[..words],
                        "psc row of {} in {x:?}",
                        x.name(e)
                    );
                }
                let kept = x.coherent && x.psc.acyclic;
                assert_eq!(kept, x.is_consistent(), "{x:?}");
                graphs += 1;
                inconsistent += usize::from(!kept);
            });
        }
        assert!(
            graphs > 5000 && inconsistent > 1000,
            "{graphs} graphs, {inconsistent} not consistent"
        );
    }
}
