//! Retry turns that put back what they found: the turns a future key leaves out of modification
//! order, so that a retry loop whose failed turns store still comes back to its state.
//!
//! A spin loop's turn that only reads is folded by [`Execution::graph_key`] and leaves the
//! views key ([`Execution::future_key`]) as it was. A turn that *writes* is another matter:
//! a test-and-set lock's `swap(true)` that finds the lock taken stores `true` again, and a
//! reader-writer lock's `read()` that finds a writer adds a reader with one read-modify-write
//! and takes it back with another. Every such turn adds stores to the location's modification
//! order, the key never repeats, and the explorer follows the loop to its step limit.
//!
//! # Which turns are left out
//!
//! A *round* is the last events of one or more threads (read-modify-writes, loads and fences,
//! none `SeqCst`), whose stores at a location lie together in its modification order: one
//! thread's turn, or the turns of threads that spin on one word at once, interleaved. A round
//! is left out when it *repeats* the round right before it and nothing outside it saw it:
//!
//! * store by store, the same thread, kind, order, value read and written, and source line
//!   ([`Naming::store`]); per thread, its part of the round repeats its part of the round
//!   before, event by event;
//! * each read reads the corresponding store of the later round where the earlier one read a
//!   store of its own round; where the earlier one read the store right before its round's
//!   stores at the location, the later one reads the store right before its own (the chain of
//!   a retry loop's read-modify-writes, each turn reading what the last one left); otherwise
//!   the same store;
//! * per location, the later round's stores come right after the earlier round's in
//!   modification order;
//! * no event outside the later round reads one of its stores, nothing is synchronized into
//!   or out of it, and no plain access is made within either round.
//!
//! Then the round before is compared with the one before it, and so on, so a loop that turned
//! ten times keeps its first turn only. Only the threads' *last* events are looked at: a turn
//! a thread went on from stays (see below). Rounds that do not repeat are not left out: two
//! threads whose turns interleave differently every time (two readers of a reader-writer lock
//! that each add and take back a count while a writer holds it) still grow the key.
//!
//! # Why the outcomes stay the same
//!
//! Let `S₂` be an execution whose threads end with the later round `T₂`, and `S₁` the same
//! without `T₂`. `S₁` is an execution too: no other event read `T₂` or was synchronized by it,
//! so taking it out leaves every other event as it was (a store of another thread placed after
//! `T₂` stands after `T₁`). The key of `S₂` lists `T₁`'s stores where `T₂`'s stand: the places
//! of `T₂`'s stores, in every view, are those of the corresponding stores of `T₁` (the places
//! above them move down), and each kept store shows the flag "read by a read-modify-write" of
//! the last store of the run left out after it (so `T₁`'s last store counts as unread, as in
//! `S₁`). Both have the same outcomes:
//!
//! * *`S₂`'s are `S₁`'s.* `T₂` is a round its threads can take from `S₁`: each is at the same
//!   point of its loop (the caller's fingerprint says so), and `T₂`'s reads read what `T₁`
//!   left, the stores they see newest in `S₁`. So `S₂` is reached from `S₁`, and everything
//!   after it.
//! * *`S₁`'s are `S₂`'s.* A continuation of `S₁` runs from `S₂` with each read of a `T₁` store
//!   still reading it, but a read-modify-write that read `T₁`'s last store (the only one of
//!   them no read-modify-write read), which reads `T₂`'s instead: the same value, and a
//!   release view that differs only at the rounds' own places, since `T₂` read its own
//!   round's stores or what `T₁` read, so acquired nothing its threads did not already have.
//!   A later store goes before both rounds or after them, in `S₁` and `S₂` alike (no store
//!   goes between a store and the read-modify-write that read it).
//!
//! A turn a thread went on from is not left out: with it gone, the state with one turn fewer
//! would stand for it, and a thread that has not yet read `T₂` could, in `S₂`, read a store of
//! `T₁` and then one of `T₂` below a store the spinning thread went on to read, which nothing
//! in `S₁` offers any more. The explorer meets such a state rarely (the loop's head after `T₂`
//! already merged), and the key keeps it apart.
//!
//! That is the argument for outcomes, which is what merging needs (the explorer keys states by
//! the history too): the number of ways a later read has is not the same in `S₁` and `S₂`,
//! only what each way leads to. `fgvt-sync`'s litmus tests check the outcomes of retry loops
//! whose failed turns write (in one thread, and in two at once) against the same programs
//! with the loops made straight-line.

