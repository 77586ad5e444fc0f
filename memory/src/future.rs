//! What of an execution decides its future: a key equal for two executions exactly when every
//! continuation has the same choices in both, so that an explorer can merge them.
//!
//! An explorer that merges equal states needs, for the memory, something coarser than the
//! graph: a spin loop adds a load to the graph at every turn, and the graph never repeats, but
//! a turn that read nothing new leaves the future as it was. [`Execution::future_key`] is that
//! something.
//!
//! # Views
//!
//! The *view* of a set `S` of events is, per location, the latest place in modification order
//! that `S` has seen: the place of each store of `S`, and of the store each read of `S` read.
//! Four kinds of view decide a future without `SeqCst` events:
//!
//! * a thread's **current view**, that of what happens before its next event (its own events,
//!   what they synchronized with, the initial stores, [`Execution::synchronize`]);
//! * its **acquired view**, that of what its next acquire fence will synchronize with (the
//!   release rows of the stores its relaxed reads read), where it is above the current view:
//!   the fence joins it into the current view, which only grows, so the rest adds nothing;
//! * its **release-fence view**, that of what happens before its last release fence (which its
//!   later stores carry as a release head);
//! * each store's **release view**, that of what an acquire reader of it synchronizes with.
//!
//! The claim: on an execution with no `SeqCst` event that a thread has not yet seen (below),
//! the choices of every next event depend on the stores (per location, in modification order:
//! value, whether an RMW read it, release view), the views of the threads, and nothing else.
//!
//! * *Coherence.* A new event `e` of thread `t` closes an `hb ; eco` cycle exactly when
//!   something that happens before it is `eco`-after it: a load of the store at place `p`
//!   when some store after `p` is in `e`'s happens-before set, or some read of a store after
//!   `p` is. That is `p <` the set's view at the location. An acquire load adds the release
//!   row of the store it reads, whose view at the location is at most that store's place (the
//!   graph is coherent). A store placed after `p` likewise needs the view at most `p`. Inserting
//!   `e` adds no `eco` edge between older events, and nothing happens after `e` yet.
//! * *Happens-before as it grows.* The set `e` happens after is the union of its thread's
//!   current set, the release row of an acquire read's store, the acquired set at an acquire
//!   fence; views of unions are joins of views. A store's release row is its own current set
//!   (a release store), its thread's release-fence set, and the release row of the store an
//!   RMW read. So every view that later events need is a join of the views listed above.
//! * *Atomicity.* An RMW must read a store no RMW read, and no store may go between a store
//!   and its RMW reader: the flag per store.
//! * *SC.* A `SeqCst` event `a` that happens before the next event of every thread that may
//!   still act (a *settled* one, such as the serial part's before the threads start) is in no
//!   `psc` cycle a later event could close: a later `c` with `c psc a` needs `c` before `a` in
//!   `hb`, `mo` or `fr`, each of which coherence then forbids, and `[Fsc]; hb; eco; hb` paths
//!   into `a` likewise close an `hb ; eco` cycle. Unsettled `SeqCst` events are in the key as
//!   the whole graph: with any of them, the key is [the graph itself](Execution::graph_key),
//!   but for *repeated turns*: a block of reads and fences of a thread that repeats the block
//!   right before it, event by event, each read reading the same store, with nothing
//!   synchronized into it: what a spin loop's turn that saw nothing new adds. A single load
//!   (or fence) repeated changes no future: it reads no newer store than the one before (the
//!   same views and `fr` edges, the same release row acquired, so the same happens-before for
//!   what follows), no event reads from it, and it closes no `psc` cycle the one before does
//!   not close (`Execution::same_read` says why). A longer turn with no `SeqCst` event keeps
//!   the future too. One with `SeqCst` events can order more (a `SeqCst` load after the first
//!   turn's fence that still reads the older store puts another thread's newer `SeqCst` store
//!   after that fence), so the folded key allows a little more than the graph: but only
//!   executions of the program, the graph without the later turn, and never fewer. Which turn
//!   the explorer keeps does not change the outcomes: a turn that read nothing new and wrote
//!   nothing can be taken out of any consistent execution, which stays consistent with the
//!   same outcome (GenMC's spin-assume argument). So a spin loop's turn that read what the
//!   last one read leaves the key as it was, whatever orderings it mixes; other turns (an RMW
//!   and its undoing) still grow it, but for the views key, which leaves out a turn of
//!   read-modify-writes that puts back what it found (the module `turns`).
//!   `fgvt-sync`'s litmus tests check the outcomes against the axioms on waiting loops of every
//!   order.
//!
//! Two things are left out because nothing later can tell them apart:
//!
//! * *Stores below every live thread's view.* No load can read them and no store can go
//!   before them any more: only the stores from the lowest such view on are in the key, their
//!   places counted from it, and views below it count as it. (With no live thread, the latest
//!   store alone.) A spin loop's turns that read older stores while another thread stored
//!   again leave the key as it was once every live thread has moved past them.
//! * *Threads that will not act again.* Their views decide nothing: a thread joined by another
//!   hands over at most the latest store of each location, which every store's writer saw.
//!
//! Places in modification order are where stores are *now*: a store inserted before them later
//! moves them, in every execution alike. Locations, values and stores are named by the caller
//! ([`Naming`]): a runtime numbers locations as they are created, in an order that depends on
//! the interleaving, and pointer values differ between runs; names must not.
//!
//! `tests/it/future.rs` runs random programs merging states by this key and checks that the
//! outcomes are still exactly those of the axioms, and that equal keys offer equal choices.

