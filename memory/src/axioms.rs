//! The RC11 axioms, checked literally: every relation derived from `po`, `rf` and `mo` by its
//! definition, on the whole graph.
//!
//! This is the reference [`Execution::is_consistent`] runs, and the brute-force litmus
//! enumerator with it. The candidate methods run a faster check built on the graph's
//! incremental happens-before ([`crate::check`]); the tests compare the two.
//!
//! # Definitions
//!
//! Following Lahav et al., "Repairing sequential consistency in C/C++11" (PLDI 2017), with
//! C++20's release sequences. `[A]` is the identity on the set `A`, `;` composition, `?`
//! reflexive closure, `+` transitive closure, `R|loc` the pairs of `R` on the same location and
//! `R|≠loc` the others (a fence has no location, so a pair with a fence is `≠loc`).
//!
//! ```text
//! fr     = rf⁻¹ ; mo  minus the identity            (a read, then a store it did not see)
//! eco    = (rf ∪ mo ∪ fr)+                           (extended coherence order)
//! rs     = [W] ; (rf ; [RMW])*                       (C++20 release sequence)
//! sw     = [E⊒rel] ; ([F] ; po)? ; rs ; rf ; [R] ; (po ; [F])? ; [E⊒acq]
//! hb     = (po ∪ sw ∪ Init × E ∪ sync)+             (sync: Execution::synchronize)
//! scb    = po ∪ po|≠loc ; hb ; po|≠loc ∪ hb|loc ∪ mo ∪ fr
//! psc    = ([Esc] ∪ [Fsc] ; hb?) ; scb ; ([Esc] ∪ hb? ; [Fsc])
//!        ∪ [Fsc] ; (hb ∪ hb ; eco ; hb) ; [Fsc]
//! ```
//!
//! An execution is consistent when
//!
//! 1. **no thin air**: `po ∪ rf` is acyclic;
//! 2. **coherence**: `hb ; eco?` is irreflexive;
//! 3. **atomicity**: every RMW reads its immediate predecessor in `mo`;
//! 4. **SC**: `psc` is acyclic.
//!
//! # One event per RMW
//!
//! The paper splits an RMW into a read and a write joined by `rmw ⊆ po` and states atomicity
//! as `rmw ∩ (fr ; mo) = ∅`. Here an RMW is one event, so `rmw` is the identity on RMWs, and
//! `(u, u) ∉ fr ; mo` says no store lies between what `u` read and `u`. With split events,
//! coherence also forbids `u` being placed *before* what it read (`u_w mo w rf u_r po u_w` is an
//! `hb ; eco` cycle); with one event that cycle has no `hb` edge left, so axiom 3 states both:
//! what `u` read is its immediate `mo`-predecessor.

use crate::bits::{self, Matrix};
use crate::event::{EventId, Kind};
use crate::Execution;

/// A binary relation over the events `0..n`, row `a` the set of `b` with `a → b`.
#[derive(Clone, Debug)]
struct Relation(Matrix);

impl Relation {
    fn empty(n: usize) -> Relation {
        Relation(Matrix::new(n, n))
    }

    /// The identity on the events `keep` accepts.
    fn identity(n: usize, keep: impl Fn(EventId) -> bool) -> Relation {
        let mut r = Relation::empty(n);
        for a in (0..n).filter(|&a| keep(a)) {
            r.add(a, a);
        }
        r
    }

    fn n(&self) -> usize {
        self.0.rows()
    }

    fn add(&mut self, a: EventId, b: EventId) {
        self.0.set(a, b);
    }

    fn has(&self, a: EventId, b: EventId) -> bool {
        self.0.get(a, b)
    }