use std::cell::OnceCell;

use crate::event::Kind;
use crate::{Execution, Loc, Naming, PlainAt, StoreId, ThreadId};

/// The longest turn looked for, in events of one thread.
const MAX_TURN: usize = 8;

/// The most stores a round of turns (of one thread or several) may write.
const MAX_ROUND: usize = 16;

/// A run of a location's modification order left out: the stores a round wrote there, which
/// repeat, place by place, the `len` stores right before them.
#[derive(Clone, Copy, Debug)]
struct Run {
    /// The place of its first store.
    start: usize,
    /// How many stores it has.
    len: usize,
}

impl Run {
    fn end(&self) -> usize {
        self.start + self.len
    }
}

/// Per location, the runs of stores a key leaves out, and what the kept ones stand for.
/// Places in the key are *kept places*: a location's places with the runs taken out.
#[derive(Debug)]
pub(crate) struct LeftOut {
    /// Per location, its runs in modification order, none inside another.
    runs: Vec<Vec<Run>>,
}

impl LeftOut {
    /// Whether nothing is left out.
    pub(crate) fn is_empty(&self) -> bool {
        self.runs.iter().all(Vec::is_empty)
    }

    /// How many of the `len` stores of `loc` the key keeps.
    pub(crate) fn kept(&self, loc: Loc, len: usize) -> usize {
        len - self.runs[loc as usize].iter().map(|r| r.len).sum::<usize>()
    }

    /// The run of `loc` that holds place `place`, if one does.
    fn run_at(&self, loc: Loc, place: usize) -> Option<Run> {
        let runs = &self.runs[loc as usize];
        let i = runs.partition_point(|r| r.end() <= place);
        runs.get(i).filter(|r| r.start <= place).copied()
    }

    /// The kept place of place `place` of `loc`: a left-out store stands at the place of the
    /// store it repeats, right before its run, and so on down to a kept one.
    pub(crate) fn place(&self, loc: Loc, mut place: usize) -> usize {
        while let Some(run) = self.run_at(loc, place) {
            place -= run.len;
        }
        let below: usize = self.runs[loc as usize]
            .iter()
            .take_while(|r| r.end() <= place)
            .map(|r| r.len)
            .sum();
        place - below
    }

    /// The store at kept place `kept` of `loc`, and the store whose "read by a
    /// read-modify-write" flag it shows: the last of the left-out stores right after it (which
    /// a read-modify-write read exactly when the chain of them goes on to a kept store).
    pub(crate) fn store_at(&self, loc: Loc, kept: usize) -> (usize, usize) {
        let mut place = kept;
        for run in &self.runs[loc as usize] {
            if place < run.start {
                break;
            }
            place += run.len;
        }
        let mut last = place;
        while let Some(run) = self.run_at(loc, last + 1) {
            last = run.end() - 1;
        }
        (place, last)
    }

    /// Leaves out `run` of `loc`, which overlaps no run left out already.
    fn add(&mut self, loc: Loc, run: Run) {
        let runs = &mut self.runs[loc as usize];
        let at = runs.partition_point(|r| r.start < run.start);
        runs.insert(at, run);
    }
}

/// A round left out: per thread in it, where its part begins in its program order; per
/// location it writes, the run of its stores.
type Round = (Vec<(ThreadId, usize)>, Vec<(Loc, Run)>);

/// What a round's check needs of the whole execution: found once per key, and only when some
/// round's stores repeat (the key is computed at every step).
struct Context<'a, N> {
    naming: &'a N,
    plain: &'a [PlainAt],
    /// Per store, the events that read it; per event, whether it is an end of a
    /// synchronization (`sync`, or pending).
    found: OnceCell<(Vec<Vec<usize>>, Vec<bool>)>,
}

