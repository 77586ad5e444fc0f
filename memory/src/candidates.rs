//! The choices a thread has at its next access: which store a load or RMW reads, where a store
//! goes in modification order, whether a compare-exchange succeeds.
//!
//! A *candidate* is a choice that keeps the execution consistent. Each method tries every
//! well-formed choice on a copy of the execution and keeps those the consistency check of
//! [`crate::check`] accepts, so the lists are exact: nothing consistent is left out, nothing
//! inconsistent is offered. They come oldest first in modification order.
//!
//! # Extensibility: a choice always exists
//!
//! RC11 is *extensible*: from a consistent execution, a load or RMW can always read the
//! mo-latest store ([`Execution::latest`]) and a store can always go at the end of `mo`. Such an
//! event is `eco`-before nothing and happens before nothing, so it closes no `hb ; eco` cycle,
//! and it has no outgoing `scb` edge, so it closes no `psc` cycle. (The mo-latest store is never
//! already read by an RMW: that RMW would be a later store.) So on a consistent execution every
//! list is non-empty and its last entry is the mo-latest store / the end of `mo`. On an
//! inconsistent execution (built with choices that were not offered) the lists are empty.
//!
//! # The all-`SeqCst` shortcut
//!
//! While every event so far is `SeqCst` and so is the access asked about, the lists are cut
//! to the mo-latest store / the end of `mo` (unless
//! [`Execution::set_seq_cst_shortcut`] turned that off). The full lists are longer: a `SeqCst`
//! load by one thread, added after a `SeqCst` store by another, may still read the older value,
//! as if the load had run first. That execution is also reached by the interleaving that runs
//! the load first, so an explorer that tries every interleaving loses nothing by the cut, and
//! saves visiting each SC execution once per interleaving that reorders independent events.
//!
//! # Without `SeqCst` events: from views
//!
//! While the graph has no `SeqCst` event and was kept consistent event by event
//! (`Execution::push` checks each new event's coherence and atomicity), a non-`SeqCst`
//! access's choices follow from views alone, with no trial: `psc` is empty, and on a consistent
//! graph adding an event `e` creates no `hb ; eco` cycle but through `e` itself (no `hb` edge
//! between older events appears, and every `eco` path through `e` joins two older events that
//! `eco` already joined), so the new graph is consistent exactly when what happens before `e`
//! has seen no place of its location after the store `e` reads (a load or RMW) or after its
//! own place (a store). An acquire read adds the release row of the store it reads, whose view
//! is never past that store (the graph is coherent), so the thread's current view `v` decides:
//! a load or RMW may read the stores from place `v` on, a store may go after place `v` or
//! later (never between a store and its RMW reader).
//!
//! # With `SeqCst` events: views, where `psc` cannot change
//!
//! Views still decide a choice on a graph with `SeqCst` events, once it is known consistent
//! (the caller promised offered choices only, [`Execution::promise_offered_choices`]), for an
//! access `e` that is not `SeqCst` and that no `SeqCst` fence happens before (none happens
//! before the thread's next event). Such an `e` adds no `psc` edge: it is no end of one, and it
//! happens before nothing, so it could only start the `scb` (or `eco`) step of a chain from a
//! `SeqCst` fence `f` that happens before it, which there is none; between older events `hb`,
//! `mo`, `rb` and `eco` are what they were. So `psc` is the old one, acyclic, and consistency
//! is coherence and atomicity, which views decide as above. A fence that an acquire `e` comes
//! to happen after through the store `s` it reads changes nothing: `f` happens before `s`,
//! and each `scb` or `eco` step out of `e` (to a store after `s` in `mo`) is one out of `s`,
//! so `f`'s edge is there already. The trial on a copy stays for `SeqCst` accesses and for
//! accesses after a `SeqCst` fence, and agrees with this on every graph the tests build.
//!
//! # Compare-exchange
//!
//! A compare-exchange reads a store; if the value equals the expected one it is an RMW with the
//! success order, else a load with the failure order. [`Execution::cas_choices`] lists both
//! kinds of choice, each decided by the value of the store read.

use crate::bits;
use crate::event::Kind;
use crate::execution::Access;
use crate::{AccessKind, Execution, Loc, Order, StoreId, ThreadId, Val};