    fn pairs(&self) -> impl Iterator<Item = (EventId, EventId)> + '_ {
        (0..self.n()).flat_map(move |a| bits::ones(self.0.row(a)).map(move |b| (a, b)))
    }

    fn union(mut self, other: &Relation) -> Relation {
        for a in 0..self.n() {
            self.0.union_row_with(a, other.0.row(a));
        }
        self
    }

    /// The pairs for which `keep` holds.
    fn filter(&self, keep: impl Fn(EventId, EventId) -> bool) -> Relation {
        let mut r = Relation::empty(self.n());
        for (a, b) in self.pairs().filter(|&(a, b)| keep(a, b)) {
            r.add(a, b);
        }
        r
    }

    /// `self ; other`.
    fn then(&self, other: &Relation) -> Relation {
        let mut r = Relation::empty(self.n());
        for a in 0..self.n() {
            for b in bits::ones(self.0.row(a)) {
                r.0.union_row_with(a, other.0.row(b));
            }
        }
        r
    }

    fn inverse(&self) -> Relation {
        let mut r = Relation::empty(self.n());
        for (a, b) in self.pairs() {
            r.add(b, a);
        }
        r
    }

    /// `self?`.
    fn reflexive(&self) -> Relation {
        self.clone().union(&Relation::identity(self.n(), |_| true))
    }

    /// `self+`, by Warshall's algorithm on rows: once `k` has been an intermediate, every row
    /// that reaches `k` reaches all `k` reaches.
    fn plus(&self) -> Relation {
        let mut r = self.clone();
        for k in 0..self.n() {
            for a in 0..self.n() {
                if r.has(a, k) {
                    r.0.union_rows(a, k);
                }
            }
        }
        r
    }

    fn is_irreflexive(&self) -> bool {
        (0..self.n()).all(|a| !self.has(a, a))
    }

    fn is_acyclic(&self) -> bool {
        self.plus().is_irreflexive()
    }
}

/// The basic and derived relations of an execution, by their definitions.
struct Relations {
    po: Relation,
    mo: Relation,
    fr: Relation,
    hb: Relation,
    eco: Relation,
}

impl Execution {
    /// Whether the execution is consistent: all four axioms (no thin air, coherence,
    /// atomicity, SC) hold on the whole graph.
    ///
    /// Every relation is derived from scratch by its definition (see
    /// [module `axioms`](crate::axioms)), in time cubic in the number of events over 64: the
    /// reference the faster checks behind the candidate methods are tested against. An
    /// execution built only from offered choices is always consistent.
    pub fn is_consistent(&self) -> bool {
        let po = self.program_order();
        let rf = self.reads_from();
        if !po.clone().union(&rf).is_acyclic() {
            return false;
        }
        let relations = self.relations(po, rf);
        self.coherent(&relations)
            && self.atomic(&relations)
            && self.sequentially_consistent(&relations)
    }

    /// Whether two events of different threads on one location, at least one of them a write
    /// and one of them `plain`, are not ordered by happens-before either way: a data race, by
    /// the definitions (what a runtime's race check is tested against).
    pub(crate) fn has_data_race(&self, plain: impl Fn(EventId) -> bool) -> bool {
        let relations = self.relations(self.program_order(), self.reads_from());
        let hb = &relations.hb;
        let ev = &self.events;
        let conflicting = |a: EventId, b: EventId| {
            let (x, y) = (&ev[a], &ev[b]);
            x.loc.is_some()
                && x.loc == y.loc
                && x.thread.is_some()
                && y.thread.is_some()
                && x.thread != y.thread
                && (x.is_write() || y.is_write())
                && (plain(a) || plain(b))
        };
        (0..ev.len())
            .any(|a| (a + 1..ev.len()).any(|b| conflicting(a, b) && !hb.has(a, b) && !hb.has(b, a)))
    }

    fn program_order(&self) -> Relation {
        let mut po = Relation::empty(self.len());
        for thread in &self.threads {
            for (i, &a) in thread.po.iter().enumerate() {
                for &b in &thread.po[i + 1..] {
                    po.add(a, b);
                }
            }
        }
        po
    }

    fn reads_from(&self) -> Relation {
        let mut rf = Relation::empty(self.len());
        for (r, event) in self.events.iter().enumerate() {
            if let Some(w) = event.rf {
                rf.add(w, r);
            }
        }
        rf
    }

