//! The WGL search (Wing & Gong's algorithm with Lowe's memoization) over one (sub-)history.
//!
//! The history is a doubly linked list of call and return entries in real-time order. The
//! search repeatedly linearizes a call entry that comes before the first return entry (an
//! operation that may take effect next), lifting its two entries out of the list, and backtracks
//! when it reaches a return entry: that operation had to take effect before now. A
//! configuration (set of linearized operations, spec state) that was reached before is known to
//! fail and is pruned.
//!
//! **Compact configurations.** Operations are numbered by return time (pending ones last). Let
//! `k` be the first operation not yet linearized. Every other linearized operation `j > k` was
//! linearized while `k` was still in the list, so it was called before `k` returned: it is one
//! of the operations *open* at `k`'s return, at most one per thread plus the pending ones. So
//! `(k, bitmask over the operations open at k's return)` names the linearized set exactly, in a
//! few bytes instead of a bitset of the whole history. This is what lets a partition of 70,000
//! operations be checked with a cache of hundreds of thousands of configurations; it replaces
//! the P-compositionality paper's bitsets with incremental XOR hashes, which still cost a
//! whole bitset of memory per cached configuration.
//!
//! **Interned states.** Spec states are stored once and named by a `u32`; the outcome of
//! applying an operation to a state is memoized too, so the spec runs once per distinct
//! (state, operation) however many orders lead there.

use std::time::Instant;

use fgvt_tree::interner::Interner;

use super::hash::{FxHashMap, FxHashSet};
use super::SearchStats;
use crate::op::{CheckError, OpView};
use crate::spec::{Apply, Spec};

/// How often (in search steps, a power of two) the deadline is looked at.
const DEADLINE_EVERY: u64 = 1 << 12;

/// How many of the next return entries [`Search::look_ahead`] looks at for a read that can no
/// longer give its result.
const LOOK_AHEAD_RETURNS: usize = 16;

/// "No entry" in the linked list.
const NIL: u32 = u32::MAX;

/// The list's sentinel head.
const HEAD: u32 = 0;

/// The result of searching one (sub-)history.
pub(crate) enum SearchResult {
    /// A witness: indices into the searched ops, in linearization order.
    Linearizable(Vec<usize>),
    /// The longest order of the searched ops that the search managed to linearize.
    NotLinearizable { best: Vec<usize> },
    /// The deadline passed.
    Unknown,
}

/// Limits shared by every partition of one check.
pub(crate) struct Limits {
    pub deadline: Option<Instant>,
    pub cache_limit: usize,
}

/// One entry of the doubly linked list: the call or the return of an operation.
#[derive(Clone, Copy)]
struct Entry {
    op: u32,
    is_call: bool,
    prev: u32,
    next: u32,
}

/// The memoized outcome of applying an operation to a state.
#[derive(Clone, Copy)]
enum Transition {
    /// The spec's result agrees with the observed one; the new state.
    Next(u32),
    /// The spec's result differs from the observed one.
    Wrong,
    /// The spec blocks.
    Blocks,
}

/// Which operations besides `0..k` are linearized: one bit per operation open at `k`'s return.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Mask {
    Small(u64),
    Large(Box<[u64]>),
}

/// A cached configuration: first unlinearized operation, mask, state.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Config {
    k: u32,
    mask: Mask,
    state: u32,
}

/// One linearized operation on the search stack, with what to restore on backtracking.
#[derive(Clone, Copy)]
struct Frame {
    op: u32,
    state: u32,
    k: u32,
    /// A read linearized by [`Search::look_ahead`]: no other candidate was possible there.
    forced: bool,
}

/// What [`Search::look_ahead`] found.
enum Ahead {
    /// Nothing: try every candidate.
    Open,
    /// This read was linearized.
    Read { op: u32, next: u32, k: u32 },
    /// The configuration fails: a read that must come can never give its result, or a
    /// forced read leads to a configuration known to fail.
    Dead,
}

/// The longest order the search has linearized (what a violation's explanation starts from),
/// and how long a prefix of it the current stack shares, so that keeping it costs O(1) a step.
#[derive(Default)]
struct Best {
    ops: Vec<u32>,
    agree: usize,
}