/// One way a compare-exchange can go: the store it reads, and whether that makes it succeed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CasChoice {
    /// The store read.
    pub from: StoreId,
    /// Whether its value is the expected one: the compare-exchange is then an RMW writing the
    /// new value right after `from`, else a load.
    pub succeeds: bool,
}

impl Execution {
    /// Which stores a load by `thread` of `loc` with `order` may read next: every store `s`
    /// such that adding the load reading `s` keeps the execution consistent, oldest first in
    /// modification order.
    ///
    /// Never empty on a consistent execution, and the last is always [`Self::latest`]. While
    /// [`Self::all_seq_cst`] holds and `order` is `SeqCst`, only the latest (see
    /// [module `candidates`](crate::candidates)).
    ///
    /// # Panics
    ///
    /// With the [`AccessError`](crate::AccessError) if the access is malformed (see
    /// [`Self::check_access`]).
    pub fn load_candidates(&self, thread: ThreadId, loc: Loc, order: Order) -> Vec<StoreId> {
        self.read_candidates(thread, loc, order, Kind::Load, |_| true)
    }

    /// Where in `loc`'s modification order a store by `thread` with `order` may go: each an
    /// index `i` meaning "right after the `i`-th store of mo" (0: right after the initial
    /// store) such that the execution stays consistent. Never between a store and the RMW that
    /// reads it, which would break the RMW's atomicity.
    ///
    /// Never empty on a consistent execution; the last is always the end of mo. While
    /// [`Self::all_seq_cst`] holds and `order` is `SeqCst`, only the end.
    ///
    /// # Panics
    ///
    /// With the [`AccessError`](crate::AccessError) if the access is malformed (see
    /// [`Self::check_access`]).
    pub fn store_placements(&self, thread: ThreadId, loc: Loc, order: Order) -> Vec<usize> {
        self.expect(self.check_access(thread, Some(loc), AccessKind::Store, order));
        let mo = &self.mo[loc as usize];
        if self.shortcut_applies(order) {
            return vec![mo.len() - 1];
        }
        if let Some(seen) = self.seen_by(thread, loc, order) {
            return (seen..mo.len())
                .filter(|&at| !self.read_by_rmw[mo[at]])
                .collect();
        }
        let (floor, _) = self.tried_from(thread, loc);
        let views = self.views_decide(thread, order);
        (floor..mo.len())
            // Between a store and its RMW reader is never consistent: skip the trial.
            .filter(|&at| !self.read_by_rmw[mo[at]])
            .filter(|&at| {
                if views || (self.offered_only && at == mo.len() - 1) {
                    return true;
                }
                let store = Access {
                    kind: Kind::Store,
                    loc: Some(loc),
                    order,
                    rf: None,
                    written: 0,
                    after: at,
                };
                self.keeps_consistent(thread, store)
            })
            .collect()
    }

    /// Which stores an RMW by `thread` of `loc` with `order` may read (it is then placed right
    /// after that store in mo): every choice that keeps the execution consistent, oldest first.
    /// A store another RMW already read is never a candidate (both cannot be right after it).
    ///
    /// Never empty on a consistent execution, and the last is always [`Self::latest`] (which
    /// no RMW has read: that RMW would be later in mo). While [`Self::all_seq_cst`] holds and
    /// `order` is `SeqCst`, only the latest.
    ///
    /// # Panics
    ///
    /// With the [`AccessError`](crate::AccessError) if the access is malformed (see
    /// [`Self::check_access`]).
    pub fn rmw_candidates(&self, thread: ThreadId, loc: Loc, order: Order) -> Vec<StoreId> {
        self.read_candidates(thread, loc, order, Kind::Rmw, |_| true)
    }