use crate::bits;
use crate::event::{EventId, Kind};
use crate::{Execution, Loc, StoreId, ThreadId, Val};

/// The longest block of events [`Execution::fold_repeats`] looks for: a spin loop's turn (a
/// seqlock reader's is four or five events).
const MAX_BLOCK: usize = 16;

/// How the caller names what a future key must not depend on.
pub trait Naming {
    /// A name for `loc` that is the same whatever order locations were created in.
    fn location(&self, loc: Loc) -> u64;
    /// `value`, stored at `loc`, as the key sees it (an address by the identity of what it
    /// points to, say).
    fn value(&self, loc: Loc, value: Val) -> u64;
    /// What else of `store` the caller keeps apart (say, the source line that wrote it, which
    /// a report quotes); 0 for nothing.
    fn store(&self, store: StoreId) -> u64;
}

/// Tags that keep the parts of a key apart.
const VIEWS: u64 = 0x7669_6577;
const GRAPH: u64 = 0x6772_6170;
const NO_FENCE: u64 = u64::MAX;

impl Execution {
    /// The key of the execution's future (see [module `future`](crate::future)): equal for two
    /// executions (with the same threads, named alike) when every continuation of one has the
    /// same choices as in the other. `live` says which threads may still act: only their next
    /// events decide which `SeqCst` events are settled.
    pub fn future_key(&self, naming: &impl Naming, live: impl Fn(ThreadId) -> bool) -> Vec<u64> {
        self.future_key_and_carriers(naming, &live, false, &[]).0
    }