impl Best {
    /// The stack just grew by one frame.
    fn pushed(&mut self, stack: &[Frame]) {
        let top = stack.len() - 1;
        if self.agree == top && self.ops.get(top) == Some(&stack[top].op) {
            self.agree += 1;
        }
        if stack.len() > self.ops.len() {
            self.ops.truncate(self.agree);
            self.ops.extend(stack[self.agree..].iter().map(|f| f.op));
            self.agree = stack.len();
        }
    }

    /// The stack was cut to `len` frames.
    fn popped(&mut self, len: usize) {
        self.agree = self.agree.min(len);
    }
}

/// The search over one (sub-)history.
pub(crate) struct Search<'a, 'h, S: Spec> {
    spec: &'a S,
    /// The operations by internal number: completed ones by return time, then (in a history
    /// that is not stuck) pending ones, then (in a stuck one) the pending ones that must block.
    ops: Vec<&'a OpView<'h>>,
    /// Where `ops[i]` is in the searched slice.
    local: Vec<usize>,
    /// Which operations are read-only ([`Spec::is_read_only`]), and whether there is any.
    read_only: Vec<bool>,
    any_read_only: bool,
    /// Which operations are reads with a known result that [`Spec::may_reach`] can rule out
    /// ([`Spec::checks_reach`]), and whether there is any.
    reach_checked: Vec<bool>,
    any_reach_checked: bool,
    /// Scratch for [`Self::look_ahead`]: the operations called before the entry it is at.
    candidates: Vec<u32>,
    /// How many operations are completed (they come first).
    completed: usize,
    /// How many operations the search may linearize (completed plus optional pending).
    searchable: usize,
    entries: Vec<Entry>,
    call_entry: Vec<u32>,
    ret_entry: Vec<u32>,
    /// `open[open_at[k]..open_at[k + 1]]`: the operations open when completed operation `k` returns.
    open: Vec<u32>,
    open_at: Vec<usize>,
    linearized: Vec<u64>,
    /// Spec states, each stored once and named by its number.
    states: Interner<S::State>,
    transitions: FxHashMap<(u32, u32), Transition>,
    cache: FxHashSet<Config>,
    limits: &'a Limits,
    /// Where the search stands, so that it can stop after a number of steps and go on later.
    cursor: Cursor,
    /// What this search counted.
    pub(crate) stats: SearchStats,
}

/// The state of a search between two slices of work.
#[derive(Default)]
struct Cursor {
    state: u32,
    k: u32,
    stack: Vec<Frame>,
    best: Best,
    /// The next entry to look at.
    entry: u32,
    /// Whether the configuration was just reached (a read may be forced).
    fresh: bool,
    steps: u64,
}