    /// The stores a read by `thread` of `loc` with `order` (a load, or with `kind` an RMW,
    /// which reads no store another RMW read) may read, among those `wanted` keeps, which it
    /// is asked about before any trial (a compare-exchange succeeds only on the expected
    /// value, and fails only on another): [`Self::load_candidates`] and
    /// [`Self::rmw_candidates`].
    fn read_candidates(
        &self,
        thread: ThreadId,
        loc: Loc,
        order: Order,
        kind: Kind,
        wanted: impl Fn(StoreId) -> bool,
    ) -> Vec<StoreId> {
        let rmw = kind == Kind::Rmw;
        let access = if rmw {
            AccessKind::Rmw
        } else {
            AccessKind::Load
        };
        self.expect(self.check_access(thread, Some(loc), access, order));
        let readable = |s: usize| !(rmw && self.read_by_rmw[s]) && wanted(StoreId::of(s));
        if self.shortcut_applies(order) {
            let latest = self.latest(loc);
            return Some(latest)
                .filter(|s| readable(s.index()))
                .into_iter()
                .collect();
        }
        if let Some(seen) = self.seen_by(thread, loc, order) {
            return (self.mo[loc as usize][seen..].iter().copied())
                .filter(|&s| readable(s))
                .map(StoreId::of)
                .collect();
        }
        let (floor, latest) = self.tried_from(thread, loc);
        let views = self.views_decide(thread, order);
        (self.mo[loc as usize][floor..].iter().copied())
            .filter(|&s| readable(s))
            .filter(|&s| {
                if s == latest || views {
                    return true;
                }
                if !rmw && self.offered_only && !order.is_seq_cst() {
                    return self.load_keeps_psc_acyclic(thread, loc, order, s);
                }
                // The value an RMW writes does not matter to consistency.
                let read = Access {
                    kind,
                    loc: Some(loc),
                    order,
                    rf: Some(s),
                    written: 0,
                    after: if rmw { self.mo_pos[s] } else { 0 },
                };
                self.keeps_consistent(thread, read)
            })
            .map(StoreId::of)
            .collect()
    }

    /// The ways a compare-exchange by `thread` of `loc` expecting `expected` may go, oldest
    /// store read first: each [`Self::rmw_candidates`] store (under `success`) whose value is
    /// `expected` succeeds, each [`Self::load_candidates`] store (under `failure`) whose value
    /// is not fails.
    ///
    /// Never empty on a consistent execution: the mo-latest store is one of the choices,
    /// succeeding or failing by its value.
    ///
    /// # Panics
    ///
    /// With the [`AccessError`](crate::AccessError) if either order is invalid for its kind of
    /// access (`failure` is a load's order) or the thread or location does not exist.
    pub fn cas_choices(
        &self,
        thread: ThreadId,
        loc: Loc,
        expected: Val,
        success: Order,
        failure: Order,
    ) -> Vec<CasChoice> {
        let succeed = self
            .read_candidates(thread, loc, success, Kind::Rmw, |s| {
                self.value(s) == expected
            })
            .into_iter()
            .map(|from| CasChoice {
                from,
                succeeds: true,
            });
        let fail = self
            .read_candidates(thread, loc, failure, Kind::Load, |s| {
                self.value(s) != expected
            })
            .into_iter()
            .map(|from| CasChoice {
                from,
                succeeds: false,
            });
        let mut choices: Vec<CasChoice> = succeed.chain(fail).collect();
        choices.sort_by_key(|c| self.mo_pos[c.from.index()]);
        choices
    }

    /// Adds the compare-exchange `choice` made (from [`Self::cas_choices`]): an RMW with
    /// `success` writing `new` right after `choice.from` if it succeeds, else a load with
    /// `failure`. Returns the value read.
    ///
    /// # Panics
    ///
    /// As [`Self::rmw`] or [`Self::load`].
    pub fn cas(
        &mut self,
        thread: ThreadId,
        loc: Loc,
        choice: CasChoice,
        new: Val,
        success: Order,
        failure: Order,
    ) -> Val {
        if choice.succeeds {
            self.rmw(thread, loc, success, choice.from, |_| new).0
        } else {
            self.load(thread, loc, failure, choice.from)
        }
    }

    /// Whether the all-`SeqCst` shortcut cuts the choices of an access with `order`.
    fn shortcut_applies(&self, order: Order) -> bool {
        self.shortcut && self.all_seq_cst && order.is_seq_cst()
    }