    /// The future key, and with `carriers` the sets that carry happens-before to later events,
    /// in the order the key lists them (see [`crate::plain`]): each kept store's release row,
    /// then each live thread's current, acquired and release-fence sets. `None` for the sets
    /// when the key is the whole graph. `plain` are the plain accesses the caller tracks: no
    /// turn around one is left out ([module `turns`](crate::turns)).
    pub(crate) fn future_key_and_carriers(
        &self,
        naming: &impl Naming,
        live: &impl Fn(ThreadId) -> bool,
        carriers: bool,
        plain: &[crate::PlainAt],
    ) -> (Vec<u64>, Option<Vec<Vec<u64>>>) {
        if self.has_unsettled_seq_cst(live) {
            return (self.graph_key(naming), None);
        }
        let mut sets = Vec::new();
        let live: Vec<ThreadId> = (0..self.threads.len()).filter(|&t| live(t)).collect();
        // A retry loop's turns that put back what they found are left out of modification order,
        // and every view that saw one of their stores sees the kept store it stands for.
        let left = self.left_out_turns(naming, plain);
        let mut places = self.places();
        if !left.is_empty() {
            for (loc, place) in places.iter_mut().flatten() {
                *place = left.place(*loc, *place);
            }
        }
        let horizons: Vec<Vec<u64>> = live.iter().map(|&t| self.horizon(t)).collect();
        let current: Vec<Vec<usize>> = horizons.iter().map(|h| self.view(h, &places)).collect();
        // Below every live thread's view a store can never be read again, nor a store go
        // before it: it is gone from the future. With no live thread, only the latest stays.
        let floor: Vec<usize> = (0..self.mo.len())
            .map(|l| {
                let latest = left.kept(l as Loc, self.mo[l].len()) - 1;
                current.iter().map(|v| v[l]).min().unwrap_or(latest)
            })
            .collect();
        let mut locations: Vec<(u64, Loc)> = (0..self.mo.len() as Loc)
            .map(|l| (naming.location(l), l))
            .collect();
        locations.sort_unstable();
        // The locations where `view` is above the floor, after their count: written in place,
        // the count filled in last (this runs for every store and thread of every key).
        let encode = |key: &mut Vec<u64>, view: &[usize]| {
            let count_at = key.len();
            key.push(0);
            for &(name, loc) in &locations {
                let place = view[loc as usize].max(floor[loc as usize]) - floor[loc as usize];
                if place > 0 {
                    key.extend([name, place as u64]);
                }
            }
            key[count_at] = ((key.len() - count_at - 1) / 2) as u64;
        };
        let mut scratch = Vec::new();
        // Sized for what follows (each view at most two words a location, after its count),
        // so that the key, built for every step, is allocated once.
        let kept: usize = (0..self.mo.len())
            .map(|l| left.kept(l as Loc, self.mo[l].len()) - floor[l])
            .sum();
        let view_words = 1 + 2 * self.mo.len();
        let mut key = Vec::with_capacity(
            3 + 2 * self.mo.len() + kept * (3 + view_words) + live.len() * (1 + 3 * view_words),
        );
        key.extend([
            VIEWS,
            u64::from(self.all_seq_cst),
            self.threads.len() as u64,
        ]);
        if carriers {
            sets.reserve_exact(kept + 3 * live.len());
        }
        for &(name, loc) in &locations {
            let mo = &self.mo[loc as usize];
            let (from, kept) = (floor[loc as usize], left.kept(loc, mo.len()));
            key.extend([name, (kept - from) as u64]);
            for place in from..kept {
                let (at, flag_at) = left.store_at(loc, place);
                let w = mo[at];
                key.push(naming.value(loc, self.events[w].written));
                key.push(naming.store(StoreId::of(w)));
                key.push(u64::from(self.read_by_rmw[mo[flag_at]]));
                self.view_into(self.release.row(w), &places, &mut scratch);
                encode(&mut key, &scratch);
                if carriers {
                    sets.push(self.release.row(w).to_vec());
                }
            }
        }
        for (i, &t) in live.iter().enumerate() {
            key.push(t as u64);
            encode(&mut key, &current[i]);
            // What the thread already has acquires nothing: only what its next acquire fence
            // would add to its current view counts (a retry loop's read of its own turn's
            // release store acquires its own past).
            self.view_into(self.acquired.row(t), &places, &mut scratch);
            for (acquired, &now) in scratch.iter_mut().zip(&current[i]) {
                if *acquired <= now {
                    *acquired = 0;
                }
            }
            encode(&mut key, &scratch);
            let fence = crate::plain::release_fence_set(self, &self.threads[t]);
            match &fence {
                Some(set) => {
                    self.view_into(set, &places, &mut scratch);
                    encode(&mut key, &scratch);
                }
                None => key.push(NO_FENCE),
            }
            if carriers {
                sets.push(horizons[i].clone());
                let mut acquired = self.acquired.row(t).to_vec();
                for (a, &h) in acquired.iter_mut().zip(&horizons[i]) {
                    *a &= !h;
                }
                sets.push(acquired);
                sets.push(fence.unwrap_or_default());
            }
        }
        (key, Some(sets))
    }