/// A search of one (sub-)history for a linearization, run in slices with [`Search::resume`].
///
/// In a `stuck` history the pending operations never take effect, and every one of them must
/// block in the final state; otherwise each pending operation may take effect (anywhere after its
/// call) or not.
impl<'a, 'h, S: Spec> Search<'a, 'h, S> {
    /// A search over `views` (one partition, or the whole history), not started yet.
    pub(crate) fn new(
        spec: &'a S,
        views: &'a [OpView<'h>],
        stuck: bool,
        limits: &'a Limits,
    ) -> Self {
        let mut completed: Vec<usize> = (0..views.len())
            .filter(|&i| views[i].ret_pos.is_some())
            .collect();
        completed.sort_by_key(|&i| views[i].ret_pos);
        let pending: Vec<usize> = (0..views.len())
            .filter(|&i| views[i].ret_pos.is_none())
            .collect();
        let n_completed = completed.len();
        let mut local = completed;
        local.extend(&pending);
        let searchable = if stuck { n_completed } else { local.len() };
        let ops: Vec<&OpView<'h>> = local.iter().map(|&i| &views[i]).collect();
        let read_only: Vec<bool> = ops
            .iter()
            .map(|op| spec.is_read_only(op.call, op.result))
            .collect();
        let reach_checked: Vec<bool> = ops
            .iter()
            .zip(&read_only)
            .map(|(op, &read)| read && op.result.is_some() && spec.checks_reach(op.call))
            .collect();
        let any_read_only = read_only.contains(&true);
        let any_reach_checked = reach_checked.contains(&true);

        // Entries in real-time order; the returns of optional pending operations go last.
        let mut times: Vec<(usize, u32, bool)> = Vec::with_capacity(2 * searchable);
        for (i, op) in ops.iter().enumerate().take(searchable) {
            times.push((op.call_pos, i as u32, true));
            times.push((op.ret_pos.unwrap_or(usize::MAX / 2 + i), i as u32, false));
        }
        times.sort_unstable_by_key(|&(t, _, _)| t);
        let mut entries = vec![Entry {
            op: NIL,
            is_call: false,
            prev: NIL,
            next: NIL,
        }];
        let mut call_entry = vec![NIL; searchable];
        let mut ret_entry = vec![NIL; searchable];
        for (n, &(_, op, is_call)) in times.iter().enumerate() {
            let id = (n + 1) as u32;
            entries.push(Entry {
                op,
                is_call,
                prev: id - 1,
                next: if n + 1 < times.len() { id + 1 } else { NIL },
            });
            if is_call {
                call_entry[op as usize] = id;
            } else {
                ret_entry[op as usize] = id;
            }
        }
        entries[0].next = if times.is_empty() { NIL } else { 1 };

        // The operations open at each completed operation's return, by a sweep over the entries.
        let mut open_now: Vec<u32> = Vec::new();
        let mut open = Vec::new();
        let mut open_at = vec![0];
        for &(_, op, is_call) in &times {
            if is_call {
                open_now.push(op);
            } else if (op as usize) < n_completed {
                open_now.retain(|&o| o != op);
                open.extend(&open_now);
                open_at.push(open.len());
            }
        }

        let mut states = Interner::new();
        let first = entries[HEAD as usize].next;
        let cursor = Cursor {
            state: states.intern(spec.initial(), || ()),
            k: 0,
            stack: Vec::new(),
            best: Best::default(),
            entry: first,
            fresh: true,
            steps: 0,
        };
        Search {
            spec,
            ops,
            local,
            read_only,
            any_read_only,
            reach_checked,
            any_reach_checked,
            candidates: Vec::new(),
            completed: n_completed,
            searchable,
            entries,
            call_entry,
            ret_entry,
            open,
            open_at,
            linearized: vec![0; searchable.div_ceil(64)],
            states,
            transitions: FxHashMap::default(),
            cache: FxHashSet::default(),
            limits,
            cursor,
            stats: SearchStats::default(),
        }
    }

    /// Search steps taken so far (also while unfinished).
    pub(crate) fn steps(&self) -> u64 {
        self.cursor.steps.max(self.stats.steps)
    }

    /// Searches on for at most `budget` steps: the result, or `None` when the budget ran out
    /// first (call again to go on where it stopped).
    pub(crate) fn resume(&mut self, budget: u64) -> Result<Option<SearchResult>, CheckError> {
        let Cursor {
            mut state,
            mut k,
            mut stack,
            mut best,
            mut entry,
            mut fresh,
            mut steps,
        } = std::mem::take(&mut self.cursor);
        let stop_at = steps.saturating_add(budget);
        let result = 'search: loop {
            if steps >= stop_at {
                self.cursor = Cursor {
                    state,
                    k,
                    stack,
                    best,
                    entry,
                    fresh,
                    steps,
                };
                return Ok(None);
            }
            steps += 1;
            if steps & (DEADLINE_EVERY - 1) == 0
                && self.limits.deadline.is_some_and(|d| Instant::now() >= d)
            {
                break SearchResult::Unknown;
            }
            // The operation to linearize next, with the new state and first unlinearized
            // operation, and whether it is a forced read; `None`: backtrack.
            let advance = if k as usize == self.completed {
                if self.all_block(state)? {
                    break SearchResult::Linearizable(
                        stack.iter().map(|f| self.local[f.op as usize]).collect(),
                    );
                }
                // Some pending operation would not block: backtrack.
                None
            } else if std::mem::take(&mut fresh) {
                match self.look_ahead(state, k)? {
                    Ahead::Open => continue,
                    Ahead::Read { op, next, k: new_k } => Some((op, next, new_k, true)),
                    Ahead::Dead => None,
                }
            } else {
                let e = self.entries[entry as usize];
                if !e.is_call {
                    // A return entry: that operation had to take effect before now.
                    None
                } else if let Some((next, new_k)) = self.try_linearize(e.op, state, k)? {
                    Some((e.op, next, new_k, false))
                } else {
                    entry = e.next;
                    continue;
                }
            };
            if let Some((op, next, new_k, forced)) = advance {
                stack.push(Frame {
                    op,
                    state,
                    k,
                    forced,
                });
                best.pushed(&stack);
                self.lift(op);
                state = next;
                k = new_k;
                entry = self.entries[HEAD as usize].next;
                fresh = true;
                continue;
            }
            // Undo the latest choice and try the next candidate after it. A forced read that
            // failed means the configuration it was forced in failed too: undo that one's
            // choice as well.
            loop {
                let Some(frame) = stack.pop() else {
                    break 'search SearchResult::NotLinearizable {
                        best: best.ops.iter().map(|&op| self.local[op as usize]).collect(),
                    };
                };
                best.popped(stack.len());
                self.unlift(frame.op);
                self.clear(frame.op);
                state = frame.state;
                k = frame.k;
                if !frame.forced {
                    entry = self.entries[self.call_entry[frame.op as usize] as usize].next;
                    break;
                }
            }
        };
        self.stats.steps = steps;
        self.stats.cache_entries = self.cache.len();
        self.stats.states = self.states.len();
        Ok(Some(result))
    }

    /// What the operations that may take effect now say about `state` before any of them is
    /// tried, in a configuration just reached:
    ///
    /// * A read-only operation ([`Spec::is_read_only`]) among them that gives its result in
    ///   `state` is linearized at once. The configuration succeeds if and only if the one after
    ///   that read does (moving the read to the front of any linearization from here keeps it
    ///   one), so no other candidate needs trying.
    /// * If one of the next few reads to return cannot come to give its result from `state`
    ///   by the operations called before it returns ([`Spec::may_reach`]), the configuration
    ///   fails.
    fn look_ahead(&mut self, state: u32, k: u32) -> Result<Ahead, CheckError> {
        if !self.any_read_only {
            return Ok(Ahead::Open);
        }
        self.candidates.clear();
        let mut at = self.entries[HEAD as usize].next;
        while at != NIL {
            let e = self.entries[at as usize];
            if !e.is_call {
                break;
            }
            at = e.next;
            if self.any_reach_checked {
                self.candidates.push(e.op);
            }
            if !self.read_only[e.op as usize] {
                continue;
            }
            // The spec promised the state stays; a spec that breaks that promise only loses
            // the shortcut.
            if !matches!(self.transition(state, e.op)?, Transition::Next(next) if next == state) {
                continue;
            }
            return Ok(match self.enter(e.op, state, k) {
                Some((next, new_k)) => Ahead::Read {
                    op: e.op,
                    next,
                    k: new_k,
                },
                None => Ahead::Dead,
            });
        }
        // The operations called before a return entry are the ones that may take effect
        // before that operation does; `candidates` gathers them along the list.
        let mut returns = 0;
        while self.any_reach_checked && at != NIL && returns < LOOK_AHEAD_RETURNS {
            let e = self.entries[at as usize];
            at = e.next;
            if e.is_call {
                self.candidates.push(e.op);
                continue;
            }
            returns += 1;
            let read = self.ops[e.op as usize];
            let (true, Some(result)) = (self.reach_checked[e.op as usize], read.result) else {
                continue;
            };
            let ops = &self.ops;
            let mut writers = self
                .candidates
                .iter()
                .filter(|&&op| op != e.op)
                .map(|&op| (ops[op as usize].call, ops[op as usize].result));
            if !self
                .spec
                .may_reach(self.states.key(state), read.call, result, &mut writers)
            {
                return Ok(Ahead::Dead);
            }
        }
        Ok(Ahead::Open)
    }

    /// Linearizes `op` in `state` if the spec agrees and the resulting configuration is new:
    /// marks it and returns the new state and first unlinearized operation.
    fn try_linearize(
        &mut self,
        op: u32,
        state: u32,
        k: u32,
    ) -> Result<Option<(u32, u32)>, CheckError> {
        let Transition::Next(next) = self.transition(state, op)? else {
            return Ok(None);
        };
        Ok(self.enter(op, next, k))
    }

    /// Marks `op` linearized, leading to state `next`, if the configuration that makes is new:
    /// the new state and first unlinearized operation; `None` (and `op` unmarked) when the
    /// configuration is known to fail.
    fn enter(&mut self, op: u32, next: u32, k: u32) -> Option<(u32, u32)> {
        self.set(op);
        let new_k = self.first_unlinearized(k);
        if new_k as usize == self.completed {
            // Every completed operation is linearized: a leaf, decided without the cache.
            return Some((next, new_k));
        }
        let config = Config {
            k: new_k,
            mask: self.mask(new_k),
            state: next,
        };
        if self.cache.contains(&config) {
            self.clear(op);
            return None;
        }
        // A full cache stops remembering: still correct, the search may just repeat work.
        if self.cache.len() < self.limits.cache_limit {
            self.cache.insert(config);
        } else {
            self.stats.cache_full = true;
        }
        Some((next, new_k))
    }

    /// Whether every operation that must block (the pending ones of a stuck history) blocks in `state`.
    fn all_block(&mut self, state: u32) -> Result<bool, CheckError> {
        for op in self.searchable..self.ops.len() {
            if !matches!(self.transition(state, op as u32)?, Transition::Blocks) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Applies `op` to `state`, memoized.
    fn transition(&mut self, state: u32, op: u32) -> Result<Transition, CheckError> {
        if let Some(&t) = self.transitions.get(&(state, op)) {
            return Ok(t);
        }
        let view = self.ops[op as usize];
        let t = match self
            .spec
            .apply(self.states.key(state), view.thread, view.call)
        {
            Apply::Returns { value, state: next } => {
                if view.accepts(self.spec, &value) {
                    Transition::Next(self.states.intern(next, || ()))
                } else {
                    Transition::Wrong
                }
            }
            Apply::Blocks => Transition::Blocks,
            Apply::Invalid(message) => return Err(CheckError::invalid(view, message)),
        };
        if self.transitions.len() < self.limits.cache_limit {
            self.transitions.insert((state, op), t);
        }
        Ok(t)
    }

    /// The first completed operation at or after `from` that is not linearized.
    fn first_unlinearized(&self, from: u32) -> u32 {
        let mut i = from as usize;
        while i < self.completed && self.is_set(i as u32) {
            i += 1;
        }
        i as u32
    }

    /// Which of the operations open at `k`'s return are linearized.
    fn mask(&self, k: u32) -> Mask {
        let open = &self.open[self.open_at[k as usize]..self.open_at[k as usize + 1]];
        if open.len() <= 64 {
            let mut bits = 0u64;
            for (i, &op) in open.iter().enumerate() {
                if self.is_set(op) {
                    bits |= 1 << i;
                }
            }
            Mask::Small(bits)
        } else {
            let mut words = vec![0u64; open.len().div_ceil(64)];
            for (i, &op) in open.iter().enumerate() {
                if self.is_set(op) {
                    words[i / 64] |= 1 << (i % 64);
                }
            }
            Mask::Large(words.into_boxed_slice())
        }
    }

    fn is_set(&self, op: u32) -> bool {
        self.linearized[op as usize / 64] & (1 << (op % 64)) != 0
    }

    fn set(&mut self, op: u32) {
        self.linearized[op as usize / 64] |= 1 << (op % 64);
    }

    fn clear(&mut self, op: u32) {
        self.linearized[op as usize / 64] &= !(1 << (op % 64));
    }

    /// Removes `op`'s call and return entries from the list; [`Self::unlift`] undoes it.
    fn lift(&mut self, op: u32) {
        let (call, ret) = (self.call_entry[op as usize], self.ret_entry[op as usize]);
        self.unlink(call);
        self.unlink(ret);
    }

    /// Puts `op`'s entries back (the entries keep their links, so this is O(1), in reverse order).
    fn unlift(&mut self, op: u32) {
        let (call, ret) = (self.call_entry[op as usize], self.ret_entry[op as usize]);
        self.relink(ret);
        self.relink(call);
    }

    fn unlink(&mut self, e: u32) {
        let Entry { prev, next, .. } = self.entries[e as usize];
        self.entries[prev as usize].next = next;
        if next != NIL {
            self.entries[next as usize].prev = prev;
        }
    }

    fn relink(&mut self, e: u32) {
        let Entry { prev, next, .. } = self.entries[e as usize];
        self.entries[prev as usize].next = e;
        if next != NIL {
            self.entries[next as usize].prev = e;
        }
    }
}