    fn relations(&self, po: Relation, rf: Relation) -> Relations {
        let n = self.len();
        let mut mo = Relation::empty(n);
        for stores in &self.mo {
            for (i, &a) in stores.iter().enumerate() {
                for &b in &stores[i + 1..] {
                    mo.add(a, b);
                }
            }
        }
        let fr = rf.inverse().then(&mo).filter(|a, b| a != b);
        let eco = rf.clone().union(&mo).union(&fr).plus();

        let ev = &self.events;
        let is =
            |keep: fn(&crate::event::Event) -> bool| Relation::identity(n, move |e| keep(&ev[e]));
        // rs = [W] ; (rf ; [RMW])*
        let rf_rmw = rf.then(&is(|e| e.kind == Kind::Rmw));
        let rs = is(|e| e.is_write()).then(&rf_rmw.plus().reflexive());
        // sw = [E⊒rel] ; ([F] ; po)? ; rs ; rf ; [R] ; (po ; [F])? ; [E⊒acq]
        let release_side = is(|e| e.is_release()).then(&is(|e| e.is_fence()).then(&po).reflexive());
        let acquire_side = po
            .then(&is(|e| e.is_fence()))
            .reflexive()
            .then(&is(|e| e.is_acquire()));
        let sw = release_side
            .then(&rs)
            .then(&rf)
            .then(&is(|e| e.is_read()))
            .then(&acquire_side);
        let mut base = po.clone().union(&sw);
        for (a, event) in ev.iter().enumerate() {
            if event.kind == Kind::Init {
                for b in (0..n).filter(|&b| ev[b].kind != Kind::Init) {
                    base.add(a, b);
                }
            }
        }
        for &(a, b) in &self.sync {
            base.add(a, b);
        }
        let hb = base.plus();
        Relations {
            po,
            mo,
            fr,
            hb,
            eco,
        }
    }

    /// Coherence: `hb ; eco?` is irreflexive.
    fn coherent(&self, r: &Relations) -> bool {
        r.hb.is_irreflexive() && r.hb.then(&r.eco).is_irreflexive()
    }

    /// Atomicity: every RMW reads its immediate `mo`-predecessor (see the module docs).
    fn atomic(&self, r: &Relations) -> bool {
        let fr_mo = r.fr.then(&r.mo);
        self.events
            .iter()
            .enumerate()
            .filter(|(_, e)| e.kind == Kind::Rmw)
            .all(|(u, e)| {
                let read = e.rf.expect("an RMW reads");
                !fr_mo.has(u, u) && r.mo.has(read, u)
            })
    }

    /// SC: `psc = psc_base ∪ psc_F` is acyclic.
    fn sequentially_consistent(&self, r: &Relations) -> bool {
        let n = self.len();
        let ev = &self.events;
        if !ev.iter().any(|e| e.is_seq_cst()) {
            return true;
        }
        let same_loc = |a: EventId, b: EventId| ev[a].loc.is_some() && ev[a].loc == ev[b].loc;
        let po_other_loc = r.po.filter(|a, b| !same_loc(a, b));
        let scb =
            r.po.clone()
                .union(&po_other_loc.then(&r.hb).then(&po_other_loc))
                .union(&r.hb.filter(same_loc))
                .union(&r.mo)
                .union(&r.fr);
        let e_sc = Relation::identity(n, |e| ev[e].is_seq_cst());
        let f_sc = Relation::identity(n, |e| ev[e].is_seq_cst() && ev[e].is_fence());
        let hb_opt = r.hb.reflexive();
        let left = e_sc.clone().union(&f_sc.then(&hb_opt));
        let right = e_sc.union(&hb_opt.then(&f_sc));
        let psc_base = left.then(&scb).then(&right);
        let psc_f = f_sc
            .then(&r.hb.clone().union(&r.hb.then(&r.eco).then(&r.hb)))
            .then(&f_sc);
        psc_base.union(&psc_f).is_acyclic()
    }
}