    /// The execution as a graph, every event named by its thread and place in program order
    /// and every location and value as `naming` says: a key that merges only equal graphs, but
    /// for *repeated turns*, which it leaves out: a block of reads and fences that repeats the
    /// block right before it in its thread, each read reading the same store, with nothing
    /// synchronized into it ([`Execution::fold_repeats`]). So a spin loop's turns that read
    /// what the last one read do not change it (the argument is in the [module docs](self)).
    pub fn graph_key(&self, naming: &impl Naming) -> Vec<u64> {
        self.graph_key_with(naming, &[]).0
    }

    /// [`Execution::graph_key`], where the plain accesses at `plain` keep the event after them
    /// (a repeated one then happens before what they do not), with each thread's events
    /// renamed by their place among the kept ones: for each thread, the place each of its
    /// events takes in the key (a left-out one: that of the event it repeats).
    pub(crate) fn graph_key_with(
        &self,
        naming: &impl Naming,
        plain: &[crate::PlainAt],
    ) -> (Vec<u64>, Vec<Vec<usize>>) {
        // The events something was synchronized into, which repeat nothing: found once for
        // every thread's fold rather than looked for in `sync` at every comparison.
        let mut synced = vec![false; self.events.len()];
        for &(_, into) in &self.sync {
            synced[into] = true;
        }
        let (renamed, kept): (Vec<Vec<usize>>, Vec<Vec<bool>>) = (0..self.threads.len())
            .map(|t| self.fold_repeats(t, plain, &synced))
            .unzip();
        let kept = |t: ThreadId, i: usize| kept[t][i];
        let name = |e: EventId| -> u64 {
            let event = &self.events[e];
            match event.thread {
                None => naming.location(event.loc.expect("an initial store has a location")),
                Some(t) => (1 << 63) | ((t as u64) << 32) | renamed[t][event.index] as u64,
            }
        };
        let mut key = vec![
            GRAPH,
            u64::from(self.all_seq_cst),
            self.threads.len() as u64,
        ];
        let mut locations: Vec<(u64, Loc)> = (0..self.mo.len() as Loc)
            .map(|l| (naming.location(l), l))
            .collect();
        locations.sort_unstable();
        for &(loc_name, loc) in &locations {
            let stores = &self.mo[loc as usize];
            key.extend([loc_name, stores.len() as u64]);
            for &w in stores {
                key.extend([name(w), naming.store(StoreId::of(w))]);
            }
            key.push(naming.value(loc, self.events[stores[0]].written));
        }
        for (t, thread) in self.threads.iter().enumerate() {
            key.push(renamed[t].last().map_or(0, |&last| last + 1) as u64);
            for (i, &e) in thread.po.iter().enumerate() {
                if !kept(t, i) {
                    continue;
                }
                let event = &self.events[e];
                let loc = event.loc;
                let value = |v: Val| loc.map_or(0, |l| naming.value(l, v));
                key.extend([
                    event.kind as u64 | (event.order as u64) << 8,
                    loc.map_or(u64::MAX, |l| naming.location(l)),
                    value(event.read),
                    value(event.written),
                    event.rf.map_or(u64::MAX, name),
                ]);
            }
        }
        let mut sync: Vec<(u64, u64)> =
            self.sync.iter().map(|&(a, b)| (name(a), name(b))).collect();
        for (t, thread) in self.threads.iter().enumerate() {
            sync.extend(thread.pending.iter().map(|&a| (name(a), t as u64)));
        }
        sync.sort_unstable();
        key.push(sync.len() as u64);
        key.extend(sync.into_iter().flat_map(|(a, b)| [a, b]));
        (key, renamed)
    }