impl<N> Context<'_, N> {
    /// The readers of each store and the synchronized events of `x`.
    fn found(&self, x: &Execution) -> &(Vec<Vec<usize>>, Vec<bool>) {
        self.found.get_or_init(|| {
            let mut readers = vec![Vec::new(); x.events.len()];
            for (e, event) in x.events.iter().enumerate() {
                if let Some(s) = event.rf {
                    readers[s].push(e);
                }
            }
            let mut synced = vec![false; x.events.len()];
            for &(from, into) in &x.sync {
                synced[from] = true;
                synced[into] = true;
            }
            for thread in &x.threads {
                for &from in &thread.pending {
                    synced[from] = true;
                }
            }
            (readers, synced)
        })
    }
}

impl Execution {
    /// The turns a future key leaves out (see the [module docs](self)); `plain` are the plain
    /// accesses the caller tracks, around which nothing is left out.
    pub(crate) fn left_out_turns(&self, naming: &impl Naming, plain: &[PlainAt]) -> LeftOut {
        let mut left = LeftOut {
            runs: vec![Vec::new(); self.mo.len()],
        };
        // Only a read-modify-write that another one read can begin a round worth looking at.
        if !self.read_by_rmw.iter().any(|&r| r) {
            return left;
        }
        let context = Context {
            naming,
            plain,
            found: OnceCell::new(),
        };
        // Per thread, how many of its events are kept: rounds are left out from the end.
        let mut ends: Vec<usize> = self.threads.iter().map(|t| t.po.len()).collect();
        'fold: loop {
            for loc in 0..self.mo.len() as Loc {
                for t in 0..self.threads.len() {
                    // The round ends with the last read-modify-write of `loc` some thread
                    // made among its last events.
                    let po = &self.threads[t].po[..ends[t]];
                    let Some(&last) = po.iter().rev().take(MAX_TURN).find(|&&e| {
                        let event = &self.events[e];
                        event.kind == Kind::Rmw && event.loc == Some(loc)
                    }) else {
                        continue;
                    };
                    let end = self.mo_pos[last] + 1;
                    // The longest round first: a turn's own repeated accesses (a count taken
                    // back twice) are no round of the loop.
                    for stores in (1..=MAX_ROUND.min(end / 2)).rev() {
                        if let Some((starts, runs)) =
                            self.round(loc, end - stores, stores, &ends, &context)
                        {
                            for (l, run) in runs {
                                left.add(l, run);
                            }
                            for (thread, start) in starts {
                                ends[thread] = start;
                            }
                            continue 'fold;
                        }
                    }
                }
            }
            break;
        }
        left
    }

    /// Whether the `stores` stores of `loc` from place `two` on are a round that repeats the
    /// round of as many stores right before it, as the [module docs](self) say, each thread's
    /// part of it the end of its first `ends` events (the parts may write other locations
    /// too, each of which then has its own two rounds of stores).
    fn round<N: Naming>(
        &self,
        loc: Loc,
        two: usize,
        stores: usize,
        ends: &[usize],
        context: &Context<'_, N>,
    ) -> Option<Round> {
        let mo = &self.mo[loc as usize];
        let one = two - stores;
        if two + stores > mo.len() {
            return None;
        }
        let same = |e1: usize, e2: usize| {
            let (a, b) = (&self.events[e1], &self.events[e2]);
            a.kind == b.kind
                && a.thread == b.thread
                && a.order == b.order
                && a.loc == b.loc
                && a.read == b.read
                && a.written == b.written
                && matches!(b.kind, Kind::Load | Kind::Rmw | Kind::Fence)
                && b.order != crate::Order::SeqCst
                && (b.kind != Kind::Rmw
                    || context.naming.store(StoreId::of(e1))
                        == context.naming.store(StoreId::of(e2)))
        };
        // Store by store, the second round is the first again, by the same threads.
        if !(0..stores)
            .all(|o| same(mo[one + o], mo[two + o]) && self.events[mo[two + o]].kind == Kind::Rmw)
        {
            return None;
        }
        let mut threads: Vec<ThreadId> = (0..stores)
            .filter_map(|o| self.events[mo[two + o]].thread)
            .collect();
        threads.sort_unstable();
        threads.dedup();
        // Per thread, where its part of the second round begins in its program order.
        let starts: Vec<(ThreadId, usize)> = threads
            .iter()
            .map(|&t| {
                let first = (0..stores)
                    .map(|o| mo[two + o])
                    .filter(|&s| self.events[s].thread == Some(t))
                    .map(|s| self.events[s].index)
                    .min()
                    .expect("a thread of the round");
                (t, first)
            })
            .collect();
        let in_second = |e: usize| {
            let event = &self.events[e];
            starts
                .iter()
                .any(|&(t, start)| event.thread == Some(t) && event.index >= start)
        };
        let (readers, synced) = context.found(self);
        // Each thread's two parts, and per location they write, the places of their stores.
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        let mut spans: Vec<(Loc, Vec<usize>, Vec<usize>)> = Vec::new();
        for &(t, start) in &starts {
            let po = &self.threads[t].po;
            let len = ends[t].checked_sub(start)?;
            if len == 0 || len > MAX_TURN || start < len {
                return None;
            }
            let (first, second) = (&po[start - len..start], &po[start..ends[t]]);
            // No plain access within the thread's parts.
            if (context.plain.iter()).any(|at| at.thread == t && at.events > start - len) {
                return None;
            }
            for (&e1, &e2) in first.iter().zip(second) {
                if !same(e1, e2) || synced[e2] {
                    return None;
                }
                let b = &self.events[e2];
                if b.is_write() {
                    // A store of the second round is read by the second round only.
                    if !readers[e2].iter().all(|&r| in_second(r)) {
                        return None;
                    }
                    let l = b.loc.expect("a store has a location");
                    let span = match spans.iter_mut().find(|(at, ..)| *at == l) {
                        Some(span) => span,
                        None => {
                            spans.push((l, Vec::new(), Vec::new()));
                            spans.last_mut().expect("just pushed")
                        }
                    };
                    span.1.push(self.mo_pos[e1]);
                    span.2.push(self.mo_pos[e2]);
                }
                pairs.push((e1, e2));
            }
        }
        // Per location: the second round's stores right after the first's, place by place
        // the same stores again. Where each round's stores begin.
        let mut begins: Vec<(Loc, usize, usize)> = Vec::with_capacity(spans.len());
        for (l, ones, twos) in &mut spans {
            ones.sort_unstable();
            twos.sort_unstable();
            let contiguous = |p: &[usize]| p.windows(2).all(|w| w[1] == w[0] + 1);
            let (n, mo) = (twos.len(), &self.mo[*l as usize]);
            let (one, two) = (ones[0], twos[0]);
            if !contiguous(ones)
                || !contiguous(twos)
                || one + n != two
                || !(0..n).all(|o| same(mo[one + o], mo[two + o]))
            {
                return None;
            }
            begins.push((*l, one, two));
        }
        // The reads: where the first read a store of its round, the corresponding one; where
        // it read the store right before its round, the one right before the second; else the
        // same store.
        for &(e1, e2) in &pairs {
            let (a, b) = (&self.events[e1], &self.events[e2]);
            let (Some(r1), Some(r2)) = (a.rf, b.rf) else {
                continue;
            };
            let (p1, p2) = (self.mo_pos[r1], self.mo_pos[r2]);
            let right = match begins.iter().find(|(l, ..)| a.loc == Some(*l)) {
                Some(&(_, one, two)) if (one..two).contains(&p1) => p2 == p1 + (two - one),
                Some(&(_, one, two)) if p1 + 1 == one => p2 + 1 == two,
                _ => r2 == r1,
            };
            if !right {
                return None;
            }
        }
        // Every store of the round at `loc` is some thread's part's.
        let at_loc = spans
            .iter()
            .find(|(l, ..)| *l == loc)
            .map_or(0, |s| s.2.len());
        if at_loc != stores {
            return None;
        }
        let runs = begins
            .iter()
            .map(|&(l, one, two)| {
                (
                    l,
                    Run {
                        start: two,
                        len: two - one,
                    },
                )
            })
            .collect();
        Some((starts, runs))
    }
}
