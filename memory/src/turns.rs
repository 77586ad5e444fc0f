//! Retry turns that write what they read: the turns a future key leaves out of modification
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
//! A block of a thread's last events (read-modify-writes, loads and fences, at least one
//! read-modify-write, none `SeqCst`) is left out when it *repeats* the block right before it,
//! event by event, and nothing but its own thread saw it:
//!
//! * the same kind, order and location, and for a read-modify-write the same value read and
//!   written, by the same source line ([`Naming::store`]);
//! * each read reads the corresponding store of the later block where the earlier one read a
//!   store of its own block; where the earlier one read the store right before its block's
//!   stores at the location, the later one reads the store right before its own (the chain of
//!   a retry loop's read-modify-writes, each turn reading what the last one left); otherwise
//!   the same store;
//! * per location, the later block's stores come right after the earlier block's in
//!   modification order;
//! * no event of another thread reads a store of the later block, nothing is synchronized
//!   into or out of it, and no plain access is made within either block.
//!
//! Then the block before is compared with the one before it, and so on, so a loop that turned
//! ten times keeps its first turn only. Only the thread's *last* events are looked at: a turn
//! the thread went on from stays (see below).
//!
//! # Why the outcomes stay the same
//!
//! Let `S₂` be an execution whose thread `t` ends with the later block `T₂`, and `S₁` the same
//! without `T₂`. `S₁` is an execution too: no other event read `T₂` or was synchronized by it,
//! so taking it out leaves every other event as it was (a store of another thread placed after
//! `T₂` stands after `T₁`). The key of `S₂` lists `T₁`'s stores where `T₂`'s stand: the places
//! of `T₂`'s stores, in every view, are those of the corresponding stores of `T₁` (the places
//! above them move down), and each kept store shows the flag "read by a read-modify-write" of
//! the last store of the run left out after it (so `T₁`'s last store counts as unread, as in
//! `S₁`). Both have the same outcomes:
//!
//! * *`S₂`'s are `S₁`'s.* `T₂` is a turn `t` can take from `S₁`: it is at the same point of
//!   its loop (its caller's fingerprint says so), and `T₂`'s reads read what `T₁` left, the
//!   stores `t` sees newest in `S₁`. So `S₂` is reached from `S₁`, and everything after it.
//! * *`S₁`'s are `S₂`'s.* A continuation of `S₁` runs from `S₂` with each read of a `T₁` store
//!   still reading it, but a read-modify-write that read `T₁`'s last store (the only one of
//!   them no read-modify-write read), which reads `T₂`'s instead: the same value, and a
//!   release view that differs only at the blocks' own places, since `T₂` read its own
//!   thread's stores or what `T₁` read, so acquired nothing its thread did not already have.
//!   A later store goes before both blocks or after them, in `S₁` and `S₂` alike (no store
//!   goes between a store and the read-modify-write that read it).
//!
//! A turn the thread went on from is not left out: with it gone, the state with one turn
//! fewer would stand for it, and a thread that has not yet read `T₂` could, in `S₂`, read a
//! store of `T₁` and then one of `T₂` below a store `t` went on to read, which nothing in
//! `S₁` offers any more. The explorer meets such a state rarely (the loop's head after `T₂`
//! already merged), and the key keeps it apart.
//!
//! That is the argument for outcomes, which is what merging needs (the explorer keys states by
//! the history too): the number of ways a later read has is not the same in `S₁` and `S₂`,
//! only what each way leads to. `fgvt-sync`'s litmus tests check the outcomes of retry loops
//! whose failed turns write against the same programs with the loop made straight-line.

use crate::event::Kind;
use crate::{Execution, Loc, Naming, PlainAt, StoreId};

/// The longest turn looked for, in events.
const MAX_TURN: usize = 8;