    /// Thread `t`'s events folded where a block of them repeats the block right before it:
    /// per event, its place among the kept ones (a left-out event takes that of the event it
    /// repeats), and whether it is kept.
    ///
    /// A block repeats another when both are reads and fences only, event by event of the same
    /// kind, order and location, each read reading the same store, with nothing synchronized
    /// into the later block and no plain access made within it (`plain`): what a spin loop's
    /// turn adds when it sees nothing new, whatever its orderings (a failed compare-exchange is
    /// a load). Blocks are found greedily as events are added, up to [`MAX_BLOCK`] events long,
    /// so that the same graph always folds alike.
    ///
    /// A block of one load (or fence) loses nothing of the future ([`Execution::same_read`]).
    /// A longer block keeps the future exactly when none of its events is `SeqCst` (then no
    /// `SeqCst` fence stands between two of them and they are in no `psc` edge the earlier
    /// block's events are not in). With `SeqCst` events the later turn can still order a
    /// `SeqCst` store of another thread after the earlier turn's events where one turn alone
    /// would not (a load after a `SeqCst` fence that reads the older store): the folded graph
    /// then allows a little more, never less, and every execution it allows is one of the
    /// program (the later turn, which reads nothing new and writes nothing, removed). That is
    /// GenMC's spin-assume argument: a turn of a waiting loop that saw nothing new can be taken
    /// away without changing any outcome.
    fn fold_repeats(
        &self,
        t: ThreadId,
        plain: &[crate::PlainAt],
        synced: &[bool],
    ) -> (Vec<usize>, Vec<bool>) {
        let po = &self.threads[t].po;
        let mut kept = vec![true; po.len()];
        // Per event left out, the earlier event it repeats (kept when it was left out).
        let mut into = vec![0; po.len()];
        // The kept events, in order.
        let mut slots: Vec<usize> = Vec::with_capacity(po.len());
        for i in 0..po.len() {
            slots.push(i);
            let blocks = (1..=MAX_BLOCK.min(slots.len() / 2)).find(|&k| {
                let n = slots.len();
                (0..k).all(|j| {
                    self.same_read(t, slots[n - 2 * k + j], slots[n - k + j], plain, synced)
                })
            });
            if let Some(k) = blocks {
                let n = slots.len();
                for j in 0..k {
                    kept[slots[n - k + j]] = false;
                    into[slots[n - k + j]] = slots[n - 2 * k + j];
                }
                slots.truncate(n - k);
            }
        }
        // A kept event's place is where it stands among the kept ones (a fold only ever
        // removes the last ones); a left-out event takes the place of the one it repeats,
        // which is earlier, so already placed (through its own, if it was left out later).
        let mut places = vec![0; po.len()];
        for (place, &i) in slots.iter().enumerate() {
            places[i] = place;
        }
        for i in 0..po.len() {
            if !kept[i] {
                places[i] = places[into[i]];
            }
        }
        (places, kept)
    }

    /// Whether thread `t`'s event `later` repeats its event `earlier` (see
    /// [`Execution::fold_repeats`]): both loads or both fences, of the same order and location,
    /// reading the same store, with nothing synchronized into `later` and no plain access made
    /// right before it.
    ///
    /// A load right after the load it repeats loses nothing of the future: it reads no newer
    /// store (the same views, the same `fr` edges, the same release row acquired, so the same
    /// happens-before for what comes after), and nothing reads from it. Nor does it close any
    /// `psc` cycle its predecessor `p` does not: if it is not `SeqCst`, an `SeqCst` fence
    /// happens before it exactly when it happens before `p`, nothing standing between them,
    /// and it is in no edge `p` is not in with the same ends. If it is, its `psc` successors,
    /// now and later, are `p`'s (the same stores after the one read, the same fences before,
    /// the same next event on another location in its thread) and its predecessors are `p`'s
    /// and `p`, so a cycle through it, `x → l → y ⇝ x`, makes `x → p → y ⇝ x` (or
    /// `p → y ⇝ p`) without it (module [`psc`](crate::psc) lists the edges). A fence right
    /// after the same fence likewise acquires nothing new and orders nothing the first does not.
    fn same_read(
        &self,
        t: ThreadId,
        earlier: usize,
        later: usize,
        plain: &[crate::PlainAt],
        synced: &[bool],
    ) -> bool {
        let po = &self.threads[t].po;
        let (e, before) = (po[later], po[earlier]);
        let (event, prev) = (&self.events[e], &self.events[before]);
        matches!(event.kind, Kind::Load | Kind::Fence)
            && event.kind == prev.kind
            && event.order == prev.order
            && event.loc == prev.loc
            && event.rf == prev.rf
            && !synced[e]
            && !plain.iter().any(|at| at.thread == t && at.events == later)
    }