    /// Where `thread`'s current view of `loc` is, when an access with `order` is decided from
    /// views (no `SeqCst` event, the graph known consistent: see the module docs); `None` when
    /// it must be tried on a copy.
    fn seen_by(&self, thread: ThreadId, loc: Loc, order: Order) -> Option<usize> {
        (self.known_consistent && !order.is_seq_cst()).then(|| self.thread_view_at(thread, loc))
    }

    /// Whether views decide the choices of an access by `thread` with `order` on a graph with
    /// `SeqCst` events (see the module docs): the graph is promised consistent, the access is
    /// not `SeqCst`, and no `SeqCst` fence happens before the thread's next event.
    fn views_decide(&self, thread: ThreadId, order: Order) -> bool {
        self.offered_only && !order.is_seq_cst() && !self.seq_cst_fence_before_next(thread)
    }

    /// Whether a `SeqCst` fence happens before `thread`'s next event.
    fn seq_cst_fence_before_next(&self, thread: ThreadId) -> bool {
        self.seq_cst > 0 && bits::ones(&self.psc.fences).any(|f| self.in_horizon(thread, f))
    }

    /// Where the choices of an access by `thread` to `loc` that are tried on a copy begin,
    /// and the store offered without a trial (`usize::MAX`: none).
    ///
    /// Coherence alone rules out every place of `loc`'s modification order before the latest
    /// one that what happens before the access has seen (a store there, or the store a load
    /// there read): reading or writing before it closes an `hb ; eco` cycle, whatever `psc`
    /// says. And once the caller has promised offered choices only, the graph is consistent,
    /// so extensibility makes the mo-latest store (and the end of mo) a choice with no trial.
    fn tried_from(&self, thread: ThreadId, loc: Loc) -> (usize, usize) {
        let floor = self.thread_view_at(thread, loc);
        let latest = if self.offered_only {
            self.latest(loc).index()
        } else {
            usize::MAX
        };
        (floor, latest)
    }

    /// Whether a load by `thread` of `loc` with `order`, not `SeqCst`, reading store `s` from
    /// the thread's view on, keeps a graph promised consistent so, worked out without a copy:
    /// what [`Execution::keeps_consistent`] finds by adding it.
    ///
    /// Such a load is coherent: it reads no older store than the thread has seen, and the
    /// release row an acquire load adds has seen no newer store than `s` (the graph is
    /// coherent). Its only `psc` edges (module [`psc`](crate::psc)) run from the `SeqCst`
    /// fences that happen before it to the `SeqCst` events `scb`-after it (the stores after
    /// `s` in `mo`) and the fences that happen after one of those, or after what is
    /// `eco`-after it (those stores and their readers). So it closes a cycle exactly when one
    /// of those targets already reaches one of those fences.
    fn load_keeps_psc_acyclic(&self, thread: ThreadId, loc: Loc, order: Order, s: usize) -> bool {
        let words = bits::words_for(self.len());
        let mut fences = vec![0; words];
        for f in bits::ones(&self.psc.fences) {
            let acquired = order.is_acquire() && bits::contains(self.release.row(s), f);
            if acquired || self.in_horizon(thread, f) {
                bits::insert(&mut fences, f);
            }
        }
        let after = &self.mo[loc as usize][self.mo_pos[s] + 1..];
        if after.is_empty() || !fences.iter().any(|&w| w != 0) {
            return true;
        }
        let (succ, eco) = self.stores_after(loc, self.mo_pos[s], None);
        let targets = self.fence_targets(&succ, &eco);
        !self.psc_reaches(&targets, &fences)
    }