/// A run of a location's modification order left out: the stores of turns that repeat the
/// turn whose stores come right before it.
#[derive(Clone, Copy, Debug)]
struct Run {
    /// The place of its first store.
    start: usize,
    /// How many stores it has.
    len: usize,
    /// How many stores one turn writes at the location.
    period: usize,
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
    /// store it corresponds to in the turn right before its run, and so on down to a kept one.
    pub(crate) fn place(&self, loc: Loc, mut place: usize) -> usize {
        while let Some(run) = self.run_at(loc, place) {
            place = run.start - run.period + (place - run.start) % run.period;
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

/// The blocks of one thread a fold compares, each a stretch of its program order, the first
/// right before the second.
struct Blocks<'a> {
    first: &'a [usize],
    second: &'a [usize],
}

impl Execution {
    /// The turns a future key leaves out (see the [module docs](self)); `plain` are the plain
    /// accesses the caller tracks, around which nothing is left out.
    pub(crate) fn left_out_turns(&self, naming: &impl Naming, plain: &[PlainAt]) -> LeftOut {
        let mut left = LeftOut {
            runs: vec![Vec::new(); self.mo.len()],
        };
        // Only a read-modify-write that another one read can begin a turn worth looking at.
        if !self.read_by_rmw.iter().any(|&r| r) {
            return left;
        }
        // Stores another thread read or that synchronize: a turn with one of them was seen.
        let mut seen = vec![false; self.events.len()];
        for event in &self.events {
            if let Some(s) = event.rf {
                if event.thread != self.events[s].thread {
                    seen[s] = true;
                }
            }
        }
        for &(from, into) in &self.sync {
            seen[from] = true;
            seen[into] = true;
        }
        for thread in &self.threads {
            for &from in &thread.pending {
                seen[from] = true;
            }
        }
        for (t, thread) in self.threads.iter().enumerate() {
            let po = &thread.po;
            if !po.iter().any(|&e| self.events[e].kind == Kind::Rmw) {
                continue;
            }
            // After how many of its events the thread made a plain access.
            let plain_after: Vec<usize> = plain
                .iter()
                .filter(|at| at.thread == t)
                .map(|at| at.events)
                .collect();
            // The kept events (places in program order): the thread's events, less the turns
            // left out from its end. Only the end: a turn the thread went on from (to read
            // another thread's store, say) stays, for the argument needs the thread able to
            // make the left-out turn again from where it is (see the module docs).
            let mut slots: Vec<usize> = (0..po.len()).collect();
            let last = po.len() - 1;
            'fold: loop {
                let n = slots.len();
                // The longest turn first: a turn's own repeated accesses (a lock word
                // taken back twice) are no turn of the loop.
                for k in (1..=MAX_TURN.min(n / 2)).rev() {
                    let (from, mid, to) = (slots[n - 2 * k], slots[n - k], slots[n - 1]);
                    // No plain access within the blocks.
                    if plain_after.iter().any(|&a| a > from && a <= last) {
                        continue;
                    }
                    let blocks = Blocks {
                        first: &po[from..mid],
                        second: &po[mid..=to],
                    };
                    if let Some(runs) = self.repeats(&blocks, naming, &seen) {
                        for (loc, run) in runs {
                            left.add(loc, run);
                        }
                        slots.truncate(n - k);
                        continue 'fold;
                    }
                }
                break;
            }
        }
        left
    }

    /// Whether the block `second` repeats the block `first` right before it as the
    /// [module docs](self) say: per location the blocks write, the run that leaves out the
    /// second block's stores there.
    fn repeats(
        &self,
        blocks: &Blocks<'_>,
        naming: &impl Naming,
        seen: &[bool],
    ) -> Option<Vec<(Loc, Run)>> {
        let same = |e1: usize, e2: usize| {
            let (a, b) = (&self.events[e1], &self.events[e2]);
            a.kind == b.kind
                && a.order == b.order
                && a.loc == b.loc
                && a.read == b.read
                && a.written == b.written
                && (b.kind != Kind::Rmw
                    || naming.store(StoreId::of(e1)) == naming.store(StoreId::of(e2)))
        };
        let (first, second) = (blocks.first, blocks.second);
        let mut locations: Vec<Loc> = Vec::new();
        for (&e1, &e2) in first.iter().zip(second) {
            let b = &self.events[e2];
            if !same(e1, e2)
                || !matches!(b.kind, Kind::Load | Kind::Rmw | Kind::Fence)
                || b.order == crate::Order::SeqCst
            {
                return None;
            }
            if let (Kind::Rmw, Some(loc)) = (b.kind, b.loc) {
                if !locations.contains(&loc) {
                    locations.push(loc);
                }
            }
        }
        if locations.is_empty() || second.iter().any(|&e| seen[e]) {
            return None;
        }
        // Per location: where the first block's own stores begin, and where the second's.
        let mut spans: Vec<(Loc, usize, usize)> = Vec::with_capacity(locations.len());
        let mut runs = Vec::with_capacity(locations.len());
        for &loc in &locations {
            let places = |events: &[usize]| -> Vec<usize> {
                let mut places: Vec<usize> = (events.iter())
                    .filter(|&&e| self.events[e].is_write() && self.events[e].loc == Some(loc))
                    .map(|&e| self.mo_pos[e])
                    .collect();
                places.sort_unstable();
                places
            };
            let (ones, twos) = (places(first), places(second));
            let contiguous = |p: &[usize]| p.windows(2).all(|w| w[1] == w[0] + 1);
            if !contiguous(&ones) || !contiguous(&twos) {
                return None;
            }
            let (&one, &two) = (ones.first()?, twos.first()?);
            let period = twos.len();
            if ones.len() != period || one + period != two {
                return None;
            }
            // Place by place, the second block's stores are the first's.
            let corresponds = (0..period).all(|o| {
                let mo = &self.mo[loc as usize];
                same(mo[one + o], mo[two + o])
            });
            if !corresponds {
                return None;
            }
            let run = Run {
                start: two,
                len: period,
                period,
            };
            spans.push((loc, one, two));
            runs.push((loc, run));
        }
        // The reads: where the first read a store of its own stretch, the corresponding one;
        // where it read the store right before its stretch, the one right before the second's;
        // else the same store.
        for (&e1, &e2) in first.iter().zip(second) {
            let (a, b) = (&self.events[e1], &self.events[e2]);
            let (Some(r1), Some(r2)) = (a.rf, b.rf) else {
                continue;
            };
            let span = spans.iter().find(|(l, ..)| Some(*l) == a.loc);
            let (p1, p2) = (self.mo_pos[r1], self.mo_pos[r2]);
            let right = match span {
                Some(&(_, one, two)) if p1 >= one && p1 < two => p2 == p1 - one + two,
                Some(&(_, one, two)) if p1 + 1 == one => p2 + 1 == two,
                _ => r2 == r1,
            };
            if !right {
                return None;
            }
        }
        Some(runs)
    }
}