    /// The set of events that happen before `thread`'s next event: the initial stores, its
    /// last event and what happens before it, and what [`Execution::synchronize`] handed it.
    pub(crate) fn horizon(&self, thread: ThreadId) -> Vec<u64> {
        let mut set = self.inits.clone();
        set.resize(bits::words_for(self.len()).max(set.len()), 0);
        let t = &self.threads[thread];
        for &e in t.po.last().into_iter().chain(&t.pending) {
            bits::union_into(&mut set, self.hb.row(e));
            bits::insert(&mut set, e);
        }
        set
    }

    /// Whether event `x` is in [`Execution::horizon`]`(thread)`, without making the set (the
    /// checks for one event or one location, made at every access, allocated it each time).
    pub(crate) fn in_horizon(&self, thread: ThreadId, x: EventId) -> bool {
        let t = &self.threads[thread];
        bits::contains(&self.inits, x)
            || (t.po.last().into_iter().chain(&t.pending)).any(|&e| e == x || self.hb.get(e, x))
    }

    /// [`Execution::view_at`] of [`Execution::horizon`]`(thread)`, without making the set.
    pub(crate) fn thread_view_at(&self, thread: ThreadId, loc: Loc) -> usize {
        self.on_loc[loc as usize]
            .iter()
            .copied()
            .filter(|&x| self.in_horizon(thread, x))
            .map(|x| self.view_place(x))
            .max()
            .unwrap_or(0)
    }

    /// Whether some `SeqCst` event of a thread is not yet known (in happens-before) to the
    /// next event of every live thread.
    pub(crate) fn has_unsettled_seq_cst(&self, live: &impl Fn(ThreadId) -> bool) -> bool {
        if self.seq_cst == 0 {
            return false;
        }
        let mut settled: Option<Vec<u64>> = None;
        for t in (0..self.threads.len()).filter(|&t| live(t)) {
            let horizon = self.horizon(t);
            settled = Some(match settled {
                None => horizon,
                Some(mut s) => {
                    for (a, b) in s.iter_mut().zip(&horizon) {
                        *a &= b;
                    }
                    s
                }
            });
        }
        let settled = settled.unwrap_or_else(|| vec![u64::MAX; bits::words_for(self.len())]);
        self.events
            .iter()
            .enumerate()
            .any(|(e, event)| event.is_seq_cst() && !bits::contains(&settled, e))
    }

    /// Per event, the place in modification order it has seen at its location: its own place
    /// for a store or RMW, that of the store it read for a load.
    fn places(&self) -> Vec<Option<(Loc, usize)>> {
        self.events
            .iter()
            .enumerate()
            .map(|(e, event)| {
                let loc = event.loc?;
                Some(match (event.kind, event.rf) {
                    (Kind::Load, Some(s)) => (loc, self.mo_pos[s]),
                    _ => (loc, self.mo_pos[e]),
                })
            })
            .collect()
    }

    /// The view of `set` (see the module docs): per location, the latest place in
    /// modification order its events have seen (0, the initial store, if none).
    fn view(&self, set: &[u64], places: &[Option<(Loc, usize)>]) -> Vec<usize> {
        let mut latest = Vec::new();
        self.view_into(set, places, &mut latest);
        latest
    }

    /// [`Execution::view`] into `latest`, whose allocation it reuses.
    fn view_into(&self, set: &[u64], places: &[Option<(Loc, usize)>], latest: &mut Vec<usize>) {
        latest.clear();
        latest.resize(self.mo.len(), 0);
        for e in bits::ones(set).filter(|&e| e < places.len()) {
            if let Some((loc, place)) = places[e] {
                latest[loc as usize] = latest[loc as usize].max(place);
            }
        }
    }
}

/// Names by number: locations by their index, values as they are, stores by nothing. For
/// executions whose locations are created in one fixed order (litmus programs).
#[derive(Clone, Copy, Debug, Default)]
pub struct Numbered;

impl Naming for Numbered {
    fn location(&self, loc: Loc) -> u64 {
        u64::from(loc)
    }

    fn value(&self, _loc: Loc, value: Val) -> u64 {
        value
    }

    fn store(&self, _store: StoreId) -> u64 {
        0
    }
}