    /// Whether adding `access` by `thread` keeps the execution consistent: tried on a copy.
    ///
    /// On a graph promised consistent the copy knows: the new event was coherent and atomic
    /// (decided from views, as the module docs say) and `psc`, kept as it grows, has no cycle.
    /// Otherwise the whole copy is checked.
    fn keeps_consistent(&self, thread: ThreadId, access: Access) -> bool {
        let mut trial = self.clone();
        trial.push(thread, access);
        if self.offered_only {
            trial.coherent && trial.psc.acyclic
        } else {
            trial.consistent_by_views()
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::litmus::{self, reachable};
    use crate::Order::{AcqRel, Acquire, Relaxed, Release};
    use crate::{Execution, Loc, Order, ThreadId};

    /// The choices by trial on a copy, as when views cannot decide.
    fn by_trial(x: &Execution, thread: ThreadId, loc: Loc, order: Order) -> [Vec<usize>; 3] {
        let mut slow = x.clone();
        slow.known_consistent = false;
        let ids = |v: Vec<crate::StoreId>| v.into_iter().map(|s| s.index()).collect();
        [
            ids(slow.load_candidates(thread, loc, order.min_for_load())),
            slow.store_placements(thread, loc, order.min_for_store()),
            ids(slow.rmw_candidates(thread, loc, order)),
        ]
    }

    fn by_views(x: &Execution, thread: ThreadId, loc: Loc, order: Order) -> [Vec<usize>; 3] {
        let ids = |v: Vec<crate::StoreId>| v.into_iter().map(|s| s.index()).collect();
        [
            ids(x.load_candidates(thread, loc, order.min_for_load())),
            x.store_placements(thread, loc, order.min_for_store()),
            ids(x.rmw_candidates(thread, loc, order)),
        ]
    }

    impl Order {
        /// The order as a load may have it.
        fn min_for_load(self) -> Order {
            match self {
                Release => Relaxed,
                AcqRel => Acquire,
                other => other,
            }
        }

        /// The order as a store may have it.
        fn min_for_store(self) -> Order {
            match self {
                Acquire => Relaxed,
                AcqRel => Release,
                other => other,
            }
        }
    }

    /// The classic tests (message passing, store buffering, 2+2W, IRIW) with each store order
    /// of `stores` and load order of `loads`.
    fn classic(stores: [Order; 2], loads: [Order; 2]) -> Vec<litmus::Program> {
        let mut programs = Vec::new();
        for a in stores {
            for b in loads {
                programs.push(litmus::mp(a, a, b, b));
                programs.push(litmus::sb(a, b, a, b));
                programs.push(litmus::two_plus_two_w(a, a, a, a));
                programs.push(litmus::iriw(a, a, b, b, b, b));
            }
        }
        programs
    }

    /// On every state of the classic tests without `SeqCst`, with every order, the choices
    /// decided from views are those the trial on a copy finds.
    #[test]
    fn views_decide_the_choices_the_trial_finds() {
        let orders = [Relaxed, Release, Acquire, AcqRel];
        let mut programs = classic([Relaxed, Release], [Relaxed, Acquire]);
        programs.push(litmus::mp_fenced(Some(Release), Some(Acquire)));
        let compared = on_every_access(&programs, &orders, |x, thread, loc, order| {
            assert!(x.known_consistent, "{x:?}");
            assert_eq!(
                by_views(x, thread, loc, order),
                by_trial(x, thread, loc, order),
                "T{thread} x{loc} {order:?} on {x:?}"
            );
        });
        assert!(compared > 1000, "{compared}");
    }

    /// Calls `check` on every state the programs reach, for every thread, location and order
    /// of a next access there; how many times.
    fn on_every_access(
        programs: &[litmus::Program],
        orders: &[Order],
        mut check: impl FnMut(&Execution, ThreadId, Loc, Order),
    ) -> usize {
        let mut checked = 0;
        for p in programs {
            for (x, _) in reachable(p) {
                for thread in 0..x.threads() {
                    for loc in 0..x.locations() as Loc {
                        for &order in orders {
                            check(&x, thread, loc, order);
                            checked += 1;
                        }
                    }
                }
            }
        }
        checked
    }

    /// Every choice tried on a copy, none left out below a floor: the lists by definition.
    fn every_trial(x: &Execution, thread: ThreadId, loc: Loc, order: Order) -> [Vec<usize>; 3] {
        use crate::event::Kind;
        use crate::execution::Access;
        let access = |kind, order, rf, after| Access {
            kind,
            loc: Some(loc),
            order,
            rf,
            written: 0,
            after,
        };
        let mo = &x.mo[loc as usize];
        let loads = (mo.iter().copied())
            .filter(|&s| {
                x.keeps_consistent(thread, access(Kind::Load, order.min_for_load(), Some(s), 0))
            })
            .collect();
        let stores = (0..mo.len())
            .filter(|&at| !x.read_by_rmw[mo[at]])
            .filter(|&at| {
                x.keeps_consistent(thread, access(Kind::Store, order.min_for_store(), None, at))
            })
            .collect();
        let rmws = (mo.iter().copied())
            .filter(|&s| !x.read_by_rmw[s])
            .filter(|&s| x.keeps_consistent(thread, access(Kind::Rmw, order, Some(s), x.mo_pos[s])))
            .collect();
        [loads, stores, rmws]
    }

    /// A `SeqCst` fence that reaches a reader only through what its acquire load reads (views
    /// decide that load's choices: the fence's `psc` edges go through the store read), with
    /// `SeqCst` accesses that the reader's later relaxed accesses (tried, being after the
    /// fence) can order.
    ///
    /// ```text
    /// T0: x := 1; fence(SeqCst); y := 1 (Release)
    /// T1: r0 := y (Acquire); r1 := x; x := 2
    /// T2: y := 2 (SeqCst); r0 := x (SeqCst)
    /// ```
    fn fence_released_to_an_acquire_read() -> litmus::Program {
        use crate::litmus::Instr::{Fence, Load, Store};
        use crate::Order::SeqCst;
        let (x, y) = (0, 1);
        litmus::Program {
            locations: vec![0, 0],
            threads: vec![
                vec![
                    Store {
                        loc: x,
                        value: 1,
                        order: Relaxed,
                    },
                    Fence(SeqCst),
                    Store {
                        loc: y,
                        value: 1,
                        order: Release,
                    },
                ],
                vec![
                    Load {
                        loc: y,
                        order: Acquire,
                        reg: 0,
                    },
                    Load {
                        loc: x,
                        order: Relaxed,
                        reg: 1,
                    },
                    Store {
                        loc: x,
                        value: 2,
                        order: Relaxed,
                    },
                ],
                vec![
                    Store {
                        loc: y,
                        value: 2,
                        order: SeqCst,
                    },
                    Load {
                        loc: x,
                        order: SeqCst,
                        reg: 0,
                    },
                ],
            ],
        }
    }

    /// A thread's view of a location, read without building the set of what happens before
    /// its next event, is that set's view, on every state the classic tests reach.
    #[test]
    fn a_view_read_per_thread_is_that_of_the_whole_set() {
        let mut programs = classic([Relaxed, Release], [Relaxed, Acquire]);
        programs.push(litmus::mp_fenced(Some(Release), Some(Acquire)));
        programs.push(fence_released_to_an_acquire_read());
        let compared = on_every_access(&programs, &[Relaxed], |x, thread, loc, _| {
            assert_eq!(
                x.thread_view_at(thread, loc),
                x.view_at(&x.horizon(thread), loc),
                "T{thread} x{loc} on {x:?}"
            );
        });
        assert!(compared > 1000, "{compared}");
    }

    /// On every state of the classic tests with `SeqCst` mixed in (where every choice is
    /// tried on a copy), the promise of offered choices and the coherence floor change no
    /// list: the mo-latest store offered untried is one the trial accepts, and no choice below
    /// the floor is one it would.
    #[test]
    fn the_promise_and_the_floor_keep_every_choice_the_trial_finds() {
        use crate::Order::SeqCst;
        let orders = [Relaxed, Release, Acquire, AcqRel, SeqCst];
        let mut programs = classic([Release, SeqCst], [Acquire, SeqCst]);
        programs.push(litmus::mp_fenced(Some(SeqCst), Some(SeqCst)));
        programs.push(litmus::sb_fenced(Some(SeqCst), Some(SeqCst)));
        programs.push(litmus::sb_fenced(Some(SeqCst), None));
        programs.push(litmus::iriw_fenced(Some(SeqCst), Some(SeqCst)));
        programs.push(fence_released_to_an_acquire_read());
        let compared = on_every_access(&programs, &orders, |x, thread, loc, order| {
            let mut promised = x.clone();
            promised.promise_offered_choices(true);
            // The all-`SeqCst` cut is another matter (its own tests).
            promised.set_seq_cst_shortcut(false);
            assert_eq!(
                by_views(&promised, thread, loc, order),
                every_trial(x, thread, loc, order),
                "T{thread} x{loc} {order:?} on {x:?}"
            );
        });
        assert!(compared > 1000, "{compared}");
    }
}
